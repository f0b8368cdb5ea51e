"""/health, /ready and /metrics of server_kit/health.py on a site, without a reactor."""

from __future__ import annotations

import json

from prometheus_client.parser import text_string_to_metric_families
from twisted.web.resource import Resource

from server_kit.health import Monitor
from server_kit.web.http import secure_site
from tests.web.conftest import FakeBrowser


def site_of(monitor: Monitor) -> object:
    root = Resource()
    monitor.put_on(root)
    return secure_site(root)


def test_ready_names_each_check_that_fails_until_each_passes() -> None:
    monitor = Monitor("test")
    journal = monitor.require_flag("journal", "the journal is not verified yet")
    storage: list[str] = ["the storage is unavailable (locked)"]
    monitor.require("storage", lambda: storage[0] if storage else None)
    browser = FakeBrowser(site_of(monitor))
    answer = browser.request("GET", "/ready")
    assert answer.status == 503 and answer.json() == {"ready": False, "why": {
        "journal": "the journal is not verified yet", "storage": "the storage is unavailable (locked)"}}
    assert journal("passed on") == "passed on"  # a Deferred's result goes on down its chain
    storage.clear()
    assert (browser.request("GET", "/ready").status, browser.request("GET", "/ready").json()) == (200, {"ready": True})
    assert browser.request("GET", "/health").json() == {"alive": True}


def test_a_check_that_raises_is_a_server_not_ready() -> None:
    monitor = Monitor("test")
    monitor.require("database", lambda: str(1 / 0))
    assert monitor.not_ready() == {"database": "the check failed: ZeroDivisionError"}


def test_metrics_answer_loopback_clients_only() -> None:
    monitor = Monitor("test")
    monitor.gauge("bingo_test_figure", "A figure.", lambda: 7)
    answer = FakeBrowser(site_of(monitor), address="127.0.0.1").request("GET", "/metrics")
    assert answer.status == 200 and answer.headers["content-type"].startswith("text/plain")
    samples = {s.name: s.value for f in text_string_to_metric_families(answer.body.decode()) for s in f.samples}
    assert samples["bingo_test_figure"] == 7 and samples["bingo_ready"] == 1
    refused = FakeBrowser(site_of(monitor), address="192.168.1.20").request("GET", "/metrics")
    assert refused.status == 403 and json.loads(refused.body)["error"]["code"] == "forbidden"
    assert b"bingo_" not in refused.body

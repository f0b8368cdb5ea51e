"""The central server and the regulator's receiver, as processes, answer /health, /ready and
/metrics on their loopback monitoring port (``--monitor-port``); the hall's are on its own
HTTPS port (tests/web/test_health_process.py)."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from server_kit.pki import export_bundle, issue_certificate
from server_kit.ports import reserve_port
from tests.central_server.support import CentralProcess, config_text, make_pki
from tests.regulator.test_feed_processes import ReceiverProcess
from tests.support.waiting import WAIT, wait_until

pytestmark = [pytest.mark.integration]


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=WAIT) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def samples(port: int) -> dict[str, float]:
    status, body = get(port, "/metrics")
    assert status == 200, body[:200]
    return {sample.name: sample.value for family in text_string_to_metric_families(body.decode())
            for sample in family.samples if not sample.labels}


def _health(port: int) -> tuple[int, bytes] | None:
    try:
        return get(port, "/health")
    except urllib.error.URLError:  # not listening yet: the server logs its own port first
        return None


def answers_as_a_ready_server(port: int) -> dict[str, float]:
    assert wait_until(lambda: _health(port), WAIT, "the monitoring port to answer", interval=0.2) == (
        200, b'{"alive":true}')
    wait_until(lambda: get(port, "/ready")[0] == 200, WAIT, "/ready to answer 200", seen=lambda: get(port, "/ready"),
               interval=0.2)
    assert json.loads(get(port, "/ready")[1]) == {"ready": True}
    status, body = get(port, "/console")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"  # nothing else is served there
    figures = samples(port)
    assert figures["bingo_ready"] == 1 and figures["process_resident_memory_bytes"] > 0
    return figures


def test_the_central_server_answers_on_its_monitoring_port(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    (home / "central.toml").write_text(config_text(home, pki, f"sqlite:///{home / 'central.sqlite3'}"))
    monitor = reserve_port()
    central = CentralProcess(home / "central.toml", [sys.executable, "-c", "from central_server.cli import central; "
                                                     "central()", "serve", "--config", str(home / "central.toml"),
                                                     "--monitor-port", str(monitor)])
    try:
        central.start()
        figures = answers_as_a_ready_server(monitor)
        assert figures["bingo_journal_last_record"] >= 2 and figures["bingo_storage_unavailable"] == 0
    finally:
        central.stop()


def test_the_regulators_receiver_answers_on_its_monitoring_port(tmp_path: Path) -> None:
    pki = tmp_path / "pki"
    make_pki(pki)
    issue_certificate(pki, "regulator", "regulator")
    export_bundle(pki, "regulator", tmp_path / "regulator-pki")
    monitor = reserve_port()
    receiver = ReceiverProcess(tmp_path / "regulator", tmp_path / "regulator-pki", reserve_port())
    receiver.extra = ["--monitor-port", str(monitor)]
    try:
        receiver.start()
        figures = answers_as_a_ready_server(monitor)
        assert figures["bingo_feeds_connected"] == 0 and figures["bingo_journal_last_record"] >= 1
    finally:
        receiver.kill()

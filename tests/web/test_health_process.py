"""A hall server process answers /health, /ready and /metrics on its HTTPS port.

One hall (``bingo hall serve``, TLS from its own PKI on loopback) is shared by the module:
no client certificate is needed for the three; /ready turns 503 with the storage's reason
while another program holds the database's write lock and a command's commit waits on it,
and 200 again once the lock is released; /metrics parses with ``prometheus_client``'s own
parser, and its command counter moves with the commands staff give.
"""

from __future__ import annotations

import json
import sqlite3
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess, HttpClient

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path_factory.mktemp("health")).start()
    yield process
    process.stop()


def get(hall: HallProcess, path: str) -> tuple[int, str, bytes]:
    """Status, content type and body of ``GET path``, as a client without a certificate sees them."""
    context = ssl.create_default_context(cafile=str(hall.folder / "pki" / "ca.pem"))
    try:
        with urllib.request.urlopen(hall.base + path, timeout=WAIT, context=context) as answer:
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


def metrics(hall: HallProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics by name and labels, parsed by prometheus_client's parser."""
    status, content_type, body = get(hall, "/metrics")
    assert status == 200 and content_type.startswith("text/plain"), (status, body[:200])
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(body.decode()) for sample in family.samples}


def commands(hall: HallProcess, command: str, outcome: str) -> float:
    return metrics(hall).get(("bingo_commands_total", (("command", command), ("outcome", outcome))), 0.0)


def ready(hall: HallProcess) -> tuple[int, Any]:
    status, _, body = get(hall, "/ready")
    return status, json.loads(body)


def staff(hall: HallProcess, name: str) -> HttpClient:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": PASSWORD})
    assert status == 200, answer
    return client


def test_health_and_ready_answer_without_a_certificate_once_the_journal_is_verified(hall: HallProcess) -> None:
    status, content_type, body = get(hall, "/health")
    assert (status, json.loads(body)) == (200, {"alive": True}) and content_type.startswith("application/json")
    assert wait_until(lambda: ready(hall)[0] == 200, WAIT, "the hall's /ready to answer 200", interval=0.2)
    assert ready(hall) == (200, {"ready": True})


def test_metrics_parse_and_count_the_commands_staff_give(hall: HallProcess) -> None:
    figures = metrics(hall)
    for name in ("bingo_journal_last_record", "bingo_connections_open", "bingo_storage_unavailable",
                 "bingo_checkpoint_records_behind", "bingo_ready", "process_resident_memory_bytes"):
        assert any(key[0] == name for key in figures), f"/metrics has no {name}"
    assert figures[("bingo_storage_unavailable", ())] == 0 and figures[("bingo_ready", ())] == 1
    journal_before = figures[("bingo_journal_last_record", ())]
    carried_out = commands(hall, "run_verification", "carried_out")
    refused = commands(hall, "close_sale", "refused")
    admin = staff(hall, "admin")
    status, answer = admin.call("POST", "/api/command", {"id": "m1", "command": "run_verification",
                                                         "args": {"date": "2026-11-29"}})
    assert status == 200 and answer["ok"], answer
    seller = staff(hall, "sam")
    status, answer = seller.call("POST", "/api/command", {"id": "m2", "command": "close_sale", "args": {}})
    assert status == 403, answer
    after = metrics(hall)
    assert commands(hall, "run_verification", "carried_out") == carried_out + 1
    assert commands(hall, "close_sale", "refused") == refused + 1
    assert after[("bingo_journal_last_record", ())] > journal_before
    assert after[("bingo_commit_seconds_count", ())] >= 1


def test_ready_is_503_with_the_storage_reason_while_the_database_is_locked_then_200(hall: HallProcess) -> None:
    assert wait_until(lambda: ready(hall)[0] == 200, WAIT, "the hall's /ready to answer 200", interval=0.2)
    admin = staff(hall, "admin")
    holder = sqlite3.connect(hall.folder / "hall.sqlite3", timeout=60, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another program's write transaction, left open
        # The commit waits for the lock (the busy timeout), then fails: the storage is unavailable.
        status, answer = admin.call("POST", "/api/command", {"id": "s1", "command": "run_verification",
                                                             "args": {"date": "2026-11-29"}})
        assert status == 503 and answer["error"]["code"] == "storage_unavailable", answer
        status, body = ready(hall)
        assert status == 503 and body["ready"] is False, body
        assert "locked" in body["why"]["storage"] and "hall.sqlite3" not in json.dumps(body), body
        assert metrics(hall)[("bingo_storage_unavailable", ())] == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert wait_until(lambda: ready(hall)[0] == 200, WAIT, "the hall's /ready to answer 200 once the lock is gone",
                      seen=lambda: ready(hall), interval=0.2)
    assert metrics(hall)[("bingo_storage_unavailable", ())] == 0

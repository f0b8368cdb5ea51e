"""The receiver's start and stop on the foundation the hall and the central server stand on
(server_kit/boot.py): its journal verified against the signed head and the newest checkpoint,
a lagging head brought up to it, its checkpoints, its run marker and its clock.

What each test proves: a head file that lagged the journal is written again at the start;
a clean stop stops listening, cuts the feeds, lets the message in hand finish, writes the
last checkpoint, disposes of the database and removes the run marker, in that order, and
the next start verifies from that checkpoint; an altered record refuses the start with one
line and leaves the marker; a marker left behind is reported at the next start; the
records carry on from the journal's last record's time.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any, Callable

import pytest
import pytest_twisted
from sqlalchemy.engine import Engine
from twisted.internet import defer, reactor
from twisted.logger import formatEvent, globalLogPublisher
from twisted.python.threadable import isInIOThread

from regulator.service import ReceiverService, ReceiverSettings
from server_kit.boot import StartRefused
from server_kit.journal.checkpoints import CheckpointStore
from server_kit.journal.sql import read_head
from server_kit.pki import init_authority, issue_certificate
from server_kit.run_marker import RunMarker

pytestmark = [pytest.mark.integration]


@pytest.fixture
def pki_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "pki"
    init_authority(directory, "Acme Bingo")
    issue_certificate(directory, "regulator", "regulator")
    return directory


@pytest.fixture
def logged() -> Any:
    lines: list[str] = []

    def observe(event: dict[str, Any]) -> None:
        lines.append(formatEvent(event))

    globalLogPublisher.addObserver(observe)
    yield lines
    globalLogPublisher.removeObserver(observe)


def settings(tmp_path: Path, pki_dir: Path) -> ReceiverSettings:
    return ReceiverSettings(tmp_path / "regulator", pki_dir, "regulator", 0, "127.0.0.1", web_port=None)


def built(tmp_path: Path, pki_dir: Path) -> ReceiverService:
    """A receiver built (its start-up done: the journal begun or verified) but not serving."""
    return ReceiverService(reactor, settings(tmp_path, pki_dir))


def alerts(service: ReceiverService, count: int) -> None:
    """``count`` alerts raised, each journaled in the receiver's own journal (each of another sender: one
    sender's alerts of a kind close together are counted on the first)."""
    first = len(service.store.alerts())
    for n in range(first, first + count):
        service.receiver.alert(f"hall:h{n}", "gap", 100 + n, f"record {100 + n} is missing")


def refusal(tmp_path: Path, pki_dir: Path) -> str:
    with pytest.raises(StartRefused) as refused:
        built(tmp_path, pki_dir)
    return str(refused.value)


@pytest.mark.req("R92.3")
def test_a_head_file_that_lagged_its_journal_is_brought_up_to_it_at_the_start(
    tmp_path: Path, pki_dir: Path, logged: list[str]
) -> None:
    """A stop between a commit and the head's write leaves the head behind: the records past it
    verify by their signatures, and the start writes the head again."""
    first = built(tmp_path, pki_dir)
    head = first.journal.head
    lagging = head.read_bytes()  # the signed head of record 1
    alerts(first, 2)
    first.engine.dispose()
    head.write_bytes(lagging)
    second = built(tmp_path, pki_dir)
    try:
        assert second.journal.last is not None and second.journal.last.seq == 3
        assert read_head(head) is not None and read_head(head).seq == 3  # type: ignore[union-attr]
        assert "The journal head file lagged the journal; it now names record 3" in logged
    finally:
        second.engine.dispose()


@pytest.mark.req("R92.5e", "R92.3")
@pytest_twisted.ensureDeferred
async def test_a_clean_stop_goes_in_order_and_the_next_start_verifies_from_its_checkpoint(
    tmp_path: Path, pki_dir: Path, logged: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stop listening, cut the feeds, the message in hand finished, the last checkpoint, the
    database disposed of, the run marker removed; the next start checks the signatures of
    the records after that checkpoint only."""
    steps: list[str] = []

    def noted(step: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            done = original(*args, **kwargs)
            steps.append(step)
            return done
        return run

    monkeypatch.setattr(CheckpointStore, "write", noted("checkpoint written", CheckpointStore.write))
    monkeypatch.setattr(Engine, "dispose", noted("database disposed of", Engine.dispose))
    monkeypatch.setattr(RunMarker, "remove", noted("marker removed", RunMarker.remove))
    service = built(tmp_path, pki_dir)
    marker = service.settings.home / "running"
    service.startService()
    port = await service.listening
    assert marker.exists()  # written at the start: a crash from now on leaves it
    alerts(service, 2)
    port.stopListening = noted("stopped listening", port.stopListening)
    cut = threading.Event()

    class Transport:
        def abortConnection(self) -> None:
            steps.append("feeds cut")
            cut.set()

    class Feed:
        transport = Transport()

    service.factory.connections.add(Feed())  # type: ignore[arg-type]

    def message_in_hand() -> None:  # on the feed's thread: it finishes once the feeds are cut
        assert cut.wait(30)
        alerts(service, 1)
        steps.append("message finished")

    handled = service.factory.run(message_in_hand)
    await service.stopService()
    await handled
    assert steps == ["stopped listening", "feeds cut", "message finished", "checkpoint written",
                     "database disposed of", "marker removed"]
    assert not marker.exists()
    (checkpoint,) = CheckpointStore(service.settings.home / "checkpoints", service.foundation.key, "").paths()
    assert checkpoint.name == "checkpoint-000000000004.ckpt"  # the message's alert in it
    logged.clear()
    again = built(tmp_path, pki_dir)
    try:
        assert again.foundation.checkpoint is not None and again.foundation.checkpoint.seq == 4
        assert again.foundation.crashed is False
        assert any(line.startswith("Journal verified: 4 records, each hash and link; the 0 after its checkpoint at "
                                   "record 4 each signature too") for line in logged)
    finally:
        again.engine.dispose()


@pytest.mark.req("R92.3", "R92.5e")
@pytest_twisted.ensureDeferred
async def test_a_record_altered_before_the_checkpoint_refuses_the_start_with_one_line_and_leaves_the_marker(
    tmp_path: Path, pki_dir: Path
) -> None:
    service = built(tmp_path, pki_dir)
    service.startService()
    await service.listening
    alerts(service, 3)
    await service.stopService()  # a checkpoint at record 4
    home = service.settings.home
    assert [p.name for p in (home / "checkpoints").iterdir()] == ["checkpoint-000000000004.ckpt"]
    with closing(sqlite3.connect(home / "regulator.sqlite3")) as database, database:
        database.execute("UPDATE journal SET payload = replace(payload, 'missing', 'present') WHERE seq = 2")
    assert refusal(tmp_path, pki_dir) == (
        "the journal does not verify: record 2: its content does not match its hash (altered); the regulator's "
        "receiver does not serve on a broken journal (docs/regulator-feed.md, \"The receiver's own journal\")"
    )
    assert (home / "running").exists()  # the start after it is one after a crash
    assert "verify" in refusal(tmp_path, pki_dir)  # and refused again, as long as the record is altered


@pytest.mark.req("R92.5e")
def test_a_run_that_left_its_marker_is_reported_at_the_next_start(
    tmp_path: Path, pki_dir: Path, logged: list[str]
) -> None:
    """The receiver had nothing in play to stop: it says so, and serves once its journal verified."""
    first = built(tmp_path, pki_dir)
    assert first.foundation.crashed is False
    first.engine.dispose()
    RunMarker(first.settings.home).write(1_000)  # what a run killed leaves behind
    second = built(tmp_path, pki_dir)
    try:
        assert second.foundation.crashed is True
        (said,) = [line for line in logged if "did not stop cleanly" in line]
        assert said.startswith(f"The receiver's last run did not stop cleanly (its run marker "
                               f"{first.settings.home / 'running'} was left behind)")
        assert list(second.monitor.not_ready()) == ["serving"]  # its journal verified: only its port to come
    finally:
        second.engine.dispose()


def test_the_records_carry_on_from_the_journal_s_last_record_s_time(tmp_path: Path, pki_dir: Path) -> None:
    """The receiver's records are stamped by the journal clock: never before the last record's
    time, whatever the wall clock reads."""
    first = built(tmp_path, pki_dir)
    assert first.journal.last is not None
    ahead = first.journal.last.time_ms + 3_600_000  # an hour ahead of the wall clock
    first.journal.append(ahead, [("feed_alert_raised", {"sender": "hall:h1", "kind": "gap", "seq": 1, "detail": "x"})])
    first.engine.dispose()
    second = built(tmp_path, pki_dir)
    try:
        alerts(second, 1)
        assert second.journal.last is not None and second.journal.last.time_ms >= ahead
        assert second.store.alerts()[0].time_ms >= ahead
    finally:
        second.engine.dispose()


@pytest_twisted.ensureDeferred
async def test_the_feed_messages_are_handled_on_one_thread_of_the_receiver_s_in_the_order_they_came(
    tmp_path: Path, pki_dir: Path
) -> None:
    """What a message causes (the store, the journal, a day's replay, ``openssl cms -verify``) runs
    through the factory's runner: one thread that starts and stops with the receiver, never the reactor's."""
    service = built(tmp_path, pki_dir)
    service.startService()
    await service.listening
    try:
        seen: list[tuple[int, str, bool]] = []

        def message(n: int) -> None:
            seen.append((n, threading.current_thread().name, isInIOThread()))

        await defer.gatherResults([service.factory.run(message, n) for n in range(20)])
        assert [n for n, _, _ in seen] == list(range(20))
        assert {(name, on_reactor) for _, name, on_reactor in seen} == {("PoolThread-regulator-feed-0", False)}
    finally:
        await service.stopService()

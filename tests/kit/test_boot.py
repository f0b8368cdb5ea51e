"""The foundation every server stands on (``server_kit/boot.py``), on a real SQLite database: a new
journal begun, the run marker of :class:`ServerService` written before any service starts and
removed once every one has stopped, the checkpoint a clean stop writes taken by the next start,
and a journal that fails its check refused with the marker left behind (R92.5e)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.application.service import Service
from twisted.internet import defer, task

from server_kit.boot import ServerService, StartRefused, lay
from server_kit.clock import JournalClock
from server_kit.db.database import open_database
from server_kit.run_marker import MARKER, RunMarker

MIGRATIONS = "hall_server:migrations"  # any server's migrations make the journal's table


class Watching(Service):
    """A service that notes whether the marker was there when it started and when it stopped."""

    def __init__(self, marker: Path, seen: list[str], stopping: defer.Deferred[None] | None = None) -> None:
        self.marker, self.seen, self.stopping = marker, seen, stopping

    def startService(self) -> None:
        super().startService()
        self.seen.append(f"started, marker {self.marker.exists()}")

    def stopService(self) -> Any:
        super().stopService()
        self.seen.append(f"stopping, marker {self.marker.exists()}")
        return self.stopping


@pytest.mark.req("R92.5e")
def test_the_run_marker_is_written_before_any_service_starts_and_removed_once_every_one_has_stopped(
    tmp_path: Path,
) -> None:
    seen: list[str] = []
    later: defer.Deferred[None] = defer.Deferred()
    service = ServerService(RunMarker(tmp_path), lambda: 1_790_000_000_000)
    service.started.append(lambda: seen.append(f"started hook, marker {(tmp_path / MARKER).exists()}"))
    Watching(tmp_path / MARKER, seen).setServiceParent(service)
    Watching(tmp_path / MARKER, seen, later).setServiceParent(service)
    service.startService()
    assert seen == ["started hook, marker True", "started, marker True", "started, marker True"]
    stopped = service.stopService()
    assert not stopped.called and (tmp_path / MARKER).exists()  # a service still stopping keeps it
    later.callback(None)
    assert stopped.called and not (tmp_path / MARKER).exists()


def _lay(folder: Path, reactor: Any) -> Any:
    engine = open_database(f"sqlite:///{folder / 'server.sqlite3'}", MIGRATIONS)
    return lay(reactor, JournalClock.of(reactor), engine, name="test", server="test server", advice="docs/journal.md",
               home=folder, key_path=folder / "keys" / "journal-signing.pem", head=folder / "journal.head",
               opening={"receiver": "test"}, release="release 1", checkpoints=folder / "checkpoints")


@pytest.mark.req("R92.5e", "R96.4")
@pytest_twisted.inlineCallbacks
def test_a_clean_stop_leaves_a_checkpoint_the_next_start_takes_and_no_marker(tmp_path: Path):  # type: ignore[no-untyped-def]
    from twisted.internet import reactor

    base = _lay(tmp_path, reactor)
    assert base.journal.last.seq == 1 and not base.crashed  # a new journal, begun with its opening record
    core = base.command_core()
    assert base.recover() == 1 and base.recovered_from == 0
    base.checkpoint_every(1_000, 600.0)
    base.service.startService()
    assert (tmp_path / MARKER).exists()
    yield base.service.stopService()
    assert not (tmp_path / MARKER).exists()
    assert [p.name for p in (tmp_path / "checkpoints").iterdir()] == ["checkpoint-000000000001.ckpt"]
    again = _lay(tmp_path, reactor)
    again.command_core()
    again.recover()
    assert again.recovered_from == 1 and not again.crashed and again.core.seq == core.seq


@pytest.mark.req("R92.3", "R92.5e")
def test_a_journal_that_fails_its_check_is_refused_in_one_line_and_leaves_the_marker(tmp_path: Path) -> None:
    clock = task.Clock()
    clock.advance(1_790_000_000)
    _lay(tmp_path, clock)
    (tmp_path / "journal.head").unlink()  # a journal with records and no head: not new, and not verified
    with pytest.raises(StartRefused, match="^the journal does not verify: .*the test server does not serve"):
        _lay(tmp_path, clock)
    assert RunMarker(tmp_path).left_behind()  # the next start is one after a crash


class NamedService(ServerService):
    """A server's own service class, which holds its parts."""


def test_a_foundation_is_laid_with_the_servers_own_service_class_and_lets_its_database_go_on_a_failure(
    tmp_path: Path,
) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'server.sqlite3'}", MIGRATIONS)
    base = lay(task.Clock(), JournalClock.of(task.Clock()), engine, name="test", server="test server", advice="",
               home=tmp_path, key_path=tmp_path / "journal-signing.pem", head=tmp_path / "journal.head",
               opening={"receiver": "test"}, service=NamedService)
    assert type(base.service) is NamedService
    disposed: list[bool] = []
    base.engine = type("Watched", (), {"dispose": lambda self: disposed.append(True)})()
    with base.built():
        pass
    assert disposed == []
    with pytest.raises(RuntimeError), base.built():
        raise RuntimeError("a part failed")
    assert disposed == [True]
    engine.dispose()

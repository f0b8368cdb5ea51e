"""The hall's start on the foundation every server stands on (``server_kit/boot.py``): a head
file that lagged its journal brought up to it, a clean stop that writes the last
checkpoint and removes the run marker, the start after it from that checkpoint, and a
journal that fails its check refused in one line with the marker left behind (R92.5e).
The central server's and the regulator's receiver's starts have the same tests."""

from __future__ import annotations

from contextlib import closing
import sqlite3
from pathlib import Path

import pytest
import pytest_twisted

from bench.bench_restart import generate, prepare, start
from hall_server.config import load_config
from server_kit.boot import StartRefused
from server_kit.journal.sql import read_head
from server_kit.run_marker import MARKER
from tests.support.engines import failing, watch_disposals

pytestmark = [pytest.mark.integration]


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A hall's configuration after a day of play."""
    config = prepare(tmp_path / "hall", strips=100)
    generate(config, 300)
    return config


@pytest.mark.req("R92.3")
def test_a_head_file_that_lagged_its_journal_is_brought_up_to_it(played: Path) -> None:
    """A stop between a commit and the head's write leaves the head behind: the journal still
    verifies against it, and the start signs the head again at the journal's last record."""
    folder = played.parent
    before = (folder / "journal.head").read_bytes()
    seq = start(played).core.seq
    generate(played, seq + 100)
    (folder / "journal.head").write_bytes(before)
    assert read_head(folder / "journal.head").seq == seq
    hall = start(played)
    assert hall.core.seq > seq + 100
    assert read_head(folder / "journal.head").seq == hall.core.seq


@pytest.mark.req("R92.5e", "R96.4")
@pytest_twisted.inlineCallbacks
def test_a_clean_stop_writes_the_last_checkpoint_and_removes_the_run_marker(played: Path):  # type: ignore[no-untyped-def]
    """The marker is there while the hall runs; a clean stop writes the checkpoint of the state it
    finds and removes the marker; the next start restores that checkpoint, which gives the state
    the whole journal gives, and follows no crash."""
    from twisted.internet import reactor

    from hall_server.tap import build_hall

    folder = played.parent
    hall = build_hall(load_config(played), reactor)
    assert hall.recovered_from == 0
    hall.service.startService()
    assert (folder / MARKER).exists()
    yield hall.service.stopService()
    assert not (folder / MARKER).exists()
    (checkpoint,) = sorted((folder / "checkpoints").iterdir())
    assert checkpoint.name == f"checkpoint-{hall.core.seq:012d}.ckpt"
    restored = start(played)
    assert restored.recovered_from == hall.core.seq
    assert restored.session.crash_after_seq is None and restored.session.restart_refusal() is None
    (folder / "checkpoints" / checkpoint.name).unlink()
    replayed = start(played)
    assert replayed.recovered_from == 0
    assert restored.core.checkpoint() == replayed.core.checkpoint()


@pytest.mark.req("R92.3", "R92.5e")
def test_a_journal_that_fails_its_check_refuses_the_start_and_leaves_the_run_marker(played: Path) -> None:
    """One line names the record; the marker it leaves makes the next start one after a crash."""
    folder = played.parent
    with closing(sqlite3.connect(folder / "hall.sqlite3")) as database, database:
        database.execute("UPDATE journal SET time_ms = time_ms + 1 WHERE seq = 7")
    with pytest.raises(StartRefused, match="record 7: its content does not match its hash"):
        start(played)
    assert (folder / MARKER).exists()
    assert (folder / "hall.sqlite3").exists() and (folder / "journal.head").exists()


def test_a_start_refused_after_its_journal_is_open_lets_the_database_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part built after the journal that fails (its port's TLS, say) stops the start, and the
    database's connections are closed before the error goes on."""
    from twisted.internet import reactor

    import hall_server.tap as tap

    config = prepare(tmp_path / "hall", strips=100)
    disposed = watch_disposals(monkeypatch)
    monkeypatch.setattr(tap, "build_endpoints", failing("the port's certificate is missing"))
    with pytest.raises(RuntimeError, match="certificate is missing"):
        tap.build_hall(load_config(config), reactor)
    assert len(disposed) == 1

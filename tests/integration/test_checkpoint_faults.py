"""Checkpoints of a real hall process that are never trusted blindly, nor left half written.

- Pentest finding N17: a clean stop checkpoints the last record, and a start checked only
  the records after the newest checkpoint, so an altered posting was served; the start
  now checks every record up to the checkpoint by its hash and link.
- Faults finding 2: a stop on a full disk left a 0-byte ``.ckpt.partial``; a checkpoint
  whose writing fails now leaves nothing behind.  The disk is full to the process the
  way ``ulimit -f`` makes it: its file-size limit is lowered under the checkpoint's size
  once it serves (the write fails with EFBIG, as with ENOSPC on a full disk)."""

from __future__ import annotations

from contextlib import closing
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.security.test_rollback import command
from tests.support.waiting import START, wait_until
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hall folder after a first start and a cash desk opened with its float (a posting), stopped."""
    folder = tmp_path_factory.mktemp("served")
    hall = HallProcess(folder).start()
    try:
        command(hall, "carla", "open_cash_desk", desk="desk-1", float_cents=8_000)
    finally:
        hall.stop()
    return folder


def started_or_refused(folder: Path) -> tuple[bool, str]:
    """``bingo hall serve`` on ``folder`` until it listens (then stopped) or ends by itself: whether it served, and
    what it said."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve", "--config",
         str(folder / "hall.toml")],
        cwd=folder, env={**os.environ, "BINGO_HOME": str(folder)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    said: list[bytes] = []

    def drain() -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            said.append(line)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        wait_until(lambda: process.poll() is not None or any(b"Caller console at" in line for line in said), START,
                   "the hall server to listen or to stop by itself")
    finally:
        served = process.poll() is None
        if served:
            process.kill()
        process.wait()
        reader.join(10)
    return served, b"".join(said).decode()


@pytest.mark.req("R92.3")
def test_N17_an_altered_posting_under_a_clean_stop_checkpoint_stops_the_start(served: Path, tmp_path: Path) -> None:
    folder = tmp_path / "hall"
    shutil.copytree(served, folder)
    hall = HallProcess(folder).start()
    hall.stop()  # the clean stop checkpoints the last record: no record stands after the checkpoint
    (checkpoint,) = (folder / "checkpoints").iterdir()
    with closing(sqlite3.connect(folder / "hall.sqlite3")) as database, database:
        (last,) = database.execute("SELECT max(seq) FROM journal").fetchone()
        (posting,) = database.execute("SELECT seq FROM journal WHERE type = 'posting' AND payload LIKE '%8000%'").fetchone()
        database.execute("UPDATE journal SET payload = replace(payload, '8000', '80000') WHERE seq = ?", (posting,))
    assert checkpoint.name == f"checkpoint-{last:012d}.ckpt"
    listened, said = started_or_refused(folder)
    assert not listened, said
    assert f"Error: the journal does not verify: record {posting}: its content does not match its hash (altered); " \
           "the hall server does not serve on a broken journal (bingo journal verify; docs/journal.md)" in said


def test_faults_2_a_stop_on_a_full_disk_leaves_no_partial_checkpoint(served: Path, tmp_path: Path) -> None:
    folder = tmp_path / "hall"
    shutil.copytree(served, folder)
    shutil.rmtree(folder / "checkpoints", ignore_errors=True)
    hall = HallProcess(folder).start()
    try:
        command(hall, "carla", "top_up_float", desk="desk-1", amount_cents=1_000)  # a record the stop checkpoints
        assert hall.process is not None
        hard = resource.prlimit(hall.process.pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(hall.process.pid, resource.RLIMIT_FSIZE, (100, hard))  # no file may grow past 100 bytes
    finally:
        hall.stop()
    log = hall.output.decode()
    assert "could not be written" in log and "File too large" in log, log[-3000:]
    assert [p.name for p in (folder / "checkpoints").iterdir()] == []
    # The next start replays the journal and serves.
    HallProcess(folder).start().stop()

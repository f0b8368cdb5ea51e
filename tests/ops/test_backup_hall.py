"""``bingo backup`` of a hall while it plays, and ``bingo restore`` into a new folder that starts.

Real processes: a demo hall (``bingo hall serve --demo`` at its fastest pace: its staff
sell, draw, verify and pay, three headless players buy virtual cards) is started once
for the module.  The backup is taken while it commits; the archive is restored into a
new folder; the restored hall starts on it, and its journal and every balance (each
player account, each cash drawer, the house, every ledger account) are those of the
archive's last record, read from the original hall's journal up to that record.

A copy of the playing hall's folder taken file by file in name order, as ``rsync``
takes it (a commit of the hall between two files, as a large database gives it time
for), does not start; a backup with commits between its reading of the head and its
snapshot of the database restores and starts (docs/backup.md, "Why not a copy of the
folder").
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from protocol.ledger import Ledger, Posting
from server_kit import backup
from server_kit.journal.sql import read_head
from tests.support.waiting import START, WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess, HttpClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]
REPO = Path(__file__).resolve().parents[2]
#: Records the demo has committed before the tests look at it: sales, postings, balls, prizes.
PLAYED = 150
#: A posting record's fields that are the posting (the others say who made it).
POSTING = ("debits", "credits", "reason", "reference")


def bingo(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if home is not None:
        env["BINGO_HOME"] = str(home)
    return subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=START)


def records(database: Path) -> list[tuple[int, str, str, str]]:
    """(seq, type, payload, hash) of every record of the SQLite journal at ``database``, read-only."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=60)
    try:
        return [(int(seq), str(kind), str(payload), str(hash)) for seq, kind, payload, hash in
                connection.execute("SELECT seq, type, payload, hash FROM journal ORDER BY seq")]
    finally:
        connection.close()


def last_seq(database: Path) -> int:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=60)
    try:
        return int(connection.execute("SELECT max(seq) FROM journal").fetchone()[0] or 0)
    finally:
        connection.close()


def balances(journal: list[tuple[int, str, str, str]], through: int) -> dict[str, int]:
    """Every ledger account's balance after record ``through``, folded from the postings up to it."""
    postings = [json.loads(payload) for seq, kind, payload, _ in journal if kind == "posting" and seq <= through]
    return Ledger(Posting.from_dict({key: posting[key] for key in POSTING}) for posting in postings).balances()


def manifest_of(archive: Path) -> dict[str, Any]:
    with tarfile.open(archive, "r:*") as tar:
        stream = tar.extractfile(f"{backup.ROOT}/{backup.MANIFEST}")
        assert stream is not None
        return dict(json.load(stream))


@pytest.fixture(scope="module")
def playing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    """A demo hall playing at its fastest pace, past its first sales and prizes."""
    folder = tmp_path_factory.mktemp("playing")
    hall = HallProcess(folder, demo=True, demo_pace=0.05).start()
    try:
        database = folder / "hall.sqlite3"
        wait_until(lambda: last_seq(database) >= PLAYED, START, f"the demo to commit {PLAYED} records",
                   seen=lambda: last_seq(database))
        yield hall
    finally:
        hall.stop()


def started(folder: Path) -> HallProcess:
    return HallProcess(folder).start()


def console_state(hall: HallProcess) -> dict[str, Any]:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": "admin", "password": PASSWORD})
    assert status == 200, answer
    status, state = client.call("GET", "/api/state")
    assert status == 200, state
    return dict(state["view"])


def test_a_hall_backed_up_while_it_plays_restores_into_a_new_folder_and_starts_with_the_snapshots_balances(
    playing: HallProcess, tmp_path: Path
) -> None:
    original = playing.folder / "hall.sqlite3"
    before = last_seq(original)
    archive = tmp_path / "hall.tar.gz"
    made = bingo("backup", "--out", str(archive), home=playing.folder)
    assert made.returncode == 0, made.stderr
    manifest = manifest_of(archive)
    seq, hash = manifest["journal"]["last_seq"], manifest["journal"]["last_hash"]
    assert seq >= before and f"journal: records 1 to {seq} (last hash {hash}" in made.stdout
    # The hall played on: the backup was one moment of a server that kept committing.
    wait_until(lambda: last_seq(original) > seq, WAIT, "the demo to commit past the backup",
               seen=lambda: last_seq(original))
    assert manifest["secrets"]["stored"] == "left out"
    with tarfile.open(archive, "r:*") as tar:
        held = [member.name for member in tar]
    assert not [name for name in held if "operator-ca" in name or name.endswith((".key", "journal-signing.pem"))]

    home = tmp_path / "restored"
    restored = bingo("restore", str(archive), "--home", str(home), "--keys", str(playing.folder))
    assert restored.returncode == 0, restored.stderr
    assert f"journal: {seq} records verified (each hash, link and signature, and the signed head); last record " \
           f"{seq} " in restored.stdout
    assert f"hash {hash}; the head now names it" in restored.stdout
    assert read_head(home / "journal.head").seq == seq  # type: ignore[union-attr]

    expected = balances(records(original), seq)
    assert expected and any(account.startswith("player:") for account in expected), expected
    hall = started(home)
    try:
        assert b"Journal verified: " in hall.output
        state = console_state(hall)
        journal = records(home / "hall.sqlite3")
    finally:
        hall.stop()
    assert journal[seq - 1][0] == seq and journal[seq - 1][3] == hash
    assert [row for row in journal if row[0] <= seq] == [row for row in records(original) if row[0] <= seq]
    assert not [row for row in journal if row[0] > seq and row[1] == "posting"]  # nothing moved money since
    assert balances(journal, len(journal)) == expected  # every account: players', drawers', the house's
    drawers = {f"cash:{name}": cents for name, cents in state["drawers"].items()}
    assert drawers == {account: cents for account, cents in expected.items() if account.startswith("cash:")}
    assert state["seq"] == len(journal) >= seq


def copy_file_by_file(source: Path, target: Path, database: Path) -> None:
    """``source`` copied as ``rsync -r`` copies it, file by file in name order, the hall committing between two
    files (as a large file gives it time to): each file is copied once the hall has committed past every record
    of the journal as it stood when the file before was done."""
    target.mkdir()
    for top, folders, names in os.walk(source):
        folders.sort()
        for name in sorted(names):
            path = Path(top) / name
            if not path.is_file():
                continue
            copied = target / path.relative_to(source)
            copied.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copied)
            done = last_seq(database)
            wait_until(lambda: (head := read_head(source / "journal.head")) is not None and head.seq > done, WAIT,
                       f"the hall to commit past record {done} while the copy goes on")


def refused_start(folder: Path) -> str:
    """``bingo hall serve`` on ``folder``, which must end by itself with status 1 before it serves."""
    process = subprocess.run(
        [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve", "--config",
         str(folder / "hall.toml")],
        cwd=folder, env={**os.environ, "BINGO_HOME": str(folder)}, capture_output=True, text=True, timeout=START)
    said = process.stdout + process.stderr
    assert process.returncode == 1 and "Caller console at" not in said, said
    return said


def test_a_copy_of_the_playing_halls_folder_file_by_file_does_not_start_and_a_backup_made_across_commits_does(
    playing: HallProcess, tmp_path: Path
) -> None:
    database = playing.folder / "hall.sqlite3"
    copy = tmp_path / "rsync-copy"
    copy_file_by_file(playing.folder, copy, database)
    said = refused_start(copy)
    errors = [line for line in said.splitlines() if line.startswith("Error: ")]
    assert errors and ("the journal does not verify" in errors[0] or "database" in errors[0]), said

    # The backup reads the head before the database: commits between the two leave the head behind the
    # snapshot, which the journal's check takes (records past the head verify by their signatures).
    def across_commits(url: str, target: Path) -> backup.Snapshot:
        head = read_head(playing.folder / "journal.head")
        assert head is not None
        wait_until(lambda: last_seq(database) > head.seq, WAIT, "the hall to commit after the head was read")
        return backup.database_snapshot(url, target)

    from hall_server.backup import hall_folder
    from hall_server.config import load_config

    archive = tmp_path / "across.tar.gz"
    made = backup.backup(hall_folder(load_config(playing.folder / "hall.toml")), archive, snapshot=across_commits)
    assert made.manifest["journal"]["head"]["seq"] < made.manifest["journal"]["last_seq"]
    restored = backup.restore(archive, tmp_path / "restored", keys=playing.folder)
    assert restored.verified == made.manifest["journal"]["last_seq"]
    hall = started(restored.home)
    hall.stop()
    assert b"Journal verified: " in hall.output

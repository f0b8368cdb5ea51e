"""Storage errors named for staff, on the real drivers; the journal's probe of a storage that came back.

SQLite's own errors (a full database, a lock another connection holds, a file that cannot
be written) and psycopg's (a server that refuses the connection) become
:class:`~server_kit.db.faults.StorageUnavailable` with the fault and where it is; a commit
of the journal raises it, and :meth:`~server_kit.journal.sql.Journal.probe` tells a storage
that is back from one that is not, and a journal's end that is the server's from one that
is not.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import event, text

from hall_server.store.database import open_database
from protocol.chain import signed
from server_kit.db.database import create
from server_kit.db.faults import (
    DISK_FULL,
    LOCKED,
    READ_ONLY,
    SQLITE_BUSY_TIMEOUT_S,
    UNREACHABLE,
    StorageUnavailable,
    describe_os_error,
    storage_fault,
)
from server_kit.journal import sql as sql_journal
from server_kit.journal import table
from server_kit.journal.sql import Journal, JournalStateError, read_head
from server_kit.ports import reserve_port
from tests.faults.support import chattr

pytestmark = pytest.mark.integration


def journal_at(tmp_path: Path) -> Journal:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    journal.initialise(1_000, {"hall": "Sala Sol"})
    return journal


def entries(count: int) -> list[Any]:
    return [("journal_opened", {"hall": f"again {n}"}) for n in range(count)]


def test_N2_a_database_that_cannot_grow_is_a_full_disk_named_with_its_file(tmp_path: Path) -> None:
    journal = journal_at(tmp_path)
    with journal.engine.begin() as connection:
        pages = connection.execute(text("PRAGMA page_count")).scalar()
    journal.engine.dispose()

    @event.listens_for(journal.engine, "connect")
    def no_more_pages(dbapi_connection: Any, _: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "database or disk is full"

    with pytest.raises(StorageUnavailable) as raised:
        journal.append(2_000, [("journal_opened", {"hall": "x" * 200_000})])
    assert raised.value.kind == DISK_FULL and str(tmp_path / "hall.sqlite3") in str(raised.value)
    assert "the disk holding the database file" in str(raised.value) and journal.last is not None
    assert journal.last.seq == 1  # nothing was appended


def test_N2_a_lock_held_longer_than_the_busy_timeout_is_named_and_the_probe_says_when_it_is_gone(
    tmp_path: Path,
) -> None:
    journal = journal_at(tmp_path)
    holder = sqlite3.connect(tmp_path / "hall.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageUnavailable) as raised:
            journal.append(2_000, entries(1))
        assert raised.value.kind == LOCKED and f"for more than {SQLITE_BUSY_TIMEOUT_S:g} s" in str(raised.value)
        with pytest.raises(StorageUnavailable):
            journal.probe()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert journal.probe() == []
    assert journal.append(3_000, entries(1))[0].seq == 2


def test_N2_a_database_file_that_cannot_be_written_is_read_only_named_with_its_file(tmp_path: Path) -> None:
    journal = journal_at(tmp_path)
    database = tmp_path / "hall.sqlite3"
    files = [database, database.with_name("hall.sqlite3-wal")]
    if os.geteuid() == 0:  # root writes a file whatever its mode, not an immutable one
        chattr("+i", *files)
    else:
        database.chmod(stat.S_IRUSR)
    try:
        with pytest.raises(StorageUnavailable) as raised:
            journal.append(2_000, entries(1))
        assert raised.value.kind == READ_ONLY and str(database) in str(raised.value)
    finally:
        if os.geteuid() == 0:
            chattr("-i", *files)
        else:
            database.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert journal.probe() == [] and journal.append(3_000, entries(1))[0].seq == 2


def test_N2_a_database_server_that_refuses_the_connection_is_unreachable_named_with_its_address() -> None:
    port = reserve_port()
    url = f"postgresql+psycopg://bingo@127.0.0.1:{port}/hall?connect_timeout=5"
    engine = create(url)
    try:
        with pytest.raises(Exception) as raised:
            engine.connect()
    finally:
        engine.dispose()
    fault = storage_fault(raised.value, url)
    assert fault is not None and fault.kind == UNREACHABLE
    assert f"the database server 127.0.0.1:{port} (database hall) cannot be reached" in str(fault)


def test_an_error_of_the_statement_itself_is_no_storage_fault(tmp_path: Path) -> None:
    engine = create(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    with pytest.raises(Exception) as raised, engine.connect() as connection:
        connection.execute(text("SELECT * FROM no_such_table"))
    assert storage_fault(raised.value, engine) is None
    engine.dispose()


def test_N7_an_os_error_at_start_is_one_sentence_naming_the_file_or_folder() -> None:
    full = OSError(28, "No space left on device")
    assert describe_os_error(full, "/srv/hall") == (
        "the disk holding /srv/hall is full: free space on it and start again; nothing was left half-written")
    assert "None" not in describe_os_error(full)


def test_N1_the_probe_adopts_a_batch_the_database_committed_although_its_commit_failed(tmp_path: Path) -> None:
    journal = journal_at(tmp_path)
    sealed = journal.seal(2_000, entries(2), journal.last)
    table.append(journal.engine, signed(journal._sign, sealed))  # committed; the answer was lost
    assert journal.last is not None and journal.last.seq == 1
    adopted = journal.probe(sealed)
    assert [r.seq for r in adopted] == [2, 3] and journal.last.seq == 3
    head = read_head(journal.head)
    assert head is not None and head.seq == 3
    assert journal.verify() == 3


def test_N1_the_probe_refuses_a_journal_end_written_by_someone_else(tmp_path: Path) -> None:
    journal = journal_at(tmp_path)
    sealed = journal.seal(2_000, entries(1), journal.last)
    table.append(journal.engine, signed(journal._sign, sealed))
    with pytest.raises(JournalStateError, match="written after record 1 by someone else"):
        journal.probe([])  # this process committed nothing after record 1
    assert journal.last is not None and journal.last.seq == 1


def test_N1_the_probe_refuses_a_journal_whose_last_record_is_gone(tmp_path: Path) -> None:
    journal = journal_at(tmp_path)
    journal.append(2_000, entries(1))
    with journal.engine.begin() as connection:
        connection.execute(text("DELETE FROM journal WHERE seq = 2"))
    with pytest.raises(JournalStateError, match="no longer in the database"):
        journal.probe()


def test_N7_the_head_file_is_renamed_then_its_folder_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = journal_at(tmp_path)
    synced: list[tuple[str, bool]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        synced.append(("fsync", stat.S_ISDIR(os.fstat(descriptor).st_mode)))
        real_fsync(descriptor)

    def replace(source: Any, target: Any) -> None:
        synced.append(("rename", False))
        real_replace(source, target)

    monkeypatch.setattr(sql_journal.os, "fsync", fsync)
    monkeypatch.setattr(sql_journal.os, "replace", replace)
    journal.append(2_000, entries(1))
    assert synced == [("fsync", False), ("rename", False), ("fsync", True)]


_READ_AND_CLOSE = """
import sqlite3, sys
from contextlib import closing
with closing(sqlite3.connect(sys.argv[1])) as reader:
    print(reader.execute("SELECT max(seq) FROM journal").fetchone()[0])
"""


def _read_in_another_process(database: Path) -> int:
    done = subprocess.run([sys.executable, "-c", _READ_AND_CLOSE, str(database)], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_N7_the_checks_on_each_new_connection_keep_the_servers_locks_so_another_reader_never_deletes_its_wal(
    tmp_path: Path,
) -> None:
    """Closing any descriptor of a file drops every POSIX lock the process holds on it: a check that
    opened the database's files (is one immutable?) for each new connection left the server's
    connections unlocked, and a reader in another process that closed its connection took itself
    for the last, checkpointed and deleted the ``-wal`` the server went on writing to: its
    commits were invisible from then on, and lost if it crashed."""
    journal = journal_at(tmp_path)
    database = tmp_path / "hall.sqlite3"
    wal = database.with_name("hall.sqlite3-wal")
    with journal.engine.connect(), journal.engine.connect(), journal.engine.connect():
        pass  # three connections open at once: the pool makes new ones, each checked first
    for n in range(2, 6):
        journal.append(n * 1_000, entries(1))
        with journal.engine.connect(), journal.engine.connect():
            pass
        assert _read_in_another_process(database) == n and wal.exists()

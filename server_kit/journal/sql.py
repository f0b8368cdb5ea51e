"""The SQL journal: every fact, sealed, appended, and its signed head kept outside the DB.

``Journal.commit`` (and ``append``, which seals and commits) is synchronous and meant
to run on the database's single writer thread (the server wraps it with
``deferToThreadPool``): it appends records sealed after the last one (``seal``) in one
transaction together with the caller's projection rows, and only then moves its idea
of the last record and rewrites the head file.
Whoever announces a fact does so after the commit returned: a crash can lose only
what nobody has seen.

The head file (``journal.head`` in the server's folder, mode 0600, at the path the
composition root hands over) holds the last record's sequence number
and hash, signed with the journal key (:func:`protocol.chain.sign_head`), written
atomically after each commit.  :meth:`Journal.verify` checks the table against it, so a
journal cut short at its end is caught as well as one altered inside; a head that is
missing while the table holds records, unsigned or signed by another key is a fault
too.  A journal starts only by :meth:`Journal.initialise`, which writes its first
record (:data:`protocol.chain.OPENING`) and its first head, and only when the table is
empty and no head exists.

**The guard.**  :attr:`Journal.guard` (None unless the server sets one) runs first in
every commit's transaction, before the records are inserted, on the same connection;
when it raises, the transaction rolls back, nothing is written, and the commit fails
with its error.  The central server's fence is one (:mod:`central_server.leadership`):
it refuses the commits of a process whose leadership epoch is no longer the
database's.  It runs before the insert so that a fenced process, whose idea of the
last record is behind the table's, is told it is fenced rather than that its record's
``seq`` is taken, and so that on PostgreSQL it locks the leadership row before any
journal row.
"""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.signing import SigningKey
from sqlalchemy import Connection, Engine
from twisted.logger import Logger

from protocol.chain import (GENESIS, OPENING, THE_HEAD, ChainError, Head, Record, head_file, head_from_dict,
                            note_stored, sign_head, signed, stored_payload, verify_chain, verify_links)
from protocol.errors import N_
from protocol.records import JournalRecord, seal_entries
from server_kit.db.faults import sqlite_files_fault, storage_fault
from server_kit.journal import table
from server_kit.journal.port import Entry


def journal_signer(key: Ed25519PrivateKey) -> Callable[[bytes], bytes]:
    """Ed25519 signatures with ``key`` by libsodium, the interpreter held while it signs.

    The same signatures as ``cryptography``'s (Ed25519 is deterministic).  The writer
    thread signs each record it commits; PyNaCl (like ``cryptography``) lets go of the
    interpreter for each signature, and a thread that lets go of it waits for it again
    until the thread holding it yields (up to ``sys.getswitchinterval()``, 5 ms): while
    the reactor decides a purchase burst, the writer signed about 200 records a second and
    the halls' answers waited for its commits.  Held, each signature costs the same 20 us
    and the writer has its share of the interpreter.  libsodium is PyNaCl's own, reached
    through ``ctypes.PyDLL`` (which keeps the interpreter); where that library does not
    show the function, PyNaCl signs as before.
    """
    seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption())
    signing = SigningKey(seed)
    held = _held_signer(bytes(signing) + bytes(signing.verify_key))
    if held is not None and held(b"journal") == signing.sign(b"journal").signature:
        return held
    return lambda data: signing.sign(data).signature


def _held_signer(secret: bytes) -> Callable[[bytes], bytes] | None:
    """libsodium's ``crypto_sign_detached`` with the 64-byte ``secret`` key, called with the interpreter held."""
    try:
        import nacl._sodium as sodium

        function = ctypes.PyDLL(sodium.__file__).crypto_sign_detached
    except (ImportError, OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p]
    function.restype = ctypes.c_int

    def sign(data: bytes) -> bytes:
        out = ctypes.create_string_buffer(64)
        if function(out, None, data, len(data), secret) != 0:
            raise ValueError("libsodium could not sign a journal record")
        return out.raw

    return sign


def head_path(home: Path) -> Path:
    """Where the signed head of the journal of the server whose folder is ``home`` is kept."""
    return home / "journal.head"


def read_head(path: Path) -> Head | None:
    """The signed head stored at ``path``, or ``None`` when there is no file."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ChainError(None, N_("the journal head file {path} cannot be read: {error}"), path=path,
                         error=error.strerror or error) from None
    try:
        data = json.loads(text)
    except ValueError:
        raise ChainError(None, N_("the journal head file {path} is unreadable"), path=path) from None
    return head_from_dict(data, head_file(path))


def verified_records(engine: Engine, public_key: Ed25519PublicKey, head: Path,
                     where: str = THE_HEAD) -> list[Record]:
    """The whole journal, once it verifies (every hash, link and signature, and the signed head).

    The head file is read before the records: a server may commit meanwhile, and the
    table may run past the head, never fall behind it.  Raises
    :class:`~protocol.chain.ChainError` naming the first fault (``where`` names the head in it).
    """
    expected = read_head(head)
    records = list(table.read(engine))
    verify_chain(records, public_key, head=expected, where=where)
    return records


def _write_head(path: Path, head: Head) -> None:
    replace_durably(path, json.dumps(head.to_dict()).encode())


def replace_durably(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` whole, or what it held (a file beside it, synced, renamed over it,
    the folder synced), mode 0600.

    As few system calls as that takes, each made with the interpreter let go (the writer
    waits to have it back while the reactor is busy): no buffered stream over the file, and
    the folder made only when it is not there.
    """
    partial = path.with_name(path.name + ".partial")
    try:
        try:
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except FileNotFoundError:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)  # a full disk leaves no half-written file beside the last one
        raise
    fsync_folder(path.parent)


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable: without it a power cut can bring the old name back."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class JournalStateError(ChainError):
    """A journal that cannot be started or initialised in the state it is in."""


class Journal:
    log = Logger()

    def __init__(self, engine: Engine, key: Ed25519PrivateKey, head: Path) -> None:
        self.engine = engine
        self.key = key
        self.head = head
        self._sign = journal_signer(key)
        #: The SQLite database file, whose files are looked at before each commit (None: PostgreSQL).
        self._sqlite_file = engine.url.database if engine.dialect.name == "sqlite" and engine.url.database not in (
            None, "", ":memory:") else None
        self.last: Record | None = table.last_record(engine)
        #: Run first in every commit's transaction; raising refuses the commit (see the module).
        self.guard: Callable[[Connection], None] | None = None

    def verify(self, after: tuple[int, str] | None = None) -> int:
        """Verify the journal against the key and the signed head; the last record's ``seq``.

        Whole, or with ``after`` (a verified checkpoint's ``(seq, hash)``) the records
        after it only: a head that lags behind the checkpoint (a crash between a commit
        and the head's update) anchors the check at the head instead.
        """
        where = head_file(self.head)
        head = read_head(self.head)
        if after is not None and head is not None and head.seq < after[0]:
            after = (head.seq, head.hash)
        start = after[0] if after is not None else 0
        return verify_chain(
            table.read(self.engine, start), self.key.public_key(), head=head, where=where, after=after
        )

    def verify_links(self, through: tuple[int, str], where: str = N_("its signed checkpoint")) -> int:
        """Records 1 to ``through[0]``: each hash and link, the last being ``through[1]``.

        The start's check of the records a trusted checkpoint stands for, without their
        signatures (:func:`protocol.chain.verify_links`); raises :class:`ChainError`.
        """
        return verify_links(table.stored_rows(self.engine, through[0]), through, where)

    def record(self, seq: int) -> Record | None:
        return table.record(self.engine, seq)

    def follow(self) -> int:
        """Verify the records another process appended after :attr:`last`, and follow them; how many.

        For a process taking over a journal another one was writing (the central
        leadership): what that one committed after this one's :meth:`verify` is checked
        the same way (hash, link, signature, the signed head) before anything is appended
        after it.  Raises :class:`~protocol.chain.ChainError` when it does not verify.
        """
        if table.last_record(self.engine) == self.last:
            return 0
        before = self.last.seq if self.last is not None else 0
        verified = self.verify((self.last.seq, self.last.hash) if self.last is not None else None)
        self.last = table.record(self.engine, verified)
        return verified - before

    @property
    def is_new(self) -> bool:
        """No record and no head: the one state in which a journal may be started."""
        return self.last is None and not os.path.lexists(self.head)

    def initialise(self, time_ms: int, payload: Mapping[str, Any]) -> Record:
        """Start a new journal with its opening record; refused unless :attr:`is_new`."""
        self.last = table.last_record(self.engine)
        if self.last is not None:
            raise JournalStateError(None, f"the journal already holds records (up to {self.last.seq}); it is not new")
        if os.path.lexists(self.head):
            raise JournalStateError(
                None,
                f"the journal is empty but its head file {self.head} exists: records were removed; "
                "the journal is not started afresh",
            )
        (record,) = self.append(time_ms, [(OPENING, payload)])
        return record

    def records(self, after: int = 0) -> Iterator[Record]:
        return table.read(self.engine, after)

    def seal(self, time_ms: int, entries: Sequence[Entry | JournalRecord], after: Record | None) -> list[Record]:
        """``entries`` built through their declarations and sealed after ``after``; nothing is stored.

        They are hashed and linked, and signed by :meth:`commit` (:func:`protocol.chain.seal`).
        """
        return seal_entries(None, after, time_ms, entries)

    def commit(self, records: Sequence[Record], extra: Callable[[Connection], None] | None = None) -> list[Record]:
        """Durably append ``records`` (sealed after :attr:`last`) in one transaction, then the head;
        returns them signed.

        Each record sealed unsigned is signed here first, on the writer's thread, with
        libsodium's Ed25519 (:func:`journal_signer`), not on the thread that decides; a
        record is never stored without its signature.

        Once the transaction has committed the records are facts: a head file that cannot
        be written then (disk full, permissions) does not make the commit fail - the
        caller folds and announces the records - it is logged and written again after
        the next commit and at the next start (:meth:`write_head`); meanwhile the head
        lags the table, which :meth:`verify` accepts (records past the head still verify).
        """
        if not records:
            return []
        expected_seq, expected_prev = (self.last.seq + 1, self.last.hash) if self.last else (1, GENESIS)
        if records[0].seq != expected_seq or records[0].prev != expected_prev:
            raise JournalStateError(
                records[0].seq, f"does not follow the journal's last record ({expected_seq - 1}); nothing was appended"
            )
        for record in records:  # before signing lets go of the sealed bodies; the signed copies keep it
            note_stored(record, stored_payload(record))  # stored so, and kept so by the core (protocol.chain.as_kept)
        records = signed(self._sign, records)
        try:
            self._writable()
            table.append(self.engine, records, extra, self.guard)
        except Exception as error:
            fault = storage_fault(error, self.engine)
            if fault is None:
                raise
            raise fault from error
        self.last = records[-1]
        try:
            self.write_head()
        except Exception as error:
            self.log.critical(
                "The journal head file {path} could not be written after record {seq} was committed ({error}); "
                "the records stand, the head is written again after the next commit and at the next start",
                path=str(self.head), seq=self.last.seq, error=error,
            )
        return records

    def _writable(self) -> None:
        """Refuse a commit to SQLite files that cannot take it (see :func:`~server_kit.db.faults.sqlite_files_fault`).

        Cheaper than finding out half-way: a full disk or a read-only file is named, and an
        ``-shm`` file made immutable is not written through its mapping (which would end
        the process with SIGBUS).
        """
        if self._sqlite_file is not None:
            fault = sqlite_files_fault(self._sqlite_file)
            if fault is not None:
                raise fault

    def probe(self, unconfirmed: Sequence[Record] = ()) -> list[Record]:
        """Whether the storage takes a write again; the records of ``unconfirmed`` it holds.

        Run on the writer's thread while the server's storage is unavailable: one small
        durable write the database must really make (SQLite: its header's
        ``user_version``, written back unchanged; PostgreSQL: a transaction id, which only
        a primary that takes writes gives), then the journal's end is read.  It must be
        :attr:`last`, or the records of ``unconfirmed`` (the batch whose commit failed,
        committed after all when the connection was lost after the database took it):
        those are verified (hash, link, signature) and become the journal's last, and are
        returned.  Then the signed head is written again.

        Raises :class:`~server_kit.db.faults.StorageUnavailable` while the storage is not
        back, and :class:`JournalStateError` when the journal's end is anything else (records
        missing, or written by another process): that is no storage fault to wait out.
        """
        after = self.last.seq if self.last is not None else 0
        try:
            self._writable()
            with self.engine.begin() as connection:
                if self.engine.dialect.name == "sqlite":
                    version = int(connection.exec_driver_sql("PRAGMA user_version").scalar() or 0)
                    connection.exec_driver_sql(f"PRAGMA user_version = {version}")
                else:
                    connection.exec_driver_sql("SELECT txid_current()")
            standing = table.record(self.engine, after) if self.last is not None else None
            found = list(table.read(self.engine, after))
        except Exception as error:
            fault = storage_fault(error, self.engine)
            if fault is None:
                raise
            raise fault from error
        if self.last is not None and (standing is None or standing.hash != self.last.hash):
            raise JournalStateError(after, "is no longer in the database as this server committed it: records were "
                                           "removed or replaced")
        if found:
            expected = [(r.seq, r.hash) for r in unconfirmed]
            if [(r.seq, r.hash) for r in found] != expected:
                raise JournalStateError(found[0].seq, f"and {len(found) - 1} more were written after record {after} "
                                                      "by someone else than this server")
            # Each record's hash, link and signature; their end is the head to check them against.
            verify_chain(found, self.key.public_key(), head=sign_head(self.key, found[-1]),
                         after=(after, self.last.hash) if self.last else None)
            self.last = found[-1]
        try:
            self.write_head()
        except OSError as error:
            fault = storage_fault(error, self.engine)
            if fault is None:
                raise
            raise fault from error
        return found

    def write_head(self) -> None:
        """Write the signed head of the last record (atomically, mode 0600)."""
        if self.last is None:
            return
        _write_head(self.head, sign_head(self.key, self.last))

    def repair_head(self) -> bool:
        """Write the head again if it lags the table (run after :meth:`verify`); whether it did.

        A head lags when its write failed after a commit, or a crash came between the two;
        the records past it verified by their signatures, so the head may follow them.
        """
        head = read_head(self.head)
        if self.last is None or (head is not None and head.seq == self.last.seq):
            return False
        self.write_head()
        return True

    def append(
        self,
        time_ms: int,
        entries: Sequence[Entry | JournalRecord],
        extra: Callable[[Connection], None] | None = None,
    ) -> list[Record]:
        """Seal and durably append ``entries`` after :attr:`last`; returns the records once committed.

        Each entry is built through its declaration (:mod:`protocol.records`) before
        anything is sealed: an undeclared type or a bad field raises
        :class:`~protocol.records.RecordError` and nothing is written.
        """
        return self.commit(self.seal(time_ms, entries, self.last), extra)

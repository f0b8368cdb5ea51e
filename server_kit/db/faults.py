"""Storage faults named for staff: the disk is full, a file is read-only, the database is
locked or cannot be reached - and where.

A commit that fails because of the storage (not because of what it holds) raises
:class:`StorageUnavailable`, whose message is a sentence for the person at the console:
the kind of fault, the file or the database server, and that nothing confirmed is
lost.  :func:`storage_fault` turns what SQLAlchemy, :mod:`sqlite3`, psycopg 3 or the
operating system raised into it, or says ``None`` when the error is not the storage's
(a record that does not follow the journal, a fenced process, a fault in the code).

How each is told apart:

* **SQLite** (``sqlite3.Error.sqlite_errorname``): ``SQLITE_FULL`` is a full disk,
  ``SQLITE_READONLY*`` a file that cannot be written, ``SQLITE_BUSY*``/``SQLITE_LOCKED*``
  a lock another program holds longer than the busy timeout
  (:data:`SQLITE_BUSY_TIMEOUT_S`), ``SQLITE_CANTOPEN`` a file that cannot be opened.
  ``SQLITE_IOERR*`` is whatever the operating system refused: the files and the disk
  are looked at (:func:`sqlite_files_fault`) to say which.
* **PostgreSQL** (psycopg's ``sqlstate``): class ``08`` and ``57P0x`` (no connection,
  the server shutting down or starting), or an ``OperationalError`` without a state (the
  connection could not be made), is an unreachable server; ``53100`` its full disk;
  ``25006`` a server that takes no writes (a standby); ``55P03`` and ``40P01`` locks.
* **The operating system** (``OSError``): ``ENOSPC``/``EDQUOT`` full, ``EROFS``,
  ``EACCES`` and ``EPERM`` read-only, ``EIO`` failing.
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from protocol.errors import DomainError

#: How long a SQLite commit waits for a lock another connection holds before it fails (and
#: the server goes to "storage unavailable", retrying by itself).  The server is the
#: database's only committing writer; readers never block a writer in WAL mode.  A lock is
#: held by another writer: the card store's own writes (a series registered while the hall
#: runs, ``bingo cards`` importing a set), a backup, an ``sqlite3`` shell left in a
#: transaction.  Since a lock held past it makes the server refuse commands at once instead
#: of every commit waiting again, the wait is paid by one batch only; it is long enough that
#: a well-behaved writer's transaction on a loaded machine (a thread descheduled while it
#: holds the lock) raises no alarm, and short enough that staff see the alarm within
#: seconds of a lock that is not let go.
SQLITE_BUSY_TIMEOUT_S = 5.0

#: The kinds of storage fault, as staff read them.
DISK_FULL = "disk full"
READ_ONLY = "read-only"
LOCKED = "locked"
UNREACHABLE = "unreachable"
FAILING = "failing"

_SQLITE_FILES = ("", "-wal", "-shm")


class StorageUnavailable(DomainError):
    """The storage cannot take a commit now; the message names the fault and where, for staff.

    ``kind`` is one of :data:`DISK_FULL`, :data:`READ_ONLY`, :data:`LOCKED`,
    :data:`UNREACHABLE`, :data:`FAILING`; ``where`` the database file or server.
    """

    code = "storage_unavailable"

    def __init__(self, kind: str, where: str, detail: str) -> None:
        self.kind, self.where, self.detail = kind, where, detail
        super().__init__(
            f"storage unavailable ({kind}): {detail}; commands are refused until the storage is back, "
            "then taken again by themselves; nothing already confirmed is lost"
        )


def where_of(url: str | URL) -> tuple[str, str | None]:
    """``(how staff name the database, the SQLite file's path or None)`` for ``url`` (never its password)."""
    try:
        parsed = make_url(url) if isinstance(url, str) else url
    except ArgumentError:
        return str(url), None
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database or ":memory:"
        return f"the database file {path}", (path if path != ":memory:" else None)
    host = parsed.host or "localhost"
    port = f":{parsed.port}" if parsed.port else ""
    return f"the database server {host}{port} (database {parsed.database})", None


def storage_fault(error: BaseException, url: str | URL | Engine) -> StorageUnavailable | None:
    """The storage fault ``error`` is, named for staff, or None when it is not the storage's."""
    if isinstance(error, StorageUnavailable):
        return error
    where, path = where_of(url.url if isinstance(url, Engine) else url)
    original: Any = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    if isinstance(original, sqlite3.Error):
        return _sqlite_fault(original, where, path)
    if _is_psycopg(original):
        return _postgres_fault(original, where)
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return StorageUnavailable(UNREACHABLE, where, f"{where} cannot be reached ({_first_line(error)})")
    if isinstance(original, OSError):
        return _os_fault(original, where, Path(original.filename) if original.filename else None)
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _sqlite_fault(error: sqlite3.Error, where: str, path: str | None) -> StorageUnavailable | None:
    name = getattr(error, "sqlite_errorname", "") or ""
    text = _first_line(error)
    if name == "SQLITE_FULL" or "database or disk is full" in text:
        return StorageUnavailable(DISK_FULL, where, f"the disk holding {where} is full (free space on it)")
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return StorageUnavailable(READ_ONLY, where, f"{where} cannot be written (a read-only or immutable file, "
                                                    "folder or disk)")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in text:
        return StorageUnavailable(LOCKED, where, f"{where} is locked by another program (for more than "
                                                 f"{SQLITE_BUSY_TIMEOUT_S:g} s); end that program's transaction")
    if name.startswith("SQLITE_CANTOPEN") or "unable to open database file" in text:
        found = sqlite_files_fault(path) if path is not None else None
        return found or StorageUnavailable(FAILING, where, f"{where} cannot be opened ({text})")
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        found = sqlite_files_fault(path) if path is not None else None
        return found or StorageUnavailable(FAILING, where, f"{where} could not be written: the disk failed ({text})")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return StorageUnavailable(FAILING, where, f"{where} is damaged ({text}); restore it from a backup")
    return None  # not the storage's: a statement of ours that is wrong


def sqlite_files_fault(path: str | Path, *, space: bool = True) -> StorageUnavailable | None:
    """What keeps the SQLite database at ``path`` from being written, looking at the files themselves.

    A full disk, a file among the database, its ``-wal`` and its ``-shm`` (or their folder)
    that cannot be written - read-only, immutable (``chattr +i``), another owner - or
    ``None`` when nothing is seen (``space``: whether a full disk counts; a reader does
    not need space).  Also run before each connection is made: SQLite maps its ``-shm``
    file into memory, and a write to a mapped file that became immutable kills the
    process with SIGBUS, so such a file is refused first.
    """
    database = Path(path)
    where = f"the database file {database}"
    folder = database.parent
    try:
        free = shutil.disk_usage(folder).free if space else None
    except OSError:
        free = None
    if free is not None and free < 4096:
        return StorageUnavailable(DISK_FULL, where, f"the disk holding {where} is full (free space on it)")
    # Run before every commit: one system call a file that can be written (the writer lets go of
    # the interpreter for each), and a second only to tell a file not there from one refused.
    for suffix in _SQLITE_FILES:
        file = database.with_name(database.name + suffix)
        if not os.access(file, os.W_OK) and file.exists():
            return StorageUnavailable(READ_ONLY, where, f"{file} cannot be written (a read-only or immutable file; "
                                                        "`lsattr` shows an immutable one)")
    if not os.access(folder, os.W_OK | os.X_OK) and folder.is_dir():
        return StorageUnavailable(READ_ONLY, where, f"the folder {folder} cannot be written")
    return None


#: ``statx``'s ``AT_FDCWD``, ``STATX_BASIC_STATS`` and ``STATX_ATTR_IMMUTABLE`` (``chattr +i``), from linux/stat.h.
_AT_FDCWD = -100
_STATX_BASIC_STATS = 0x7FF
_STATX_ATTR_IMMUTABLE = 0x10
#: ``struct statx``: 256 bytes; ``stx_attributes`` (u64) at 8, ``stx_attributes_mask`` (u64) at 56.
_STATX_SIZE = 256


@functools.cache
def _statx() -> Any:
    """The C library's ``statx`` (looked up once, among the symbols the process has loaded), or None
    where there is none (not Linux, an old C library)."""
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).statx
    except (OSError, AttributeError):
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)
    call.restype = ctypes.c_int
    return call


def immutable(path: Path) -> bool:
    """Whether ``path`` is marked immutable (``chattr +i``); False where that cannot be asked.

    Asked with ``statx``, which reads the file's attributes by its name: the file is
    **never opened**.  A process holds SQLite's locks as POSIX advisory locks, and closing
    any descriptor of a file drops every such lock the process holds on it; a check that
    opened and closed the database, its ``-wal`` or its ``-shm`` file would leave the
    server's own connections unlocked, and another program closing its connection
    (``sqlite3``, a backup, a report) would then take itself for the last one,
    checkpoint and delete the ``-wal`` file the server is still writing to.
    """
    statx = _statx()
    if statx is None:
        return False
    import ctypes
    import struct

    buffer = ctypes.create_string_buffer(_STATX_SIZE)
    if statx(_AT_FDCWD, os.fsencode(path), 0, _STATX_BASIC_STATS, buffer) != 0:
        return False
    attributes, = struct.unpack_from("=Q", buffer.raw, 8)
    known, = struct.unpack_from("=Q", buffer.raw, 56)
    return bool(known & _STATX_ATTR_IMMUTABLE and attributes & _STATX_ATTR_IMMUTABLE)


def sqlite_immutable_fault(path: str | Path) -> StorageUnavailable | None:
    """A file among the SQLite database at ``path``, its ``-wal`` and ``-shm`` marked immutable, or None.

    SQLite maps the ``-shm`` file into memory, and a process that touches the mapping of
    an immutable file is ended by the kernel with SIGBUS (no log line, no answer): no
    connection is made to such files.  A file that is only read-only by its permissions
    is not refused here: SQLite reads such a copy without writing it.
    """
    database = Path(path)
    for suffix in _SQLITE_FILES:
        file = database.with_name(database.name + suffix)
        if file.exists() and immutable(file):
            return StorageUnavailable(READ_ONLY, f"the database file {database}",
                                      f"{file} is immutable (`chattr -i {file}` makes it writable again)")
    return None


def _is_psycopg(error: BaseException) -> bool:
    return type(error).__module__.split(".")[0] == "psycopg"


def _postgres_fault(error: Any, where: str) -> StorageUnavailable | None:
    import psycopg

    state = getattr(error, "sqlstate", None) or ""
    text = _first_line(error)
    if state == "53100":
        return StorageUnavailable(DISK_FULL, where, f"{where} has no space left on its disk ({text})")
    if state == "25006":
        return StorageUnavailable(READ_ONLY, where, f"{where} takes no writes: it is read-only or a standby ({text})")
    if state in ("55P03", "40P01"):
        return StorageUnavailable(LOCKED, where, f"{where} holds a lock another session keeps ({text})")
    if state.startswith("08") or state.startswith("57P0") or isinstance(error, psycopg.InterfaceError) or (
        isinstance(error, psycopg.OperationalError) and not state
    ):
        return StorageUnavailable(UNREACHABLE, where, f"{where} cannot be reached ({text})")
    return None  # not the storage's: a statement of ours, or a constraint


def _os_fault(error: OSError, where: str, path: Path | None) -> StorageUnavailable | None:
    named = str(path) if path is not None else where
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageUnavailable(DISK_FULL, named, f"the disk holding {named} is full (free space on it)")
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StorageUnavailable(READ_ONLY, named, f"{named} cannot be written ({error.strerror})")
    if error.errno == errno.EIO:
        return StorageUnavailable(FAILING, named, f"{named} could not be written: the disk failed ({error.strerror})")
    return None


def describe_os_error(error: OSError, fallback: Path | str | None = None) -> str:
    """One sentence for an ``OSError`` met while a server starts or a command writes files.

    ``No space left on device: None`` says nothing; this names the file (or ``fallback``,
    the folder being written) and what to do.
    """
    target = error.filename if error.filename is not None else fallback
    named = str(target) if target is not None else "the server's folder"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk holding {named} is full: free space on it and start again; nothing was left half-written"
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{named} cannot be written ({error.strerror}): make it writable by this user and start again"
    return f"{error.strerror or error}: {named}"

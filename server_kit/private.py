"""A server's folder is its own user's alone: folders 0700, files 0600.

A server's folder holds secrets: its configuration (staff password hashes, the
database owner's password of a replicated central server), its database (PIN hashes,
identity documents), its journal head and keys, its PKI bundle and its reports.  Each
server's composition root names what it owns and calls :func:`keep_private` at every
start, so a file copied in or left by an older release is closed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from sqlalchemy.engine import make_url
from twisted.logger import Logger

log = Logger()


def keep_private(paths: Iterable[Path]) -> None:
    """Make each of ``paths`` (a folder with all below it) readable by the server's user only.

    A path that does not exist or is a symbolic link is left alone (a link's target is
    someone else's to protect); one the user may not change is logged, not fatal.
    """
    for path in paths:
        _private(path)


def database_files(database_url: str) -> list[Path]:
    """The files of an SQLite database at ``database_url`` (the database, its WAL, shared memory and
    rollback journal); none for another database, which keeps its files where its server does."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return []
    database = Path(url.database)
    return [database.with_name(database.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]


def _private(path: Path) -> None:
    try:
        if path.is_symlink() or not path.exists():
            return
        if path.is_dir():
            path.chmod(0o700)
            for child in path.iterdir():
                _private(child)
        else:
            path.chmod(0o600)
    except PermissionError as error:
        log.warn("Cannot make {path} private to the server's user: {error}", path=str(path), error=str(error))

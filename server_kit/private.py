"""A server's folder is its own user's alone: every folder in it 0700, every file 0600.

A server's folder holds its database (identity documents, the records), its journal's
head and keys, and what it received: nothing in it is for another local user.  The
composition root calls :func:`make_private` at every start (and the process runs with
umask 077, so what it writes later is created so); a symbolic link is left as it is,
never followed.
"""

from __future__ import annotations

from pathlib import Path

from twisted.logger import Logger

log = Logger()


def make_private(path: Path) -> None:
    """Make ``path`` (and, for a folder, everything below it) the server user's alone."""
    try:
        if path.is_symlink() or not path.exists():
            return
        if path.is_dir():
            path.chmod(0o700)
            for child in path.iterdir():
                make_private(child)
        else:
            path.chmod(0o600)
    except PermissionError as error:
        log.warn("Cannot make {path} private to the server's user: {error}", path=str(path), error=str(error))

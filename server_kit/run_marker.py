"""How a server knows, as it starts, that its last run did not stop cleanly (R92.5e, R95.1).

A server writes :data:`MARKER` into its folder when its service starts and removes it
at the very end of a clean stop, once every service (the database's writer among them)
has stopped.  A start that finds the file follows a run that ended any other way: a
crash, ``kill -9``, a power cut, a start refused on a journal that failed its check.
The file holds the process id and the time it was written, for whoever looks; only its
presence counts.

The marker is a file beside the journal's head rather than a journal record: a clean
stop cannot journal its own end after the writer has drained, and a record a crash
never wrote cannot say the crash happened.  What a server decides on a start after a
crash it journals itself (the hall: ``restarted_after_crash``; the central server:
``central_play_interrupted``), so the decision is on file whatever becomes of the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: The file's name in the server's folder.
MARKER = "running"


class RunMarker:
    """The marker file of one server's folder."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / MARKER

    def left_behind(self) -> bool:
        """Whether the last run left its marker: it did not stop cleanly."""
        return self.path.exists()

    def write(self, now_ms: int) -> None:
        """The server runs: written whole and flushed, so a crash a moment later finds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as stream:
            stream.write(json.dumps({"pid": os.getpid(), "since_ms": now_ms}) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        partial.replace(self.path)
        _sync_folder(self.path.parent)

    def remove(self) -> None:
        """The run stopped cleanly."""
        self.path.unlink(missing_ok=True)
        _sync_folder(self.path.parent)


def _sync_folder(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


__all__ = ["MARKER", "RunMarker"]

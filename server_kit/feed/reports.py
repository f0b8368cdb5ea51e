"""The reports a server sends the regulator through the feed, until each is acknowledged.

:class:`ReportOutbox` looks in the server's reports folder (``reports/`` of its home:
``daily-YYYY-MM-DD/``, ``monthly-YYYY-MM/``) for the signed reports written there. A
report is due while the receiver has not acknowledged its files as they are now: its
folder's ``.delivered`` file holds the digest (:func:`protocol.regulator_feed.report_digest`)
the receiver acknowledged, so a report written again (a later session of the same date)
is due again, whole.  A replicated server keeps the acknowledgements where both of its
processes read them instead (:class:`Deliveries`).  The link sends the due reports once
every record is acknowledged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Protocol

from protocol.regulator_feed import REPORT_FILE, REPORT_NAME, Report, ReportAck, report_digest

DELIVERED = ".delivered"


def _oldest_first(folder: Path) -> tuple[str, str]:
    """A report's place in the sending order: by the period it covers, oldest first (a day's audit export
    and daily report together, a month's report after its days), then by name."""
    kind, _, period = folder.name.partition("-")
    return period.ljust(len("YYYY-MM-DD"), "~"), kind


class Deliveries(Protocol):
    """Where the outbox keeps what the receiver acknowledged, in place of the ``.delivered`` files.

    A replicated server keeps it in its replicated journal (the central server's
    :class:`~central_server.deliveries.JournalDeliveries`), so the process that takes over
    after a failover does not send again what the other one delivered.
    """

    def delivered(self, name: str, digest: str) -> bool:
        """Whether report ``name``, whose files are now of ``digest``, needs no sending."""
        ...

    def note(self, name: str, digest: str) -> None:
        """The receiver acknowledged ``name`` with files of ``digest``."""
        ...


class ReportOutbox:
    """The reports of ``folder`` not yet acknowledged by the receiver, oldest first: a receiver that
    comes late (configured after days were closed, or away for days) gets every day it lacks, in order.

    What was acknowledged is kept in each report's folder (``.delivered``), or by
    ``deliveries`` when given.
    """

    def __init__(self, folder: Path, sender: str, deliveries: Deliveries | None = None) -> None:
        self.folder = folder
        self.sender = sender
        self.deliveries = deliveries
        #: Whether the folder may hold a due report (set by :meth:`changed`; cleared when none is due).
        self.dirty = True
        #: Counts the calls of :meth:`changed`: a look begun before one does not clear ``dirty``.
        self.version = 0

    def changed(self) -> None:
        """A report was written (or the connection is new): look again."""
        self.version += 1
        self.dirty = True

    def clear(self, version: int) -> None:
        """A look begun at ``version`` found no report due: none is, unless one was written since."""
        if self.version == version:
            self.dirty = False

    def _files(self, folder: Path) -> dict[str, bytes]:
        return {path.name: path.read_bytes() for path in sorted(folder.iterdir())
                if path.is_file() and REPORT_FILE.fullmatch(path.name)}

    def due(self) -> Report | None:
        """The first report the receiver has not acknowledged as it is now, or None."""
        if not self.dirty:
            return None
        version = self.version
        found = self.find_due()
        if found is None:
            self.clear(version)
        return found

    def find_due(self) -> Report | None:
        """The first report not acknowledged, read from the folder whatever ``dirty`` says, and
        leaving it be: the feed calls it on a thread of its own, and :meth:`clear` on the reactor."""
        if self.folder.is_dir():
            for folder in sorted(self.folder.iterdir(), key=_oldest_first):
                if not folder.is_dir() or not REPORT_NAME.fullmatch(folder.name):
                    continue
                files = self._files(folder)
                if not files or not any(name.endswith(".p7s") for name in files):
                    continue  # being written, or not signed: not a report to send
                digest = report_digest(files)
                if self._delivered(folder) == digest:  # (with deliveries: noted there before they were kept)
                    continue
                if self.deliveries is None or not self.deliveries.delivered(folder.name, digest):
                    return Report(self.sender, folder.name, files)
        return None

    def _delivered(self, folder: Path) -> str | None:
        try:
            return str(json.loads((folder / DELIVERED).read_text())["digest"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def matches(self, ack: ReportAck) -> bool:
        """Whether ``ack`` is for the files of its report as they are (reads them: off the reactor)."""
        folder = self.folder / ack.name
        return bool(REPORT_NAME.fullmatch(ack.name)) and folder.is_dir() and report_digest(self._files(folder)) == ack.digest

    def write_delivered(self, ack: ReportAck) -> None:
        """Keep ``ack`` in its report's folder (``.delivered``): a file written, so off the reactor."""
        folder = self.folder / ack.name
        marker = folder / (DELIVERED + ".new")
        marker.write_text(json.dumps({"digest": ack.digest}))
        os.replace(marker, folder / DELIVERED)

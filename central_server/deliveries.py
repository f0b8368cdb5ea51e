"""What the regulator's receiver acknowledged of the central server's reports, in the replicated journal.

The central server runs as two processes on one replicated database
(:mod:`central_server.replica`), each with a home folder of its own; the active one writes
the daily reports and the audit exports and sends them (:mod:`central_server.daily_close`,
:class:`~server_kit.feed.reports.ReportOutbox`).  A ``.delivered`` file in the sending
process's home would be lost to the process that takes over after a failover, which would
write the same days again and send them a second time.  So each acknowledgement is a journal
record, ``central_report_delivered`` (the report's name and the digest acknowledged), which
:class:`JournalDeliveries` folds like any projection: the process that takes over holds
them from the journal it recovers.

A central server's report of a day is written once and never changes (a day's folder that
exists is never written again), so a report is delivered once its *name* was acknowledged:
the report the process that takes over writes for the same day, signed at another moment,
is not sent again, and the regulator keeps the one it acknowledged.
"""

from __future__ import annotations

import copy
from typing import Any

from twisted.logger import Logger
from twisted.python.failure import Failure

from central_server.module import SYSTEM
from protocol.chain import Record
from protocol.records import declared
from protocol.records.central import CentralReportDelivered
from server_kit.core import CommandCore

log = Logger()


class JournalDeliveries:
    """The reports acknowledged by the receiver, folded from ``central_report_delivered`` records."""

    def __init__(self, core: CommandCore) -> None:
        self.core = core
        self.acknowledged: dict[str, str] = {}  # report name -> the digest acknowledged first
        core.add_module(self)
        core.allow({"note_report_delivered": frozenset({"system"})})

    # --- The fold -------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        event = declared(record)
        if isinstance(event, CentralReportDelivered):
            self.acknowledged.setdefault(event.name, event.digest)

    def reset(self) -> None:
        self.acknowledged = {}

    def savepoint(self) -> Any:
        return dict(self.acknowledged)

    def rollback(self, point: Any) -> None:
        self.acknowledged = copy.copy(point)

    def checkpoint(self) -> Any:
        """The reports acknowledged (name -> digest), for a checkpoint."""
        return dict(self.acknowledged)

    def restore(self, data: Any) -> None:
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise TypeError("the deliveries' checkpoint holds other than report names and digests")
        self.acknowledged = dict(data)

    # --- The outbox's port (server_kit.feed.reports.Deliveries) -------------------------

    def delivered(self, name: str, digest: str) -> bool:
        """A report is delivered once its name was acknowledged (the central server's reports never change)."""
        return name in self.acknowledged

    def days(self) -> set[str]:
        """The days whose daily report the receiver acknowledged (``YYYY-MM-DD``)."""
        return {name.removeprefix("daily-") for name in self.acknowledged if name.startswith("daily-")}

    def note(self, name: str, digest: str) -> None:
        """Journal the receiver's acknowledgement of ``name`` (once); a failed commit is logged, and the
        report is then sent again by the next process, which the receiver answers as held already."""

        def decide(now_ms: int) -> list[CentralReportDelivered]:
            if name in self.acknowledged:
                return []
            return [CentralReportDelivered(name=name, digest=digest)]

        def failed(failure: Failure) -> None:
            log.failure("The receiver's acknowledgement of report {name} could not be journaled", failure, name=name)

        self.core.execute(SYSTEM, "note_report_delivered", decide).addErrback(failed)


__all__ = ["JournalDeliveries"]

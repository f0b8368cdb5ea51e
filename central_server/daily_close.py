"""The central server's daily report written at the day's close, for the regulator (R95.4, R83.5, R92.7).

:class:`DayCloser` writes the signed report (:mod:`central_server.daily`) of every
ended day not written yet: when the central server starts, then one second after each
midnight of its time zone (``central.timezone``).  Beside it, for a day on which
network games ended, it writes the day's audit export as a signed report
(``reports/audit-YYYY-MM-DD/``, :mod:`protocol.audit.report`), or the export's refusal
with its reason, which the regulator's receiver replays card by card.  The days run from the day of the
journal's first record, or from the day after the newest ``reports/daily-YYYY-MM-DD/``
folder, to yesterday, so a server that was down over midnights catches up on its next
start.  A day's folder that exists is never written again: the report of an ended day
does not change, and a report already sent stays the one the regulator holds.

Each pass reads the whole journal once, refuses it unless it verifies (chain,
signatures, signed head), and writes each day off the reactor thread.  A day is written
into a hidden sibling folder and renamed into place whole, so the regulator's feed
(:class:`~server_kit.feed.reports.ReportOutbox`, told through :attr:`DayCloser.listeners`)
never sends half a report.  Without a report-signing certificate the pass logs how to
get one and writes nothing.
"""

from __future__ import annotations

import datetime
import os
import shutil
import zoneinfo
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from central_server import store
from central_server.audit import audit_report
from central_server.daily import central_daily_files, central_day
from central_server.i18n import DEFAULT_LANGUAGE
from protocol.audit.report import AuditReport
from protocol.chain import Record, head_file
from protocol.errors import DomainError
from server_kit.audit_folder import is_day
from server_kit.journal.sql import Journal, verified_records
from server_kit.pki import PkiError
from server_kit.reports.cms import ReportSigner, write_signed
from server_kit.reports.daily import REPORTS_FOLDER, day_end_ms, day_folder, write_audit_report

#: How long after midnight the day's report is written.
MARGIN_S = 1.0
#: How soon a pass is tried again when a record decided before it is still being committed.
RETRY_S = 1.0

log = Logger()


def local_day(seconds: float, zone: datetime.tzinfo) -> datetime.date:
    """The date in ``zone`` at ``seconds`` since the epoch."""
    return datetime.datetime.fromtimestamp(seconds, zone).date()


def due_days(records: Sequence[Record], reports: Path, zone: datetime.tzinfo, through: datetime.date,
             reported: Iterable[str] = ()) -> list[str]:
    """The days to report, up to ``through``: from the journal's first day, or the day after the newest
    folder or the newest day ``reported`` (delivered to the regulator, by this process or another)."""
    if not records:
        return []
    start = local_day(records[0].time_ms / 1000, zone)
    names = [path.name.removeprefix("daily-") for path in (reports.iterdir() if reports.is_dir() else ())
             if path.is_dir() and path.name.startswith("daily-")]
    names += list(reported)
    written = [datetime.date.fromisoformat(name) for name in names if is_day(name)]
    if written:
        start = max(start, max(written) + datetime.timedelta(days=1))
    return [(start + datetime.timedelta(days=n)).isoformat() for n in range((through - start).days + 1)]


class _Lagging(Exception):
    """The journal read does not hold every record decided before the pass: one is still being committed."""


class DayCloser(Service):
    """Writes the signed daily report of each ended day, at the start and after each midnight."""

    def __init__(self, journal: Journal, home: Path, central_id: str, timezone: str, clock: IReactorTime,
                 run: Callable[..., defer.Deferred[Any]], decided_seq: Callable[[], int] = lambda: 0,
                 reported: Callable[[], Iterable[str]] = tuple, language: str = DEFAULT_LANGUAGE) -> None:
        self.journal = journal
        #: The PDF's language (``[central] language``); the JSON and the CSV are the data's.
        self.language = language
        self.home = home
        self.reports = home / REPORTS_FOLDER
        self.central_id = central_id
        self.timezone = timezone
        self.zone = zoneinfo.ZoneInfo(timezone)
        self.clock = clock
        self.run = run  # a thread pool in the server
        #: The last record decided (the core's): a pass reads a journal that holds it, so a record
        #: stamped before midnight but still being committed is in its day's report.
        self.decided_seq = decided_seq
        #: The days whose report the regulator acknowledged (from the replicated journal): a process
        #: that takes over after a failover writes none of them again.
        self.reported = reported
        self.written: list[Path] = []  # the folders written, for the log and the tests
        self.audits: list[Path] = []  # the audit exports' folders written
        self._library: tuple[Sequence[Record], Mapping[str, np.ndarray]] | None = None  # read once a pass
        #: Told after each report is written (the regulator's feed sends it).
        self.listeners: list[Callable[[], None]] = []
        self._timer: IDelayedCall | None = None
        self._passing: defer.Deferred[None] | None = None

    @property
    def next_pass_s(self) -> float | None:
        """When the next pass runs, in the clock's seconds; None while one runs (or once stopped)."""
        return self._timer.getTime() if self._timer is not None and self._timer.active() else None

    def startService(self) -> None:
        super().startService()
        self._close()

    def stopService(self) -> defer.Deferred[None] | None:
        super().stopService()
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        return self._passing  # the day being written is finished, the next is not begun (None: no pass runs)

    def _close(self) -> None:
        self._timer = None
        passing = self._pass()
        self._passing = None if passing.called else passing

    @defer.inlineCallbacks
    def _pass(self):  # type: ignore[no-untyped-def]
        through = local_day(self.clock.seconds(), self.zone) - datetime.timedelta(days=1)
        retry: float | None = None
        try:
            due = yield self.run(self._due, through, self.decided_seq(), set(self.reported()))
            if due is not None:
                signer, records, days = due
                for day in days:
                    if not self.running:
                        break
                    folder = yield self.run(self._write, signer, records, day)
                    if folder is not None:
                        self._written(folder)
        except _Lagging:
            retry = RETRY_S
        except DomainError as error:
            log.error("The daily reports are not written: {error}", error=str(error))
        except Exception:
            log.failure("The daily reports could not be written")
        self._passing = None
        if self.running:
            self._arm(through, retry)

    def _arm(self, through: datetime.date, retry: float | None) -> None:
        now = self.clock.seconds()
        today = local_day(now, self.zone)
        if retry is None and today - datetime.timedelta(days=1) > through:
            retry = 0  # a midnight passed while this pass wrote: its day is due now
        if retry is None:
            retry = day_end_ms(today.isoformat(), self.zone) / 1000 - now + MARGIN_S
        self._timer = self.clock.callLater(retry, self._close)

    def _due(self, through: datetime.date, decided: int,
             reported: Iterable[str] = ()) -> tuple[ReportSigner, list[Record], list[str]] | None:
        """The signer, the verified journal and the days to write (off the reactor); None without a signer."""
        try:
            signer = ReportSigner.of_server(self.home)
        except PkiError as error:
            log.warn("The daily report is not written at the day's close: {error}", error=str(error))
            return None
        journal = self.journal
        records = verified_records(journal.engine, journal.key.public_key(), journal.head, where=head_file(journal.head))
        if (records[-1].seq if records else 0) < decided:
            raise _Lagging()
        return signer, records, due_days(records, self.reports, self.zone, through, reported)

    def _write(self, signer: ReportSigner, records: Sequence[Record], day: str) -> Path | None:
        """Write ``day``'s report whole into its folder (off the reactor); the folder, or None if it was there.

        The day's audit export is written first, so that a report's folder that exists
        says both were written.
        """
        folder = day_folder(self.home, day)
        if folder.exists():
            return None
        try:
            audit = self._audit(records, day)
            if audit is not None:
                self.audits.append(write_audit_report(self.home, audit, signer))
        except Exception:  # the daily report is written all the same
            log.failure("The audit export of {day} could not be written", day=day)
        partial = folder.with_name(f".{folder.name}.partial")  # not a report's name: the feed passes it by
        shutil.rmtree(partial, ignore_errors=True)  # what a stop in the middle of a write left
        data, pdf = central_daily_files(central_day(records, day, self.central_id, self.timezone), self.language)
        write_signed(data, partial, signer, pdf)
        os.rename(partial, folder)
        return folder

    def _audit(self, records: Sequence[Record], day: str) -> AuditReport | None:
        """``day``'s audit export, its refusal, or None when no network game ended that day.

        A library that cannot be read (altered) is a refusal the regulator is told of;
        the daily report is written all the same.
        """
        try:
            if self._library is None or self._library[0] is not records:
                self._library = (records, store.load_series(self.journal.engine))  # once a pass
            return audit_report(records, self._library[1], self.timezone, day)
        except DomainError as error:
            return AuditReport.refused(day, f"the central library cannot be read: {error}")

    def _written(self, folder: Path) -> None:
        self.written.append(folder)
        log.info("Daily report written to {folder}", folder=str(folder))
        for listener in self.listeners:
            listener()

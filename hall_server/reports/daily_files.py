"""The hall's daily report written as signed files: on request (``bingo report daily``) and at each session's close.

Both read the whole journal, refuse it unless it verifies (a report signed over an
altered journal would vouch for forged facts), fold the day into a
:class:`~protocol.daily.DailyReport` (:mod:`hall_server.reports.daily`) and write it
as ``report.json``, ``report.csv`` and ``report.pdf`` with their ``.p7s`` signatures
by the hall's report-signing certificate (:mod:`server_kit.reports.cms`).

At a session's close (R83.5: daily, at the session's end) :class:`DailyReporter`
writes the session date's report into ``reports/daily-YYYY-MM-DD/`` in the hall's
folder, off the reactor thread; a later session of the same date writes it again,
whole.  Given the hall's prize rules, it writes beside it the day's audit export as a
signed report (``reports/audit-YYYY-MM-DD/``, :mod:`protocol.audit.report`), or the
export's refusal with its reason, for the regulator's receiver to replay card by card
(R92.7).  A hall without a report-signing certificate logs how to get one and goes on.

The video bingo machines play on after a session's close, and a network game's prizes
may be credited after it: the close also brings the earlier days up to date, from the
previous session's date to the day before this one (:func:`days_to_bring_up`).  A day
whose report would now say more - the machines' plays, a beneficiary of 15,000 EUR or
more (R75.6: reported at the next daily close) - is written again, whole (or, for a day
without a session, written), and the regulator's feed sends it again.
"""

from __future__ import annotations

import datetime
from datetime import tzinfo
from pathlib import Path
from typing import Any, Callable, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import Engine
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.audit.source import audit_report
from hall_server.reports.daily import hall_day, session_date
from hall_server.reports.minutes import MinutesBook, build
from hall_server.reports.printed import printed_pdf
from hall_server.reports.yearly import hall_yearly_report
from protocol.chain import Record
from protocol.daily import DailyReport
from protocol.records import declared
from protocol.records.network import NetworkCreditPaid
from protocol.records.session import SessionClosed
from protocol.records.videobingo import VbCreditIn, VbCreditOut, VbPlay
from protocol.settlement import PrizeRules
from protocol.settlement.tax import YearTax
from server_kit.journal.sql import Journal, verified_records
from server_kit.pki import PkiError
from server_kit.reports.cms import ReportSigner, write_signed
from server_kit.reports.daily import daily_report, day_folder, write_audit_report
from server_kit.reports.document import Report
from server_kit.reports.render import to_json

log = Logger()

#: The records a day's report may gain after its session's close: the machines' plays and credits, network credits.
LATE_RECORDS = (VbPlay, VbCreditIn, VbCreditOut, NetworkCreditPaid)


def days_to_bring_up(records: Sequence[Record], book: MinutesBook, day: str, timezone: tzinfo) -> list[str]:
    """The days before ``day`` whose reports a close brings up to date: the previous session's date, and each
    later day before ``day`` on which a video bingo machine played or a network prize was credited."""
    earlier = [s.date for s in book.sessions if s.date < day]
    if not earlier:
        return []
    since = max(earlier)
    active = {datetime.datetime.fromtimestamp(r.time_ms / 1000, timezone).date().isoformat()
              for r in records if isinstance(declared(r), LATE_RECORDS)}
    return sorted({since} | {d for d in active if since < d < day})


def read_day(engine: Engine, public_key: Ed25519PublicKey, head: Path, day: str, hall_name: str,
             timezone: tzinfo) -> DailyReport:
    """The daily report of ``day`` from the whole journal, once the journal verifies (chain, signatures, head)."""
    return hall_day(verified_records(engine, public_key, head), day, hall_name, timezone)


def read_year(engine: Engine, public_key: Ed25519PublicKey, head: Path, year: int, through: str, hall_name: str,
              timezone: tzinfo, language: str = "en") -> tuple[YearTax, Report, bytes]:
    """The tax year ``year`` up to ``through``, its report (R98.2) and that report's PDF in ``language``, from the
    whole journal once it verifies."""
    records = verified_records(engine, public_key, head)
    made, laid_out = hall_yearly_report(records, year, through, hall_name, timezone)
    pdf = printed_pdf(lambda words: hall_yearly_report(records, year, through, hall_name, timezone, words)[1], language)
    return made, laid_out, pdf


def read_month(engine: Engine, public_key: Ed25519PublicKey, head: Path, month_days: Sequence[str], hall_name: str,
               timezone: tzinfo) -> list[DailyReport]:
    """The daily facts of each of ``month_days`` from the whole journal, once it verifies (R77.4)."""
    records = verified_records(engine, public_key, head)
    book = build(records)
    return [hall_day(records, day, hall_name, timezone, book) for day in month_days]


class DailyReporter:
    """Writes the session date's signed daily report when a session closes (a core observer)."""

    def __init__(self, journal: Journal, home: Path, hall_name: str, timezone: tzinfo,
                 run: Callable[..., Any], rules: PrizeRules | None = None, language: str = "en") -> None:
        self.journal = journal
        self.language = language  # the hall's: the PDF's words (the JSON and the CSV are the data's)
        self.home = home
        self.hall_name = hall_name
        self.timezone = timezone
        self.run = run  # a thread pool in the server; inline in the tests
        #: The prize rules in force, which the day's audit export names (None: no audit export is written).
        self.rules = rules
        self.written: list[Path] = []  # the folders written, for the log and the tests
        self.audits: list[Path] = []  # the audit exports' folders written
        self.updated: list[Path] = []  # the earlier days' folders brought up to date at a close
        #: Told after each report is written (the regulator's feed sends it).
        self.listeners: list[Callable[[], None]] = []

    def record_committed(self, record: Record) -> None:
        if not isinstance(declared(record), SessionClosed):
            return
        done = self.run(self.write, record.seq)
        done.addCallbacks(self._written, self._failed, errbackArgs=(record.seq,))

    def write(self, closed_seq: int) -> Path | None:
        """Write the report of the session closed by record ``closed_seq``; its folder, or None if none was written."""
        try:
            signer = ReportSigner.of_server(self.home)
        except PkiError as error:
            log.warn("The daily report is not written at the session's close: {error}", error=str(error))
            return None
        journal = self.journal
        records = verified_records(journal.engine, journal.key.public_key(), journal.head)
        book = build(records)
        day = session_date(book, closed_seq)
        if day is None:
            return None
        folder = day_folder(self.home, day)
        made = hall_day(records, day, self.hall_name, self.timezone, book)
        write_signed(daily_report(made), folder, signer, printed_pdf(lambda words: daily_report(made, words),
                                                                     self.language))
        for earlier in days_to_bring_up(records, book, day, self.timezone):
            self._bring_up(records, book, earlier, signer)
        if self.rules is not None:
            try:
                self.audits.append(write_audit_report(self.home, audit_report(records, day, self.rules, journal.engine),
                                                      signer))
            except Exception:  # the daily report stands, and is sent, whatever befell the export
                log.failure("The audit export of {day} could not be written at the session's close", day=day)
        return folder

    def _bring_up(self, records: Sequence[Record], book: MinutesBook, day: str, signer: ReportSigner) -> None:
        """Write ``day``'s report again if it now says more than the one written (or write it, if none was)."""
        made = hall_day(records, day, self.hall_name, self.timezone, book)
        laid_out = daily_report(made)
        folder = day_folder(self.home, day)
        written = folder / f"{laid_out.file_stem}.json"
        if written.exists():
            if written.read_bytes() == to_json(laid_out):
                return
        elif not (made.games or made.machines or made.beneficiary_prizes):
            return  # nothing happened that day: no report to send
        write_signed(laid_out, folder, signer, printed_pdf(lambda words: daily_report(made, words), self.language))
        self.updated.append(folder)

    def _written(self, folder: Path | None) -> None:
        if folder is not None:
            self.written.append(folder)
            log.info("Daily report written to {folder}", folder=str(folder))
            for listener in self.listeners:
                listener()

    def _failed(self, failure: Failure, seq: int) -> None:
        log.failure("The daily report of the session closed at record {seq} could not be written", failure, seq=seq)

"""The tax year (R98.2) as the tables of a :class:`Report`: its bases, its tax, and each day's share.

R98.2's base is set "pour chaque exercice", the calendar year: the bingo tax is 10% of
the year's stakes, rounded once, the machines' tax 10% of the year's gross gaming
revenue when it is positive (:class:`protocol.settlement.tax.YearTax`).  A hall and the
central server lay their year out the same way (``docs/reports.md``):

* ``journal`` - the records the year was read from: the first written in the year, the
  last written by the end of its last day, and that record's hash;
* ``report`` - who made it, for which year, through which day, in which time zone;
* ``totals`` - the year's bingo stakes and bingo tax, the machines' revenue and tax, the
  tax owed, and what the games' and days' rounded shares leave of it;
* ``days`` - every day with something taxed: its stakes and revenue, its share of each
  tax, and the bases to date.
"""

from __future__ import annotations

import datetime
import re
from datetime import tzinfo
from pathlib import Path
from typing import Sequence

from protocol.chain import Record
from protocol.money import format_cents
from protocol.settlement.tax import YearTax
from server_kit.reports.daily import day_end_ms, day_start_ms, fields_of, table_of
from server_kit.reports.document import DATA, Cents, JournalRange, Report, ReportError, Wording

KIND = "yearly"
#: The file names of the tax year's report: ``tax-year.json``, ``.csv``, ``.pdf``.
STEM = "tax-year"
_YEAR = re.compile(r"[0-9]{4}")


def checked_year(year: str, today: datetime.date) -> tuple[int, str]:
    """``year`` (``YYYY``, not after ``today``'s) and the last day to read: its 31 December, or ``today``."""
    if not _YEAR.fullmatch(year) or int(year) < 1:
        raise ReportError(f"--year is a year, YYYY, not {year!r}")
    if int(year) > today.year:
        raise ReportError(f"--year {year} is in the future: this year is {today.year}")
    through = datetime.date(int(year), 12, 31)
    return int(year), min(through, today).isoformat()


def year_range(records: Sequence[Record], year: int, through: str, timezone: tzinfo) -> JournalRange:
    """The records written from the year's first day to the end of ``through`` (in ``timezone``)."""
    start, end = day_start_ms(f"{year:04d}-01-01", timezone), day_end_ms(through, timezone)
    written = [r for r in records if start <= r.time_ms < end]
    if not written:
        before = [r for r in records if r.time_ms < end]
        return JournalRange(before[-1].seq, before[-1].seq, before[-1].hash) if before else JournalRange(0, 0, "")
    return JournalRange(written[0].seq, written[-1].seq, written[-1].hash)


def yearly_report(year: YearTax, *, origin: str, server: str, timezone: str, journal: JournalRange,
                  games_tax_cents: int, wording: Wording = DATA) -> Report:
    """The tables of the tax year's report; ``games_tax_cents`` is the sum of the games' own shares (10% of each
    game's stakes, rounded down, as their minutes show it), to show what rounding once adds to them."""
    t = wording.t
    who = t("hall") if origin == "hall" else t("central server")
    days = year.days()
    shown_games = games_tax_cents
    tables = (
        fields_of("journal", t("Journal records"), [
            ("journal_first_seq", t("First record"), journal.first_seq),
            ("journal_last_seq", t("Last record of the year so far"), journal.last_seq),
            ("journal_last_hash", t("Its hash"), journal.last_hash),
        ]),
        fields_of("report", t("Report"), [
            ("year", t("Fiscal year (the calendar year, R98.2)"), year.year), 
            ("through", t("Through"), wording.day(year.through)),
            ("origin", t("Made by"), who), ("server", t("Server"), server), ("timezone", t("Time zone"), timezone),
        ]),
        fields_of("totals", t("The year's tax (R98, R98.2)"), [
            ("bingo_stakes_cents", t("Bingo stakes"), Cents(year.bingo_stakes_cents)),
            ("bingo_tax_cents", t("Bingo tax: 10% of the stakes, rounded once"), Cents(year.bingo_tax_cents)),
            ("games_tax_cents", t("The games' shares added up (each rounded down)"), Cents(shown_games)),
            ("rounding_cents", t("What rounding once adds to them"), Cents(year.bingo_tax_cents - shown_games)),
            ("machines_revenue_cents", t("Machines' gross gaming revenue (stakes less prizes)"),
             Cents(year.machines_revenue_cents)),
            ("machines_tax_cents", t("Machines' tax: 10% of the revenue, none if it is negative"),
             Cents(year.machines_tax_cents)),
            ("tax_cents", t("Tax of the year"), Cents(year.tax_cents)),
        ]),
        table_of("days", t("Each day's bases and its share of the tax, for information"), [
            ("day", t("Day")), ("bingo_stakes_cents", t("Bingo stakes")),
            ("bingo_share_cents", t("Share of the bingo tax")),
            ("machines_revenue_cents", t("Machines' revenue")),
            ("machines_share_cents", t("Share of the machines' tax")),
            ("bingo_stakes_to_date_cents", t("Stakes to date")),
            ("machines_revenue_to_date_cents", t("Revenue to date")),
        ], [
            (wording.day(d.day), Cents(d.bingo_stakes_cents), Cents(d.bingo_share_cents),
             Cents(d.machines_revenue_cents),
             Cents(d.machines_share_cents), Cents(d.bingo_stakes_to_date_cents),
             Cents(d.machines_revenue_to_date_cents))
            for d in days
        ]),
    )
    return Report(
        kind=KIND,
        subject=str(year.year),
        title=t("Tax year {year} through {through} - {who} {server}", year=year.year, through=wording.day(year.through),
                who=who, server=server),
        journal_range=journal,
        tables=tables,
        stem=STEM,
    )


def written_lines(year: YearTax, report: Report, written: Sequence[Path]) -> list[str]:
    """What ``bingo report yearly`` prints: the year's figures, the files, how to check them."""
    lines = [f"tax year {year.year} through {year.through}: bingo stakes {format_cents(year.bingo_stakes_cents)}, "
             f"bingo tax {format_cents(year.bingo_tax_cents)}; machines' revenue "
             f"{format_cents(year.machines_revenue_cents)}, machines' tax {format_cents(year.machines_tax_cents)}; "
             f"tax {format_cents(year.tax_cents)} (journal records {report.journal_range.first_seq} to "
             f"{report.journal_range.last_seq})"]
    lines += [f"  {path} (signature {path.name}.p7s)" for path in written]
    return lines

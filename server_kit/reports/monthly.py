"""The monthly list of cards sold (R77.4), with the month's large wins (R75.6), as the tables of a :class:`Report`.

A server folds each day of the month into its :class:`protocol.daily.DailyReport` (the
same facts as the daily report) and this lays the month out:

* ``journal`` - the records the list was made from: the first of the month's first day
  with a record, the last of its last, and that record's hash;
* ``report`` - who made it, for which month, in which time zone;
* ``totals`` - the month's cards sold and what was paid for them, paper and virtual (R77.4);
* ``days`` - the same per day;
* ``cards`` - every purchase of the month: day, game, kind, series, first and last card,
  value, paid, where (R77.4); refunded cards are listed and marked;
* ``large_wins`` and ``large_win_prizes`` - the month's beneficiaries of 15,000 EUR or
  more, as each day's daily report has them (R75.6).
"""

from __future__ import annotations

import calendar
import datetime
import re
from typing import Sequence

from protocol.daily import PAPER, VIRTUAL, DailyReport
from server_kit.reports.daily import fields_of, large_win_prizes_table, large_wins_table, table_of
from server_kit.reports.document import DATA, Cents, JournalRange, Report, ReportError, Wording

KIND = "monthly"
STEM = "cards-sold"
_MONTH = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")


def checked_month(month: str, today: datetime.date) -> str:
    """``month`` if it is ``YYYY-MM`` and not after ``today``'s month, else one clear error."""
    if not _MONTH.fullmatch(month):
        raise ReportError(f"--month is a month, YYYY-MM, not {month!r}")
    if month > today.isoformat()[:7]:
        raise ReportError(f"--month {month} is in the future: this month is {today.isoformat()[:7]}")
    return month


def month_days(month: str, today: datetime.date) -> list[str]:
    """The days of ``month`` up to ``today``, in order."""
    year, number = (int(part) for part in month.split("-"))
    last = calendar.monthrange(year, number)[1]
    days = [datetime.date(year, number, d) for d in range(1, last + 1)]
    return [d.isoformat() for d in days if d <= today]


def _sold(day: DailyReport, kind: str) -> tuple[int, int]:
    runs = [c for c in day.cards if c.kind == kind and not c.refunded]
    return sum(c.count for c in runs), sum(c.amount_cents for c in runs)


def monthly_report(month: str, days: Sequence[DailyReport], wording: Wording = DATA) -> Report:
    """The month's list of cards sold from its days' facts, in the order the PDF prints them, in ``wording``."""
    t = wording.t
    if not days:
        raise ReportError(f"the month {month} has no day yet")
    first = next((d for d in days if d.first_seq), days[0])
    last = days[-1]
    who = t("hall") if last.origin == "hall" else t("central server")
    per_day = [(d.day, *_sold(d, PAPER), *_sold(d, VIRTUAL)) for d in days]
    wins = [(d.day, w) for d in days for w in d.large_wins()]
    paper = (sum(r[1] for r in per_day), sum(r[2] for r in per_day))
    virtual = (sum(r[3] for r in per_day), sum(r[4] for r in per_day))
    tables = (
        fields_of("journal", t("Journal records"), [
            ("journal_first_seq", t("First record"), first.first_seq),
            ("journal_last_seq", t("Last record of the month"), last.last_seq),
            ("journal_last_hash", t("Its hash"), last.last_hash),
        ]),
        fields_of("report", t("Report"), [
            ("month", t("Month"), month), ("origin", t("Made by"), who), ("server", t("Server"), last.server),
            ("timezone", t("Time zone"), last.timezone),
        ]),
        fields_of("totals", t("Cards sold in the month (R77.4)"), [
            ("paper_cards", t("Paper cards"), paper[0]), ("paper_cents", t("Paid for paper cards"), Cents(paper[1])),
            ("virtual_cards", t("Virtual cards"), virtual[0]),
            ("virtual_cents", t("Paid for virtual cards"), Cents(virtual[1])),
        ]),
        table_of("days", t("Cards sold each day"), [
            ("day", t("Day")), ("paper_cards", t("Paper cards")), ("paper_cents", t("Paper paid")),
            ("virtual_cards", t("Virtual cards")), ("virtual_cents", t("Virtual paid")),
        ], [(wording.day(d), pc, Cents(pa), vc, Cents(va)) for d, pc, pa, vc, va in per_day if pc or vc]),
        table_of("cards", t("Every purchase of cards (R77.4)"), [
            ("day", t("Day")), ("game_id", t("Game")), ("kind", t("Kind")), ("series", t("Series")),
            ("first", t("First card")),
            ("last", t("Last card")), ("count", t("Cards")), ("value_cents", t("Value of a card")),
            ("stake_pct", t("Stake %")), ("amount_cents", t("Paid")), ("hall", t("Hall")),
            ("where", t("Terminal or seller")), ("refunded", t("Refunded")),
        ], [
            (wording.day(d.day), c.game_id, t(c.kind), c.series, c.first, c.last, c.count, Cents(c.value_cents),
             c.stake_pct,
             Cents(c.amount_cents), c.hall, t(c.where), t("yes") if c.refunded else t("no"))
            for d in days for c in d.cards
        ]),
        large_wins_table(wins, wording),
        large_win_prizes_table(wins, wording),
    )
    return Report(
        kind=KIND,
        subject=month,
        title=t("Cards sold in {month} - {who} {server}", month=month, who=who, server=last.server),
        journal_range=JournalRange(first.first_seq, last.last_seq, last.last_hash),
        tables=tables,
        stem=STEM,
    )

"""A hall's tax year (R98.2), folded from the journal: the bingo stakes and the machines' revenue of each day.

* **Bingo**: the stakes of the hall's own games (their ``tax_base_cents``: the collection
  less the stakes refunded after the sale's close; a refunded game has none) and this
  room's own sales in the games played with the partner hall, on their session's date;
* **Machines**: each video bingo play's stake less its prizes and jackpot contributions
  (the gross gaming revenue of the daily report's ``machines`` table), on the calendar
  day of the play in the hall's time zone.

:class:`~protocol.settlement.tax.YearTax` then computes the year's tax once, and each
day's share for information.
"""

from __future__ import annotations

import datetime
from datetime import tzinfo
from typing import Sequence

from hall_server.reports.minutes import MinutesBook, build
from protocol.chain import Record
from protocol.records import declared
from protocol.records.videobingo import VbPlay
from protocol.settlement.tax import TaxDay, YearTax
from server_kit.reports.document import DATA, Report, Wording
from server_kit.reports.yearly import year_range, yearly_report


def tax_days(records: Sequence[Record], book: MinutesBook, timezone: tzinfo) -> list[TaxDay]:
    """Every day's tax bases in ``records`` (the whole journal, in order) and its minutes ``book``."""
    days = [
        TaxDay(session.date, bingo_stakes_cents=sum(game.tax_base_cents or 0 for game in session.games)
               + sum(joint.own_sales_cents for joint in session.joint_games if joint.tax_cents is not None))
        for session in book.sessions
    ]
    for record in records:
        play = declared(record)
        if isinstance(play, VbPlay):
            day = datetime.datetime.fromtimestamp(record.time_ms / 1000, timezone).date().isoformat()
            days.append(TaxDay(day, machines_revenue_cents=play.stake_cents - play.won_cents - sum(play.contributions)))
    return days


def hall_year(records: Sequence[Record], book: MinutesBook, year: int, through: str, timezone: tzinfo) -> YearTax:
    """The hall's tax year ``year`` up to day ``through`` (R98.2)."""
    return YearTax.of(year, through, tax_days(records, book, timezone))


def games_tax_cents(book: MinutesBook, year: int, through: str) -> int:
    """The games' own shares of the bingo tax (each 10% of its stakes, rounded down) in the year up to ``through``."""
    sessions = [s for s in book.sessions if s.date[:4] == str(year) and s.date <= through]
    return sum(game.tax_cents or 0 for s in sessions for game in s.games) + sum(
        joint.tax_cents or 0 for s in sessions for joint in s.joint_games)


def hall_yearly_report(records: Sequence[Record], year: int, through: str, hall_name: str,
                       timezone: tzinfo, wording: Wording = DATA) -> tuple[YearTax, Report]:
    """The hall's tax year ``year`` up to ``through`` and its report (R98.2) in ``wording``, from the whole
    journal."""
    book = build(records)
    made = hall_year(records, book, year, through, timezone)
    return made, yearly_report(made, origin="hall", server=hall_name, timezone=str(timezone),
                               journal=year_range(records, year, through, timezone),
                               games_tax_cents=games_tax_cents(book, year, through), wording=wording)

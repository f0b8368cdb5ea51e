"""What of a game's stakes is the tax (R98) and what is the house's; the tax of a fiscal year (R98.2).

R98.2 sets the tax base "pour chaque exercice", and the fiscal year is the calendar
year: the bingo tax is 10% of the year's stakes, rounded once, and the machines' tax
10% of the year's gross gaming revenue (stakes less prizes) when it is positive, a
losing day offsetting a winning one.  A game's tax (:func:`tax_cents`) and a day's
share (:meth:`YearTax.days`) are shown for information: the tax owed is the year's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from protocol.settlement.pots import sales_contributions
from protocol.settlement.rules import PrizeRules, share_of_sales

TAX_PCT = 10  # R98: of the amounts staked, and of the machines' gross gaming revenue


def tax_cents(sales_cents: int) -> int:
    """A game's share of the bingo tax (R98): 10% of its stakes, rounded down; for information,
    since the tax owed is the year's (:func:`bingo_tax_cents`)."""
    return sales_cents * TAX_PCT // 100


def bingo_tax_cents(stakes_cents: int) -> int:
    """The bingo tax of a year's stakes (R98.2): 10%, rounded down once."""
    return stakes_cents * TAX_PCT // 100


def machines_tax_cents(gross_revenue_cents: int) -> int:
    """The machines' tax of a year's gross gaming revenue (R98.2): 10%, rounded down, none on a loss."""
    return max(gross_revenue_cents, 0) * TAX_PCT // 100


@dataclass(frozen=True)
class TaxDay:
    """One day's tax bases: the bingo stakes (after refunds) and the machines' gross gaming revenue."""

    day: str
    bingo_stakes_cents: int = 0
    machines_revenue_cents: int = 0


@dataclass(frozen=True)
class TaxDayShare:
    """A day of the year with its share of the tax, for information (R98.2).

    A day's share is what it changed the year-to-date tax by, so the shares of the
    days add up to the year's tax exactly; a losing machines' day has a negative
    share while the year to date is positive.
    """

    day: str
    bingo_stakes_cents: int
    bingo_share_cents: int
    machines_revenue_cents: int
    machines_share_cents: int
    bingo_stakes_to_date_cents: int
    machines_revenue_to_date_cents: int


@dataclass(frozen=True)
class YearTax:
    """A fiscal year's tax bases and tax up to day ``through`` (the whole year once it is over)."""

    year: int
    through: str
    tax_days: tuple[TaxDay, ...]

    @classmethod
    def of(cls, year: int, through: str, days: Iterable[TaxDay]) -> "YearTax":
        """The year ``year`` up to ``through`` from ``days`` (those outside it are left out, one line per day)."""
        first, last = f"{year:04d}-01-01", min(through, f"{year:04d}-12-31")  # ISO dates order as strings
        merged: dict[str, TaxDay] = {}
        for day in days:
            if first <= day.day <= last:
                was = merged.get(day.day, TaxDay(day.day))
                merged[day.day] = TaxDay(day.day, was.bingo_stakes_cents + day.bingo_stakes_cents,
                                         was.machines_revenue_cents + day.machines_revenue_cents)
        return cls(year, last, tuple(merged[d] for d in sorted(merged)))

    @property
    def bingo_stakes_cents(self) -> int:
        return sum(d.bingo_stakes_cents for d in self.tax_days)

    @property
    def machines_revenue_cents(self) -> int:
        return sum(d.machines_revenue_cents for d in self.tax_days)

    @property
    def bingo_tax_cents(self) -> int:
        return bingo_tax_cents(self.bingo_stakes_cents)

    @property
    def machines_tax_cents(self) -> int:
        return machines_tax_cents(self.machines_revenue_cents)

    @property
    def tax_cents(self) -> int:
        return self.bingo_tax_cents + self.machines_tax_cents

    def days(self) -> tuple[TaxDayShare, ...]:
        """Each day with its bases, its share of the tax and the bases to date."""
        shares: list[TaxDayShare] = []
        stakes = revenue = 0
        for day in self.tax_days:
            before = (bingo_tax_cents(stakes), machines_tax_cents(revenue))
            stakes += day.bingo_stakes_cents
            revenue += day.machines_revenue_cents
            shares.append(TaxDayShare(
                day.day, day.bingo_stakes_cents, bingo_tax_cents(stakes) - before[0], day.machines_revenue_cents,
                machines_tax_cents(revenue) - before[1], stakes, revenue,
            ))
        return tuple(shares)

    def share_of(self, day: str) -> TaxDayShare | None:
        """``day``'s line of :meth:`days`, or None when it had nothing taxed."""
        return next((d for d in self.days() if d.day == day), None)


def tax_base_after_refunds(sales_cents: int, refunded_cents: int) -> int:
    """The amounts staked on a game once the stakes refunded after its sale's close are taken out (R98).

    A failed terminal's cards refunded after the close (R96.3) were never played: the
    house pays them back, and what it paid back was not staked.  Refunds before the close
    never reach the collection, and a refunded game owes no tax at all.
    """
    if refunded_cents < 0 or refunded_cents > sales_cents:
        raise ValueError(f"a game that collected {sales_cents} cents cannot have refunded {refunded_cents}")
    return sales_cents - refunded_cents


def house_share(rules: PrizeRules, sales_cents: int) -> int:
    """What of a game's sales goes neither to its prizes nor to any pot.

    The line and bingo count at their percentages: a fixed sum above them is the
    house's own top-up (R88.3), not a part of the sales.
    """
    return (
        sales_cents
        - share_of_sales(sales_cents, rules.line_bp)
        - share_of_sales(sales_cents, rules.bingo_bp)
        - sum(sales_contributions(rules, sales_cents, 0).values())
    )

"""R98.2: the tax base is the fiscal year's, the calendar year.  The machines owe 10% of the year's gross
gaming revenue when it is positive - a losing day offsets a winning one - and the bingo 10% of the year's
stakes, rounded once; days and games show their share for information."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from twisted.internet.task import Clock

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.reports.daily import hall_day
from hall_server.reports.yearly import hall_yearly_report
from protocol.settlement.tax import TaxDay, YearTax, tax_cents
from server_kit.reports.daily import daily_report
from server_kit.reports.document import Cents
from tests.hall.conftest import result
from tests.reports.large_win_games import steered_vb_hall
from tests.videobingo.halls import CASHIER, requests

CREDIT = 10_000  # 100 EUR a credit: fifteen plays stake 1,500 EUR
PLAYS = 15


def _fields(report, key: str) -> dict:  # type: ignore[no-untyped-def]
    table = {t.key: t for t in daily_report(report).tables}[key]
    return dict(zip((c.key for c in table.columns), table.rows[0]))


@pytest.mark.req("R98.2")
def test_R98_2_a_losing_machines_day_offsets_a_winning_one_and_the_year_owes_nothing(tmp_path: Path) -> None:
    """The machines keep 1,500 EUR one day and pay 1,500 EUR more than they take the next: the day-by-day
    rule taxed 150 EUR; the year's revenue is 0 and so is its tax, the days showing +150 and -150 EUR."""
    clock = Clock()
    clock.advance(datetime.datetime(2026, 11, 3, 9, tzinfo=DEFAULT_TIMEZONE).timestamp())
    hall, steered = steered_vb_hall(tmp_path, clock, CREDIT, stations=1)
    ids = requests()
    result(hall.cashier.open_desk(CASHIER, "desk1", 0))
    result(hall.vb.desk_credit_in(CASHIER, "vb-1", 1, PLAYS * CREDIT, "desk1"))
    for _ in range(PLAYS):
        steered.miss()
        assert result(hall.vb.play("vb-1", 1, 1, False, next(ids)))["won_cents"] == 0
    clock.advance(24 * 3600)
    result(hall.vb.desk_credit_in(CASHIER, "vb-1", 1, CREDIT, "desk1"))
    for _ in range(PLAYS):
        assert result(hall.vb.play("vb-1", 1, 1, False, next(ids)))["won_cents"] == 2 * CREDIT

    records = list(hall.journal.records())
    first, second = (hall_day(records, day, "Test hall", DEFAULT_TIMEZONE) for day in ("2026-11-03", "2026-11-04"))
    assert [first.machines_revenue_cents(), second.machines_revenue_cents()] == [150_000, -150_000]
    by_the_day = sum(max(day.machines_revenue_cents(), 0) * 10 // 100 for day in (first, second))
    assert by_the_day == 15_000  # what the tax per day made of it
    assert first.year_to_date is not None and second.year_to_date is not None
    assert (first.year_to_date.machines_tax_cents, second.year_to_date.machines_tax_cents) == (15_000, 0)
    assert _fields(first, "tax")["machines_share_cents"] == Cents(15_000)
    tax = _fields(second, "tax")
    assert (tax["machines_revenue_cents"], tax["machines_share_cents"], tax["machines_revenue_to_date_cents"],
            tax["machines_tax_to_date_cents"]) == (Cents(-150_000), Cents(-15_000), Cents(0), Cents(0))

    year, laid_out = hall_yearly_report(records, 2026, "2026-12-31", "Test hall", DEFAULT_TIMEZONE)
    assert (year.machines_revenue_cents, year.machines_tax_cents, year.tax_cents) == (0, 0, 0)
    totals = {t.key: t for t in laid_out.tables}["totals"]
    assert dict(zip((c.key for c in totals.columns), totals.rows[0]))["machines_tax_cents"] == Cents(0)
    assert [d.machines_share_cents for d in year.days()] == [15_000, -15_000]


@pytest.mark.req("R98.2")
def test_R98_2_the_bingo_tax_is_ten_percent_of_the_years_stakes_rounded_once() -> None:
    """Three games staking 15.05 EUR each show 1.50 EUR of tax each; the year owes 4.51 EUR, not 4.50, and
    the days' shares add up to it exactly."""
    games = [("2026-03-01", 1_505), ("2026-03-01", 1_505), ("2026-07-14", 1_505)]
    assert sum(tax_cents(stakes) for _, stakes in games) == 450
    year = YearTax.of(2026, "2026-12-31", [TaxDay(day, bingo_stakes_cents=stakes) for day, stakes in games])
    assert (year.bingo_stakes_cents, year.bingo_tax_cents) == (4_515, 451)
    assert [(d.day, d.bingo_share_cents) for d in year.days()] == [("2026-03-01", 301), ("2026-07-14", 150)]
    assert sum(d.bingo_share_cents for d in year.days()) == year.bingo_tax_cents


@pytest.mark.req("R98.2")
def test_R98_2_the_fiscal_year_is_the_calendar_year() -> None:
    """A day of another year, or after the day asked for, is not in the year to date."""
    days = [TaxDay("2025-12-31", 1_000, 5_000), TaxDay("2026-01-01", 2_000, -8_000), TaxDay("2026-06-30", 3_000, 9_000),
            TaxDay("2027-01-01", 4_000, 1_000)]
    to_june = YearTax.of(2026, "2026-06-29", days)
    assert (to_june.bingo_stakes_cents, to_june.machines_revenue_cents, to_june.machines_tax_cents) == (2_000, -8_000, 0)
    whole = YearTax.of(2026, "2026-12-31", days)
    assert (whole.bingo_tax_cents, whole.machines_tax_cents, whole.tax_cents) == (500, 100, 600)

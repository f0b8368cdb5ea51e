"""The machines' day in the hall's daily report (R3.5.d, R98): plays, stakes, prizes, jackpots and
credit per machine over the calendar day, and the machines' tax to date, 10% of the year's gross gaming
revenue. The figures are checked against the meters the play records carry and against the ledger."""

from __future__ import annotations

import datetime

import pytest
from twisted.internet.task import Clock

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.hall.videobingo import JackpotRule, MeterCounts, takings_account
from hall_server.reports.daily import hall_day
from protocol.chain import Record
from protocol.settlement.tax import machines_tax_cents
from server_kit.journal.sql import Journal
from server_kit.reports.daily import daily_report
from server_kit.reports.document import Cents
from tests.hall.conftest import result
from tests.videobingo.halls import CHIEF, Hall, build_hall, config, insert_cash, machine, requests

DAY = 86_400


def _day_of(clock: Clock) -> str:
    return datetime.datetime.fromtimestamp(clock.seconds(), DEFAULT_TIMEZONE).date().isoformat()


def _meters_by_end_of(records: list[Record], machine_id: str, before_ms: int) -> MeterCounts:
    last = [r for r in records if r.type.startswith("vb_credit") or r.type == "vb_play"]
    last = [r for r in last if r.payload["machine"] == machine_id and r.time_ms < before_ms]
    return MeterCounts(**last[-1].payload["meters"]) if last else MeterCounts()


def _play_a_while(hall: Hall, clock: Clock, plays: int, ids: object) -> None:
    for _ in range(plays):
        for m in ("vb-1", "vb-2"):
            result(hall.vb.play(m, 1, 4, False, next(ids)))  # type: ignore[call-overload]
        clock.advance(30)


@pytest.mark.req("R98")
def test_each_machines_day_and_the_machines_tax_are_in_the_daily_report(journal: Journal, clock: Clock) -> None:
    machines = (machine("vb-1", jackpot=JackpotRule(200, "corners", 12), linked=True), machine("vb-2", linked=True))
    hall = build_hall(journal, clock, config(*machines, superjackpot=JackpotRule(100, "top line", 14)))
    # Start the day at 09:00 in the hall's zone, so that every play stays in it.
    now = datetime.datetime.fromtimestamp(clock.seconds(), DEFAULT_TIMEZONE)
    nine = datetime.datetime.combine(now.date() + datetime.timedelta(days=1), datetime.time(9), DEFAULT_TIMEZONE)
    clock.advance(nine.timestamp() - clock.seconds())
    first_day = _day_of(clock)
    ids = requests()
    for m in ("vb-1", "vb-2"):
        result(hall.vb.enrol_station(CHIEF, m, 1))
        insert_cash(hall, m, 1, 50_000, next(ids))
    takings = {m: hall.vb.ledger.balance(takings_account(m)) for m in ("vb-1", "vb-2")}
    _play_a_while(hall, clock, 120, ids)
    result(hall.vb.credit_out("vb-2", 1, "cash", next(ids)))
    earned = {m: hall.vb.ledger.balance(takings_account(m)) - takings[m] for m in ("vb-1", "vb-2")}
    clock.advance(DAY)
    second_day = _day_of(clock)
    insert_cash(hall, "vb-1", 1, 1_000, next(ids))
    for _ in range(5):
        result(hall.vb.play("vb-1", 1, 2, False, next(ids)))

    records = list(journal.records())
    end = int(datetime.datetime.combine(datetime.date.fromisoformat(second_day), datetime.time(),
                                        DEFAULT_TIMEZONE).timestamp() * 1000)
    report = hall_day(records, first_day, "Test hall", DEFAULT_TIMEZONE)
    assert [m.machine for m in report.machines] == ["vb-1", "vb-2"]
    for line in report.machines:
        meters = _meters_by_end_of(records, line.machine, end)  # the day's first: every meter started at 0
        assert (line.plays, line.stakes_cents, line.prizes_cents) == (meters.plays, meters.stakes, meters.prizes)
        assert line.jackpot_contributions_cents == meters.jackpot_contributions
        assert line.jackpot_payouts_cents == meters.jackpot_payouts
        assert (line.credits_in_cents, line.credits_out_cents) == (meters.credits_in, meters.credits_out)
        assert line.gross_revenue_cents == earned[line.machine]  # what the machine's takings account kept
    assert report.machines[1].credits_out_cents > 0 and report.machines[0].jackpot_contributions_cents > 0
    revenue = sum(earned.values())
    assert report.machines_revenue_cents() == revenue
    # The first day the machines played this year: the year to date is this day.
    assert report.year_to_date is not None
    assert report.year_to_date.machines_revenue_cents == revenue
    assert report.year_to_date.machines_tax_cents == (revenue * 10 // 100 if revenue > 0 else 0)
    assert report.last_seq >= max(r.seq for r in records if r.time_ms < end and r.type == "vb_play")

    next_day = hall_day(records, second_day, "Test hall", DEFAULT_TIMEZONE)
    (only,) = next_day.machines
    assert (only.machine, only.plays, only.stakes_cents, only.credits_in_cents) == ("vb-1", 5, 5 * 2 * 20, 1_000)

    tables = {t.key: t for t in daily_report(report).tables}
    assert [row[0] for row in tables["machines"].rows] == ["vb-1", "vb-2"]
    totals = dict(zip((c.key for c in tables["totals"].columns), tables["totals"].rows[0]))
    assert totals["machines_revenue_cents"] == Cents(revenue)
    tax = dict(zip((c.key for c in tables["tax"].columns), tables["tax"].rows[0]))
    assert tax["machines_revenue_cents"] == Cents(revenue)
    assert tax["machines_tax_to_date_cents"] == tax["machines_share_cents"] == Cents(
        report.year_to_date.machines_tax_cents)
    empty = hall_day(records, "2026-01-01", "Test hall", DEFAULT_TIMEZONE)
    assert empty.machines == () and empty.year_to_date is not None and empty.year_to_date.tax_cents == 0


@pytest.mark.req("R98")
@pytest.mark.parametrize(("revenue", "tax"), [(0, 0), (9, 0), (10, 1), (123_456, 12_345), (-5_000, 0)])
def test_the_machines_tax_is_ten_percent_of_the_years_revenue_rounded_down_and_none_on_a_loss(
        revenue: int, tax: int) -> None:
    assert machines_tax_cents(revenue) == tax

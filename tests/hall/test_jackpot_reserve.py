"""The jackpot's reserve boost (R91.7) and its daily bank deposit (R91.11)."""

from __future__ import annotations

import pytest

from hall_server.hall.games import GameModuleError
from server_kit.core import NotAllowed
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_games import (
    CASHIER,
    POT_RULES,
    SELLER,
    Hall,
    finish,
    opened_hall,
    sell,
    unchanged,
)
from tests.hall.test_session import ADMIN, ALL_BALLS, CHIEF, verify_passed

WITNESS = ["Marta Soler (public)"]


def close_session(hall: Hall) -> None:
    result(hall.session.count_balls(CHIEF, "closing", ALL_BALLS, WITNESS))
    result(hall.session.sign_closing(ADMIN))
    result(hall.session.sign_closing(CHIEF))


def open_next_session(hall: Hall, date: str) -> None:
    verify_passed(hall.session, date)
    result(hall.session.count_balls(CHIEF, "opening", ALL_BALLS, WITNESS))
    result(hall.session.sign_opening(ADMIN))
    result(hall.session.sign_opening(CHIEF))


def hall_with_a_reserve(journal: Journal, clock) -> Hall:  # type: ignore[no-untyped-def]
    """Session 1 fills the accumulated jackpot to its cap, so a game's 10% goes to the reserve;
    session 2 opens with that reserve."""
    hall = opened_hall(journal, clock, rules=POT_RULES)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 1_500_000))
    result(hall.cashier.deposit_jackpot(CASHIER, "operator", 1_500_000, "transfer-1"))
    result(hall.games.announce_sale(SELLER, 9))  # 2.00 EUR a card
    sell(hall, 9, 1, 50)  # 100.00 EUR: its 10.00 EUR jackpot share all goes to the reserve
    unchanged(hall, lambda: hall.games.announce_reserve_boost(CHIEF, 1, 0), GameModuleError,
              r"the session may add at most 0.00 EUR from the reserve \(30% of the 0.00 EUR it held at the "
              r"session's start\).*\(R91.7\)")
    result(hall.games.announce_last_game(CHIEF))  # it takes the superbingo fund (R89)
    result(hall.games.close_sale(CHIEF))
    finish(hall)
    assert hall.balance("pot:jackpot_reserve") == 1_000
    deposit_the_jackpot(hall)
    close_session(hall)
    open_next_session(hall, "2026-12-02")
    return hall


def deposit_the_jackpot(hall: Hall) -> None:
    """The cashier takes what the jackpot's bank account lacks from desk1 to the bank (R91.11)."""
    due = hall.cashier.jackpot_deposit_due()
    if due:
        result(hall.cashier.deposit_jackpot(CASHIER, "desk1", due, f"slip-{hall.core.seq}"))


@pytest.mark.req("R91.7")
def test_the_room_chief_boosts_the_prizes_from_the_reserve_within_30_percent_of_it(journal: Journal, clock) -> None:
    """R91.7: announced to the players while the sale is open, at most 30% of the reserve at the
    session's start over the whole session; the boost moves from the reserve into the game at the
    close and is paid with the line and bingo."""
    hall = hall_with_a_reserve(journal, clock)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    game_id = opened.payload["game_id"]
    sell(hall, 7, 1, 20)
    unchanged(hall, lambda: hall.games.announce_reserve_boost(SELLER, 100, 0), NotAllowed, "may not")
    unchanged(hall, lambda: hall.games.announce_reserve_boost(CHIEF, -1, 0), GameModuleError, "never less")
    unchanged(hall, lambda: hall.games.announce_reserve_boost(CHIEF, 200, 101), GameModuleError,
              r"a boost of 3.01 EUR is refused: the session may add at most 3.00 EUR from the reserve "
              r"\(30% of the 10.00 EUR it held at the session's start\), its earlier games took 0.00 EUR, "
              r"and the reserve holds 10.00 EUR \(R91.7\)")
    (told,) = result(hall.games.announce_reserve_boost(CHIEF, 200, 100))
    assert told.type == "reserve_boost_announced"
    assert (told.payload["allowance_cents"], told.payload["boosted_before_cents"], told.payload["reserve_cents"]) == (
        300, 0, 1_000)
    result(hall.games.announce_reserve_boost(CHIEF, 100, 150))  # the later announcement replaces the earlier
    assert hall.reopened().games.snapshot() == hall.games.snapshot()
    (closed, *postings) = result(hall.games.close_sale(CHIEF))
    # 20.00 EUR sold: line 15% = 3.00 + 1.00, bingo 41% = 8.20 + 1.50; the 2.00 EUR jackpot share to the reserve.
    assert (closed.payload["line_cents"], closed.payload["bingo_cents"]) == (300 + 100, 820 + 150)
    assert (closed.payload["boost_line_cents"], closed.payload["boost_bingo_cents"]) == (100, 150)
    (boost,) = [p for p in postings if p.payload["reason"] == "jackpot:reserve boost"]
    assert boost.payload["debits"] == [["pot:jackpot_reserve", 250]]
    assert boost.payload["credits"] == [[f"stakes:{game_id}", 250]]
    assert hall.balance("pot:jackpot_reserve") == 1_000 + 200 - 250
    unchanged(hall, lambda: hall.games.announce_reserve_boost(CHIEF, 1, 0), GameModuleError, "while its sale is open")
    finish(hall)
    assert hall.balance(f"stakes:{game_id}") == 0, "the boost was paid with the prizes"
    # The session's second game may take only what is left of its 3.00 EUR.
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 21, 30)
    unchanged(hall, lambda: hall.games.announce_reserve_boost(CHIEF, 51, 0), GameModuleError,
              "its earlier games took 2.50 EUR")
    result(hall.games.announce_reserve_boost(CHIEF, 50, 0))
    result(hall.games.close_sale(CHIEF))
    assert hall.ledger.ledger.total() == 0


@pytest.mark.req("R91.7", "R86.2")
def test_a_refunded_game_gives_its_boost_back_to_the_reserve_and_to_the_sessions_allowance(
    journal: Journal, clock
) -> None:
    """R86.2, R91.7: a game deemed not played gives back its pot shares and its boost."""
    hall = hall_with_a_reserve(journal, clock)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    result(hall.games.announce_reserve_boost(CHIEF, 300, 0))
    result(hall.games.close_sale(CHIEF))
    hall.draw()
    result(hall.games.suspend_game(CHIEF, "blower pump stopped"))
    records = result(hall.games.suspend_game_for_good(CHIEF, "no spare pump"))
    assert "jackpot:reserve boost returned" in [r.payload.get("reason") for r in records]
    assert hall.balance(f"stakes:{opened.payload['game_id']}") == 0
    assert hall.balance("pot:jackpot_reserve") == 1_000
    result(hall.games.collect_cards(CHIEF))
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 21, 30)
    (told,) = result(hall.games.announce_reserve_boost(CHIEF, 300, 0))
    assert told.payload["boosted_before_cents"] == 0


@pytest.mark.req("R91.11")
def test_the_session_closes_only_once_the_days_jackpot_money_is_in_its_bank_account(journal: Journal, clock) -> None:
    """R91.11: the system says what to deposit (the jackpot's funds its bank account lacks), records
    the deposit from a desk with its bank slip, and refuses the closing while any is missing."""
    from hall_server.hall.cashier import CashierError
    from hall_server.hall.session import SessionError

    hall = opened_hall(journal, clock, rules=POT_RULES)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)  # 20.00 EUR: 2.00 EUR to the jackpot (1.40 accumulated, 0.60 reserve)
    result(hall.games.announce_last_game(CHIEF))  # it takes the superbingo fund (R89)
    result(hall.games.close_sale(CHIEF))
    finish(hall)
    assert hall.cashier.jackpot_deposit_due() == 200
    result(hall.session.count_balls(CHIEF, "closing", ALL_BALLS, WITNESS))
    unchanged(hall, lambda: hall.session.sign_closing(ADMIN), SessionError,
              r"the jackpot's money is deposited every day into its bank account \(R91.11\): 2.00 EUR of its "
              r"2.00 EUR is not there yet; the cashier records today's deposit from a desk \(deposit_jackpot\)")
    unchanged(hall, lambda: hall.cashier.deposit_jackpot(CASHIER, "desk1", 201, "slip-1"), CashierError,
              r"lacks 2.00 EUR of the jackpot's funds; a deposit of 2.01 EUR is more than is due \(R91.11\)")
    unchanged(hall, lambda: hall.cashier.deposit_jackpot(CASHIER, "desk1", 150, "  "), CashierError,
              "give the bank slip's reference")
    unchanged(hall, lambda: hall.cashier.deposit_jackpot(CASHIER, "safe", 150, "slip-1"), CashierError,
              "safe is not open")
    unchanged(hall, lambda: hall.cashier.deposit_jackpot(SELLER, "desk1", 150, "slip-1"), NotAllowed, "may not")
    desk = hall.balance("cash:desk1")
    (deposited, posting) = result(hall.cashier.deposit_jackpot(CASHIER, "desk1", 150, "slip-1"))
    assert deposited.type == "jackpot_deposited"
    assert {k: deposited.payload[k] for k in ("counterpart", "amount", "reference", "date", "due_before", "funds",
                                               "bank_after")} == {
        "counterpart": "desk1", "amount": 150, "reference": "slip-1", "date": "2026-05-28", "due_before": 200,
        "funds": 200, "bank_after": 150,
    }
    assert posting.payload["debits"] == [["bank:jackpot", 150]] and posting.payload["credits"] == [["cash:desk1", 150]]
    assert hall.balance("cash:desk1") == desk - 150 and hall.cashier.jackpot_deposit_due() == 50
    unchanged(hall, lambda: hall.session.sign_closing(ADMIN), SessionError, "0.50 EUR of its 2.00 EUR")
    result(hall.cashier.deposit_jackpot(CASHIER, "desk1", 50, "slip-2"))
    result(hall.session.sign_closing(ADMIN))
    result(hall.session.sign_closing(CHIEF))
    assert hall.session.state.current is None
    assert hall.reopened().ledger.ledger.balances() == hall.ledger.ledger.balances()


@pytest.mark.req("R91.11", "R91")
def test_a_jackpot_paid_in_cash_is_taken_back_from_its_bank_account(journal: Journal, clock) -> None:
    """R91.11: the jackpot's prizes are paid from its account: after a desk paid one in cash, what the
    account holds beyond the funds goes back to that desk, and no more."""
    from hall_server.hall.cashier import CashierError
    from tests.hall.test_games import ScriptedBalls, card_first, fund_drawer

    balls = ScriptedBalls()
    card_first(balls, "7-1")  # card 7-1 completes its card on ball 15: the jackpot within 40 balls
    hall = opened_hall(journal, clock, rules=POT_RULES, balls=balls)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 10_000))
    fund_drawer(hall, "safe", 20_000)
    unchanged(hall, lambda: hall.cashier.withdraw_jackpot_surplus(CASHIER, "safe", 1, "w-0"), CashierError,
              "holds 0.00 EUR beyond the jackpot's funds")
    result(hall.cashier.deposit_jackpot(CASHIER, "safe", 10_000, "slip-1"))
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    result(hall.games.announce_pots(CHIEF, jackpot_threshold=40))
    result(hall.games.close_sale(CHIEF))
    paid = finish(hall, desk="safe")
    (jackpot,) = [r for r in paid if r.payload["prize"] == "jackpot"]
    assert jackpot.payload["amount_cents"] == 10_140  # the contribution and the game's 1.40 EUR
    funds = hall.balance("pot:jackpot_accumulated") + hall.balance("pot:jackpot_reserve")
    surplus = 10_000 - funds
    assert surplus > 0 and hall.cashier.jackpot_bank_surplus() == surplus and hall.cashier.jackpot_deposit_due() == 0
    unchanged(hall, lambda: hall.cashier.withdraw_jackpot_surplus(CASHIER, "safe", surplus + 1, "w-1"), CashierError,
              "only that may be taken back")
    desk = hall.balance("cash:safe")
    (withdrawn, _) = result(hall.cashier.withdraw_jackpot_surplus(CASHIER, "safe", surplus, "w-1"))
    assert withdrawn.type == "jackpot_withdrawn" and withdrawn.payload["bank_after"] == funds
    assert hall.balance("cash:safe") == desk + surplus and hall.balance("bank:jackpot") == funds
    assert hall.ledger.ledger.total() == 0

"""Cash between drawers and where payments come from (R92.5d, R78, R86.2).

Sellers' takings are handed in to a cash desk, a desk's float is topped up from the
operator's safe, cash moves from desk to desk: each a journaled transfer and its
posting.  Prizes and cash-outs are paid only at a cash desk that is open.
"""

from __future__ import annotations

import pytest

from hall_server.hall.cashier import CashierError
from hall_server.hall.games import GameModuleError
from protocol.ledger import Overdraft
from server_kit.core import NotAllowed
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_games import (
    CASHIER,
    SELLER,
    SELLER_2,
    TABLE,
    Hall,
    fund_drawer,
    opened_hall,
    pay,
    sell,
    unchanged,
)
from tests.hall.test_session import CHIEF


def sold_game(hall: Hall) -> str:
    """A game of series 7 with 15 cards sold by ana and 5 by ben, its sale closed."""
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 15)
    sell(hall, 7, 16, 20, SELLER_2)
    result(hall.games.close_sale(CHIEF))
    return opened.payload["game_id"]


@pytest.mark.req("R92.5", "R78")
def test_a_prize_is_paid_only_at_an_open_cash_desk_never_from_a_sellers_drawer(journal: Journal, clock) -> None:
    """R78, R92.5d: Pay Prizes names a cash desk that is open; a seller's drawer, an unknown
    name or a reconciled desk is refused and nothing is written."""
    hall = opened_hall(journal, clock)
    sold_game(hall)
    hall.draw_until("line")
    hall.draw()
    assert hall.balance("cash:ana") == 1500
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "ana"), CashierError,
              r"'ana' is not a cash desk \(the desks are desk1, safe\); payments are made at an open cash desk, "
              "never from a seller's drawer")
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "nobody"), CashierError, "'nobody' is not a cash desk")
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "safe"), CashierError,
              "cash desk safe is not open; open it with its float first")
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "desk1"), Overdraft, "cash:desk1 holds 0.00 EUR")
    paid = pay(hall)  # the sellers hand in, then desk1 pays
    assert paid[0].type == "prize_paid" and paid[0].payload["desk"] == "cash:desk1"
    result(hall.cashier.reconcile_desk(CASHIER, "desk1", hall.balance("cash:desk1")))
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "desk1"), CashierError, "cash desk desk1 is not open")


@pytest.mark.req("R92.5", "R86.1-2")
def test_a_seller_hands_the_takings_in_to_an_open_desk_once_the_game_can_no_longer_be_refunded(
    journal: Journal, clock
) -> None:
    """R92.5d: the hand-in is a ``cash_moved`` record and its posting ``cash:<seller>`` ->
    ``cash:<desk>``; the stakes of a game that a refund (R86.2) would pay back stay in the drawer."""
    hall = opened_hall(journal, clock)
    game_id = sold_game(hall)
    unchanged(hall, lambda: hall.cashier.hand_in_takings(CASHIER, "ana", "desk1", 100), CashierError,
              rf"seller ana's drawer holds 15.00 EUR; 15.00 EUR of it must stay there \(the stakes of game {game_id}, "
              "which a refund would pay back from this drawer\\): it cannot give 1.00 EUR")
    hall.draw_until("line")  # a prize is won: the game is finished by hand if it fails, never refunded
    unchanged(hall, lambda: hall.cashier.hand_in_takings(CASHIER, "ana", "desk1", 1501), CashierError,
              "seller ana's drawer holds 15.00 EUR: it cannot give 15.01 EUR")
    unchanged(hall, lambda: hall.cashier.hand_in_takings(CASHIER, "ana", "safe", 100), CashierError,
              "cash desk safe is not open")
    unchanged(hall, lambda: hall.cashier.hand_in_takings(CASHIER, "desk1", "desk1", 100), CashierError,
              "desk1 is a cash desk, not a seller's drawer; move cash between desks with move_cash")
    unchanged(hall, lambda: hall.cashier.hand_in_takings(CASHIER, "ana", "desk1", 0), CashierError,
              "must be more than zero")
    unchanged(hall, lambda: hall.cashier.hand_in_takings(SELLER, "ana", "desk1", 100), NotAllowed, "may not")
    moved, posting = result(hall.cashier.hand_in_takings(CASHIER, "ana", "desk1", 1500))
    assert moved.type == "cash_moved" and moved.payload["kind"] == "hand_in"
    assert (moved.payload["source"], moved.payload["destination"], moved.payload["amount"]) == (
        "cash:ana", "cash:desk1", 1500)
    assert posting.payload["debits"] == [["cash:desk1", 1500]] and posting.payload["credits"] == [["cash:ana", 1500]]
    assert hall.balance("cash:ana") == 0 and hall.balance("cash:desk1") == 1500
    assert hall.cashier.drawers() == {
        "desk1": {"desk": True, "open": True, "cents": 1500},
        "safe": {"desk": True, "open": False, "cents": 0},
        "ben": {"desk": False, "open": None, "cents": 500},
    }
    assert result(hall.cashier.cash_drawers(CASHIER)) == {
        "desk desk1": "15.00 EUR (open)", "desk safe": "0.00 EUR (closed)", "seller ben": "5.00 EUR",
        "jackpot bank account": "0.00 EUR", "jackpot deposit due": "0.00 EUR",
    }
    again = hall.reopened()
    assert again.ledger.ledger.balances() == hall.ledger.ledger.balances()
    assert hall.ledger.ledger.total() == 0


@pytest.mark.req("R86.1-2", "R92.5")
def test_a_game_refunded_after_a_refused_hand_in_pays_every_stake_back_from_its_drawer(
    journal: Journal, clock
) -> None:
    """R86.2: the hold keeps a refund possible; the refund pays each card back to its seller's drawer."""
    hall = opened_hall(journal, clock)
    game_id = sold_game(hall)
    hall.draw()
    with pytest.raises(CashierError, match="must stay there"):
        result(hall.cashier.hand_in_takings(CASHIER, "ben", "desk1", 500))
    result(hall.games.suspend_game(CHIEF, "blower pump stopped"))
    result(hall.games.suspend_game_for_good(CHIEF, "no spare pump"))
    assert hall.balance("cash:ana") == hall.balance("cash:ben") == hall.balance(f"stakes:{game_id}") == 0


@pytest.mark.req("R92.5")
def test_a_desks_float_is_topped_up_from_the_safe_and_cash_moves_between_open_desks(journal: Journal, clock) -> None:
    """R92.5d: ``float_top_up`` (``house`` -> desk) and ``desk_to_desk`` transfers, each refused
    with its reason when a desk is closed or the source does not hold the amount."""
    hall = opened_hall(journal, clock)
    unchanged(hall, lambda: hall.cashier.top_up_float(CASHIER, "safe", 10_000), CashierError, "safe is not open")
    (moved, posting) = result(hall.cashier.top_up_float(CASHIER, "desk1", 10_000))
    assert (moved.payload["kind"], moved.payload["source"], moved.payload["destination"]) == (
        "float_top_up", "house", "cash:desk1")
    assert posting.payload["reason"] == "float of desk desk1 topped up from the safe"
    assert hall.balance("cash:desk1") == 10_000 and hall.balance("house") == 10_000
    unchanged(hall, lambda: hall.cashier.move_cash(CASHIER, "desk1", "safe", 100), CashierError, "safe is not open")
    fund_drawer(hall, "safe", 2_000)  # opened with its float
    unchanged(hall, lambda: hall.cashier.move_cash(CASHIER, "desk1", "desk1", 100), CashierError,
              "between two different desks")
    unchanged(hall, lambda: hall.cashier.move_cash(CASHIER, "safe", "desk1", 2_001), CashierError,
              "desk safe holds 20.00 EUR: it cannot give 20.01 EUR")
    (moved, _) = result(hall.cashier.move_cash(CASHIER, "desk1", "safe", 2_500))
    assert (moved.payload["kind"], moved.payload["amount"]) == ("desk_to_desk", 2_500)
    assert hall.balance("cash:desk1") == 7_500 and hall.balance("cash:safe") == 4_500
    result(hall.cashier.reconcile_desk(CASHIER, "safe", 4_500))
    unchanged(hall, lambda: hall.cashier.move_cash(CASHIER, "safe", "desk1", 100), CashierError, "safe is not open")
    assert hall.ledger.ledger.total() == 0


def test_a_hall_without_cash_desks_pays_no_prize_in_cash(journal: Journal, clock) -> None:
    """A games module built without the cashier's desks refuses cash payments with a reason."""
    from hall_server.hall.games import GamesModule
    from hall_server.hall.ledger import LedgerModule
    from hall_server.hall.session import SessionModule
    from server_kit.core import CommandCore, run_inline
    from tests.hall.test_games import CATALOG, RULES, ScriptedBalls
    from tests.hall.test_session import open_session

    core = CommandCore(journal, clock, run_inline)
    session = SessionModule(core)
    games = GamesModule(core, session, LedgerModule(core), CATALOG, ScriptedBalls(), RULES)
    open_session(session)
    result(games.announce_sale(SELLER, 7))
    result(games.sell_cards(SELLER, 7, 1, 20))
    result(games.close_sale(CHIEF))
    while "line" not in games.current.machine.won:
        (drawn, *_) = result(games.draw_ball(SELLER))
        for label in drawn.payload["completed_line"]:
            series, number = label.split("-")
            result(games.verify_claim(TABLE, int(series), int(number)))
    result(games.close_prize(SELLER))
    with pytest.raises(GameModuleError, match="this hall has no cash desk"):
        result(games.pay_prizes(CASHIER, "ana"))

"""The desks' look-ups: a claimed card with its marks, an account by its number (R85.6, R87, R93.7)."""

from __future__ import annotations

from typing import Any

import pytest

from hall_server.hall.cashier import CashierModule
from hall_server.hall.lookups import LookupModule, series_on_sale
from hall_server.hall.roles import Role
from hall_server.statements import format_account_number
from protocol.errors import DomainError
from server_kit.core import Actor, NotAllowed
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_games import CHIEF, SELLER, TABLE, cells_of, opened_hall, sell

CASHIER = Actor("eva", Role.CASHIER)
DOOR = Actor("lluis", Role.ADMISSION)
ADMIN = Actor("ines", Role.ADMINISTRATOR)


def desks(journal: Journal, clock: Any) -> tuple[Any, CashierModule, LookupModule]:
    hall = opened_hall(journal, clock)
    admission, cashier = hall.admission, hall.cashier
    lookups = LookupModule(hall.core, hall.games, cashier)
    result(admission.import_banned_list(ADMIN, "document,name,until\nB1000001,Joan Banned,\n", "craj.csv"))
    return hall, cashier, lookups


@pytest.mark.req("R85.6", "R85.11", "R87.a")
def test_the_claimed_card_comes_with_the_balls_drawn_and_the_ball_that_completed_each_pattern(
    journal: Journal, clock: Any
) -> None:
    hall, _, lookups = desks(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    with pytest.raises(DomainError, match="card 7-3 was not sold in game"):
        result(lookups.show_card(TABLE, 7, 3))  # the sale is open: no card is in play yet
    result(hall.games.close_sale(CHIEF))
    line = hall.draw_until("line")
    winner = line.payload["completed_line"][0]
    series, number = (int(x) for x in winner.split("-"))
    before = len(hall.records())
    shown = result(lookups.show_card(TABLE, series, number))
    assert len(hall.records()) == before  # a look-up journals nothing
    assert shown["cells"] == [int(n) for n in cells_of(winner)]
    drawn = shown["drawn"]
    assert drawn == [r.payload["ball"] for r in hall.records() if r.type == "ball_drawn"]
    assert shown["completed"]["line"] == {"ball_count": len(drawn), "ball": drawn[-1], "won": True}
    assert shown["completed"]["bingo"] is None
    with pytest.raises(DomainError, match="card 7-45 was not sold"):
        result(lookups.show_card(TABLE, 7, 45))
    with pytest.raises(NotAllowed):
        result(lookups.show_card(SELLER, series, number))


@pytest.mark.req("R92.5", "R93.7")
def test_an_account_is_found_by_the_number_as_printed_with_its_balance_and_latest_movements(
    journal: Journal, clock: Any
) -> None:
    hall, cashier, lookups = desks(journal, clock)
    (admitted,) = result(cashier.admission.admit_visitor(DOOR, "Anna Vidal", "12345678A", "1980-01-01"))
    (opened,) = result(cashier.open_account(CASHIER, admitted.payload["number"], "ticket", "4821"))
    number = opened.payload["account"]
    result(cashier.load_credit(CASHIER, number, 2_000, "desk1"))
    result(cashier.cash_out(CASHIER, number, 550, "desk1", "cash", ""))
    found = result(lookups.find_account(CASHIER, format_account_number(number)))
    assert found["account"] == number and found["balance_cents"] == 1_450 and found["visitor"] == 1
    assert [(m["amount_cents"], m["balance_cents"]) for m in found["movements"]] == [(2_000, 2_000), (-550, 1_450)]
    # Each reason with the catalog's message it is said with in the console's language, as the statement prints it.
    assert [m["said"] for m in found["movements"]] == [
        {"message": "credit loaded in cash at desk {desk}", "parts": {"desk": "desk1"}},
        {"message": "cashed out in cash at desk {desk}", "parts": {"desk": "desk1"}},
    ]
    assert "pin_hash" not in found
    assert result(lookups.find_account(ADMIN, number))["balance_cents"] == 1_450
    with pytest.raises(DomainError, match="mistyped"):
        result(lookups.find_account(CASHIER, number[:-1] + str((int(number[-1]) + 1) % 10)))
    with pytest.raises(NotAllowed):
        result(lookups.find_account(SELLER, number))
    assert [(s["series"], s["last_sold"]) for s in series_on_sale(hall.games)] == [(7, 0), (8, 0), (9, 0), (11, 0)]

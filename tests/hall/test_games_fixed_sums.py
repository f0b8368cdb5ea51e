"""Prizes set as a fixed sum the percentage never lowers (R88.3), to the cent."""

import pytest

from protocol.settlement import PayoutFloorError, PrizeError, PrizeRules
from tests.hall.conftest import result
from tests.hall.test_games import CHIEF, SELLER, Hall, fund_drawer, opened_hall, pay, sell

FIXED = PrizeRules(line_bp=1500, bingo_bp=5500, line_minimum_cents=1000, bingo_minimum_cents=2500)


@pytest.mark.req("R88.3", "R88.1")
def test_the_rules_take_the_larger_of_the_percentage_and_the_fixed_sum() -> None:
    assert (FIXED.line_amount(2000), FIXED.bingo_amount(2000)) == (1000, 2500)
    assert FIXED.house_top_up(2000) == (1000 - 300) + (2500 - 1100)
    assert (FIXED.line_amount(100_000), FIXED.bingo_amount(100_000)) == (15_000, 55_000)
    assert FIXED.house_top_up(100_000) == 0
    with pytest.raises(PayoutFloorError, match="at least 7000"):
        PrizeRules(line_bp=0, bingo_bp=0, line_minimum_cents=50_000, bingo_minimum_cents=90_000).check()
    with pytest.raises(PrizeError, match="line minimum cents cannot be negative"):
        PrizeRules(line_bp=1500, bingo_bp=5500, line_minimum_cents=-1).check()


@pytest.mark.req("R88.3")
def test_a_small_game_pays_the_fixed_sums_and_the_house_makes_up_the_difference(journal, clock) -> None:
    hall: Hall = opened_hall(journal, clock, rules=FIXED)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    game_id = opened.payload["game_id"]
    sell(hall, 7, 1, 20)  # 20.00 EUR collected: 15% is 3.00, 55% is 11.00
    closed, top_up = result(hall.games.close_sale(CHIEF))[:2]
    assert (closed.payload["line_cents"], closed.payload["bingo_cents"]) == (1000, 2500)
    assert top_up.type == "posting" and top_up.payload["reason"] == "prizes:fixed sum top-up"
    assert hall.balance(f"stakes:{game_id}") == 2000 + 2100
    fund_drawer(hall, "desk1", 5000)
    hall.draw_until("line")
    hall.draw()
    pay(hall)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    pay(hall)
    assert hall.balance(f"stakes:{game_id}") == 0, "every cent of the collection and the top-up has left"
    paid = 1000 - hall.balance("carry:line") + 2500 - hall.balance("carry:bingo")
    assert hall.balance("cash:desk1") == 2000 + 5000 - paid and hall.balance("cash:ana") == 0
    # The drawer float (5000), the top-up out (2100), the house share (600) in, the tax (200) out.
    assert hall.balance("house") == 5000 - 2100 + (2000 - 300 - 1100) - 200
    assert hall.balance("tax") == 200
    assert hall.ledger.ledger.total() == 0

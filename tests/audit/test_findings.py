"""What exporting and replaying hall days found in the hall itself, each in its smallest case.

Each test states the behaviour the regulation asks for, and stays as the regression
test of the fix.
"""

from __future__ import annotations

import pytest

from protocol.audit.hall_day import build_day
from hall_server.hall.session import SessionError
from protocol.game import State
from protocol.replay import parse_scenario, replay
from tests.audit.conftest import POT_RULES
from tests.audit.halls import ADMIN, CHIEF, AuditHall, GamePlan, Layouts, Purchase, play_game
from tests.hall.conftest import result
from tests.hall.test_session import ALL_BALLS

DAY = "2026-12-01"


@pytest.mark.req("R89", "R93.15")
def test_an_unwon_superbingo_fund_keeps_the_session_open_until_the_last_game_takes_it(hall: AuditHall) -> None:
    """Found by the replay: a session closed without announcing its last game kept an unwon
    superbingo fund that R89 gives to the bingo of the session's last game.  Now the
    closing is refused until a game announced as the last was played, and the day then
    replays to what the hall recorded."""
    hall.open_day(DAY)
    play_game(hall, GamePlan(paper=4, superbingo_limit=42, seed=1))  # not announced as the last game
    game = hall.games.state.games[-1]
    if game.superbingo_won is not False or hall.ledger.balance("pot:superbingo") == 0:
        pytest.fail("the case needs a superbingo in play, not won, with a fund")
    fund = hall.ledger.balance("pot:superbingo")
    hall.deposit_jackpot()  # the jackpot's money is not what keeps this session open (R91.11)
    result(hall.session.count_balls(CHIEF, "closing", ALL_BALLS, ["Marta Soler (public)"]))
    before = len(hall.records())
    with pytest.raises(SessionError, match=r"was not won, and its fund of .* goes to the bingo of the session's last game"):
        result(hall.session.sign_closing(ADMIN))
    assert len(hall.records()) == before
    play_game(hall, GamePlan(paper=4, seed=2, last=True))
    paid = [r.payload for r in hall.records() if r.type == "prize_paid" and r.payload["prize"] == "superbingo_last_game"]
    # The last game's bingo took the fund, with what the last game itself put in.
    assert sum(p["amount_cents"] for p in paid) >= fund
    hall.deposit_jackpot()
    result(hall.session.sign_closing(ADMIN))
    result(hall.session.sign_closing(CHIEF))
    made = build_day(hall.records(), DAY, POT_RULES, Layouts())
    assert replay(parse_scenario(made.scenario)) == made.result


@pytest.mark.req("R86.1-2", "R96.3")
def test_a_game_with_a_virtual_card_is_refunded_when_suspended_for_good(hall: AuditHall) -> None:
    hall.open_day(DAY)
    credit = hall.cashier.balance(hall.accounts[0])
    play_game(hall, GamePlan(paper=1, purchases=[Purchase(0, 0, 1, 100)], refund=True))
    game = hall.games.state.games[-1]
    assert game.machine.state is State.REFUNDED and game.collected
    assert hall.cashier.balance(hall.accounts[0]) == credit

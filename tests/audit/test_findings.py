"""What exporting and replaying hall days found in the hall itself, each in its smallest case.

Each test states the behaviour the regulation asks for and is expected to fail until
the hall is changed (``xfail``, strict: it turns red the day the hall is fixed, so the
marker is then removed).
"""

from __future__ import annotations

import pytest

from hall_server.audit import build_day
from protocol.game import State
from protocol.ledger import Overdraft
from protocol.replay import parse_scenario, replay
from tests.audit.conftest import POT_RULES
from tests.audit.halls import AuditHall, GamePlan, Layouts, Purchase, play_game

DAY = "2026-12-01"


@pytest.mark.xfail(
    raises=AssertionError,
    strict=True,
    reason="finding: the hall pays the unwon superbingo to the session's last game only when that game "
    "was announced as the last (R93.15); a session closed without the announcement keeps the fund, "
    "where R89 and the replay give it to the bingo of the session's last game",
)
def test_finding_an_unwon_superbingo_goes_to_the_last_game_of_a_session_closed_without_announcing_it(
    hall: AuditHall,
) -> None:
    hall.open_day(DAY)
    play_game(hall, GamePlan(paper=4, superbingo_limit=42, seed=1))  # not announced as the last game
    hall.close_day()
    made = build_day(hall.records(), DAY, POT_RULES, Layouts())
    (game,) = made.result["games"]
    if game["prizes"]["bingo"]["ball"] <= 42 or game["pots"]["superbingo"] == 0:
        pytest.fail("the case needs a superbingo in play, not won, with a fund")
    # The replay pays the fund out as superbingo_last_game; the hall kept it in the pot.
    assert replay(parse_scenario(made.scenario)) == made.result


@pytest.mark.xfail(
    raises=Overdraft,
    strict=True,
    reason="finding: suspend_game_for_good refunds through a ledger of the game's postings only, in which "
    "a virtual card's sale:virtual posting overdraws the player's account, so no game with a virtual "
    "card can be refunded (R86.2)",
)
def test_finding_a_game_with_a_virtual_card_is_refunded_when_suspended_for_good(hall: AuditHall) -> None:
    hall.open_day(DAY)
    credit = hall.cashier.balance(hall.accounts[0])
    play_game(hall, GamePlan(paper=1, purchases=[Purchase(0, 0, 1, 100)], refund=True))
    game = hall.games.state.games[-1]
    assert game.machine.state is State.REFUNDED and game.collected
    assert hall.cashier.balance(hall.accounts[0]) == credit

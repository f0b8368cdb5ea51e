"""The central game's events: versioned, typed, to and from the journal's dicts."""

from __future__ import annotations

import json

import pytest

from central_server.domain.errors import EventError
from central_server.domain.events import EVENT_TYPES, BallDrawn, GameClosed, PrizeWon, StakeReturned, event_from_dict
from central_server.domain.game import TerminalFailure
from tests.central.conftest import Played


@pytest.mark.req("R96.4")
def test_every_event_of_a_whole_game_survives_json_and_back() -> None:
    played = Played().open()
    for i in range(12):
        played.buy(f"r{i}", hall=("hall-1", "hall-2")[i % 2], terminal=f"t{i % 3}", count=4, pct=(100, 50, 25)[i % 3])
    played.record(played.game.declare_terminal_failed(TerminalFailure("f", "hall-1", "t0", "cracked", "chief"), from_hall="hall-1", now_ms=0))
    played.close().draw_all(seed=11)
    played.buy("late")  # refused: the sale is over
    kinds = {type(e) for e in played.events}
    assert len(kinds) >= 10
    for event in played.events:
        data = json.loads(json.dumps(event.to_dict()))
        assert data["v"] == 1 and data["type"] == event.type
        assert event_from_dict(data) == event


def test_events_refuse_what_json_would_blur() -> None:
    with pytest.raises(EventError, match="central_ball_drawn.ball is a whole number, not True"):
        BallDrawn("g", True, 1, 0)  # type: ignore[arg-type]
    with pytest.raises(EventError, match="central_ball_drawn.drawn_at_ms is a whole number, not 1.0"):
        BallDrawn("g", 1, 1, 1.0)  # type: ignore[arg-type]
    with pytest.raises(EventError, match="cannot be negative"):
        PrizeWon("g", "line", 5, -1, 1, 0, 0, False)
    with pytest.raises(EventError, match="final is true or false, not 1"):
        PrizeWon("g", "line", 5, 1, 1, 1, 0, 1)  # type: ignore[arg-type]
    with pytest.raises(EventError, match=r"carries.line cannot be negative"):
        GameClosed("g", 0, {"line": -1})
    assert StakeReturned("g", "h", 1, "r", "t", "p", [1, 2], 2, "stakes", "not_played").card_numbers == (1, 2)  # type: ignore[arg-type]


def test_an_unknown_type_version_or_field_is_refused_with_the_reason() -> None:
    good = BallDrawn("g", 7, 1, 0).to_dict()
    cases = [
        ({**good, "type": "central_ball_dropped"}, "unknown central event type 'central_ball_dropped'"),
        ({**good, "v": 2}, "central_ball_drawn: version 2; this server reads version 1"),
        ({k: v for k, v in good.items() if k != "v"}, "version None"),
        ({k: v for k, v in good.items() if k != "ball"}, "missing field(s) ball"),
        ({**good, "colour": 1}, "unknown field(s) colour"),
        ([1], "an event is a JSON object, not list"),
    ]
    for data, message in cases:
        with pytest.raises(EventError) as error:
            event_from_dict(data)  # type: ignore[arg-type]
        assert message in str(error.value)
    assert all(name.startswith("central_") for name in EVENT_TYPES)

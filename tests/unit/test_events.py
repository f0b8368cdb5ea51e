"""Domain events: stable type names and a JSON form the journal can store and read back."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.events import (
    EVENT_TYPES,
    BallDrawn,
    CardSold,
    Event,
    EventError,
    PrizeWon,
    SaleOpened,
    event_from_dict,
)

#: The journal format: changing a name here is a migration of every stored journal.
STABLE_TYPES = {
    "sale_opened", "card_sold", "sale_closed", "ball_drawn", "ball_voided", "claim_rejected",
    "prize_won", "terminal_failed", "game_suspended", "game_resumed",
    "game_suspended_for_good", "game_refunded", "manual_finish_started", "game_closed",
    "game_finished", "ball_corrected", "prize_closed", "card_refused",
}  # fmt: skip


def test_every_event_has_a_stable_type_name() -> None:
    assert set(EVENT_TYPES) == STABLE_TYPES
    for name, cls in EVENT_TYPES.items():
        assert cls.type == name
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def value_strategy(name: str, hint: Any) -> st.SearchStrategy[Any]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):  # X | None
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return st.none() | value_strategy(name, inner)
    if typing.get_origin(hint) is tuple:
        return st.lists(value_strategy(name, typing.get_args(hint)[0]), max_size=4).map(tuple)
    if hint is int:
        if name in ("ball", "ball_count", "misread"):
            return st.integers(1, 90)
        return st.integers(0, 2**53)
    return st.text(max_size=20)


def events_of(cls: type[Event]) -> st.SearchStrategy[Event]:
    hints = typing.get_type_hints(cls)
    return st.builds(cls, **{f.name: value_strategy(f.name, hints[f.name]) for f in dataclasses.fields(cls)})  # type: ignore[arg-type]


any_event = st.one_of([events_of(cls) for cls in EVENT_TYPES.values()])


@settings(max_examples=300, deadline=None)
@given(any_event)
@pytest.mark.req("R92.3", "R96.4")
def test_an_event_round_trips_through_json(event: Event) -> None:
    """What the journal stores reads back as the same event."""
    data = event.to_dict()
    assert data["type"] == event.type
    text = json.dumps(data, allow_nan=False)
    assert event_from_dict(json.loads(text)) == event


def test_the_dict_form_is_plain_json() -> None:
    event = SaleOpened("g1", 3, 17, 150, ("line", "bingo"), None)
    assert event.to_dict() == {
        "type": "sale_opened",
        "game_id": "g1",
        "series": 3,
        "first_card": 17,
        "price_cents": 150,
        "patterns": ["line", "bingo"],
        "closes_at_ms": None,
    }


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("stake_cents", True, "whole number"),
        ("stake_cents", 1.0, "whole number"),
        ("stake_cents", "100", "whole number"),
        ("stake_cents", -1, "cannot be negative"),
        ("account", 7, "text"),
        ("terminal_id", 3, "text"),
    ],
)
def test_a_bad_field_is_refused(field: str, value: object, message: str) -> None:
    data = CardSold("g1", 1, 2, 100, 100, "player:a", "t1").to_dict()
    data[field] = value
    with pytest.raises(EventError, match=message):
        event_from_dict(data)


@pytest.mark.parametrize("ball", [0, 91])
def test_balls_are_1_to_90(ball: int) -> None:
    with pytest.raises(EventError, match="outside 1-90"):
        BallDrawn("g1", ball, 1)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"type": "ball_thrown"}, "unknown event type"),
        ({"game_id": "g1"}, "unknown event type"),
        ({"type": "prize_won", "game_id": "g1", "pattern": "line", "series": 1, "card_number": 2}, "missing field"),
        ({**PrizeWon("g1", "line", 1, 2, 30).to_dict(), "amount": 5}, "unknown field"),
        ({**SaleOpened("g1", 1, 1, 100, ("line",)).to_dict(), "patterns": "line"}, "is a list"),
        ({**SaleOpened("g1", 1, 1, 100, ("line",)).to_dict(), "patterns": [1]}, "text"),
        (["ball_drawn"], "JSON object"),
    ],
)
def test_a_bad_journal_record_is_refused(data: Any, message: str) -> None:
    with pytest.raises(EventError, match=message):
        event_from_dict(data)


def test_events_are_frozen_and_hashable() -> None:
    event = PrizeWon("g1", "line", 1, 2, 30)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.ball_count = 31  # type: ignore[misc]
    assert len({event, PrizeWon("g1", "line", 1, 2, 30)}) == 1

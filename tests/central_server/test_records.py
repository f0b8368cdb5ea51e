"""The central server's journal records are declared in protocol/records, field for field
as its domain's events (R92.3, R96.4)."""

from __future__ import annotations

import dataclasses

import pytest

from central_server.domain.events import EVENT_TYPES
from central_server.module import journaled
from protocol.records import REGISTRY, build, payload_keys

pytestmark = pytest.mark.req("R92.3", "R96.4")


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_central_event_is_a_declared_record_with_the_same_fields(name: str) -> None:
    event_fields = {f.name for f in dataclasses.fields(EVENT_TYPES[name])}
    assert name in REGISTRY, f"{name} is not declared in protocol/records/central.py"
    assert set(payload_keys(REGISTRY[name])) - {"actor"} == event_fields


def test_an_events_journaled_form_builds_and_reads_back_as_the_event() -> None:
    from central_server.domain.events import BallDrawn, event_from_dict

    event = BallDrawn(game_id="G-1", ball=17, ball_count=3, drawn_at_ms=1_780_000_000_000)
    payload = journaled(event)
    assert "v" not in payload and payload["type"] == "central_ball_drawn"
    assert build(event.type, payload).to_payload() == payload
    assert event_from_dict({"v": 1, **payload}) == event

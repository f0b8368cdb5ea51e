"""The central server journals its games' records as protocol/records/central.py declares them,
once, and folds them back from the journal as the same records (R92.3, R96.4)."""

from __future__ import annotations

import pytest
import pytest_twisted

from central_server.module import game_record
from protocol.chain import Record
from protocol.records import ActorStamp, build
from protocol.records.central import GAME_RECORDS, CentralBallDrawn
from tests.central_server.conftest import Running


@pytest.mark.req("R92.3", "R96.4")
def test_a_record_read_back_from_the_journal_is_the_record_without_its_actor() -> None:
    drawn = CentralBallDrawn(game_id="G-1", ball=17, ball_count=3, drawn_at_ms=1_780_000_000_000)
    stamped = build(drawn.type, {**drawn.to_payload(), "actor": {"name": "central", "role": "system"}})
    assert stamped.actor == ActorStamp("central", "system")
    stored = Record(seq=9, time_ms=0, type=drawn.type, payload=stamped.to_payload(), prev="", hash="", signature="")
    assert game_record(stored) == drawn


@pytest.mark.req("R92.3", "R96.4")
@pytest_twisted.ensureDeferred
async def test_every_record_a_game_journals_is_a_declared_central_record(central: Running) -> None:
    client = await central.hall("hall-1")
    await central.open_sale()
    await client.buy("r1", count=3)
    await central.close_sale()
    await central.next_ball()
    journaled = central.game_records()
    assert {r.type for r in journaled} >= {"central_game_scheduled", "central_sale_opened",
                                           "central_purchase_confirmed", "central_sale_closed", "central_ball_drawn"}
    for stored in journaled:
        declared = build(stored.type, stored.payload)
        assert type(declared) is GAME_RECORDS[stored.type]
        assert declared.to_payload() == stored.payload, "the journal keeps the declared payload, key for key"
    assert [game_record(r) for r in journaled] == central.game.events

"""The central game's events are its journal records, declared once in protocol/records/central.py:
typed, versioned, to and from the journal's payloads (R96.4)."""

from __future__ import annotations

import json

import pytest

from central_server.domain.game import TerminalFailure
from protocol.records import REGISTRY, RecordError, build
from protocol.records.central import (
    GAME_RECORDS,
    PROGRAMME_RECORDS,
    CentralBallDrawn,
    CentralGameClosed,
    CentralGameScheduled,
    CentralPrizeWon,
    CentralRecord,
    CentralStakeReturned,
)
from tests.central.conftest import Played


def prize(**changes: object) -> CentralPrizeWon:
    fields: dict[str, object] = dict(game_id="g", pattern="line", ball_count=5, amount_cents=1, winner_count=1,
                                     paid_cents=1, carry_cents=0, final=False)
    fields.update(changes)
    return CentralPrizeWon(**fields)  # type: ignore[arg-type]


@pytest.mark.req("R96.4")
def test_every_event_of_a_whole_game_survives_its_journal_payload_and_back() -> None:
    played = Played().open()
    for i in range(12):
        played.buy(f"r{i}", hall=("hall-1", "hall-2")[i % 2], terminal=f"t{i % 3}", count=4, pct=(100, 50, 25)[i % 3])
    played.record(played.game.declare_terminal_failed(TerminalFailure("f", "hall-1", "t0", "cracked", "chief"), from_hall="hall-1", now_ms=0))
    played.close().draw_all(seed=11)
    played.buy("late")  # refused: the sale is over
    kinds = {type(e) for e in played.events}
    assert len(kinds) >= 10
    for event in played.events:
        assert isinstance(event, CentralRecord) and REGISTRY[event.type] is type(event)
        payload = json.loads(json.dumps(event.to_payload()))
        assert "v" not in payload and payload["type"] == event.type
        assert build(event.type, payload) == event


def test_the_game_records_are_the_declared_central_types() -> None:
    assert set(GAME_RECORDS) == {name for name in REGISTRY if name.startswith("central_")} - {
        "central_command_refused", "central_refusals_counted", "central_annex_relayed", "central_leadership_taken",
        "central_play_interrupted", "central_verified",  # the server's stops and its verification, not a game's
        "central_report_delivered",  # the regulator's acknowledgement of a daily report
    } - set(PROGRAMME_RECORDS)
    assert all(REGISTRY[name] is cls and issubclass(cls, CentralRecord) for name, cls in GAME_RECORDS.items())
    assert all(REGISTRY[name] is cls and issubclass(cls, CentralRecord) for name, cls in PROGRAMME_RECORDS.items())


@pytest.mark.req("R88.4-5")
def test_a_game_of_the_chain_says_what_it_follows_and_takes_and_a_configured_game_says_neither() -> None:
    config = {"game_id": "g"}
    chained = CentralGameScheduled(game_id="g", config=config, chain="programme", after_game="f",
                                   carries_taken={"line": 3, "bingo": 0}, opens_after_ms=60_000)
    assert build(chained.type, json.loads(json.dumps(chained.to_payload()))) == chained
    plain = CentralGameScheduled(game_id="g", config=config)
    assert plain.to_payload() == {"type": "central_game_scheduled", "game_id": "g", "config": config}
    for bad, field in (({"chain": "hall"}, "chain"), ({"after_game": "f", "carries_taken": {}}, "after_game"),
                       ({"chain": "operator", "after_game": "f"}, "carries_taken"),
                       ({"chain": "operator", "after_game": "f", "carries_taken": {"line": -1}}, "carries_taken.line"),
                       ({"opens_after_ms": -5}, "opens_after_ms")):
        with pytest.raises(RecordError, match=f"{field}: "):
            CentralGameScheduled(game_id="g", config=config, **bad)  # type: ignore[arg-type]


def test_events_refuse_what_json_would_blur_and_negative_numbers() -> None:
    with pytest.raises(RecordError, match="ball: is a whole number, not true"):
        CentralBallDrawn(game_id="g", ball=True, ball_count=1, drawn_at_ms=0)
    with pytest.raises(RecordError, match="drawn_at_ms: is a whole number, not the non-integer number 1.0"):
        CentralBallDrawn(game_id="g", ball=1, ball_count=1, drawn_at_ms=1.0)  # type: ignore[arg-type]
    with pytest.raises(RecordError, match="amount_cents: cannot be negative: -1"):
        prize(amount_cents=-1)
    with pytest.raises(RecordError, match="final: is true or false, not 1"):
        prize(final=1)
    with pytest.raises(RecordError, match=r"carries.line: cannot be negative"):
        CentralGameClosed(game_id="g", closed_at_ms=0, carries={"line": -1})
    with pytest.raises(RecordError, match=r"card_numbers\[1\]: cannot be negative"):
        build("central_stake_returned", {
            "type": "central_stake_returned", "game_id": "g", "hall_id": "h", "credit_seq": 1,
            "purchase_request_id": "r", "terminal_id": "t", "player_ref": "p", "card_numbers": [1, -2],
            "amount_cents": 2, "paid_by": "stakes", "cause": "not_played",
        })  # fmt: skip
    returned = CentralStakeReturned(
        game_id="g", hall_id="h", credit_seq=1, purchase_request_id="r", terminal_id="t", player_ref="p",
        card_numbers=[1, 2], amount_cents=2, paid_by="stakes", cause="not_played",  # type: ignore[arg-type]
    )
    assert returned.card_numbers == (1, 2)


def test_an_unknown_type_version_or_field_is_refused_with_the_reason() -> None:
    good = CentralBallDrawn(game_id="g", ball=7, ball_count=1, drawn_at_ms=0).to_payload()
    cases = [
        ("central_ball_dropped", good, "no such record type is declared"),
        ("central_ball_drawn", {**good, "v": 2}, "version 2 is not known"),
        ("central_ball_drawn", {k: v for k, v in good.items() if k != "type"}, "must repeat the record type"),
        ("central_ball_drawn", {k: v for k, v in good.items() if k != "ball"}, "ball: is missing"),
        ("central_ball_drawn", {**good, "colour": 1}, "colour: is not a field of this record type"),
        ("central_ball_drawn", [1], "a payload is a JSON object"),
    ]
    for type, data, message in cases:
        with pytest.raises(RecordError) as error:
            build(type, data)  # type: ignore[arg-type]
        assert message in str(error.value)

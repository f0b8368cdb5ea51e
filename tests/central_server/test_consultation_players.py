"""The regulator's consultation of the central server names each player uniquely across halls."""

from __future__ import annotations

from typing import Any

from central_server.consultation import CentralConsultation, _Game
from protocol.chain import Record
from protocol.records.central import CentralCardWon, CentralPurchaseConfirmed
from tests.hall.conftest import result


def run_inline(function: Any, *args: Any) -> Any:
    from twisted.internet import defer

    return defer.maybeDeferred(function, *args)


def stored(seq: int, type_: str) -> Record:
    return Record(seq, 1_000 * seq, type_, {}, "0" * 64, "h", "s")


def test_desk_central_consultation_labels_players_of_two_halls_apart() -> None:
    game = _Game("net-1", {"price_cents": 100, "series_label": "V1"}, 1)
    for seq, hall in ((2, "hall-1"), (3, "hall-2")):
        game.apply(stored(seq, "central_purchase_confirmed"), CentralPurchaseConfirmed(
            game_id="net-1", decision=seq, hall_id=hall, request_id=f"{hall}-r1", terminal_id="T1", player_ref="p.7",
            card_count=2, stake_pct=100, first_card=2 * seq, stake_cents=100, amount_cents=200))
    game.apply(stored(4, "central_card_won"), CentralCardWon(
        game_id="net-1", pattern="bingo", ball_count=40, winner_seq=1, credit_seq=1, card_number=4, hall_id="hall-1",
        terminal_id="T1", player_ref="p.7", purchase_request_id="hall-1-r1", stake_pct=100, payment_cents=500))
    whole = game.whole()
    assert [p["player"] for p in whole["purchases"]] == ["hall-1/p.7", "hall-2/p.7"]
    assert [p["player_ref"] for p in whole["purchases"]] == ["p.7", "p.7"], "the hall's own reference is kept"
    assert whole["winners"][0]["player"] == "hall-1/p.7"
    assert len({m["player"] for m in game.movements()}) == 2

    consultation = CentralConsultation(lambda after: [], run_inline)
    consultation.games["net-1"] = game
    one = result(consultation.answer("movements", {"player": "hall-1/p.7"}))
    assert [(m["hall"], m["change_cents"]) for m in one["movements"]] == [("hall-1", -200), ("hall-1", 500)]
    both = result(consultation.answer("movements", {"player": "p.7"}))
    assert both["matching"] == 3, "a bare reference finds it in every hall that gave it"
    narrowed = result(consultation.answer("movements", {"player": "p.7", "hall": "hall-2"}))
    assert [m["player"] for m in narrowed["movements"]] == ["hall-2/p.7"]

"""The hall's side of the network game on a fake central server (the central domain's own rules,
no socket): holds captured or released exactly once on every path, balls and prizes kept
once and in order, credits paid once, failures reported (R93.1-8, R85.9, R92.11, R96.2-3)."""

from __future__ import annotations

import pytest

from hall_server.network.module import NetworkError, NetworkPurchase
from protocol.ledger import Ledger, Posting
from tests.hall.conftest import result
from tests.network.conftest import NetworkHall
from tests.network.fake_central import FakeCentral
from tests.terminals.conftest import CHIEF

pytestmark = pytest.mark.req("R93.6")


def buy(net: NetworkHall, number: str, quantity: int, *, terminal: str = "T1", request: str = "r1",
        stake_pct: int = 100, game_id: str = "net-1") -> object:
    return net.network.hold(NetworkPurchase(terminal, number, number, game_id, quantity, stake_pct, request))


def ledger_of(net: NetworkHall) -> Ledger:
    """The postings folded afresh from the journal: they balance, and give the balances."""
    ledger = Ledger()
    for record in net.records("posting"):
        ledger.post(Posting.from_dict({k: v for k, v in record.payload.items() if k != "actor"}))
    return ledger


@pytest.mark.req("R93.2", "R93.6", "R93.8")
def test_a_purchase_holds_the_credit_relays_it_and_captures_it_on_the_confirmation(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    hold = result(buy(net, number, 3, stake_pct=50))
    assert hold.status == "bought" and hold.labels == ["V1-1", "V1-2", "V1-3"]
    assert net.balance(number) == 850 and net.held() == 0 and net.owed() == 150
    (held,) = net.records("network_credit_held")
    (bought,) = net.records("network_cards_bought")
    assert held.payload["request_id"] == f"hall-1.{held.seq}" and bought.payload["request_id"] == held.payload["request_id"]
    (asked,) = [args for name, args in net.central.calls if name == "buy_cards"]
    assert asked["request_id"] == held.payload["request_id"] and asked["player_ref"] == held.payload["player_ref"]
    assert number not in str(asked)  # the central server knows the player by reference only
    # The terminal sends its purchase again: the same hold, no new record, charged once.
    records = len(net.hall.records())
    assert result(buy(net, number, 3, stake_pct=50)) is net.network.state.holds[hold.request_id]
    assert len(net.hall.records()) == records and net.balance(number) == 850


@pytest.mark.req("R93.6", "R93.10")
def test_the_cards_numbers_come_with_the_confirmation_are_journaled_with_it_and_survive_a_restart(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    result(buy(net, number, 2, request="a"))
    hold = result(buy(net, number, 3, request="b"))
    assert hold.first_card == 3
    layouts = net.central.library[2:5]  # the series' cards 3, 4 and 5
    (_, bought) = net.records("network_cards_bought")
    assert bought.payload["cells"] == [int(n) for n in layouts.reshape(-1)]
    assert [hold.card_cells(i) for i in range(3)] == [[int(n) for n in card] for card in layouts]
    again = net.reopened()  # kill -9: the numbers are in the journal
    assert again.network.state.holds[hold.request_id].card_cells(2) == [int(n) for n in layouts[2]]


def test_an_answer_whose_cells_are_not_the_cards_is_captured_and_shown_without_numbers(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    net.central.lose_answers = 1
    hold = result(buy(net, number, 2))
    answer = {"request_id": hold.request_id, "status": "confirmed", "decision": 1, "series": "V1", "first_card": 1,
              "card_count": 2, "stake_cents": 100, "amount_cents": 200, "cells": [1] * 54}  # fmt: skip
    settled = result(net.network.settle(hold.request_id, answer))
    assert settled.status == "bought" and settled.card_cells(0) == [] and net.owed() == 200
    (bought,) = net.records("network_cards_bought")
    assert "cells" not in bought.payload


@pytest.mark.req("R93.8")
def test_a_purchase_the_central_server_refuses_gives_the_credit_back(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 10_000)
    result(buy(net, number, 90, request="r1"))
    hold = result(buy(net, number, 6, request="r2"))  # 96 per player per terminal is the hall's limit too
    assert hold.status == "bought"
    net.central.muted = True
    net.central.close_sale()  # the hall did not hear the close: the central server refuses what follows
    net.central.muted = False
    late = result(buy(net, number, 1, terminal="T2", request="r3"))
    assert late.status == "released" and late.refusal_code == "sale_over"
    assert net.balance(number) == 10_000 - 9_600 and net.held() == 0
    (released,) = net.records("network_credit_released")
    assert released.payload["refusal_code"] == "sale_over"


def test_a_purchase_is_refused_at_the_hall_when_it_cannot_go_on(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 250)
    records = len(net.hall.records())
    for quantity, game, match in ((3, "net-1", "your credit is"), (1, "net-9", "no network game net-9")):
        with pytest.raises(NetworkError, match=match):
            result(buy(net, number, quantity, game_id=game))
    net.central.cut()
    with pytest.raises(NetworkError, match="link to the central server is down"):
        result(buy(net, number, 1))
    assert len(net.hall.records()) == records and net.balance(number) == 250


@pytest.mark.req("R93.6", "R96.4")
def test_an_answer_lost_with_the_link_is_asked_again_with_the_same_request_id_and_charged_once(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    net.central.lose_answers = 1
    pending = buy(net, number, 2)
    hold = result(pending)
    assert hold.status == "held" and net.held() == 200 and net.balance(number) == 800
    net.connect()  # back: the hold is sent again and answered with the first decision
    assert hold.status == "bought" and net.held() == 0 and net.owed() == 200
    asked = [args["request_id"] for name, args in net.central.calls if name == "buy_cards"]
    assert asked == [hold.request_id, hold.request_id]
    assert len(net.central.decisions()) == 1 and len(net.records("network_cards_bought")) == 1


@pytest.mark.req("R93.6", "R96.4")
def test_a_hall_restarted_between_the_hold_and_the_answer_resends_it_and_it_is_decided_once(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    net.central.lose_answers = 1
    first = result(buy(net, number, 4, request="a"))
    net.central.cut()
    again = net.reopened()  # kill -9: only the journal is left
    assert again.network.pending_holds()[0].request_id == first.request_id and again.held() == 400
    again.connect()
    assert again.network.state.holds[first.request_id].status == "bought"
    assert again.balance(number) == 600 and again.held() == 0 and again.owed() == 400
    assert len(again.central.decisions()) == 1


@pytest.mark.req("R93.8")
def test_no_credit_stays_held_after_the_sale_a_hold_never_received_is_refused_and_released(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    net.central.cut()
    net.network.link_up = lambda: True  # the link dropped between the check and the send
    hold = result(buy(net, number, 5))
    net.network.link_up = lambda: net.relay.up
    assert hold.status == "held" and net.held() == 500
    net.central.close_sale()  # while the hall is away
    net.connect()
    assert hold.status == "released" and hold.refusal_code == "sale_over"
    assert net.held() == 0 and net.balance(number) == 1_000
    assert net.network.game("net-1").phase == "closed"  # caught up with get_game: nothing in play, so over


@pytest.mark.req("R92.10", "R93.10")
def test_balls_are_kept_once_in_order_and_a_gap_is_refused_then_caught_up(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    result(buy(net, number, 6))
    net.central.close_sale()
    for ball in (17, 4, 60):
        net.central.draw(ball)
    game = net.network.game("net-1")
    assert game.balls == [17, 4, 60]
    records = len(net.hall.records())
    # The same ball again is nothing new; a ball out of order, another ball at a known
    # place, a push for a game nobody announced, a ball that is no ball: refused with a
    # code, nothing changed (the gap makes the hall ask for the balls: there are none).
    result(net.central.push("ball_drawn", {"game_id": "net-1", "ball": 60, "ball_count": 3}))
    for arguments, code in (
        ({"game_id": "net-1", "ball": 33, "ball_count": 5}, "bad_argument"),
        ({"game_id": "net-1", "ball": 33, "ball_count": 2}, "bad_argument"),
        ({"game_id": "net-7", "ball": 33, "ball_count": 1}, "unknown_game"),
        ({"game_id": "net-1", "ball": 91, "ball_count": 4}, "bad_argument"),
    ):
        with pytest.raises(Exception) as refused:
            result(net.central.push("ball_drawn", arguments))
        assert getattr(refused.value, "code", None) == code
    assert len(net.hall.records()) == records and game.balls == [17, 4, 60]


@pytest.mark.req("R92.10")
def test_a_ball_out_of_order_makes_the_hall_fetch_the_balls_it_lacks(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 1_000)
    result(buy(net, number, 6))
    net.central.close_sale()
    net.central.draw(5)
    net.central.muted = True
    net.central.draw(6)  # lost on the way
    net.central.muted = False
    net.central.draw(7)  # out of order at the hall: refused, and the hall asks for 6 and 7
    assert ("ball_drawn", "bad_argument") in net.central.push_results
    assert net.network.game("net-1").balls == [5, 6, 7]


@pytest.mark.req("R92.10", "R92.6")
def test_a_close_that_comes_before_the_last_balls_makes_the_hall_fetch_them_first(net: NetworkHall) -> None:
    """A central server that failed over between the last balls' commit and their fan-out: the new one's
    close reaches the hall first; the hall fetches the balls it lacks before it closes the game."""
    number = net.hall.player("11111111A", 5_000)
    result(buy(net, number, 30))
    net.central.close_sale()
    net.central.draw(5)
    net.central.muted = True
    drawn = net.central.draw_until_closed(seed=4)  # the balls and the close, all lost on the way
    net.central.muted = False
    central_game = net.central.games["net-1"]
    assert central_game.carries is not None and net.network.game("net-1").balls == [5]
    result(net.central.push("game_closed", {
        "game_id": "net-1", "ball_count": len(central_game.balls),
        "carries": [{"pattern": p, "carry_cents": c} for p, c in central_game.carries.items()],
    }))  # fmt: skip
    game = net.network.game("net-1")
    assert game.phase == "closed" and game.balls == central_game.balls == [5, *drawn]


@pytest.mark.req("R85.9", "R92.11", "R93.12", "R93.13")
def test_a_whole_game_every_prize_is_credited_once_with_the_hall_and_terminal_shown(net: NetworkHall) -> None:
    ana = net.hall.player("11111111A", 5_000)
    bo = net.hall.player("22222222B", 5_000)
    result(buy(net, ana, 40, terminal="T1", request="a"))
    result(buy(net, bo, 30, terminal="T2", request="b", stake_pct=50))
    net.central.close_sale()
    drawn = net.central.draw_until_closed()
    game = net.network.game("net-1")
    central_game = net.central.games["net-1"]
    assert game.phase == "closed" and game.balls == drawn == central_game.balls
    assert [(w.seq, w.hall_id, w.terminal_id) for w in game.winners] == [
        (w.winner_seq, w.hall_id, w.terminal_id) for w in central_game.winners]
    assert {"line", "bingo"} <= set(game.won)
    paid = net.records("network_credit_paid")
    assert sorted(r.payload["seq"] for r in paid) == list(range(1, central_game.credit_count("hall-1") + 1))
    prizes = sum(w.payment_cents for w in central_game.winners)
    assert net.balance(ana) + net.balance(bo) == 10_000 - 4_000 - 1_500 + prizes
    assert net.owed() == 5_500 - prizes
    # Asking again pays nothing twice.
    net.connect()
    assert len(net.records("network_credit_paid")) == len(paid)
    assert ledger_of(net).balance(f"player:{ana}") == net.balance(ana)


@pytest.mark.req("R85.9", "R92.11")
def test_a_hall_away_during_the_draw_catches_up_on_balls_winners_and_credits(net: NetworkHall) -> None:
    ana = net.hall.player("11111111A", 8_000)
    result(buy(net, ana, 60))
    net.central.close_sale()
    net.central.draw(1)
    net.central.cut()
    again = net.reopened()
    drawn = again.central.draw_until_closed(seed=3)
    again.connect()
    game = again.network.game("net-1")
    central_game = again.central.games["net-1"]
    assert game.balls == central_game.balls and game.phase == "closed"
    assert len(game.winners) == len(central_game.winners) and drawn
    prizes = sum(w.payment_cents for w in central_game.winners if w.hall_id == "hall-1")
    assert again.balance(ana) == 8_000 - 6_000 + prizes


@pytest.mark.req("R96.3")
def test_a_terminal_declared_failed_is_reported_and_its_unwon_cards_are_refunded_once(net: NetworkHall) -> None:
    ana = net.hall.player("11111111A", 1_000)
    token = net.hall.terminal("T1")
    assert token
    result(buy(net, ana, 5))
    result(net.hall.virtual.declare_failed(CHIEF, "T1", "screen dark"))
    (reported,) = net.records("network_terminal_failure_reported")
    assert reported.payload["declared_by"] == CHIEF.name
    (answered,) = net.records("network_terminal_failure_answered")
    assert answered.payload["refunded_cards"] == 5 and answered.payload["paid_by"] == "stakes"
    assert net.balance(ana) == 1_000 and net.owed() == 0
    (refund,) = net.records("network_credit_paid")
    assert refund.payload["kind"] == "refund" and refund.payload["amount_cents"] == 500
    net.connect()
    assert len(net.records("network_credit_paid")) == 1


@pytest.mark.req("R96.2")
def test_force_majeure_returns_every_stake(net: NetworkHall) -> None:
    ana = net.hall.player("11111111A", 1_000)
    bo = net.hall.player("22222222B", 1_000)
    result(buy(net, ana, 3, request="a"))
    result(buy(net, bo, 2, terminal="T2", request="b", stake_pct=50))
    net.central.close_sale()
    net.central.draw(9)
    net.central.not_played("the central site lost power")
    assert net.network.game("net-1").phase == "not_played"
    assert net.balance(ana) == 1_000 and net.balance(bo) == 1_000 and net.owed() == 0


def test_a_credit_for_a_player_the_hall_does_not_know_is_refused_and_pays_nothing(
    net: NetworkHall, central: FakeCentral
) -> None:
    records = len(net.hall.records())
    with pytest.raises(Exception, match="bought nothing here"):
        result(net.network.credit("net-1", {"seq": 1, "kind": "prize", "player_ref": "p.99", "terminal_id": "T1",
                                            "amount_cents": 100, "pattern": "line", "card_number": 1}))
    assert len(net.hall.records()) == records

"""The hall's side of the network game on a fake central server (the central domain's own rules,
no socket): holds captured or released exactly once on every path, balls and prizes kept
once and in order, credits paid once, failures reported (R93.1-8, R85.9, R92.11, R96.2-3)."""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from central_server.domain.game import PurchaseRequest
from central_server.domain.wire import games_at_hello
from hall_server.network.module import NetworkError, NetworkPurchase
from hall_server.terminal_gateway.gateway import network_picture
from protocol.ledger import Ledger, Posting
from tests.hall.conftest import result
from server_kit.journal.sql import Journal
from tests.network.conftest import NetworkHall, build_network_hall, opened_network_hall, prepare
from tests.network.fake_central import FakeCentral
from tests.terminals.conftest import CHIEF


def buy(net: NetworkHall, number: str, quantity: int, *, terminal: str = "T1", request: str = "r1",
        stake_pct: int = 100, game_id: str = "net-1") -> object:
    return net.network.hold(NetworkPurchase(terminal, number, number, game_id, quantity, stake_pct, request))


def ledger_of(net: NetworkHall) -> Ledger:
    """The postings folded afresh from the journal: they balance, and give the balances."""
    ledger = Ledger()
    for record in net.records("posting"):
        ledger.post(Posting.from_dict({k: v for k, v in record.payload.items() if k != "actor"}))
    return ledger


@pytest.mark.req("R93.2-4", "R93.6", "R93.8")
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


class Gate:
    """The hall's database writer held back: commands decided meanwhile wait and commit together."""

    def __init__(self) -> None:
        self.waiting: list[tuple[defer.Deferred[Any], Any, tuple[Any, ...]]] = []

    def run(self, function: Any, *args: Any) -> defer.Deferred[Any]:
        done: defer.Deferred[Any] = defer.Deferred()
        self.waiting.append((done, function, args))
        return done

    def open(self) -> None:
        while self.waiting:
            done, function, args = self.waiting.pop(0)
            done.callback(function(*args))


@pytest.mark.req("R93.6")
def test_the_purchases_one_commit_holds_go_together_in_one_message_and_each_is_settled_once(net: NetworkHall) -> None:
    number = net.hall.player("11111111A", 10_000)
    gate = Gate()
    net.hall.core.run_blocking = gate.run
    buy(net, number, 2, terminal="T0", request="r0")  # its commit is in flight: the next five wait for it
    for n in range(1, 6):
        buy(net, number, 2, terminal=f"T{n}", request=f"r{n}")
    gate.open()
    sent = [(name, args) for name, args in net.central.calls if name.startswith("buy")]
    assert [name for name, _ in sent] == ["buy_cards", "buy_cards_batch"]
    assert [p["terminal_id"] for p in sent[1][1]["purchases"]] == [f"T{n}" for n in range(1, 6)]
    holds = sorted(net.network.state.holds.values(), key=lambda h: h.terminal)
    assert [h.status for h in holds] == ["bought"] * 6 and [h.first_card for h in holds] == list(range(1, 13, 2))
    assert net.balance(number) == 10_000 - 1_200 and net.held() == 0 and net.owed() == 1_200


@pytest.mark.req("R93.6")
def test_while_purchases_keep_coming_they_are_gathered_and_after_a_quiet_spell_one_goes_at_once(
    journal: Journal, clock: Clock, central: FakeCentral,
) -> None:
    net = opened_network_hall(build_network_hall(journal, clock, central, gather_s=0.1))
    number = net.hall.player("11111111A", 10_000)
    buying = lambda n: [name for name, _ in net.central.calls if name.startswith("buy")][n:]  # noqa: E731
    result(buy(net, number, 1, terminal="T0", request="r0"))
    assert buying(0) == ["buy_cards"]  # the first after a quiet spell: at once
    for n in range(1, 4):
        buy(net, number, 1, terminal=f"T{n}", request=f"r{n}")
    assert buying(1) == []  # gathered
    clock.advance(0.1)
    (batch,) = [args for name, args in net.central.calls if name == "buy_cards_batch"]
    assert [p["terminal_id"] for p in batch["purchases"]] == ["T1", "T2", "T3"]
    clock.advance(5)
    result(buy(net, number, 1, terminal="T4", request="r4"))
    assert buying(2) == ["buy_cards"]  # quiet again: at once
    assert all(h.status == "bought" for h in net.network.state.holds.values()) and net.held() == 0


@pytest.mark.req("R93.6")
def test_a_purchase_of_a_batch_the_central_server_cannot_decide_gives_its_credit_back_and_the_others_stand(
    net: NetworkHall,
) -> None:
    number = net.hall.player("11111111A", 10_000)
    net.central.schedule("net-2")
    net.central.open_sale("net-2")
    gate = Gate()
    net.hall.core.run_blocking = gate.run
    buy(net, number, 1, terminal="T0", request="r0")
    for n, game in enumerate(("net-1", "net-2", "net-1", "net-2"), start=1):
        buy(net, number, 1, terminal=f"T{n}", request=f"r{n}", game_id=game)
    del net.central.games["net-2"]  # the batch reaches a central server that has no such game
    gate.open()
    holds = sorted(net.network.state.holds.values(), key=lambda h: h.terminal)
    assert [h.status for h in holds] == ["bought", "bought", "released", "bought", "released"]
    assert {h.refusal_code for h in holds if h.status == "released"} == {"unknown_game"}
    assert net.balance(number) == 10_000 - 300 and net.held("net-1") == 0 and net.held("net-2") == 0


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


@pytest.mark.req("R85.9", "R92.11-12", "R93.12-13")
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


@pytest.mark.req("R93.13")
def test_R93_13_the_hall_credits_its_winners_the_whole_of_each_prize_by_stake_and_nothing_carries(
    net: NetworkHall,
) -> None:
    """Every card in play is this hall's, at stakes of 100% and 50%: whatever cards win, the credits paid
    into the players' accounts are the prizes announced at the close to the cent, each winner's credit
    is its share by stake, and what the hall owes the network is the house's share alone."""
    ana = net.hall.player("11111111A", 5_000)
    bo = net.hall.player("22222222B", 5_000)
    result(buy(net, ana, 40, terminal="T1", request="a"))
    result(buy(net, bo, 30, terminal="T2", request="b", stake_pct=50))
    net.central.close_sale()
    net.central.draw_until_closed(seed=11)
    central_game = net.central.games["net-1"]
    announced = dict(central_game.sale.prize_amounts)
    prizes = [r.payload for r in net.records("network_credit_paid") if r.payload["kind"] == "prize"]
    for pattern, amount in announced.items():
        credits = [p for p in prizes if p["pattern"] == pattern]
        stakes = {w.card_number: w.stake_pct for w in central_game.winners if w.pattern == pattern}
        assert sum(p["amount_cents"] for p in credits) == amount  # the whole prize, no carry
        assert len(credits) == len(stakes)
        total = sum(stakes.values())
        for credit in credits:  # each within a cent of its share by stake (100 cents or 50)
            exact = amount * stakes[credit["card_number"]] / total
            assert abs(credit["amount_cents"] - exact) < 1
    closed = net.records("network_game_closed")[-1].payload
    assert {c["pattern"]: c["amount_cents"] for c in closed["carries"]} == dict.fromkeys(announced, 0)
    assert net.balance(ana) + net.balance(bo) == 10_000 - 4_000 - 1_500 + sum(announced.values())
    assert net.owed() == 5_500 - sum(announced.values()) == central_game.sale.house_share_cents


@pytest.mark.req("R85.9", "R92.11-12")
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


@pytest.mark.req("R92.11-12", "R93.10")
def test_a_hall_that_links_after_a_game_s_sale_closed_is_told_the_game_and_catches_up_its_balls_and_prizes(
    net: NetworkHall,
) -> None:
    """Protocol version 2: game_under_way after hello; the hall shows the game it never heard of."""
    net.central.cut()
    central = net.central
    game = central.schedule("net-2")
    central.open_sale("net-2")
    for k in range(12):  # only hall-2 buys: hall-1 is away from the opening to past the close
        request = PurchaseRequest(f"h2-{k}", "hall-2", f"K{k}", f"q{k}", 6, 100)
        game.request_purchase(request, from_hall="hall-2", now_ms=central.now)
    central.close_sale("net-2")
    drawn = []
    for ball in (44, 3, 71, 18, 29, 60, 5, 87, 12, 33, 52, 76, 21, 9, 64, 40, 2, 81, 57, 15, 36, 70, 26, 48, 11):
        if game.phase != "drawing" and drawn:
            break
        central.draw(ball, "net-2")
        drawn.append(ball)
    assert game.phase == "drawing" and game.winners, "a game under way, a prize already won"
    again = net.reopened()
    assert again.network.game("net-2") is None, "the hall never heard of net-2"
    again.connect()
    assert ("game_under_way", None) in central.push_results
    seen = again.network.game("net-2")
    assert seen is not None and seen.balls == game.balls and drawn
    assert [w.seq for w in seen.winners] == [w.winner_seq for w in game.winners]
    closed = again.records("network_sale_closed")[-1].payload
    assert (closed["game_id"], closed["cards_sold"], closed["hall_cards_sold"]) == ("net-2", 72, 0)
    assert {p["pattern"]: p["amount_cents"] for p in closed["prizes"]} == dict(game.sale.prize_amounts)  # type: ignore[union-attr]
    assert again.records("network_credit_paid") == [], "hall-1 bought nothing in it: nothing to pay"
    shown = network_picture(seen)  # what the board and the kiosks show of it
    assert shown is not None and (shown["game_id"], shown["state"], shown["cards_sold"]) == ("net-2", "drawing", 72)
    assert shown["winners"] and {w["hall"] for w in shown["winners"]} == {"hall-2"}
    assert shown["prizes"] == dict(game.sale.prize_amounts)  # type: ignore[union-attr]
    # Told again at the next hello, the hall takes nothing twice.
    count = len(again.hall.records())
    again.connect()
    assert len([r for r in again.records("network_sale_opened") if r.payload["game_id"] == "net-2"]) == 1
    assert len(again.hall.records()) == count


def test_a_hall_of_version_1_is_not_told_of_the_games_under_way(net: NetworkHall) -> None:
    central = net.central
    result(buy(net, net.hall.player("11111111A", 1_000), 2))
    central.close_sale()
    told = games_at_hello(central.games.values(), "hall-1", 1, now_ms=central.now)
    assert told == []
    (under_way,) = games_at_hello(central.games.values(), "hall-1", 2, now_ms=central.now)
    assert under_way.message.name == "game_under_way" and under_way.arguments["phase"] == "sale_closed"
    assert games_at_hello(central.games.values(), "hall-9", 2, now_ms=central.now) == []


@pytest.mark.req("R93.6", "R93.8")
def test_the_halls_gate_closes_at_the_deadline_on_the_central_clock_and_says_so_after_its_last_purchase(
    journal: Journal, clock: Clock, central: FakeCentral
) -> None:
    """Protocol version 3: the hall measures the central clock at each hello (here 1.5 s ahead of its own), keeps
    the sale's deadline on it whatever the push's delay, refuses a purchase once its gate closed, and says
    ``gate_closed`` after every purchase it took is sent."""
    central.tells_clock = True
    net = build_network_hall(journal, clock, central)
    clock.advance(central.now / 1000 - 1.5 - clock.seconds())  # the hall's clock 1.5 s behind the central server's
    prepare(net.hall)
    central.schedule("net-1")
    net.connect()
    assert net.network.central_offset_ms == 1_500
    central.open_sale("net-1")
    game = net.network.game("net-1")
    assert game is not None and game.closes_here_ms == game.closes_at_ms - 1_500
    number = net.hall.player("11111111A", 1_000)
    clock.advance((game.closes_here_ms - net.hall.core.now_ms()) / 1000 - 0.01)
    assert result(buy(net, number, 2, request="just-in-time")).status == "bought"
    assert central.gates == []
    clock.advance(0.02)  # the gate closed: said once every purchase it took is sent
    (said,) = central.gates
    assert said == {"game_id": "net-1", "hall_id": "hall-1", "purchases": 1, "closed_ms": game.closes_at_ms}
    names = [name for name, _ in central.calls]
    assert names.index("gate_closed") > names.index("buy_cards")
    with pytest.raises(NetworkError, match="sale time of this network game is over"):
        result(buy(net, number, 1, request="too-late"))
    assert net.balance(number) == 800  # the refused one charged nothing
    # A reconnection does not say it again once answered.
    net.connect()
    clock.advance(0.01)
    assert len(central.gates) == 1

"""The recall of the hall's last games over the real hall modules (R83.4, R92.3)."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.errors import DomainError
from server_kit.core import Actor
from tests.hall.conftest import result
from hall_server.terminal_gateway.gateway import TerminalGateway
from tests.terminals.conftest import CASHIER, CHIEF, DOOR, SELLER, TABLE, VirtualHall, layout
from tests.terminals.test_gateway import Wire, gateway  # noqa: F401 (fixture)
from tests.terminals.test_virtual import buy, on_sale


def recall(hall: VirtualHall, actor: Actor, count: Any = 10) -> list[dict[str, Any]]:
    return result(hall.core.commands["recall_games"].handler(actor, count=count))["games"]


def pay(hall: VirtualHall) -> None:
    """The seller hands in the takings, then desk1 pays what is due."""
    free = hall.ledger.balance("cash:ana") - hall.cashier.drawer_hold("cash:ana")[0]
    if free > 0:
        result(hall.cashier.hand_in_takings(CASHIER, "ana", "desk1", free))
    result(hall.games.pay_prizes(CASHIER, "desk1"))


def draw_until(hall: VirtualHall, pattern: str) -> None:
    """Draw until a ball completes ``pattern``; the table chief verifies its paper cards."""
    while True:
        (ball, *_) = result(hall.games.draw_ball(SELLER))
        completed = ball.payload[f"completed_{pattern}"]
        if completed:
            for label in completed:
                series, number = (int(x) for x in label.split("-"))
                if series != 900:  # a virtual card wins without a claim
                    result(hall.games.verify_claim(TABLE, series, number))
            return


def due(hall: VirtualHall) -> bool:
    game = hall.games.current
    return bool(hall.games.due_prizes(game))


def play(hall: VirtualHall, first: int, last: int, player: str | None = None) -> None:
    """Paper cards first..last of series 7 (and three virtual ones for ``player`` on T1), to the end."""
    if player is not None:
        on_sale(hall)
        buy(hall, "T1", player, 3)
    else:
        result(hall.games.announce_sale(SELLER, 7))
    result(hall.games.sell_cards(SELLER, 7, first, last))
    result(hall.games.close_sale(CHIEF))
    draw_until(hall, "line")
    result(hall.games.close_prize(SELLER))
    if due(hall):
        pay(hall)
    draw_until(hall, "bingo")
    result(hall.games.close_prize(SELLER))
    result(hall.games.close_game(CHIEF))
    if due(hall):
        pay(hall)
    result(hall.games.collect_cards(CHIEF))


def of_game(hall: VirtualHall, game_id: str, kind: str) -> list[dict[str, Any]]:
    return [r.payload for r in hall.records() if r.type == kind and r.payload.get("game_id") == game_id]


@pytest.mark.req("R92.3", "R83.3-4")
def test_the_last_games_are_recalled_newest_first_as_the_journal_recorded_them(hall: VirtualHall) -> None:
    anna = hall.player("11111111A", 10_000)
    hall.terminal("T1")
    hall.balls.put_first([int(n) for n in layout(1).reshape(3, 9)[0] if n])  # V1-1 takes the line on ball 5
    play(hall, 1, 20, anna)
    play(hall, 21, 35)
    assert [g["number"] for g in recall(hall, DOOR)] == [2, 1]
    play(hall, 36, 50)
    before = len(hall.records())
    games = recall(hall, DOOR)
    assert len(hall.records()) == before  # a look-up journals nothing
    assert [g["number"] for g in games] == [3, 2, 1]  # the third game's end is seen at once
    for game in games:
        gid = game["game_id"]
        assert game["state"] == "closed"
        assert game["balls"] == [p["ball"] for p in of_game(hall, gid, "ball_drawn")]
        sold = of_game(hall, gid, "paper_cards_sold")
        assert [(s["series"], s["first"], s["last"], s["count"]) for s in game["series"]] == [
            (p["series"], p["first"], p["last"], p["count"]) for p in sold
        ]
        virtual = sum(p["last"] - p["first"] + 1 for p in of_game(hall, gid, "virtual_cards_bought"))
        assert game["virtual_cards"] == virtual == (3 if game["number"] == 1 else 0)
        (closed,) = of_game(hall, gid, "sale_closed")
        assert game["collection_cents"] == closed["collection_cents"] and game["cards_sold"] == closed["cards_sold"]
        paid = of_game(hall, gid, "prize_paid")
        assert [(p["prize"], p["ball_count"], p["amount_cents"], [w["card"] for w in p["winners"]],
                 [w["cents"] for w in p["winners"]]) for p in game["prizes"]] == [
            (p["prize"], p["ball_count"], p["amount_cents"], [c for c, _ in p["payments"]], [c for _, c in p["payments"]])
            for p in paid
        ]
        assert {p["pattern"] for p in game["prizes"]} == {"line", "bingo"}
        for prize in game["prizes"]:
            for winner in prize["winners"]:
                if winner["card"].startswith("900-"):
                    assert (winner["where"], winner["terminal"]) == ("terminal", "T1")
                    assert winner["shown_as"].startswith("V1-")
                else:
                    assert (winner["where"], winner["seller"]) == ("paper", "ana")
    (line,) = [p for p in games[-1]["prizes"] if p["prize"] == "line"]
    assert line["ball_count"] == 5 and ("900-1", "terminal", "V1-1") in [
        (w["card"], w["where"], w.get("shown_as")) for w in line["winners"]
    ]
    assert recall(hall, TABLE, 1) == games[:1]
    for bad in (0, 11, "3", True):
        with pytest.raises(DomainError, match="1 to 10 at a time"):
            recall(hall, CHIEF, bad)


@pytest.mark.req("R92.3")
def test_a_terminal_recalls_the_last_games_balls_and_winners_and_nothing_of_who_bought_them(
    hall: VirtualHall, gateway: TerminalGateway,  # noqa: F811
) -> None:
    anna = hall.player("11111111A", 10_000)
    hall.terminal("T1")
    play(hall, 1, 20, anna)
    wire = Wire(gateway, "T2", hall.terminal("T2"))
    result(wire.client.hello())  # nobody signed in: the last games are no one's secret
    before = len(hall.records())
    (shown,) = result(wire.client.recall())["games"]
    assert len(hall.records()) == before
    (staff_view,) = recall(hall, DOOR)
    assert shown["balls"] == staff_view["balls"] and shown["game_id"] == staff_view["game_id"]
    assert [(p["prize"], p["ball_count"], p["amount_cents"]) for p in shown["prizes"]] == [
        (p["prize"], p["ball_count"], p["amount_cents"]) for p in staff_view["prizes"]
    ]
    for prize, full in zip(shown["prizes"], staff_view["prizes"]):
        assert prize["cards"] == [w.get("shown_as", w["card"]) for w in full["winners"]]
    text = str(shown)
    assert "T1" not in text and "ana" not in text and anna not in text and "seller" not in text

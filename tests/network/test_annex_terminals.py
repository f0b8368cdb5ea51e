"""The hall-annex game on the terminals (R3.5.b): the gateway on both halls of a pair, in process.

A headless terminal (:class:`terminals.client.TerminalClient`) of each room, wired to its
hall's gateway, sees the joint game beside the hall's own (``joint_game``): where it
stands, the terminals' sale time, the main hall's balls (``joint_ball``), the cards in
play in both rooms and the prizes, the winners of both rooms with their hall; it buys
virtual cards of the joint game (``buy`` naming the ``joint`` game), watches them marked, and hears what its
winning card was credited (``joint_won``, R85.9).
"""

from __future__ import annotations

from pathlib import Path
import numpy as np
import pytest
from twisted.internet import defer

from hall_server.hall.pins import PinGuard
from hall_server.terminal_gateway.gateway import TerminalGateway, TerminalSession
from terminals.client import TerminalClient, TerminalError, to_go
from tests.audit.halls import CHIEF, SELLERS, TERMINALS
from tests.hall.conftest import result
from tests.hall.test_games import RULES
from tests.network.joint_halls import ANNEX, MAIN, JointHall, open_pair

PIN = "4821"


class Wire:
    """A headless terminal joined back to back with a session of its hall's gateway."""

    def __init__(self, gateway: TerminalGateway, terminal: str, token: str) -> None:
        self.client = TerminalClient(terminal, token)
        self.session = TerminalSession(gateway, self.client.message_received, lambda: None)
        self.client.send = self.session.message_received


def gateway_of(hall: JointHall, *, joint: bool = True) -> TerminalGateway:
    """The hall's gateway; without ``joint``, one of a hall that plays no hall-annex game."""
    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        return defer.succeed(hall.cashier.verify_pin(number, pin))

    pins = getattr(hall, "pins", None) or PinGuard(hall.core, hall.cashier)
    hall.pins = pins  # type: ignore[attr-defined]  # one guard a core
    return TerminalGateway(hall.core, hall.games, hall.virtual, hall.cashier, hall.clock, check_pin, hall.hall_id,
                           pins=pins, annex=hall.annex if joint else None, joint=hall.joint if joint else None)


def terminal(hall: JointHall, gateway: TerminalGateway, index: int, player: int | None) -> TerminalClient:
    wire = Wire(gateway, TERMINALS[index], f"token-{index}")
    result(wire.client.hello())
    if player is not None:
        result(wire.client.sign_in(hall.accounts[player], PIN))
    return wire.client


@pytest.mark.req("R82.13-16", "R93.1", "R85.9", "R92.11-12", "R92.8", "R93.10")
def test_a_terminal_of_each_room_buys_joint_cards_sees_the_main_hall_s_balls_and_the_winners_of_both(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    gateways = {MAIN: gateway_of(main), ANNEX: gateway_of(annex)}
    players = {MAIN: terminal(main, gateways[MAIN], 0, 0), ANNEX: terminal(annex, gateways[ANNEX], 0, 1)}
    watcher = terminal(annex, gateways[ANNEX], 1, None)
    (opened,) = result(main.annex.open_game(CHIEF))
    relay.pump()
    game_id = opened.payload["game_id"]
    seen = players[ANNEX].joint_game
    assert seen is not None and (seen["game_id"], seen["state"], seen["main"], seen["here"]) == (
        game_id, "selling", MAIN, ANNEX)
    assert seen["sale"] is None and seen["price_cents"] == 150
    with pytest.raises(TerminalError, match="sale time for terminals is over or has not begun"):
        result(players[ANNEX].buy(2, game="joint", game_id=game_id))
    stakes = {MAIN: 100, ANNEX: 50}
    for hall in (main, annex):
        result(hall.joint.open_sale(SELLERS[0], 90))
        client = players[hall.hall_id]
        assert client.joint_game is not None and client.joint_game["sale"]["closes_at_ms"] > hall.core.now_ms()
        credit = client.credit_cents
        bought = result(client.buy(3, stakes[hall.hall_id], game="joint", game_id=game_id))
        assert [c["card"] for c in bought["cards"]] == ["V1-1", "V1-2", "V1-3"]
        assert client.credit_cents == credit - 3 * 150 * stakes[hall.hall_id] // 100
        assert [c["card"] for c in client.joint_cards] == ["V1-1", "V1-2", "V1-3"] and client.joint_cards[0]["code"]
        result(hall.annex.sell_cards(SELLERS[0], 1001, 1, 2))
        result(hall.annex.close_sale(CHIEF))
        relay.pump()
    with pytest.raises(TerminalError, match="is closed in this room"):
        result(players[ANNEX].buy(1, game="joint", game_id=game_id))
    assert watcher.joint_game is not None and watcher.joint_game["cards_sold"] == 10
    sales = 3 * 150 + 3 * 75 + 2 * 2 * 150  # the virtual cards at 100% and 50%, two paper cards a room
    assert watcher.joint_game["sales_cents"] == sales
    assert watcher.joint_game["prizes"] == {"line": sales * 15 // 100, "bingo": sales * 55 // 100}
    # The main hall draws the annex's card V1-2 first: its room finds the bingo on ball 15.
    card = np.array(players[ANNEX].joint_cards[1]["cells"])
    numbers = [int(n) for n in card if n]
    main.balls.script = numbers + [b for b in range(1, 91) if b not in numbers]
    while not annex.game().bingo_won:
        result(main.annex.draw_ball(SELLERS[0]))
        relay.pump()
    assert players[ANNEX].joint_drawn == numbers == watcher.joint_drawn == players[MAIN].joint_drawn
    assert to_go(players[ANNEX].joint_cards[1]["cells"], set(numbers)) == (0, 0)
    shown = watcher.joint_game["winners"]
    assert {"pattern": "bingo", "ball_count": 15, "card": "V1-2", "hall": ANNEX, "terminal": TERMINALS[0],
            "cents": None} in shown
    result(main.annex.close_game(CHIEF))
    relay.pump()
    won = [w for w in players[ANNEX].joint_won if w["prize"] == "bingo"]
    assert won == [{"type": "joint_won", "v": 1, "seq": won[0]["seq"], "game_id": game_id, "card": "V1-2",
                    "prize": "bingo", "cents": won[0]["cents"]}] and won[0]["cents"] > 0
    assert players[ANNEX].credit_cents == annex.balance(annex.accounts[1])
    assert watcher.joint_game["over"] and watcher.joint_game["state"] == "closed"
    paid = [w for w in watcher.joint_game["winners"] if w["pattern"] == "bingo"]
    assert paid == [{"pattern": "bingo", "ball_count": 15, "card": "V1-2", "hall": ANNEX, "terminal": TERMINALS[0],
                     "cents": won[0]["cents"]}]
    assert players[MAIN].joint_won == [w for w in players[MAIN].joint_won if w["prize"] == "line"]


@pytest.mark.req("R82.13-16")
def test_a_joint_purchase_needs_a_player_signed_in_and_a_hall_that_plays_the_game(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    client = terminal(annex, gateway_of(annex), 0, None)
    with pytest.raises(TerminalError, match="sign in"):
        result(client.buy(1, account=annex.accounts[0], game="joint", game_id="hall-1.j1"))
    other = Wire(gateway_of(annex, joint=False), TERMINALS[1], "token-1").client
    result(other.hello())
    assert other.joint_game is None
    with pytest.raises(TerminalError, match="plays no hall-annex game"):
        result(other.buy(1, account=annex.accounts[0], game="joint", game_id="hall-1.j1"))

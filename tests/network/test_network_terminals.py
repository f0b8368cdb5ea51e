"""Terminals in the network game (R93.1, R93.6, R93.9-10, R92.8, R92.11): a headless terminal
buys through the gateway, sees the sale time, the balls, its cards, its prizes and the
link's state; a purchase sent again is charged once."""

from __future__ import annotations

import pytest

from terminals.client import TerminalError
from tests.hall.conftest import result
from tests.network.conftest import NetworkHall
from tests.terminals.test_gateway import PIN, Wire


def terminal(net: NetworkHall, name: str = "T1", document: str = "11111111A", credit: int = 2_000) -> tuple[Wire, str]:
    number = net.hall.player(document, credit, PIN)
    wire = Wire(net.gateway, name, net.hall.terminal(name))
    result(wire.client.hello())
    result(wire.client.sign_in(number, PIN))
    return wire, number


@pytest.mark.req("R93.1", "R93.6", "R92.8")
def test_a_terminal_sees_the_network_sale_buys_and_is_charged_once_when_it_asks_again(net: NetworkHall) -> None:
    wire, number = terminal(net)
    client = wire.client
    assert client.link_up is True and client.net_game["game_id"] == "net-1"
    assert client.net_game["state"] == "selling" and client.net_game["sale"]["closes_at_ms"] > net.hall.core.now_ms()
    bought = result(client.buy(3, 50, request="K1-a", game="network", game_id="net-1"))
    assert [c["card"] for c in bought["cards"]] == ["V1-1", "V1-2", "V1-3"] and bought["credit_cents"] == 1_850
    again = result(client.buy(3, 50, request="K1-a", game="network", game_id="net-1"))
    assert again["cards"] == bought["cards"] and net.balance(number) == 1_850
    result(client.sync())
    assert [c["card"] for c in client.net_cards] == ["V1-1", "V1-2", "V1-3"]


@pytest.mark.req("R93.8")
def test_a_refused_network_purchase_says_why_and_is_journaled(net: NetworkHall) -> None:
    wire, number = terminal(net, credit=100)
    before = len(net.hall.records())
    with pytest.raises(TerminalError, match="your credit is") as short:
        result(wire.client.buy(2, game="network", game_id="net-1"))
    (refused,) = net.hall.records()[before:]
    assert refused.type == "terminal_request_refused" and refused.payload["what"] == "net_buy"
    assert net.balance(number) == 100
    # The kiosk says it in the player's language from its reason and figures, as the hall game's.
    assert short.value.reason == "credit_short"
    assert short.value.params == {"quantity": 2, "stake_cents": 100, "amount_cents": 200, "credit_cents": 100}


@pytest.mark.req("R93.6")
def test_a_purchase_the_central_server_refuses_reaches_the_kiosk_with_the_central_reason(net: NetworkHall) -> None:
    """The series runs out at the central server: the terminal is told its code (``series_exhausted``),
    which the kiosk says in the player's language, and nothing is charged."""
    for n in range(6):
        wire, _ = terminal(net, f"T{n}", document=f"1111111{n}A", credit=9_600)
        result(wire.client.buy(96, game="network", game_id="net-1"))
    wire, number = terminal(net, "T9", document="22222222B", credit=9_600)
    with pytest.raises(TerminalError) as refused:
        result(wire.client.buy(30, game="network", game_id="net-1"))
    assert refused.value.code == "refused" and refused.value.reason == "series_exhausted", refused.value
    assert net.balance(number) == 9_600


@pytest.mark.req("R92.11-12", "R93.9", "R93.10", "R85.9")
def test_terminals_follow_the_draw_the_winners_and_are_told_when_the_link_is_lost_and_back(net: NetworkHall) -> None:
    wire, number = terminal(net, credit=9_600)
    client = wire.client
    result(client.buy(96, game="network", game_id="net-1"))
    net.central.close_sale()
    assert client.net_game["cards_sold"] == 96 and client.net_game["prizes"]["line"] > 0
    net.central.draw(11)
    assert client.net_drawn == [11]
    net.central.cut()
    assert client.link_up is False
    net.central.draw_until_closed()
    net.connect()
    assert client.link_up is True and client.net_drawn == net.central.games["net-1"].balls
    winners = client.net_game["winners"]
    assert winners and all(w["hall"] == "hall-1" and w["terminal"] == "T1" for w in winners)
    assert sum(w["cents"] for w in client.net_won) == sum(w["cents"] for w in winners)
    assert net.balance(number) == sum(w["cents"] for w in winners)

"""A hall with its network module and relay on a real SQLite journal, linked to a :class:`FakeCentral`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from hall_server.hall.cashier import player_account
from hall_server.network.module import NetworkModule, held_account, network_account
from hall_server.network.relay import NetworkRelay
from hall_server.terminal_gateway.gateway import TerminalGateway
from server_kit.journal.sql import Journal
from tests.hall.conftest import clock, journal, result  # noqa: F401  (fixtures)
from tests.network.fake_central import FakeCentral
from tests.terminals.conftest import VirtualHall, build_hall, prepare

HALL = "hall-1"


@dataclass
class NetworkHall:
    hall: VirtualHall
    network: NetworkModule
    relay: NetworkRelay
    gateway: TerminalGateway
    central: FakeCentral
    clock: Clock

    def reopened(self) -> "NetworkHall":
        """The same hall started again on its journal (a restart after ``kill -9``): nothing in memory survives."""
        self.relay.stop()
        again = build_network_hall(self.hall.journal, self.clock, self.central, recover=True)
        return again

    def balance(self, number: str) -> int:
        return self.hall.ledger.balance(player_account(number))

    def held(self, game_id: str = "net-1") -> int:
        return self.hall.ledger.balance(held_account(game_id))

    def owed(self, game_id: str = "net-1") -> int:
        """What the hall owes the network for the game: stakes captured less credits paid."""
        return self.hall.ledger.balance(network_account(game_id))

    def records(self, kind: str) -> list[Any]:
        return [r for r in self.hall.records() if r.type == kind]

    def connect(self) -> None:
        self.central.connect(self.relay)


def build_network_hall(journal: Journal, clock: Clock, central: FakeCentral, *, recover: bool = False,
                       gather_s: float = 0) -> NetworkHall:
    """The hall on ``journal``; ``gather_s``: how long its relay gathers purchases (0: a commit's go at once)."""
    hall = build_hall(journal, clock)
    network = NetworkModule(hall.core, hall.ledger, hall.cashier, HALL, purchase_checks=hall.virtual.purchase_checks)

    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        return defer.succeed(hall.cashier.verify_pin(number, pin))

    gateway = TerminalGateway(hall.core, hall.games, hall.virtual, hall.cashier, clock, check_pin, "Sala Test",
                              pins=hall.pins, responsible=hall.responsible, network=network)
    if recover:
        hall.core.recover()
    relay = NetworkRelay(network, HALL, clock, software="bingo-hall test", gather_s=gather_s)
    relay.listeners.append(gateway.network_link)
    return NetworkHall(hall, network, relay, gateway, central, clock)


@pytest.fixture
def central() -> FakeCentral:
    return FakeCentral(HALL)


def opened_network_hall(made: NetworkHall) -> NetworkHall:
    """``made`` with an open session and a desk, linked to a central server whose game net-1 is on sale."""
    prepare(made.hall)
    made.central.schedule("net-1")
    made.connect()
    made.central.open_sale("net-1")
    return made


@pytest.fixture
def net(journal: Journal, clock: Clock, central: FakeCentral) -> NetworkHall:
    """A hall with an open session and a desk, linked to a central server whose game net-1 is on sale."""
    return opened_network_hall(build_network_hall(journal, clock, central))

"""The sale's deadline kept at the halls' gates, with real processes (R93.6, R93.8; protocol version 3).

A real central server and two real hall servers linked over AMP in mutual TLS; hall-2's link
goes through a proxy in this test that holds every byte 1.5 s each way.  Just before the
sale's deadline the central server's process is stopped for 2 s (SIGSTOP, SIGCONT), so
what the halls send in the sale's last second is read after the deadline.  A terminal of
each hall buys one second before the deadline: each hall takes the purchase before its gate
closes and relays it, and the central server confirms both, although it reads them after
the deadline (their records say so: ``received_ms`` past it, ``at_gate``).  A terminal of each
hall buys again just after the deadline: its hall's gate has closed, the purchase is refused
there and charged nothing.  The sale closes once both halls said ``gate_closed``.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import defer, protocol, reactor

from hall_server.hall.cashier import player_account
from protocol.records.central import CentralPurchaseConfirmed, CentralPurchaseRefused, CentralSaleClosed
from server_kit.pki import export_bundle, init_authority, issue_certificate
from terminals.client import TerminalError
from tests.central_server.support import CentralProcess, config_text, until
from tests.network.processes import hall_toml
from tests.network.test_network_end_to_end import (
    LOAD_CENTS,
    PIN,
    Hall,
    Player,
    Staff,
    _central_game,
    _payload,
    hall_facts,
    journal_of,
    sleep,
)
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration]

HALLS = ("hall-1", "hall-2")
DELAY_S = 1.5
STALL_S = 2.0
OPENS_AFTER_MS = 40_000
SALE_MS = 20_000


class _Delayed(protocol.Protocol):
    """One side of a proxied connection: what it receives reaches the other side ``DELAY_S`` later, in order."""

    def __init__(self) -> None:
        self.peer: _Delayed | None = None
        self.queue: deque[tuple[float, bytes]] = deque()
        self.pending: list[bytes] = []  # received before the other side connected
        self.timer: Any = None

    def dataReceived(self, data: bytes) -> None:
        self.queue.append((reactor.seconds() + DELAY_S, data))
        if self.timer is None:
            self.timer = reactor.callLater(DELAY_S, self._flush)

    def _flush(self) -> None:
        self.timer = None
        now = reactor.seconds()
        while self.queue and self.queue[0][0] <= now + 0.001:
            _, data = self.queue.popleft()
            if self.peer is not None and self.peer.transport is not None:
                self.peer.transport.write(data)
            else:
                self.pending.append(data)
        if self.queue:
            self.timer = reactor.callLater(max(0.0, self.queue[0][0] - now), self._flush)

    def connectionLost(self, reason: Any = None) -> None:
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        if self.peer is not None and self.peer.transport is not None:
            reactor.callLater(DELAY_S, self.peer.transport.loseConnection)


class _Outgoing(_Delayed):
    def connectionMade(self) -> None:
        assert self.peer is not None
        for data in self.peer.pending:
            self.transport.write(data)
        self.peer.pending.clear()


class _Incoming(_Delayed):
    """A hall's connection: a connection to the central server is opened for it."""

    def connectionMade(self) -> None:
        outgoing = _Outgoing()
        outgoing.peer, self.peer = self, outgoing
        factory = protocol.ClientFactory()
        factory.buildProtocol = lambda addr: outgoing  # type: ignore[method-assign]
        reactor.connectTCP("127.0.0.1", self.factory.target, factory)  # type: ignore[attr-defined]


def delaying_proxy(target: int) -> Any:
    """A TCP proxy on loopback to ``target`` that holds every byte ``DELAY_S`` each way; its listening port."""
    factory = protocol.Factory.forProtocol(_Incoming)
    factory.target = target  # type: ignore[attr-defined]
    return reactor.listenTCP(0, factory, interface="127.0.0.1")


@pytest.mark.req("R93.6", "R93.8")
@pytest.mark.timeout(600)
@pytest_twisted.ensureDeferred
async def test_purchases_a_hall_took_before_its_gate_closed_are_confirmed_though_the_central_server_reads_them_late(
    tmp_path: Path,
) -> None:
    operator = tmp_path / "operator-pki"
    init_authority(operator, "Acme Bingo Network")
    issue_certificate(operator, "central", "central-a")
    central_home = tmp_path / "central"
    export_bundle(operator, "central-a", central_home / "pki")
    database = f"sqlite:///{central_home / 'central.sqlite3'}"
    (central_home / "central.toml").write_text(config_text(central_home, central_home / "pki", database, sale_ms=SALE_MS,
                                                           opens_after_ms=OPENS_AFTER_MS, halls=HALLS, cards=600))
    central = CentralProcess(central_home / "central.toml").start()
    proxy = delaying_proxy(central.port)
    halls: list[Hall] = []
    stopped = False
    try:
        for hall_id in HALLS:
            home = tmp_path / hall_id
            issue_certificate(operator, "server", hall_id)
            export_bundle(operator, hall_id, home / "pki")
            name = f"{hall_id}-K1"
            issue_certificate(operator, "terminal", name)
            export_bundle(operator, name, tmp_path / "bundles" / name)
            port = central.port if hall_id == "hall-1" else proxy.getHost().port  # hall-2 through the proxy
            (home / "hall.toml").write_text(hall_toml(hall_id, port))
            halls.append(Hall(hall_id, HallProcess(home), tmp_path / "bundles"))
        for hall in halls:
            hall.process.start()
        await until(lambda: all(h.linked() for h in halls), "every hall to link to the central server", 120)
        for index, hall in enumerate(halls):
            staff = Staff(hall.process)
            staff("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
            staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
            name = f"{hall.hall_id}-K1"
            token = staff("rosa", "enrol_terminal", terminal=name, place="row A")["result"]["token"]
            (admitted,) = staff("adam", "admit_visitor", name=f"Player {name}", document=f"{index + 1}1000000X",
                                birth_date="1980-01-01")["records"]
            visitor = _payload(hall.process, admitted["seq"])["number"]
            (opened,) = staff("carla", "open_player_account", visitor=visitor, medium="ticket", pin=PIN)["records"]
            account = _payload(hall.process, opened["seq"])["account"]
            staff("carla", "load_credit", account=account, amount_cents=LOAD_CENTS, desk="desk-1")
            player = Player(account, name, token)
            hall.players.append(player)
            await hall.attach(player)
        players = [h.players[0] for h in halls]
        await until(lambda: all(p.client and p.client.net_game and p.client.net_game["state"] == "selling"
                                for p in players), "the sale to open at every terminal", OPENS_AFTER_MS / 1000 + 60)
        closes = players[0].client.net_game["sale"]["closes_at_ms"] / 1000  # type: ignore[union-attr]
        wait = closes - 1.5 - reactor.seconds()
        assert wait > 0, "the sale closed before the test could stall the central server before its deadline"
        await sleep(wait)
        assert central.process is not None
        os.kill(central.process.pid, signal.SIGSTOP)  # the central server's reactor stalls, just before the deadline
        stopped = True
        await sleep(0.5)
        in_time = [players[k].client.buy(  # type: ignore[union-attr]
                       2, request=f"{players[k].terminal}-in-time", game="network", game_id="net-1") for k in range(2)]
        await sleep(closes + 0.3 - reactor.seconds())
        after = [players[k].client.buy(  # type: ignore[union-attr]
                     1, request=f"{players[k].terminal}-after", game="network", game_id="net-1")
                 .addErrback(lambda failure: failure.value) for k in range(2)]
        await sleep(closes + STALL_S - 1.5 - reactor.seconds())
        os.kill(central.process.pid, signal.SIGCONT)
        stopped = False
        refused = await defer.gatherResults(after)
        assert all(isinstance(r, TerminalError) for r in refused), refused
        confirmed = await defer.gatherResults(in_time)
        assert all(c for c in confirmed), confirmed
        await until(lambda: all(p.client.net_game and p.client.net_game["state"] != "selling" for p in players),  # type: ignore[union-attr]
                    "the sale to close at every terminal", 60)
    finally:
        if stopped and central.process is not None:
            os.kill(central.process.pid, signal.SIGCONT)
        for hall in halls:
            for player in hall.players:
                if player.socket is not None:
                    player.socket.close()
            hall.process.stop()
        central.stop()
        await proxy.stopListening()

    game = _central_game(central_home / "central.toml")
    decisions = {e.request_id: e for e in game.events if isinstance(e, (CentralPurchaseConfirmed, CentralPurchaseRefused))}
    close = next(e for e in game.events if isinstance(e, CentralSaleClosed))
    deadline_ms = int(closes * 1000)
    for hall in halls:
        facts = hall_facts(journal_of(hall.process.folder / "hall.sqlite3"))
        by_request = {request: facts["holds"][ids[0]] for (_, request), ids in facts["by_terminal_request"].items()}
        taken = by_request[f"{hall.hall_id}-K1-in-time"]
        assert taken["status"] == "bought", f"{hall.hall_id}: a purchase taken before its gate closed is confirmed"
        decision = decisions[taken["request_id"]]
        assert isinstance(decision, CentralPurchaseConfirmed)
        assert decision.received_ms is not None and decision.received_ms >= deadline_ms and decision.at_gate, (
            f"{hall.hall_id}: read after the deadline ({decision.received_ms} >= {deadline_ms}), taken at the gate")
        assert f"{hall.hall_id}-K1-after" not in by_request, "refused at the hall's gate: nothing held, nothing sent"
        account = player_account(hall.players[0].account)
        assert facts["balances"][account] == LOAD_CENTS - taken["captured"], f"{hall.hall_id}: charged once"
        assert facts["balances"].get("held:net-1", 0) == 0
    assert close.closed_at_ms >= max(d.received_ms or 0 for d in decisions.values())
    assert close.cards_in_play == 4

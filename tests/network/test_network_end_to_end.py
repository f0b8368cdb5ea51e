"""A whole network game across three real hall servers and a real central server (R92-R96).

One operator authority issues every certificate: the central server's, each hall's
``server`` certificate (named as its hall id; the hall serves its terminals and links to
the central server with it) and each terminal's.  The central server (``bingo central
serve``) and three halls (``bingo hall serve``, each with its own home) run as child
processes on loopback, linked over AMP in mutual TLS; each hall's staff set it up over
HTTPS, and headless terminals (``terminals/client.py``) buy on the hall's WebSocket.

During the sale hall-2 is killed with SIGKILL right after its terminals sent a burst of
purchases, and started again; its room chief runs the verification (R92.5e: a hall started
after a crash sells nothing before it passes), and its terminals reconnect and send the same
purchases again.
Terminals buy in the last second of the sale.  During the draw hall-3 is killed and
started again.  Then, from the journals the processes left:

* every purchase a terminal asked for is captured once or released with no charge, and
  what each hall captured is what the central server confirmed for it; no credit is held;
* the balls are the central server's, in order, in every hall;
* every credit the central server gave a hall (prizes, R85.9) is paid once, into the
  account of the player who bought the card;
* each player's balance is what was loaded, less what was captured, plus what was paid.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task

from central_server.config import load_config as load_central_config
from central_server.domain.game import CentralGame
from central_server.module import game_record
from central_server.store import load_series
from hall_server.hall.cashier import player_account
from protocol.chain import Record
from protocol.records.central import GAME_RECORDS
from protocol.records.central import CentralCardWon as CardWon
from protocol.records.central import CentralPurchaseConfirmed as PurchaseConfirmed
from protocol.records.central import CentralPurchaseRefused as PurchaseRefused
from server_kit.db.database import create
from server_kit.journal import table
from server_kit.pki import export_bundle, init_authority, issue_certificate
from terminals.client import TerminalCertificate, TerminalClient, TerminalError, connect
from tests.central_server.support import CentralProcess, config_text, until
from tests.network.processes import hall_toml
from tests.web.conftest import PASSWORD, HallProcess, HttpClient

pytestmark = [pytest.mark.integration]

HALLS = ("hall-1", "hall-2", "hall-3")
TERMINALS = ("K1", "K2")
LOAD_CENTS = 5_000
PIN = "4821"
#: The sale opens this long after the central server starts: time for three halls to start and link.
OPENS_AFTER_MS = 50_000
SALE_MS = 30_000


class Staff:
    """Staff sending commands to a hall; each helper's request ids are its own (a new helper
    after a restart never reuses one, which the hall would answer with the first result)."""

    def __init__(self, hall: HallProcess) -> None:
        self.hall = hall
        self.clients: dict[str, HttpClient] = {}
        self.counter = 0
        self.prefix = secrets.token_hex(4)

    def __call__(self, who: str, command: str, **args: Any) -> dict[str, Any]:
        if who not in self.clients:
            client = HttpClient(self.hall)
            status, answer = client.call("POST", "/login", {"name": who, "password": PASSWORD})
            assert status == 200, answer
            self.clients[who] = client
        self.counter += 1
        status, answer = self.clients[who].call(
            "POST", "/api/command", {"id": f"e{self.prefix}-{self.counter}", "command": command, "args": args})
        assert status == 200 and answer["ok"], answer
        return answer


def journal_of(database: Path) -> list[Record]:
    engine = create(f"sqlite:///{database}")
    try:
        return list(table.read(engine))
    finally:
        engine.dispose()


@dataclass
class Player:
    account: str
    terminal: str
    token: str
    client: TerminalClient | None = None
    socket: Any = None
    asked: list[tuple[str, int]] = field(default_factory=list)  # (request id, cards) as sent


@dataclass
class Hall:
    hall_id: str
    process: HallProcess
    bundles: Path
    players: list[Player] = field(default_factory=list)

    def url(self) -> str:
        return f"wss://localhost:{self.process.port}/kiosk/ws"

    async def attach(self, player: Player) -> TerminalClient:
        """A terminal (re)connected to the hall with its certificate, the player signed in."""
        client = TerminalClient(player.terminal, player.token, clock=reactor.seconds)
        tls = TerminalCertificate(self.bundles / player.terminal, player.terminal)
        player.socket = await connect(reactor, self.url(), client, tls)
        player.client = client
        await client.hello()
        await client.sign_in(player.account, PIN)
        return client

    def linked(self) -> bool:
        return b"Linked to central server" in self.process.output


def buy(player: Player, request: str, quantity: int) -> defer.Deferred[Any]:
    """A purchase in flight; the outcome (answer or refusal) is kept, a lost connection ignored."""
    assert player.client is not None
    player.asked.append((request, quantity))
    return player.client.buy(quantity, request=request, game="network", game_id="net-1").addErrback(
        lambda failure: failure.value if failure.check(TerminalError) else None)


async def sleep(seconds: float) -> None:
    await task.deferLater(reactor, seconds, lambda: None)


def hall_facts(records: list[Record]) -> dict[str, Any]:
    """What a hall's journal says of the network game: holds, balls, credits, balances."""
    holds: dict[str, dict[str, Any]] = {}
    by_terminal_request: dict[tuple[str, str], list[str]] = {}
    balls: list[int] = []
    credits: list[dict[str, Any]] = []
    balances: dict[str, int] = {}
    for record in records:
        p = record.payload
        if record.type == "network_credit_held":
            holds[p["request_id"]] = {**p, "status": "held"}
            by_terminal_request.setdefault((p["terminal"], p["terminal_request"]), []).append(p["request_id"])
        elif record.type == "network_cards_bought":
            holds[p["request_id"]].update(status="bought", captured=p["amount_cents"], first_card=p["first_card"])
        elif record.type == "network_credit_released":
            holds[p["request_id"]].update(status="released", code=p["refusal_code"])
        elif record.type == "network_ball_drawn":
            assert p["ball_count"] == len(balls) + 1
            balls.append(p["ball"])
        elif record.type == "network_credit_paid":
            credits.append(p)
        elif record.type == "posting":
            for account, cents in p["debits"]:
                balances[account] = balances.get(account, 0) - cents
            for account, cents in p["credits"]:
                balances[account] = balances.get(account, 0) + cents
    return {"holds": holds, "by_terminal_request": by_terminal_request, "balls": balls, "credits": credits,
            "balances": balances}


@pytest.mark.req("R93.6", "R93.8", "R85.9", "R92.10", "R96.4")
@pytest_twisted.ensureDeferred
async def test_a_network_game_across_three_halls_with_halls_killed_during_the_sale_and_the_draw(tmp_path: Path) -> None:
    rng = random.Random(12)
    operator = tmp_path / "operator-pki"
    init_authority(operator, "Acme Bingo Network")
    issue_certificate(operator, "central", "central-a")
    central_home = tmp_path / "central"
    export_bundle(operator, "central-a", central_home / "pki")
    database = f"sqlite:///{central_home / 'central.sqlite3'}"
    (central_home / "central.toml").write_text(config_text(central_home, central_home / "pki", database, sale_ms=SALE_MS,
                                                           opens_after_ms=OPENS_AFTER_MS, halls=HALLS, cards=600))
    central = CentralProcess(central_home / "central.toml").start()
    halls: list[Hall] = []
    try:
        for hall_id in HALLS:
            home = tmp_path / hall_id
            issue_certificate(operator, "server", hall_id)
            export_bundle(operator, hall_id, home / "pki")
            for terminal in TERMINALS:
                name = f"{hall_id}-{terminal}"
                issue_certificate(operator, "terminal", name)
                export_bundle(operator, name, tmp_path / "bundles" / name)
            (home / "hall.toml").write_text(hall_toml(hall_id, central.port))
            halls.append(Hall(hall_id, HallProcess(home), tmp_path / "bundles"))
        for hall in halls:
            hall.process.start()
        await until(lambda: all(h.linked() for h in halls), "every hall to link to the central server", 120)

        for hall in halls:
            staff = Staff(hall.process)
            staff("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
            staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
            for index, terminal in enumerate(TERMINALS):
                name = f"{hall.hall_id}-{terminal}"
                token = staff("rosa", "enrol_terminal", terminal=name, place="row A")["result"]["token"]
                document = f"{HALLS.index(hall.hall_id) + 1}{index + 1}000000X"
                (admitted,) = staff("adam", "admit_visitor", name=f"Player {name}", document=document, birth_date="1980-01-01")["records"]
                visitor = _payload(hall.process, admitted["seq"])["number"]
                (opened,) = staff("carla", "open_player_account", visitor=visitor, medium="ticket", pin=PIN)["records"]
                account = _payload(hall.process, opened["seq"])["account"]
                staff("carla", "load_credit", account=account, amount_cents=LOAD_CENTS, desk="desk-1")
                player = Player(account, name, token)
                hall.players.append(player)
                await hall.attach(player)

        everybody = [p for h in halls for p in h.players]
        await until(lambda: all(p.client and p.client.net_game and p.client.net_game["state"] == "selling"
                                for p in everybody), "the sale to open at every terminal", OPENS_AFTER_MS / 1000 + 60)
        # Every terminal buys a few times while the sale is open.
        for round_ in range(2):
            await defer.gatherResults([buy(p, f"{p.terminal}-r{round_}", rng.randint(1, 6)) for p in everybody])

        # hall-2 is killed right after a burst its terminals sent, and comes back.
        hall_2 = halls[1]
        for player in hall_2.players:
            buy(player, f"{player.terminal}-burst", 3)  # its answer may die with the hall
        await sleep(rng.uniform(0.0, 0.15))
        hall_2.process.kill()
        await defer.DeferredList([p.socket.closed for p in hall_2.players])
        hall_2.process.start()
        await until(hall_2.linked, "hall-2 to link again", 120)
        # Started after a crash, the hall sells nothing until its room chief's verification passes (R92.5e).
        Staff(hall_2.process)("rosa", "run_verification", date="")
        for player in hall_2.players:
            client = await hall_2.attach(player)
            for request, quantity in list(player.asked):  # each purchase sent again, with its id
                outcome = await client.buy(quantity, request=request, game="network", game_id="net-1").addErrback(
                    lambda f: f.value)
                assert not isinstance(outcome, Exception) or isinstance(outcome, TerminalError), outcome

        # The last second of the sale: every terminal buys; some just before the deadline, some just after.
        closes = max(p.client.net_game["sale"]["closes_at_ms"] for p in everybody if p.client and p.client.net_game)
        wait = (closes - 700) / 1000 - reactor.seconds()
        assert wait > 0, "the sale closed before the halls could buy at its end"
        await sleep(wait)
        last = [buy(p, f"{p.terminal}-last", 2) for p in everybody]
        await sleep(1.2)
        late = [buy(p, f"{p.terminal}-late", 1) for p in everybody]
        await defer.DeferredList(last + late)

        # hall-3 is killed during the draw and comes back; it catches up on what it missed.
        hall_3 = halls[2]
        await until(lambda: len(hall_3.players[0].client.net_drawn) >= 3, "three balls at hall-3", 60)
        hall_3.process.kill()
        await sleep(2.5)
        hall_3.process.start()
        await until(hall_3.linked, "hall-3 to link again", 120)
        for player in hall_3.players:
            await hall_3.attach(player)
        await until(lambda: all(p.client.net_game and p.client.net_game["state"] == "closed" for p in everybody),
                    "the game to end at every terminal", 240)
    finally:
        for hall in halls:
            for player in hall.players:
                if player.socket is not None:
                    player.socket.close()
            hall.process.stop()
        central.stop()

    central_game = _central_game(central_home / "central.toml")
    assert str(central_game.phase) == "closed"
    decisions = {(e.hall_id, e.request_id): e for e in central_game.events
                 if isinstance(e, (PurchaseConfirmed, PurchaseRefused))}
    won = [e for e in central_game.events if isinstance(e, CardWon)]
    assert won and central_game.balls
    last_second: list[str] = []
    for hall in halls:
        facts = hall_facts(journal_of(hall.process.folder / "hall.sqlite3"))
        for (terminal, request), (request_id,) in facts["by_terminal_request"].items():
            hold = facts["holds"][request_id]
            if request.endswith("-late"):
                assert hold["status"] == "released", f"{request}, after the deadline, is charged nothing (R93.8)"
            if request.endswith("-last"):
                last_second.append(hold["status"])
        assert facts["balls"] == central_game.balls, f"{hall.hall_id} shows the central server's balls"
        assert facts["balances"].get("held:net-1", 0) == 0, f"{hall.hall_id} holds no credit after the sale"
        for (terminal, request), holds in facts["by_terminal_request"].items():
            assert len(holds) == 1, f"{hall.hall_id}: {terminal}'s {request} made one hold"
        for request_id, hold in facts["holds"].items():
            decision = decisions.get((hall.hall_id, request_id))
            if hold["status"] == "bought":
                assert isinstance(decision, PurchaseConfirmed) and decision.amount_cents == hold["captured"]
            else:
                assert hold["status"] == "released", f"{hall.hall_id}: {request_id} is decided"
                assert not isinstance(decision, PurchaseConfirmed), f"{request_id} refused here, confirmed there"
        confirmed = [d for (h, _), d in decisions.items() if h == hall.hall_id and isinstance(d, PurchaseConfirmed)]
        assert sorted(d.request_id for d in confirmed) == sorted(
            r for r, h in facts["holds"].items() if h["status"] == "bought"), "every confirmation was captured"
        # Every prize of this hall's cards credited once, to the player who bought the card.
        mine = [w for w in won if w.hall_id == hall.hall_id]
        assert sorted(c["seq"] for c in facts["credits"]) == sorted(w.credit_seq for w in mine)
        for player in hall.players:
            account = player_account(player.account)
            captured = sum(h["captured"] for h in facts["holds"].values()
                           if h["status"] == "bought" and h["account"] == account)
            paid = sum(c["amount_cents"] for c in facts["credits"] if c["account"] == account)
            assert facts["balances"][account] == LOAD_CENTS - captured + paid, f"{player.terminal}'s money"
        bought = [h for h in facts["holds"].values() if h["status"] == "bought"]
        assert facts["balances"].get("network:net-1", 0) == sum(h["captured"] for h in bought) - sum(
            c["amount_cents"] for c in facts["credits"])
    assert "bought" in last_second, "purchases in the last second of the sale are confirmed"
    killed = hall_facts(journal_of(halls[1].process.folder / "hall.sqlite3"))
    assert any(h["status"] == "bought" for h in killed["holds"].values())


def _payload(hall: HallProcess, seq: int) -> dict[str, Any]:
    for record in journal_of(hall.folder / "hall.sqlite3"):
        if record.seq == seq:
            return record.payload
    raise AssertionError(f"no record {seq}")


def _central_game(config_path: Path) -> CentralGame:
    config = load_central_config(config_path)
    engine = create(config.database_url)
    try:
        events = [game_record(r) for r in table.read(engine)
                  if r.type in GAME_RECORDS]
        library = load_series(engine)
    finally:
        engine.dispose()
    return CentralGame.replay(events, library["V1"])

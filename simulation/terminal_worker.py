"""Many headless terminals in one process, buying cards of the network games at random.

``python -m simulation.terminal_worker SPEC.json`` reads the terminals it runs (each
with its hall's address, its enrolment token and its player's account and PIN) and
how they buy, and runs them all on one reactor:

* each terminal connects to its hall over ``wss://`` with its own certificate of the
  operator's authority, says ``hello`` and signs its player in; a connection that
  drops (a hall killed and started again) is opened again after a short pause;
* when a network game's sale opens, each terminal plans a few purchases of a random
  number of cards at a random stake, at random moments of the sale (``random``) or
  in its last seconds (``burst``); a purchase whose answer was lost with the
  connection is sent again, with the same request id, once the terminal is back;
* every ball of a network game is noted with the moment the terminal received it.

When every terminal is signed in it prints ``ready``.  On SIGTERM it stops buying,
waits a bounded time for the answers still owed, writes what it saw to the spec's
``out`` file (each request with its outcome, each ball's arrival times) and exits.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twisted.internet import defer, task
from twisted.internet.error import ConnectionLost
from twisted.python.failure import Failure

from terminals.client import ClientSocket, TerminalCertificate, TerminalClient, TerminalError, connect

#: Pause before a terminal connects again after its connection dropped or failed.
RECONNECT_S = 0.5
#: How long a stopping worker waits for the answers still owed.
SETTLE_S = 20.0
#: How long a terminal waits for its connection, its hello's answer and its sign-in's before it connects again.
ANSWER_S = 60.0
#: Sessions of one worker being opened at once (TLS handshake, hello, the PIN's check at sign-in).
OPENING = 16
#: A purchase is planned at least this long before the sale's close (hall clock).
MARGIN_MS = 150


class SimulatedTerminal(TerminalClient):
    """A terminal that keeps each network game's balls by game and the moment each arrived."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pictures: list[dict[str, Any]] = []
        self.ball_times: list[tuple[str, int, float]] = []  # (game, ball count, arrival in s)

    def _on_net_game(self, message: dict[str, Any]) -> None:
        super()._on_net_game(message)
        if message["game"] is not None:
            self.pictures.append(message["game"])

    def _on_net_ball(self, message: dict[str, Any]) -> None:
        super()._on_net_ball(message)
        self.ball_times.append((message["game_id"], message["ball_count"], self.clock()))

    def connection_lost(self) -> None:
        """The socket closed: every request still waiting fails (its answer will not come on it)."""
        waiting, self._waiting, self._hello = list(self._waiting.values()), {}, None
        for answer in waiting:
            if not answer.called:  # one that timed out was answered by its timeout
                answer.errback(Failure(ConnectionLost("the connection to the hall closed")))


@dataclass
class Purchase:
    request: str
    game_id: str
    quantity: int
    stake_pct: int
    due_s: float
    sends: int = 0
    sent_at_s: float | None = None
    #: planned; sent (due, and sent when ``sends`` > 0); confirmed; refused; not_sent (not due
    #: when the worker stopped); unsent (due while the terminal was away, and it never came back).
    outcome: str = "planned"
    answer: dict[str, Any] = field(default_factory=dict)

    def report(self, terminal: "Terminal") -> dict[str, Any]:
        return {
            "request": self.request, "hall": terminal.hall, "terminal": terminal.terminal_id,
            "account": terminal.account, "game_id": self.game_id, "quantity": self.quantity,
            "stake_pct": self.stake_pct, "sends": self.sends,
            "sent_at_ms": None if self.sent_at_s is None else round(self.sent_at_s * 1000, 1),
            "outcome": "unanswered" if self.outcome == "sent" else self.outcome, **self.answer,
        }  # fmt: skip


class Terminal:
    """One terminal's connection, kept up, and its purchases."""

    def __init__(self, reactor: Any, spec: dict[str, Any], entry: dict[str, Any], tls: TerminalCertificate,
                 rng: random.Random, opening: defer.DeferredSemaphore) -> None:
        self.reactor = reactor
        self.opening = opening
        self.spec = spec
        self.hall = entry["hall"]
        self.url = entry["url"]
        self.terminal_id = entry["terminal"]
        self.token = entry["token"]
        self.account = entry["account"]
        self.pin = entry["pin"]
        self.tls = tls
        self.rng = rng
        self.client: SimulatedTerminal | None = None
        self.socket: ClientSocket | None = None
        self.signed_in = False
        self.stopping = False
        self.planned: set[str] = set()
        self.purchases: list[Purchase] = []
        self.ball_times: list[tuple[str, int, float]] = []
        self.connections = 0
        self.failures = 0  # sessions that could not be opened (the hall away, or no answer)
        self.last_failure: str | None = None
        self.ready: defer.Deferred[None] = defer.Deferred()

    # --- The connection -------------------------------------------------------------

    async def keep_connected(self) -> None:
        while not self.stopping:
            try:
                await self._session()
            except Exception as error:
                # The hall is away, refused the session or did not answer: close it, try again after the pause.
                self.failures += 1
                self.last_failure = f"{error.__class__.__name__}: {error}"[:200]
                if self.socket is not None:
                    self.socket.close()
            self.signed_in = False
            if self.client is not None:
                self.ball_times += self.client.ball_times
                self.client.ball_times = []
            if not self.stopping:
                await task.deferLater(self.reactor, RECONNECT_S * (1 + self.rng.random()), lambda: None)

    async def _session(self) -> None:
        client = SimulatedTerminal(self.terminal_id, self.token, clock=self.reactor.seconds)
        self.client = client
        await self.opening.acquire()  # a few sessions open at once: a thousand handshakes at once time out
        try:
            self.socket = await connect(self.reactor, self.url, client, self.tls).addTimeout(ANSWER_S, self.reactor)
            closed = self.socket.closed
            closed.addCallback(lambda _: client.connection_lost())
            self.connections += 1
            await client.hello().addTimeout(ANSWER_S, self.reactor)
            await client.sign_in(self.account, self.pin).addTimeout(ANSWER_S, self.reactor)
        finally:
            self.opening.release()
        self.signed_in = True
        if not self.ready.called:
            self.ready.callback(None)
        self.look(client.net_game)
        for purchase in self.purchases:
            if purchase.outcome == "sent":
                self.send(purchase)  # its answer was lost with the connection: asked again, same id
        await closed

    # --- Buying ------------------------------------------------------------------------

    def look(self, game: dict[str, Any] | None) -> None:
        """Plan this terminal's purchases in a game whose sale is open, once per game."""
        if self.client is not None:
            for picture in self.client.pictures:
                self._plan(picture)
            self.client.pictures = []
        if game is not None:
            self._plan(game)

    def _plan(self, game: dict[str, Any]) -> None:
        if game["state"] != "selling" or game["game_id"] in self.planned or self.stopping:
            return
        if not game["game_id"].startswith(self.spec["game_prefix"]):
            return
        self.planned.add(game["game_id"])
        now = self.reactor.seconds()
        closes = game["sale"]["closes_at_ms"] / 1000
        if self.spec["mode"] == "burst":
            start = max(now, closes - self.spec["burst_ms"] / 1000)
        else:
            start = now
        end = max(start, closes - MARGIN_MS / 1000)
        low, high = self.spec["buys"]
        for k in range(self.rng.randint(low, high)):
            purchase = Purchase(
                request=f"{self.terminal_id}-{game['game_id']}-{k}"[:64], game_id=game["game_id"],
                quantity=self.rng.randint(*self.spec["quantities"]), stake_pct=self.rng.choice(self.spec["stakes"]),
                due_s=self.rng.uniform(start, end),
            )
            self.purchases.append(purchase)
            self.reactor.callLater(max(0.0, purchase.due_s - now), self._due, purchase)

    def _due(self, purchase: Purchase) -> None:
        if self.stopping or purchase.outcome != "planned":
            return
        purchase.outcome = "sent"
        if self.signed_in:
            self.send(purchase)
        # else: sent once the terminal is back (keep_connected resends every "sent" purchase)

    def send(self, purchase: Purchase) -> None:
        client = self.client
        if client is None:
            return
        purchase.sends += 1
        if purchase.sent_at_s is None:
            purchase.sent_at_s = self.reactor.seconds()

        def bought(message: dict[str, Any]) -> None:
            if purchase.outcome != "sent":
                return
            cards = message["cards"]
            purchase.outcome = "confirmed"
            purchase.answer = {
                "cards": len(cards), "stake_cents": cards[0]["stake_cents"] if cards else 0,
                "amount_cents": sum(c["stake_cents"] for c in cards),
                "first_card": cards[0]["number"] if cards else None,
                "answered_at_ms": round(self.reactor.seconds() * 1000, 1),
            }

        def refused(failure: Failure) -> None:
            if purchase.outcome != "sent":
                return
            error = failure.value
            if isinstance(error, TerminalError):
                purchase.outcome = "refused"
                purchase.answer = {"code": error.code, "message": str(error)[:200],
                                   "answered_at_ms": round(self.reactor.seconds() * 1000, 1)}

        client.buy(purchase.quantity, purchase.stake_pct, request=purchase.request, game="network",
                   game_id=purchase.game_id).addCallbacks(bought, refused)

    def owed(self) -> int:
        return sum(1 for p in self.purchases if p.outcome == "sent")

    def watch(self) -> None:
        """Look for newly opened sales (called often)."""
        if self.signed_in and self.client is not None:
            self.look(None)


# --- The worker process ---------------------------------------------------------------


def balls_report(terminals: list[Terminal]) -> dict[str, dict[str, list[float]]]:
    """Each game's ball (by count): the arrival time at every terminal that received it, in ms."""
    balls: dict[str, dict[str, list[float]]] = {}
    for terminal in terminals:
        times = terminal.ball_times + (terminal.client.ball_times if terminal.client else [])
        for game_id, count, at in times:
            balls.setdefault(game_id, {}).setdefault(str(count), []).append(round(at * 1000, 1))
    return balls


async def run(reactor: Any, spec: dict[str, Any]) -> None:
    rng = random.Random(spec["seed"])
    bundle = Path(spec["bundle"])
    opening = defer.DeferredSemaphore(OPENING)
    terminals = [Terminal(reactor, spec, entry, TerminalCertificate(bundle, entry["terminal"]),
                          random.Random(rng.random()), opening) for entry in spec["terminals"]]
    for terminal in terminals:
        defer.ensureDeferred(terminal.keep_connected())
    def watch_all() -> None:
        for terminal in terminals:
            terminal.watch()

    watcher = task.LoopingCall(watch_all)
    watcher.clock = reactor
    watcher.start(0.05, now=False)
    defer.gatherResults([t.ready for t in terminals]).addCallback(lambda _: _say("ready"))

    async def finish() -> None:
        watcher.stop()
        deadline = reactor.seconds() + spec.get("settle_s", SETTLE_S)
        for terminal in terminals:
            for purchase in terminal.purchases:
                if purchase.outcome == "planned":
                    purchase.outcome = "not_sent"
        while any(t.owed() for t in terminals) and reactor.seconds() < deadline:
            await task.deferLater(reactor, 0.1, lambda: None)
        for terminal in terminals:
            terminal.stopping = True
            if terminal.socket is not None:
                terminal.socket.close()
            for purchase in terminal.purchases:
                if purchase.outcome == "sent" and purchase.sends == 0:
                    # Due while the terminal was away and never sent: the hall never heard of it, nobody was told.
                    purchase.outcome = "unsent"
        report = {
            "purchases": [p.report(t) for t in terminals for p in t.purchases if p.outcome not in ("not_sent", "unsent")],
            "not_sent": sum(1 for t in terminals for p in t.purchases if p.outcome == "not_sent"),
            "unsent": sum(1 for t in terminals for p in t.purchases if p.outcome == "unsent"),
            "connections": {t.terminal_id: t.connections for t in terminals},
            "away": {t.terminal_id: {"failed_sessions": t.failures, "last_failure": t.last_failure,
                                     "unsent": sum(1 for p in t.purchases if p.outcome == "unsent")}
                     for t in terminals if t.failures or not t.signed_in},
            "balls": balls_report(terminals),
        }
        Path(spec["out"]).write_text(json.dumps(report))

    reactor.addSystemEventTrigger("before", "shutdown", lambda: defer.ensureDeferred(finish()))


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> None:
    from twisted.internet import reactor

    spec = json.loads(Path(argv[0]).read_text())
    reactor.callWhenRunning(lambda: defer.ensureDeferred(run(reactor, spec)))
    reactor.run()


if __name__ == "__main__":
    main(sys.argv[1:])

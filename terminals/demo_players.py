"""Headless players for the hall's demo (``bingo hall serve --demo``): one
:class:`~terminals.client.TerminalClient` per enrolled demo terminal, over the hall's own
TLS port with that terminal's certificate, signed in with a demo player's account and
PIN, buying virtual cards whenever the terminals' sale of a game is open.

The hall's demo starts this program as a child process (``python -m
terminals.demo_players``) and writes one JSON line to its standard input::

    {"url": "wss://localhost:8443/kiosk/ws",
     "players": [{"terminal": "demo-1", "token": "...", "account": "...", "pin": "2468",
                  "bundle": "var/terminal-certs/demo-1"}, ...]}

It runs until its standard input closes (the hall stopped), and says what it does one
line at a time on its standard output.  It decides nothing: every purchase is a
request the hall may refuse, and a refusal is said and the player waits for the next game.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.internet import defer, task
from twisted.python.failure import Failure

from terminals.client import ClientSocket, TerminalCertificate, TerminalClient, TerminalError, connect

#: Cards one player buys in a game, at least and at most (R83.7 allows 96): with the
#: demo's 120 paper cards a game, the terminals hold about a third of the cards in play.
FEWEST_CARDS = 12
MOST_CARDS = 30
#: The stakes the demo players choose from, in percent of the card's value (R82.15).
STAKES = (100, 100, 100, 75, 50)
#: Seconds before a dropped player connects again.
RECONNECT_S = 2.0


def say(text: str) -> None:
    print(text, flush=True)


@dataclass
class PlayerSpec:
    terminal: str
    token: str
    account: str
    pin: str
    bundle: Path


class DemoPlayer:
    """One terminal's player: connect, sign in, buy in every game's terminal sale, reconnect."""

    def __init__(self, reactor: Any, url: str, spec: PlayerSpec, rng: random.Random) -> None:
        self.reactor = reactor
        self.url = url
        self.spec = spec
        self.rng = rng
        self.tls = TerminalCertificate(spec.bundle, spec.terminal)
        self.client: TerminalClient | None = None
        self.bought_in: set[str] = set()  # the games this player bought cards in
        self.stopped = False

    @defer.inlineCallbacks
    def play(self):  # type: ignore[no-untyped-def]
        """Connect and sign in; when the connection ends, do it again."""
        while not self.stopped:
            client = _WatchingClient(self.spec.terminal, self.spec.token, clock=self.reactor.seconds,
                                     on_game=self.game_changed)
            self.client = client
            try:
                socket: ClientSocket = yield connect(self.reactor, self.url, client, self.tls)
                yield client.hello()
                yield client.sign_in(self.spec.account, self.spec.pin)
                say(f"{self.spec.terminal}: signed in, credit {euros(client.credit_cents or 0)}")
                self.game_changed()
                yield socket.closed
                say(f"{self.spec.terminal}: connection closed")
            except (TerminalError, OSError) as error:
                say(f"{self.spec.terminal}: {error}")
            except Exception as error:  # a refused handshake, TLS: said, and tried again
                say(f"{self.spec.terminal}: cannot connect ({error.__class__.__name__}: {error})")
            self.client = None
            yield task.deferLater(self.reactor, RECONNECT_S, lambda: None)

    def game_changed(self) -> None:
        """The game's picture changed: buy once its terminal sale is open, after a moment's thought."""
        client = self.client
        game = client.game if client is not None else None
        if client is None or client.player is None or game is None or game["game_id"] in self.bought_in:
            return
        sale = game.get("sale")
        now_ms = int(self.reactor.seconds() * 1000)
        if game["state"] != "selling" or sale is None or not sale["opens_at_ms"] <= now_ms < sale["closes_at_ms"]:
            return
        self.bought_in.add(game["game_id"])
        self.reactor.callLater(self.rng.uniform(0.2, 1.5), self.buy, client, game["game_id"])

    def buy(self, client: TerminalClient, game_id: str) -> None:
        if client is not self.client:
            return  # the connection it was for has ended
        quantity, stake = self.rng.randint(FEWEST_CARDS, MOST_CARDS), self.rng.choice(STAKES)

        def bought(answer: dict[str, Any]) -> None:
            cards = answer["cards"]
            say(f"{self.spec.terminal}: bought {len(cards)} card(s) {cards[0]['card']} to {cards[-1]['card']} "
                f"at {stake}% in game {game_id}, credit {euros(answer['credit_cents'])}")

        def refused(failure: Failure) -> None:
            say(f"{self.spec.terminal}: purchase refused: {failure.getErrorMessage()}")

        client.buy(quantity, stake).addCallbacks(bought, refused)


class _WatchingClient(TerminalClient):
    """A terminal client that tells its player when the game's picture changes."""

    def __init__(self, terminal_id: str, token: str, *, clock: Any, on_game: Any) -> None:
        super().__init__(terminal_id, token, clock=clock)
        self.on_game = on_game

    def _on_game(self, message: dict[str, Any]) -> None:
        super()._on_game(message)
        self.on_game()

    def _on_won(self, message: dict[str, Any]) -> None:
        super()._on_won(message)
        say(f"{self.terminal_id}: card {message['card']} won the {message['prize']}: {euros(message['cents'])} "
            "credited to the account")


def euros(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d} €"


def read_players(line: str) -> tuple[str, list[PlayerSpec]]:
    """The URL and the players from the hall's JSON line."""
    data = json.loads(line)
    specs = [PlayerSpec(p["terminal"], p["token"], p["account"], p["pin"], Path(p["bundle"])) for p in data["players"]]
    return str(data["url"]), specs


def main() -> None:
    from twisted.internet import reactor as installed

    reactor: Any = installed  # the process's one reactor: threads, processes, TLS

    line = sys.stdin.readline()
    if not line.strip():
        return
    url, specs = read_players(line)
    rng = random.Random()
    players = [DemoPlayer(reactor, url, spec, rng) for spec in specs]

    def until_stdin_closes() -> None:
        sys.stdin.read()  # returns when the hall closes the pipe
        reactor.callFromThread(reactor.stop)

    threading.Thread(target=until_stdin_closes, daemon=True).start()
    for player in players:
        reactor.callWhenRunning(player.play)
    reactor.run()


if __name__ == "__main__":
    main()

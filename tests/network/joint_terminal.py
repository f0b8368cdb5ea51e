"""A headless player terminal in a process of its own, driven one JSON line at a time.

``python -m tests.network.joint_terminal URL BUNDLE TERMINAL TOKEN ACCOUNT PIN`` connects
a :class:`terminals.client.TerminalClient` to the hall's ``wss://`` kiosk socket with the
terminal's certificate (``BUNDLE``, as ``bingo pki bundle`` writes it), says hello and
signs the player in, then prints ``{"event": "ready"}``.  A connection lost (the hall
killed) is made again, as a kiosk does, every half second until the hall answers; each
new one prints ``{"event": "reconnected"}``.

It reads one command a line on stdin and prints one answer a line on stdout:

* ``{"do": "picture"}``: what the terminal shows of the hall-annex game (``joint_game``,
  ``joint_cards``, ``joint_drawn``, ``joint_won``) and the credit;
* ``{"do": "buy", "game_id": ..., "quantity": ..., "stake_pct": ..., "request": ...}``:
  a ``buy`` in the joint game, answered ``{"bought": [cards], "credit_cents": ...}`` or ``{"refused": reason}``;
* ``{"do": "quit"}``.

The hall-annex end-to-end test runs one in each hall (tests/network/test_annex_end_to_end.py),
since its own process drives the browsers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from twisted.internet import defer, reactor, stdio, task
from twisted.protocols.basic import LineReceiver
from twisted.python.failure import Failure

from terminals.client import ClientSocket, TerminalCertificate, TerminalClient, TerminalError, connect


class Driver(LineReceiver):
    delimiter = b"\n"

    def __init__(self, url: str, bundle: Path, terminal: str, token: str, account: str, pin: str) -> None:
        self.url, self.terminal, self.token, self.account, self.pin = url, terminal, token, account, pin
        self.tls = TerminalCertificate(bundle, terminal)
        self.client: TerminalClient | None = None
        self.socket: ClientSocket | None = None
        self.connected = False

    def connectionMade(self) -> None:
        defer.ensureDeferred(self.attach("ready"))

    def say(self, message: dict[str, Any]) -> None:
        self.sendLine(json.dumps(message, separators=(",", ":")).encode())

    async def attach(self, event: str) -> None:
        """Connect, say hello and sign in, again and again until the hall answers."""
        while True:
            client = TerminalClient(self.terminal, self.token, clock=reactor.seconds)  # type: ignore[attr-defined]
            try:
                socket = await connect(reactor, self.url, client, self.tls)
                await client.hello()
                await client.sign_in(self.account, self.pin)
            except Exception:  # the hall is not back yet
                await task.deferLater(reactor, 0.5, lambda: None)  # type: ignore[arg-type]
                continue
            self.client, self.socket, self.connected = client, socket, True
            socket.closed.addCallback(self.lost)
            self.say({"event": event})
            return

    def lost(self, _: object) -> None:
        self.connected = False
        defer.ensureDeferred(self.attach("reconnected"))

    def lineReceived(self, line: bytes) -> None:
        command = json.loads(line)
        client = self.client
        if command["do"] == "quit":
            reactor.stop()  # type: ignore[attr-defined]
        elif client is None or not self.connected:
            self.say({"answer": True, "error": "not connected"})
        elif command["do"] == "picture":
            self.say({"answer": True, "joint_game": client.joint_game, "joint_cards": client.joint_cards,
                      "joint_drawn": client.joint_drawn, "joint_won": client.joint_won,
                      "credit_cents": client.credit_cents, "link_up": client.joint_link_up})
        elif command["do"] == "buy":
            buying = client.buy(command["quantity"], command["stake_pct"], request=command["request"], game="joint",
                                game_id=command["game_id"])

            def refused(failure: Failure) -> None:
                self.say({"answer": True, "refused": failure.getErrorMessage(),
                          "code": failure.value.code if failure.check(TerminalError) else "internal"})

            buying.addCallbacks(lambda answer: self.say({"answer": True, "bought": answer["cards"],
                                                         "credit_cents": answer["credit_cents"]}), refused)


def main(argv: list[str]) -> None:
    url, bundle, terminal, token, account, pin = argv
    stdio.StandardIO(Driver(url, Path(bundle), terminal, token, account, pin))
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main(sys.argv[1:])

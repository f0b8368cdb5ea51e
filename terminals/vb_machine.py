"""A headless video bingo machine: one station's side of ``bingo-vb-machine/1`` without a screen.

:class:`MachineClient` is sans-I/O: it says hello, sends each request with a fresh
request id, resolves it when its answer comes, and keeps what a machine's screen would
show (the credit, the paytable, the last play).  :func:`connect` puts it on a WebSocket
with Twisted's client endpoint; over TLS (``wss://``) the station presents its machine
certificate (loaded by :class:`terminals.client.TerminalCertificate`, named ``<machine>.<station>``).
The protocol is in ``docs/video-bingo.md``.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

from twisted.internet import defer

from protocol.errors import DomainError
from protocol.videobingo.cash import CashNote
from terminals.client import ClientSocket, TerminalCertificate, open_socket

PROTOCOL = "bingo-vb-machine/1"


class MachineRefused(DomainError):
    """The hall answered a request with an ``error``; ``code`` says which kind."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class MachineClient:
    """One station's side of the protocol; ``send`` writes a text frame."""

    machine: str
    station: int
    token: str
    send: Callable[[str], None] = lambda text: None
    welcome: dict[str, Any] | None = None
    credit_cents: int = 0
    last_play: dict[str, Any] | None = None
    pending: dict[str, "defer.Deferred[dict[str, Any]]"] = field(default_factory=dict)
    greeted: "defer.Deferred[dict[str, Any]]" = field(default_factory=defer.Deferred)
    _waiting: list["defer.Deferred[dict[str, Any]]"] = field(default_factory=list)

    def hello(self) -> "defer.Deferred[dict[str, Any]]":
        self._send({"type": "hello", "protocol": PROTOCOL, "machine": self.machine, "station": self.station,
                    "token": self.token})
        return self.greeted

    def _send(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message))

    def _request(self, message: dict[str, Any], request: str | None = None) -> "defer.Deferred[dict[str, Any]]":
        request = request or f"{self.machine}.{self.station}-{secrets.token_hex(8)}"
        done: defer.Deferred[dict[str, Any]] = defer.Deferred()
        self.pending[request] = done
        self._send({**message, "request": request})
        return done

    def _plain(self, message: dict[str, Any]) -> "defer.Deferred[dict[str, Any]]":
        """A request that carries no id (sign-in, recall): answered in order."""
        done: defer.Deferred[dict[str, Any]] = defer.Deferred()
        self._waiting.append(done)
        self._send(message)
        return done

    def play(self, cards: int, keep: bool = False, request: str | None = None) -> "defer.Deferred[dict[str, Any]]":
        return self._request({"type": "play", "cards": cards, "keep": keep}, request)

    def credit_in(self, amount_cents: int, source: str = "account", request: str | None = None) -> "defer.Deferred[dict[str, Any]]":
        return self._request({"type": "credit_in", "amount_cents": amount_cents, "source": source}, request)

    def insert_cash(self, note: CashNote, request: str | None = None) -> "defer.Deferred[dict[str, Any]]":
        """Relay the cash device's signed ``note`` (:class:`terminals.vb_cash_device.CashDevice`): cash in."""
        return self._request({"type": "credit_in", "source": "cash", "amount_cents": note.amount_cents,
                              "note": note.to_json()}, request)

    def credit_out(self, destination: str = "cash", request: str | None = None) -> "defer.Deferred[dict[str, Any]]":
        return self._request({"type": "credit_out", "destination": destination}, request)

    def sign_in(self, account: str, pin: str) -> "defer.Deferred[dict[str, Any]]":
        return self._plain({"type": "sign_in", "account": account, "pin": pin})

    def sign_out(self) -> "defer.Deferred[dict[str, Any]]":
        return self._plain({"type": "sign_out"})

    def recall(self) -> "defer.Deferred[dict[str, Any]]":
        return self._plain({"type": "recall"})

    def message_received(self, text: str) -> None:
        message = json.loads(text)
        kind = message.get("type")
        if kind == "welcome":
            self.welcome = message
            self.credit_cents = message["credit_cents"]
            self.last_play = message["last_play"]
            if not self.greeted.called:
                self.greeted.callback(message)
            return
        if kind in ("play", "credit"):
            self.credit_cents = message["credit_after_cents"]
        elif kind == "signed_out":
            self.credit_cents = message["credit_cents"]  # the credit went back to the account
            if kind == "play":
                self.last_play = message
        request = message.get("request")
        done = self.pending.pop(request, None) if isinstance(request, str) else None
        if done is None and kind != "play" and kind != "credit" and self._waiting:
            done = self._waiting.pop(0)
        if done is None:
            if kind == "error" and not self.greeted.called:
                self.greeted.errback(MachineRefused(message["code"], message["message"]))
            return
        if kind == "error":
            done.errback(MachineRefused(message["code"], message["message"]))
        else:
            done.callback(message)


def connect(reactor: Any, url: str, client: MachineClient,
            tls: TerminalCertificate | None = None) -> "defer.Deferred[Any]":
    """Open ``url`` (``wss://host:port/vb/ws``) for ``client`` and say hello; fires with the socket."""
    connected = open_socket(reactor, url, client, tls)

    def greet(socket: ClientSocket) -> Any:
        return client.hello().addCallback(lambda _: socket)

    return connected.addCallback(greet)

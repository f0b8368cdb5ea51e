"""A headless player terminal: the kiosk app's protocol without a screen.

:class:`TerminalClient` is sans-I/O: it numbers what it sends, checks the numbers of what
it receives, keeps the picture a kiosk would show (game, balls, credit, cards with
their marks and "n to go"), and resolves each request when its answer comes.
:func:`connect` puts it on a WebSocket with Twisted's client endpoint; over TLS
(``wss://``) a terminal presents its own certificate (:class:`TerminalCertificate`),
since the hall admits terminals only with one.  The tests and the load benchmark
(``bench/bench_terminals.py``) drive hundreds of them at once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from twisted.internet import defer
from twisted.internet.interfaces import IOpenSSLClientConnectionCreator
from twisted.internet.ssl import Certificate, optionsForClientTLS
from twisted.python.failure import Failure
from twisted.web.iweb import IPolicyForHTTPS
from twisted.web.websocket import WebSocketClientEndpoint, WebSocketTransport
from zope.interface import implementer

from protocol.errors import DomainError
from protocol.terminal_messages import HALL, SERVER_MESSAGES, TERMINAL_MESSAGES, SequenceCheck, decode, encode


class TerminalError(DomainError):
    """The hall answered a request with an ``error``; ``code`` says which kind, ``reason`` and
    ``params`` a refusal a player reads, for a screen to say in its language."""

    def __init__(self, code: str, message: str, reason: str = "", params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.params = params or {}


def new_request_id(terminal_id: str) -> str:
    """A fresh request id for a purchase on ``terminal_id`` (at most 64 characters)."""
    return f"{terminal_id[:40]}-{secrets.token_hex(8)}"


def to_go(cells: list[int], drawn: set[int]) -> tuple[int, int]:
    """Numbers missing for the best row (the line) and for the whole card (the bingo)."""
    rows = [[n for n in cells[r * 9:(r + 1) * 9] if n] for r in range(3)]
    missing = [sum(1 for n in row if n not in drawn) for row in rows]
    return min(missing), sum(missing)


@dataclass
class TerminalClient:
    """One terminal's side of the protocol; ``send`` writes a text frame."""

    terminal_id: str
    token: str
    send: Callable[[str], None] = lambda text: None
    clock: Callable[[], float] = lambda: 0.0
    outbound: int = 0
    inbound: SequenceCheck = field(default_factory=SequenceCheck)
    game: dict[str, Any] | None = None
    player: dict[str, Any] | None = None
    cards: list[dict[str, Any]] = field(default_factory=list)
    drawn: list[int] = field(default_factory=list)
    credit_cents: int | None = None
    won: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: The operator's responsible-play warnings and help page (R97.2), as the hall sent them.
    warnings: list[str] = field(default_factory=list)
    help: str = ""
    #: The megabingo announced (R90.2): date, time, the least it pays, its fund now; None when none is.
    megabingo: dict[str, Any] | None = None
    #: (ball, the hall's commit time in ms, when it arrived by ``clock`` in s): for latency figures
    ball_arrivals: list[tuple[int, int, float]] = field(default_factory=list)
    #: The network game beside the hall's own: its picture, the link's state, its balls, the player's cards, prizes.
    net_game: dict[str, Any] | None = None
    link_up: bool | None = None
    net_drawn: list[int] = field(default_factory=list)
    net_cards: list[dict[str, Any]] = field(default_factory=list)
    net_won: list[dict[str, Any]] = field(default_factory=list)
    #: The hall-annex game beside them: its picture, the link to the partner hall, the main hall's balls,
    #: the player's cards in it, prizes credited.
    joint_game: dict[str, Any] | None = None
    joint_link_up: bool | None = None
    joint_drawn: list[int] = field(default_factory=list)
    joint_cards: list[dict[str, Any]] = field(default_factory=list)
    joint_won: list[dict[str, Any]] = field(default_factory=list)
    _waiting: dict[int, defer.Deferred[dict[str, Any]]] = field(default_factory=dict)
    _hello: defer.Deferred[dict[str, Any]] | None = None

    # --- Requests ---------------------------------------------------------------------

    def _request(self, kind: str, **fields: Any) -> tuple[int, defer.Deferred[dict[str, Any]]]:
        self.outbound += 1
        answer: defer.Deferred[dict[str, Any]] = defer.Deferred()
        self._waiting[self.outbound] = answer
        if kind == "hello":
            self._hello = answer  # before sending: the answer may come back at once
        self.send(encode(self.outbound, kind, TERMINAL_MESSAGES, **fields))
        return self.outbound, answer

    def hello(self) -> defer.Deferred[dict[str, Any]]:
        """Identify the terminal; fires with the first ``state``."""
        return self._request("hello", terminal=self.terminal_id, token=self.token)[1]

    def sign_in(self, account: str, pin: str) -> defer.Deferred[dict[str, Any]]:
        return self._request("sign_in", account=account, pin=pin)[1]

    def buy(self, quantity: int, stake_pct: int = 100, account: str | None = None, request: str | None = None,
            *, game: str = HALL, game_id: str = "") -> defer.Deferred[dict[str, Any]]:
        """Buy cards for the signed-in account (or, to test a refusal, another) in the hall's own
        game on sale, or in ``game`` ``"network"`` or ``"joint"`` game ``game_id``.

        Fires with the answer (``bought``, ``net_bought`` once the central server decided,
        ``joint_bought``) or fails with the refusal.  ``request`` names the purchase (a new id
        if not given); send the same one again to ask for a purchase whose answer was lost:
        the hall answers it once more and charges it once.
        """
        named = account if account is not None else (self.player or {}).get("account", "")
        request = request or new_request_id(self.terminal_id)
        return self._request("buy", game=game, game_id=game_id, account=named, quantity=quantity,
                             stake_pct=stake_pct, request=request)[1]

    def sync(self) -> defer.Deferred[dict[str, Any]]:
        return self._request("sync")[1]

    def set_limit(self, limit_cents: int) -> defer.Deferred[dict[str, Any]]:
        """Set the signed-in player's daily spending limit (0: none); fires with the new state."""
        return self._request("set_limit", limit_cents=limit_cents)[1]

    def exclude(self, days: int) -> defer.Deferred[dict[str, Any]]:
        """Exclude the signed-in player from play for ``days``; fires with the signed-out state."""
        return self._request("exclude", days=days)[1]

    def recall(self) -> defer.Deferred[dict[str, Any]]:
        """The hall's last finished games as a player sees them; fires with ``last_games``."""
        return self._request("recall")[1]

    def send_raw(self, text: str) -> None:
        """A frame as given, for tests of refusals."""
        self.send(text)

    # --- What comes in ------------------------------------------------------------------

    def message_received(self, text: str) -> None:
        message = decode(text, SERVER_MESSAGES)
        self.inbound.accept(message["seq"])
        kind = message["type"]
        handler = getattr(self, f"_on_{kind}")
        handler(message)

    def _answer(self, seq: int | None, value: dict[str, Any] | Exception) -> None:
        waiting = self._waiting.pop(seq, None) if seq is not None else None
        if waiting is None:
            return
        if isinstance(value, Exception):
            waiting.errback(Failure(value))
        else:
            waiting.callback(value)

    def _oldest(self, kinds: tuple[str, ...]) -> int | None:
        """The oldest request still waiting (answers without ``in_reply_to`` go to it)."""
        return min(self._waiting) if self._waiting else None

    def _on_welcome(self, message: dict[str, Any]) -> None:
        pass  # the state follows

    def _on_megabingo(self, message: dict[str, Any]) -> None:
        self.megabingo = message["announcement"]  # the megabingo announced (R90.2), or None

    def _on_notices(self, message: dict[str, Any]) -> None:
        self.warnings = list(message["warnings"])
        self.help = message["help"]

    def _on_state(self, message: dict[str, Any]) -> None:
        self.game = message["game"]
        self.player = message["player"]
        self.cards = message["cards"]
        self.drawn = list(self.game["drawn"]) if self.game else []
        if self.player is not None:
            self.credit_cents = self.player["credit_cents"]
        if self._hello is not None:
            hello, self._hello = self._hello, None
            self._waiting = {k: v for k, v in self._waiting.items() if v is not hello}
            hello.callback(message)
        else:
            self._answer(self._oldest(("sync", "sign_in")), message)

    def _on_signed_in(self, message: dict[str, Any]) -> None:
        self.credit_cents = message["credit_cents"]
        self.player = {"account": message["account"], "credit_cents": message["credit_cents"]}

    def _on_signed_out(self, message: dict[str, Any]) -> None:
        self.player = None

    def _on_bought(self, message: dict[str, Any]) -> None:
        held = {card["card"] for card in self.cards}  # a repeated purchase's cards may be in the state already
        self.cards.extend(card for card in message["cards"] if card["card"] not in held)
        self.credit_cents = message["credit_cents"]
        self._answer(message["in_reply_to"], message)

    def _on_credit(self, message: dict[str, Any]) -> None:
        self.credit_cents = message["credit_cents"]

    def _on_ball(self, message: dict[str, Any]) -> None:
        self.drawn.append(message["ball"])
        self.ball_arrivals.append((message["ball"], message["time_ms"], self.clock()))

    def _on_ball_voided(self, message: dict[str, Any]) -> None:
        if self.drawn and self.drawn[-1] == message["ball"]:
            self.drawn.pop()

    def _on_game(self, message: dict[str, Any]) -> None:
        game = message["game"]
        if game is None or self.game is None or game["game_id"] != self.game.get("game_id"):
            self.cards = []  # a new game: last game's cards are over
        self.game = game
        self.drawn = list(game["drawn"]) if game else []

    def _on_won(self, message: dict[str, Any]) -> None:
        self.won.append(message)

    def _on_net_game(self, message: dict[str, Any]) -> None:
        game = message["game"]
        if game is None or self.net_game is None or game["game_id"] != self.net_game.get("game_id"):
            self.net_cards = []
        self.net_game = game
        self.link_up = message["link_up"]
        self.net_drawn = list(game["drawn"]) if game else []

    def _on_net_ball(self, message: dict[str, Any]) -> None:
        if message["ball_count"] == len(self.net_drawn) + 1:
            self.net_drawn.append(message["ball"])

    def _on_net_cards(self, message: dict[str, Any]) -> None:
        self.net_cards = list(message["cards"])

    def _on_net_bought(self, message: dict[str, Any]) -> None:
        held = {card["card"] for card in self.net_cards}
        self.net_cards.extend(card for card in message["cards"] if card["card"] not in held)
        self.credit_cents = message["credit_cents"]
        self._answer(message["in_reply_to"], message)

    def _on_net_won(self, message: dict[str, Any]) -> None:
        self.net_won.append(message)

    def _on_joint_game(self, message: dict[str, Any]) -> None:
        game = message["game"]
        if game is None or self.joint_game is None or game["game_id"] != self.joint_game.get("game_id"):
            self.joint_cards, self.joint_won = [], []
        self.joint_game = game
        self.joint_link_up = message["link_up"]
        self.joint_drawn = list(game["drawn"]) if game else []

    def _on_joint_ball(self, message: dict[str, Any]) -> None:
        if self.joint_game is not None and message["game_id"] == self.joint_game["game_id"] \
                and message["ball_count"] == len(self.joint_drawn) + 1:
            self.joint_drawn.append(message["ball"])

    def _on_joint_cards(self, message: dict[str, Any]) -> None:
        self.joint_cards = list(message["cards"])

    def _on_joint_bought(self, message: dict[str, Any]) -> None:
        held = {card["card"] for card in self.joint_cards}
        self.joint_cards.extend(card for card in message["cards"] if card["card"] not in held)
        self.credit_cents = message["credit_cents"]
        self._answer(message["in_reply_to"], message)

    def _on_joint_won(self, message: dict[str, Any]) -> None:
        self.joint_won.append(message)

    def _on_last_games(self, message: dict[str, Any]) -> None:
        self._answer(message["in_reply_to"], message)

    def _on_error(self, message: dict[str, Any]) -> None:
        self.errors.append(message)
        error = TerminalError(message["code"], message["message"], message["reason"], message["params"])
        seq = message["in_reply_to"]
        if seq is None and self._hello is not None:
            hello, self._hello = self._hello, None
            hello.errback(Failure(error))
            return
        self._answer(seq, error)

    # --- The picture ----------------------------------------------------------------------

    def progress(self) -> list[tuple[str, int, int]]:
        """Each card's (label, to go for the line, to go for the bingo), best first (R93.10)."""
        drawn = set(self.drawn)
        rows = [(card["card"], *to_go(card["cells"], drawn)) for card in self.cards]
        return sorted(rows, key=lambda row: (row[2], row[1]))


class TextClient(Protocol):
    """A sans-I/O client a :class:`ClientSocket` carries: it writes with ``send`` (which the
    socket sets once the WebSocket is open) and reads text frames."""

    @property
    def send(self) -> Callable[[str], None]: ...

    def message_received(self, text: str) -> None: ...


class ClientSocket:
    """The WebSocket protocol under a sans-I/O client (a :class:`TerminalClient`, a machine's station)."""

    def __init__(self, client: TextClient) -> None:
        self.client = client
        self.transport: WebSocketTransport | None = None
        self.closed: defer.Deferred[None] = defer.Deferred()

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport
        self.client.send = transport.sendTextMessage  # type: ignore[misc]  # the clients' send is a plain attribute

    def negotiationFinished(self) -> None:
        pass

    def textMessageReceived(self, message: str) -> None:
        self.client.message_received(message)

    def bytesMessageReceived(self, data: bytes) -> None:
        pass

    def pongReceived(self, payload: bytes) -> None:
        pass

    def connectionLost(self, reason: Failure) -> None:
        self.transport = None
        self.closed.callback(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.loseConnection()


class _ClientFactory:
    def __init__(self, client: TextClient) -> None:
        self.client = client

    def buildProtocol(self, url: str) -> ClientSocket:
        return ClientSocket(self.client)


@implementer(IPolicyForHTTPS)
class TerminalCertificate:
    """TLS as the terminal ``name``: trust the operator's authority, present the terminal's certificate.

    ``bundle`` is the terminal's folder as ``bingo pki bundle`` (or the hall's first
    start, ``var/terminal-certs/terminal-1``) writes it: ``ca.pem``,
    ``certs/NAME.pem`` and ``keys/NAME.key``.
    """

    def __init__(self, bundle: Path, name: str) -> None:
        self.authority = Certificate.loadPEM((bundle / "ca.pem").read_bytes())
        # cryptography's objects, which OpenSSL takes as they are (pyOpenSSL deprecates its own).
        self.certificate = x509.load_pem_x509_certificate((bundle / "certs" / f"{name}.pem").read_bytes())
        self.key = serialization.load_pem_private_key((bundle / "keys" / f"{name}.key").read_bytes(), password=None)

    def creatorForNetloc(self, hostname: bytes, port: int) -> IOpenSSLClientConnectionCreator:
        return optionsForClientTLS(hostname.decode("ascii"), trustRoot=self.authority,
                                   extraCertificateOptions={"certificate": self.certificate, "privateKey": self.key})


def connect(
    reactor: Any, url: str, client: TerminalClient, tls: TerminalCertificate | None = None
) -> defer.Deferred[ClientSocket]:
    """Open the WebSocket at ``url`` (``wss://host:port/kiosk/ws``, with ``tls``) for ``client``."""
    return open_socket(reactor, url, client, tls)


def open_socket(
    reactor: Any, url: str, client: TextClient, tls: TerminalCertificate | None = None
) -> defer.Deferred[ClientSocket]:
    """Open the WebSocket at ``url`` for any sans-I/O ``client``; over ``wss://`` it presents ``tls``."""
    if tls is not None:
        endpoint = WebSocketClientEndpoint.new(reactor, url, tlsPolicy=tls)
    else:
        endpoint = WebSocketClientEndpoint.new(reactor, url)
    return defer.ensureDeferred(endpoint.connect(_ClientFactory(client)))  # type: ignore[arg-type,type-var]

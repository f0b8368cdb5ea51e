"""The video bingo machines' gateway: a station's WebSocket in, the machine module's commands out.

``/vb/ws`` is where a machine's station speaks to the hall (``docs/video-bingo.md``,
"The machine's protocol"): JSON text messages, one per WebSocket message, each at most
:data:`~server_kit.web.bounded_websocket.TERMINAL_MESSAGE_BYTES`.  A station is enrolled
by staff like a terminal (``enrol_vb_station``: a token shown once) and proves who it is
with ``hello``; over TLS the connection must present a ``machine`` certificate named as
the station (``<machine>.<station>``, ``bingo pki issue machine vb-1.1``): a player
terminal's certificate opens no station, nor a station's a terminal's socket.

:class:`MachineSession` knows nothing of sockets: it is given each text message and a
``send``/``close`` pair, checks the message and calls one method of
:class:`~hall_server.hall.videobingo.VideoBingoModule`; every answer is sent once its
record is committed (announce after commit), so a play the machine shows is a play in
the journal.  ``welcome`` carries the station's last committed play: a machine that lost
its connection or its power mid-play shows that result again, and a request it sends
again (same ``request`` id) gets the first answer and is never charged twice.

Before ``hello`` a refusal closes the connection; after it, a refusal is an ``error``
with the module's ``code`` and message, and nothing changes.  The message is English (as
journaled); a refusal a player reads also carries its ``reason`` and ``params``, which the
machine's screen says in the player's language (:class:`~hall_server.hall.videobingo.VbRefused`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from twisted.internet.defer import succeed
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import Request
from twisted.web.websocket import WebSocketTransport

from hall_server.hall.pins import CheckPin, PinGuard, SignInRefused
from hall_server.hall.videobingo import Station, VbRefused, VideoBingoModule
from hall_server.terminal_gateway.resource import STATIC, File, NotFound, Refused, origin_allowed, presented_certificate
from protocol.compact_json import compact
from protocol.errors import DomainError
from server_kit import pki
from server_kit.web.bounded_websocket import TERMINAL_MESSAGE_BYTES, BoundedWebSocketResource
from server_kit.web.channel import ChannelError, load_json

log = Logger()

#: The machine protocol's version, in ``hello`` and ``welcome``.
PROTOCOL = "bingo-vb-machine/1"
#: Errors a station may make before the gateway hangs up on it.
MAX_ERRORS = 20


class MachineGateway:
    """The stations connected now, and what they need of the hall."""

    def __init__(self, videobingo: VideoBingoModule, pins: PinGuard, check_pin: CheckPin, clock: IReactorTime,
                 notices: tuple[Sequence[str], str] = ((), "")) -> None:
        self.videobingo = videobingo
        self.pins = pins
        self.check_pin = check_pin
        self.clock = clock
        #: The operator's responsible-play warnings and help page (R97.2), as the kiosk shows them.
        self.notices = (tuple(notices[0]), notices[1])
        self.sessions: dict[str, MachineSession] = {}


def _text(value: object, what: str, limit: int = 64, reason: str = "message") -> str:
    """``value`` if it is text of 1 to ``limit`` characters; else :class:`VbRefused` (``reason``: what the player reads)."""
    if not isinstance(value, str) or not 1 <= len(value) <= limit:
        raise VbRefused("message", f"{what} is text of 1 to {limit} characters", reason=reason, limit=limit)
    return value


class MachineSession:
    """One station's connection: messages in, one module call each, answers out after commit."""

    def __init__(self, gateway: MachineGateway, send: Callable[[str], None], close: Callable[[], None],
                 certified_as: str | None = None) -> None:
        self.gateway = gateway
        self._send = send
        self._close = close
        self.certified_as = certified_as
        self.station: Station | None = None
        self.errors = 0

    @property
    def vb(self) -> VideoBingoModule:
        return self.gateway.videobingo

    def send(self, message: dict[str, Any]) -> None:
        self._send(compact(message))

    def message_received(self, text: str | bytes) -> None:
        try:
            message = load_json(text)
        except ChannelError as malformed:
            self._refuse(VbRefused("message", str(malformed), reason="message"), None)
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self._refuse(VbRefused("message", "a message is one JSON object with a \"type\"", reason="message"), None)
            return
        kind = message["type"]
        request = message.get("request") if isinstance(message.get("request"), str) else None
        try:
            if self.station is None:
                if kind != "hello":
                    raise VbRefused("hello", "say hello with the machine, the station and its token first",
                                    reason="hello")
                self._hello(message)
                return
            handler = getattr(self, f"_on_{kind}", None)
            if handler is None:
                raise VbRefused("message", f"there is no message {kind[:40]!r} in {PROTOCOL}", reason="message")
            deferred = handler(message)
        except DomainError as error:
            self._refuse(error, request)
            return
        deferred.addCallbacks(self.send, lambda failure: self._failed(failure, request))

    def _failed(self, failure: Failure, request: str | None) -> None:
        if isinstance(failure.value, DomainError):
            self._refuse(failure.value, request)
            return
        log.failure("a video bingo station's request failed", failure)
        self.send({"type": "error", "code": "fault", "request": request,
                   "message": "the hall could not carry this out; nothing was charged unless it was shown",
                   "reason": "internal", "params": {}})

    def _refuse(self, error: BaseException, request: str | None) -> None:
        if isinstance(error, SignInRefused):  # one answer for an unknown account, a wrong PIN, a locked account
            error = VbRefused("refused", str(error), reason="sign_in_refused")
        code = error.code if isinstance(error, VbRefused) else "refused"
        reason, params = (error.reason, error.params) if isinstance(error, VbRefused) else ("", {})
        self.send({"type": "error", "code": code, "request": request, "message": str(error)[:500],
                   "reason": reason, "params": params})
        self.errors += 1
        if self.station is None or self.errors >= MAX_ERRORS:
            self.close()

    def close(self) -> None:
        self.connection_lost()
        self._close()

    def connection_lost(self) -> None:
        if self.station is not None:
            key = f"{self.station.machine}.{self.station.station}"
            if self.gateway.sessions.get(key) is self:
                del self.gateway.sessions[key]
        self.station = None

    # --- Messages ---------------------------------------------------------------------

    def _hello(self, message: dict[str, Any]) -> None:
        if message.get("protocol") != PROTOCOL:
            raise VbRefused("protocol", f"this hall speaks {PROTOCOL}, not {message.get('protocol')!r}",
                            reason="protocol")
        station = self.vb.authenticate(message.get("machine"), message.get("station"), message.get("token"))
        key = f"{station.machine}.{station.station}"
        if self.certified_as is not None and self.certified_as != key:
            raise VbRefused("certificate", f"this connection's certificate names {self.certified_as}, not station {key}",
                            reason="certificate")
        older = self.gateway.sessions.get(key)
        if older is not None:
            older.close()  # the machine reconnected: its old connection is over
        self.station = station
        self.gateway.sessions[key] = self
        self.send(self.welcome())

    def welcome(self) -> dict[str, Any]:
        assert self.station is not None
        machine = self.vb.machine(self.station.machine)
        paytable = machine.paytable
        try:
            self.vb.playable(machine.machine_id)
            state, why, reason, params = "playing", None, "", {}
        except VbRefused as refusal:
            state, why, reason, params = refusal.code, str(refusal), refusal.reason, refusal.params
        last = self.vb.last_play(machine.machine_id, self.station.station)
        return {
            "type": "welcome", "protocol": PROTOCOL, "machine": machine.machine_id, "station": self.station.station,
            "model": machine.config.model, "state": state, "why": why, "why_reason": reason, "why_params": params,
            "credit_value_cents": machine.config.credit_cents,
            "credit_cents": self.vb.credit(machine.machine_id, self.station.station),
            "signed_in": self.station.account,
            "paytable": {"name": paytable.name, "pool": paytable.pool, "balls": paytable.balls, "rows": paytable.rows,
                         "columns": paytable.columns, "cards_max": paytable.cards_max, "rtp_percent": machine.rtp.rtp_percent,
                         "patterns": [{"name": p.name, "pays": p.pays, "cells": [list(c) for c in p.cells]}
                                      for p in paytable.patterns]},
            "jackpot_cents": self.vb.jackpot(machine.machine_id),
            "last_play": last.to_json() if last is not None else None,
            # R97.2: the screen shows the warnings in turn and the help page behind its Help button.
            "warnings": list(self.gateway.notices[0]), "help": self.gateway.notices[1],
        }

    def _where(self) -> tuple[str, int]:
        assert self.station is not None
        return self.station.machine, self.station.station

    def _on_play(self, message: dict[str, Any]) -> Any:
        machine, station = self._where()
        return self.vb.play(machine, station, message.get("cards"), message.get("keep", False),
                            _text(message.get("request"), "request")).addCallback(
            lambda shown: {"type": "play", "request": message["request"], **shown,
                           "jackpot_cents": self.vb.jackpot(machine)})

    def _on_credit_in(self, message: dict[str, Any]) -> Any:
        machine, station = self._where()
        return self.vb.credit_in(machine, station, str(message.get("source")), message.get("amount_cents"),
                                 _text(message.get("request"), "request"), message.get("note")).addCallback(
            lambda answer: {"type": "credit", "request": message["request"], **answer})

    def _on_credit_out(self, message: dict[str, Any]) -> Any:
        machine, station = self._where()
        return self.vb.credit_out(machine, station, str(message.get("destination")),
                                  _text(message.get("request"), "request")).addCallback(
            lambda answer: {"type": "credit", "request": message["request"], **answer})

    def _on_sign_in(self, message: dict[str, Any]) -> Any:
        machine, station = self._where()
        account = _text(message.get("account"), "the account number", 40, "account_text")
        pin = _text(message.get("pin"), "the PIN", 16, "pin_text")
        checked = self.gateway.pins.sign_in(account, pin, f"vb-{machine}.{station}", self.gateway.check_pin)

        def signed_in(number: str) -> Any:
            return self.vb.sign_in(machine, station, number).addCallback(
                lambda _: {"type": "signed_in", "account": number})

        return checked.addCallback(signed_in)

    def _on_sign_out(self, message: dict[str, Any]) -> Any:
        machine, station = self._where()
        return self.vb.sign_out(machine, station).addCallback(lambda answer: {"type": "signed_out", **answer})

    def _on_recall(self, message: dict[str, Any]) -> Any:
        machine, _ = self._where()
        return succeed({"type": "recall", "plays": [play.to_json() for play in self.vb.recall(machine)]})


class MachineSocket:
    """The WebSocket of one station: frames to the session, the session's text to frames."""

    def __init__(self, gateway: MachineGateway, certified_as: str | None) -> None:
        self.gateway = gateway
        self.certified_as = certified_as
        self.transport: WebSocketTransport | None = None
        self.session: MachineSession | None = None

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport
        self.session = MachineSession(self.gateway, self._send, self._close, self.certified_as)

    def negotiationFinished(self) -> None:
        pass  # the station speaks first, with hello

    def _send(self, text: str) -> None:
        if self.transport is not None:
            try:
                self.transport.sendTextMessage(text)
            except Exception:
                self._close()

    def _close(self) -> None:
        transport, self.transport = self.transport, None
        if transport is None:
            return
        try:
            transport.loseConnection(4003)
        except Exception:
            tcp = getattr(transport, "transport", None)
            if tcp is not None:
                tcp.abortConnection()

    def textMessageReceived(self, message: str) -> None:
        assert self.session is not None
        self.session.message_received(message)

    def bytesMessageReceived(self, data: bytes | bytearray) -> None:
        assert self.session is not None
        self.session.message_received(b"\xff")  # refused: the protocol is JSON text

    def pongReceived(self, payload: bytes) -> None:
        pass

    def connectionLost(self, reason: Failure) -> None:
        if self.session is not None:
            self.session.connection_lost()
        self.transport = None


class _Factory:
    def __init__(self, gateway: MachineGateway, certified_as: str | None) -> None:
        self.gateway = gateway
        self.certified_as = certified_as

    def buildProtocol(self, request: Any) -> MachineSocket:
        return MachineSocket(self.gateway, self.certified_as)


class MachineSocketResource(Resource):
    """``/vb/ws``: with ``require_certificate``, for connections presenting a machine certificate only."""

    isLeaf = True

    def __init__(self, gateway: MachineGateway, require_certificate: bool) -> None:
        super().__init__()
        self.gateway = gateway
        self.require_certificate = require_certificate

    def render_GET(self, request: Request) -> bytes | int:
        certified_as = None
        if self.require_certificate:
            identity = presented_certificate(request)
            if identity is None or identity.role is not pki.Role.machine:
                request.setResponseCode(403)
                request.setHeader(b"content-type", b"text/plain; charset=utf-8")
                return b"a video bingo station connects with its machine certificate, named as the station"
            certified_as = identity.common_name
        socket = BoundedWebSocketResource(_Factory(self.gateway, certified_as), TERMINAL_MESSAGE_BYTES)  # type: ignore[arg-type]
        result: bytes | int = socket.render_GET(request)
        return result


#: The machine screen's files under ``/vb/static/``: by name only, and only these.
SCREEN_FILES = ("vb.css", "vb.js")


class _ScreenStatic(Resource):
    def getChild(self, path: bytes, request: Request) -> Resource:
        name = path.decode("ascii", "replace")
        return File(STATIC / name) if name in SCREEN_FILES else NotFound()


class MachineScreenResource(Resource):
    """``/vb``: the machine's screen (``vb.html``), its files and the stations' WebSocket.

    The page and its files carry the kiosk's security headers (a content security policy
    of this hall only); a browser page of another site may not open ``/vb/ws``."""

    def __init__(self, gateway: MachineGateway, require_certificate: bool) -> None:
        super().__init__()
        self.page = File(STATIC / "vb.html")
        self.putChild(b"static", _ScreenStatic())
        self.putChild(b"ws", MachineSocketResource(gateway, require_certificate))

    def getChildWithDefault(self, path: bytes, request: Request) -> Resource:
        if path == b"ws" and not origin_allowed(request):
            return Refused(403, b"this socket is for the machine screens of this hall only")
        return super().getChildWithDefault(path, request)

    def getChild(self, path: bytes, request: Request) -> Resource:
        if path in (b"", b"index.html"):
            return self.page
        return NotFound()

    def render_GET(self, request: Request) -> bytes:
        return self.page.render_GET(request)


__all__ = ["PROTOCOL", "MachineGateway", "MachineScreenResource", "MachineSession", "MachineSocketResource"]

"""Live updates over WebSocket: every committed record reaches every open console.

:class:`LiveHub` is a core observer, so it hears of a record only after the record is
committed (announce after commit).  It pushes the record with the refreshed picture to
every signed-in console, and the public picture to every information board.  A
console or board that (re)connects first receives a full snapshot, so a dropped
connection loses nothing: the snapshot is the truth as of its ``seq``.

The console socket also carries command requests, answered through the same
:class:`~hall_server.web.channel.CommandChannel` as ``POST /api/command``.  The board
socket is read-only: anything sent to it is answered with an error and ignored.

Messages sent: ``snapshot`` (``me``, ``commands``, ``view``), ``record`` (``record``,
``view``), ``answer`` (a command's answer), ``board`` (``view``), ``error``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.websocket import WebSocketTransport

from hall_server.web.auth import SignIn, SignIns
from hall_server.web.channel import ChannelError, CommandChannel, error_answer, parse_request
from hall_server.web.minutes import may_read_minutes
from hall_server.web.view import HallView
from protocol.chain import Record

log = Logger()


def record_json(record: Record) -> dict[str, Any]:
    return {"seq": record.seq, "time_ms": record.time_ms, "type": record.type, "payload": dict(record.payload)}


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


class LiveHub:
    """The open consoles and boards, and what they are told after each commit."""

    def __init__(self, view: HallView, channel: CommandChannel, sign_ins: SignIns) -> None:
        self.view = view
        self.channel = channel
        self.sign_ins = sign_ins
        self.consoles: set[ConsoleSocket] = set()
        self.boards: set[BoardSocket] = set()

    def record_committed(self, record: Record) -> None:
        """The core observer: push ``record`` and the pictures it changed."""
        if self.consoles:
            text = _dumps({"type": "record", "record": record_json(record), "view": self.view.console()})
            for console in list(self.consoles):
                console.send_text(text)
        if self.boards:
            text = _dumps({"type": "board", "view": self.view.board()})
            for board in list(self.boards):
                board.send_text(text)

    def console_snapshot(self, sign_in: SignIn) -> dict[str, Any]:
        return {
            "type": "snapshot",
            "me": sign_in.actor.to_dict(),
            "commands": self.channel.describe(sign_in.actor),
            # Whether the console offers the minutes book; the server checks it again.
            "minutes": may_read_minutes(sign_in.actor),
            "view": self.view.console(),
        }


class _Socket:
    """What both sockets share: the transport, and sending once negotiated."""

    def __init__(self, hub: LiveHub) -> None:
        self.hub = hub
        self.transport: WebSocketTransport | None = None

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport

    def send_text(self, text: str) -> None:
        if self.transport is not None:
            self.transport.sendTextMessage(text)

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(_dumps(message))

    def pongReceived(self, payload: bytes) -> None:
        pass  # the browser answers pings; nothing to do with the answer

    def bytesMessageReceived(self, data: bytes | bytearray) -> None:
        self.send(error_answer(None, ChannelError("malformed", "send JSON text, not binary frames")))


class ConsoleSocket(_Socket):
    """A signed-in console: snapshot, live records, and command requests."""

    def __init__(self, hub: LiveHub, sign_in: SignIn) -> None:
        super().__init__(hub)
        self.sign_in = sign_in

    def negotiationFinished(self) -> None:
        self.hub.consoles.add(self)
        self.send(self.hub.console_snapshot(self.sign_in))

    def textMessageReceived(self, message: str) -> None:
        # The sign-in may have ended (sign-out, idle) while the socket stayed open.
        if self.hub.sign_ins.find(self.sign_in.session_id) is not self.sign_in:
            self.send(error_answer(None, ChannelError("signed_out", "your sign-in has ended; sign in again")))
            if self.transport is not None:
                self.transport.loseConnection(4001)
            return
        try:
            request = parse_request(message)
        except ChannelError as error:
            self.send({"type": "answer", **error_answer(None, error)})
            return
        answered: defer.Deferred[dict[str, Any]] = self.hub.channel.submit(
            self.sign_in.actor, request, self.sign_in.seen
        )
        answered.addCallback(lambda answer: self.send({"type": "answer", **answer}))
        answered.addErrback(lambda failure: log.failure("answering a console", failure))

    def connectionLost(self, reason: Failure) -> None:
        self.hub.consoles.discard(self)
        self.transport = None  # an answer that comes after this goes nowhere


class BoardSocket(_Socket):
    """A public information board: the public picture, nothing else (R92.11-12)."""

    def negotiationFinished(self) -> None:
        self.hub.boards.add(self)
        self.send({"type": "board", "view": self.hub.view.board()})

    def textMessageReceived(self, message: str) -> None:
        self.send(error_answer(None, ChannelError("read_only", "the information board takes no commands")))

    def connectionLost(self, reason: Failure) -> None:
        self.hub.boards.discard(self)
        self.transport = None


class SocketFactory:
    """A :class:`~twisted.web.websocket.WebSocketServerFactory` for one accepted request."""

    def __init__(self, build: Callable[[], _Socket]) -> None:
        self.build = build

    def buildProtocol(self, request: Any) -> _Socket:
        return self.build()

"""Live updates over WebSocket: every committed record reaches every open console.

:class:`LiveHub` is a core observer, so it hears of a record only after the record is
committed (announce after commit).  It pushes the record with the refreshed picture to
every signed-in console, and the public picture to every information board.  A
console or board that (re)connects first receives a full snapshot, so a dropped
connection loses nothing: the snapshot is the truth as of its ``seq``.

The hub is the one place where pictures and pushes are made, and each passes through
:func:`~hall_server.web.redaction.redacted`: no PIN, password or token hash reaches a
screen.  One receiver never affects another: each send is isolated, and a socket
whose send fails (a peer that sent a Close frame and keeps its TCP connection open, a
broken transport) is dropped and its connection aborted.  A console socket lives no
longer than its sign-in: signing out or lapsing closes it (code 4001).

The console socket also carries command requests, answered through the same
:class:`~server_kit.web.channel.CommandChannel` as ``POST /api/command``.  The board
socket is read-only: anything sent to it is answered with an error and ignored.

Messages sent: ``snapshot`` (``me``, ``commands``, ``choices``, ``view``), ``record`` (``record``,
``view``), ``feed`` (the regulator's feed line, when it moved), ``storage`` (the storage's alarm,
when it is raised or cleared), ``answer`` (a command's answer),
``board`` (``view``, ``time_ms``), ``error``.
"""

from __future__ import annotations

from typing import Any, Callable

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.web.auth import SignIn, SignIns
from hall_server.web.forms import CHOICES, is_document
from hall_server.web.minutes import may_read_minutes
from hall_server.web.redaction import record_json, redacted
from hall_server.web.view import HallView
from protocol.chain import Record
from protocol.compact_json import compact
from server_kit.web.channel import ChannelError, CommandChannel, error_answer, parse_request
from server_kit.web.hub import LiveSocket, fan_out

log = Logger()
#: The close code of a console whose sign-in ended.
SIGNED_OUT_CLOSE = 4001


class LiveHub:
    """The open consoles and boards, and what they are told after each commit."""

    def __init__(self, view: HallView, channel: CommandChannel, sign_ins: SignIns) -> None:
        self.view = view
        self.channel = channel
        self.sign_ins = sign_ins
        self.consoles: set[ConsoleSocket] = set()
        self.boards: set[BoardSocket] = set()
        sign_ins.ended.append(self.sign_in_ended)

    def record_committed(self, record: Record) -> None:
        """The core observer: push ``record`` and the pictures it changed."""
        if self.consoles:
            fan_out(self.consoles, compact(self.record_message(record)))
        if self.boards:
            fan_out(self.boards, compact(self.board_push()))

    def feed_changed(self) -> None:
        """The regulator's feed moved: every console gets its line (``feed``) without a record."""
        if self.consoles:
            fan_out(self.consoles, compact(redacted({"type": "feed", "feed": self.view.feed_source()})))

    def central_changed(self) -> None:
        """The link to the central server went up (to which process) or down: every console gets its line."""
        if self.consoles:
            fan_out(self.consoles, compact(redacted({"type": "central", "central": self.view.central_source()})))

    def storage_changed(self, fault: object = None) -> None:
        """The storage became unavailable or came back: every console gets the alarm (``storage``)."""
        if self.consoles:
            fan_out(self.consoles, compact(redacted({"type": "storage", "storage": self.view.storage_source()})))

    # --- The pictures: every one of them is made here, and redacted here -------------

    def record_message(self, record: Record) -> dict[str, Any]:
        message: dict[str, Any] = redacted(
            {"type": "record", "record": record_json(record), "view": self.view.console()})
        return message

    def board_message(self) -> dict[str, Any]:
        message: dict[str, Any] = redacted({"type": "board", "view": self.view.board()})
        return message

    def board_push(self) -> dict[str, Any]:
        """The board picture as a socket gets it, with the server's time (``time_ms``): a
        screen counts the terminals' sale time down on the hall's clock, not its own."""
        return {**self.board_message(), "time_ms": self.channel.core.now_ms()}

    def console_snapshot(self, sign_in: SignIn) -> dict[str, Any]:
        snapshot: dict[str, Any] = redacted({
            "type": "snapshot",
            "me": sign_in.actor.to_dict(),
            # A command that makes a file is offered as a download (POST /api/document).
            "commands": [{**command, "document": is_document(command["name"])}
                         for command in self.channel.describe(sign_in.actor)],
            "choices": CHOICES,
            # Whether the console offers the minutes book; the server checks it again.
            "minutes": may_read_minutes(sign_in.actor),
            "view": self.view.console(),
        })
        return snapshot

    def sign_in_ended(self, sign_in: SignIn) -> None:
        """The sign-ins' observer: close every console socket of ``sign_in``."""
        for console in [c for c in self.consoles if c.sign_in is sign_in]:
            self.consoles.discard(console)
            console.signed_out()


class _Socket(LiveSocket):
    """A socket of this hub."""

    def __init__(self, hub: LiveHub) -> None:
        super().__init__()
        self.hub = hub


class ConsoleSocket(_Socket):
    """A signed-in console: snapshot, live records, and command requests."""

    kind = "console"

    def __init__(self, hub: LiveHub, sign_in: SignIn) -> None:
        super().__init__(hub)
        self.sign_in = sign_in

    def negotiationFinished(self) -> None:
        if self.hub.sign_ins.find(self.sign_in.session_id) is not self.sign_in:
            self.signed_out()  # ended between the handshake and now
            return
        self.hub.consoles.add(self)
        self.send(self.hub.console_snapshot(self.sign_in))

    def signed_out(self) -> None:
        """Tell the console its sign-in ended, and close the socket."""
        if self.transport is None:
            return
        try:
            self.send(error_answer(None, ChannelError("signed_out", "your sign-in has ended; sign in again")))
            self.transport.loseConnection(SIGNED_OUT_CLOSE)
        except Exception as error:  # the peer went away meanwhile: nothing left to tell it
            log.info("Aborted a console whose sign-in ended: {error!r}", error=error)
            self.abort()

    def textMessageReceived(self, message: str) -> None:
        # The sign-in may have ended (sign-out, idle) while the socket stayed open.
        if self.hub.sign_ins.find(self.sign_in.session_id) is not self.sign_in:
            self.hub.consoles.discard(self)
            self.signed_out()
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

    kind = "board"

    def negotiationFinished(self) -> None:
        self.hub.boards.add(self)
        self.send(self.hub.board_push())

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

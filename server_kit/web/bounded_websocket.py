"""WebSocket endpoints whose messages are bounded while they are read, not after.

Twisted's :class:`~twisted.web.websocket.WebSocketResource` (wsproto underneath)
gathers a message's frames whole before the application sees it, so the size of a
message is known only once all of it sits in memory: a frame that announces 64 MB is
read, unmasked and joined for tens of seconds before any check can refuse it.

:class:`BoundedWebSocketResource` is that resource with a meter in front of the
parser: :class:`FrameMeter` reads each frame's header as the bytes arrive (RFC 6455
section 5.2: opcode, FIN, the payload length, the mask) and adds the announced
payload length to the message it belongs to.  A frame whose message would pass the
limit is refused on its header, before one byte of its payload is buffered: the peer
gets a Close frame with code 1009 (message too big), the rest of what it sends is
left unread, and the connection is closed (aborted after :data:`CLOSE_GRACE_S` if the
peer does not let it close).  The meter only counts; framing, unmasking, UTF-8 and
the closing handshake stay wsproto's.

The upgraded connection also stops having the HTTP channel as its producer: over TLS,
Twisted shuts a connection down only once no producer is registered, so without this
no WebSocket close (ours, the console's at sign-out, the gateway's) would end a TLS
connection.

A connection the server's guard cuts when it is idle (one without a client certificate,
:mod:`server_kit.connections`) is pinged every third of that deadline: a browser's or
any client's pong is what keeps a board or a console that only listens open, and a peer
that is gone stops answering and is cut.

=================  ==========================  =========================================
endpoint           limit                       why
=================  ==========================  =========================================
``/ws``            :data:`CONSOLE_MESSAGE_BYTES`  a command request: a banned-list file fits
``/board/ws``      :data:`BOARD_MESSAGE_BYTES`    a board sends nothing the hall reads
``/kiosk/ws``      :data:`TERMINAL_MESSAGE_BYTES` a terminal's messages are far smaller
=================  ==========================  =========================================
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

from twisted.internet import task
from twisted.internet.interfaces import IProtocol, ITransport
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.http import HTTPChannel
from twisted.web.server import Request
from twisted.web.websocket import WebSocketResource, WebSocketServerFactory
from wsproto.utilities import LocalProtocolError
from zope.interface import implementer

from server_kit.connections import guarded
from server_kit.web.channel import MAX_REQUEST_BYTES

log = Logger()

CONSOLE_MESSAGE_BYTES = MAX_REQUEST_BYTES
BOARD_MESSAGE_BYTES = 4 * 1024
TERMINAL_MESSAGE_BYTES = 64 * 1024
#: RFC 6455's close code for "a message too big to process".
MESSAGE_TOO_BIG = 1009
#: How long a refused peer has to let the connection close before it is aborted.
CLOSE_GRACE_S = 5.0

_CONTROL = 0x8  # opcodes 0x8-0xF are control frames: at most 125 bytes, no part of a message
_CONTINUATION = 0x0

# The resource below hands the upgraded connection to its meter through the channel's
# upgrade hook; if a Twisted release renames it, fail at import rather than serve unbounded.
if not hasattr(HTTPChannel, "_protocolUpgradeForWebsockets"):  # pragma: no cover
    raise ImportError("this Twisted has no HTTPChannel._protocolUpgradeForWebsockets; "
                      "server_kit.web.bounded_websocket needs updating")


class FrameMeter:
    """Sans-I/O: reads the frame headers of a client's byte stream and counts messages.

    :meth:`feed` takes the bytes as they arrive, in any split, and gives back those the
    parser may have: every frame of a message within ``max_message_bytes``; a frame
    header only once it is whole.  From the first frame that would carry its message
    past the limit on, nothing is given back (not even that frame's header) and
    :attr:`refusal` says why.  Whatever the input, the meter holds at most one frame
    header (14 bytes).
    """

    def __init__(self, max_message_bytes: int) -> None:
        self.max_message_bytes = max_message_bytes
        self.refusal: str | None = None
        #: Bytes given to the parser so far: all the connection may ever have buffered.
        self.passed = 0
        self._header = bytearray()
        self._payload_left = 0
        self._message_bytes = 0

    def feed(self, data: bytes) -> bytes:
        """The part of what came so far that the parser may read now."""
        if self.refusal is not None:
            return b""
        view = memoryview(data)
        parts: list[bytes | memoryview] = []
        index, size = 0, len(data)
        while index < size:
            if self._payload_left:
                step = min(self._payload_left, size - index)
                parts.append(view[index:index + step])
                self._payload_left -= step
                index += step
                continue
            needed = self._header_length()
            take = min((needed or 2) - len(self._header), size - index)
            self._header += view[index:index + take]
            index += take
            needed = self._header_length()
            if needed is None or len(self._header) < needed:
                continue  # a header still incomplete: held back until it is whole
            if not self._frame_fits():
                break
            parts.append(bytes(self._header))
            self._header.clear()
        out = b"".join(parts)
        self.passed += len(out)
        return out

    def _header_length(self) -> int | None:
        """The whole header's length once its first two bytes are in, else ``None``."""
        if len(self._header) < 2:
            return None
        length7 = self._header[1] & 0x7F
        extended = 2 if length7 == 126 else 8 if length7 == 127 else 0
        masked = 4 if self._header[1] & 0x80 else 0
        return 2 + extended + masked

    def _frame_fits(self) -> bool:
        """Account for the frame whose header is whole; ``False`` if it is refused."""
        first, second = self._header[0], self._header[1]
        fin, opcode, length7 = bool(first & 0x80), first & 0x0F, second & 0x7F
        if length7 == 126:
            length = int.from_bytes(self._header[2:4], "big")
        elif length7 == 127:
            length = int.from_bytes(self._header[2:10], "big")
        else:
            length = length7
        if opcode < _CONTROL:
            if opcode != _CONTINUATION:
                self._message_bytes = 0  # a new message (wsproto refuses one inside another)
            self._message_bytes += length
            if self._message_bytes > self.max_message_bytes:
                self.refusal = (f"a message of {self._message_bytes} bytes or more; "
                                f"at most {self.max_message_bytes} are read")
                return False
            if fin:
                self._message_bytes = 0
        self._payload_left = length
        return True


@implementer(IProtocol)
class MeteredWire:
    """The upgraded connection's protocol: the meter, then Twisted's WebSocket parser."""

    def __init__(self, wire: Any, max_message_bytes: int, call_later: Callable[..., Any]) -> None:
        self.wire = wire  # Twisted's wire protocol, which is also the WebSocketTransport
        self.meter = FrameMeter(max_message_bytes)
        self.call_later = call_later
        self.transport: Any = None
        self._abort_call: Any = None
        self._pings: task.LoopingCall | None = None

    def makeConnection(self, transport: ITransport) -> None:
        self.transport = transport
        # The HTTP channel produced the answers of the request that was upgraded; nothing
        # is left for it to produce, and while it is registered a TLS connection never closes.
        transport.unregisterProducer()  # type: ignore[attr-defined]
        self.wire.makeConnection(transport)
        connection = guarded(transport)
        if connection is not None and connection.idle_timeout_s is not None:
            self._pings = task.LoopingCall(self._ping)
            self._pings.clock = connection.guard.reactor
            self._pings.start(connection.idle_timeout_s / 3, now=False)

    def _ping(self) -> None:
        try:
            self.wire.ping(b"")
        except LocalProtocolError:  # closing: no more pings
            self._stop_pings()

    def _stop_pings(self) -> None:
        if self._pings is not None and self._pings.running:
            self._pings.stop()
        self._pings = None

    def connectionMade(self) -> None:
        pass  # the wire protocol's own runs in makeConnection

    def dataReceived(self, data: bytes) -> None:
        if self.meter.refusal is not None:
            return  # refused: the rest is dropped unread while the connection closes
        allowed = self.meter.feed(data)
        if allowed:
            self.wire.dataReceived(allowed)
        if self.meter.refusal is not None:
            self._refuse()

    def _refuse(self) -> None:
        peer = self.transport.getPeer() if self.transport is not None else None
        log.info("Closed a WebSocket from {peer}: {why}", peer=str(peer), why=self.meter.refusal)
        if self.transport is not None:
            self.transport.pauseProducing()  # leave the rest unread: the peer's sends back up, not our CPU
        try:
            self.wire.loseConnection(MESSAGE_TOO_BIG, "message too big")
        except LocalProtocolError:  # already closing: no Close frame to send any more
            self._abort()
            return
        self._abort_call = self.call_later(CLOSE_GRACE_S, self._abort)

    def _abort(self) -> None:
        self._abort_call = None
        if self.transport is not None:
            self.transport.abortConnection()

    def connectionLost(self, reason: Failure) -> None:
        self._stop_pings()
        if self._abort_call is not None and self._abort_call.active():
            self._abort_call.cancel()
        self._abort_call = None
        self.transport = None
        self.wire.connectionLost(reason)


class BoundedWebSocketResource(WebSocketResource):
    """A :class:`WebSocketResource` whose connections refuse messages over ``max_message_bytes``."""

    def __init__(self, factory: WebSocketServerFactory[Any], max_message_bytes: int,
                 connections: weakref.WeakSet[MeteredWire] | None = None) -> None:
        super().__init__(factory)
        self.max_message_bytes = max_message_bytes
        #: The open connections (each with its meter), for monitoring; may be shared by endpoints.
        self.connections: weakref.WeakSet[MeteredWire] = connections if connections is not None else weakref.WeakSet()

    def render_GET(self, request: Request) -> bytes | int:
        channel: Any = request.channel
        upgrade = channel._protocolUpgradeForWebsockets

        def metered_upgrade(wire: Any) -> None:
            metered = MeteredWire(wire, self.max_message_bytes, channel.callLater)
            self.connections.add(metered)
            upgrade(metered)

        # Only this request's channel, only for this call: the handshake below upgrades it.
        channel._protocolUpgradeForWebsockets = metered_upgrade
        try:
            result: bytes | int = super().render_GET(request)
        finally:
            del channel._protocolUpgradeForWebsockets
        return result

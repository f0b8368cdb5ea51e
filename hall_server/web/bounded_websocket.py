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
gets a Close frame with code 1009 (message too big) and the connection is dropped.
The meter only counts; framing, unmasking, UTF-8 and the closing handshake stay
wsproto's.

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
from typing import Any

from twisted.internet.interfaces import IProtocol, ITransport
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.http import HTTPChannel
from twisted.web.server import Request
from twisted.web.websocket import WebSocketResource, WebSocketServerFactory
from wsproto.utilities import LocalProtocolError
from zope.interface import implementer

from hall_server.web.channel import MAX_REQUEST_BYTES

log = Logger()

CONSOLE_MESSAGE_BYTES = MAX_REQUEST_BYTES
BOARD_MESSAGE_BYTES = 4 * 1024
TERMINAL_MESSAGE_BYTES = 64 * 1024
#: RFC 6455's close code for "a message too big to process".
MESSAGE_TOO_BIG = 1009

_CONTROL = 0x8  # opcodes 0x8-0xF are control frames: at most 125 bytes, no part of a message
_CONTINUATION = 0x0

# The resource below hands the upgraded connection to its meter through the channel's
# upgrade hook; if a Twisted release renames it, fail at import rather than serve unbounded.
if not hasattr(HTTPChannel, "_protocolUpgradeForWebsockets"):  # pragma: no cover
    raise ImportError("this Twisted has no HTTPChannel._protocolUpgradeForWebsockets; "
                      "hall_server.web.bounded_websocket needs updating")


class FrameMeter:
    """Sans-I/O: reads the frame headers of a client's byte stream and counts messages.

    :meth:`feed` says how many of the bytes given may go on to the parser: all of them,
    or, once a frame would carry its message past ``max_message_bytes``, those before
    that frame's header (then :attr:`refusal` says why, and every later byte is refused
    too).  Whatever the input, the meter holds at most one frame header (14 bytes).
    """

    def __init__(self, max_message_bytes: int) -> None:
        self.max_message_bytes = max_message_bytes
        self.refusal: str | None = None
        #: Bytes passed on to the parser so far: what the connection may have buffered.
        self.passed = 0
        self._header = bytearray()
        self._payload_left = 0
        self._message_bytes = 0

    def feed(self, data: bytes) -> int:
        """How many leading bytes of ``data`` may be parsed (``len(data)`` unless refused)."""
        if self.refusal is not None:
            return 0
        index, size = 0, len(data)
        header_start = 0 if self._header else None
        while index < size:
            if self._payload_left:
                step = min(self._payload_left, size - index)
                self._payload_left -= step
                index += step
                continue
            if not self._header:
                header_start = index
            self._header.append(data[index])
            index += 1
            needed = self._header_length()
            if needed is None or len(self._header) < needed:
                continue
            if not self._frame_fits():
                allowed = header_start or 0
                self.passed += allowed
                return allowed
            self._header.clear()
        self.passed += size
        return size

    def _header_length(self) -> int | None:
        """The whole header's length once its first two bytes are in, else ``None``."""
        if len(self._header) < 2:
            return None
        length7 = self._header[1] & 0x7F
        extended = 2 if length7 == 126 else 8 if length7 == 127 else 0
        masked = 4 if self._header[1] & 0x80 else 0
        return 2 + extended + masked

    def _frame_fits(self) -> bool:
        """Account for the frame whose header is complete; ``False`` if it is refused."""
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
                announced = "a frame of" if fin and opcode != _CONTINUATION else "a message growing to"
                self.refusal = f"{announced} {self._message_bytes} bytes; at most {self.max_message_bytes} are read"
                return False
            if fin:
                self._message_bytes = 0
        self._payload_left = length
        return True


@implementer(IProtocol)
class MeteredWire:
    """The upgraded connection's protocol: the meter, then Twisted's WebSocket parser."""

    def __init__(self, wire: Any, max_message_bytes: int) -> None:
        self.wire = wire  # Twisted's wire protocol, which is also the WebSocketTransport
        self.meter = FrameMeter(max_message_bytes)
        self.transport: ITransport | None = None

    def makeConnection(self, transport: ITransport) -> None:
        self.transport = transport
        self.wire.makeConnection(transport)

    def connectionMade(self) -> None:
        pass  # the wire protocol's own runs in makeConnection

    def dataReceived(self, data: bytes) -> None:
        if self.meter.refusal is not None:
            return  # refused: the rest is dropped unread while the connection closes
        allowed = self.meter.feed(data)
        if allowed:
            self.wire.dataReceived(data[:allowed] if allowed < len(data) else data)
        if self.meter.refusal is not None:
            self._refuse()

    def _refuse(self) -> None:
        peer = self.transport.getPeer() if self.transport is not None else None
        log.info("Closed a WebSocket from {peer}: {why}", peer=str(peer), why=self.meter.refusal)
        try:
            self.wire.loseConnection(MESSAGE_TOO_BIG, "message too big")
        except LocalProtocolError:  # already closing: no Close frame to send any more
            if self.transport is not None:
                self.transport.abortConnection()  # type: ignore[attr-defined]

    def connectionLost(self, reason: Failure) -> None:
        self.wire.connectionLost(reason)


class BoundedWebSocketResource(WebSocketResource):
    """A :class:`WebSocketResource` whose connections refuse messages over ``max_message_bytes``."""

    def __init__(self, factory: WebSocketServerFactory[Any], max_message_bytes: int) -> None:
        super().__init__(factory)
        self.max_message_bytes = max_message_bytes
        #: The open connections' meters, for monitoring and tests.
        self.connections: weakref.WeakSet[MeteredWire] = weakref.WeakSet()

    def render_GET(self, request: Request) -> bytes | int:
        channel: Any = request.channel
        upgrade = channel._protocolUpgradeForWebsockets

        def metered_upgrade(wire: Any) -> None:
            metered = MeteredWire(wire, self.max_message_bytes)
            self.connections.add(metered)
            upgrade(metered)

        # Only this request's channel, only for this call: the handshake below upgrades it.
        channel._protocolUpgradeForWebsockets = metered_upgrade
        try:
            result: bytes | int = super().render_GET(request)
        finally:
            del channel._protocolUpgradeForWebsockets
        return result

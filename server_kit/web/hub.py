"""The live hub's parts every server shares: sockets that push JSON, and an isolated fan-out.

A server's hub (the hall's :class:`hall_server.web.live.LiveHub`) decides what each
receiver is told after a commit; these parts make sure that one receiver never affects
another: each send is isolated, and a socket whose send fails (a peer that sent a
Close frame and keeps its TCP connection open, a broken transport) is dropped and its
connection aborted.
"""

from __future__ import annotations

from typing import Any, MutableSet

from twisted.logger import Logger
from twisted.web.websocket import WebSocketTransport

from protocol.compact_json import compact
from server_kit.web.channel import ChannelError, error_answer

log = Logger()


def fan_out(sockets: MutableSet[Any], text: str) -> None:
    """Send ``text`` to every socket; one that fails is dropped from ``sockets`` and aborted."""
    for socket in list(sockets):
        try:
            socket.send_text(text)
        except Exception as error:  # whatever went wrong with this one, the others get theirs
            log.info("Dropped a {kind} whose connection failed: {error!r}", kind=socket.kind, error=error)
            sockets.discard(socket)
            socket.abort()


class LiveSocket:
    """What both sockets share: the transport, and sending once negotiated."""

    kind = "socket"

    def __init__(self) -> None:
        self.transport: WebSocketTransport | None = None

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport

    def send_text(self, text: str) -> None:
        if self.transport is not None:
            self.transport.sendTextMessage(text)

    def abort(self) -> None:
        """Drop the connection at once, without a closing handshake (its peer is not reading)."""
        transport, self.transport = self.transport, None
        wire = getattr(transport, "transport", None)  # the TCP or TLS connection under the WebSocket
        if wire is not None:
            wire.abortConnection()

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(compact(message))

    def pongReceived(self, payload: bytes) -> None:
        pass  # the browser answers pings; nothing to do with the answer

    def bytesMessageReceived(self, data: bytes | bytearray) -> None:
        self.send(error_answer(None, ChannelError("malformed", "send JSON text, not binary frames")))

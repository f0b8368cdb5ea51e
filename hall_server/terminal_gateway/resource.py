"""The gateway's web resources: the terminals' WebSocket and the kiosk app's files.

=====================  ==========================================================
path                   what
=====================  ==========================================================
``/kiosk``             the kiosk / handheld web app (``kiosk.html``)
``/kiosk/static/...``  its CSS, JavaScript and sounds, by name only
``/kiosk/ws``          the terminals' WebSocket (``docs/terminal-protocol.md``)
=====================  ==========================================================

:class:`TerminalSocket` only forwards frames to a :class:`TerminalSession` and its
answers back; the session holds the logic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import Request
from twisted.web.websocket import WebSocketTransport

from hall_server.terminal_gateway.gateway import TerminalGateway, TerminalSession
from hall_server.web.bounded_websocket import TERMINAL_MESSAGE_BYTES, BoundedWebSocketResource

STATIC = Path(__file__).parent / "static"
CONTENT_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".svg": b"image/svg+xml",
}
SECURITY_HEADERS = {
    b"content-security-policy": b"default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"no-referrer",
}


class TerminalSocket:
    """The WebSocket protocol of one terminal: frames to the session, the session's text to frames."""

    def __init__(self, gateway: TerminalGateway) -> None:
        self.gateway = gateway
        self.transport: WebSocketTransport | None = None
        self.session: TerminalSession | None = None

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport
        self.session = TerminalSession(self.gateway, self._send, self._close)

    def negotiationFinished(self) -> None:
        pass  # the terminal speaks first, with hello

    def _send(self, text: str) -> None:
        if self.transport is not None:
            self.transport.sendTextMessage(text)

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.loseConnection(4003)

    def textMessageReceived(self, message: str) -> None:
        assert self.session is not None
        self.session.message_received(message)

    def bytesMessageReceived(self, data: bytes | bytearray) -> None:
        assert self.session is not None
        self.session.message_received(b"\xff")  # refused as malformed: the protocol is JSON text

    def pongReceived(self, payload: bytes) -> None:
        pass

    def connectionLost(self, reason: Failure) -> None:
        if self.session is not None:
            self.session.connection_lost()
        self.transport = None


class _Factory:
    def __init__(self, gateway: TerminalGateway) -> None:
        self.gateway = gateway

    def buildProtocol(self, request: Any) -> TerminalSocket:
        return TerminalSocket(self.gateway)


class _File(Resource):
    isLeaf = True

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def render_GET(self, request: Request) -> bytes:
        request.setHeader(b"content-type", CONTENT_TYPES[self.path.suffix])
        request.setHeader(b"cache-control", b"no-cache")
        for name, value in SECURITY_HEADERS.items():
            request.setHeader(name, value)
        return self.path.read_bytes()


class _Static(Resource):
    """The kiosk's files by name only: no directories, no listing, no ``..``."""

    def getChild(self, path: bytes, request: Request) -> Resource:
        name = path.decode("ascii", "replace")
        candidate = STATIC / name
        if "/" in name or name.startswith(".") or candidate.suffix not in CONTENT_TYPES or not candidate.is_file():
            return _NotFound()
        return _File(candidate)


class _NotFound(Resource):
    isLeaf = True

    def render(self, request: Request) -> bytes:
        request.setResponseCode(404)
        return b"not found"


class KioskResource(Resource):
    """``/kiosk``: the app, its files and the terminals' WebSocket."""

    def __init__(self, gateway: TerminalGateway) -> None:
        super().__init__()
        self.page = _File(STATIC / "kiosk.html")
        self.putChild(b"static", _Static())
        self.putChild(b"ws", BoundedWebSocketResource(_Factory(gateway), TERMINAL_MESSAGE_BYTES))  # type: ignore[arg-type]

    def getChild(self, path: bytes, request: Request) -> Resource:
        if path in (b"", b"index.html"):
            return self.page
        return _NotFound()

    def render_GET(self, request: Request) -> bytes:
        return self.page.render_GET(request)

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

Over TLS the WebSocket handshake is refused (403) unless the connection presented a
terminal certificate of the hall's authority, and the terminal may then say hello only
as the terminal its certificate names (``docs/pki.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import Request
from twisted.web.websocket import WebSocketResource, WebSocketTransport

from hall_server import pki
from hall_server.terminal_gateway.gateway import TerminalGateway, TerminalSession
from protocol.terminal_messages import MessageError, decode

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

    def __init__(self, gateway: TerminalGateway, certified_as: str | None = None) -> None:
        self.gateway = gateway
        self.certified_as = certified_as  # the terminal the connection's certificate names
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
        if self.certified_as is not None and self.session.terminal_id is None:
            claimed = _hello_as(message)
            if claimed is not None and claimed != self.certified_as:
                self.session.refuse_and_close(
                    "not_enrolled", f"this connection's certificate is for terminal {self.certified_as}, not {claimed}"
                )
                return
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


def _hello_as(message: str) -> str | None:
    """The terminal a well-formed ``hello`` names; None for any other message."""
    try:
        decoded = decode(message)
    except MessageError:
        return None  # the session answers it
    return str(decoded["terminal"]) if decoded["type"] == "hello" else None


class _Factory:
    def __init__(self, gateway: TerminalGateway, certified_as: str | None) -> None:
        self.gateway = gateway
        self.certified_as = certified_as

    def buildProtocol(self, request: Any) -> TerminalSocket:
        return TerminalSocket(self.gateway, self.certified_as)


class TerminalSocketResource(Resource):
    """``/kiosk/ws``: with ``require_certificate``, for connections presenting a terminal
    certificate only; the WebSocket is bound to the terminal the certificate names."""

    isLeaf = True

    def __init__(self, gateway: TerminalGateway, require_certificate: bool) -> None:
        super().__init__()
        self.gateway = gateway
        self.require_certificate = require_certificate

    def render_GET(self, request: Request) -> bytes | int:
        certified_as = None
        if self.require_certificate:
            try:
                identity = pki.presented_identity(request.transport)
            except pki.PkiError:
                identity = None
            if identity is None or identity.role is not pki.Role.terminal:
                request.setResponseCode(403)
                request.setHeader(b"content-type", b"text/plain; charset=utf-8")
                shown = "no certificate" if identity is None else f"a {identity.role} certificate"
                return f"a terminal connects with its terminal certificate; this connection presented {shown}".encode()
            certified_as = identity.common_name
        result: bytes | int = WebSocketResource(_Factory(self.gateway, certified_as)).render_GET(request)  # type: ignore[arg-type]
        return result


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
    """``/kiosk``: the app, its files and the terminals' WebSocket (see :class:`TerminalSocketResource`)."""

    def __init__(self, gateway: TerminalGateway, require_certificate: bool = True) -> None:
        super().__init__()
        self.page = _File(STATIC / "kiosk.html")
        self.putChild(b"static", _Static())
        self.putChild(b"ws", TerminalSocketResource(gateway, require_certificate))

    def getChild(self, path: bytes, request: Request) -> Resource:
        if path in (b"", b"index.html"):
            return self.page
        return _NotFound()

    def render_GET(self, request: Request) -> bytes:
        return self.page.render_GET(request)

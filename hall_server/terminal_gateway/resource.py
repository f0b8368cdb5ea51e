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

Before the WebSocket opens, ``/kiosk/ws`` refuses:

* a browser page of another site: a request with an ``Origin`` header must name exactly
  this hall, scheme, host and port (``https://hall.example:8443``), as the ``Host`` header
  and the connection's TLS say it (403).  A request without ``Origin`` comes from no
  browser page (the headless client, a kiosk's own software); it is let in, since a
  connection is nobody until its ``hello`` presents the terminal's id and token, and
  what it sends before that is bounded, counted and never journaled;
* a terminal certificate that made too many errors before hello, or without a
  certificate an address that did, for a while (429; see
  :class:`~hall_server.terminal_gateway.gateway.PreHelloLimiter`): one terminal's
  errors never block the other terminals behind the same address;
* over TLS, a connection that presented no terminal certificate of the hall's authority
  (403); the terminal may then say hello only as the terminal its certificate names
  (``docs/pki.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.internet.interfaces import IDelayedCall
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import Request
from twisted.web.websocket import WebSocketTransport

from hall_server.terminal_gateway.gateway import TerminalGateway, TerminalSession, limit_key
from hall_server.web.site import header_text
from server_kit import pki
from server_kit.web.bounded_websocket import TERMINAL_MESSAGE_BYTES, BoundedWebSocketResource

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


#: Seconds a closed connection has to finish its close handshake before TCP is cut.
CLOSE_GRACE_S = 5.0


def client_address(request: Request) -> str:
    """The remote host of ``request``, for counting errors per address."""
    return str(getattr(request.getClientAddress(), "host", "local"))


def hall_origin(request: Request) -> str | None:
    """This hall's origin as the browser addressed it: scheme, host and port."""
    host = header_text(request, b"host")
    if not host:
        return None
    return f"{'https' if request.isSecure() else 'http'}://{host}".lower()


def origin_allowed(request: Request) -> bool:
    """No ``Origin`` (no browser page), or exactly this hall's."""
    origin = header_text(request, b"origin")
    return origin is None or origin.lower() == hall_origin(request)


class TerminalSocket:
    """The WebSocket protocol of one terminal: frames to the session, the session's text to frames."""

    def __init__(self, gateway: TerminalGateway, address: str = "local", certified_as: str | None = None) -> None:
        self.gateway = gateway
        self.address = address
        self.certified_as = certified_as  # the terminal the connection's certificate names
        self.transport: WebSocketTransport | None = None
        self.session: TerminalSession | None = None
        self._cut: IDelayedCall | None = None  # cuts TCP if a close does not finish

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport
        self.session = TerminalSession(
            self.gateway, self._send, self._close, self.address, certified_as=self.certified_as
        )

    def negotiationFinished(self) -> None:
        pass  # the terminal speaks first, with hello

    def _send(self, text: str) -> None:
        if self.transport is not None:
            self.transport.sendTextMessage(text)

    def _close(self) -> None:
        transport, self.transport = self.transport, None
        if transport is None:
            return
        tcp = getattr(transport, "transport", None)  # under the WebSocket
        try:
            transport.loseConnection(4003)
        except Exception:
            # The close handshake had begun (the peer sent a Close frame): just cut TCP.
            if tcp is not None:
                tcp.abortConnection()
            return
        if tcp is not None:
            # A peer that reads nothing would keep the socket open: cut it after a grace.
            self._cut = self.gateway.clock.callLater(CLOSE_GRACE_S, tcp.abortConnection)

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
        if self._cut is not None and self._cut.active():
            self._cut.cancel()


def presented_certificate(request: Request) -> pki.PeerIdentity | None:
    """Who the client certificate of ``request``'s connection names; None for none, or for one naming no role."""
    try:
        return pki.presented_identity(getattr(request, "transport", None))
    except pki.PkiError:
        return None


class _Factory:
    def __init__(self, gateway: TerminalGateway, certified_as: str | None) -> None:
        self.gateway = gateway
        self.certified_as = certified_as

    def buildProtocol(self, request: Any) -> TerminalSocket:
        return TerminalSocket(self.gateway, client_address(request), self.certified_as)


class TerminalSocketResource(Resource):
    """``/kiosk/ws``: with ``require_certificate``, for connections presenting a terminal
    certificate only; the WebSocket is bound to the terminal the certificate names."""

    isLeaf = True

    def __init__(self, gateway: TerminalGateway, require_certificate: bool) -> None:
        super().__init__()
        self.gateway = gateway
        self.require_certificate = require_certificate

    def factory_for(self, request: Request) -> "_Factory | str":
        """The protocol factory for this connection, or why it is refused."""
        if not self.require_certificate:
            return _Factory(self.gateway, None)
        identity = presented_certificate(request)
        if identity is None or identity.role is not pki.Role.terminal:
            shown = "no certificate" if identity is None else f"a {identity.role} certificate"
            return f"a terminal connects with its terminal certificate; this connection presented {shown}"
        return _Factory(self.gateway, identity.common_name)

    def render_GET(self, request: Request) -> bytes | int:
        factory = self.factory_for(request)
        if isinstance(factory, str):
            request.setResponseCode(403)
            request.setHeader(b"content-type", b"text/plain; charset=utf-8")
            return factory.encode()
        socket = BoundedWebSocketResource(factory, TERMINAL_MESSAGE_BYTES)  # type: ignore[arg-type]
        result: bytes | int = socket.render_GET(request)
        return result


class File(Resource):
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
            return NotFound()
        return File(candidate)


class NotFound(Resource):
    isLeaf = True

    def render(self, request: Request) -> bytes:
        request.setResponseCode(404)
        return b"not found"


class Refused(Resource):
    """A WebSocket handshake refused before it opens, with the status and why."""

    isLeaf = True

    def __init__(self, status: int, why: bytes) -> None:
        super().__init__()
        self.status = status
        self.why = why

    def render(self, request: Request) -> bytes:
        request.setResponseCode(self.status)
        request.setHeader(b"content-type", b"text/plain; charset=utf-8")
        return self.why


class KioskResource(Resource):
    """``/kiosk``: the app, its files and the terminals' WebSocket (see :class:`TerminalSocketResource`)."""

    def __init__(self, gateway: TerminalGateway, require_certificate: bool = True) -> None:
        super().__init__()
        self.gateway = gateway
        self.page = File(STATIC / "kiosk.html")
        self.putChild(b"static", _Static())
        self.putChild(b"ws", TerminalSocketResource(gateway, require_certificate))

    def getChildWithDefault(self, path: bytes, request: Request) -> Resource:
        if path == b"ws":
            if not origin_allowed(request):
                return Refused(403, b"this socket is for the kiosk pages of this hall only")
            identity = presented_certificate(request)
            certified_as = identity.common_name if identity is not None and identity.role is pki.Role.terminal else None
            if self.gateway.limiter.blocked(limit_key(client_address(request), certified_as)):
                return Refused(429, b"too many errors from this terminal or address; try again later")
        return super().getChildWithDefault(path, request)

    def getChild(self, path: bytes, request: Request) -> Resource:
        if path in (b"", b"index.html"):
            return self.page
        return NotFound()

    def render_GET(self, request: Request) -> bytes:
        return self.page.render_GET(request)

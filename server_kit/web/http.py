"""What every answer of a server's web site carries, whichever server it is.

* :data:`SECURITY_HEADERS` on every page and JSON answer: no script from elsewhere, no
  framing, no sniffing, no referrer;
* :func:`json_response`: a JSON answer, never cached;
* :class:`StaticFiles`: a page's CSS and JavaScript, by name, with those headers;
* :class:`SecureRequest`: no ``Server`` banner (Twisted names itself and its version in
  every answer otherwise; a banner helps only an attacker), ``Strict-Transport-Security``
  over TLS, and JSON for every error: a JSON ``internal`` error when a resource fails
  unexpectedly (a storage fault is ``storage_unavailable``, 503, with the fault named),
  a JSON 405 (with ``Allow``) for a method a resource does not answer and
  a JSON 404 where Twisted would write an HTML page, never an HTML error page;
* :func:`secure_site`: the :class:`~twisted.web.server.Site` every server's web port
  serves, whose request bodies are bounded while they are read (:class:`BoundedChannel`):
  a body whose declared ``Content-Length`` is over the site's bound is refused with a
  JSON 413 before a byte of it is read, a chunked one as soon as what came passes the
  bound, and what the peer sends after is left unread; a body is kept in memory, never
  in a temporary file.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.http import HTTPChannel, datetimeToLogString
from twisted.web.error import UnsupportedMethod
from twisted.web.resource import Resource
from twisted.web.server import Request, Site

from server_kit.db.faults import storage_fault
from server_kit.web.channel import MAX_REQUEST_BYTES, ChannelError, error_answer

log = Logger()

SECURITY_HEADERS = {
    b"content-security-policy": b"default-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    b"x-content-type-options": b"nosniff",
    b"x-frame-options": b"DENY",
    b"referrer-policy": b"no-referrer",
}
#: A year; sent over TLS only, so a browser that once reached the server never falls back to HTTP.
HSTS = b"max-age=31536000"
#: The largest request body a site reads unless it is given another bound: a command request.
MAX_BODY_BYTES = MAX_REQUEST_BYTES
#: Seconds a peer whose body was refused has to let the connection close before it is aborted.
CLOSE_GRACE_S = 5.0


def secure(request: Request) -> None:
    """The security headers of a page or a JSON answer."""
    for name, value in SECURITY_HEADERS.items():
        request.setHeader(name, value)


def json_response(request: Request, status: int, body: dict[str, Any]) -> bytes:
    request.setResponseCode(status)
    request.setHeader(b"content-type", b"application/json; charset=utf-8")
    request.setHeader(b"cache-control", b"no-store")
    secure(request)
    return json.dumps(body, separators=(",", ":")).encode()


def error_body(request: Request, status: int, code: str, message: str) -> bytes:
    """A JSON error answer: ``{"id": null, "ok": false, "error": {"code", "message"}}``."""
    return json_response(request, status, error_answer(None, ChannelError(code, message)))


class SecureRequest(Request):
    """Every answer of a server's site: no ``Server`` banner, HSTS over TLS, JSON for every
    error; its body counted while it is read (:class:`BoundedChannel` refuses it past the bound)."""

    _body_bytes = 0

    def process(self) -> None:
        if self.isSecure():
            self.setHeader(b"strict-transport-security", HSTS)
        super().process()

    def gotLength(self, length: int | None) -> None:
        # The channel refused a declared length over the bound before this: what comes is
        # small, and stays in memory (Twisted would open a temporary file for a big one).
        self.content = io.BytesIO()
        self._body_bytes = 0

    def handleContentChunk(self, data: bytes) -> None:
        channel: Any = self.channel
        if getattr(channel, "refused", False):
            return
        self._body_bytes += len(data)
        limit = body_limit(channel)
        if self._body_bytes > limit:
            channel.refuse_body(limit)
            return
        super().handleContentChunk(data)

    def render(self, resrc: Any) -> None:
        super().render(_JsonErrors(resrc))

    def setHeader(self, name: bytes | str, value: bytes | str) -> None:
        if (name.lower() if isinstance(name, bytes) else name.lower().encode()) == b"server":
            return
        super().setHeader(name, value)

    def processingFailed(self, reason: Failure) -> None:  # type: ignore[override]
        """An unexpected fault: logged, and answered with the JSON ``internal`` error."""
        log.failure("answering {method} {path}", reason, method=self.method, path=self.path)
        if self.finished or self._disconnected:
            return
        if self.startedWriting:
            self.finish()  # part of an answer is out: all that is left is to end it
            return
        self.responseHeaders.removeHeader(b"content-length")
        fault = storage_fault(reason.value, "the server's database") if reason.value is not None else None
        if fault is not None:  # the storage: named for staff, 503 (try again later)
            body = json_response(self, 503, error_answer(None, ChannelError(fault.code, str(fault))))
        else:
            body = json_response(self, 500, error_answer(None, ChannelError(
                "internal", "the server failed on this request; the fault is logged")))
        self.setHeader(b"content-length", str(len(body)).encode())
        self.write(body)
        self.finish()


class _JsonErrors:
    """A resource answered as itself, but with JSON where Twisted writes an HTML error page:
    a method it does not answer (405, with ``Allow``) and Twisted's own error pages."""

    def __init__(self, resource: Any) -> None:
        self.resource = resource

    def render(self, request: Request) -> Any:
        page = _twisted_error_page(self.resource)
        if page is not None:
            code, brief = page
            return error_body(request, code, "not_found" if code == 404 else "refused", brief)
        try:
            return self.resource.render(request)
        except UnsupportedMethod as unsupported:
            methods: list[bytes] = list(unsupported.allowedMethods)
            allowed = [name.decode("ascii", "replace") for name in methods]
            if request.method == b"HEAD" and "GET" in allowed:
                raise  # Twisted answers HEAD as a GET without its body
            request.setHeader(b"allow", ", ".join(allowed).encode())
            asked = (request.method or b"").decode("latin-1")[:16]
            return error_body(request, 405, "method_not_allowed",
                              f"{asked} is not answered here; use {' or '.join(allowed) or 'nothing'}")


def _twisted_error_page(resource: Any) -> tuple[int, str] | None:
    """``(status, brief)`` of one of Twisted's own HTML error pages (``NoResource`` and
    kin, ``pages.errorPage``), or None for any other resource."""
    if type(resource).__module__ not in ("twisted.web.resource", "twisted.web.pages"):
        return None
    code = getattr(resource, "code", getattr(resource, "_code", None))
    if not isinstance(code, int):
        return None
    return code, str(getattr(resource, "brief", getattr(resource, "_brief", "")))


def body_limit(channel: Any) -> int:
    """The bound on a request body of ``channel``'s site."""
    return int(getattr(getattr(channel, "site", None), "max_body_bytes", MAX_BODY_BYTES))


class BoundedChannel(HTTPChannel):
    """An HTTP connection that refuses a request body past its site's bound while it arrives.

    A declared ``Content-Length`` over the bound is refused on the headers (no ``100
    Continue``, nothing of the body read); a chunked body once what came passes it
    (:meth:`SecureRequest.handleContentChunk`).  The refusal is a JSON 413 with
    ``Connection: close``; then nothing more is read, and the connection is aborted if
    the peer has not let it close within :data:`CLOSE_GRACE_S`.
    """

    refused = False
    _abort_call: Any = None

    def allHeadersReceived(self) -> None:
        limit = body_limit(self)
        if self.length is not None and self.length > limit:
            self.refuse_body(limit)
            return
        super().allHeadersReceived()

    def rawDataReceived(self, data: bytes) -> None:
        if not self.refused:
            super().rawDataReceived(data)

    def lineReceived(self, line: bytes) -> None:
        if not self.refused:
            super().lineReceived(line)

    def refuse_body(self, limit: int) -> None:
        """Answer 413 and read nothing more from this connection."""
        if self.refused:
            return
        self.refused = True
        transport: Any = self.transport
        if transport is None:
            return
        log.info("Refused a request body over {limit} bytes from {peer}", limit=limit,
                 peer=getattr(transport.getPeer(), "host", "?"))
        if len(self.requests) <= 1:  # no earlier answer still being written on this connection
            body = json.dumps(error_answer(None, ChannelError(
                "too_large", f"a request body is at most {limit} bytes here")), separators=(",", ":")).encode()
            headers = [b"HTTP/1.1 413 Content Too Large", b"content-type: application/json; charset=utf-8",
                       b"cache-control: no-store", b"connection: close", b"content-length: %d" % len(body)]
            headers += [name + b": " + value for name, value in SECURITY_HEADERS.items()]
            if self.isSecure():
                headers.append(b"strict-transport-security: " + HSTS)
            transport.write(b"\r\n".join(headers) + b"\r\n\r\n" + body)
        transport.pauseProducing()  # what the peer still sends stays in its buffers, not ours
        self.loseConnection()
        self._abort_call = self.callLater(CLOSE_GRACE_S, transport.abortConnection)

    def connectionLost(self, reason: Failure) -> None:  # type: ignore[override]
        if self._abort_call is not None and self._abort_call.active():
            self._abort_call.cancel()
        super().connectionLost(reason)


#: The web ports' access log: every request, at debug level.
access_log = Logger(namespace="access")


class BoundedSite(Site):
    """A :class:`Site` whose connections are :class:`BoundedChannel`: bodies of at most ``max_body_bytes``.

    Its access log (one combined-format line a request) is written at debug level
    (namespace ``access``): a server's log shows what happened, not every stylesheet
    fetched or every sign-in asked for; ``--log-level debug`` shows them.
    """

    protocol = BoundedChannel  # type: ignore[assignment]

    def __init__(self, resource: Any, *, max_body_bytes: int = MAX_BODY_BYTES,
                 request_factory: type[Request] = SecureRequest) -> None:
        super().__init__(resource, requestFactory=request_factory)
        self.max_body_bytes = max_body_bytes
        self.displayTracebacks = False

    def log(self, request: Request) -> None:  # type: ignore[override]
        # The wall clock's date, not the reactor's: the reactor's clock is monotonic (server_kit/clock.py).
        access_log.debug("{access}", access=self._logFormatter(datetimeToLogString(), request))


def secure_site(resource: Any, *, max_body_bytes: int = MAX_BODY_BYTES,
                request_factory: type[Request] = SecureRequest) -> BoundedSite:
    """The site a server serves ``resource`` with: JSON errors, no banner, HSTS, bounded bodies."""
    return BoundedSite(resource, max_body_bytes=max_body_bytes, request_factory=request_factory)


class StaticFiles(Resource):
    """A page's CSS and JavaScript: the files of ``folders``, by name, the first folder's first.

    The files are small and few, so they are read whole; there is no directory
    listing and no path below a folder.
    """

    TYPES = {".css": b"text/css; charset=utf-8", ".js": b"text/javascript; charset=utf-8",
             ".html": b"text/html; charset=utf-8"}

    def __init__(self, *folders: Path) -> None:
        super().__init__()
        self.folders = folders

    def getChild(self, path: bytes, request: Request) -> Resource:
        name = path.decode("ascii", "replace")
        if "/" in name or name.startswith(".") or Path(name).suffix not in self.TYPES:
            return NotFound()
        for folder in self.folders:
            file = folder / name
            if file.is_file():
                return _StaticFile(file, self.TYPES[file.suffix])
        return NotFound()


class _StaticFile(Resource):
    isLeaf = True

    def __init__(self, path: Path, content_type: bytes) -> None:
        super().__init__()
        self.path = path
        self.content_type = content_type

    def render_GET(self, request: Request) -> bytes:
        secure(request)
        request.setHeader(b"content-type", self.content_type)
        request.setHeader(b"cache-control", b"no-cache")
        return self.path.read_bytes()


class NotFound(Resource):
    isLeaf = True

    def render(self, request: Request) -> bytes:
        return error_body(request, 404, "not_found", "nothing is served at this address")

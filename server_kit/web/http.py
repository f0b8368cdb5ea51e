"""What every answer of a server's web site carries, whichever server it is.

* :data:`SECURITY_HEADERS` on every page and JSON answer: no script from elsewhere, no
  framing, no sniffing, no referrer;
* :func:`json_response`: a JSON answer, never cached;
* :class:`StaticFiles`: a page's CSS and JavaScript, by name, with those headers;
* :class:`SecureRequest`: no ``Server`` banner (Twisted names itself and its version in
  every answer otherwise; a banner helps only an attacker), ``Strict-Transport-Security``
  over TLS, and a JSON ``internal`` error when a resource fails unexpectedly, never an
  HTML error page with a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import Request

from server_kit.web.channel import ChannelError, error_answer

log = Logger()

SECURITY_HEADERS = {
    b"content-security-policy": b"default-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    b"x-content-type-options": b"nosniff",
    b"x-frame-options": b"DENY",
    b"referrer-policy": b"no-referrer",
}
#: A year; sent over TLS only, so a browser that once reached the server never falls back to HTTP.
HSTS = b"max-age=31536000"


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


class SecureRequest(Request):
    """Every answer of a server's site: no ``Server`` banner, HSTS over TLS, JSON on a fault."""

    def process(self) -> None:
        if self.isSecure():
            self.setHeader(b"strict-transport-security", HSTS)
        super().process()

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
        body = json_response(self, 500, error_answer(None, ChannelError(
            "internal", "the server failed on this request; the fault is logged")))
        self.setHeader(b"content-length", str(len(body)).encode())
        self.write(body)
        self.finish()


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
        request.setResponseCode(404)
        secure(request)
        request.setHeader(b"content-type", b"text/plain; charset=utf-8")
        return b"not found"

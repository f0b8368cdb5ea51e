"""The console's web site: pages, the JSON API and the WebSocket endpoints.

=====================  ===========  ===========================================
path                   who          what
=====================  ===========  ===========================================
``/``                  anyone       redirects to the console
``/login``             anyone       GET the page; POST ``{"name", "password"}``
``/logout``            staff        POST: ends the sign-in
``/console``           staff        the caller console (else to ``/login``)
``/board``             anyone       the information board for hall screens
``/static/...``        anyone       the pages' CSS and JavaScript
``/api/state``         staff        GET: the console snapshot
``/api/command``       staff        POST: one command request (``channel``)
``/api/document``      staff        POST: a ``print_...`` command's PDF, as a download
``/api/board``         anyone       GET: the board picture
``/api/minutes/...``   admin, room  GET: a game's or session's signed minutes
                       chief        (``game/<id>.pdf``, ``session/<n>.csv``, ``...pdf.sig``)
``/ws``                staff        WebSocket: snapshot, records, commands
``/board/ws``          anyone       WebSocket: the board picture, read-only
``/voice/<lang>/...``  anyone       the board's speech clips (:mod:`hall_server.web.voice`)
``/i18n/...``          anyone       the pages' catalogs (:mod:`hall_server.web.i18n`)
=====================  ===========  ===========================================

Every resource parses, calls one method of the channel, the sign-ins or the view,
and writes JSON; the rules are the core's.  Staff are identified by a server-side
session id in an HttpOnly, SameSite=Strict cookie; state-changing requests must be
JSON (a cross-site form cannot send that), and POSTs and WebSocket handshakes whose
``Origin`` is not exactly this site (scheme, host and port) are refused.  A connection
that presented a client certificate of another role than ``staff`` (a terminal's, say)
is no staff member's: it cannot sign in, and no staff resource serves it; a staff
certificate signs in only its own name (``docs/pki.md``).

Every answer (:class:`HallRequest`) carries no ``Server`` banner, carries
``Strict-Transport-Security`` when it goes over TLS, and is JSON even when a resource
fails unexpectedly or is asked with a method it does not answer: never an HTML error
page.  A request body over 1 MiB is refused (413) on its declared length, or as it
arrives when chunked, before it is read (:func:`server_kit.web.http.secure_site`).  Sign-ins back off after failures and
their password checks are bounded (:mod:`server_kit.web.throttle`); WebSocket
messages are bounded while they are read (:mod:`server_kit.web.bounded_websocket`).
"""

from __future__ import annotations

import base64
import math
import weakref
from importlib import resources
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request, Site
from twisted.web.util import Redirect

from hall_server.i18n import DEFAULT_LANGUAGE
from hall_server.reports.publish import FORMATS, SignedFile
from hall_server.web.auth import SESSION_COOKIE, SignIn, SignInRefused, SignIns
from hall_server.web.forms import document_name, is_document
from hall_server.web.i18n import I18nResource
from hall_server.web.live import BoardSocket, ConsoleSocket, LiveHub, SocketFactory
from hall_server.web.minutes import CONSOLE_KINDS, MinutesDesk, may_read_minutes, well_formed
from hall_server.web.voice import VoiceResource
from hall_server.voice.clips import VoiceClips
from protocol.chain import ChainError
from server_kit import pki
from server_kit.core import Actor
from server_kit.reports.document import ReportError
from server_kit.reports.signing import SIGNATURE_SUFFIX
from server_kit.web.bounded_websocket import (
    BOARD_MESSAGE_BYTES,
    CONSOLE_MESSAGE_BYTES,
    BoundedWebSocketResource,
    MeteredWire,
)
from server_kit.web.channel import (
    MAX_REQUEST_BYTES,
    ChannelError,
    CommandChannel,
    CommandRequest,
    error_answer,
    load_json,
    parse_request,
)
from server_kit.web.consultation import STATIC as CONSULTATION_STATIC
from server_kit.web.http import (
    SECURITY_HEADERS,
    NotFound,
    SecureRequest,
    StaticFiles,
    json_response,
    secure_site,
)
from server_kit.web.http import secure as _secure
from server_kit.web.throttle import SignInThrottle, SignInThrottled

log = Logger()

#: Runs the password check (scrypt, tens of ms) off the reactor thread in the server.
Authenticate = Callable[[str, str], "defer.Deferred[Actor]"]

STATUS = {
    "malformed": 400, "unknown_command": 400, "bad_arguments": 400, "not_allowed": 403,
    "replayed": 409, "refused": 409, "internal": 500, "signed_out": 401, "sign_in_refused": 401,
    "not_found": 404, "journal_invalid": 500, "locked": 429, "busy": 429, "storage_unavailable": 503,
}
def static_dir() -> Path:
    return Path(str(resources.files("hall_server.web") / "static"))


def _secure_file(request: Request) -> None:
    """The headers of a file to open or save, not a page: no script runs in it, and a
    content security policy would keep the browser's own PDF viewer from showing it."""
    for name in (b"x-content-type-options", b"referrer-policy"):
        request.setHeader(name, SECURITY_HEADERS[name])
    request.setHeader(b"cache-control", b"no-store")


def header_text(request: Request, name: bytes) -> str | None:
    """A request header as text, whatever bytes it holds (read as Latin-1: a header is not trusted)."""
    value = request.getHeader(name)
    return value.decode("latin-1") if value is not None else None


def error_response(request: Request, error: ChannelError, request_id: str | None = None) -> bytes:
    return json_response(request, STATUS.get(error.code, 400), error_answer(request_id, error))


def read_json_body(request: Request) -> bytes:
    """The request body, refused unless it is JSON and small (no cross-site forms)."""
    raw = request.getHeader(b"content-type") or b""
    content_type = raw.decode("latin-1").split(";")[0].strip().lower()  # any bytes: a header is not trusted
    if content_type != "application/json":
        raise ChannelError("malformed", "send the request as application/json")
    assert request.content is not None
    body = request.content.read(MAX_REQUEST_BYTES + 1)
    if len(body) > MAX_REQUEST_BYTES:
        raise ChannelError("malformed", f"a request is at most {MAX_REQUEST_BYTES} bytes")
    return body


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_parts(scheme: str, netloc: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of ``scheme://netloc``, the port filled in; ``None`` if unreadable."""
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.password is not None:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def same_origin(request: Request) -> bool:
    """Whether a browser request comes from a page of this very site, or from no page at all.

    The ``Origin`` must be exactly this site: the scheme the request came by (``https``
    over TLS), the host and the port it was sent to (RFC 6454).  ``Origin: null`` (a
    sandboxed or local page) is another site.  A request without ``Origin`` comes from
    no page (a terminal, a script): cross-site requests from browsers always carry one.
    """
    origin = header_text(request, b"origin")
    if origin is None:
        return True
    scheme, separator, rest = origin.partition("://")
    if not separator or scheme.lower() not in _DEFAULT_PORTS or "/" in rest:
        return False
    ours = _origin_parts("https" if request.isSecure() else "http", header_text(request, b"host") or "")
    return ours is not None and _origin_parts(scheme.lower(), rest) == ours


def foreign_origin(request: Request) -> bytes | None:
    """The error answer for a request from another site's page, or ``None`` if it is ours."""
    if same_origin(request):
        return None
    return error_response(request, ChannelError("not_allowed", "this hall answers its own pages only"))


class HallRequest(SecureRequest):
    """Every answer of the hall's site: no ``Server`` banner, HSTS over TLS, JSON for every error."""


class Reply:
    """A JSON answer written later, unless the browser has gone meanwhile."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.gone = False
        request.notifyFinish().addErrback(self._lost)

    def _lost(self, failure: Any) -> None:
        self.gone = True  # the command still ran; its record reaches the consoles

    def send(self, status: int, body: dict[str, Any]) -> None:
        if not self.gone:
            self.request.write(json_response(self.request, status, body))
            self.request.finish()


def not_staff(request: Request, name: str | None = None) -> str | None:
    """Why the connection's client certificate rules out staff (signing in as ``name``), or None."""
    try:
        identity = pki.presented_identity(request.transport)
    except pki.PkiError as error:
        return str(error)
    if identity is None:
        return None
    if identity.role is not pki.Role.staff:
        return f"this device presents a {identity.role} certificate; staff sign in from a staff console"
    if name is not None and identity.common_name != name:
        return f"this console's staff certificate is {identity.common_name}'s; sign in as {identity.common_name}"
    return None


class _Staff(Resource):
    """A resource for signed-in staff only."""

    isLeaf = True

    def render_HEAD(self, request: Request) -> bytes:
        """HEAD answers as GET does; a resource with no GET refuses it (405), never a fault."""
        render_get = getattr(self, "render_GET", None)
        if render_get is not None:
            result: bytes = render_get(request)
            return result
        request.setHeader(b"allow", b"POST")
        return json_response(request, 405, {"id": None, "ok": False, "error": {
            "code": "method", "message": "this address takes POST requests only"}})

    def __init__(self, sign_ins: SignIns) -> None:
        super().__init__()
        self.sign_ins = sign_ins

    def signed_in(self, request: Request) -> SignIn | None:
        cookie = request.getCookie(SESSION_COOKIE)
        session = self.sign_ins.find(cookie.decode("ascii", "replace") if cookie else None)
        if session is not None and not_staff(request, session.actor.name) is not None:
            return None  # a sign-in's cookie, carried by a device that is not that staff member's
        return session


def client_address(request: Request) -> str:
    """The address a request came from, as the sign-in back-off counts it."""
    address = request.getClientAddress()
    return str(getattr(address, "host", address))


class LoginResource(Resource):
    isLeaf = True

    def __init__(self, sign_ins: SignIns, authenticate: Authenticate, secure_cookie: bool,
                 throttle: SignInThrottle) -> None:
        super().__init__()
        self.sign_ins = sign_ins
        self.authenticate = authenticate
        self.secure_cookie = secure_cookie
        self.throttle = throttle

    def render_GET(self, request: Request) -> bytes:
        _secure(request)
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        return (static_dir() / "login.html").read_bytes()

    def render_POST(self, request: Request) -> bytes | int:
        if (foreign := foreign_origin(request)) is not None:
            return foreign
        try:
            data = load_json(read_json_body(request))
        except ChannelError as error:
            return error_response(request, error)
        name, password = (data.get("name"), data.get("password")) if isinstance(data, dict) else (None, None)
        if not isinstance(name, str) or not isinstance(password, str) or len(name) > 200 or len(password) > 1000:
            return error_response(request, ChannelError("malformed", "send {\"name\": ..., \"password\": ...}"))
        if (refusal := not_staff(request, name)) is not None:
            return error_response(request, ChannelError("sign_in_refused", refusal))
        address = client_address(request)
        try:
            self.throttle.admit(name, address)
        except SignInThrottled as throttled:
            request.setHeader(b"retry-after", str(math.ceil(throttled.retry_after_s)).encode())
            return error_response(request, ChannelError(throttled.code, str(throttled)))
        reply = Reply(request)

        def checked(outcome: Any) -> Any:
            accepted = not isinstance(outcome, Failure)
            lock = self.throttle.finished(name, address, accepted)
            if lock and name in self.sign_ins.directory.staff:
                # Only a staff name is logged: a password typed into the name field is never written down.
                log.warn("Sign-ins of {name} are locked for {lock:.0f} s after failed attempts (the last from "
                         "{address})", name=name, lock=lock, address=address)
            elif lock:
                log.warn("Sign-ins are locked for {lock:.0f} s after failed attempts from {address}",
                         lock=lock, address=address)
            return outcome

        def signed_in(actor: Actor) -> None:
            session = self.sign_ins.open(actor)
            request.addCookie(
                SESSION_COOKIE, session.session_id.encode(), path=b"/", httpOnly=True,
                secure=self.secure_cookie, sameSite="strict",
            )
            reply.send(200, {"ok": True, "me": actor.to_dict()})

        def refused(failure: Any) -> None:
            if failure.check(SignInRefused):
                error = ChannelError("sign_in_refused", str(failure.value))
            else:
                log.failure("signing in", failure)
                error = ChannelError("internal", "the server failed to check the password; the fault is logged")
            reply.send(STATUS[error.code], error_answer(None, error))

        self.authenticate(name, password).addBoth(checked).addCallbacks(signed_in, refused)
        return NOT_DONE_YET


class LogoutResource(_Staff):
    def render_POST(self, request: Request) -> bytes:
        if (foreign := foreign_origin(request)) is not None:
            return foreign
        session = self.signed_in(request)
        if session is not None:
            self.sign_ins.sign_out(session.session_id)
        request.addCookie(SESSION_COOKIE, b"", path=b"/", max_age=b"0", httpOnly=True, sameSite="strict")
        return json_response(request, 200, {"ok": True})


class PageResource(_Staff):
    """A static page; for staff only unless ``public``."""

    def __init__(self, sign_ins: SignIns, page: str, public: bool = False) -> None:
        super().__init__(sign_ins)
        self.page = page
        self.public = public

    def render_GET(self, request: Request) -> bytes:
        if not self.public and self.signed_in(request) is None:
            request.redirect(b"/login")
            return b""
        _secure(request)
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        request.setHeader(b"cache-control", b"no-store")
        return (static_dir() / self.page).read_bytes()


class StateResource(_Staff):
    def __init__(self, sign_ins: SignIns, hub: LiveHub) -> None:
        super().__init__(sign_ins)
        self.hub = hub

    def render_GET(self, request: Request) -> bytes:
        session = self.signed_in(request)
        if session is None:
            return error_response(request, ChannelError("signed_out", "sign in first"))
        return json_response(request, 200, self.hub.console_snapshot(session))


class BoardStateResource(Resource):
    isLeaf = True

    def __init__(self, hub: LiveHub) -> None:
        super().__init__()
        self.hub = hub

    def render_GET(self, request: Request) -> bytes:
        return json_response(request, 200, self.hub.board_message())


class _CommandTaker(_Staff):
    """A staff resource that takes a command request (``/api/command``, ``/api/document``)."""

    def __init__(self, sign_ins: SignIns, channel: CommandChannel) -> None:
        super().__init__(sign_ins)
        self.channel = channel

    def command_of(self, request: Request) -> tuple[SignIn, CommandRequest] | bytes:
        """The sign-in and the command a request carries, or the error answer to send."""
        if (foreign := foreign_origin(request)) is not None:
            return foreign
        session = self.signed_in(request)
        if session is None:
            return error_response(request, ChannelError("signed_out", "sign in first"))
        try:
            return session, parse_request(read_json_body(request))
        except ChannelError as error:
            return error_response(request, error)


class CommandResource(_CommandTaker):

    def render_POST(self, request: Request) -> bytes | int:
        taken = self.command_of(request)
        if isinstance(taken, bytes):
            return taken
        session, command = taken

        reply = Reply(request)

        def answer(body: dict[str, Any]) -> None:
            reply.send(200 if body["ok"] else STATUS.get(body["error"]["code"], 400), body)

        # The channel's answer never fails: every fault is an error answer.
        self.channel.submit(session.actor, command, session.seen).addCallback(answer)
        return NOT_DONE_YET


class DocumentResource(_CommandTaker):
    """``POST /api/document``: a command that makes a file (``print_...``), answered with the PDF.

    The request is a command request as ``/api/command`` takes it; the command is
    checked by the channel as any other (role, arguments) and its handler checks the
    role again.  The file comes as an attachment named after the command and its
    arguments; a refusal is the channel's JSON error answer.  Nothing is journaled, as
    when the command is given on ``/api/command``.
    """

    def render_POST(self, request: Request) -> bytes | int:
        taken = self.command_of(request)
        if isinstance(taken, bytes):
            return taken
        session, command = taken
        if not is_document(command.command):
            return error_response(request, ChannelError(
                "unknown_command", f"{command.command!r} makes no file; give it on /api/command"), command.request_id)
        reply = Reply(request)

        def answer(made: bytes | dict[str, Any]) -> None:
            if reply.gone:
                return
            if isinstance(made, dict):
                reply.send(STATUS.get(made["error"]["code"], 400), made)
                return
            _secure_file(request)
            request.setHeader(b"content-type", b"application/pdf")
            name = document_name(command.command, command.args)
            request.setHeader(b"content-disposition", f'attachment; filename="{name}"'.encode())
            request.write(made)
            request.finish()

        self.channel.produce(session.actor, command).addCallback(answer)
        return NOT_DONE_YET


class MinutesResource(_Staff):
    """``GET /api/minutes/<game|session>/<subject>.<pdf|csv>[.sig]``: signed minutes.

    The report is made from the journal when asked for (``MinutesDesk``); the PDF is
    served inline so that the browser opens it in its viewer.  The file and its
    ``.sig`` are two requests: for a game or a session still under way the journal
    may grow between them, so the file's answer also carries its signature
    (``x-signature``, base64) and the journal range it was made from.
    """

    def __init__(self, sign_ins: SignIns, desk: MinutesDesk) -> None:
        super().__init__(sign_ins)
        self.desk = desk

    @staticmethod
    def parse(path: list[bytes]) -> tuple[str, str, str, bool]:
        """(kind, subject, format, signature wanted) from the path below ``/api/minutes``."""
        names = [part.decode("ascii", "replace") for part in path]
        if len(names) == 2 and names[0] in CONSOLE_KINDS:
            kind, name = names
            signature = name.endswith(SIGNATURE_SUFFIX)
            stem, _, file_format = name.removesuffix(SIGNATURE_SUFFIX).rpartition(".")
            if file_format in FORMATS and well_formed(kind, stem):
                return kind, stem, file_format, signature
        raise ChannelError(
            "not_found", "the minutes are at /api/minutes/game/<game id>.pdf or /api/minutes/session/<number>.pdf "
            "(.csv for the CSV, .sig after either for its signature)"
        )

    def render_GET(self, request: Request) -> bytes | int:
        session = self.signed_in(request)
        if session is None:
            return error_response(request, ChannelError("signed_out", "sign in first"))
        if not may_read_minutes(session.actor):
            return error_response(request, ChannelError(
                "not_allowed", "the minutes book is read by the administrator and the room chief"))
        try:
            kind, subject, file_format, signature = self.parse(list(request.postpath or []))
        except ChannelError as error:
            return error_response(request, error)
        reply = Reply(request)

        def made(signed: SignedFile) -> None:
            if reply.gone:
                return
            span = signed.report.journal_range
            _secure_file(request)
            request.setHeader(b"x-journal-range", f"{span.first_seq} {span.last_seq} {span.last_hash}".encode())
            request.setHeader(b"x-signature", base64.b64encode(signed.signature))
            if signature:
                request.setHeader(b"content-type", b"application/octet-stream")
                request.setHeader(b"content-disposition", f'attachment; filename="{signed.signature_name}"'.encode())
                request.write(signed.signature)
            else:
                request.setHeader(b"content-type", signed.media_type.encode())
                disposition = "inline" if file_format == "pdf" else "attachment"
                request.setHeader(b"content-disposition", f'{disposition}; filename="{signed.file_name}"'.encode())
                request.write(signed.data)
            request.finish()

        def failed(failure: Any) -> None:
            if failure.check(ChainError):
                log.failure("the journal does not verify; no minutes made", failure)
                error = ChannelError("journal_invalid", f"the journal does not verify, so no minutes are signed: "
                                                        f"{failure.value}")
            elif failure.check(ReportError):
                error = ChannelError("not_found", str(failure.value))
            else:
                log.failure("making the minutes", failure)
                error = ChannelError("internal", "the server failed to make the minutes; the fault is logged")
            reply.send(STATUS[error.code], error_answer(None, error))

        self.desk.make(kind, subject, file_format).addCallbacks(made, failed)
        return NOT_DONE_YET


class SocketResource(_Staff):
    """A WebSocket endpoint; staff only unless ``public``, same origin only, messages bounded."""

    def __init__(self, sign_ins: SignIns, hub: LiveHub, public: bool) -> None:
        super().__init__(sign_ins)
        self.hub = hub
        self.public = public
        self.max_message_bytes = BOARD_MESSAGE_BYTES if public else CONSOLE_MESSAGE_BYTES
        #: The endpoint's open connections, each with the meter that bounds its messages.
        self.connections: weakref.WeakSet[MeteredWire] = weakref.WeakSet()

    def render_GET(self, request: Request) -> bytes | int:
        if not same_origin(request):
            return error_response(request, ChannelError("not_allowed", "this socket is for pages of this hall only"))
        if self.public:
            factory = SocketFactory(lambda: BoardSocket(self.hub))
        else:
            session = self.signed_in(request)
            if session is None:
                return error_response(request, ChannelError("signed_out", "sign in first"))
            factory = SocketFactory(lambda: ConsoleSocket(self.hub, session))
        bounded = BoundedWebSocketResource(factory, self.max_message_bytes, self.connections)
        result: bytes | int = bounded.render_GET(request)
        return result


class _Folder(Resource):
    """A path segment with children and, for its own path, a redirect or a page."""

    def __init__(self, own: Resource | None = None) -> None:
        super().__init__()
        self.own = own

    def getChild(self, path: bytes, request: Request) -> Resource:
        if path == b"" and self.own is not None:
            return self.own
        return NotFound()  # the children put here are found before this is asked

    def render(self, request: Request) -> bytes | int:
        if self.own is not None:
            result: bytes | int = self.own.render(request)
            return result
        return super().render(request)


def _put(parent: Resource, name: bytes, child: Any) -> None:
    # Resources provide IResource through zope.interface, which mypy cannot see.
    parent.putChild(name, child)


def build_site(
    *,
    hub: LiveHub,
    sign_ins: SignIns,
    channel: CommandChannel,
    authenticate: Authenticate,
    secure_cookie: bool,
    minutes: MinutesDesk | None = None,
    throttle: SignInThrottle | None = None,
    voice: VoiceClips | None = None,
    language: str = DEFAULT_LANGUAGE,
    time_zone: str = "Europe/Andorra",
) -> Site:
    """The console's :class:`Site` over the given hub, sign-ins and channel.

    ``minutes``: the desk that makes the signed minutes; without it ``/api/minutes``
    is not served.  ``throttle``: the sign-in back-off (one on the sign-ins' clock by
    default).  ``voice``: the board's speech clips; without it ``/voice`` is not served.
    ``language`` and ``time_zone`` (an IANA name): the hall's, as its pages show texts,
    money and times until a player picks another language.
    """
    root = _Folder(Redirect(b"/console"))
    throttle = throttle if throttle is not None else SignInThrottle(sign_ins.clock)
    _put(root, b"login", LoginResource(sign_ins, authenticate, secure_cookie, throttle))
    _put(root, b"logout", LogoutResource(sign_ins))
    _put(root, b"console", PageResource(sign_ins, "console.html"))
    board = _Folder(PageResource(sign_ins, "board.html", public=True))
    _put(board, b"ws", SocketResource(sign_ins, hub, public=True))
    _put(root, b"board", board)
    _put(root, b"static", StaticFiles(static_dir(), CONSULTATION_STATIC))
    _put(root, b"i18n", I18nResource(language, time_zone))
    if voice is not None:
        _put(root, b"voice", VoiceResource(voice, lambda: hub.view.megabingo))
    api = _Folder()
    _put(api, b"state", StateResource(sign_ins, hub))
    _put(api, b"command", CommandResource(sign_ins, channel))
    _put(api, b"document", DocumentResource(sign_ins, channel))
    _put(api, b"board", BoardStateResource(hub))
    if minutes is not None:
        _put(api, b"minutes", MinutesResource(sign_ins, minutes))
    _put(root, b"api", api)
    _put(root, b"ws", SocketResource(sign_ins, hub, public=False))
    return secure_site(root, max_body_bytes=MAX_REQUEST_BYTES, request_factory=HallRequest)


def inline_authenticate(sign_ins: SignIns) -> Authenticate:
    """Check passwords on the calling thread (tests); the server uses a thread pool."""
    return lambda name, password: defer.maybeDeferred(sign_ins.directory.authenticate, name, password)

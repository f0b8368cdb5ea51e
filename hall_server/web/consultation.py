"""``/regulator/``: the regulator's read-only consultation of the hall (R95.3), its page and its API.

Only a connection presenting a ``regulator`` certificate of the operator's authority is
answered (over TLS; a staff sign-in or a terminal certificate is not enough, and there
is no cookie).  Only GET: there is no command here.  Every query, answered or not, is
journaled as ``regulator_consulted`` (who, what, whether it was answered) before the
answer is sent; when the journal cannot take it, nothing is answered.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request
from twisted.web.util import Redirect

from hall_server.reports.consultation import Consultation, ConsultationError
from hall_server.web.site import SECURITY_HEADERS, json_response, static_dir
from server_kit import pki
from server_kit.core import Actor, CommandCore

#: The role the regulator's reads are journaled under; it may do nothing else.
REGULATOR = "regulator"
#: The one command of that role.
CONSULTED = "regulator_consulted"
_MAX_QUERY = 512
log = Logger()


def regulator_of(request: Request) -> str | None:
    """The name in the connection's regulator certificate, or None."""
    try:
        identity = pki.presented_identity(request.transport)
    except pki.PkiError:
        return None
    if identity is None or identity.role is not pki.Role.regulator:
        return None
    return identity.common_name


def _forbidden(request: Request) -> bytes:
    request.setResponseCode(403)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    return (b"the regulator's consultation answers a connection presenting a regulator certificate of the "
            b"operator's authority, over TLS")


class ConsultationPage(Resource):
    """``/regulator/``: the page (``static/regulator.html``), for a regulator certificate only."""

    isLeaf = True

    def render_GET(self, request: Request) -> bytes:
        if regulator_of(request) is None:
            return _forbidden(request)
        for name, value in SECURITY_HEADERS.items():
            request.setHeader(name, value)
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        request.setHeader(b"cache-control", b"no-store")
        return (static_dir() / "regulator.html").read_bytes()


class _Consultation(Resource):
    def render_GET(self, request: Request) -> bytes:
        return Redirect(b"/regulator/").render(request)  # type: ignore[no-any-return]


def consultation_resource(core: CommandCore, consultation: Consultation) -> Resource:
    """``/regulator``: the page at ``/regulator/`` and the queries under ``/regulator/api/``."""
    root = _Consultation()
    root.putChild(b"", ConsultationPage())
    root.putChild(b"api", ConsultationResource(core, consultation))
    return root


class ConsultationResource(Resource):
    isLeaf = True

    def __init__(self, core: CommandCore, consultation: Consultation) -> None:
        super().__init__()
        self.core = core
        self.consultation = consultation
        core.allow({CONSULTED: {REGULATOR}})

    def _refuse(self, request: Request, status: int, message: str) -> bytes:
        return json_response(request, status, {"ok": False, "error": {"message": message}})

    def render_GET(self, request: Request) -> bytes | int:
        regulator = regulator_of(request)
        if regulator is None:
            return self._refuse(request, 403, "the regulator's consultation answers a connection presenting a "
                                               "regulator certificate of the operator's authority, over TLS")
        path = "/".join(segment.decode("utf-8", "replace") for segment in request.postpath or [])
        raw_query = (request.uri or b"").partition(b"?")[2].decode("utf-8", "replace")
        query = f"{path}?{raw_query}" if raw_query else path
        if len(query) > _MAX_QUERY:
            return self._refuse(request, 414, f"a query is at most {_MAX_QUERY} characters")
        params = dict(parse_qsl(raw_query, keep_blank_values=True))
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def journaled(status: int, body: dict[str, Any]) -> Any:
            def decide(now: int) -> list[Any]:
                return [(CONSULTED, {"regulator": regulator, "query": query, "answered": status == 200})]

            done = self.core.execute(Actor(regulator, REGULATOR), CONSULTED, decide)
            done.addCallbacks(lambda _: send(status, body),
                              lambda failure: send(503, {"ok": False, "error": {
                                  "message": f"the query could not be journaled, so it is not answered: "
                                             f"{failure.getErrorMessage()}"}}))
            return done

        def send(status: int, body: dict[str, Any]) -> None:
            if not gone:
                request.write(json_response(request, status, body))
                request.finish()

        def answered(body: dict[str, Any]) -> Any:
            return journaled(200, {"ok": True, **body})

        def refused(failure: Failure) -> Any:
            error = failure.value
            if isinstance(error, ConsultationError):
                return journaled(error.status, {"ok": False, "error": {"message": str(error)}})
            log.failure("The regulator's query {query} failed", failure, query=query)
            return journaled(500, {"ok": False, "error": {"message": "the query failed; the hall's log says why"}})

        self.consultation.answer(path, params).addCallbacks(answered, refused)
        return NOT_DONE_YET

    def render_HEAD(self, request: Request) -> bytes | int:
        return self.render_GET(request)

    def render_POST(self, request: Request) -> bytes:
        request.setHeader(b"allow", b"GET")
        return self._refuse(request, 405, "the regulator's consultation is read-only: GET only")

    render_PUT = render_DELETE = render_PATCH = render_POST

"""The regulator's read-only consultation of a server (R95.3): what every server's is built from.

A server (the hall, the central server) answers its own queries; this module gives it
the rest, the same on both:

* :func:`consultation_resource`: ``/regulator/`` (the page) and ``/regulator/api/<query>``
  (the JSON answers).  Only a connection presenting a ``regulator`` certificate of the
  operator's authority is answered (over TLS; there is no sign-in and no cookie).  Only
  GET and HEAD: there is no command here.  Every query, answered or not, is journaled
  as ``regulator_consulted`` (who, what, whether it was answered) before the answer is
  sent; when the journal cannot take it, nothing is answered (503).
* :class:`ConsultationError`, :func:`record_json`, :func:`number` and
  :func:`records_page`: a query's refusal, a record as the regulator reads it, and the
  ``records`` and ``staff-actions`` pages every server answers alike.
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import parse_qsl

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request
from twisted.web.util import Redirect

from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import ACTOR_KEY
from protocol.records.consultation import RegulatorConsulted
from server_kit import pki
from server_kit.core import Actor, CommandCore
from server_kit.web.http import json_response, secure

#: The consultation page's shared script and style (``consult.js``, ``consult.css``), served by each server.
STATIC = Path(__file__).parent / "static"
#: The role the regulator's reads are journaled under; it may do nothing else.
REGULATOR = "regulator"
#: The one command of that role.
CONSULTED = RegulatorConsulted.type
#: The bound on a request body of a site that serves only the consultation: it reads none (GETs only).
BODY_BYTES = 16 * 1024
#: The most records one ``records`` or ``staff-actions`` query returns; page on with ``after``.
PAGE = 500
_MAX_QUERY = 512
_TYPE = re.compile(r"[a-z_]{1,64}")
_FORBIDDEN = ("the regulator's consultation answers a connection presenting a regulator certificate of the "
              "operator's authority, over TLS")
log = Logger()

#: Answers a query path (without ``/regulator/api/``) and its parameters; fails with ConsultationError.
Answer = Callable[[str, Mapping[str, str]], "defer.Deferred[dict[str, Any]]"]


class ConsultationError(DomainError):
    """A query the consultation cannot answer; ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def record_json(record: Record, redact: Callable[[Any], Any] = lambda payload: payload) -> dict[str, Any]:
    """A record as the regulator reads it: its place in the chain (its hash, to tie it to an
    audit export) and its payload, with ``redact`` applied (a hall leaves out secrets' hashes)."""
    return {"seq": record.seq, "time_ms": record.time_ms, "type": record.type, "hash": record.hash,
            "payload": redact(record.payload)}


def number(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """The whole-number parameter ``name``, from ``low`` to ``high``; ``default`` when absent."""
    text = params.get(name)
    if text is None:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise ConsultationError(400, f"{name} is a whole number from {low} to {high}, not {text!r}")
    return int(text)


def by_staff(record: Record) -> bool:
    """Whether a person caused ``record`` (its actor is not the server itself)."""
    actor = record.payload.get(ACTOR_KEY)
    return isinstance(actor, Mapping) and actor.get("role") not in (None, "system")


def records_page(records: Callable[[int], Iterable[Record]], params: Mapping[str, str],
                 keep: Callable[[Record], bool] = lambda record: True,
                 redact: Callable[[Any], Any] = lambda payload: payload) -> dict[str, Any]:
    """``records?after=SEQ&limit=N&type=T``: a page of the journal's records that ``keep`` keeps
    (every one; a server's ``staff-actions`` keeps :func:`by_staff`'s), PAGE at most."""
    after = number(params, "after", 0, 0, 10**15)
    limit = number(params, "limit", PAGE, 1, PAGE)
    kind = params.get("type")
    if kind is not None and not _TYPE.fullmatch(kind):
        raise ConsultationError(400, f"a record type is lower-case letters and _, not {kind!r}")
    chosen = (r for r in records(after) if (kind is None or r.type == kind) and keep(r))
    found = [record_json(r, redact) for r in islice(chosen, limit)]
    return {"records": found, "after": after, "next_after": found[-1]["seq"] if len(found) == limit else None}


def regulator_of(request: Request) -> str | None:
    """The name in the connection's regulator certificate, or None."""
    try:
        identity = pki.presented_identity(request.transport)
    except pki.PkiError:
        return None
    if identity is None or identity.role is not pki.Role.regulator:
        return None
    return identity.common_name


class ConsultationPage(Resource):
    """``/regulator/``: the page, for a regulator certificate only."""

    isLeaf = True

    def __init__(self, page: Path) -> None:
        super().__init__()
        self.page = page

    def render_GET(self, request: Request) -> bytes:
        if regulator_of(request) is None:
            request.setResponseCode(403)
            request.setHeader(b"content-type", b"text/plain; charset=utf-8")
            return _FORBIDDEN.encode()
        secure(request)
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        request.setHeader(b"cache-control", b"no-store")
        return self.page.read_bytes()


class _Consultation(Resource):
    def render_GET(self, request: Request) -> bytes:
        return Redirect(b"/regulator/").render(request)  # type: ignore[no-any-return]


def consultation_resource(core: CommandCore, answer: Answer, page: Path, server: str) -> Resource:
    """``/regulator``: the page at ``/regulator/`` and the queries under ``/regulator/api/``.

    ``server`` names the server in a message (``"the hall"``, ``"the central server"``).
    """
    root = _Consultation()
    root.putChild(b"", ConsultationPage(page))
    root.putChild(b"api", ConsultationResource(core, answer, server))
    return root


class ConsultationResource(Resource):
    isLeaf = True

    def __init__(self, core: CommandCore, answer: Answer, server: str) -> None:
        super().__init__()
        self.core = core
        self.answer = answer
        self.named = server
        core.allow({CONSULTED: {REGULATOR}})

    def _refuse(self, request: Request, status: int, message: str) -> bytes:
        return json_response(request, status, {"ok": False, "error": {"message": message}})

    def render_GET(self, request: Request) -> bytes | int:
        regulator = regulator_of(request)
        if regulator is None:
            return self._refuse(request, 403, _FORBIDDEN)
        path = "/".join(segment.decode("utf-8", "replace") for segment in request.postpath or [])
        raw_query = (request.uri or b"").partition(b"?")[2].decode("utf-8", "replace")
        query = f"{path}?{raw_query}" if raw_query else path
        if len(query) > _MAX_QUERY:
            return self._refuse(request, 414, f"a query is at most {_MAX_QUERY} characters")
        params = dict(parse_qsl(raw_query, keep_blank_values=True))
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def journaled(status: int, body: dict[str, Any]) -> Any:
            def decide(now: int) -> list[RegulatorConsulted]:
                return [RegulatorConsulted(regulator=regulator, query=query, answered=status == 200)]

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
            return journaled(500, {"ok": False, "error": {
                "message": f"the query failed; {self.named}'s log says why"}})

        defer.maybeDeferred(self.answer, path, params).addCallbacks(answered, refused)
        return NOT_DONE_YET

    def render_HEAD(self, request: Request) -> bytes | int:
        return self.render_GET(request)

    def render_POST(self, request: Request) -> bytes:
        request.setHeader(b"allow", b"GET")
        return self._refuse(request, 405, "the regulator's consultation is read-only: GET only")

    render_PUT = render_DELETE = render_PATCH = render_POST

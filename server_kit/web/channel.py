"""The one command channel of the console: a JSON request names a core command.

A request, over HTTP (``POST /api/command``) or over the console's WebSocket, is::

    {"id": "<request id>", "command": "<name>", "args": {<argument>: <value>, ...},
     "language": "<the reader's language>"}

(``language`` optional) and the answer is ``{"id", "ok": true, "records": [{"seq", "type"}, ...]}`` or
``{"id", "ok": false, "error": {"code", "message"}}``.  The channel knows no command:
it looks the name up in :attr:`CommandCore.commands`, checks the sender's role with
:meth:`CommandCore.check_permission`, checks the arguments against the command's
declared JSON types, and calls its handler.  A module that registers a command is
reachable from the console without a change here.

Everything refused before the handler runs changes nothing; a handler that refuses
changes nothing either (the core decides before it commits).  A request id is
carried out at most once: the core stamps it on the records the command commits and
remembers it from the journal (:meth:`CommandCore.once`), so a request sent again - a
double click, a frame resent after a reconnect, after a restart of the server - is
answered with the records the first one committed and ``"repeated": true``, and
nothing is done twice.  A request id this sign-in used for a request that committed
nothing is refused as ``replayed``.

Error codes: ``malformed`` (not JSON, nested too deep, not Unicode, not an object,
bad id), ``unknown_command``, ``not_allowed`` (the role may not, R80),
``bad_arguments`` (missing, unknown, wrong type or out of range), ``replayed``,
``refused`` (the hall's rules said no; the message says why), ``storage_unavailable``
(the storage cannot take a commit now: disk full, a read-only file, a lock, the
database unreachable; the message names it and where, and nothing was done),
``internal`` (a fault, logged).

A refusal made from a catalog's template (:class:`~protocol.errors.DomainError` given
``N_("...")`` and its params) is answered in the request's ``language`` by the channel's
``say`` (the hall's catalogs; the channel knows none): its ``message`` in the staff
member's language, the same English text as ever in the journal and the logs.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from twisted.internet import defer
from twisted.logger import Logger

from protocol import strict_json
from protocol.chain import Record
from protocol.errors import DomainError
from server_kit.core import Actor, CommandCore, NotAllowed, Repeated
from server_kit.db.faults import StorageUnavailable, storage_fault

#: A whole banned-list file fits in one request; nothing larger is read.
MAX_REQUEST_BYTES = 1024 * 1024
MAX_TEXT = MAX_REQUEST_BYTES
MAX_ITEMS = 1_000
#: Integers a browser's JSON can carry exactly (2**53 - 1).
MAX_INT = 2**53 - 1
#: How deep a request's JSON may nest (a command's arguments need three or four levels).
MAX_DEPTH = 32
REQUEST_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
REMEMBERED_IDS = 10_000
#: The code of a command refused because the storage cannot take a commit (disk full,
#: read-only, locked, unreachable): the message names the fault and where.
STORAGE_UNAVAILABLE = StorageUnavailable.code

log = Logger()


#: Says a refusal in a language: ``say(error, language)`` is its message; the English
#: ``str(error)`` for a language it does not speak or an error with no template.
Say = Callable[[DomainError, str], str]
#: A request's language is a short code (``ca``); what else it names is no language.
MAX_LANGUAGE = 16


def english(error: DomainError, language: str) -> str:
    """The :data:`Say` of a channel with no catalogs: the English text."""
    return str(error)


class ChannelError(DomainError):
    """A request refused by the channel or by the hall; ``code`` says which kind."""

    def __init__(self, code: str, message: str, *, said: DomainError | None = None) -> None:
        super().__init__(message)
        self.code = code
        if said is not None:  # the hall's refusal: its template, to be said in the reader's language
            self.template, self.template_params = said.template, said.template_params


@dataclass(frozen=True)
class CommandRequest:
    request_id: str
    command: str
    args: Mapping[str, Any]
    #: The language the sender reads (``language`` of the request), or "" (English).
    language: str = ""


class SeenRequests:
    """The request ids one sign-in has used, the latest :data:`REMEMBERED_IDS` of them."""

    def __init__(self, limit: int = REMEMBERED_IDS) -> None:
        self.limit = limit
        self.ids: OrderedDict[str, None] = OrderedDict()

    def claim(self, request_id: str) -> None:
        if request_id in self.ids:
            raise ChannelError("replayed", f"request {request_id} was already carried out; nothing was done again")
        self.ids[request_id] = None
        if len(self.ids) > self.limit:
            self.ids.popitem(last=False)


def load_json(text: str | bytes) -> Any:
    """The JSON value in ``text``, or :class:`ChannelError` ``malformed``.

    Beyond :func:`json.loads`: a value nested deeper than :data:`MAX_DEPTH` (which
    would otherwise end in a ``RecursionError``) and text that is not Unicode (a lone
    surrogate, such as ``"\\ud800"``, which no journal or screen could encode) are
    malformed too, and so is an object that names a key twice (parsers keep either the
    first or the last: what is checked must be what is carried out).
    """
    try:
        data = strict_json.loads(text)
    except strict_json.NamedTwice as twice:
        raise ChannelError("malformed", f"the request names {twice.key!r} twice in one object") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise ChannelError("malformed", f"the request is not JSON: {error}") from None
    except RecursionError:
        raise ChannelError("malformed", f"the request nests deeper than {MAX_DEPTH} levels") from None
    if not _plain_at_sight(text):
        try:
            strict_json.check_texts(data, MAX_DEPTH)
        except strict_json.TooDeep:
            raise ChannelError("malformed", f"the request nests deeper than {MAX_DEPTH} levels") from None
        except strict_json.LoneSurrogate:
            raise ChannelError("malformed", "the request holds text that is not Unicode (a lone surrogate)") from None
    return data


def _plain_at_sight(text: str | bytes) -> bool:
    """Whether ``text`` cannot hold what :func:`protocol.strict_json.check_texts` looks for, as most
    requests cannot: at most :data:`MAX_DEPTH` brackets, and no lone surrogate at sight
    (:func:`protocol.strict_json.surrogate_free_at_sight`)."""
    if not strict_json.surrogate_free_at_sight(text):
        return False
    brackets = text.count("{") + text.count("[") if isinstance(text, str) else text.count(b"{") + text.count(b"[")
    return brackets <= MAX_DEPTH


def parse_request(text: str | bytes) -> CommandRequest:
    """The request in ``text``, or :class:`ChannelError` ``malformed`` saying what is wrong."""
    if len(text) > MAX_REQUEST_BYTES:
        raise ChannelError("malformed", f"a request is at most {MAX_REQUEST_BYTES} bytes")
    data = load_json(text)
    if not isinstance(data, dict):
        raise ChannelError("malformed", "a request is a JSON object with id, command and args")
    request_id = data.get("id")
    if not isinstance(request_id, str) or not REQUEST_ID.fullmatch(request_id):
        raise ChannelError("malformed", "a request carries an id of 1-64 letters, digits or _.:-")
    command = data.get("command")
    if not isinstance(command, str) or not command:
        raise ChannelError("malformed", "a request names its command")
    args = data.get("args", {})
    if not isinstance(args, dict):
        raise ChannelError("malformed", "args is a JSON object")
    language = data.get("language", "")
    if not isinstance(language, str) or len(language) > MAX_LANGUAGE:
        raise ChannelError("malformed", "language is a language's code, such as \"ca\"")
    if extra := sorted(set(data) - {"id", "command", "args", "language"}):
        raise ChannelError("malformed", f"unknown request field(s): {', '.join(extra)}")
    return CommandRequest(request_id, command, args, language)


def type_name(kind: Any) -> str:
    return {int: "int", str: "str", bool: "bool", dict: "dict"}.get(kind, str(kind))


def check_value(name: str, kind: Any, value: Any) -> None:
    """Raise ``bad_arguments`` unless ``value`` is a JSON value of the declared type."""
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and not -MAX_INT <= value <= MAX_INT:
            raise ChannelError("bad_arguments", f"{name} is out of range: {value}")
    elif kind is str:
        ok = isinstance(value, str)
        if ok and len(value) > MAX_TEXT:
            raise ChannelError("bad_arguments", f"{name} is longer than {MAX_TEXT} characters")
    elif kind is dict:
        ok = isinstance(value, dict)
    elif kind == list[int] or kind == list[str]:
        ok = isinstance(value, list)
        if ok:
            if len(value) > MAX_ITEMS:
                raise ChannelError("bad_arguments", f"{name} holds more than {MAX_ITEMS} items")
            item = kind.__args__[0]
            for index, element in enumerate(value):
                check_value(f"{name}[{index}]", item, element)
    else:
        raise TypeError(f"argument {name}: no JSON type for {kind!r}")  # a module's mistake
    if not ok:
        raise ChannelError("bad_arguments", f"{name} is {type_name(kind)}, not {json.dumps(value)}")


def check_arguments(params: Mapping[str, Any], args: Mapping[str, Any]) -> None:
    if missing := sorted(set(params) - set(args)):
        raise ChannelError("bad_arguments", f"missing argument(s): {', '.join(missing)}")
    if unknown := sorted(set(args) - set(params)):
        raise ChannelError("bad_arguments", f"unknown argument(s): {', '.join(unknown)}")
    for name, kind in params.items():
        check_value(name, kind, args[name])


class CommandChannel:
    """Turns command requests into calls of the core's registered commands."""

    def __init__(self, core: CommandCore, say: Say = english) -> None:
        self.core = core
        self.say = say

    def describe(self, actor: Actor) -> list[dict[str, Any]]:
        """The commands ``actor`` may give, with their arguments: what the console shows."""
        described = []
        for name, spec in sorted(self.core.commands.items()):
            try:
                self.core.check_permission(actor, name)
            except NotAllowed:
                continue
            described.append(
                {
                    "name": name,
                    "summary": spec.summary,
                    # A list, not an object keyed by name: an argument called "pin" names a
                    # secret the person types, it holds none, and redaction drops secret keys.
                    "params": [{"name": param, "type": type_name(kind)} for param, kind in spec.params.items()],
                }
            )
        return described

    def submit(self, actor: Actor, request: CommandRequest, seen: SeenRequests) -> defer.Deferred[dict[str, Any]]:
        """Carry out ``request``; fires with the answer (never fails)."""
        try:
            spec = self.core.commands.get(request.command)
            if spec is None:
                raise ChannelError("unknown_command", f"there is no command {request.command!r}")
            try:
                self.core.check_permission(actor, request.command)
            except NotAllowed as error:
                raise ChannelError("not_allowed", str(error)) from None
            check_arguments(spec.params, request.args)
            if not self.core.known_request(actor, request.request_id):
                seen.claim(request.request_id)
            running = self.core.once(actor, request.request_id, lambda who: spec.handler(who, **request.args))
        except ChannelError as error:
            self.core.refused_before(request.command, error)  # counted as the core counts its own refusals
            return defer.succeed(self.error_answer(request, error))
        running.addCallbacks(
            lambda result: {"id": request.request_id, "ok": True, **_result(result)},
            lambda failure: self.error_answer(request, _as_channel_error(failure.value, request, failure)),
        )
        return running


    def produce(self, actor: Actor, request: CommandRequest) -> defer.Deferred[bytes | dict[str, Any]]:
        """Carry out a command that makes a file (a ticket's or a statement's PDF) and commits nothing.

        Checked as :meth:`submit` checks a command (its name, the role, the arguments),
        then run every time it is asked: a file printed twice is two copies, not a
        repeat, so the request id is not remembered.  Fires with the file's bytes, or
        with an error answer (never fails); a command that answers with anything but
        bytes is ``internal`` (it is no document).
        """
        try:
            spec = self.core.commands.get(request.command)
            if spec is None:
                raise ChannelError("unknown_command", f"there is no command {request.command!r}")
            try:
                self.core.check_permission(actor, request.command)
            except NotAllowed as error:
                raise ChannelError("not_allowed", str(error)) from None
            check_arguments(spec.params, request.args)
            running = defer.maybeDeferred(spec.handler, replace(actor, request=request.request_id), **request.args)
        except ChannelError as error:
            return defer.succeed(self.error_answer(request, error))

        def made(result: Any) -> bytes | dict[str, Any]:
            if isinstance(result, bytes):
                return result
            log.error("command {command} made no file", command=request.command)
            return error_answer(request.request_id, ChannelError(
                "internal", f"{request.command.replace('_', ' ')} makes no file to download"))

        running.addCallbacks(
            made, lambda failure: self.error_answer(request, _as_channel_error(failure.value, request, failure)))
        return running

    def error_answer(self, request: CommandRequest, error: ChannelError) -> dict[str, Any]:
        """The error answer to ``request``, its message in the request's language where the error has a template."""
        return error_answer(request.request_id, error, self.say(error, request.language))


def error_answer(request_id: str | None, error: ChannelError, message: str | None = None) -> dict[str, Any]:
    """The error answer to a request, its ``message`` the English ``str(error)`` unless given."""
    return {"id": request_id, "ok": False, "error": {"code": error.code, "message": str(error) if message is None else message}}


def _as_channel_error(error: BaseException, request: CommandRequest, failure: Any) -> ChannelError:
    if isinstance(error, NotAllowed):
        return ChannelError("not_allowed", str(error))
    fault = storage_fault(error, "the server's database")
    if fault is not None:  # the storage, not the command: named for staff (logged where it failed)
        return ChannelError(STORAGE_UNAVAILABLE, str(fault))
    if isinstance(error, DomainError):
        return ChannelError("refused", str(error), said=error)
    log.failure("command {command} failed", failure, command=request.command)
    return ChannelError("internal", f"the server failed on {request.command}; the fault is logged")


def _result(result: Any) -> dict[str, Any]:
    if isinstance(result, Repeated):
        return {"records": [{"seq": seq, "type": kind} for seq, kind in result.records], "repeated": True}
    if isinstance(result, list) and all(isinstance(r, Record) for r in result):
        return {"records": [{"seq": r.seq, "type": r.type} for r in result]}
    try:
        json.dumps(result)
    except (TypeError, ValueError):
        return {"result": None}
    return {"result": result}

"""The communications endpoint (R92.5c): AMP over mutual TLS between the halls and the central server.

Each hall server keeps one connection (``docs/central-protocol.md``).  This edge only
translates: bytes into the commands of :mod:`protocol.central_messages` and answers or
error codes back.

* **Who is speaking** is the TLS certificate: the handshake admits only certificates of
  the operator's authority that are not revoked (the revocation list is re-read when it
  changes), and the connection is then cut unless the certificate's role is the hall
  server's (:data:`HALL_ROLE`), whose common name is the hall id every message must
  name, or the operator's (:data:`OPERATOR_ROLE`), whose common name is the person the
  journal names.  Nothing a refused peer sends reaches the journal.
* **The operator's connection** takes the commands of :mod:`protocol.central_operator`
  only (no ``hello``), and a hall's connection none of them: to the other, each is a
  command this endpoint does not know.
* **hello first**: any other command before it fails with ``not_negotiated`` and the
  connection closes; ``hello`` agrees the version (:func:`~central_server.domain.wire.answer_hello`).
  A hall's ``hello`` says the last record of its journal; the furthest each hall said is
  kept while this process runs (:attr:`CentralEndpoint.hall_journals`) and told back in
  the answer, so a hall rolled back sees it is behind and stops.
* **Every other command** goes to :meth:`CentralModule.hall_command
  <central_server.module.CentralModule.hall_command>`: decided, journaled with the
  hall's request id, answered after the commit.  The commands that decide something
  (``buy_cards``, ``terminal_failed``) are stamped as they are read and decided in that
  order a few at a time (:mod:`central_server.admission`), so a burst is read as it
  comes and decided as of when it came.
* **Errors** travel as their code with the message a person reads; a fatal one closes
  the connection (AMP's quit box).  A refused command of an authenticated hall is put on
  file (``central_command_refused``) before the error is sent; a fault of ours is
  logged and answered ``internal_error``.  A command AMP does not know is answered
  ``UNHANDLED`` by AMP itself.
* **Bounded while read**: a box of more than :data:`MAX_BOX_KEYS` keys or
  :data:`MAX_BOX_BYTES` bytes cuts the connection before it is put together (AMP itself
  bounds each key and value).
* **A standby** (one of two processes of a replicated central server, not the active one:
  :mod:`central_server.replica`) refuses every command, ``hello`` and the operator's
  included, with ``standby``, which closes the connection and tells a hall to try its
  other endpoint; nothing of it reaches the journal (a standby writes none).  The
  active process names its database node and its leadership epoch in ``hello``'s answer.
* **Pushes** (the sale, balls, prizes, credits, the end) go to every connected hall the
  announcement names, each send on its own: one hall's failure is logged and touches no
  other hall's, and none of a later protocol version than the connection agreed.  A hall
  that says ``hello`` is sent ``sale_opened`` again for each of its games on sale, so a
  hall away when a sale opened (killed, or the central server restarted and opened it
  before the hall was back) learns of the game while it can still sell; and, from
  version 2, ``game_under_way`` for each of its games whose sale closed while it was
  away, so it shows the game and catches up its balls and prizes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from twisted.internet import defer
from twisted.internet.interfaces import IHandshakeListener
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.protocols import amp
from twisted.python.failure import Failure
from zope.interface import implementer

from central_server.admission import Admission
from central_server.domain import wire
from central_server.domain.errors import BadArgument, CentralError
from central_server.domain.wire import Announcement
from central_server.module import CentralModule
from protocol import central_messages as m
from protocol.central_messages import CentralMessageError
from protocol.central_operator import OPERATOR_MESSAGES
from server_kit.amp.bounded import BoundedBoxes
from server_kit.amp.commands import CommandFailed, amp_commands
from server_kit.db.faults import StorageUnavailable
from server_kit.pki import PkiError, Role, peer_identity

#: A hall server's certificate (``bingo pki issue server HALL``): the halls' commands.
HALL_ROLE = Role.server
#: A person of the operator (``bingo pki issue operator NAME``): the operator's commands.
OPERATOR_ROLE = Role.operator
#: Every message of the protocol as an AMP command, both ways.
COMMANDS: Mapping[str, type[amp.Command]] = amp_commands(m.MESSAGES)
#: The operator's commands as AMP commands.
OPERATOR_COMMANDS: Mapping[str, type[amp.Command]] = amp_commands(OPERATOR_MESSAGES)
#: Bounds on one incoming box, checked while it is read: the widest legal hall command
#: is a few hundred bytes; this leaves room for a value over its declared bound to be
#: refused with ``bad_argument`` rather than by cutting the connection.
MAX_BOX_KEYS = BoundedBoxes.max_box_keys
MAX_BOX_BYTES = BoundedBoxes.max_box_bytes
#: The halls' commands that decide something: queued as received (central_server/admission.py).
#: ``gate_closed`` too: it is taken after every purchase its hall sent before it.
ADMITTED = frozenset({m.BUY_CARDS.name, m.TERMINAL_FAILED.name, m.GATE_CLOSED.name})


def count_boxes(encoded: bytes, limit: int) -> int:
    """How many AMP boxes ``encoded`` (an ``AmpList`` value) holds, counting no further than ``limit + 1``.

    Only the length prefixes are read (a key's, a value's, a box's closing empty key), so the
    cost is bounded by ``limit``, whatever the value holds; bytes that do not walk end the count
    and are left to AMP's own parse to refuse.
    """
    count = at = 0
    size = len(encoded)
    while at + 2 <= size:
        length = int.from_bytes(encoded[at : at + 2], "big")
        at += 2
        if length == 0:
            count += 1
            if count > limit:
                break
            continue
        at += length  # the key
        if at + 2 > size:
            break
        at += 2 + int.from_bytes(encoded[at : at + 2], "big")  # the value
    return count


class NotNegotiated(CommandFailed):
    """A command before ``hello``."""

    code = "not_negotiated"
    fatal = True


class Standby(CommandFailed):
    """A command to the standby process of a replicated central server: the hall tries the other endpoint."""

    code = "standby"
    fatal = True


#: Refusals not journaled as ``central_command_refused``: a fault of ours, a standby (which
#: writes nothing), a storage that takes no commit.
_NOT_ON_FILE = frozenset({"internal_error", Standby.code, StorageUnavailable.code})


class CentralEndpoint:
    """The halls' connections to one central server: who is connected, and the pushes to them."""

    log = Logger()

    def __init__(self, module: CentralModule, central_id: str, members: Iterable[str],
                 admission: Admission | None = None) -> None:
        self.module = module
        self.central_id = central_id
        self.members = frozenset(members)
        #: Where the halls' deciding commands wait, stamped, to be decided in the order received.
        self.admission = admission
        #: The negotiated connection of each hall (the latest, when a hall reconnects).
        self.links: dict[str, "HallLink"] = {}
        #: Whether this process may answer now: a replicated central server's standby may not.
        self.acting: Callable[[], bool] = lambda: True
        #: What ``hello``'s answer says of this process (a replicated one's node and epoch).
        self.identity: Callable[[], Mapping[str, Any]] = dict
        #: The furthest record (seq, hash) of its journal each hall said in a ``hello``, kept
        #: while this process runs and told back in each ``hello``'s answer.
        self.hall_journals: dict[str, tuple[int, str]] = {}
        #: Called with the names of each batch's announcements before they go out (the failover
        #: drill's stop point, :class:`central_server.replica.DrillPoint`), or None.
        self.before_push: Callable[[Sequence[str]], None] | None = None
        module.announce = self.push

    def factory(self) -> Factory:
        return _LinkFactory(self)

    def joined(self, link: "HallLink") -> None:
        assert link.hall_id is not None
        old = self.links.get(link.hall_id)
        self.links[link.hall_id] = link
        if old is not None and old is not link:
            self.log.info("Hall {hall} connected again; its previous connection is closed", hall=link.hall_id)
            old.transport.loseConnection()  # type: ignore[union-attr]

    def tell_games(self, link: "HallLink") -> None:
        """``link``'s hall told of its games under way: ``sale_opened`` for each game on sale, and
        (protocol version 2) ``game_under_way`` for each whose sale has closed (:func:`wire.games_at_hello`)."""
        hall, version = link.hall_id, link.version
        if hall is None or version is None or self.links.get(hall) is not link or not self.acting():
            return  # gone, replaced by a newer connection that is told itself, or this process stands by
        now_ms = int(self.module.clock.seconds() * 1000)
        self.push(wire.games_at_hello(list(self.module.games.values()), hall, version, now_ms=now_ms))

    def left(self, link: "HallLink") -> None:
        if link.hall_id is not None and self.links.get(link.hall_id) is link:
            del self.links[link.hall_id]
            self.module.gate_unlinked(link.hall_id)

    def push(self, announcements: Sequence[Announcement]) -> None:
        """Send each announcement to its hall, if connected; each send isolated from the others."""
        if self.before_push is not None:
            self.before_push([announcement.message.name for announcement in announcements])
        for announcement in announcements:
            link = self.links.get(announcement.hall_id)
            if link is not None:
                self._send(link, announcement)

    def _send(self, link: "HallLink", announcement: Announcement) -> None:
        name = announcement.message.name
        if link.version is None or announcement.message.since > link.version:
            return  # a message of a later version than the one this connection agreed
        try:
            sent = link.callRemote(COMMANDS[name], **announcement.arguments)
        except Exception:
            self.log.failure("Could not send {message} to hall {hall}", message=name, hall=announcement.hall_id)
            return

        def failed(failure: Failure) -> None:
            # A hall that missed a push catches up with get_game, get_balls, get_credits.
            self.log.warn("Hall {hall} did not take {message}: {why}", hall=announcement.hall_id, message=name,
                          why=failure.getErrorMessage())

        sent.addErrback(failed)


class _LinkFactory(Factory):
    noisy = False  # every connection is logged by the link itself when it matters

    def __init__(self, endpoint: CentralEndpoint) -> None:
        self.endpoint = endpoint

    def buildProtocol(self, addr: Any) -> "HallLink":
        link = HallLink(self.endpoint)
        link.factory = self
        return link


@implementer(IHandshakeListener)
class HallLink(BoundedBoxes):
    """One hall server's AMP connection, or an operator's, inside mutual TLS."""

    log = Logger()

    def __init__(self, endpoint: CentralEndpoint) -> None:
        super().__init__()
        self.endpoint = endpoint
        self.hall_id: str | None = None  # from a hall's certificate, once the handshake is done
        self.operator: str | None = None  # from an operator's certificate, once the handshake is done
        self.version: int | None = None  # once hello agreed it
        self.heard_ms: int | None = None  # when the hall last sent a command (its hello heartbeat: every 2 s)

    # --- Who is at the other end ---------------------------------------------------

    def handshakeCompleted(self) -> None:
        try:
            identity = peer_identity(self.transport)  # type: ignore[arg-type]
        except PkiError as error:
            self.log.warn("Refused a connection from {peer}: {error}", peer=self._address(), error=str(error))
            self.transport.abortConnection()  # type: ignore[union-attr]
            return
        if identity.role is OPERATOR_ROLE:
            self.operator = identity.common_name
            self.log.info("Operator {name} connected from {peer}", name=self.operator, peer=self._address())
            return
        if identity.role is not HALL_ROLE:
            self.log.warn(
                "Refused {name} from {peer}: its certificate is for a {role}; this endpoint admits hall servers "
                "and the operator only",
                name=identity.common_name, peer=self._address(), role=str(identity.role),
            )
            self.transport.abortConnection()  # type: ignore[union-attr]
            return
        self.hall_id = identity.common_name

    def _address(self) -> str:
        peer = self.transport.getPeer() if self.transport is not None else None
        return f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        self.endpoint.left(self)
        super().connectionLost(reason)

    # --- Bounded reading ------------------------------------------------------------

    def box_too_big(self) -> None:
        self.log.warn("Hall {hall} sent a box over {keys} keys or {size} bytes; the connection is cut",
                      hall=self.hall_id or self._address(), keys=MAX_BOX_KEYS, size=MAX_BOX_BYTES)
        super().box_too_big()

    # --- Commands -------------------------------------------------------------------

    @property
    def peer(self) -> str:
        """Who is at the other end, for the log: the certificate's name, else the address."""
        return self.hall_id or self.operator or self._address()

    def locateResponder(self, name: bytes) -> Any:
        text = name.decode("utf-8", "replace")
        if self.operator is not None:
            message, commands = OPERATOR_MESSAGES.get(text), OPERATOR_COMMANDS
        else:
            message, commands = m.MESSAGES.get(text), COMMANDS
            if message is not None and message.sender != "hall":
                message = None
        if message is None:
            self.log.info("{peer} sent a command this endpoint does not know from it: {name!r}",
                          peer=self.peer, name=name[:64])
            return None  # AMP answers UNHANDLED
        command = commands[message.name]
        return lambda box: self._answer(message, command, box)

    @defer.inlineCallbacks
    def _answer(self, message: m.Message, command: type[amp.Command], box: amp.AmpBox) -> Any:
        try:
            if message is m.BUY_CARDS_BATCH and count_boxes(box.get(b"purchases", b""), m.BATCH_PURCHASES) > m.BATCH_PURCHASES:
                # Counted on the raw bytes: an over-size batch costs no parsing of its purchases.
                raise BadArgument(f"buy_cards_batch: a batch holds 1 to {m.BATCH_PURCHASES} purchases; this one holds "
                                  f"more, and none of them was read")
            try:
                parsed = command.parseArguments(box, self)
            except Exception as error:  # AMP's own parse: a number that is not one, a field missing
                raise BadArgument(f"{message.name}: the arguments cannot be read ({error})") from None
            arguments = {key: value for key, value in parsed.items() if value is not None}
            answer = yield self._decide(message, arguments)
        except Exception as error:
            code, text = self._code_of(error, message)
            if code not in _NOT_ON_FILE:  # a standby writes nothing, nor does a storage that is away
                yield self._put_on_file(message.name, code, text)
            fatal = m.ERRORS[code].fatal
            raise amp.RemoteAmpError(code.encode(), text, fatal, local=Failure(error)) from None
        return command.makeResponse(answer, self)

    def _decide(self, message: m.Message, arguments: dict[str, Any]) -> Any:
        if not self.endpoint.acting():
            raise Standby(f"{self.endpoint.central_id} here is the standby process of a replicated central server; "
                          "the active one is beside the database's leader: connect to the other endpoint")
        if self.operator is not None:
            return self.endpoint.module.operator_command(message.name, arguments, self.operator)
        if self.hall_id is None:
            raise NotNegotiated("the connection has no hall certificate")
        self.heard_ms = self.endpoint.module.core.now_ms()  # the verification checks each linked hall was heard (R92.5e)
        if message is m.HELLO:
            held = self.endpoint.hall_journals.get(self.hall_id)
            answer = wire.answer_hello(arguments, from_hall=self.hall_id, members=self.endpoint.members,
                                       central_id=self.endpoint.central_id, identity=self.endpoint.identity(),
                                       hall_journal=held, now_ms=self.endpoint.module.core.now_ms())
            self._journal_said(held, arguments.get("journal_seq"), arguments.get("journal_hash"))
            if self.version is None:
                self.log.info("Hall {hall} said hello ({software}), protocol version {version}, its journal at "
                              "record {seq}", hall=self.hall_id, software=arguments.get("software"),
                              version=answer["version"], seq=arguments.get("journal_seq", "(not said)"))
            first = self.version is None
            self.version = answer["version"]
            self.endpoint.joined(self)
            if self.version >= 3:
                self.endpoint.module.gate_linked(self.hall_id)
            if first:  # after the answer has gone out: the hall's link is up when the pushes come
                self.endpoint.module.clock.callLater(0, self.endpoint.tell_games, self)
            return answer
        if self.version is None:
            raise NotNegotiated(m.ERRORS["not_negotiated"].message)
        if message is m.BUY_CARDS_BATCH:
            return self._batch(arguments)
        return self._command(message.name, arguments)

    def _journal_said(self, held: tuple[int, str] | None, seq: int | None, hash: str | None) -> None:
        """The hall said its journal ends at ``seq`` (``hash``): kept when it is further than ``held``.

        A hall whose journal is behind what it said before is told so in the answer and
        stops by itself; it is logged here too.
        """
        assert self.hall_id is not None
        if seq is None or hash is None:
            return
        if held is None or seq > held[0]:
            self.endpoint.hall_journals[self.hall_id] = (seq, hash)
        elif seq < held[0] or (seq == held[0] and hash != held[1]):
            self.log.warn("Hall {hall} says its journal ends at record {seq}, but it said record {held} before: its "
                          "journal was rolled back or rewritten; the hall is told what it said", hall=self.hall_id,
                          seq=seq, held=held[0])

    def _command(self, name: str, arguments: dict[str, Any]) -> Any:
        assert self.hall_id is not None
        admission = self.endpoint.admission
        if admission is not None and name in ADMITTED:
            return admission.submit(name, arguments, self.hall_id)  # stamped now, decided in turn
        return self.endpoint.module.hall_command(name, arguments, self.hall_id)

    @defer.inlineCallbacks
    def _batch(self, arguments: dict[str, Any]) -> Any:
        """``buy_cards_batch``: each purchase a ``buy_cards`` of its own, in the batch's order; one answer each."""
        try:
            purchases = m.check_arguments(m.BUY_CARDS_BATCH, arguments)["purchases"]
        except CentralMessageError as error:
            raise BadArgument(str(error)) from None
        if not purchases:
            raise BadArgument(f"a batch holds 1 to {m.BATCH_PURCHASES} purchases, not none")
        decided = yield defer.DeferredList(
            [defer.maybeDeferred(self._command, m.BUY_CARDS.name, purchase) for purchase in purchases],
            consumeErrors=True,
        )
        answers = []
        for (ok, outcome), purchase in zip(decided, purchases):
            if ok:
                answers.append(outcome)
                continue
            code, text = self._code_of(outcome.value, m.BUY_CARDS)
            if code not in _NOT_ON_FILE:
                yield self._put_on_file(m.BUY_CARDS.name, code, text)
            answers.append({"request_id": purchase["request_id"], "error_code": code, "error": text[:300]})
        return {"answers": answers}

    @defer.inlineCallbacks
    def _put_on_file(self, name: str, code: str, text: str) -> Any:
        """A refused command of an authenticated peer, journaled (``central_command_refused``)."""
        speaker = (self.operator, "operator") if self.operator is not None else (self.hall_id, "hall")
        if speaker[0] is None:
            return
        try:
            yield self.endpoint.module.refused(speaker[0], name, code, text, role=speaker[1])
        except Exception:
            self.log.failure("Could not put the refusal of {peer}'s {name} on file", peer=speaker[0], name=name)

    def _code_of(self, error: Exception, message: m.Message) -> tuple[str, str]:
        """The wire code and the message of ``error``; a fault of ours is logged and is ``internal_error``."""
        code = getattr(error, "code", None) if isinstance(
            error, (CentralError, CommandFailed, CentralMessageError, StorageUnavailable)) else None
        if code not in m.ERRORS or code == "internal_error" or code not in message.errors:
            self.log.failure("{name} of {peer} failed", Failure(error), name=message.name, peer=self.peer)
            return "internal_error", m.ERRORS["internal_error"].message
        return str(code), str(error)

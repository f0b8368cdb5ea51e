"""The hall's AMP connection to the central server, over mutual TLS, kept up by a ``ClientService``.

This edge only translates: :class:`CentralConnection` is the :class:`~hall_server.network.relay.CentralPort`
of one connection (``call`` sends a hall command built from
:mod:`protocol.central_messages` by :func:`server_kit.amp.commands.amp_commands`), and
every push the central server sends is parsed and handed to
:meth:`NetworkRelay.push <hall_server.network.relay.NetworkRelay.push>`; its answer is
the empty box once the push is journaled, or the error code the relay refused it with.

:func:`central_link` builds the service: the hall presents its ``server`` certificate
(named as its hall id) from its PKI folder and checks the central server's against the
same authority and revocation list; ``ClientService`` reconnects by itself with
back-off, and a connection counts only once ``hello`` agreed a version.

**A replicated central server** has two endpoints, one per process, and only the active
process answers (the standby refuses ``hello`` with ``standby``).  The hall's
:class:`EndpointRing` is the ``ClientService``'s endpoint: each attempt goes to the next
endpoint of the list, so a refused ``hello``, a connection that cannot be made and a
link lost all move the hall to the other process; :func:`ring_policy` tries the next
endpoint at once and waits only between whole rounds.  A central server process that
is paused (its machine frozen) keeps its TCP connections open and says nothing, so
the link says ``hello`` again every :data:`HEARTBEAT_S` seconds and cuts the connection
when no answer came for :data:`SILENCE_S` seconds (a new connection's first ``hello``:
:data:`HELLO_S`); the other endpoint is tried next.
With one endpoint nothing changes but the heartbeat.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet import defer, task
from twisted.internet.endpoints import SSL4ClientEndpoint
from twisted.internet.interfaces import IReactorTime, IStreamClientEndpoint
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.protocols import amp
from twisted.python.failure import Failure
from zope.interface import implementer

from hall_server.network.module import NetworkRefused
from hall_server.network.relay import NetworkRelay
from protocol import central_messages as m
from protocol.errors import N_, worded
from server_kit.amp.commands import amp_commands
from server_kit.db.faults import StorageUnavailable
from server_kit.pki import client_tls_options

COMMANDS: Mapping[str, type[amp.Command]] = amp_commands(m.MESSAGES)
#: Reconnecting: the first retry after about a second, at most a minute apart.
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0
#: Several endpoints: the next one is tried after this long; whole rounds wait from
#: ROUND_FIRST_S up to ROUND_MAX_S between them, plus up to ROUND_JITTER_S (a takeover is
#: seen within that).
SWITCH_S = 0.1
ROUND_FIRST_S = 0.5
ROUND_MAX_S = 1.5
ROUND_JITTER_S = 0.25
#: The link's heartbeat: ``hello`` again this often, and the connection cut after this
#: long without an answer (a paused central server process keeps its sockets open).
HEARTBEAT_S = 2.0
SILENCE_S = 10.0
#: How long a new connection's ``hello`` may go unanswered (a paused process accepts, and says nothing):
#: the TLS handshake and the ``hello`` take two round trips, 6 s on a link that holds each byte 1.5 s.
HELLO_S = 8.0


@dataclass(frozen=True)
class Endpoint:
    """One central server process: its address and the name its certificate must carry."""

    host: str
    port: int
    server_name: str

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class CentralAddress:
    """Where the central server is and who this hall is to it.

    ``endpoints``: a replicated central server's processes (``[central] endpoints``);
    empty, the one at ``host``, ``port``.
    """

    host: str
    port: int
    hall_id: str  # the name of the hall's server certificate
    pki_dir: Path
    server_name: str  # the name the central server's certificate must carry
    endpoints: tuple[Endpoint, ...] = ()

    def each(self) -> tuple[Endpoint, ...]:
        """Every endpoint, in the order they are tried."""
        return self.endpoints or (Endpoint(self.host, self.port, self.server_name),)


class CentralConnection(amp.AMP):
    """One AMP connection to the central server."""

    log = Logger()

    def __init__(self, relay: NetworkRelay, clock: IReactorTime | None = None) -> None:
        super().__init__()
        self.relay = relay
        self.clock = clock
        self._heartbeat: task.LoopingCall | None = None
        self._unanswered_since: float | None = None  # a heartbeat in flight since then

    def beat(self) -> None:
        """Say ``hello`` again every :data:`HEARTBEAT_S` s; cut the connection after :data:`SILENCE_S` s of silence."""
        if self.clock is None or self._heartbeat is not None:
            return
        self._heartbeat = task.LoopingCall(self._beat)
        self._heartbeat.clock = self.clock
        self._heartbeat.start(HEARTBEAT_S, now=False)

    def _beat(self) -> None:
        assert self.clock is not None
        now = self.clock.seconds()
        if self._unanswered_since is not None:
            if now - self._unanswered_since >= SILENCE_S:
                self.log.warn("The central server said nothing for {s:.0f} s; the connection is cut and the next "
                              "endpoint tried", s=now - self._unanswered_since)
                self.abort()
            return
        self._unanswered_since = now

        def answered(answer: dict[str, Any]) -> None:
            self._unanswered_since = None
            try:
                self.relay.check_journal(answer)
            except Exception as error:  # the journal is behind what the hall said: the hall stops
                self.log.warn("The central server's answer to the heartbeat: {error}", error=str(error))
                self.close()

        def refused(failure: Failure) -> None:
            self._unanswered_since = None
            if getattr(failure.value, "code", None) is not None or failure.check(amp.RemoteAmpError):
                self.log.warn("The central server refused the link's heartbeat ({why}); the next endpoint is tried",
                              why=failure.getErrorMessage())
                self.close()

        self.call("hello", self.relay.hello_arguments()).addCallbacks(answered, refused)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abortConnection()  # type: ignore[attr-defined]

    def call(self, name: str, arguments: Mapping[str, Any]) -> defer.Deferred[dict[str, Any]]:
        return self.callRemote(COMMANDS[name], **arguments)

    def itself(self) -> "CentralConnection":
        """This connection, not the proxy of it that ``ClientService`` hands ``prepareConnection``:
        the relay must know it as the one :meth:`connectionLost` names."""
        return self

    def close(self) -> None:
        if self.transport is not None:
            self.transport.loseConnection()

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        if self._heartbeat is not None and self._heartbeat.running:
            self._heartbeat.stop()
        self.relay.disconnected(self)
        super().connectionLost(reason)

    def locateResponder(self, name: bytes) -> Any:
        message = m.MESSAGES.get(name.decode("utf-8", "replace"))
        if message is None or message.sender != "central":
            self.log.warn("The central server sent a command this hall does not know: {name!r}", name=name[:64])
            return None  # AMP answers UNHANDLED
        command = COMMANDS[message.name]
        return lambda box: self._take(message, command, box)

    @defer.inlineCallbacks
    def _take(self, message: m.Message, command: type[amp.Command], box: amp.AmpBox) -> Any:
        try:
            try:
                parsed = command.parseArguments(box, self)
            except Exception as error:
                raise NetworkRefused("bad_argument", f"{message.name}: the arguments cannot be read ({error})") from None
            yield self.relay.push(message.name, {k: v for k, v in parsed.items() if v is not None})
        except NetworkRefused as refused:
            raise amp.RemoteAmpError(refused.code.encode(), str(refused), local=Failure(refused)) from None
        except StorageUnavailable as fault:  # nothing was taken: the central server sends it again
            raise amp.RemoteAmpError(fault.code.encode(), str(fault), local=Failure(fault)) from None
        except Exception as error:
            self.log.failure("Taking the central server's {name} failed", Failure(error), name=message.name)
            raise amp.RemoteAmpError(b"internal_error", "the hall server failed to take it; the fault is logged",
                                     local=Failure(error)) from None
        return command.makeResponse({}, self)


class _Factory(Factory):
    noisy = False

    def __init__(self, relay: NetworkRelay, clock: IReactorTime | None = None) -> None:
        self.relay = relay
        self.clock = clock

    def buildProtocol(self, addr: Any) -> CentralConnection:
        connection = CentralConnection(self.relay, self.clock)
        connection.factory = self
        return connection


@implementer(IStreamClientEndpoint)
class EndpointRing:
    """The endpoints of the central server's processes, each connection attempt to the next one.

    ``ClientService`` makes an attempt after every failure (no connection, ``hello``
    refused) and every link lost, so moving on at each attempt is what switches the hall
    to the other process; :attr:`current` is where the last attempt went.
    """

    def __init__(self, endpoints: Sequence[tuple[Endpoint, Any]]) -> None:
        if not endpoints:
            raise ValueError("a ring of no endpoint")
        self.endpoints = list(endpoints)
        self._next = 0
        self.current: Endpoint = self.endpoints[0][0]

    def connect(self, factory: Any) -> defer.Deferred[Any]:
        self.current, endpoint = self.endpoints[self._next]
        self._next = (self._next + 1) % len(self.endpoints)
        return endpoint.connect(factory)  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return ", ".join(str(address) for address, _ in self.endpoints)


def ring_policy(endpoints: int, jitter: Callable[[], float] = random.random) -> Callable[[int], float]:
    """How long ``ClientService`` waits before attempt ``n + 1`` after ``n`` failed in a row.

    One endpoint: :func:`backoffPolicy` from about a second up to a minute.  Several:
    the next endpoint at once (:data:`SWITCH_S`), and between whole rounds from
    :data:`ROUND_FIRST_S` up to :data:`ROUND_MAX_S`.
    """
    if endpoints <= 1:
        return backoffPolicy(RETRY_FIRST_S, RETRY_MAX_S, jitter=jitter)

    def policy(failed: int) -> float:
        if failed % endpoints:
            return SWITCH_S
        rounds = failed // endpoints
        return min(ROUND_FIRST_S * 1.5 ** min(rounds - 1, 20), ROUND_MAX_S) + jitter() * ROUND_JITTER_S

    return policy


def central_link(reactor: Any, relay: NetworkRelay, address: CentralAddress) -> "CentralLinkService":
    """The service that keeps this hall linked to the central server (to the active process of a replicated one)."""
    ring = EndpointRing([
        (where, SSL4ClientEndpoint(reactor, where.host, where.port,
                                   client_tls_options(address.pki_dir, address.hall_id, where.server_name)))
        for where in address.each()
    ])  # fmt: skip
    service: CentralLinkService

    def prepare(proxy: Any) -> defer.Deferred[Any]:
        # The link is up once hello agreed a version; a refused hello (or none within
        # HELLO_S: a paused process) drops the connection and the service tries again,
        # at the next endpoint.
        connection: CentralConnection = proxy.itself()
        where = ring.current
        # ClientService counts a connection whose preparation failed as a failed attempt, and
        # has no transition for that connection's loss afterwards (it would log NoTransition):
        # its loss is told to the service only once hello was agreed.
        lost = getattr(proxy, "_lostNotification", None)
        if lost is not None:
            proxy._lostNotification = lambda reason: None
        silent = reactor.callLater(HELLO_S, connection.abort)
        hello: defer.Deferred[Any] = relay.connected(connection)

        def answered(outcome: Any) -> Any:
            if silent.active():
                silent.cancel()
            return outcome

        def agreed(answer: dict[str, Any]) -> dict[str, Any]:
            if lost is not None:
                proxy._lostNotification = lost
            service.linked(where, answer)
            connection.beat()
            return answer

        def refused(failure: Failure) -> Failure:
            connection.close()
            return failure

        return hello.addBoth(answered).addCallbacks(agreed, refused)

    service = CentralLinkService(relay, ring, _Factory(relay, reactor), retryPolicy=ring_policy(len(address.each())),
                                 clock=reactor, prepareConnection=prepare)
    relay.listeners.append(service.link_changed)
    return service


class CentralLinkService(ClientService):
    """``ClientService`` that also stops the relay's resend timer when it stops, and says where it is linked."""

    log = Logger()

    def __init__(self, relay: NetworkRelay, ring: EndpointRing, *args: Any, **kwargs: Any) -> None:
        super().__init__(ring, *args, **kwargs)
        self.relay = relay
        self.ring = ring
        #: Where the link is, as the administrator's console shows it (None: never linked).
        self.status: dict[str, Any] | None = None
        #: Told when :attr:`status` changed.
        self.listeners: list[Callable[[], None]] = []

    def linked(self, where: Endpoint, answer: Mapping[str, Any]) -> None:
        """``hello`` was agreed with the process at ``where``."""
        status = {"up": True, "endpoint": str(where), "central_id": answer.get("central_id"),
                  "node": answer.get("node"), "epoch": answer.get("epoch")}
        before = self.status
        if answer.get("node") is not None:
            self.log.info("Linked to the central server's process beside {node} at {endpoint}, epoch {epoch}",
                          node=answer["node"], endpoint=str(where), epoch=answer.get("epoch"))
            if before is not None and before.get("node") not in (None, answer["node"]):
                self.log.warn("The central server switched from its process beside {old} to the one beside {new} "
                              "(epoch {epoch}); the hall caught up and sends again what was not answered",
                              old=before["node"], new=answer["node"], epoch=answer.get("epoch"))
        self.status = status
        self._tell()

    def console_status(self) -> dict[str, Any]:
        """The link for the administrator's console: where it is, and a line saying it."""
        status = self.status
        if status is None:
            return {"up": False, **worded(N_("Central server ({ring}): not linked yet"), {"ring": str(self.ring)})}
        figures = {key: status.get(key) for key in ("central_id", "endpoint", "node", "epoch")}
        if status["up"] and status.get("node"):
            template = N_("Central server {central_id}: linked at {endpoint}, the process beside {node}, epoch {epoch}")
        elif status["up"]:
            template = N_("Central server {central_id}: linked at {endpoint}")
        elif status.get("node"):
            template = N_("Central server {central_id}: link lost (last at {endpoint}, the process beside {node}, "
                          "epoch {epoch}); trying again")
        else:
            template = N_("Central server {central_id}: link lost (last at {endpoint}); trying again")
        return {**status, **worded(template, figures)}

    def link_changed(self, up: bool) -> None:
        if not up and self.status is not None and self.status["up"]:
            self.status = {**self.status, "up": False}
            self._tell()

    def _tell(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:
                self.log.failure("a listener of the central link's status failed")

    def stopService(self) -> defer.Deferred[None]:
        self.relay.stop()
        return super().stopService()


__all__ = [
    "COMMANDS", "CentralAddress", "CentralConnection", "CentralLinkService", "Endpoint", "EndpointRing", "central_link",
    "ring_policy",
]

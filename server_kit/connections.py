"""What a server's listening ports admit: no peer can exhaust a server's connections.

Every listening port of a server (the hall's console and terminals' port, the central
server's AMP endpoint and consultation, the regulator's receiver's feed and page) is
behind one :class:`ConnectionGuard` per process, written once here:

* **a handshake deadline**: a TLS connection whose handshake is not complete
  :attr:`~ConnectionLimits.handshake_timeout_s` after it was accepted is cut (bare TCP
  connections and half-sent ClientHellos included);
* **an idle deadline** for a connection that presented no client certificate: nothing
  received and nothing sent for :attr:`~ConnectionLimits.idle_timeout_s` and it is cut
  (a WebSocket is pinged well within it, so an open page or board stays: its pong is
  what it sends); a connection with a certificate of the operator's authority is
  somebody, and is bounded by its certificate instead;
* **per address**: at most :attr:`~ConnectionLimits.per_address` connections from one
  address that carry no certificate (those whose handshake is under way count);
* **per certificate**: at most :attr:`~ConnectionLimits.per_certificate` connections
  presenting one certificate;
* **descriptors**: the process's file-descriptor limit is raised to its hard limit at
  start (:func:`descriptor_budget`), and the guard refuses a new connection once the
  open ones would leave fewer than :attr:`~ConnectionLimits.reserved_descriptors`
  descriptors for the database, the journal, the logs and the outgoing links, so a flood
  is refused at the door instead of making a commit fail with ``EMFILE``;
* **revocation**: with a PKI folder, the guard reads its ``crl.pem`` again every
  :data:`REVOCATION_POLL_S` when the file changed and cuts every open connection whose
  certificate the list now names (the TLS contexts refuse it at its next handshake).

A refused connection is closed as it is accepted, before any TLS work, and the log says
so once a minute at most per cause, with a count, never anything the peer sent.
:class:`GuardedConnection` sits outside TLS, on the TCP connection; under TLS a thin
layer tells it when the handshake is done and with which certificate, and the server's
protocol above is unchanged: it still reads its peer's certificate through its transport.
"""

from __future__ import annotations

import math
import resource
from collections import Counter
from pathlib import Path
from typing import Any

from twisted.application.service import Service
from twisted.internet import task
from twisted.internet.interfaces import IHandshakeListener, IProtocolNegotiationFactory, IReactorTime
from twisted.logger import Logger
from twisted.protocols.policies import ProtocolWrapper, TimeoutMixin, WrappingFactory
from twisted.protocols.tls import TLSMemoryBIOFactory
from zope.interface import implementer

from server_kit.limits import ConnectionLimits, LimitsError
from server_kit.pki.tls import RevocationWatch

log = Logger()

#: Seconds between two looks at the revocation list's file.
REVOCATION_POLL_S = 1.0
#: Seconds between two log lines about refusals of one cause.
REFUSAL_LOG_S = 60.0


def descriptor_budget(reserved: int) -> tuple[int, int]:
    """Raise this process's file-descriptor limit to its hard limit where it is allowed;
    ``(connections it leaves, the limit)``: the limit less ``reserved``, or less half of it
    when ``reserved`` would leave fewer."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as error:
            log.warn("The file-descriptor limit stays {soft}: {error}", soft=soft, error=str(error))
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(1, soft - min(reserved, soft // 2)), soft


class ConnectionGuard(Service):
    """The open connections of one process's listening ports, and what they may still admit.

    ``pki_dir``: the folder whose ``crl.pem`` the ports' TLS contexts read; revoked
    certificates' connections are cut while the guard runs.  ``budget``: how many
    connections the descriptors allow (:func:`descriptor_budget` by default).
    """

    def __init__(self, reactor: IReactorTime, limits: ConnectionLimits = ConnectionLimits(), *,
                 pki_dir: Path | None = None, budget: int | None = None) -> None:
        self.reactor = reactor
        self.limits = limits.checked()
        if budget is None:
            budget, descriptors = descriptor_budget(limits.reserved_descriptors)
            log.info("Connections: at most {budget} open ({descriptors} file descriptors, {reserved} kept for the "
                     "rest); TLS handshake within {handshake:g} s; {idle:g} s idle without a certificate; "
                     "{per_address} per address without a certificate, {per_certificate} per certificate",
                     budget=budget, descriptors=descriptors, reserved=descriptors - budget,
                     handshake=limits.handshake_timeout_s, idle=limits.idle_timeout_s,
                     per_address=limits.per_address, per_certificate=limits.per_certificate)
        self.budget = budget
        self.open: set[GuardedConnection] = set()
        self.anonymous: Counter[str] = Counter()  # by address: no certificate (yet)
        self.certified: Counter[int] = Counter()  # by certificate serial
        self.refused: Counter[str] = Counter()  # by cause, since the start
        self._said: dict[str, tuple[float, int]] = {}
        self.watch = RevocationWatch(pki_dir, self.revoked) if pki_dir is not None else None
        self._poll: task.LoopingCall | None = None

    # --- Listening ----------------------------------------------------------------

    def endpoint(self, tcp: Any, *, tls: Any = None) -> "GuardedEndpoint":
        """``tcp`` (a plain TCP server endpoint) with every connection it accepts behind this
        guard; with ``tls`` (server options, :func:`server_kit.pki.server_tls_options`), TLS
        inside the guard."""
        return GuardedEndpoint(tcp, self, tls=tls)

    def startService(self) -> None:
        super().startService()
        if self.watch is not None:
            self._poll = task.LoopingCall(self.watch.check)
            self._poll.clock = self.reactor
            self._poll.start(REVOCATION_POLL_S, now=False)

    def stopService(self) -> None:
        super().stopService()
        if self._poll is not None and self._poll.running:
            self._poll.stop()
        self._poll = None

    # --- Admission ----------------------------------------------------------------

    def admit(self, address: str) -> bool:
        """Whether a connection just accepted from ``address`` may go on."""
        if len(self.open) >= self.budget:
            return self._refuse("descriptors", f"{self.budget} connections are open, as many as the "
                                               "file descriptors allow beside what the server keeps for itself")
        if self.anonymous[address] >= self.limits.per_address:
            return self._refuse(f"address {address}", f"{self.limits.per_address} connections without a "
                                                      f"certificate are open from {address}")
        return True

    def opened(self, connection: "GuardedConnection") -> None:
        self.open.add(connection)
        self.anonymous[connection.address] += 1

    def certify(self, connection: "GuardedConnection", serial: int) -> bool:
        """The connection presented the certificate ``serial``: counted by it, or refused."""
        if self.certified[serial] >= self.limits.per_certificate:
            return self._refuse(f"certificate {serial:x}", f"{self.limits.per_certificate} connections are open "
                                                           f"with the certificate of serial {serial:x}")
        self._forget(self.anonymous, connection.address)
        self.certified[serial] += 1
        connection.serial = serial
        return True

    def closed(self, connection: "GuardedConnection") -> None:
        if connection not in self.open:
            return
        self.open.discard(connection)
        if connection.serial is None:
            self._forget(self.anonymous, connection.address)
        else:
            self._forget(self.certified, connection.serial)

    def revoked(self, serials: frozenset[int]) -> None:
        """The revocation list now names ``serials``: their connections are cut."""
        cut = [connection for connection in self.open if connection.serial in serials]
        for connection in cut:
            connection.cut("its certificate was revoked")
        if cut:
            log.warn("Cut {n} open connection(s) whose certificate the revocation list now names", n=len(cut))

    @staticmethod
    def _forget(counter: Counter[Any], key: Any) -> None:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]

    def _refuse(self, cause: str, why: str) -> bool:
        self.refused[cause.split(" ")[0]] += 1
        now = self.reactor.seconds()
        last, count = self._said.get(cause, (-math.inf, 0))
        count += 1
        if now - last >= REFUSAL_LOG_S:
            log.warn("Refused {count} new connection(s): {why}", count=count, why=why)
            last, count = now, 0
        self._said[cause] = (last, count)
        if len(self._said) > 10_000:  # one entry per address refused: bounded
            self._said = {key: value for key, value in self._said.items() if now - value[0] < REFUSAL_LOG_S}
        return False


class GuardedEndpoint:
    """A TCP server endpoint (with TLS when ``tls`` gives its options) whose connections are guarded.

    The guard stands outside TLS, so a connection it refuses is closed before any TLS
    work, and a handshake that does not finish is cut whatever bytes trickle in.
    """

    def __init__(self, tcp: Any, guard: ConnectionGuard, *, tls: Any = None) -> None:
        self.tcp = tcp
        self.guard = guard
        self.tls = tls

    def listen(self, factory: Any) -> Any:
        if self.tls is None:
            return self.tcp.listen(GuardedFactory(self.guard, factory))
        # A web site names the protocols it speaks for TLS's ALPN (HTTP/1.1): the layer between
        # TLS and the site must name them too, or a browser that offers ALPN gets no handshake.
        peers = (_NegotiatingPeerFactory if IProtocolNegotiationFactory.providedBy(factory) else _PeerFactory)(factory)
        return self.tcp.listen(GuardedFactory(self.guard, TLSMemoryBIOFactory(self.tls, False, peers)))


class GuardedFactory(WrappingFactory):
    """Builds nothing for a connection the guard refuses: the port closes its socket at once."""

    protocol = None  # type: ignore[assignment]
    noisy = False

    def __init__(self, guard: ConnectionGuard, factory: Any) -> None:
        super().__init__(factory)
        self.guard = guard

    def logPrefix(self) -> str:
        return f"{_prefix(self.wrappedFactory)} (guarded)"

    def buildProtocol(self, addr: Any) -> "GuardedConnection | None":  # type: ignore[override]
        address = str(getattr(addr, "host", addr))
        if not self.guard.admit(address):
            return None
        wrapped = self.wrappedFactory.buildProtocol(addr)
        if wrapped is None:
            return None
        connection = GuardedConnection(self, wrapped, address)
        inner = getattr(wrapped, "wrappedProtocol", None)
        if isinstance(inner, _PeerConnection):
            inner.guarded = connection
        return connection

    def registerProtocol(self, p: Any) -> None:
        pass  # the guard keeps the open connections

    def unregisterProtocol(self, p: Any) -> None:
        pass


class GuardedConnection(ProtocolWrapper, TimeoutMixin):
    """One accepted connection, outside TLS: its deadlines and its place in the guard's counts.

    With TLS, the protocol it carries is the TLS layer, under which a
    :class:`_PeerConnection` tells it when the handshake is done and what certificate
    the peer presented; then the server's protocol, unchanged.
    """

    def __init__(self, factory: GuardedFactory, wrapped: Any, address: str) -> None:
        super().__init__(factory, wrapped)  # type: ignore[arg-type]
        self.guard = factory.guard
        self.address = address
        self.serial: int | None = None  # the certificate it presented, once the handshake is done
        self.handshaken = not isinstance(getattr(wrapped, "wrappedProtocol", None), _PeerConnection)
        self.callLater = self.guard.reactor.callLater  # type: ignore[method-assign,assignment]

    @property
    def idle_timeout_s(self) -> float | None:
        """The idle deadline running on this connection once its handshake is done (None: none)."""
        return self.timeOut if self.handshaken else None

    def makeConnection(self, transport: Any) -> None:
        self.guard.opened(self)
        limits = self.guard.limits
        self.setTimeout(limits.idle_timeout_s if self.handshaken else limits.handshake_timeout_s)
        super().makeConnection(transport)

    def handshake_done(self, peer: Any) -> bool:
        """The TLS handshake is complete and the peer presented ``peer`` (or None): whether it may go on."""
        self.handshaken = True
        if peer is None:
            self.setTimeout(self.guard.limits.idle_timeout_s)
            return True
        self.setTimeout(None)  # somebody, bounded by the certificate
        if not self.guard.certify(self, peer.get_serial_number()):
            self.cut("too many connections with its certificate")
            return False
        return True

    def dataReceived(self, data: bytes) -> None:
        if self.handshaken:  # bytes of a handshake never move its deadline
            self.resetTimeout()
        super().dataReceived(data)

    def write(self, data: bytes) -> None:
        if self.handshaken:  # an answer still being sent (a download) is not idleness
            self.resetTimeout()
        super().write(data)

    def writeSequence(self, data: Any) -> None:
        if self.handshaken:
            self.resetTimeout()
        super().writeSequence(data)

    def timeoutConnection(self) -> None:
        self.cut("idle for too long" if self.handshaken else "no TLS handshake in time")

    def cut(self, why: str) -> None:
        """Abort the connection (a peer that stalls would hold a graceful close open)."""
        log.debug("Cut the connection from {address}: {why}", address=self.address, why=why)
        self.setTimeout(None)
        if self.transport is not None:
            self.transport.abortConnection()  # type: ignore[attr-defined]

    def connectionLost(self, reason: Any = None) -> None:
        self.setTimeout(None)
        self.guard.closed(self)
        super().connectionLost(reason)


@implementer(IHandshakeListener)
class _PeerConnection(ProtocolWrapper):
    """Under TLS, above the server's protocol: tells the guarded connection of the handshake."""

    guarded: GuardedConnection | None = None

    @property
    def idle_timeout_s(self) -> float | None:
        return self.guarded.idle_timeout_s if self.guarded is not None else None

    def handshakeCompleted(self) -> None:
        if self.guarded is not None:
            peer = self.transport.getPeerCertificate() if self.transport is not None else None  # type: ignore[attr-defined]
            if not self.guarded.handshake_done(peer):
                return
        if IHandshakeListener.providedBy(self.wrappedProtocol):
            self.wrappedProtocol.handshakeCompleted()


class _PeerFactory(WrappingFactory):
    protocol = _PeerConnection  # type: ignore[assignment]
    noisy = False

    def logPrefix(self) -> str:
        return _prefix(self.wrappedFactory)

    def registerProtocol(self, p: Any) -> None:
        pass

    def unregisterProtocol(self, p: Any) -> None:
        pass


@implementer(IProtocolNegotiationFactory)
class _NegotiatingPeerFactory(_PeerFactory):
    def acceptableProtocols(self) -> list[bytes]:
        return list(self.wrappedFactory.acceptableProtocols())


def _prefix(factory: Any) -> str:
    prefix = getattr(factory, "logPrefix", None)
    return str(prefix()) if callable(prefix) else type(factory).__name__


def guarded(transport: Any) -> GuardedConnection | None:
    """The guarded connection a protocol's ``transport`` is part of, if it is one."""
    if isinstance(transport, _PeerConnection):
        return transport.guarded
    return transport if isinstance(transport, GuardedConnection) else None


__all__ = [
    "REVOCATION_POLL_S", "ConnectionGuard", "ConnectionLimits", "GuardedConnection", "GuardedEndpoint",
    "LimitsError", "descriptor_budget", "guarded",
]

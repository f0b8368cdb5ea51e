"""When the kernel received what a connection reads: a request is stamped on its arrival, not its reading.

A server that is paused (``SIGSTOP``, a frozen virtual machine, a machine swapping hard)
leaves what its peers send in its sockets' buffers, and reads it all once it runs
again - after whatever deadline fell meanwhile.  Stamped as it is read, a purchase a
terminal sent in the sale time would be refused.  The connections of
:class:`ReceiptServerEndpoint` ask the kernel for the time each segment arrived
(``SO_TIMESTAMPNS``; for TCP, ``recvmsg`` gives the time of the last segment a read
returns, so never earlier than any byte of it), and while the bytes of a read are handed
up - TLS, HTTP, the WebSocket, the handler of a message: all within the one call -
:func:`age_ms` says how long ago they arrived.  A handler takes its request as received
``age_ms()`` before now.

The kernel stamps with the wall clock.  An age from it is trusted only up to how long
the reactor has been away from its sockets (since it began to wait for them the turn
before, :attr:`server_kit.clock.MonotonicEPollReactor.reading_since`): a step of the wall
clock between the arrival and the read cannot make a request look older than that.  On a
reactor that does not say it (a test's), or where the kernel gives no time, the age is 0:
the request is stamped as it is read, as before.
"""

from __future__ import annotations

import socket
import struct
import time
from errno import EWOULDBLOCK
from contextlib import contextmanager
from typing import Any, Iterator

from twisted.internet import defer, main, tcp
from twisted.internet.interfaces import IStreamServerEndpoint
from twisted.protocols.tls import TLSMemoryBIOFactory
from zope.interface import implementer

#: ``SO_TIMESTAMPNS`` (and its control message ``SCM_TIMESTAMPNS``) on Linux; Python names it from 3.12 only.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_TIMESPEC = struct.Struct("@qq")
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size)

#: The age of the read being handed up (seconds), or None outside one.
_age_s: float | None = None


def age_ms() -> int:
    """How long ago the bytes being handled now arrived, in milliseconds (0 outside a stamped read)."""
    return round(_age_s * 1000) if _age_s else 0


@contextmanager
def _reading(age_s: float | None) -> Iterator[None]:
    global _age_s
    outer, _age_s = _age_s, age_s
    try:
        yield
    finally:
        _age_s = outer


def arrival_age_s(arrived_wall_s: float, wall_now_s: float, away_s: float) -> float:
    """The age of bytes the kernel stamped ``arrived_wall_s``, read at ``wall_now_s`` by a reactor
    ``away_s`` seconds away from its sockets: never negative, never more than ``away_s``."""
    return max(0.0, min(wall_now_s - arrived_wall_s, away_s))


class ReceiptServer(tcp.Server):
    """A TCP connection whose reads say when their bytes arrived (see the module)."""

    def __init__(self, sock: socket.socket, protocol: Any, client: Any, server: Any, sessionno: int,
                 reactor: Any) -> None:
        super().__init__(sock, protocol, client, server, sessionno, reactor)
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self._stamped = True
        except OSError:  # a system without it: read as any connection does
            self._stamped = False

    def doRead(self) -> Any:
        if not self._stamped:
            return super().doRead()
        try:
            data, ancillary, _, _ = self.socket.recvmsg(self.bufferSize, _ANCILLARY)
        except OSError as error:
            if error.args[0] == EWOULDBLOCK:
                return None
            return main.CONNECTION_LOST
        with _reading(self._age(ancillary)):
            return self._dataReceived(data)

    def _age(self, ancillary: list[tuple[int, int, bytes]]) -> float | None:
        since = getattr(self.reactor, "reading_since", None)
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= _TIMESPEC.size and since:
                seconds, nanoseconds = _TIMESPEC.unpack_from(value)
                return arrival_age_s(seconds + nanoseconds / 1e9, time.time(), time.monotonic() - since)
        return None


class ReceiptPort(tcp.Port):
    """A TCP port whose connections are :class:`ReceiptServer`."""

    transport = ReceiptServer

    def createInternetSocket(self) -> socket.socket:
        listening = super().createInternetSocket()
        # Asked of the listening socket too: the kernel starts stamping what it receives once
        # a socket wants it (and only a moment later), so it does from the start, before the
        # first connection; the connections accepted inherit it.
        try:
            listening.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        except OSError:
            pass
        return listening


@implementer(IStreamServerEndpoint)
class ReceiptServerEndpoint:
    """Listens on TCP ``port`` of ``interface`` (with TLS when ``tls`` is given, as ``ssl:``
    does), its connections stamping what they read with its arrival (see the module)."""

    def __init__(self, reactor: Any, port: int, tls: Any = None, interface: str = "", backlog: int = 50) -> None:
        self.reactor = reactor
        self.port = port
        self.tls = tls
        self.interface = interface
        self.backlog = backlog

    def listen(self, factory: Any) -> "defer.Deferred[Any]":
        return defer.execute(self._listen, factory)

    def _listen(self, factory: Any) -> ReceiptPort:
        if self.tls is not None:
            factory = TLSMemoryBIOFactory(self.tls, False, factory)
        port = ReceiptPort(self.port, factory, self.backlog, self.interface, self.reactor)
        if self.tls is not None:
            port._type = "TLS"
        port.startListening()
        return port

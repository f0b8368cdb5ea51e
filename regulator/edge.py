"""The receiver's endpoint: AMP over mutual TLS, one connection per sender (docs/regulator-feed.md).

Who sends is what its certificate says, checked once the handshake is done: a hall
server's certificate (role ``server``, named as its hall id) feeds ``hall:<id>``, the
central server's (role ``central``) feeds ``central``; any other certificate is cut
off at once.  Each ``FeedHello`` and ``FeedBatch`` is decoded
(:mod:`protocol.regulator_feed`) and handed to the :class:`~regulator.receiver.Receiver`;
a message that breaks the format, names another sender or says another key is
answered ``FEED_REFUSED`` with the reason and logged.  A box bigger than one batch
cuts the connection before it is put together (:class:`~server_kit.amp.bounded.BoundedBoxes`).

The checks and the writes a message causes (the store, the receiver's journal, a day's
replay, a report's signatures checked by ``openssl``) run off the reactor, through ``run``:
the service gives a pool of one thread, so that the messages of every connection are
handled one at a time in the order they came, and the reactor goes on reading the other
connections, the page and the monitoring meanwhile.
"""

from __future__ import annotations

from typing import Any, Callable

from twisted.internet import defer
from twisted.internet.interfaces import IHandshakeListener
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from protocol.regulator_feed import (
    CENTRAL,
    Batch,
    FeedFormatError,
    Hello,
    Report,
    ReportPart,
    decode,
    encode,
    hall_sender,
)
from regulator.receiver import FeedRefused, Receiver
from regulator.reports import ReportInbox
from server_kit.amp.bounded import BoundedBoxes
from server_kit.amp.chunks import PIECE_BYTES
from server_kit.core import RunBlocking, run_inline
from server_kit.feed.link import MAX_MESSAGE_BYTES, FeedBatch, FeedHello, FeedRefusedError, FeedReport, FeedReportPart
from server_kit.pki import PkiError, Role, peer_identity


def sender_of(role: Role, name: str) -> str | None:
    """The feed identity a certificate of ``role`` named ``name`` may send as, or None."""
    if role is Role.server:
        return hall_sender(name)
    if role is Role.central:
        return CENTRAL
    return None


@implementer(IHandshakeListener)
class FeedReceiving(BoundedBoxes):
    """One sender's connection."""

    log = Logger()
    max_box_keys = MAX_MESSAGE_BYTES // PIECE_BYTES + 8
    max_box_bytes = MAX_MESSAGE_BYTES + 64 * 1024

    def __init__(self, receiver: Receiver, on_change: Callable[[], None], run: RunBlocking = run_inline) -> None:
        super().__init__()
        self.receiver = receiver
        self.on_change = on_change
        self.run = run
        self.sender: str | None = None

    def handshakeCompleted(self) -> None:
        try:
            identity = peer_identity(self.transport)  # type: ignore[arg-type]
        except PkiError as error:
            self.log.warn("Refused a connection from {peer}: {error}", peer=self._address(), error=str(error))
            self.transport.abortConnection()  # type: ignore[union-attr]
            return
        self.sender = sender_of(identity.role, identity.common_name)
        if self.sender is None:
            self.log.warn("Refused {name} from {peer}: its certificate is for a {role}; only hall servers and the "
                          "central server feed the receiver", name=identity.common_name, peer=self._address(),
                          role=str(identity.role))
            self.transport.abortConnection()  # type: ignore[union-attr]
            return
        self.log.info("Feed from {sender} connected from {peer}", sender=self.sender, peer=self._address())

    def connectionMade(self) -> None:
        super().connectionMade()
        self.factory.connections.add(self)

    def connectionLost(self, reason: Any = None) -> None:
        self.factory.connections.discard(self)
        super().connectionLost(reason)

    def _address(self) -> str:
        peer = self.transport.getPeer() if self.transport is not None else None
        return f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"

    def box_too_big(self) -> None:
        self.log.warn("{sender} sent a box over {size} bytes; the connection is cut",
                      sender=self.sender or self._address(), size=self.max_box_bytes)
        super().box_too_big()

    def _certified(self) -> str:
        if self.sender is None:
            raise FeedRefusedError("the connection has no certified sender")
        return self.sender

    def _take(self, message: bytes, kind: type, handle: Callable[[Any, str], Any]) -> defer.Deferred[dict[str, Any]]:
        """Decode ``message`` as a ``kind`` and hand it to ``handle`` with the certified sender, off the
        reactor (``run``); fires with the reply to answer."""
        certified = self._certified()

        def handled() -> Any:
            taken = decode(message)
            if not isinstance(taken, kind):
                raise FeedFormatError(f"this command carries a {kind.__name__.lower()}, not a {type(taken).__name__}")
            return handle(taken, certified)

        def changed(outcome: Any) -> Any:
            self.on_change()
            return outcome

        def refused(failure: Failure) -> Any:
            failure.trap(FeedFormatError, FeedRefused)
            assert isinstance(failure.value, Exception)
            return self._refuse(certified, failure.value)

        answering: defer.Deferred[dict[str, Any]] = self.run(handled).addBoth(changed).addCallbacks(
            lambda reply: {"message": encode(reply)}, refused)
        return answering

    def _logged(self, answer: defer.Deferred[dict[str, Any]], what: str) -> defer.Deferred[dict[str, Any]]:
        def told(reply: dict[str, Any]) -> dict[str, Any]:
            self.log.info("Feed from {sender}: {what}", sender=self.sender, what=what)
            return reply

        return answer.addCallback(told)

    @FeedHello.responder
    def hello(self, message: bytes) -> defer.Deferred[dict[str, Any]]:
        return self._logged(self._take(message, Hello, self.receiver.hello), "hello")

    @FeedBatch.responder
    def batch(self, message: bytes) -> defer.Deferred[dict[str, Any]]:
        return self._take(message, Batch, self.receiver.batch)

    @FeedReport.responder
    def report(self, message: bytes) -> defer.Deferred[dict[str, Any]]:
        inbox = self.factory.inbox
        if inbox is None:
            raise FeedRefusedError("this receiver takes records only, not reports")
        return self._logged(self._take(message, Report, inbox.take), "a report received")

    @FeedReportPart.responder
    def report_part(self, message: bytes) -> defer.Deferred[dict[str, Any]]:
        inbox = self.factory.inbox
        if inbox is None:
            raise FeedRefusedError("this receiver takes records only, not reports")
        return self._take(message, ReportPart, inbox.take_part)

    def _refuse(self, certified: str, error: Exception) -> Any:
        self.log.warn("Feed from {sender} refused: {error}", sender=certified, error=str(error))
        raise FeedRefusedError(str(error))


class FeedReceiverFactory(Factory):
    noisy = False

    def __init__(self, receiver: Receiver, on_change: Callable[[], None] = lambda: None,
                 inbox: ReportInbox | None = None, run: RunBlocking = run_inline) -> None:
        self.receiver = receiver
        self.on_change = on_change
        self.inbox = inbox
        #: Runs each message's handling: one thread for all connections in the service (see the module).
        self.run = run
        #: The connections open now (each cut when the receiver stops).
        self.connections: set[FeedReceiving] = set()

    def buildProtocol(self, addr: Any) -> FeedReceiving:
        connection = FeedReceiving(self.receiver, self.on_change, self.run)
        connection.factory = self
        return connection


__all__ = ["FeedReceiverFactory", "FeedReceiving", "sender_of"]

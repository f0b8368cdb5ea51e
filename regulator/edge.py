"""The receiver's endpoint: AMP over mutual TLS, one connection per sender (docs/regulator-feed.md).

Who sends is what its certificate says, checked once the handshake is done: a hall
server's certificate (role ``server``, named as its hall id) feeds ``hall:<id>``, the
central server's (role ``central``) feeds ``central``; any other certificate is cut
off at once.  Each ``FeedHello`` and ``FeedBatch`` is decoded
(:mod:`protocol.regulator_feed`) and handed to the :class:`~regulator.receiver.Receiver`;
a message that breaks the format, names another sender or says another key is
answered ``FEED_REFUSED`` with the reason and logged.  A box bigger than one batch
cuts the connection before it is put together (:class:`~server_kit.amp.bounded.BoundedBoxes`).
"""

from __future__ import annotations

from typing import Any, Callable

from twisted.internet.interfaces import IHandshakeListener
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from zope.interface import implementer

from protocol.regulator_feed import CENTRAL, Batch, FeedFormatError, Hello, Report, decode, encode, hall_sender
from regulator.receiver import FeedRefused, Receiver
from regulator.reports import ReportInbox
from server_kit.amp.bounded import BoundedBoxes
from server_kit.amp.chunks import PIECE_BYTES
from server_kit.feed.link import MAX_MESSAGE_BYTES, FeedBatch, FeedHello, FeedRefusedError, FeedReport
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

    def __init__(self, receiver: Receiver, on_change: Callable[[], None]) -> None:
        super().__init__()
        self.receiver = receiver
        self.on_change = on_change
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

    def _take(self, message: bytes, kind: type, handle: Callable[[Any, str], Any]) -> dict[str, Any]:
        """Decode ``message`` as a ``kind``, hand it to ``handle`` with the certified sender, answer its reply."""
        certified = self._certified()
        try:
            taken = decode(message)
            if not isinstance(taken, kind):
                raise FeedFormatError(f"this command carries a {kind.__name__.lower()}, not a {type(taken).__name__}")
            reply = handle(taken, certified)
        except (FeedFormatError, FeedRefused) as error:
            return self._refuse(certified, error)
        finally:
            self.on_change()
        return {"message": encode(reply)}

    @FeedHello.responder
    def hello(self, message: bytes) -> dict[str, Any]:
        answer = self._take(message, Hello, self.receiver.hello)
        self.log.info("Feed from {sender}: hello", sender=self.sender)
        return answer

    @FeedBatch.responder
    def batch(self, message: bytes) -> dict[str, Any]:
        return self._take(message, Batch, self.receiver.batch)

    @FeedReport.responder
    def report(self, message: bytes) -> dict[str, Any]:
        inbox = self.factory.inbox
        if inbox is None:
            raise FeedRefusedError("this receiver takes records only, not reports")
        answer = self._take(message, Report, inbox.take)
        self.log.info("Feed from {sender}: a report received", sender=self.sender)
        return answer

    def _refuse(self, certified: str, error: Exception) -> Any:
        self.log.warn("Feed from {sender} refused: {error}", sender=certified, error=str(error))
        raise FeedRefusedError(str(error))


class FeedReceiverFactory(Factory):
    noisy = False

    def __init__(self, receiver: Receiver, on_change: Callable[[], None] = lambda: None,
                 inbox: ReportInbox | None = None) -> None:
        self.receiver = receiver
        self.on_change = on_change
        self.inbox = inbox
        #: The connections open now (each cut when the receiver stops).
        self.connections: set[FeedReceiving] = set()

    def buildProtocol(self, addr: Any) -> FeedReceiving:
        connection = FeedReceiving(self.receiver, self.on_change)
        connection.factory = self
        return connection


__all__ = ["FeedReceiverFactory", "FeedReceiving", "sender_of"]

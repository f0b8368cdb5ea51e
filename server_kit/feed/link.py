"""The feed's link to the regulator's receiver: AMP over mutual TLS, kept up by a ``ClientService``.

Both ends use the two commands here; each carries one message of
:mod:`protocol.regulator_feed` (canonical JSON) as a :class:`~server_kit.amp.chunks.Chunked`
value, and is answered with the receiver's message:

``FeedHello``   ``hello``  -> ``position`` (checked against the journal first: :attr:`FeedLinkService.witness`)
``FeedBatch``   ``batch``  -> ``ack``
``FeedReport``  ``report`` -> ``report_ack`` (a signed report, once every record is acknowledged)
``FeedReportPart``  ``report_part`` -> ``report_part_ack``, the last one ``report_ack`` (a report larger
                than one message, in parts; a delivery cut off goes on at the part the receiver lacks)

A receiver that refuses a message (it breaks the format, it is for another identity,
another key) answers ``FEED_REFUSED`` with its reason; the sender logs it and drops the
connection, and ``ClientService`` tries again later with back-off (a refusal does not
heal by itself, but a receiver fixed by its operator is then found again).

:class:`FeedSending` is the sender's connection: once the TLS handshake is done it
checks that the other end presented a ``regulator`` certificate (a hall's or the
central server's certificate, which may serve TLS too, cannot pose as the regulator),
says ``hello``, and then sends one batch at a time, the next after the ack.  When the
receiver holds everything it waits for :meth:`FeedLinkService.wake` (called on each
commit) or, at the latest, :data:`POLL_S`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet import defer
from twisted.internet.endpoints import SSL4ClientEndpoint
from twisted.internet.interfaces import IHandshakeListener
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.protocols import amp
from twisted.python.failure import Failure
from zope.interface import implementer

from protocol.regulator_feed import (
    Ack,
    FeedFormatError,
    Position,
    Report,
    ReportAck,
    ReportPart,
    ReportPartAck,
    decode,
    encode,
    report_parts,
)
from protocol.errors import N_, worded
from server_kit.amp.chunks import Chunked
from server_kit.core import RunBlocking, run_inline
from server_kit.feed.cursor import FeedCursor, FeedProtocolError, FeedStatus
from server_kit.feed.reports import ReportOutbox
from server_kit.pki import PkiError, Role, client_tls_options, peer_identity

#: The most bytes of one feed message (a batch of 200 records with large payloads).
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
#: Reconnecting: the first retry after about a second, at most a minute apart.
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0
#: The longest the sender waits before looking for new records when nothing woke it.
POLL_S = 1.0
#: After the receiver refused a record of a batch, the wait before the link sends from it again.
REFUSED_WAIT_S = 10.0
#: A record not acknowledged this long after its commit: the feed has fallen behind.
LATE_S = 30.0
#: A record committed this recently is on its way: the console says "up to date".
IN_FLIGHT_S = 5


class FeedRefusedError(Exception):
    """The receiver refused the message; the text says why."""


class FeedHello(amp.Command):
    commandName = b"FeedHello"
    arguments = [(b"message", Chunked(64 * 1024))]
    response = [(b"message", Chunked(64 * 1024))]
    errors = {FeedRefusedError: b"FEED_REFUSED"}


class FeedBatch(amp.Command):
    commandName = b"FeedBatch"
    arguments = [(b"message", Chunked(MAX_MESSAGE_BYTES))]
    response = [(b"message", Chunked(64 * 1024))]
    errors = {FeedRefusedError: b"FEED_REFUSED"}


class FeedReport(amp.Command):
    commandName = b"FeedReport"
    arguments = [(b"message", Chunked(MAX_MESSAGE_BYTES))]
    response = [(b"message", Chunked(64 * 1024))]
    errors = {FeedRefusedError: b"FEED_REFUSED"}


class FeedReportPart(amp.Command):
    commandName = b"FeedReportPart"
    arguments = [(b"message", Chunked(MAX_MESSAGE_BYTES))]
    response = [(b"message", Chunked(64 * 1024))]
    errors = {FeedRefusedError: b"FEED_REFUSED"}


@dataclass(frozen=True)
class ReceiverAddress:
    """Where the regulator's receiver is and who this server is to it."""

    host: str
    port: int
    pki_dir: Path
    certificate: str  # the name of this server's certificate in ``pki_dir``
    server_name: str  # the host name the receiver's certificate must carry


@implementer(IHandshakeListener)
class FeedSending(amp.AMP):
    """One connection to the receiver, sending the journal through the cursor."""

    log = Logger()

    def __init__(self, service: "FeedLinkService") -> None:
        super().__init__()
        self.service = service
        self.cursor = service.cursor
        self.shaken: defer.Deferred[None] = defer.Deferred()
        self.busy = False
        self.open = True
        self._poll: Any = None
        #: After a refused record, nothing is sent before this time (the reactor's clock).
        self._held_until = 0.0

    def itself(self) -> "FeedSending":
        return self

    def handshakeCompleted(self) -> None:
        try:
            identity = peer_identity(self.transport)  # type: ignore[arg-type]
        except PkiError as error:
            self.shaken.errback(Failure(FeedRefusedError(str(error))))
            return
        if identity.role is not Role.regulator:
            self.shaken.errback(Failure(FeedRefusedError(
                f"the receiver presented {identity.common_name}'s certificate, a {identity.role}'s: "
                "the feed goes only to a regulator's certificate")))
            return
        self.shaken.callback(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.loseConnection()

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        self.open = False
        if self._poll is not None and self._poll.active():
            self._poll.cancel()
        if self.service.sending is self:
            self.service.sending = None
            self.cursor.disconnect()
            self.service.changed()
        if not self.shaken.called:
            self.shaken.errback(Failure(FeedRefusedError("the connection closed before its handshake was done")))
        super().connectionLost(reason)

    @defer.inlineCallbacks
    def start(self):  # type: ignore[no-untyped-def]
        """Handshake, hello, the position; then the batches."""
        yield self.shaken
        hello = self.cursor.connect()
        self.service.sending = self
        answer = yield self.callRemote(FeedHello, message=encode(hello))
        position = decode(answer["message"])
        if not isinstance(position, Position):
            raise FeedProtocolError(f"the receiver answered a hello with a {type(position).__name__}")
        if self.service.witness is not None:  # raises when the journal lacks what the receiver holds
            self.service.witness(position.acked, position.hash)
        self.cursor.position(position)
        if self.service.outbox is not None:
            self.service.outbox.changed()  # a report not acknowledged before is due again
        self.service.changed()
        self.log.info("Feed to the regulator: connected; the receiver holds {acked} of {committed} records",
                      acked=position.acked, committed=self.cursor.committed)
        self.pump()

    def pump(self) -> None:
        """Send the next batch unless one is in flight; wait for records when there is none."""
        if self.busy or not self.open:
            return
        wait = self._held_until - self.service.clock.seconds()
        if wait > 0:
            if self._poll is None or not self._poll.active():
                self._poll = self.service.clock.callLater(wait, self.pump)
            return
        after = self.cursor.sending_from()
        if after is None:
            self._idle()
            return
        self.busy = True  # the journal is read off the reactor; nothing else is sent meanwhile
        reading = self.service.read(self.cursor.read_after, after)
        reading.addCallbacks(lambda records: self._send_batch(after, records), self._read_failed)

    def _idle(self) -> None:
        """Every record is sent: a report due (its folder read off the reactor), or a look again in
        :data:`POLL_S`."""
        outbox = self.service.outbox
        if outbox is None or not outbox.dirty:
            self._look_later()
            return
        self.busy = True  # nothing else is sent while the folder is read
        version = outbox.version

        def found(report: Report | None) -> None:
            self.busy = False
            if not self.open:
                return
            if report is not None:
                self.send_report(report)
                return
            outbox.clear(version)  # none due, unless one was written while the folder was read
            self.pump()

        def unreadable(failure: Failure) -> None:
            self.busy = False
            self.log.failure("Feed to the regulator: the reports' folder could not be read; trying again in {s} s",
                             failure, s=POLL_S)
            if self.open:
                self._look_later()

        self.service.read(outbox.find_due).addCallbacks(found, unreadable)

    def _look_later(self) -> None:
        if self._poll is None or not self._poll.active():
            self._poll = self.service.clock.callLater(POLL_S, self.pump)

    def _read_failed(self, failure: Failure) -> None:
        self.busy = False
        self.log.failure("Feed to the regulator: the journal could not be read; trying again in {s} s", failure,
                         s=POLL_S)
        if self.open and (self._poll is None or not self._poll.active()):
            self._poll = self.service.clock.callLater(POLL_S, self.pump)

    def _send_batch(self, after: int, records: tuple[Any, ...]) -> None:
        self.busy = False
        if not self.open:
            return
        if not records:
            self._idle()
            return
        batch = self.cursor.sending(after, records)
        if batch is None:  # the connection moved on while the records were read: from where it stands
            self.pump()
            return
        self.busy = True
        sent = self.callRemote(FeedBatch, message=encode(batch))

        def acked(answer: dict[str, Any]) -> None:
            self.busy = False
            ack = decode(answer["message"])
            if not isinstance(ack, Ack):
                raise FeedProtocolError(f"the receiver answered a batch with a {type(ack).__name__}")
            self.cursor.ack(ack)
            self.service.changed()
            if ack.seq < batch.records[-1].seq:
                self.log.warn("Feed to the regulator: the receiver stored up to record {seq} of the {count} sent "
                              "(it raised an alert on the next); sending again from there in {s} s",
                              seq=ack.seq, count=len(batch.records), s=REFUSED_WAIT_S)
                self._held_until = self.service.clock.seconds() + REFUSED_WAIT_S  # not in a tight loop
            self.pump()

        def failed(failure: Failure) -> None:
            self.busy = False
            if self.open:
                self.log.warn("Feed to the regulator: {error}; the connection is dropped and opened again",
                              error=failure.getErrorMessage())
                self.close()

        sent.addCallback(acked).addErrback(failed)

    def send_report(self, report: Report) -> None:
        """Send ``report``, in parts when it is larger than one message (from the part the receiver said it
        lacked, when an earlier connection was cut); once acknowledged it is not due again (unless written
        again)."""
        self.busy = True
        outbox = self.service.outbox
        assert outbox is not None
        parts = report_parts(report)
        if len(parts) == 1:  # it fits in one message: sent whole
            parts = []
        resume = self.service.resume

        def send(part: ReportPart) -> None:
            self.callRemote(FeedReportPart, message=encode(part)).addCallback(acked).addErrback(failed)

        def acked(answer: dict[str, Any]) -> Any:
            self.busy = False
            ack = decode(answer["message"])
            if (isinstance(ack, ReportPartAck) and parts and ack.name == report.name
                    and ack.digest == parts[0].digest and ack.next < len(parts)):
                resume[(report.name, ack.digest)] = ack.next
                self.log.info("Feed to the regulator: report {name}: {held} of its {count} parts held",
                              name=report.name, held=ack.next, count=len(parts))
                self.busy = True
                send(parts[ack.next])
                return
            if not isinstance(ack, ReportAck) or ack.name != report.name:
                raise FeedProtocolError(f"the receiver answered the report {report.name} with {ack!r:.80}")
            if parts:
                resume.pop((report.name, parts[0].digest), None)
            self.busy = True  # the report's files are read again and the ack kept, off the reactor
            return self.service.read(outbox.matches, ack).addCallback(keep, ack)

        def keep(same: bool, ack: ReportAck) -> Any:
            if not same:
                return noted(False)
            if outbox.deliveries is not None:  # a journal record: decided on the reactor
                outbox.deliveries.note(ack.name, ack.digest)
                return noted(True)
            return self.service.read(outbox.write_delivered, ack).addCallback(lambda _: noted(True))

        def noted(same: bool) -> None:
            self.busy = False
            if same:
                self.log.info("Feed to the regulator: report {name} acknowledged", name=report.name)
            else:
                outbox.dirty = False  # its files changed meanwhile, or the receiver saw others: next connection
                self.log.warn("Feed to the regulator: the receiver acknowledged other files of report {name} "
                              "than these; it is sent again on the next connection", name=report.name)
            self.pump()

        def failed(failure: Failure) -> None:
            self.busy = False
            if failure.check(FeedRefusedError):
                outbox.dirty = False  # refused as it is: not sent again on this connection
                self.log.warn("Feed to the regulator: report {name} refused: {error}", name=report.name,
                              error=failure.getErrorMessage())
                self.pump()
            elif self.open:
                self.log.warn("Feed to the regulator: report {name}: {error}; the connection is opened again",
                              name=report.name, error=failure.getErrorMessage())
                self.close()

        if parts:
            send(parts[min(resume.get((report.name, parts[0].digest), 0), len(parts) - 1)])
        else:
            self.callRemote(FeedReport, message=encode(report)).addCallback(acked).addErrback(failed)

    def wake(self) -> None:
        """New records were committed: send them now if nothing is in flight (nor waiting after a refusal)."""
        if self._poll is not None and self._poll.active():
            self._poll.cancel()
        self.pump()


class _Factory(Factory):
    noisy = False

    def __init__(self, service: "FeedLinkService") -> None:
        self.service = service

    def buildProtocol(self, addr: Any) -> FeedSending:
        connection = FeedSending(self.service)
        connection.factory = self
        return connection


class FeedLinkService(ClientService):
    """Keeps the feed connected; :meth:`status` is the consoles' ``feed`` line."""

    log = Logger()

    def __init__(self, reactor: Any, cursor: FeedCursor, address: ReceiverAddress,
                 outbox: ReportOutbox | None = None, read: RunBlocking = run_inline) -> None:
        self.cursor = cursor
        #: Runs the journal's reads (a thread pool in the servers, never the reactor's thread).
        self.read = read
        #: The signed reports to send once every record is acknowledged (None: records only).
        self.outbox = outbox
        self.address = address
        self.clock = reactor
        self.sending: FeedSending | None = None
        #: Of each report being sent in parts (its name and digest), the first part the receiver lacked.
        self.resume: dict[tuple[str, str], int] = {}
        self._shown: tuple[float, dict[str, Any]] | None = None
        #: Told (at most once a second) when the feed connects, is acknowledged or is lost.
        self.listeners: list[Callable[[], None]] = []
        #: Told the receiver's position at each connection (the last record it holds and its hash),
        #: before anything is sent; raises when the journal lacks it (a server rolled back).
        self.witness: Callable[[int, str | None], None] | None = None
        self._told = 0.0
        self._telling: Any = None
        options = client_tls_options(address.pki_dir, address.certificate, address.server_name)
        endpoint = SSL4ClientEndpoint(reactor, address.host, address.port, options)
        super().__init__(endpoint, _Factory(self), retryPolicy=backoffPolicy(RETRY_FIRST_S, RETRY_MAX_S),
                         clock=reactor, prepareConnection=self._prepare)

    def _prepare(self, proxy: Any) -> defer.Deferred[Any]:
        connection: FeedSending = proxy.itself()
        # ClientService counts a connection whose preparation failed as a failed attempt and
        # has no transition for that connection's loss afterwards (it would log NoTransition):
        # its loss is told to the service only once the hello was answered and taken.
        lost = getattr(proxy, "_lostNotification", None)
        if lost is not None:
            proxy._lostNotification = lambda reason: None
        started: defer.Deferred[Any] = connection.start()

        def taken(outcome: Any) -> Any:
            if lost is not None:
                proxy._lostNotification = lost
            return outcome

        def refused(failure: Failure) -> Failure:
            reason = failure.getErrorMessage()
            if failure.check(FeedFormatError, FeedProtocolError, FeedRefusedError):
                self.log.warn("Feed to the regulator refused: {reason}", reason=reason)
            connection.close()
            return failure

        return started.addCallbacks(taken, refused)

    def wake(self) -> None:
        if self.sending is not None:
            self.sending.wake()

    def report_written(self) -> None:
        """A signed report was written: send it as soon as the records are acknowledged.

        Called on the reactor: the daily reports are written on a thread, and their writers
        tell their listeners from the deferred that fires when the writing is done.
        """
        if self.outbox is not None:
            self.outbox.changed()
            self.clock.callLater(0, self.wake)  # on the reactor's next turn, after the writer's own callbacks

    def status(self) -> FeedStatus:
        return self.cursor.status()

    def changed(self) -> None:
        """The feed moved (connected, acknowledged, lost): tell the listeners, at most once a second."""
        if not self.listeners or (self._telling is not None and self._telling.active()):
            return
        wait = max(0.0, self._told + 1.0 - self.clock.seconds())
        self._telling = self.clock.callLater(wait, self._tell)

    def _tell(self) -> None:
        self._told = self.clock.seconds()
        self._shown = None  # worked out afresh for them
        for listener in self.listeners:
            listener()

    def console_status(self) -> dict[str, Any]:
        """The feed for the administrator's console, worked out at most once a second: the
        cursor's figures, the age of the oldest record not acknowledged, whether the feed is
        ``behind`` (not connected, or that record older than :data:`LATE_S`), and a line.
        Records committed in the last :data:`IN_FLIGHT_S` are on their way, not behind."""
        now = self.clock.seconds()
        if self._shown is not None and now - self._shown[0] < 1.0:
            return self._shown[1]
        status = self.cursor.status()
        waiting = self.cursor.journal.record((status.acked or 0) + 1) if status.committed > (status.acked or 0) else None
        age_s = None if waiting is None else max(0, int(now - waiting.time_ms / 1000))
        behind = not status.connected or (age_s is not None and age_s > LATE_S)
        figures = {"where": f"{self.address.host}:{self.address.port}", "committed": status.committed,
                   "acked": status.acked, "lag": status.lag, "age": age_s}
        if status.acked is None:
            template = N_("Regulator's feed ({where}): not connected yet, {committed} records to send")
        elif status.connected and (not status.lag or (age_s is not None and age_s <= IN_FLIGHT_S)):
            template = N_("Regulator's feed ({where}): up to date, {acked} of {committed} records acknowledged")
        elif status.connected:
            template = N_("Regulator's feed ({where}): connected, {lag} records behind, the oldest committed {age} s ago")
        else:
            template = N_("Regulator's feed ({where}): not connected, {lag} records behind, the oldest committed "
                          "{age} s ago")
        shown = {**status.to_dict(), "oldest_unacknowledged_s": age_s, "behind": behind, **worded(template, figures)}
        self._shown = (now, shown)
        return shown

    def stopService(self) -> defer.Deferred[None]:
        if self._telling is not None and self._telling.active():
            self._telling.cancel()
        self.listeners.clear()
        if self.sending is not None:
            self.sending.open = False
            if self.sending._poll is not None and self.sending._poll.active():
                self.sending._poll.cancel()
        return super().stopService()


__all__ = ["FeedBatch", "FeedHello", "FeedReport", "FeedLinkService", "FeedRefusedError", "FeedSending", "ReceiverAddress",
           "MAX_MESSAGE_BYTES", "FeedReportPart"]

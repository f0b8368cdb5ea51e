"""``bingo regulator serve``: the reference receiver as a process of its own.

:class:`ReceiverService` is its composition root.  It stands on the foundation the hall and
the central server stand on (:func:`server_kit.boot.lay`, docs/server-kit.md): the store
(SQLite under the receiver's folder by default, migrated), the key of its own signed
journal of what it found (``keys/journal-signing.pem`` of the folder, made at the first
start), that journal begun, or verified before anything reads it (every record after the
newest trusted checkpoint by signature too, a head file that lagged brought up to it; a
journal that does not verify refuses the start with one line), its checkpoints (the
journal's end: it folds nothing, its store holds what it knows; every
``checkpoint_every_seconds`` with records since the last, and at a clean stop), its run
marker (written at the start, removed after a clean stop; a start that finds it follows
a crash and says so: R92.5e) and its thread pools.  Its records are stamped by a
:class:`~server_kit.clock.JournalClock`, never backwards.

On that: the senders the regulator registered (``senders.toml``, :mod:`regulator.senders`),
the :class:`~regulator.receiver.Receiver`, and the endpoint listening over mutual TLS with
the regulator's certificate of the operator's authority (a ``regulator`` certificate
issued with ``--host`` naming the receiver's address; docs/pki.md).  Clients must present
a certificate of the same authority, not revoked; only hall servers and the central
server may feed, and only once registered; every message is handled on one thread, in the
order they came (:mod:`regulator.edge`).  The page takes a regulator's or an inspector's
certificate only, and reads the store in a thread pool of its own.  Every start makes the
receiver's folder its user's alone (folders 0700, files 0600:
:func:`server_kit.private.make_private`).  Both ports are behind one connection guard
(:mod:`server_kit.connections`): handshake and idle deadlines, per-address and
per-certificate bounds, descriptors kept for the store, and the connections of a
certificate the revocation list comes to name cut within seconds.

A stop stops listening, cuts the feeds, lets the feed's thread finish the message in
hand, writes the last checkpoint, disposes of the database and removes the run marker, in
that order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.logger import Logger
from twisted.python.failure import Failure

from regulator.edge import FeedReceiverFactory
from regulator.receiver import Receiver
from regulator.reports import ReportInbox
from regulator.senders import SenderRegistry
from regulator.store import Store, open_database
from regulator.web import ReceiverPage
from server_kit.boot import lay
from server_kit.clock import JournalClock
from server_kit.connections import ConnectionGuard, ConnectionLimits
from server_kit.health import monitor_site
from server_kit.pki import ClientCertificates, server_tls_options
from server_kit.private import make_private
from server_kit.release import SOFTWARE
from server_kit.run_marker import MARKER
from server_kit.web.http import secure_site

#: The receiver's port when none is given, and its page's.
DEFAULT_PORT = 8700
DEFAULT_WEB_PORT = 8701
#: The bound on a request body to the page: it reads none (GETs only).
PAGE_BODY_BYTES = 16 * 1024
#: Threads the page reads the store with.
PAGE_THREADS = 2
#: What a refused start on a journal that does not verify advises.
JOURNAL_ADVICE = 'docs/regulator-feed.md, "The receiver\'s own journal"'

log = Logger()


@dataclass(frozen=True)
class ReceiverSettings:
    home: Path  # the receiver's folder: its database
    pki_dir: Path  # the regulator's certificate, key and the operator's authority
    certificate: str = "regulator"
    port: int = DEFAULT_PORT
    interface: str = ""
    database_url: str | None = None
    #: The page's port (None: no page) and interface (loopback: for the staff at the receiver).
    web_port: int | None = DEFAULT_WEB_PORT
    web_interface: str = "127.0.0.1"
    #: What both ports admit (docs/security.md, "Connections").
    limits: ConnectionLimits = ConnectionLimits()
    #: /health, /ready and /metrics over HTTP on this loopback port (0: any free; None: not served).
    monitor_port: int | None = None
    #: A checkpoint of the journal's end this often when records came since the last (and at a clean stop).
    checkpoint_every_seconds: float = 600.0

    @property
    def url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'regulator.sqlite3'}"


class ReceiverService(Service):
    """Listens for feeds; :attr:`listening` fires with the port (or fails) once it listens."""

    def __init__(self, reactor: Any, settings: ReceiverSettings) -> None:
        self.reactor = reactor
        self.settings = settings
        # The register of senders is read before anything is made: a misspelt key in it stops the start.
        self.registry = SenderRegistry(settings.home)
        self.registry.senders()
        settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.clock = JournalClock.of(reactor)  # the records' time: the wall clock, never backwards
        self.engine = open_database(settings.url)
        home = settings.home
        try:
            self.foundation = lay(
                reactor, self.clock, self.engine, name="regulator", server="regulator's receiver", advice=JOURNAL_ADVICE,
                home=home, key_path=home / "keys" / "journal-signing.pem", head=home / "journal.head",
                opening={"receiver": settings.certificate}, checkpoints=home / "checkpoints", release=SOFTWARE)
        except BaseException:
            self.engine.dispose()
            raise
        self.journal = self.foundation.journal
        if self.journal.last is not None:
            self.clock.continue_from(self.journal.last.time_ms)
        if self.foundation.crashed:
            # Nothing was in play to stop: what a sender sent and was not acknowledged it sends again, a
            # report cut off comes again from its parts held, and a day not replayed is taken up again.
            log.warn("The receiver's last run did not stop cleanly (its run marker {path} was left behind): its "
                     "journal was verified before it serves again; the senders resend what it did not acknowledge",
                     path=str(home / MARKER))
        self.store = Store(self.engine)
        self.receiver = Receiver(self.store, self.clock.now_ms, self.journal, home=home, registered=self.registry.get)
        # What the page shows from memory is ready before the first request: each hall's games
        # folded, the days waiting for their records taken again (reads, done here, at the start).
        for sender in self.store.senders():
            self.receiver.games_of(sender.sender)
        self.receiver.days.awaited()
        self.options = server_tls_options(settings.pki_dir, settings.certificate,
                                          client_certificates=ClientCertificates.required)
        self.inbox = ReportInbox(home, settings.pki_dir / "ca.pem", self.journal, self.clock.now_ms,
                                 self.receiver.alert, self.receiver.days, registered=self.registry.get)
        # The checkpoints before the pools: the services stop in the reverse order, so the last
        # checkpoint is written once the feed's thread has finished the message in hand.  By time
        # only (records: 0, never counted): nothing tells the journal's end of an append (JournalOnly).
        self.checkpointing = self.foundation.checkpoint_every(
            0, settings.checkpoint_every_seconds, core=self.foundation.journal_only())
        # Every feed message is checked and stored on this one thread, in the order they came (regulator.edge).
        self.factory = FeedReceiverFactory(self.receiver, inbox=self.inbox,
                                           run=self.foundation.pool("feed", 1, at_least=1))
        # The page is the regulator's: no handshake without a certificate of the authority, and
        # then only a regulator's or an inspector's is answered (regulator.web).
        self.page_options = server_tls_options(settings.pki_dir, settings.certificate,
                                               client_certificates=ClientCertificates.required)
        self.read_page = self.foundation.pool("page", PAGE_THREADS) if settings.web_port is not None else None
        self.foundation.service.stopped.append(self.engine.dispose)  # after the last checkpoint, before the marker
        make_private(home)
        self.guard = ConnectionGuard(reactor, settings.limits, pki_dir=settings.pki_dir)
        # Ready once the journal verified (above) and the feeds' port listens (docs/deploy.md).
        self.monitor = self.foundation.monitor
        self._serving = self.monitor.require_flag("serving", "the receiver is starting: its port does not listen yet")
        self.monitor.gauge("bingo_journal_last_record", "The receiver's journal's last record (its seq).",
                           lambda: self.journal.last.seq if self.journal.last is not None else 0)
        self.monitor.gauge("bingo_feeds_connected", "Feeds (halls, the central server) connected now.",
                           lambda: len(self.factory.connections))
        self.monitor.watch_connections(self.guard)
        self.monitoring = (monitor_site(self.monitor, reactor, settings.monitor_port)
                           if settings.monitor_port is not None else None)
        self.port: Any = None
        self.web_port: Any = None
        self.listening: defer.Deferred[Any] = defer.Deferred()

    def startService(self) -> None:
        super().startService()
        self.foundation.service.startService()  # the run marker, the pools, the checkpoints
        self.guard.startService()
        endpoint = self.guard.endpoint(TCP4ServerEndpoint(self.reactor, self.settings.port,
                                                          interface=self.settings.interface), tls=self.options)

        def listened(port: Any) -> Any:
            self.port = port
            log.info("Regulator's receiver listening for feeds on {host}:{port} (mutual TLS, AMP); store {url}",
                     host=self.settings.interface or "*", port=port.getHost().port, url=self.settings.url)
            self._serving()
            self.listening.callback(port)
            return port

        def failed(failure: Failure) -> None:
            log.error("The regulator's receiver cannot listen: {error}", error=failure.getErrorMessage())
            self.listening.errback(failure)

        if self.monitoring is not None:  # first: once the receiver says it listens, its monitoring port answers too
            self.monitoring.startService()
            self.monitoring.listening.addCallbacks(
                lambda port: log.info("Monitoring at http://127.0.0.1:{port}/ready (and /health, /metrics)",
                                      port=port.getHost().port),
                lambda failure: log.error("The monitoring port cannot listen: {error}; the receiver serves without it",
                                          error=failure.getErrorMessage()))
        listen = endpoint.listen(self.factory).addCallbacks(listened, failed)
        if self.settings.web_port is not None:
            listen.addCallback(lambda _: self._serve_page())

    def _serve_page(self) -> Any:
        assert self.settings.web_port is not None and self.read_page is not None
        page = ReceiverPage(self.store, self.clock, self.receiver, self.inbox, self.read_page)
        site = secure_site(page, max_body_bytes=PAGE_BODY_BYTES)  # no Server banner; HSTS; bodies bounded
        endpoint = self.guard.endpoint(TCP4ServerEndpoint(self.reactor, self.settings.web_port,
                                                          interface=self.settings.web_interface), tls=self.page_options)

        def listened(port: Any) -> None:
            self.web_port = port
            log.info("Regulator's receiver page at https://{host}:{port}/", host=self.settings.web_interface or "localhost",
                     port=port.getHost().port)

        def failed(failure: Failure) -> None:
            log.error("The receiver's page cannot listen: {error}; the receiver serves the feeds without it",
                      error=failure.getErrorMessage())

        return endpoint.listen(site).addCallbacks(listened, failed)

    def stopService(self) -> Any:
        """Stop listening, cut the feeds, then the services: the feed's message in hand finished, the last
        checkpoint written, the database disposed of, the run marker removed (a clean stop)."""
        super().stopService()
        self.guard.stopService()
        stopping = [defer.maybeDeferred(p.stopListening) for p in (self.port, self.web_port) if p is not None]
        for connection in list(self.factory.connections):
            if connection.transport is not None:
                connection.transport.abortConnection()  # type: ignore[attr-defined]
        if self.monitoring is not None and self.monitoring.running:
            stopping.append(defer.maybeDeferred(self.monitoring.stopService))

        def listening_stopped(_: Any) -> Any:
            if self.foundation.service.running:
                return self.foundation.service.stopService()
            self.engine.dispose()  # never started
            return None

        return defer.gatherResults(stopping).addBoth(listening_stopped)

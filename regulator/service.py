"""``bingo regulator serve``: the reference receiver as a process of its own.

:class:`ReceiverService` is its composition root: the store (SQLite under the
receiver's folder by default, migrated), its own signed journal of the alerts (the key in
``keys/journal-signing.pem`` of the folder, made at the first start; verified at every
start), the senders the regulator registered (``senders.toml``,
:mod:`regulator.senders`), the :class:`~regulator.receiver.Receiver`, and the endpoint
listening over mutual TLS with the regulator's certificate of the operator's authority
(a ``regulator`` certificate issued with ``--host`` naming the receiver's address;
docs/pki.md).  Clients must present a certificate of the same authority, not revoked;
only hall servers and the central server may feed, and only once registered.  The page
takes a regulator's or an inspector's certificate only, and reads the store in a thread
pool of its own.  Every start makes the receiver's folder its user's alone (folders
0700, files 0600: :func:`server_kit.private.make_private`).  Both ports are behind one
connection guard (:mod:`server_kit.connections`): handshake and idle deadlines,
per-address and per-certificate bounds, descriptors kept for the store, and the
connections of a certificate the revocation list comes to name cut within seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.logger import Logger
from twisted.python.failure import Failure

from twisted.python.threadpool import ThreadPool

from regulator.edge import FeedReceiverFactory
from regulator.receiver import Receiver
from regulator.reports import ReportInbox
from regulator.senders import SenderRegistry
from regulator.store import Store, open_database
from regulator.web import ReceiverPage
from server_kit.connections import ConnectionGuard, ConnectionLimits
from server_kit.core import thread_pool_runner
from server_kit.health import Monitor, monitor_site
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from server_kit.pki import ClientCertificates, server_tls_options
from server_kit.private import make_private
from server_kit.web.http import secure_site

#: The receiver's port when none is given, and its page's.
DEFAULT_PORT = 8700
DEFAULT_WEB_PORT = 8701
#: The bound on a request body to the page: it reads none (GETs only).
PAGE_BODY_BYTES = 16 * 1024

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

    @property
    def url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'regulator.sqlite3'}"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class ReceiverService(Service):
    """Listens for feeds; :attr:`listening` fires with the port (or fails) once it listens."""

    def __init__(self, reactor: Any, settings: ReceiverSettings) -> None:
        self.reactor = reactor
        self.settings = settings
        # The register of senders is read before anything is made: a misspelt key in it stops the start.
        self.registry = SenderRegistry(settings.home)
        self.registry.senders()
        settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.engine = open_database(settings.url)
        self.store = Store(self.engine)
        key = load_journal_key(settings.home / "keys" / "journal-signing.pem", create=True)
        self.journal = Journal(self.engine, key, head=settings.home / "journal.head")
        if self.journal.is_new:
            self.journal.initialise(now_ms(), {"receiver": settings.certificate})
        else:
            self.journal.verify()  # a receiver does not serve on a journal that does not verify
        self.receiver = Receiver(self.store, now_ms, self.journal, home=settings.home, registered=self.registry.get)
        # What the page shows from memory is ready before the first request: each hall's games
        # folded, the days waiting for their records taken again (reads, done here, at the start).
        for sender in self.store.senders():
            self.receiver.games_of(sender.sender)
        self.receiver.days.awaited()
        self.options = server_tls_options(settings.pki_dir, settings.certificate,
                                          client_certificates=ClientCertificates.required)
        self.inbox = ReportInbox(settings.home, settings.pki_dir / "ca.pem", self.journal, now_ms, self.receiver.alert,
                                 self.receiver.days, registered=self.registry.get)
        # Every feed message is checked and stored on this one thread, in the order they came (regulator.edge).
        self.feed_pool = ThreadPool(minthreads=1, maxthreads=1, name="receiver-feed")
        self.factory = FeedReceiverFactory(self.receiver, inbox=self.inbox,
                                           run=thread_pool_runner(reactor, self.feed_pool))
        # The page is the regulator's: no handshake without a certificate of the authority, and
        # then only a regulator's or an inspector's is answered (regulator.web).
        self.page_options = server_tls_options(settings.pki_dir, settings.certificate,
                                               client_certificates=ClientCertificates.required)
        self.page_pool = ThreadPool(minthreads=0, maxthreads=2, name="receiver-page")
        make_private(settings.home)
        self.guard = ConnectionGuard(reactor, settings.limits, pki_dir=settings.pki_dir)
        # Ready once the journal verified (above) and the feeds' port listens (docs/deploy.md).
        self.monitor = Monitor("regulator")
        self.monitor.require_flag("journal", "the journal is not verified yet")()
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
        self.feed_pool.start()
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
        assert self.settings.web_port is not None
        self.page_pool.start()
        page = ReceiverPage(self.store, self.reactor, self.receiver, self.inbox,
                            thread_pool_runner(self.reactor, self.page_pool))
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
        super().stopService()
        self.guard.stopService()
        for connection in list(self.factory.connections):
            if connection.transport is not None:
                connection.transport.abortConnection()  # type: ignore[attr-defined]
        ports = [p for p in (self.port, self.web_port) if p is not None]
        stopping = [defer.maybeDeferred(p.stopListening) for p in ports]
        if self.monitoring is not None and self.monitoring.running:
            stopping.append(defer.maybeDeferred(self.monitoring.stopService))
        stopped = defer.gatherResults(stopping)

        def released(_: Any) -> None:
            if self.feed_pool.started:
                self.feed_pool.stop()  # waits for the message in hand
            if self.page_pool.started:
                self.page_pool.stop()  # waits for a read in progress
            self.engine.dispose()

        return stopped.addBoth(released)

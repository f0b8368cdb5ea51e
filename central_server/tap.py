"""The central server's composition root: the one place that builds the process.

:func:`makeService` reads the configuration (:mod:`central_server.config`) and returns
a :class:`MultiService`:

1. the database at its URL with the central migrations applied (PostgreSQL in
   production; SQLite for a single-node demo, with a warning in the log) and its single
   writer thread pool, which starts with the process and drains before it stops;
2. the journal with its Ed25519 key, **verified** (every record and the signed head)
   before anything reads it, or started if it is new; a journal that fails its check
   stops the start with one line (:class:`StartRefused`);
3. the central library: each configured series, generated once and kept in the
   database, checked against its digest on every start;
4. the command core and the :class:`~central_server.module.CentralModule`, then
   **recovery**: every game rebuilt from the journal before anything listens; then the
   central leadership is taken (:mod:`central_server.leadership`: a new epoch, journaled
   as ``central_leadership_taken`` and stamped on every record from then on) and its
   fence guards every commit: a process whose epoch another has overtaken writes
   nothing more and stops;
5. the communications endpoint (:mod:`central_server.edge`) on mutual TLS with the
   central server's certificate from its PKI folder, hall server certificates required;
   it and the consultation are behind one connection guard (:mod:`server_kit.connections`,
   ``[connections]``): handshake and idle deadlines, per-address and per-certificate
   bounds, descriptors kept for the database and the journal, and the links of a
   certificate the revocation list comes to name cut within seconds;
6. once listening: the configured games not yet in the journal are scheduled, every
   game's timers (sale opening, deadline, next ball) are armed from its journaled times,
   and the programme (:mod:`central_server.programme`) schedules its next game if one is
   due (after a ``kill -9`` between a game's end and the next one's scheduling: now, once);
7. at the start and after each midnight, the signed daily report of every ended day not
   written yet (:mod:`central_server.daily_close`), sent through the regulator's feed.

**One of two processes** (``[replica]``, :mod:`central_server.replica`).  The process
waits until its local node answers: beside Patroni's leader it migrates the database
and may start the journal; beside the standby it waits until the journal is there.  It
verifies the journal (a first start on this node takes the replicated journal's end as
its head), loads the library, rebuilds the games and listens, refusing every hall and
operator with ``standby``; it follows the journal its node receives.  Once Patroni says
its node leads it takes over (:func:`_replica_role`: the migrations, the library, the
journal followed to its end, the leadership taken with its cause, the games folded to
the last record) and only then schedules the configured games, arms the timers and
starts the daily report, the regulator's feed and the consultation, which the active
process alone runs.  When it loses the leadership it stops; its supervisor starts it
again, as the standby.

Nothing outside this module reads the configuration or chooses the reactor.
"""

from __future__ import annotations

import datetime
import faulthandler
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from twisted.application.internet import TimerService
from twisted.application.service import MultiService, Service
from twisted.internet import defer
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.internet.interfaces import IListeningPort
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from twisted.web.resource import Resource

from central_server import i18n, leadership, replica, store
from central_server.config import CentralConfig, ReplicaConfig, load_config
from central_server.consultation import CentralConsultation
from central_server.deliveries import JournalDeliveries
from central_server.daily_close import DayCloser
from central_server.domain.config import library_digest
from central_server.admission import Admission
from central_server.edge import CentralEndpoint
from central_server.module import SYSTEM, CentralModule
from central_server.programme import ProgrammeRunner
from central_server.domain.stops import HOLD_MS, RENEW_S
from central_server.stops import PlayGate, central_checks, hall_links
from central_server.terms import NOTICE_DAYS, PrizeTerms
from protocol.chain import ChainError
from protocol.regulator_feed import CENTRAL
from server_kit import boot, collector, pki
from server_kit.boot import StartRefused
from server_kit.clock import ClockWatch, JournalClock, schedules_monotonic
from server_kit.connections import ConnectionGuard
from server_kit.core import CommandCore, RunBlocking, thread_pool_runner
from server_kit.run_marker import RunMarker
from protocol.central_operator import OPERATOR_VERIFY
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedLinkService, ReceiverAddress
from server_kit.feed.reports import ReportOutbox
from server_kit.health import Monitor, monitor_site
from server_kit.db import database as kit
from server_kit.reports.daily import REPORTS_FOLDER
from server_kit.journal import table
from server_kit.journal.sql import Journal, read_head
from server_kit.keys import load_journal_key, public_pem
from server_kit import private
from server_kit.services import ThreadPoolService, WebService
from server_kit.storage import StorageWatch
from server_kit.settings import ConfigFile
from server_kit.web.consultation import BODY_BYTES as CONSULTATION_BODY_BYTES
from server_kit.web.consultation import STATIC as CONSULTATION_STATIC
from server_kit.web.consultation import consultation_resource
from server_kit.web.i18n import CatalogResource
from server_kit.web.http import NotFound, StaticFiles, secure_site

log = Logger()
#: What a refused start calls this server.
SERVER = "central server"
CONFIG_NAME = "central.toml"
#: The consultation's page, its script and its style.
STATIC = Path(__file__).parent / "static"


def _describe_config(path: Path) -> str:
    """``central.toml`` at ``path`` read as the central server's start reads it, in one line (``bingo config check``)."""
    central = load_config(path)
    database = make_url(central.database_url).get_backend_name()
    return f"a central server configuration: {central.central_id!r}, {len(central.halls)} halls, database {database}"


#: The central server's configuration file for ``bingo config check`` (the ``bingo.config`` entry point ``central``).
CONFIG_CHECK = ConfigFile("central", "central.toml", _describe_config)


def default_config_path() -> Path:
    """``$BINGO_HOME/central.toml`` (``var/central.toml`` without ``BINGO_HOME``)."""
    return Path(os.environ.get("BINGO_HOME", "var")) / CONFIG_NAME


def configuration(path: Path | None = None) -> CentralConfig:
    """The central server's configuration at ``path`` (default: :func:`default_config_path`), checked.

    The ``bingo central`` commands that work on a configured server (the operator's
    address, the audit export) read it through here, as the service does.
    """
    return load_config(path or default_config_path())


class CentralService(MultiService):
    """The central server's services; ``central`` holds the parts, for the CLI and the tests.

    Its run marker (:mod:`server_kit.run_marker`) is written when it starts and removed once
    every service has stopped: a start that finds it follows a crash (R92.5e, R95.1).
    """

    central: "CentralServer"

    def startService(self) -> None:
        if self.central.marker is not None:
            self.central.marker.write(self.central.core.now_ms())
        super().startService()

    def stopService(self) -> defer.Deferred[Any]:
        marker = self.central.marker

        def stopped(result: Any) -> Any:
            if marker is not None:
                marker.remove()  # a clean stop: every service, the writer among them, has stopped
            return result

        return defer.maybeDeferred(super().stopService).addCallback(stopped)


@dataclass
class CentralServer:
    """Every part of one running central server, as the composition root wired them."""

    config: CentralConfig
    engine: Engine
    journal: Journal
    core: CommandCore
    module: CentralModule
    endpoint: CentralEndpoint
    service: CentralService
    listener: "HallListener"
    terms: PrizeTerms  # the prize terms notified to the regulator (R93.11, R94.3)
    programme: ProgrammeRunner  # the games scheduled one after another, their carries chained (R88.5)
    closer: "DayCloser | None" = None  # the daily report written at each day's close (R95.4)
    fence: "leadership.Fence | None" = None  # the leadership epoch this process holds, guarding each commit
    role: "replica.ReplicaRole | None" = None  # one of two processes of a replicated central server
    gate: "PlayGate | None" = None  # no new game after a stop of play until a verification passes (R92.5e)
    marker: RunMarker | None = None  # the run marker of the central server's folder
    crashed: bool = False  # the run before this one did not stop cleanly
    #: The last moment the server before this start was known to lead (its last record, or a
    #: replicated holder's renewal), central clock.
    stopped_after_ms: int = 0
    monitor: Monitor | None = None  # /health, /ready and /metrics (server_kit/health.py)
    feed: "FeedLinkService | None" = None  # the journal and the reports to the regulator (R92.7, R95.4)


def stop_fenced(reactor: Any, error: leadership.Fenced) -> None:
    """Stop a fenced central server (on the reactor's thread): another process holds the leadership."""
    log.critical("{error}; another central server process took the leadership, so this one stops "
                 "(docs/replica.md, \"Leadership epoch and fencing\")", error=str(error))
    if reactor.running:
        reactor.stop()


def _utc(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def make_private(config: CentralConfig) -> None:
    """Folders 0700 and files 0600: the central server's folder (its database on SQLite, its
    reports, keys and journal head), its configuration (a replicated one holds the database
    owner's password), its PKI bundles and its journal key, wherever they are."""
    owned = [config.home, config.pki_dir, config.journal_key, config.journal_head,
             *kit.sqlite_files(config.database_url)]
    if config.source is not None:
        owned.append(config.source)
    if config.regulator is not None:
        owned.append(config.regulator.pki_dir)
    for path in owned:
        private.make_private(path)


def open_journal(journal: Journal, now_ms: int, central_id: str) -> int:
    """Verify the journal before anything reads it, or begin it if it is new (:func:`server_kit.boot.open_journal`:
    its head brought up to it if it lagged); the record count."""
    boot.open_journal(journal, now_ms, {"central": central_id, "actor": SYSTEM.to_dict()}, SERVER)
    return journal.last.seq if journal.last is not None else 0


def provision_library(config: CentralConfig, engine: Engine) -> dict[str, np.ndarray]:
    """The configured series of the central library: those missing are generated once."""
    library = store.load_series(engine)
    for series in config.series:
        known = library.get(series.label)
        if known is None:
            log.info("Generating series {label} of the central library: {n} cards", label=series.label, n=series.cards)
            library[series.label] = store.add_series(engine, series.label, series.cards)
        elif len(known) != series.cards:
            raise StartRefused(
                f"series {series.label} of the central library holds {len(known)} cards, the configuration says "
                f"{series.cards}; a series is never changed: give the new size a new label"
            )
    return library


class HallListener(Service):
    """The endpoint's port; once it listens, the games are scheduled and their timers armed."""

    def __init__(self, endpoint: Any, central: "CentralServer | None" = None) -> None:
        self.endpoint = endpoint
        self.central = central
        self.port: Any = None  # the IListeningPort, once listening
        self.failure: Any = None  # why it could not start serving, if it could not
        self.listening: defer.Deferred[IListeningPort] = defer.Deferred()

    @defer.inlineCallbacks
    def _start(self):  # type: ignore[no-untyped-def]
        assert self.central is not None
        central = self.central
        self.port = yield self.endpoint.listen(central.endpoint.factory())
        address: Any = self.port.getHost()
        log.info("Central server {id} listening for halls on {host}:{port} (mutual TLS, AMP)",
                 id=central.config.central_id, host=address.host, port=address.port)
        if central.role is not None:
            log.info("The central server beside {node} is the standby: it refuses halls until Patroni's leader is "
                     "its node", node=central.config.replica.node if central.config.replica else "?")
            yield central.role.active  # the games and timers are the active process's alone
        yield resume_play(central)  # after a stop of normal play: the games interrupted, play stopped (R92.5e)
        for plan in central.config.games:
            if plan.game_id in central.module.games:
                continue
            layouts = central.module.library[plan.settings["series_label"]]
            config = plan.config(library_digest(layouts))
            admitted = yield central.terms.admit(config)  # R93.11, R94.3: the regulator told first
            if not admitted.schedule:
                log.warn("Network game {game} is not scheduled: its prize percentages change, notified to the "
                         "regulator, and apply from {day} (R94.3: at least {days} days after the notice); start "
                         "the central server again from then", game=plan.game_id, days=NOTICE_DAYS,
                         day=_utc(admitted.applies_from_ms))
                continue
            if admitted.notified:
                log.info("Prize terms of network game {game} notified to the regulator", game=plan.game_id)
            yield central.module.schedule(config)
            log.info("Scheduled network game {game}", game=plan.game_id)
        central.module.start_timers()
        yield central.programme.start()
        return self.port

    def startService(self) -> None:
        super().startService()

        def failed(failure: Any) -> Any:
            self.failure = failure
            log.failure("The central server cannot serve", failure)
            from twisted.internet import reactor

            reactor.stop()  # type: ignore[attr-defined]
            return failure

        self._start().addErrback(failed).chainDeferred(self.listening)

    def stopService(self) -> defer.Deferred[None] | None:
        super().stopService()
        if self.central is not None:
            self.central.module.stop_timers()
            self.central.programme.stop()
            if self.central.endpoint.admission is not None:
                self.central.endpoint.admission.stop()  # what was read and not decided: the halls resend it
        if self.port is not None:
            return defer.maybeDeferred(self.port.stopListening)
        return None


class _Root(Resource):
    """Nothing but the consultation and its files: every other path is not found."""

    def getChild(self, path: bytes, request: Any) -> Resource:
        return NotFound()


def consultation_site(config: CentralConfig, journal: Journal, core: CommandCore, reactor: Any,
                      read: Any, guard: ConnectionGuard) -> WebService:
    """The regulator's read-only consultation (R95.3): ``/regulator/`` over HTTPS, a regulator
    certificate required at the handshake, the queries read off the reactor with ``read``."""
    assert config.consultation is not None
    consultation = CentralConsultation(journal.records, read)
    root = _Root()
    root.putChild(b"regulator", consultation_resource(core, consultation.answer, STATIC / "regulator.html",
                                                      "the central server"))
    root.putChild(b"static", StaticFiles(STATIC, CONSULTATION_STATIC))
    root.putChild(b"i18n", CatalogResource(i18n.CATALOGS, config.language, config.timezone, i18n.SETTINGS))
    tls = pki.server_tls_options(config.pki_dir, config.central_id, client_certificates=pki.ClientCertificates.required)
    endpoint = guard.endpoint(TCP4ServerEndpoint(reactor, config.consultation.port, interface=config.consultation.interface),
                              tls=tls)
    return WebService(endpoint, secure_site(root, max_body_bytes=CONSULTATION_BODY_BYTES))


def build_central(config: CentralConfig, reactor: Any, clock: Any = None,
                  monitor_port: int | None = None) -> CentralServer:
    """Build (but do not start) the central server described by ``config`` on ``reactor``.

    ``clock`` (default: the reactor) is what the games' times and timers are read from;
    tests give a ``task.Clock`` to run sale windows and ball intervals at once.  Records'
    times come from it through a :class:`~server_kit.clock.JournalClock` (the wall clock,
    never backwards; the timers the reactor's, on the monotonic clock).  With
    ``[replica]`` this waits (blocking, before the reactor runs) until the local node
    answers and holds the journal, or leads.  ``monitor_port``: /health, /ready and /metrics
    over HTTP on that loopback port (0: any free one; None: not served).
    """
    clock = JournalClock.of(clock if clock is not None else reactor)
    now_ms = clock.now_ms()
    marker = RunMarker(config.home)
    crashed = marker.left_behind()  # read before this run writes its own (R92.5e)
    if config.replica is None:
        # The database first: a start it refuses (a missing folder, a file that cannot be
        # written, a server that does not answer) has made nothing, not even the key.
        kit.check_sqlite_files(config.database_url)
        engine = store.open_database(config.database_url, create_folder=False)
        key = load_journal_key(config.journal_key, create=True)
        if engine.dialect.name == "sqlite":
            log.warn("The central server runs on SQLite ({url}): for a single-node demo only; production runs "
                     "PostgreSQL with a synchronous standby (docs/central-server.md)", url=config.database_url)
        journal = Journal(engine, key, head=config.journal_head)
        refused_leaves_marker(marker, clock, lambda: open_journal(journal, now_ms, config.central_id))
        library = provision_library(config, engine)
        records = None
    else:
        key = load_journal_key(config.journal_key, create=True)
        engine, journal, _, library, records = open_replica(config, config.replica, key, now_ms)
    make_private(config)
    tls = pki.server_tls_options(config.pki_dir, config.central_id, client_certificates=pki.ClientCertificates.required)

    service = CentralService()
    # Every listening port behind one guard: deadlines, per-address and per-certificate bounds,
    # descriptors kept for the database and the journal, revoked certificates cut at once.
    guard = ConnectionGuard(reactor, config.connections, pki_dir=config.pki_dir)
    guard.setServiceParent(service)
    writer = ThreadPool(minthreads=1, maxthreads=1, name="central-db-writer")
    ThreadPoolService(writer).setServiceParent(service)
    core = CommandCore(journal, clock, thread_pool_runner(reactor, writer))
    if journal.last is not None:
        clock.continue_from(journal.last.time_ms)
    # While a commit cannot be made (the database away, a full disk) the core refuses commands and
    # the watch tries the storage again, on the writer, until it is back (docs/crash-recovery.md).
    StorageWatch(core, clock, core.run_blocking, journal.probe).setServiceParent(service)
    module = CentralModule(core, library, clock, opens_after={g.game_id: g.opens_after_ms for g in config.games},
                           annex_pairs=config.annex_pairs)
    terms = PrizeTerms(core)
    programme = ProgrammeRunner(core, module, terms, clock, config.programme, config.timezone)
    deliveries = JournalDeliveries(core)  # the reports the regulator acknowledged, kept across a failover
    recovered = core.recover(records=records)
    gate = play_gate(config, core, module, journal, engine, read_pool(reactor, service))
    if crashed and config.replica is None:
        gate.crashed_after_seq = core.seq  # no sale opens from now on, before the interruption is journaled
    stopped_after_ms = journal.last.time_ms if journal.last is not None else now_ms
    fence = None
    if config.replica is None:
        # Every check of the start passed: only now is the leadership taken (taking it fences the
        # process that held it), before anything listens or a timer runs. Whatever that process
        # committed since the journal was verified is verified and folded here too.
        fence = leadership.lead(journal, leadership.holder_name(config.central_id), core.now_ms(), SYSTEM,
                                on_fenced=lambda error: reactor.callFromThread(stop_fenced, reactor, error))
        recovered += core.recover(after=core.seq)
        core.epoch = fence.epoch
        log.info("Took the central leadership: epoch {epoch}; every record from now on carries it", epoch=fence.epoch)
    log.info("Recovered {n} journal records: {games} network game(s)", n=recovered, games=len(module.games))
    # Ready once the journal is verified and rebuilt, the halls' port listens and the games are
    # scheduled, while the storage takes commits, and (replicated) while this process acts.
    monitor = Monitor("central")
    monitor.require_flag("journal", "the journal is not verified and replayed yet")()
    monitor.watch_core(core)
    monitor.watch_connections(guard)
    admission = Admission(lambda name, arguments, hall, received_ms: module.hall_command(
        name, arguments, hall, received_ms=received_ms), clock, reactor)
    module.admission = admission
    endpoint = CentralEndpoint(module, config.central_id, config.halls, admission)
    listener = HallListener(guard.endpoint(TCP4ServerEndpoint(reactor, config.port, interface=config.interface), tls=tls))
    listener.setServiceParent(service)
    listener.listening.addCallback(monitor.require_flag("serving", "the server is starting: it does not serve halls yet"))
    # What reads the whole journal off the reactor, beside the writer: the daily report at each
    # day's close (R95.4, R83.5), rendered and signed, the regulator's consultation (R95.3), and
    # a standby's following of the replicated journal.
    reading = ThreadPool(minthreads=0, maxthreads=1, name="central-db-reader")
    ThreadPoolService(reading).setServiceParent(service)
    read = thread_pool_runner(reactor, reading)
    # What only the active process runs: the daily report, the regulator's feed and consultation.
    active = MultiService()
    ClockWatch(core, clock, SYSTEM).setServiceParent(active)  # a step of the wall clock is a fault, journaled
    closer = DayCloser(journal, config.home, config.central_id, config.timezone, clock, read,
                       decided_seq=lambda: core.seq, reported=deliveries.days,
                       language=config.language)
    closer.setServiceParent(active)
    feed = None
    if config.regulator is not None:
        feeding = config.regulator
        cursor = FeedCursor(journal, CENTRAL, public_pem(key).decode())
        feed = FeedLinkService(reactor, cursor, ReceiverAddress(feeding.host, feeding.port, feeding.pki_dir,
                                                                config.central_id, feeding.server_name),
                               ReportOutbox(config.home / REPORTS_FOLDER, CENTRAL, deliveries), read)
        feed.setServiceParent(active)
        core.observers.append(lambda record: feed.wake())  # each commit is sent at once
        closer.listeners.append(feed.report_written)  # the day's report, sent once written
        log.info("Regulator's feed: sending the journal to {host}:{port} as central", host=feeding.host,
                 port=feeding.port)
    if config.consultation is not None:
        consultation_site(config, journal, core, reactor, read, guard).setServiceParent(active)
        log.info("The regulator's consultation on {interface}:{port} (HTTPS, regulator certificates only)",
                 interface=config.consultation.interface, port=config.consultation.port)
    central = CentralServer(config, engine, journal, core, module, endpoint, service, listener, terms, programme,
                            closer, fence, gate=gate, marker=marker, crashed=crashed, stopped_after_ms=stopped_after_ms,
                            monitor=monitor, feed=feed)
    gate.links = lambda at_ms: hall_links(endpoint.links, config.halls, at_ms)
    monitor.require("role", lambda: None if central.role is None or central.role.acting() else
                    "this process is the standby: the other node's process serves the halls")
    if monitor_port is not None:
        monitoring = monitor_site(monitor, reactor, monitor_port)
        monitoring.setServiceParent(service)
        monitoring.listening.addCallbacks(
            lambda port: log.info("Monitoring at http://127.0.0.1:{port}/ready (and /health, /metrics)",
                                  port=port.getHost().port),
            lambda failure: log.error("The monitoring port cannot listen: {why}; the central server serves without "
                                      "it", why=failure.getErrorMessage()))
    if config.replica is None:
        active.setServiceParent(service)
    else:
        renewing = TimerService(RENEW_S, renew_leadership, central, clock)  # the active process's sign of life
        renewing.setServiceParent(active)
        central.role = _replica_role(central, config.replica, reactor, clock, read, active)
        central.role.setServiceParent(service)
        endpoint.acting = central.role.acting
        endpoint.identity = lambda: {"node": config.replica.node if config.replica else None, "epoch": core.epoch}
        if config.replica.drill:
            drill = replica.DrillPoint()
            endpoint.before_push = drill
            reactor.callWhenRunning(drill.install)
    listener.central = central
    service.central = central
    return central


#: While a replicated process waits for its node, how often it asks, and how often it says so.
NODE_WAIT_S = 1.0
NODE_WAIT_LOG_S = 15.0


def wait_for_node(config: CentralConfig, replica_config: ReplicaConfig,
                  timeout_s: float | None = None) -> tuple[Engine, bool]:
    """The local node's database once it can be used, and whether the node leads.

    Beside Patroni's leader the migrations are applied (the journal may be new); beside a
    standby the process waits until its replica holds the migrated schema and a journal.
    Blocking: the composition root runs it before the reactor; ``timeout_s`` (tests)
    bounds it with a :class:`StartRefused`.
    """
    started = time.monotonic()
    said = 0.0
    why = "not asked yet"
    context = replica.patroni_context(config.pki_dir, config.central_id, replica_config.patroni)
    while True:
        leads = replica.patroni_leads(replica_config.patroni, context)
        try:
            if leads:
                return store.open_database(config.database_url), True
            engine = kit.create(config.database_url)
            try:
                if kit.is_current(engine, store.MIGRATIONS) and table.last_record(engine) is not None:
                    return engine, False
                why = "its database holds no central journal yet"
            except Exception as error:
                why = str(error).strip().splitlines()[0]
            engine.dispose()
        except kit.DatabaseError as error:
            why = str(error)
        if leads is None:
            why = f"its Patroni at {replica_config.patroni} does not answer"
        waited = time.monotonic() - started
        if timeout_s is not None and waited > timeout_s:
            raise StartRefused(f"the local node {replica_config.node} was not ready in {timeout_s:.0f} s: {why}")
        if waited - said >= NODE_WAIT_LOG_S or not said:
            log.info("Waiting for the local node {node}: {why}", node=replica_config.node, why=why)
            said = waited or 0.001
        time.sleep(NODE_WAIT_S)


def open_replica(config: CentralConfig, replica_config: ReplicaConfig, key: Any, now_ms: int,
                 timeout_s: float | None = None) -> tuple[Engine, Journal, int, dict[str, np.ndarray], list[Any]]:
    """The local node's database, its journal verified, the library and the journal's records.

    Patroni may restart the node meanwhile (a node rejoining is rewound, then started
    as a standby): a database that goes away half-way is waited for again, and read again.
    """
    while True:
        engine, leads = wait_for_node(config, replica_config, timeout_s)
        try:
            journal = Journal(engine, key, head=config.journal_head)
            if journal.is_new or read_head(journal.head) is not None:
                verified = open_journal(journal, now_ms, config.central_id)
            else:
                verified = _adopted(journal)
            library = provision_library(config, engine) if leads else _library_held(config, engine)
            records = [record for record in journal.records() if record.seq <= verified]
            return engine, journal, verified, library, records
        except DBAPIError as error:
            engine.dispose()
            log.info("The local node {node} went away while the journal was read ({error}); waiting for it again",
                     node=replica_config.node, error=str(error.orig or error).strip().splitlines()[0])
            time.sleep(NODE_WAIT_S)


def _adopted(journal: Journal) -> int:
    """A first start beside a node cloned from the other: the replicated journal verified, its end the head."""
    try:
        verified = replica.follow_journal(journal)
    except ChainError as error:
        raise StartRefused(f"the replicated journal does not verify: {error}; the central server does not serve "
                           "on a broken journal (both processes of a replicated central server sign with the same "
                           "journal key)") from None
    log.info("First start beside this node: the replicated journal's end, record {seq}, is this process's head",
             seq=verified)
    return verified


def _library_held(config: CentralConfig, engine: Engine) -> dict[str, np.ndarray]:
    """The series of the library the standby's replica holds (the active process generates the others)."""
    library = store.load_series(engine)
    missing = [series.label for series in config.series if series.label not in library]
    if missing:
        log.info("Series {labels} of the central library are not on this node yet; the active process makes them",
                 labels=", ".join(missing))
    return library


def _replica_role(central: CentralServer, replica_config: ReplicaConfig, reactor: Any, clock: JournalClock,
                  read: Any, active: MultiService) -> "replica.ReplicaRole":
    """The role of one process of a replicated central server, wired to this server's parts."""
    config, engine, journal, core, module = central.config, central.engine, central.journal, central.core, central.module
    write = core.run_blocking
    holder = replica.holder_name(config.central_id, replica_config.node, socket.gethostname(), os.getpid())

    def caught_up(library: dict[str, np.ndarray], records: list[Any]) -> None:
        module.library.update(library)
        core.recover(records=records)

    def unfolded() -> list[Any]:
        """The records after the games' last one, up to the journal's verified end."""
        last = journal.last.seq if journal.last is not None else 0
        return [record for record in journal.records(core.seq) if record.seq <= last]

    @defer.inlineCallbacks
    def follow() -> Any:
        def blocking() -> tuple[dict[str, np.ndarray], list[Any]]:
            missing = any(series.label not in module.library for series in config.series)
            library = store.load_series(engine) if missing else {}
            replica.follow_journal(journal)
            return library, unfolded()

        library, records = yield read(blocking)
        caught_up(library, records)

    def on_fenced(error: leadership.Fenced) -> None:
        reactor.callFromThread(role.fenced, str(error))

    @defer.inlineCallbacks
    def take_over() -> Any:
        now_ms = core.now_ms()

        def blocking() -> tuple[dict[str, np.ndarray], "leadership.Fence", str, list[Any]]:
            kit.upgrade(engine, store.MIGRATIONS)  # nothing to do unless this release brought a migration
            library = provision_library(config, engine)
            replica.follow_journal(journal)
            cause = replica.cause_of(leadership.held(engine)[1], replica_config.node)
            alive = leadership.last_alive(engine)
            last = journal.last
            central.stopped_after_ms = max(alive or 0, last.time_ms if last is not None else 0)
            fence = leadership.lead(journal, holder, now_ms, SYSTEM, cause=cause, on_fenced=on_fenced,
                                    acting=role.may_commit)
            return library, fence, cause, unfolded()

        library, fence, cause, records = yield write(blocking)
        caught_up(library, records)
        if journal.last is not None:
            clock.continue_from(journal.last.time_ms)  # this node's wall clock may read before the last record
        central.fence = fence
        core.epoch = fence.epoch
        log.info("Took the central leadership beside {node} ({cause}): epoch {epoch}; {games} network game(s) "
                 "rebuilt from the replicated journal", node=replica_config.node, cause=cause, epoch=fence.epoch,
                 games=len(module.games))

    def serve() -> None:
        active.setServiceParent(central.service)

    def stop(why: str) -> None:
        module.stop_timers()
        if reactor.running:
            reactor.stop()

    # Patroni is asked on a thread of its own: the reader may be busy with a day's report.
    asking = ThreadPool(minthreads=0, maxthreads=1, name="central-patroni")
    ThreadPoolService(asking).setServiceParent(central.service)
    probe = replica.PatroniProbe(replica_config.patroni, thread_pool_runner(reactor, asking),
                                 replica.patroni_context(config.pki_dir, config.central_id, replica_config.patroni))
    # The role's lease measures elapsed time: on the timers' clock (monotonic), not the records'.
    role = replica.ReplicaRole(replica_config.node, probe, clock.timers, take_over=take_over, follow=follow,
                               serve=serve, stop=stop)
    return role


def refused_leaves_marker(marker: RunMarker, clock: Any, verify: Any) -> int:
    """``verify`` the journal; a journal that fails its check leaves the run marker, so the start after
    it is one after a crash (R92.5e: "a journal that fails its check" interrupts play)."""
    try:
        verified: int = verify()
        return verified
    except StartRefused:
        marker.write(clock.now_ms())
        raise


def read_pool(reactor: Any, service: MultiService) -> RunBlocking:
    """A worker of its own for the verification's checks, which read the whole journal."""
    pool = ThreadPool(minthreads=0, maxthreads=1, name="central-verification")
    ThreadPoolService(pool).setServiceParent(service)
    return thread_pool_runner(reactor, pool)


def play_gate(config: CentralConfig, core: CommandCore, module: CentralModule, journal: Journal, engine: Engine,
              run_checks: RunBlocking) -> PlayGate:
    """No network game's sale opens after a stop of normal play until the operator's verification passes
    (R92.5e, R95.1): the gate on the core, the module's sales asking it, the operator's command."""
    clock = core.clock  # the JournalClock build_central gave the core
    assert isinstance(clock, JournalClock)
    gate = PlayGate(core, run_checks, lambda now_ms: central_checks(journal, engine, module.library, clock.wall_ms),
                    lambda now_ms: ({}, ()))
    module.sale_checks.append(gate.refusal)
    gate.opened.append(lambda: module.start_timers() if module.timers_running else None)
    module.operator_commands[OPERATOR_VERIFY.name] = gate.verify
    return gate


def resume_play(central: CentralServer) -> defer.Deferred[Any]:
    """Once this process leads and before any timer runs: judge the start (R92.5e, R95.1)."""
    assert central.gate is not None
    replicated = central.config.replica
    return central.gate.resume(central.module, replicated=replicated is not None, crashed=central.crashed,
                               stopped_after_ms=central.stopped_after_ms,
                               hold_ms=replicated.hold_ms if replicated is not None else HOLD_MS)


def renew_leadership(central: CentralServer, clock: Any) -> defer.Deferred[Any] | None:
    """The active process of a replicated central server still leads: its sign of life in the leadership row."""
    fence = central.fence
    if fence is None or fence.fenced is not None or (central.role is not None and not central.role.may_commit()):
        return None
    renewing = central.core.run_blocking(leadership.renew, central.engine, fence.epoch, clock.now_ms())
    return renewing.addErrback(lambda failure: log.warn("The leadership's sign of life was not renewed: {why}",
                                                          why=failure.getErrorMessage()))


def makeService(options: Mapping[str, Any]) -> CentralService:
    """The ``twist bingo-central`` service: the central server of ``options["config"]``."""
    from twisted.internet import reactor

    if not schedules_monotonic(reactor):
        log.warn("This reactor's timers run on the wall clock, which a step holds up: run `bingo central serve` "
                 "or `twist --reactor=bingo bingo-central` (docs/server-kit.md, \"Clocks\")")

    faulthandler.enable()  # a fatal signal (SIGBUS, SIGSEGV) leaves its traceback in the log
    path = Path(options.get("config") or default_config_path())
    # Whatever the process writes (its database, reports, keys, head) is its user's alone.
    os.umask(0o077)
    monitor_port = options.get("monitor-port")  # the option as twist names it
    central = build_central(load_config(path), reactor, monitor_port=int(monitor_port) if monitor_port is not None else None)
    collector.settle()  # the games and the library are built: the collector leaves them be
    return central.service

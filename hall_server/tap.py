"""The hall server's composition root: the one place that builds the process.

:func:`makeService` reads the configuration and returns a :class:`MultiService`:

1. the database (migrations applied) and its single writer thread pool, run as a
   service so it starts with the process and drains before it stops;
2. the journal with its Ed25519 signing key, **verified** before anything else reads
   it: every record's hash and link, the signatures after the newest trusted
   checkpoint (every one when there is none) and the signed head; a journal that fails
   its check stops the start with one line naming the record (:class:`StartRefused`);
   then the hall core over both;
3. the modules (session, ledger, admission, cashier, the traditional game), the
   console's read model, then **recovery**: every module's state is restored from the
   checkpoint and the records after it folded in (or the whole journal replayed)
   before anything listens; checkpoints are written every
   :data:`CHECKPOINT_EVERY_RECORDS` records or ``[journal] checkpoint_every_seconds``
   seconds and at a clean stop (``server_kit/journal/checkpoints.py``);
4. with ``[draw] source = "blower"``, the blower drivers on their serial ports
   (``hall_server/blower/hall.py``: ball source, faults, reserve switch), told the
   journal's balls of the game in progress before the ports open;
5. with ``[regulator]`` or ``[central]``, the guard against a rolled-back folder: what
   the receiver and the central server hold of the journal is checked at each
   connection, and the hall stops when it is more (:mod:`server_kit.journal.rollback`);
6. the web site (caller console, information board, command channel, WebSockets)
   on TLS from the hall's PKI (TLS 1.2 AEAD or 1.3; client certificates requested and
   checked, required at the handshake with ``[tls] require_client_certificate``; the
   terminals' endpoint admits terminal certificates only), or plain TCP when
   ``[tls] enabled = false``.

First start on the embedded default makes what is missing: the configuration with
staff logins (:func:`hall_server.config.ensure_config`), the journal key and the
journal itself (its opening record, written only when the database holds no record
and no head exists), a local certificate authority *beside* the server's PKI folder
(``operator-ca/``: its key belongs to the operator, and every start says so until it
is moved), the server's certificate, one terminal's certificate bundle
(``terminal-certs/terminal-1/``), and a generated card set with the configured series.
Nothing is ever overwritten.  Every start makes the hall's folder and what the server
keeps in it private to the server's user (folders 0700, files 0600).  Nothing outside
this module reads the configuration or chooses the reactor.
"""

from __future__ import annotations

import faulthandler
import functools
import hashlib
import os
import shutil
import socket
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from twisted.application.service import MultiService
from twisted.internet import defer
from twisted.internet.threads import blockingCallFromThread, deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from twisted.web.server import Site

from hall_server.blower import ApprovedFirmware, BlowerDriver, blower_service
from hall_server.blower.hall import HallBlowers
from hall_server.config import ConfigError, HallConfig, RegulatorFeedConfig, ensure_config
from hall_server.hall.admission import AdmissionModule, StaffIdentity, local_date
from hall_server.hall.cashier import CashierModule
from hall_server.hall.catalog import StoreCardCatalog
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.lookups import LookupModule, series_on_sale
from hall_server.hall.notices import OpeningHoursModule
from hall_server.hall.pins import PinGuard, pin_matches_or_none
from hall_server.hall.roles import SYSTEM
from hall_server.hall.responsible import ResponsiblePlayModule
from hall_server.hall.session import SessionModule
from hall_server.hall.videobingo import MachineConfig, VbConfigError, VideoBingoConfig, VideoBingoModule, load_machines
from hall_server.hall.virtual import VirtualModule
from hall_server.annex.link import AnnexLink
from hall_server.annex.module import AnnexModule
from hall_server.annex.terminals import JointTerminalSales
from hall_server.i18n import said
from hall_server.network.link import CentralAddress, Endpoint, central_link
from hall_server.network.module import NetworkModule
from hall_server.network.relay import NetworkRelay
from hall_server.reports.consultation import Consultation
from hall_server.reports.daily_files import DailyReporter
from hall_server.store import cards as card_store
from hall_server.store.database import open_database
from hall_server.terminal_gateway.gateway import TerminalGateway
from hall_server.terminal_gateway.library import load_virtual_library
from hall_server.terminal_gateway.machines import MachineGateway, MachineScreenResource
from hall_server.terminal_gateway.resource import KioskResource
from hall_server.restart import CrashRestart, Sellers
from hall_server.verification import check_library, check_terminals, verify_system
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.consultation import consultation_resource
from hall_server.web import demo_terminals
from hall_server.web.demo_session import DemoSession
from hall_server.web.live import LiveHub
from hall_server.web.minutes import MinutesDesk
from hall_server.voice.clips import VoiceClips
from hall_server.web.site import build_site
from hall_server.web.view import HallView
from protocol.balls import RandomBallGenerator
from protocol.cards import CARDS_PER_STRIP
from protocol.errors import N_, Phrase, one_or_joined
from protocol.library import build_distinct_strips
from protocol.regulator_feed import hall_sender
from protocol.videobingo.errors import PaytableError
from protocol.videobingo.paytable import MAX_PAYTABLE_BYTES, load_paytable
from server_kit import collector, pki
from server_kit.connections import ConnectionGuard
from server_kit.clock import ClockWatch, JournalClock, schedules_monotonic
from server_kit.received import ReceiptServerEndpoint
from server_kit.boot import StartRefused, open_journal, recover
from server_kit.core import Actor, CommandCore, thread_pool_runner
from server_kit.db.database import check_sqlite_files
from server_kit.db.faults import describe_os_error
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedLinkService, ReceiverAddress
from server_kit.feed.reports import ReportOutbox
from server_kit.health import Monitor
from server_kit.reports.daily import REPORTS_FOLDER
from server_kit.journal.checkpoints import CheckpointService, CheckpointStore
from server_kit.journal.rollback import RollbackGuard
from server_kit.journal.sql import Journal, head_path
from server_kit.keys import card_key_path, journal_key_path, load_journal_key, public_pem, report_cert_path
from server_kit.release import SOFTWARE
from server_kit.services import ThreadPoolService, WebService
from server_kit import private
from server_kit.db.database import sqlite_files
from server_kit.storage import StorageWatch
from server_kit.verification import write_manifest
from server_kit.web.channel import CommandChannel

log = Logger()
DEFAULT_CONFIG = Path("var") / "hall.toml"
#: What a refused start calls this server, and what it advises for a journal that does not verify.
SERVER = "hall server"
JOURNAL_ADVICE = "bingo journal verify; docs/journal.md"
#: The local certificate authority a first start creates, beside the server's PKI folder.
OPERATOR_CA = "operator-ca"
#: The terminal whose certificate bundle a first start writes, under ``terminal-certs/``.
FIRST_TERMINAL = "terminal-1"
#: The demo's video bingo machine (one station), when hall.toml has no ``[videobingo]``.
DEMO_MACHINE = "vb-1"
DEMO_PAYTABLE = Path(__file__).resolve().parents[1] / "protocol" / "videobingo" / "paytables" / "vb-classic-3x5.json"
#: A checkpoint of the hall's state is written after this many records, or after
#: ``[journal] checkpoint_every_seconds`` with records since the last one, and at a clean stop.
CHECKPOINT_EVERY_RECORDS = 50_000
#: The free space a start asks of each disk it writes to (keys, certificates, the card set,
#: the first records): below it the start is refused before it creates anything.
START_FREE_BYTES = 16 * 1024 * 1024


class HallService(MultiService):
    """The hall's services; ``hall`` holds the parts, for the CLI and the tests.

    Its run marker (:class:`~hall_server.restart.CrashRestart`) is written when it starts and
    removed once every service has stopped: a start that finds it follows a crash (R92.5e).
    """

    hall: "HallServer"
    restart: CrashRestart | None = None

    def startService(self) -> None:
        if self.restart is not None:
            self.restart.started(self.hall.core.now_ms())
        super().startService()

    def stopService(self) -> defer.Deferred[Any]:
        stopping = defer.maybeDeferred(super().stopService)
        restart = self.restart

        def stopped(result: Any) -> Any:
            if restart is not None:
                restart.stopped()  # a clean stop: every service, the writer among them, has stopped
            return result

        return stopping.addCallback(stopped)


@dataclass
class HallServer:
    """Every part of one running hall, as the composition root wired them."""

    config: HallConfig
    core: CommandCore
    view: HallView
    hub: LiveHub
    channel: CommandChannel
    sign_ins: SignIns
    site: Site
    service: HallService
    web: WebService
    session: SessionModule
    ledger: LedgerModule
    admission: AdmissionModule
    cashier: CashierModule
    games: GamesModule
    virtual: VirtualModule | None = None
    gateway: TerminalGateway | None = None
    blowers: HallBlowers | None = None
    sign_in_pool: ThreadPool | None = None
    checkpoints: CheckpointService | None = None
    #: The record of the checkpoint the start restored (0: the whole journal was replayed).
    recovered_from: int = 0
    #: The network games and the link to the central server, with ``[central]``.
    network: NetworkModule | None = None
    relay: NetworkRelay | None = None
    #: The video bingo machines, with ``[videobingo]``.
    videobingo: VideoBingoModule | None = None
    #: The records' time and the timers (server_kit/clock.py); the core reads the same.
    clock: JournalClock | None = None
    #: /health, /ready and /metrics (server_kit/health.py).
    monitor: Monitor | None = None


def provision(config: HallConfig) -> None:
    """Make what a first start needs and lacks: PKI, release manifest (never overwriting)."""
    provision_release(config)
    if config.tls.enabled:
        provision_pki(config)
    else:
        log.warn("TLS is off ([tls] enabled = false): nothing is encrypted and terminals are known by their "
                 "token alone; use this on a test bench only")


def operator_ca_dir(config: HallConfig) -> Path:
    return config.home / OPERATOR_CA


def terminal_bundle_dir(config: HallConfig, name: str = FIRST_TERMINAL) -> Path:
    return config.home / "terminal-certs" / name


def provision_pki(config: HallConfig) -> None:
    """The server's certificate in its PKI folder; on a first start, from a local authority.

    The authority's key never enters the server's folder: a first start creates it in
    ``operator-ca/`` beside it, copies out what the server needs (``ca.pem``,
    ``crl.pem``, the server's certificate and key) and one terminal's bundle, and every
    start warns while a CA key is on this machine.
    """
    tls = config.tls
    served = pki.PkiFolder(tls.pki_dir)
    operator = pki.PkiFolder(operator_ca_dir(config))
    if not served.cert(tls.server_name).exists():
        created = False
        if not operator.ca_key.exists():
            if served.ca_cert.exists() or operator.ca_cert.exists():
                raise StartRefused(
                    f"there is no server certificate {tls.server_name} in {tls.pki_dir}: issue it on the operator's "
                    f"machine (`bingo pki issue server {tls.server_name} --host ...`) and copy it here (docs/pki.md)"
                )
            log.info("Creating a local certificate authority in {dir}", dir=str(operator.root))
            pki.init_authority(operator.root, config.name)
            created = True
        log.info("Issuing the server certificate {name}", name=tls.server_name)
        pki.issue_certificate(operator.root, "server", tls.server_name)
        pki.export_bundle(operator.root, tls.server_name, served.root)
        if created:
            pki.issue_certificate(operator.root, "terminal", FIRST_TERMINAL)
            bundle = pki.export_bundle(operator.root, FIRST_TERMINAL, terminal_bundle_dir(config))
            log.info(
                "Terminal certificate {name} written to {dir}: copy it to the kiosk, and enrol that terminal "
                "as {name}; issue more with `bingo pki issue terminal NAME --dir {ca}` (docs/pki.md)",
                name=FIRST_TERMINAL, dir=str(bundle.root), ca=str(operator.root),
            )
    if operator.ca_key.exists():
        provision_report_signing(config, operator)
    for key in (operator.ca_key, served.ca_key):
        if key.exists():
            log.warn(
                "THE CERTIFICATE AUTHORITY'S PRIVATE KEY IS ON THIS SERVER: {key}. Whoever holds it can issue "
                "certificates every hall server accepts. Move the folder {dir} to the operator's offline machine "
                "(docs/pki.md) and keep only ca.pem, crl.pem and the server's own certificate here.",
                key=str(key), dir=str(key.parent),
            )


def provision_report_signing(config: HallConfig, operator: pki.PkiFolder) -> None:
    """With the local authority of a first start, the hall's report-signing certificate in ``keys/``
    (docs/reports.md): its daily reports are signed from the first session's close."""
    if report_cert_path(config.home).exists():
        return
    name = f"{config.tls.server_name}-reports"
    if not operator.cert(name).exists():
        log.info("Issuing the report-signing certificate {name}", name=name)
        pki.issue_certificate(operator.root, "report-signing", name)
    pki.install_report_signing(operator.root, name, config.home)


def make_private(config: HallConfig) -> None:
    """Folders 0700 and files 0600: the configuration (staff hashes), the database (PIN
    hashes, identity documents), the journal head, the keys, the PKI and its bundles."""
    owned = [config.home, config.home / "keys", head_path(config.home), operator_ca_dir(config),
             config.home / "terminal-certs", release_manifest(config)]
    if config.source is not None:
        owned.append(config.source)
    if config.tls.enabled:
        owned.append(config.tls.pki_dir)
    owned += sqlite_files(config.database_url)
    if config.home.exists():
        config.home.chmod(0o700)
    for path in owned:
        private.make_private(path)


def release_fingerprint(config: HallConfig) -> str:
    """What a checkpoint is bound to besides the chain: the installed release (its manifest's hash)."""
    try:
        return hashlib.sha256(release_manifest(config).read_bytes()).hexdigest()
    except FileNotFoundError:
        return "no release manifest"


def release_manifest(config: HallConfig) -> Path:
    return config.home / "release-manifest.json"


def provision_release(config: HallConfig) -> None:
    """On a first start the installed files become the release the verification checks."""
    manifest = release_manifest(config)
    if not manifest.exists():
        count = write_manifest(manifest)
        log.info("Recorded the release manifest of {n} installed files in {path}", n=count, path=str(manifest))


def provision_cards(config: HallConfig, engine: Any) -> None:
    """The configured card set (generated if missing and allowed) and its series."""
    sets = {s.name: s for s in card_store.list_sets(engine)}
    if config.card_set not in sets and config.generate_strips and config.series:
        log.info(
            "Generating card set {name}: {n} strips of {k} cards",
            name=config.card_set, n=config.generate_strips, k=CARDS_PER_STRIP,
        )
        cells = build_distinct_strips(config.generate_strips, card_store.registered_prints(engine))
        labels = [str(k // CARDS_PER_STRIP + 1) for k in range(len(cells))]
        card_store.add_card_set(engine, config.card_set, cells, labels, "generated")
    known = {s.number for card_set in card_store.list_sets(engine) for s in card_set.series}
    for series in config.series:
        if series.number not in known:
            card_store.add_series(engine, config.card_set, series.number, series.face_value_cents, series.card_count)


def _existing(path: Path) -> Path:
    """``path`` or its nearest folder that exists (where a file to be made would go)."""
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def preflight(config: HallConfig) -> None:
    """Check what a start can check before it creates anything; :class:`StartRefused` saying what to do.

    The database's folder must exist when ``[database] url`` names one (a typed folder is
    never made); its files and the hall's folder must be writable, none of them immutable
    (SQLite maps its ``-shm`` file: writing through the mapping of an immutable file ends
    the process with SIGBUS), and each disk must have :data:`START_FREE_BYTES` free; the
    blower link's key file and the video bingo paytables must read.
    """
    folders = [_existing(config.home)]
    check_sqlite_files(config.database_url)
    folders += [database.parent for database in sqlite_files(config.database_url)[:1]]
    for folder in folders:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise StartRefused(f"{folder} cannot be written by this user: the hall keeps its files there")
        free = shutil.disk_usage(folder).free
        if free < START_FREE_BYTES:
            raise StartRefused(f"the disk holding {folder} is full ({free // 1024} KB free; a start needs "
                               f"{START_FREE_BYTES // 2**20} MB): free space on it and start again")
    if config.draw.blower:
        blower_link_key(config)
    if config.videobingo is not None:
        load_videobingo(config)


class CreatedByStart:
    """What a start creates before its journal holds a record, removed again if the start is refused.

    The paths under the hall's folder, its PKI folder and the SQLite database's files that
    did not exist when the start began.  Once the journal holds its first record the
    start's files are the journal's and stay.
    """

    def __init__(self, config: HallConfig) -> None:
        self.roots = [config.home, config.tls.pki_dir, operator_ca_dir(config), *sqlite_files(config.database_url)]
        self.before = {path for root in self.roots for path in self._paths(root)}

    @staticmethod
    def _paths(root: Path) -> list[Path]:
        if not root.exists() and not root.is_symlink():
            return []
        if root.is_dir() and not root.is_symlink():
            return [root, *root.rglob("*")]
        return [root]

    def remove(self) -> None:
        made = sorted({path for root in self.roots for path in self._paths(root)} - self.before,
                      key=lambda p: len(p.parts), reverse=True)
        for path in made:
            try:
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                else:
                    path.unlink()
            except OSError as error:
                log.warn("The refused start could not remove {path}, which it made: {error}", path=str(path),
                         error=str(error))
        if made:
            log.info("The refused start removed the {n} files and folders it had made", n=len(made))


def build_hall(config: HallConfig, reactor: Any) -> HallServer:
    """Build (but do not start) the hall described by ``config`` on ``reactor``.

    Raises :class:`StartRefused` (or another :class:`DomainError`) with one line saying
    why when the hall cannot serve: a journal that does not verify, unusable credentials.
    What can be checked is checked first (:func:`preflight`), and what a refused start
    made before its journal held a record is removed (:class:`CreatedByStart`).
    """
    preflight(config)
    created = CreatedByStart(config)
    restart = CrashRestart(config.home)  # read before this run's marker is written (R92.5e)
    # Records are stamped by the wall clock, never backwards; timers run on the reactor's
    # monotonic clock (server_kit/clock.py).
    clock = JournalClock.of(reactor)
    journal: Journal | None = None
    try:
        provision(config)
        engine = open_database(config.database_url, create_folder=False)
        key = load_journal_key(journal_key_path(config.home), create=True)
        journal = Journal(engine, key, head=head_path(config.home))
        checkpoints = CheckpointStore(config.home / "checkpoints", key, release_fingerprint(config))
        checkpoint = open_journal(journal, clock.now_ms(), {"hall": config.name, "actor": SYSTEM.to_dict()}, SERVER,
                                  JOURNAL_ADVICE, checkpoints)
    except BaseException as error:
        if journal is None or journal.last is None:  # a journal with a record keeps its key and head
            created.remove()
        if isinstance(error, OSError):
            raise StartRefused(describe_os_error(error, config.home)) from None
        raise
    provision_cards(config, engine)
    make_private(config)
    service = HallService()
    # /ready answers 200 once the journal is verified and rebuilt and the port serves, and
    # while the storage takes commits; /metrics counts what the hall does (docs/deploy.md).
    monitor = Monitor("hall")
    journal_verified = monitor.require_flag("journal", "the journal is not verified and replayed yet")
    serving = monitor.require_flag("serving", "the server is starting: its port does not serve yet")

    writer = ThreadPool(minthreads=1, maxthreads=1, name="hall-db-writer")
    ThreadPoolService(writer).setServiceParent(service)
    core = CommandCore(journal, clock, thread_pool_runner(reactor, writer))
    ClockWatch(core, clock, SYSTEM).setServiceParent(service)  # a step of the wall clock is a fault, journaled
    if journal.last is not None:
        clock.continue_from(journal.last.time_ms)
    # While a commit cannot be made (disk full, a read-only file, a lock, the database away) the
    # core refuses commands; the watch tries the storage again, on the writer, until it is back.
    storage = StorageWatch(core, clock, core.run_blocking, journal.probe)
    storage.setServiceParent(service)
    # The pre-session verification hashes the whole journal: on a pool of its own, reading
    # only, so commits go on meanwhile on the writer.
    verification_pool = ThreadPool(minthreads=0, maxthreads=1, name="hall-verification")
    ThreadPoolService(verification_pool).setServiceParent(service)

    blowers = build_blowers(config, reactor, core) if config.draw.blower else None
    checks: dict[str, Any] = {"manifest": release_manifest(config)}
    live: dict[str, Any] = {}  # the parts the terminals' and the links' checks read, once built
    if blowers is not None:
        # With the blower as the draw device, its self-test is the draw-device check (R84.1).
        checks["draw_device"] = blowers.draw_device_check(reactor)
    # The hall's time zone says what "today" is to every module that dates something.
    zone = config.timezone

    def verify(now_ms: int) -> Mapping[str, str | None]:
        # The clock's check reads the wall clock as it is: the records' time never goes back.
        return verify_system(journal, engine, clock.wall_ms, **checks, **verification_checks(reactor, live))

    session = SessionModule(core, verify, run_checks=thread_pool_runner(reactor, verification_pool), timezone=zone)
    ledger = LedgerModule(core)
    # The hours last reported to the regulator and those in force (R74): a session opens inside them.
    opening_hours = OpeningHoursModule(core, zone)
    admission = AdmissionModule(
        core, [StaffIdentity(m.name, m.document) for m in config.staff if m.document], timezone=zone,
        capacity=config.capacity, counted_since=opening_hours.counted_since_ms,
    )
    session.closing_checks.append(admission.closing_refusal)  # no complaint left unwitnessed (R75.5)
    # scrypt and PDF rendering run on the reactor's thread pool, never on the reactor thread;
    # the pool is looked up when the work is asked for, as the other off-thread work does.
    def on_general_pool(function: Any, *args: Any) -> defer.Deferred[Any]:
        return deferToThreadPool(reactor, reactor.getThreadPool(), function, *args)

    cashier = CashierModule(core, ledger, admission, config.desks, hall_name=config.name, timezone=zone,
                            work=on_general_pool, staff={m.name: str(m.role) for m in config.staff},
                            language=config.language)
    # The software ball generator (R92.10) unless [draw] source = "blower" (R83.6).
    ball_sources = blowers if blowers is not None else RandomBallGenerator
    games = GamesModule(core, session, ledger, StoreCardCatalog(engine), ball_sources, config.prize_rules,
                        desks=cashier, prize_wait_s=config.draw.claim_wait_s)
    if blowers is not None:
        blowers.install(games, session)
    # Virtual cards on the player terminals (docs/terminals.md).
    library = load_virtual_library(engine, card_key_path(config.home))
    virtual = VirtualModule(core, games, ledger, cashier, library)
    pins = PinGuard(core, cashier)  # the terminals' PIN lockouts, rebuilt with the rest
    responsible = ResponsiblePlayModule(core, cashier, admission, virtual)  # limits and exclusions (R97.2)
    # The network games (docs/network-game.md), with their own checks of the player's limits.
    network = None
    if config.central is not None:
        network = NetworkModule(core, ledger, cashier, config.central.hall_id, purchase_checks=virtual.purchase_checks)
    # The hall-annex game with a partner hall (R3.5.b), over the link to the central server.
    annex = joint_sales = None
    if config.annex is not None and config.central is not None:
        annex = AnnexModule(core, ledger, StoreCardCatalog(engine), ball_sources, config.prize_rules,
                            hall_id=config.central.hall_id, role=config.annex.role, partner=config.annex.partner,
                            desks=cashier, library=library,
                            own_game=lambda: games.current.game_id if games.current is not None else None,
                            session_open=session.require_open)
        games.sale_checks.append(annex.own_game_refusal)  # one game's paper cards at a time in the room (R82.4)
        session.closing_checks.append(annex.closing_refusal)
        joint_sales = JointTerminalSales(core, annex, virtual, ledger, library)
    # The desks' look-ups: a claimed card, a player's account, the last games (folded off the reactor).
    lookups = LookupModule(core, games, cashier, run=on_general_pool)
    videobingo = build_videobingo(config, core, ledger, cashier) if config.videobingo is not None else None
    if videobingo is not None:
        session.closing_checks.append(videobingo.closing_check)  # the day's close reconciles the meters
        videobingo.credit_checks.append(responsible.purchase_refusal)  # limits and exclusions (R97.2)
    opening_hours.enforce(session, videobingo)  # no session opens, no machine plays, outside the hours (R74.1)
    feed = regulator_feed(config, reactor, journal, on_general_pool)
    view = HallView(config.name, warnings=config.responsible.warnings, desks=config.desks,
                    claim_wait_s=config.draw.claim_wait_s,
                    series=functools.partial(series_on_sale, games),
                    feed=feed.console_status if feed is not None else lambda: None,
                    jackpot=lambda: games.jackpot_contributions_picture(core.now_ms()))
    view.storage_source = storage.status
    # What the desks read of the hall now: the people present (R73.5), the hours in force (R74).
    view.presence_source = lambda: admission.presence(core.now_ms())
    view.hours_source = lambda: opening_hours.picture(core.now_ms())
    core.add_view(view)
    recovered_from, recovered = recover(core, journal, checkpoint, SERVER, JOURNAL_ADVICE)
    log.info("Recovered {n} journal records; the hall is at record {seq}", n=recovered, seq=core.seq)
    restart.install(core, session, games, reactor, Sellers(virtual, videobingo, annex))
    journal_verified()

    def report_opening_hours() -> None:
        if config.opening_hours is None:
            log.warn("No [hall] opening_hours: sessions and video bingo machines are held to no opening hours "
                     "(R74.1); give the hours reported to the regulator")
        if config.capacity is None:
            log.warn("No [hall] capacity: the admission desk counts the people present but refuses nobody for "
                     "it (R73.5); give the hall's authorised capacity")
        reported = opening_hours.notify(config.opening_hours)
        if reported is not None:
            reported.addCallbacks(
                lambda _: log.info("Opening hours reported to the regulator: {hours}", hours=config.opening_hours),
                lambda failure: log.failure("reporting the opening hours", failure))

    reactor.callWhenRunning(report_opening_hours)
    # A prize found before the stop waits for other cards again, its wait started afresh (R85.6).
    reactor.callWhenRunning(games.arm_prize_wait)
    if annex is not None:
        # The cards this hall may sell in a joint game, declared to the partner when they changed (R82.6).
        reactor.callWhenRunning(lambda: annex.declare_cards().addErrback(
            lambda failure: log.failure("declaring this hall's cards to the hall-annex partner", failure)))
    # The last checkpoint is of the state the stop finds; a commit still under way then is
    # after it, and replayed at the next start.
    checkpoint_pool = ThreadPool(minthreads=0, maxthreads=1, name="hall-checkpoint")
    checkpointing = CheckpointService(
        core, checkpoints, clock, thread_pool_runner(reactor, checkpoint_pool), pool=checkpoint_pool,
        written_seq=recovered_from, written_ms=checkpoint.time_ms if checkpoint is not None and recovered_from else None,
        every_records=CHECKPOINT_EVERY_RECORDS, every_seconds=config.checkpoint_every_seconds,
    )
    checkpointing.setServiceParent(service)
    # A journal behind what the hall reported (an earlier copy of its folder, records cut and
    # the head signed again) verifies; the receiver and the central server say what they hold.
    rollback = RollbackGuard(journal, functools.partial(_stop_rolled_back, reactor, checkpointing),
                             server="the hall server")
    if blowers is not None:
        blowers.resume()  # before the serial ports open: the blower learns the journal's balls
        for driver, device in zip(blowers.drivers, (config.draw.main, config.draw.reserve)):
            blower_service(reactor, driver, device, config.draw.baud).setServiceParent(service)

    # Each login's class I licence is read against the hall's day (R79): at sign-in, at each
    # request, and for each signature of a session's opening.
    directory = StaffDirectory(config.staff, today=lambda: local_date(clock.now_ms(), zone))
    directory.sign_sessions(session, zone)
    sign_ins = SignIns(directory, reactor)
    channel = CommandChannel(core, say=said)  # a refusal in the language the console reads
    hub = LiveHub(view, channel, sign_ins)
    core.observers.append(hub.record_committed)
    core.storage_listeners.append(hub.storage_changed)  # the alarm on every console
    # The day's signed report at each session's close (R83.5, R95.4), on the reactor's pool;
    # beside it the day's audit export, which the regulator's receiver replays card by card (R92.7).
    reporter = DailyReporter(journal, config.home, config.name, zone, on_general_pool, config.prize_rules,
                             language=config.language)
    core.observers.append(reporter.record_committed)

    # Staff password checks (scrypt) run on a pool of their own, not on the DB writer and not
    # on the reactor's pool where players' PIN checks run: a burst of bad staff sign-ins
    # waits for its one thread (and the sign-in throttle bounds how many may wait).
    sign_in_pool = ThreadPool(minthreads=0, maxthreads=1, name="hall-staff-sign-in")
    ThreadPoolService(sign_in_pool).setServiceParent(service)

    def authenticate(name: str, password: str) -> defer.Deferred[Actor]:
        return deferToThreadPool(reactor, sign_in_pool, sign_ins.directory.authenticate, name, password)

    # The minutes are made from the whole journal on the reactor's pool, not on the DB writer.
    minutes = MinutesDesk(journal, config.name, zone, on_general_pool, config.language)
    site = build_site(
        hub=hub, sign_ins=sign_ins, channel=channel, authenticate=authenticate, secure_cookie=config.tls.enabled,
        minutes=minutes, voice=_voice(config, on_general_pool), language=config.language,
        time_zone=str(config.timezone),
    )
    # The PIN check (scrypt) runs off the reactor thread, on the hash read on it; an
    # unknown or closed account costs the same check, so the time tells nothing.
    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        known = cashier.state.accounts.get(number)
        stored = known.pin_hash if known is not None and not known.closed else None
        return on_general_pool(pin_matches_or_none, pin, stored)

    gateway = TerminalGateway(core, games, virtual, cashier, reactor, check_pin, config.name, pins=pins,
                              responsible=responsible, recall=lookups.recall,
                              notices=(config.responsible.warnings, config.responsible.help), network=network,
                              annex=annex, joint=joint_sales)
    relay = link = None
    if network is not None and config.central is not None:
        central = config.central
        relay = NetworkRelay(network, central.hall_id, reactor, software=SOFTWARE)
        relay.journal_held = lambda central_id, seq, hash: rollback.held(f"the central server {central_id}", seq, hash)
        relay.listeners.append(gateway.network_link)
        endpoints = tuple(Endpoint(host, port, central.server_name or host) for host, port in central.endpoints)
        address = CentralAddress(central.host, central.port, central.hall_id, central.pki_dir,
                                 central.server_name or central.host, endpoints)
        link = central_link(reactor, relay, address)
        link.setServiceParent(service)
        view.central_source = link.console_status
        link.listeners.append(hub.central_changed)
        if annex is not None and config.annex is not None:
            AnnexLink(annex, relay)
            log.info("Hall-annex game: this hall is the {role} hall, its partner {partner}", role=config.annex.role,
                     partner=config.annex.partner)
        log.info("Network games: linking to the central server at {endpoints} as hall {hall}",
                 endpoints=", ".join(str(e) for e in address.each()), hall=central.hall_id)
    site.resource.putChild(b"kiosk", KioskResource(gateway, require_certificate=config.tls.enabled))
    # The regulator's read-only consultation (R95.3): regulator certificates only, each query journaled.
    site.resource.putChild(b"regulator", consultation_resource(core, Consultation(journal.records, on_general_pool)))
    if videobingo is not None:
        machines = MachineGateway(videobingo, pins, check_pin, reactor,
                                  notices=(config.responsible.warnings, config.responsible.help))
        site.resource.putChild(b"vb", MachineScreenResource(machines, require_certificate=config.tls.enabled))
    if feed is not None and config.regulator is not None:
        feed.witness = functools.partial(
            rollback.held, f"the regulator's receiver at {config.regulator.host}:{config.regulator.port}")
        feed.setServiceParent(service)
        feed.listeners.append(hub.feed_changed)  # the consoles' line follows the acks
        reporter.listeners.append(feed.report_written)  # the day's report, sent once written
        core.observers.append(lambda record: feed.wake())  # each commit is sent at once
        log.info("Regulator's feed: sending the journal to {host}:{port} as hall:{hall}", host=config.regulator.host,
                 port=config.regulator.port, hall=config.regulator.hall_id)
    if feed is not None or relay is not None:
        log.info("The journal ends at record {seq}; at each connection to {peers}, what it holds of the journal is "
                 "checked against it, and the hall server stops if it holds more (docs/security.md)", seq=core.seq,
                 peers=" and ".join(p for p, on in (("the regulator's receiver", feed is not None),
                                                    ("the central server", relay is not None)) if on))
    # The port behind the connection guard: deadlines, per-address and per-certificate bounds,
    # descriptors kept for the database and the journal, revoked certificates cut at once.
    guard = ConnectionGuard(reactor, config.connections, pki_dir=config.tls.pki_dir if config.tls.enabled else None)
    guard.setServiceParent(service)
    monitor.watch_core(core)
    monitor.watch_connections(guard)
    monitor.watch_checkpoints(checkpointing, core, clock)
    monitor.put_on(site.resource)
    web = WebService(_endpoint(config, reactor, guard), site)
    web.setServiceParent(service)
    web.listening.addCallback(_announce_url, config)
    web.listening.addCallback(serving)
    hall = HallServer(
        config, core, view, hub, channel, sign_ins, site, service, web, session, ledger, admission, cashier, games,
        virtual, gateway, blowers, sign_in_pool, checkpointing, recovered_from, network, relay, videobingo, clock,
        monitor,
    )
    service.hall = hall
    service.restart = restart
    live.update(engine=engine, key=card_key_path(config.home), library=library, virtual=virtual, gateway=gateway,
                link=link)
    return hall


def verification_checks(reactor: Any, live: Mapping[str, Any]) -> dict[str, Any]:
    """The verification's ``terminals`` and ``links`` checks (R92.5e), run on its worker thread.

    What the gateway and the link hold is read on the reactor's thread; the library is
    read from the card store and its codes checked on the worker.
    """
    if not live:
        starting = Phrase(N_("the hall is still starting"))
        return {"terminals": lambda: starting, "links": lambda: starting}

    def terminals() -> str | None:
        fault = check_library(live["engine"], live["key"], live["library"])
        gateway, virtual = live["gateway"], live["virtual"]
        connected, known = blockingCallFromThread(reactor, lambda: (list(gateway.sessions), dict(virtual.state.terminals)))
        return one_or_joined([f for f in (fault, check_terminals(connected, known)) if f])

    def links() -> str | None:
        link = live["link"]
        if link is None:
            return None
        status = blockingCallFromThread(reactor, link.console_status)
        if status.get("up"):
            return None
        return Phrase(N_("{link}: the network games and the hall-annex game need it"), link=status["line"])

    return {"terminals": terminals, "links": links}


def feed_at(address: str, config: HallConfig) -> RegulatorFeedConfig:
    """``--regulator HOST:PORT``: the feed to that receiver, as the hall's own server certificate."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise StartRefused(f"--regulator is HOST:PORT of the regulator's receiver (localhost:8700), not {address!r}")
    hall_id = config.regulator.hall_id if config.regulator is not None else config.tls.server_name
    return RegulatorFeedConfig(host, int(port), hall_id, host, config.tls.pki_dir)


def regulator_feed(config: HallConfig, reactor: Any, journal: Journal, read: Any) -> FeedLinkService | None:
    """The link that sends the journal to the regulator's receiver (``[regulator]``), or None; ``read`` runs
    its reads of the journal off the reactor."""
    feeding = config.regulator
    if feeding is None:
        return None
    sender = hall_sender(feeding.hall_id)
    cursor = FeedCursor(journal, sender, public_pem(journal.key).decode())
    address = ReceiverAddress(feeding.host, feeding.port, feeding.pki_dir, feeding.hall_id, feeding.server_name)
    return FeedLinkService(reactor, cursor, address, ReportOutbox(config.home / REPORTS_FOLDER, sender), read)


def build_videobingo(config: HallConfig, core: CommandCore, ledger: LedgerModule,
                     cashier: CashierModule) -> VideoBingoModule:
    """The video bingo machines of ``[videobingo]``, their paytables read and certified."""
    assert config.videobingo is not None
    machines = load_videobingo(config)
    for loaded in machines:
        if loaded.refused is not None:
            log.warn("Video bingo machine {machine} does not play: {why}", machine=loaded.machine_id,
                     why=loaded.refused[1])
        else:
            log.info("Video bingo machine {machine}: {paytable}, returning {rtp}%", machine=loaded.machine_id,
                     paytable=loaded.paytable.name, rtp=loaded.rtp.rtp_percent)
    return VideoBingoModule(core, ledger, cashier, config.videobingo, machines)


def load_videobingo(config: HallConfig) -> Any:
    """The machines of ``[videobingo]`` with their paytables read and certified; :class:`StartRefused` if one cannot be."""
    assert config.videobingo is not None
    paytables = {}
    for machine in config.videobingo.machines:
        try:
            with open(machine.paytable, "rb") as stream:
                paytables[machine.machine_id] = load_paytable(stream.read(MAX_PAYTABLE_BYTES + 1))
        except OSError as error:
            raise StartRefused(f"video bingo machine {machine.machine_id}: {machine.paytable}: cannot be read: "
                               f"{error.strerror}") from None
        except PaytableError as error:
            raise StartRefused(f"video bingo machine {machine.machine_id}: {machine.paytable}: {error}") from None
    try:
        return load_machines(config.videobingo, paytables)
    except VbConfigError as error:
        raise StartRefused(str(error)) from None


def build_blowers(config: HallConfig, reactor: Any, core: CommandCore) -> HallBlowers:
    """The main blower's driver and the reserve's (when configured), joined to the core."""
    draw = config.draw
    approved = ApprovedFirmware()
    for version, digest in draw.approved_firmware:
        approved = approved.with_release(version, bytes.fromhex(digest))
    key = blower_link_key(config)
    main = BlowerDriver(reactor, approved, name="main", key=key)
    reserve = BlowerDriver(reactor, approved, name="reserve", key=key) if draw.reserve else None
    log.info("Drawing with the ball blower on {main}{reserve}", main=draw.main,
             reserve=f", reserve on {draw.reserve}" if draw.reserve else " (no reserve configured)")
    return HallBlowers(core, main, reserve)


def blower_link_key(config: HallConfig) -> bytes:
    """The blower link's key from ``[draw] key_file`` (empty without one); :class:`ConfigError` if it does not read."""
    key_file = config.draw.key_file
    if key_file is None:
        return b""
    try:
        return bytes.fromhex(key_file.read_text().strip())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{key_file}: the blower link key is one line of hex ({error})") from None


def _voice(config: HallConfig, run: Any) -> VoiceClips:
    """The board's speech clips, made on ``run`` (the reactor's pool) and kept in the hall's folder."""
    clips = VoiceClips(config.home / "voice", run)
    if not clips.available():
        log.warn("No espeak-ng: the board speaks no ball, prize or announcement (apt-get install espeak-ng)")
    return clips


def _announce_url(port: Any, config: HallConfig) -> Any:
    address = port.getHost()
    host = "localhost" if config.interface in ("", "0.0.0.0", "127.0.0.1", "::") else config.interface
    log.info(
        "Caller console at {scheme}://{host}:{port}/console, information board at /board",
        scheme=config.scheme, host=host, port=address.port,
    )
    return port


def _endpoint(config: HallConfig, reactor: Any, guard: ConnectionGuard) -> Any:
    # What the terminals send is stamped with its arrival: a purchase sent in the sale time
    # is decided as of then, even if the hall reads it later (server_kit/received.py).  The
    # guard stands outside TLS, the stamp at the socket: a read is stamped whatever is above it.
    if config.tls.enabled:
        # One port for staff browsers, boards and terminals: certificates are requested and
        # checked at the handshake, and each endpoint admits the roles it serves.
        required = config.tls.require_client_certificate
        options = pki.server_tls_options(
            config.tls.pki_dir, config.tls.server_name,
            client_certificates=pki.ClientCertificates.required if required else pki.ClientCertificates.requested,
        )
        return guard.endpoint(ReceiptServerEndpoint(reactor, config.port, interface=config.interface), tls=options)
    return guard.endpoint(ReceiptServerEndpoint(reactor, config.port, interface=config.interface))


LOGINS_FILE = "new-staff-logins.txt"


def hand_over_logins(logins: list[tuple[str, Any, str]], config_path: Path) -> None:
    """The passwords of new staff logins, once, to the terminal that started the hall; never to a log.

    Where the hall was started without a terminal (a service manager, whose output is a
    log), they go to a file beside the configuration that only this user can read, and
    the log says where it is.
    """
    lines = [f"Wrote {config_path} with these staff logins (shown only now; only their hashes are kept):"]
    lines += [f"  {name:<8} {str(role).replace('_', ' '):<15} password: {password}" for name, role, password in logins]
    text = "\n".join(lines) + "\n"
    try:
        with open("/dev/tty", "w") as terminal:
            terminal.write(text)
        return
    except OSError:
        pass  # no controlling terminal
    path = config_path.parent / LOGINS_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as stream:
        stream.write(text)
    os.chmod(path, 0o600)
    log.warn(
        "New staff logins were written to {path} (readable by this user only): give each login to its "
        "person, then delete the file",
        path=str(path),
    )


def _cannot_listen(failure: Any, config: HallConfig, reactor: Any) -> None:
    """The port cannot be had: say so and end the process with a failure status.

    A hall that serves nothing must not look like a running hall to whoever started it
    (``twist`` or ``bingo hall serve``, a service manager): the process exits 1 once the
    other services have stopped.
    """
    reason = failure.getErrorMessage()
    log.critical(
        "Cannot listen on {interface}:{port}: {reason}. Another process (another hall server?) may hold "
        "the port; stop it or set another [listen] port in the configuration. The hall server stops.",
        interface=config.interface or "*", port=config.port, reason=reason,
    )
    print(f"hall server: cannot listen on {config.interface or '*'}:{config.port}: {reason}", file=sys.stderr)
    reactor.addSystemEventTrigger("after", "shutdown", _exit_now, 1)
    if reactor.running:
        reactor.stop()
    else:
        reactor.callWhenRunning(reactor.stop)


def _stop_rolled_back(reactor: Any, checkpointing: CheckpointService, sentence: str) -> None:
    """A peer holds more of the journal than the hall has: say so and end the process with status 1.

    No checkpoint is written on the way out: the state is that of a journal the hall
    does not serve on.
    """
    checkpointing.forbid(sentence)
    log.critical("{sentence}. The hall server stops.", sentence=sentence)
    print(f"Error: {sentence}", file=sys.stderr)
    reactor.addSystemEventTrigger("after", "shutdown", _exit_now, 1)
    if reactor.running:
        reactor.stop()
    else:
        reactor.callWhenRunning(reactor.stop)


def _refuse_a_taken_port(config: HallConfig) -> None:
    """Before anything is made: a port another process holds ends the start as :func:`_cannot_listen` does.

    (Another process may still take it before the hall listens: then :func:`_cannot_listen`.)
    """
    if not config.port:
        return
    try:
        family, kind, _, _, address = socket.getaddrinfo(config.interface or None, config.port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the listening port will
            probe.bind(address)
    except OSError as error:
        reason = error.strerror or str(error)
        log.critical("Cannot listen on {interface}:{port}: {reason}. Another process (another hall server?) may hold "
                     "the port; stop it or set another [listen] port in the configuration. The hall server stops.",
                     interface=config.interface or "*", port=config.port, reason=reason)
        print(f"hall server: cannot listen on {config.interface or '*'}:{config.port}: {reason}", file=sys.stderr)
        raise SystemExit(1) from None


def _exit_now(status: int) -> None:
    """End the process with ``status`` after the reactor's shutdown (the runners would exit 0)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def makeService(options: Mapping[str, Any]) -> HallService:
    """The hall server for ``options``.

    ``config``: the configuration file (written with fresh logins if missing);
    ``port``, ``interface``, ``database_url``, ``regulator`` (``HOST:PORT`` of the regulator's
    receiver): override the file's; ``demo``: play a scripted session (a step every
    ``demo_pace`` seconds).
    """
    from twisted.internet import reactor  # the composition root is the one place that picks it

    if not schedules_monotonic(reactor):
        log.warn("This reactor's timers run on the wall clock, which a step holds up: run `bingo hall serve` "
                 "or `twist --reactor=bingo bingo-hall` (docs/server-kit.md, \"Clocks\")")

    # A fatal signal (SIGBUS from a mapped database file, SIGSEGV) leaves its traceback in the log.
    faulthandler.enable()
    # Whatever the process writes (configuration, database, head, keys) is its user's alone.
    os.umask(0o077)
    config_path = Path(options.get("config") or DEFAULT_CONFIG)
    config, logins = ensure_config(config_path)
    if options.get("port") is not None:
        config = replace(config, port=int(options["port"]))
    if options.get("interface"):
        config = replace(config, interface=str(options["interface"]))
    if options.get("database_url"):
        config = replace(config, database_url=str(options["database_url"]))
    if options.get("regulator"):
        config = replace(config, regulator=feed_at(str(options["regulator"]), config))
    if logins:
        hand_over_logins(logins, config_path)
    if options.get("demo") and config.videobingo is None:
        config = replace(config, videobingo=demo_videobingo())
    _refuse_a_taken_port(config)
    hall = build_hall(config, reactor)
    hall.web.listening.addErrback(_cannot_listen, config, reactor)
    if options.get("demo"):
        add_demo(hall, reactor, float(options.get("demo_pace") or 2.5))
    collector.settle()  # the hall is rebuilt from its journal: the collector leaves that state be
    return hall.service


def register_next_series(hall: HallServer) -> int | None:
    """The demo's staff register another series when every one is sold out (see
    :meth:`StoreCardCatalog.register_next`): its number, or None while one has cards left."""
    catalog = hall.games.catalog
    if not isinstance(catalog, StoreCardCatalog):
        return None
    added = catalog.register_next(hall.games.last_sold)
    if added is None:
        return None
    log.info("Every series is sold out: registered series {number} ({count} cards of set {card_set})",
             number=added.number, count=added.card_count, card_set=added.card_set)
    return added.number


def demo_videobingo() -> VideoBingoConfig | None:
    """The demo's video bingo machine, on the documented classic paytable (of a source checkout)."""
    paytable = DEMO_PAYTABLE
    if not paytable.is_file():
        log.warn("Demo: no video bingo machine: its paytable {path} is missing", path=str(paytable))
        return None
    machine = MachineConfig(DEMO_MACHINE, "classic", paytable, credit_cents=20, stations=1, zone="machines")
    return VideoBingoConfig(seats=40, room_zone="bingo room", machines=(machine,))


def add_demo(hall: HallServer, reactor: Any, pace: float) -> None:
    """The scripted session, with virtual cards on the demo's terminals and the newcomer's kiosk
    (and the screen of the demo's video bingo machine, when the hall has its own or the demo's)."""
    config = hall.config
    bundles = config.home / "terminal-certs"
    names = [*demo_terminals.HEADLESS, FIRST_TERMINAL]
    stations = [(DEMO_MACHINE, 1)] if hall.videobingo is not None and DEMO_MACHINE in hall.videobingo.machines else []
    station_names = [f"{m}.{s}" for m, s in stations]
    if config.tls.enabled:
        ready = [*demo_terminals.provision(operator_ca_dir(config), bundles, names),
                 *demo_terminals.provision(operator_ca_dir(config), bundles, station_names, role="machine")]
        terminals = [n for n in ready if n in names]
        stations = [(m, s) for m, s in stations if f"{m}.{s}" in ready]
    else:
        terminals = names
    demo = DemoSession(
        hall.core, hall.view, hall.clock or reactor, [s.number for s in config.series], config.desks[0],
        pace=pace, timezone=config.timezone, terminals=terminals, stations=stations, balance=hall.cashier.balance,
        new_series=functools.partial(register_next_series, hall), rules=config.prize_rules,
    )
    demo.setServiceParent(hall.service)
    host = "localhost" if config.interface in ("", "0.0.0.0", "127.0.0.1", "::") else config.interface
    demo_terminals.DemoTerminals(
        reactor, demo, hall.web.listening, host=host, tls=config.tls.enabled, bundles=bundles,
        kiosk=FIRST_TERMINAL if FIRST_TERMINAL in terminals else None, note=config.home / demo_terminals.KIOSK_NOTE,
    ).setServiceParent(hall.service)

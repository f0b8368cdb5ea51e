"""The hall server's composition root: the one place that builds the process.

:func:`makeService` reads the configuration and returns the hall's services, which
:func:`build_hall` builds in this order:

1. what a start checks and makes first (:mod:`hall_server.provision`: disks, PKI, release
   manifest, card set); what a refused start made before its journal held a record goes;
2. the foundation every server stands on (:mod:`server_kit.boot`): the database, the
   journal and its key, **verified** before anything reads it (a journal that fails its
   check stops the start with one line naming the record), the run marker (R92.5e), the
   writer's thread, the command core and the storage watch;
3. the hall's modules (:mod:`hall_server.modules`) and the consoles' read model, then
   **recovery** from the newest checkpoint (or the whole journal) before anything
   listens; checkpoints every :data:`CHECKPOINT_EVERY_RECORDS` records or ``[journal]
   checkpoint_every_seconds`` seconds and at a clean stop;
4. the blower drivers on their serial ports (``[draw] source = "blower"``), told the
   journal's balls before the ports open, and the guard against a rolled-back folder
   (:mod:`server_kit.journal.rollback`);
5. what the hall serves (:mod:`hall_server.endpoints`): the site, the terminals' gateway,
   the links, the one port on TLS or, with ``[tls] enabled = false``, plain TCP.

Nothing outside this module reads the configuration or chooses the reactor.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from twisted.internet import defer
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from twisted.web.server import Site

from hall_server.blower import blower_service
from hall_server.blower.hall import HallBlowers
from hall_server.config import HallConfig, ensure_config, with_options
from hall_server.endpoints import build_endpoints, regulator_feed
from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.lookups import series_on_sale
from hall_server.hall.roles import SYSTEM
from hall_server.hall.session import SessionModule
from hall_server.hall.videobingo import VideoBingoModule
from hall_server.hall.virtual import VirtualModule
from hall_server.listening import cannot_listen, refuse_a_taken_port, stop_rolled_back
from hall_server.modules import build_modules, report_opening_hours
from hall_server.network.module import NetworkModule
from hall_server.network.relay import NetworkRelay
from hall_server.provision import (CreatedByStart, hand_over_logins, make_private, preflight, provision,
                                   provision_cards, release_fingerprint)
from hall_server.restart import CrashRestart, Sellers
from hall_server.serve_demo import add_demo, with_demo
from hall_server.store.database import open_database
from hall_server.terminal_gateway.gateway import TerminalGateway
from hall_server.web.auth import SignIns
from hall_server.web.live import LiveHub
from hall_server.web.view import HallView
from server_kit import collector
from server_kit.boot import Foundation, ServerService, StartRefused, lay, prepare_process
from server_kit.clock import ClockWatch, JournalClock
from server_kit.core import CommandCore
from server_kit.db.faults import describe_os_error
from server_kit.health import Monitor
from server_kit.journal.checkpoints import CheckpointService
from server_kit.journal.rollback import RollbackGuard
from server_kit.journal.sql import head_path
from server_kit.keys import card_key_path, journal_key_path
from server_kit.services import WebService
from server_kit.web.channel import CommandChannel

log = Logger()
DEFAULT_CONFIG = Path("var") / "hall.toml"
#: What a refused start calls this server, and what it advises for a journal that does not verify.
SERVER = "hall server"
JOURNAL_ADVICE = "bingo journal verify; docs/journal.md"
#: A checkpoint of the hall's state is written after this many records, or after
#: ``[journal] checkpoint_every_seconds`` with records since the last one, and at a clean stop.
CHECKPOINT_EVERY_RECORDS = 50_000


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
    service: ServerService
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


def foundation(config: HallConfig, reactor: Any) -> Foundation:
    """The hall's :class:`Foundation`, after what a start checks and makes first (:mod:`hall_server.provision`);
    what a refused start made before its journal held a record is removed."""
    preflight(config)
    created = CreatedByStart(config)
    engine = None
    try:
        provision(config)
        engine = open_database(config.database_url, create_folder=False)
        base = lay(reactor, JournalClock.of(reactor), engine, name="hall", server=SERVER, advice=JOURNAL_ADVICE,
                   home=config.home, key_path=journal_key_path(config.home), head=head_path(config.home),
                   opening={"hall": config.name, "actor": SYSTEM.to_dict()}, release=release_fingerprint(config),
                   checkpoints=config.home / "checkpoints")
    except BaseException as error:
        created.refused(engine)
        if engine is not None:
            engine.dispose()
        if isinstance(error, OSError):
            raise StartRefused(describe_os_error(error, config.home)) from None
        raise
    with base.built():
        provision_cards(config, engine)
        make_private(config)
    return base


def build_hall(config: HallConfig, reactor: Any) -> HallServer:
    """Build (but do not start) the hall described by ``config`` on ``reactor``.

    Raises :class:`StartRefused` (or another :class:`DomainError`) with one line saying
    why when the hall cannot serve: a journal that does not verify, unusable credentials.
    """
    base = foundation(config, reactor)
    with base.built():
        return _build_on(base, config, reactor)


def _build_on(base: Foundation, config: HallConfig, reactor: Any) -> HallServer:
    core, clock, service = base.command_core(), base.clock, base.service
    ClockWatch(core, clock, SYSTEM).setServiceParent(service)  # a step of the wall clock is a fault, journaled
    restart = CrashRestart(base.crashed)  # the run before this one did not stop cleanly (R92.5e)
    service.started.append(restart.started)

    # scrypt and PDF rendering run on the reactor's thread pool, never on the reactor thread;
    # the pool is looked up when the work is asked for, as the other off-thread work does.
    def on_general_pool(function: Any, *args: Any) -> defer.Deferred[Any]:
        return deferToThreadPool(reactor, reactor.getThreadPool(), function, *args)

    live: dict[str, Any] = {}  # the parts the terminals' and the links' checks read, once built
    m = build_modules(config, base, live, on_general_pool)
    feed = regulator_feed(config, reactor, base.journal, on_general_pool)
    view = HallView(config.name, warnings=config.responsible.warnings, desks=config.desks,
                    claim_wait_s=config.draw.claim_wait_s, series=functools.partial(series_on_sale, m.games),
                    feed=feed.console_status if feed is not None else lambda: None,
                    jackpot=lambda: m.games.jackpot_contributions_picture(core.now_ms()))
    assert base.storage is not None
    view.storage_source = base.storage.status
    # What the desks read of the hall now: the people present (R73.5), the hours in force (R74).
    view.presence_source = lambda: m.admission.presence(core.now_ms())
    view.hours_source = lambda: m.opening_hours.picture(core.now_ms())
    core.add_view(view)
    recovered = base.recover()
    log.info("Recovered {n} journal records; the hall is at record {seq}", n=recovered, seq=core.seq)
    restart.install(core, m.session, m.games, reactor, Sellers(m.virtual, m.videobingo, m.annex))
    reactor.callWhenRunning(report_opening_hours, config, m.opening_hours)
    # A prize found before the stop waits for other cards again, its wait started afresh (R85.6).
    reactor.callWhenRunning(m.games.arm_prize_wait)
    if m.annex is not None:
        # The cards this hall may sell in a joint game, declared to the partner when they changed (R82.6).
        annex = m.annex
        reactor.callWhenRunning(lambda: annex.declare_cards().addErrback(
            lambda failure: log.failure("declaring this hall's cards to the hall-annex partner", failure)))
    # The last checkpoint is of the state the stop finds; a commit still under way then is
    # after it, and replayed at the next start.
    checkpointing = base.checkpoint_every(CHECKPOINT_EVERY_RECORDS, config.checkpoint_every_seconds)
    # A journal behind what the hall reported (an earlier copy of its folder, records cut and
    # the head signed again) verifies; the receiver and the central server say what they hold.
    rollback = RollbackGuard(base.journal, functools.partial(stop_rolled_back, reactor, checkpointing),
                             server="the hall server")
    if m.blowers is not None:
        m.blowers.resume()  # before the serial ports open: the blower learns the journal's balls
        for driver, device in zip(m.blowers.drivers, (config.draw.main, config.draw.reserve)):
            blower_service(reactor, driver, device, config.draw.baud).setServiceParent(service)
    base.monitor.watch_core(core)
    e = build_endpoints(config, base, m, view, feed, rollback, on_general_pool)
    live.update(engine=base.engine, key=card_key_path(config.home), library=m.library, virtual=m.virtual,
                gateway=e.gateway, link=e.link)
    return HallServer(
        config, core, view, e.hub, e.channel, e.sign_ins, e.site, service, e.web, m.session, m.ledger, m.admission,
        m.cashier, m.games, m.virtual, e.gateway, m.blowers, e.sign_in_pool, checkpointing, base.recovered_from,
        m.network, e.relay, m.videobingo, clock, base.monitor,
    )


def makeService(options: Mapping[str, Any]) -> ServerService:
    """The hall server for ``options``.

    ``config``: the configuration file (written with fresh logins if missing);
    ``port``, ``interface``, ``database_url``, ``regulator`` (``HOST:PORT`` of the regulator's
    receiver): override the file's; ``demo``: play a scripted session (a step every
    ``demo_pace`` seconds).
    """
    from twisted.internet import reactor  # the composition root is the one place that picks it

    prepare_process(reactor, "`bingo hall serve` or `twist --reactor=bingo bingo-hall`")
    config_path = Path(options.get("config") or DEFAULT_CONFIG)
    config, logins = ensure_config(config_path)
    config = with_options(config, options)
    if logins:
        hand_over_logins(logins, config_path)
    if options.get("demo"):
        config = with_demo(config)
    refuse_a_taken_port(config)
    hall = build_hall(config, reactor)
    hall.web.listening.addErrback(cannot_listen, config, reactor)
    if options.get("demo"):
        add_demo(hall, reactor, float(options.get("demo_pace") or 2.5))
    collector.settle()  # the hall is rebuilt from its journal: the collector leaves that state be
    return hall.service



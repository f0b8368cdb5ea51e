"""The central server's composition root: the one place that builds the process.

:func:`makeService` reads the configuration (:mod:`central_server.config`) and returns
the server's services, on the foundation every server stands on (:func:`server_kit.boot.lay`,
docs/server-kit.md, "Start-up"):

1. the database at its URL with the central migrations applied (PostgreSQL in
   production; SQLite for a single-node demo, with a warning in the log);
2. the journal key, and the journal **verified** against its signed head and its newest
   trusted checkpoint before anything reads it (a lagging head brought up to it), or
   begun if it is new; a journal that fails its check stops the start with one line and
   leaves the run marker (R92.5e);
3. the central library: each configured series generated once, checked on every start;
4. the command core on its writer thread and the modules (:mod:`central_server.server`),
   then **recovery** from the checkpoint and the records after it, or the whole journal,
   before anything listens; then the central leadership is taken
   (:mod:`central_server.leadership`: a new epoch on every record from then on) and its
   fence guards every commit;
5. the halls' endpoint (:mod:`central_server.edge`, :mod:`central_server.listening`) on
   mutual TLS behind one connection guard (``[connections]``) with the consultation; once
   it listens, the configured games are scheduled, their timers armed from the journal
   and the programme started;
6. the daily report of every ended day (:mod:`central_server.daily_close`), the
   regulator's feed, and checkpoints every :data:`CHECKPOINT_EVERY_RECORDS` records or
   :data:`CHECKPOINT_EVERY_SECONDS` seconds and at a clean stop.

**One of two processes** (``[replica]``): :mod:`central_server.replicated` waits for the
local node and verifies the journal itself; the process follows the replicated journal
as the standby, takes over when Patroni's leader is its node, and only then schedules
the games and starts what the active process alone runs.  It keeps no checkpoint.

Nothing outside this module reads the configuration or chooses the reactor.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from sqlalchemy.engine import make_url
from twisted.application.internet import TimerService
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.logger import Logger

import central_server
import protocol
import server_kit
from central_server import leadership, replica, replicated, store
from central_server.active import active_services
from central_server.admission import Admission
from central_server.config import CentralConfig, load_config
from central_server.domain.stops import RENEW_S
from central_server.edge import CentralEndpoint
from central_server.listening import HallListener
from central_server.module import SYSTEM
from central_server.server import CentralServer, CentralService, add_modules
from central_server.stops import hall_links
from server_kit import collector, pki, private
from server_kit.boot import Foundation, lay, prepare_process, released_on_failure
from server_kit.clock import JournalClock
from server_kit.connections import ConnectionGuard
from server_kit.db import database as kit
from server_kit.health import monitor_site
from server_kit.keys import load_journal_key
from server_kit.release import source_fingerprint
from server_kit.settings import ConfigFile

log = Logger()
#: What a refused start calls this server.
SERVER = "central server"
CONFIG_NAME = "central.toml"
#: A single central server's checkpoints of its state, in its folder: one every this many records, one
#: every this many seconds with records since the last, and one at a clean stop.
CHECKPOINTS = "checkpoints"
CHECKPOINT_EVERY_RECORDS = 50_000
CHECKPOINT_EVERY_SECONDS = 600.0


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


def build_central(config: CentralConfig, reactor: Any, clock: Any = None,
                  monitor_port: int | None = None) -> CentralServer:
    """Build (but do not start) the central server described by ``config`` on ``reactor``.

    ``clock`` (default: the reactor): the games' times and timers, through a :class:`JournalClock`
    (tests give a ``task.Clock``).  With ``[replica]`` this waits (blocking, before the reactor
    runs) until the local node answers and holds the journal, or leads.  ``monitor_port``:
    /health, /ready and /metrics on that loopback port (0: any free one; None: not served).
    """
    clock = JournalClock.of(clock if clock is not None else reactor)
    now_ms = clock.now_ms()
    opening = {"central": config.central_id, "actor": SYSTEM.to_dict()}
    laying = functools.partial(lay, reactor, clock, name="central", server=SERVER, advice="", home=config.home,
                               key_path=config.journal_key, head=config.journal_head, opening=opening,
                               service=CentralService)
    if config.replica is None:
        # The database first: a start it refuses (a missing folder, a file that cannot be
        # written, a server that does not answer) has made nothing, not even the key.
        kit.check_sqlite_files(config.database_url)
        engine = store.open_database(config.database_url, create_folder=False)
        if engine.dialect.name == "sqlite":
            log.warn("The central server runs on SQLite ({url}): for a single-node demo only; production runs "
                     "PostgreSQL with a synchronous standby (docs/central-server.md)", url=config.database_url)
        # The journal verified (or begun) against its checkpoints; refused, it leaves the run marker (R92.5e).
        with released_on_failure(engine):
            base = laying(engine, checkpoints=config.home / CHECKPOINTS,
                          release=source_fingerprint(protocol, server_kit, central_server))
            library, records = store.provision_library(engine, config.series), None
    else:
        key = load_journal_key(config.journal_key, create=True)
        engine, journal, _, library, records = replicated.open_replica(config, config.replica, key, now_ms, opening,
                                                                       SERVER)
        base = laying(engine, journal=journal)
    with base.built():
        return _build_on(base, config, reactor, clock, now_ms, library, records, monitor_port)


def _build_on(base: Foundation, config: CentralConfig, reactor: Any, clock: JournalClock, now_ms: int,
              library: dict[str, np.ndarray], records: list[Any] | None, monitor_port: int | None) -> CentralServer:
    journal, engine = base.journal, base.engine
    for path in config.private_paths():  # folders 0700 and files 0600, wherever they are
        private.make_private(path)
    tls = pki.server_tls_options(config.pki_dir, config.central_id, client_certificates=pki.ClientCertificates.required)
    service = base.service
    assert isinstance(service, CentralService)  # the CLI reads service.central
    # Every listening port behind one guard: deadlines, per-address and per-certificate bounds,
    # descriptors kept for the database and the journal, revoked certificates cut at once.
    guard = ConnectionGuard(reactor, config.connections, pki_dir=config.pki_dir)
    guard.setServiceParent(service)
    core = base.command_core()  # the writer, and the watch of a failing storage (docs/crash-recovery.md)
    parts = add_modules(core, clock, config, library, journal, engine, base.pool("verification"))
    module, gate = parts.module, parts.gate
    recovered = base.recover(records)
    if base.crashed and config.replica is None:
        gate.crashed_after_seq = core.seq  # no sale opens from now on, before the interruption is journaled
    stopped_after_ms = journal.last.time_ms if journal.last is not None else now_ms
    fence = None
    if config.replica is None:
        # Every check of the start passed: only now is the leadership taken (taking it fences the
        # process that held it), before anything listens or a timer runs. Whatever that process
        # committed since the journal was verified is verified and folded here too.
        fence = leadership.lead(journal, leadership.holder_name(config.central_id), core.now_ms(), SYSTEM,
                                on_fenced=lambda error: reactor.callFromThread(leadership.stop_fenced, reactor, error))
        recovered += core.recover(after=core.seq)
        core.epoch = fence.epoch
        log.info("Took the central leadership: epoch {epoch}; every record from now on carries it", epoch=fence.epoch)
    log.info("Recovered {n} journal records after record {seq}: {games} network game(s)", n=recovered,
             seq=base.recovered_from, games=len(module.games))
    # Ready once the journal is verified and rebuilt, the halls' port listens and the games are
    # scheduled, while the storage takes commits, and (replicated) while this process acts.
    monitor = base.monitor
    monitor.watch_core(core)
    monitor.watch_connections(guard)
    admission = Admission(lambda name, arguments, hall, received_ms: module.hall_command(
        name, arguments, hall, received_ms=received_ms), clock, reactor)
    module.admission = admission
    endpoint = CentralEndpoint(module, config.central_id, config.halls, admission)
    listener = HallListener(guard.endpoint(TCP4ServerEndpoint(reactor, config.port, interface=config.interface), tls=tls),
                            reactor)
    listener.setServiceParent(service)
    listener.listening.addCallback(monitor.require_flag("serving", "the server is starting: it does not serve halls yet"))
    # What reads the whole journal off the reactor, beside the writer: the daily report, the
    # consultation, a standby's following of the replicated journal.
    read = base.pool("db-reader")
    acting = active_services(config, reactor, clock, core, journal, base.key, parts.deliveries, read, guard)
    active = acting.services
    central = CentralServer(config, engine, journal, core, module, endpoint, service, listener, parts.terms,
                            parts.programme, acting.closer, fence, gate=gate, marker=service.marker, crashed=base.crashed,
                            stopped_after_ms=stopped_after_ms, monitor=monitor, feed=acting.feed, deliveries=parts.deliveries,
                            recovered_from=base.recovered_from)
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
        # Checkpoints of the state every so many records or seconds, and at a clean stop (a replicated
        # process keeps none: its state is the replicated journal it follows).
        central.checkpointing = base.checkpoint_every(CHECKPOINT_EVERY_RECORDS, CHECKPOINT_EVERY_SECONDS)
    else:
        renewing = TimerService(RENEW_S, leadership.renew_leadership, central, clock)  # the active's sign of life
        renewing.setServiceParent(active)
        central.role = replicated.replica_role(central, config.replica, base, clock, read, active)
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


def makeService(options: Mapping[str, Any]) -> CentralService:
    """The ``twist bingo-central`` service: the central server of ``options["config"]``."""
    from twisted.internet import reactor

    prepare_process(reactor, "`bingo central serve` or `twist --reactor=bingo bingo-central`")
    path = Path(options.get("config") or default_config_path())
    monitor_port = options.get("monitor-port")  # the option as twist names it
    central = build_central(load_config(path), reactor, monitor_port=int(monitor_port) if monitor_port is not None else None)
    collector.settle()  # the games and the library are built: the collector leaves them be
    return central.service

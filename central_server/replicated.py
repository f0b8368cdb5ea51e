"""The start of one process of a replicated central server (``[replica]``, docs/replica.md).

:mod:`central_server.replica` is the role's lifecycle (active or standby, the lease); this
module is what the composition root does with it.  Before the reactor runs,
:func:`open_replica` waits until the local node answers (:func:`wait_for_node`): beside
Patroni's leader it migrates the database and may begin the journal; beside the standby
it waits until the journal is there.  It verifies the journal itself - a first start on
this node takes the replicated journal's end as its head (:func:`_adopted`) - and reads
the library and the records up to the end it verified.  No checkpoint is kept or
restored on this path: a standby's state is the replicated journal it follows.

:func:`replica_role` wires the role to the server's parts: following the journal the
node receives, the takeover (the migrations, the library, the journal followed to its
end, the leadership taken with its cause, the games folded to the last record), the
active process's services started, and the stop when the role is lost.
"""

from __future__ import annotations

import os
import socket
import time
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from twisted.application.service import MultiService
from twisted.internet import defer
from twisted.logger import Logger

from central_server import leadership, replica, store
from central_server.config import CentralConfig, ReplicaConfig
from central_server.module import SYSTEM
from protocol.chain import ChainError
from server_kit.boot import Foundation, StartRefused, open_journal
from server_kit.clock import JournalClock
from server_kit.db import database as kit
from server_kit.journal import table
from server_kit.journal.sql import Journal, read_head

if TYPE_CHECKING:
    from central_server.server import CentralServer

log = Logger()

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
                 opening: Mapping[str, Any], server: str,
                 timeout_s: float | None = None) -> tuple[Engine, Journal, int, dict[str, np.ndarray], list[Any]]:
    """The local node's database, its journal verified (or begun with ``opening``), the library and the
    journal's records up to the end verified.

    Patroni may restart the node meanwhile (a node rejoining is rewound, then started
    as a standby): a database that goes away half-way is waited for again, and read again.
    """
    while True:
        engine, leads = wait_for_node(config, replica_config, timeout_s)
        try:
            journal = Journal(engine, key, head=config.journal_head)
            if journal.is_new or read_head(journal.head) is not None:
                open_journal(journal, now_ms, opening, server)
                verified = journal.last.seq if journal.last is not None else 0
            else:
                verified = _adopted(journal)
            library = store.provision_library(engine, config.series) if leads else _library_held(config, engine)
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


def replica_role(central: CentralServer, replica_config: ReplicaConfig, base: Foundation, clock: JournalClock,
                 read: Any, active: MultiService) -> replica.ReplicaRole:
    """The role of one process of a replicated central server, wired to this server's parts."""
    config, engine, journal, core, module = central.config, central.engine, central.journal, central.core, central.module
    reactor = base.reactor
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

        def blocking() -> tuple[dict[str, np.ndarray], leadership.Fence, str, list[Any]]:
            kit.upgrade(engine, store.MIGRATIONS)  # nothing to do unless this release brought a migration
            library = store.provision_library(engine, config.series)
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
    probe = replica.PatroniProbe(replica_config.patroni, base.pool("patroni"),
                                 replica.patroni_context(config.pki_dir, config.central_id, replica_config.patroni))
    # The role's lease measures elapsed time: on the timers' clock (monotonic), not the records'.
    role = replica.ReplicaRole(replica_config.node, probe, clock.timers, take_over=take_over, follow=follow,
                               serve=serve, stop=stop)
    return role


__all__ = ["NODE_WAIT_LOG_S", "NODE_WAIT_S", "open_replica", "replica_role", "wait_for_node"]

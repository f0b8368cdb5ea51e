"""What every server does before it serves: its journal verified (or begun), its modules rebuilt.

The hall server, the central server and the regulator's receiver stand on the same
:class:`Foundation` (docs/server-kit.md, "A server, composed"): the database a server opened, its
journal key, its journal with the signed head and the checkpoints, verified before
anything reads it, the services that stop with the process (its run marker written when
they start and removed once all have stopped: :class:`ServerService`), the writer's
thread pool and the command core, recovery, the checkpoint service and the monitor's
readiness.  A server's composition root adds only its own modules and endpoints.

Every start goes the same way:

1. :func:`open_journal`: a new journal (no record, no head) is begun with its opening
   record; any other is verified whole against its signed head before anything reads
   it - every record after the newest trusted checkpoint by hash, link and signature,
   those up to it by hash and link - and a head file that lagged the journal (a stop
   between a commit and the head's write) is brought up to it;
2. :func:`recover`: every module rebuilt from that checkpoint and the records after it,
   or from the whole journal; a checkpoint whose state does not fit the modules is
   passed over for the whole journal, verified first.

Anything that stops a start is a :class:`StartRefused` whose message is the one line the
operator reads.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy.engine import Engine
from twisted.application.service import MultiService
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool

from protocol.chain import ChainError, Record
from protocol.errors import DomainError
from protocol.records import RecordError
from server_kit.clock import JournalClock, schedules_monotonic
from server_kit.core import CheckpointRefused, CommandCore, RunBlocking, thread_pool_runner
from server_kit.health import Monitor
from server_kit.journal.checkpoints import Checkpoint, CheckpointService, CheckpointStore
from server_kit.journal.projection import ProjectionError
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from server_kit.run_marker import RunMarker
from server_kit.services import ThreadPoolService
from server_kit.storage import StorageWatch

log = Logger()

#: What a checkpoint's state that does not fit raises when it is restored: it is then
#: passed over for the whole journal.
UNFIT_CHECKPOINT = (CheckpointRefused, ProjectionError, TypeError, ValueError, KeyError, AttributeError, IndexError)


class StartRefused(DomainError):
    """The server will not serve in the state it found; the message says why."""


def journal_refused(error: ChainError, server: str, advice: str = "") -> StartRefused:
    """The refusal of a start on a journal that does not verify (``advice``: what to run or read)."""
    return StartRefused(
        f"the journal does not verify: {error}; the {server} does not serve on a broken journal"
        + (f" ({advice})" if advice else "")
    )


def open_journal(
    journal: Journal, now_ms: int, opening: Mapping[str, Any], server: str, advice: str = "",
    checkpoints: CheckpointStore | None = None,
) -> Checkpoint | None:
    """Verify the journal before anything reads it, or begin it with ``opening`` if it is new; the
    checkpoint to start from (None: the whole journal).

    A new journal is one with no record and no head: only then is it begun.  Anything
    else must verify against its signed head, whole: the records after the newest trusted
    checkpoint of ``checkpoints`` (or every record when there is none) by hash, link and
    signature, and the records up to the checkpoint by hash and link up to the checkpoint's
    own record (:meth:`Journal.verify_links`), so a record altered anywhere stops the
    start.  A signed checkpoint past the journal's end refuses the start, as a head past
    it does.  ``server`` and ``advice`` name the server and what to do in the refusal.
    """
    try:
        if checkpoints is not None:
            checkpoints.remove_partials()
        # Looked for before a new journal is begun: an emptied journal beside its signed
        # checkpoint is refused, never begun afresh.
        checkpoint = checkpoints.newest_valid(journal) if checkpoints is not None else None
        if journal.is_new:
            first = journal.initialise(now_ms, dict(opening))
            log.info("Started a new journal: record {seq} ({type})", seq=first.seq, type=first.type)
        if checkpoint is not None:
            journal.verify_links((checkpoint.seq, checkpoint.hash), f"the checkpoint {checkpoint.path}")
        anchor = (checkpoint.seq, checkpoint.hash) if checkpoint is not None else None
        last = journal.verify(after=anchor)
    except ChainError as error:
        raise journal_refused(error, server, advice) from None
    if journal.repair_head():
        log.warn("The journal head file lagged the journal; it now names record {seq}", seq=last)
    if checkpoint is None:
        log.info("Journal verified: {n} records, each hash, link and signature, and the signed head", n=last)
    else:
        log.info(
            "Journal verified: {n} records, each hash and link; the {after} after its checkpoint at record {seq} "
            "each signature too; and the signed head",
            n=last, after=last - checkpoint.seq, seq=checkpoint.seq,
        )
    return checkpoint


def recover(
    core: CommandCore, journal: Journal, checkpoint: Checkpoint | None, server: str, advice: str = ""
) -> tuple[int, int]:
    """Every module's state from ``checkpoint`` and the records after it, or from the whole
    journal; the checkpoint's record (0 for none) and how many records were folded.

    A checkpoint whose state does not fit the modules is passed over (and logged): the
    whole journal is then verified, as it was not at the start, and replayed.  A record
    that does not parse refuses the start, naming it.
    """
    if checkpoint is not None:
        try:
            core.restore(checkpoint.state, checkpoint.seq, checkpoint.hash)
        except UNFIT_CHECKPOINT as error:
            log.warn("Checkpoint passed over: {path} does not fit this server's modules ({reason}); replaying the "
                     "whole journal", path=str(checkpoint.path), reason=str(error))
            try:
                journal.verify()
            except ChainError as failed:
                raise journal_refused(failed, server, advice) from None
            checkpoint = None
    start = checkpoint.seq if checkpoint is not None else 0
    try:
        return start, core.recover(start)
    except RecordError as error:
        raise StartRefused(
            f"the journal does not parse: {error}; the {server} does not serve on a journal it cannot read "
            "(docs/journal.md)"
        ) from None


class ServerService(MultiService):
    """A server's services, with its run marker (:mod:`server_kit.run_marker`): written when they
    start, removed once every one of them (the database's writer among them) has stopped.

    A start that finds the marker follows a run that did not stop cleanly (R92.5e).
    ``started``: what runs once the marker is written (the hall journals a restart after a
    crash there); ``stopped``: what runs once every service has stopped, before the marker
    is removed (the receiver disposes of its database there).
    """

    def __init__(self, marker: RunMarker | None, now_ms: Callable[[], int]) -> None:
        super().__init__()
        self.marker = marker
        self.now_ms = now_ms
        self.started: list[Callable[[], Any]] = []
        self.stopped: list[Callable[[], Any]] = []

    def startService(self) -> None:
        if self.marker is not None:
            self.marker.write(self.now_ms())
        for started in self.started:
            started()
        super().startService()

    def stopService(self) -> defer.Deferred[Any]:
        marker = self.marker

        def all_stopped(result: Any) -> Any:
            for then in self.stopped:
                then()
            if marker is not None:
                marker.remove()  # a clean stop: every service, the writer among them, has stopped
            return result

        return defer.maybeDeferred(super().stopService).addCallback(all_stopped)


class JournalOnly:
    """What a checkpoint keeps of a server without a command core (the regulator's receiver: what it
    knows is in its store, and its parts append their records to the journal themselves, on a
    thread of their own): the journal's end, and no module.

    Its checkpoints cost nothing to restore and let the next start verify the signatures
    of the records after them only (:func:`open_journal`).  Each read of :attr:`seq` takes
    the journal's end afresh, and :attr:`last_hash` and :meth:`checkpoint` give that same
    reading (:class:`CheckpointService` reads ``seq`` first), so the record a checkpoint
    names and its hash are one record's whatever is appended meanwhile.  ``observers`` are
    never told (nothing here sees a commit): such checkpoints are written every so many
    seconds and at a clean stop, not every so many records.
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.observers: list[Callable[[Any], None]] = []
        self._end = journal.last

    @property
    def seq(self) -> int:
        """The journal's last record, read now."""
        self._end = self.journal.last
        return self._end.seq if self._end is not None else 0

    @property
    def last_hash(self) -> str | None:
        """The hash of the record :attr:`seq` read last."""
        return self._end.hash if self._end is not None else None

    def settled(self) -> bool:
        return True  # every record is committed when it is appended

    def checkpoint(self) -> dict[str, Any]:
        """The state at the record :attr:`seq` read last: no module, built from the journal."""
        seq = self._end.seq if self._end is not None else 0
        return {"seq": seq, "folded": seq, "modules": {}, "requests": []}


@contextlib.contextmanager
def released_on_failure(engine: Engine) -> Iterator[None]:
    """What runs inside closes ``engine``'s connections if it raises, before the error goes on."""
    try:
        yield
    except BaseException:
        engine.dispose()
        raise


@dataclass
class Foundation:
    """What every server stands on, built by :func:`lay`; its composition root adds its own parts.

    ``name`` is the short name its threads and its monitor carry (``hall``, ``central``, ``regulator``),
    ``server`` what a refused start calls it and ``advice`` what the refusal of a journal
    that does not verify advises.
    """

    reactor: Any
    clock: JournalClock
    name: str
    server: str
    advice: str
    engine: Engine
    key: Ed25519PrivateKey
    journal: Journal
    checkpoints: CheckpointStore | None
    #: The checkpoint the start goes from (None: the whole journal).
    checkpoint: Checkpoint | None
    service: ServerService
    monitor: Monitor
    #: Whether the run before this one did not stop cleanly (its marker was left behind).
    crashed: bool = False
    core: CommandCore | None = None
    storage: StorageWatch | None = None
    #: The record of the checkpoint the start restored (0: the whole journal was replayed).
    recovered_from: int = 0
    checkpointing: CheckpointService | None = None
    _journal_ready: Callable[..., Any] = field(default=lambda: None, repr=False)

    def built(self) -> contextlib.AbstractContextManager[None]:
        """The composition root's work on the foundation: when it raises (a certificate missing, a
        port refused), the database's connections are closed before the error goes on.  Nothing
        else runs yet: the pools and services start with the reactor."""
        return released_on_failure(self.engine)

    def pool(self, purpose: str, threads: int = 1, *, at_least: int = 0) -> RunBlocking:
        """A thread pool of the server's own (``{name}-{purpose}``) that starts and stops with it."""
        pool = ThreadPool(minthreads=at_least, maxthreads=threads, name=f"{self.name}-{purpose}")
        ThreadPoolService(pool).setServiceParent(self.service)
        return thread_pool_runner(self.reactor, pool)

    def command_core(self, parent: MultiService | None = None) -> CommandCore:
        """The command core over the journal, committing on a writer thread of its own, and the
        watch that tries a failing storage again until it takes commits (docs/crash-recovery.md).

        Records are stamped by the wall clock from the journal's last record on, never
        backwards.  ``parent``: where the watch runs (default: the server's services).
        """
        core = CommandCore(self.journal, self.clock, self.pool("db-writer", at_least=1))
        if self.journal.last is not None:
            self.clock.continue_from(self.journal.last.time_ms)
        self.storage = StorageWatch(core, self.clock, core.run_blocking, self.journal.probe)
        self.storage.setServiceParent(parent if parent is not None else self.service)
        self.core = core
        return core

    def recover(self, records: Iterable[Record] | None = None) -> int:
        """Every module of the core rebuilt from the checkpoint and the records after it, or from the
        whole journal (:func:`recover`); how many records were folded.  The monitor's readiness
        then no longer waits for the journal.

        ``records``: the records the server read and verified itself, folded instead (a
        replicated central server's, up to the end it verified; no checkpoint then).
        """
        assert self.core is not None, "recover() needs command_core() first"
        if records is None:
            self.recovered_from, count = recover(self.core, self.journal, self.checkpoint, self.server, self.advice)
        else:
            count = self.core.recover(records=records)
        self._journal_ready()
        return count

    def journal_only(self) -> JournalOnly:
        """For a server without a command core: its journal's end to checkpoint (:class:`JournalOnly`).

        There is nothing to replay, so the start stands on the checkpoint it verified from and
        the monitor's readiness no longer waits for the journal."""
        self.recovered_from = self.checkpoint.seq if self.checkpoint is not None else 0
        self._journal_ready()
        return JournalOnly(self.journal)

    def checkpoint_every(self, records: int, seconds: float, core: Any = None) -> CheckpointService:
        """Checkpoints of the core's state every ``records`` records or ``seconds`` with records since
        the last, and at a clean stop, written on a thread of their own."""
        assert self.checkpoints is not None, "this server keeps no checkpoints"
        kept = core if core is not None else self.core
        assert kept is not None, "checkpoint_every() needs command_core() or a core to keep"
        pool = ThreadPool(minthreads=0, maxthreads=1, name=f"{self.name}-checkpoint")
        restored = self.checkpoint if self.checkpoint is not None and self.recovered_from else None
        self.checkpointing = CheckpointService(
            kept, self.checkpoints, self.clock,
            thread_pool_runner(self.reactor, pool), pool=pool, written_seq=self.recovered_from,
            written_ms=restored.time_ms if restored is not None else None, every_records=records, every_seconds=seconds,
        )
        self.checkpointing.setServiceParent(self.service)
        if self.core is not None and core is None:
            self.monitor.watch_checkpoints(self.checkpointing, self.core, self.clock)
        return self.checkpointing


def lay(
    reactor: Any, clock: JournalClock, engine: Engine, *, name: str, server: str, advice: str, home: Path,
    key_path: Path, head: Path, opening: Mapping[str, Any], release: str = "", checkpoints: Path | None = None,
    marker: bool = True, journal: Journal | None = None, service: type[ServerService] = ServerService,
) -> Foundation:
    """The foundation of a server on ``engine`` (its migrations applied): its journal key (made on a
    first start), its journal begun or verified (:func:`open_journal`), its services.

    ``checkpoints``: the folder of the server's signed checkpoints (bound to ``release``);
    None keeps none.  ``marker``: whether the server keeps a run marker in ``home``.
    ``journal``: one the server opened itself and verified (a replicated central server's);
    it is then taken as it is.  ``service``: the class of the server's services (one that also
    holds the server's parts, say).  Raises :class:`StartRefused` with the one line the
    operator reads; a journal that does not verify leaves the run marker, so the start after
    it is one after a crash (R92.5e).
    """
    run_marker = RunMarker(home) if marker else None
    crashed = run_marker.left_behind() if run_marker is not None else False  # before this run writes its own
    key = load_journal_key(key_path, create=True)
    store = CheckpointStore(checkpoints, key, release) if checkpoints is not None else None
    checkpoint = None
    if journal is None:
        journal = Journal(engine, key, head=head)
        try:
            checkpoint = open_journal(journal, clock.now_ms(), opening, server, advice, store)
        except StartRefused:
            if run_marker is not None:
                run_marker.write(clock.now_ms())
            raise
    monitor = Monitor(name)
    ready = monitor.require_flag("journal", "the journal is not verified and replayed yet")
    return Foundation(reactor, clock, name, server, advice, engine, key, journal, store, checkpoint,
                      service(run_marker, clock.now_ms), monitor, crashed=crashed, _journal_ready=ready)


def prepare_process(reactor: Any, how_to_run: str) -> None:
    """What every server's process does first: warn when the reactor's timers run on the wall clock
    (``how_to_run`` names the commands that run the monotonic one), leave a fatal signal's
    traceback in the log (SIGBUS from a mapped database file, SIGSEGV), and make whatever the
    process writes (its database, head, keys, reports) its user's alone."""
    if not schedules_monotonic(reactor):
        log.warn("This reactor's timers run on the wall clock, which a step holds up: run {how} "
                 "(docs/server-kit.md, \"Clocks\")", how=how_to_run)
    faulthandler.enable()
    os.umask(0o077)

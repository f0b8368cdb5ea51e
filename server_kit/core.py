"""The command loop of every server: decide, apply, commit, announce.

Every change to a server's state goes through :meth:`CommandCore.execute`:

1. **permission** - the actor's role must be allowed the command; each server gives
   its own roles (strings, usually a ``StrEnum``) and its permission table;
2. **decide** - a pure function of the current state and the time returns the facts
   (journal entries) the command produces, or raises a :class:`DomainError` whose
   message goes back to the caller; nothing has changed;
3. **apply** - the entries are built through their declarations (:mod:`protocol.records`:
   an undeclared type or a bad field refuses the whole command), sealed (after the
   last record), and every module folds
   them into its in-memory state (the same code rebuilds the state from the journal
   at start: crash recovery);
4. **commit** - the records are appended to the journal on the database's single
   writer thread, in one transaction;
5. **announce** - the views (what consoles and boards show) fold the committed
   records, observers (consoles, boards, terminals, peers) hear of them, and the
   caller is answered.

**Group commit.**  A command is decided as soon as it comes, on the state the commands
before it left, committed or not yet: the modules fold a command's records as soon as
it is decided.  One transaction is in flight at a time; the records of the commands
decided meanwhile are committed together in the next one, which goes to the writer as
soon as the one before is committed, before its answers go out.  Only after that commit are
the views and observers told and each caller answered with its own records.  A refusal
(permission, :class:`DomainError`) affects only its own command.  If a transaction
fails, the modules are put back to the state before the batch, without reading the
storage (see *A failed commit* below), and every command decided on the batch fails
with the reason.  A crash before 4 ends loses only what nobody was told; a crash after
it loses nothing (the journal is the state).

**A failed commit changes nothing.**  The modules fold a command's records before they
are committed, so that the next command is decided on the state they leave; a batch
whose commit fails must therefore be taken back, and the storage that just failed
cannot be asked how.  The core keeps a *restore point*: every module's state at a
committed record, and the records committed after it.  On a failed commit each module
is put back to the restore point and those records are folded again - in memory, the
journal is not read - which is exactly the state before the batch.  The restore point
is each module's in-memory ``savepoint()`` where it has one (``rollback(point)`` takes it
back), else its checkpoint (``checkpoint()`` / ``restore(data)``); a module with neither
is reset and folds every record the core folded since it was made.  A new restore
point is taken when the core is settled (nothing decided waits for a commit) and
:data:`RESTORE_POINT_RECORDS` records were committed after the last one, at the end of
a recovery, and with each checkpoint (whose state it is), so the records kept stay few.
The views fold records only once committed: nothing to take back there.

**Storage unavailable.**  A commit that fails because of the storage raises
:class:`~server_kit.db.faults.StorageUnavailable` (the journal names the fault: disk
full, read-only, locked, unreachable).  Then every command of the batch is answered at
once with that error, and the core *refuses every new command* with it
(:attr:`CommandCore.storage_fault`) until the storage is back; its listeners
(:attr:`CommandCore.storage_listeners`: the consoles' alarm, the demo's pause) are told
both ways.  :class:`server_kit.storage.StorageWatch` tries the storage again with back-off on the reactor's
clock (:meth:`~server_kit.journal.sql.Journal.probe`, on the writer's thread): once a
write goes through and the journal's end in the database is the last record the core
committed, the core resumes from exactly the state it held - nothing was read back into
an emptied state.  If the failed batch is found in the database after all (the
connection was lost after the database committed it), its records are verified and
folded as committed, and staff are told in the log: a command answered with the
storage error was carried out (sent again with its request id, it is answered as a
repeat).  A journal whose end is anything else keeps the server refusing commands,
and says so: only a restart, which verifies the journal, may go on from there.

**Request ids.**  A command that comes with the sender's request id (the console's
command channel) runs through :meth:`CommandCore.once`: the id is stamped on every record
the command commits (``"actor": {"name", "role", "request"}``), and the core remembers
which records each ``(staff member, request id)`` committed, folded from the journal
like any projection, so the memory survives a reconnect and a restart.  A request
whose id is known, or still running, is not carried out again: it is answered with
the records the first one committed (:class:`Repeated`).

**The epoch.**  A core whose :attr:`CommandCore.epoch` is set (the central server's,
once it holds the leadership: :mod:`central_server.leadership`) stamps that epoch on
every record it commits (``"epoch": N``); a hall's core leaves it ``None`` and its
records carry none.  Refusing the records of a process whose epoch is fenced is the
journal's commit guard (:attr:`server_kit.journal.sql.Journal.guard`), in the commit's
own transaction: such a commit fails like any other, and the modules are put back.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from twisted.internet import defer
from twisted.internet.interfaces import IReactorThreads
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from protocol.chain import KeptRecord, Record, as_kept, from_kept
from protocol.errors import DomainError
from protocol.records import ActorStamp, JournalRecord, declared, forget_declared
from server_kit.actors import Actor as Actor  # the loop's actor, imported from here by the servers
from server_kit.db.faults import StorageUnavailable
from server_kit.journal.port import JournalPort
from server_kit.journal.projection import gc_paused


#: How many request ids the core remembers (the latest ones): weeks of a server's commands.
REMEMBERED_REQUESTS = 100_000
#: Records committed after the restore point after which a new one is taken (when settled):
#: what a failed commit folds again at most, and what the core keeps in memory meanwhile.
RESTORE_POINT_RECORDS = 10_000
#: Records let go at a time once a new restore point no longer needs them (see ``_let_go``).
LET_GO_RECORDS = 1_000
RequestKey = tuple[str, str]  # (staff member, request id)


class NotAllowed(DomainError):
    """The actor's role may not give this command."""


@dataclass(frozen=True)
class Repeated:
    """The answer to a request carried out before: the ``(seq, type)`` of the records it committed."""

    request: str
    records: tuple[tuple[int, str], ...]


class Clock(Protocol):
    """What the core needs of a reactor's clock (``IReactorTime.seconds``; ``task.Clock`` in tests)."""

    def seconds(self) -> float: ...


class Module(Protocol):
    """A part of a server's state: folds records into itself.

    A module folds a command's records as soon as the command is decided, before they
    are committed, so that the next command of the batch is decided on the state they
    leave; when the batch's commit fails the core puts the module back to its restore
    point and folds the records committed since (see the module docstring).  So
    ``apply`` changes nothing but the module's own state.

    A module that can be checkpointed also has ``checkpoint() -> JSON-able`` (its
    projection) and ``restore(data)`` (take it back, raising before it changes anything
    when it cannot); see :meth:`CommandCore.checkpoint`.  So does a view.  ``restore``
    must not keep ``data`` itself: the core restores the same data again after another
    failed commit.  A module whose checkpoint is costly may offer ``savepoint() -> Any``
    (an in-memory copy of its state, cheap to take) and ``rollback(point)`` instead, for
    the restore point.
    """

    def apply(self, record: Record) -> None: ...

    def reset(self) -> None:
        """Forget everything folded so far (the core then folds the records again: at start, or a
        module that cannot be kept, after a failed commit)."""
        ...


class View(Protocol):
    """A projection shown to people (consoles, boards): folds records once committed."""

    def apply(self, record: Record) -> None: ...


class CheckpointRefused(DomainError):
    """A checkpoint's state that does not fit this server's modules; the message says why."""


#: A decision: the time in, the facts out - declared records (protocol.records), each
#: checked as it was made; nothing else is sealed into a server's journal.
Decide = Callable[[int], Sequence[JournalRecord]]
#: Runs a blocking function off the reactor thread: ``deferToThreadPool`` on the
#: database's single writer pool in the server, a synchronous call in unit tests.
RunBlocking = Callable[..., "defer.Deferred[Any]"]


def thread_pool_runner(reactor: IReactorThreads, pool: ThreadPool) -> RunBlocking:
    def run(function: Callable[..., Any], *args: Any) -> "defer.Deferred[Any]":
        return deferToThreadPool(reactor, pool, function, *args)

    return run


def run_inline(function: Callable[..., Any], *args: Any) -> "defer.Deferred[Any]":
    """The unit-test runner: call at once, on this thread."""
    return defer.maybeDeferred(function, *args)


@dataclass(frozen=True)
class CommandSpec:
    """A command the edges (console, terminals, CLI) may call by name.

    ``params`` maps each argument to its JSON type: ``int``, ``str``, ``bool``,
    ``list[int]``, ``list[str]`` or ``dict``; the edge validates a request against it
    and calls ``handler(actor, **arguments)``.  Who may call it is the core's
    permission table, under the same name.
    """

    name: str
    handler: Callable[..., "defer.Deferred[Any]"]
    params: Mapping[str, Any]
    summary: str


#: A module with neither a savepoint nor a checkpoint: reset, and every record folded since.
_RESET = object()


@dataclass
class _RestorePoint:
    """Every module's state at committed record ``seq`` (``_RESET``: its state when it was made)."""

    seq: int
    last_hash: str | None
    folded: int
    kept: list[Any]
    requests: OrderedDict[RequestKey, list[tuple[int, str]]]


@dataclass(eq=False)
class _Command:
    """A command decided and waiting for its commit: its records, or why it was refused."""

    actor: Actor
    name: str
    decide: Decide
    done: "defer.Deferred[list[Record]]"
    records: list[Record] = field(default_factory=list)
    refused: Failure | None = None


class CommandCore:
    log = Logger()

    def __init__(
        self,
        journal: JournalPort,
        clock: Clock,
        run_blocking: RunBlocking,
        permissions: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.journal = journal
        self.clock = clock
        self.run_blocking = run_blocking
        self.permissions = dict(permissions or {})
        #: The leadership epoch stamped on every record committed (None: none is; a hall's core).
        self.epoch: int | None = None
        self.modules: list[Module] = []
        self.views: list[View] = []
        self.commands: dict[str, CommandSpec] = {}
        self.observers: list[Callable[[Record], None]] = []
        #: Called once a commit's commands have all been answered (what they made is in hand
        #: together: a hall relays the purchases one commit holds in one message).
        self.after_commit: list[Callable[[], None]] = []
        #: True while a commit's commands are being answered.
        self.answering = False
        #: The seq of the last record decided: committed, or in the batch being committed.
        self.seq = journal.last.seq if journal.last else 0
        #: How many transactions the core has committed (each holds one batch of commands).
        self.commits = 0
        #: The hash of the last record folded into the modules (what a checkpoint is bound to).
        self.last_hash: str | None = journal.last.hash if journal.last else None
        #: How many records the modules hold, counted from the journal's first: ``seq`` once
        #: they are built from the journal (a checkpoint of any other state is refused).
        self.folded = 0
        # (staff member, request id) -> the records that request committed, oldest first
        self.requests: OrderedDict[RequestKey, list[tuple[int, str]]] = OrderedDict()
        self._running: dict[RequestKey, list[defer.Deferred[Any]]] = {}
        self._pending: list[_Command] = []  # decided, for the next transaction
        self._in_flight: list[_Command] | None = None  # being committed, or answered
        self._tail: Record | None = journal.last  # the last record decided, sealed
        self._flushing: list[tuple[_Command, defer.Deferred[None]]] = []  # (the last command waited for, fired then)
        self._pumping = False
        #: The storage's fault while it is unavailable (every command is refused with it), else None.
        self.storage_fault: StorageUnavailable | None = None
        #: Told ``(fault)`` when the storage becomes unavailable, and ``(None)`` when it is back.
        self.storage_listeners: list[Callable[[StorageUnavailable | None], None]] = []
        # The records of the batch whose commit failed for the storage: the database may hold
        # them after all (a connection lost after its commit), which the storage's return shows.
        self.unconfirmed: list[Record] = []
        # The restore point (modules as made: reset) and the committed records folded after it:
        # those read at recovery as they were read, those committed here as they were stored.
        self._point = _RestorePoint(self.seq, self.last_hash, 0, [], OrderedDict())
        self._since: list[Record | KeptRecord] = []
        #: Told ``(command, refusal)`` as each command is answered (``refusal`` None when it was
        #: carried out): a server's metrics count them (server_kit/health.py).
        self.answered: list[Callable[[str, BaseException | None], None]] = []
        #: Told each commit's duration in seconds, on the monotonic clock, when it succeeded or failed.
        self.commit_timed: list[Callable[[float], None]] = []
        self._commit_started = 0.0

    def add_module(self, module: Module) -> None:
        self.modules.append(module)

    def add_view(self, view: View) -> None:
        """A projection shown to people: folds records only once they are committed."""
        self.views.append(view)

    def register(self, spec: CommandSpec) -> None:
        if spec.name in self.commands:
            raise ValueError(f"command {spec.name!r} is registered twice")
        if spec.name not in self.permissions:
            raise ValueError(f"command {spec.name!r} has no permission entry")
        self.commands[spec.name] = spec

    def allow(self, permissions: Mapping[str, Iterable[str]]) -> None:
        for command, roles in permissions.items():
            self.permissions[command] = frozenset(roles) | self.permissions.get(command, frozenset())

    def recover(self, after: int = 0, records: Iterable[Record] | None = None) -> int:
        """Rebuild every module's state from the journal's records after ``after`` (at start,
        before serving: from the first record, or from a checkpoint's); how many were folded.

        ``records`` (the records after :attr:`seq`, read off the reactor thread) are folded
        instead of reading the journal: a central server's standby follows what its
        replica received that way.  Every record is read through its declaration
        (:func:`protocol.records.declared`) before any module sees it: one that does not
        parse stops recovery with a :class:`~protocol.records.RecordError` naming its
        ``seq`` and the reason.
        """
        count = 0
        for record in self.journal.records(after) if records is None else records:
            declared(record)
            self._apply(record)
            self._since.append(record)
            for view in self.views:
                view.apply(record)
            count += 1
        self._tail = self.journal.last
        self._refresh_restore_point(at_least=1 if not self._point.kept else None)
        return count

    def _kept(self) -> list[Any]:
        """What a checkpoint keeps: every module and every view."""
        return [*self.modules, *self.views]

    def settled(self) -> bool:
        """No decided record waits for its commit: the modules hold exactly the journal's state."""
        last = self.journal.last
        return self.seq == (last.seq if last is not None else 0)

    def flushed(self) -> defer.Deferred[None]:
        """Fires once every command decided so far has been committed (or has failed) and answered;
        at once when none waits.

        For a step that is slow to decide and need not come sooner: waiting for this, the
        callers of the commands before it hear their answers first (the network sale's
        close, which builds the winners' detector over every card, after the purchases).
        """
        waiting = self._pending or self._in_flight
        if not waiting:
            return defer.succeed(None)
        fired: defer.Deferred[None] = defer.Deferred()
        self._flushing.append((waiting[-1], fired))
        return fired

    def _fire_flushed(self) -> None:
        if not self._flushing:
            return
        waiting = {id(command) for command in [*(self._in_flight or []), *self._pending]}
        done = [fired for command, fired in self._flushing if id(command) not in waiting]
        self._flushing = [(command, fired) for command, fired in self._flushing if id(command) in waiting]
        for fired in done:
            fired.callback(None)

    def module_names(self) -> list[str]:
        """Each module's name in a checkpoint: its class's, numbered when a class is there twice."""
        names: list[str] = []
        for module in self._kept():
            name = type(module).__qualname__
            names.append(name if name not in names else f"{name}#{names.count(name) + 1}")
        return names

    def checkpoint(self) -> dict[str, Any]:
        """Every module's projection and the remembered request ids, as JSON-able data.

        Raises :class:`CheckpointRefused` when a module cannot be checkpointed (it has no
        ``checkpoint``): such a server always replays its whole journal.
        """
        if not self.settled():
            raise CheckpointRefused("records decided are still waiting for their commit")
        if self.folded != self.seq:
            raise CheckpointRefused(f"the state holds {self.folded} of the journal's {self.seq} records: it was not "
                                    "built from the journal")
        state = self._snapshot()
        self._set_restore_point(state["modules"])  # the same state: the restore point costs nothing more
        return state

    def _snapshot(self) -> dict[str, Any]:
        modules: dict[str, Any] = {}
        with gc_paused():
            for name, module in zip(self.module_names(), self._kept()):
                snapshot = getattr(module, "checkpoint", None)
                if snapshot is None or not hasattr(module, "restore"):
                    raise CheckpointRefused(f"the module {name} cannot be checkpointed")
                modules[name] = snapshot()
            requests = [[name, request, [list(r) for r in records]] for (name, request), records in self.requests.items()]
        return {"seq": self.seq, "folded": self.folded, "modules": modules, "requests": requests}

    def restore(self, state: Mapping[str, Any], seq: int, hash: str) -> None:
        """Take every module's projection from a checkpoint's ``state`` at record ``seq``.

        Raises :class:`CheckpointRefused` (or the module's own error) when the state does
        not fit: then every module is put back as it was, and the caller replays the
        whole journal instead.
        """
        names = self.module_names()
        modules = state.get("modules")
        if state.get("seq") != seq or not isinstance(modules, dict):
            raise CheckpointRefused("the checkpoint holds other modules than this server's")
        if state.get("folded") != seq:
            raise CheckpointRefused(f"the checkpoint's state was not built from the journal's {seq} records")
        missing = [name for name in names if name not in modules]
        if missing:  # its state is every record's: only the whole journal gives it
            raise CheckpointRefused(f"the checkpoint holds other modules than this server's: none of {', '.join(missing)}")
        # A module this server does not run (an optional part, as the demo's video bingo
        # machine) folds nothing here, whether the journal is replayed or not: its part is
        # left out, and the state of the others is the same as a whole replay gives.
        unused = sorted(set(modules) - set(names))
        before = self._snapshot()
        try:
            with gc_paused():
                for name, module in zip(names, self._kept()):
                    module.restore(modules[name])  # type: ignore[attr-defined]
            self.requests = OrderedDict(
                ((str(name), str(request)), [(int(s), str(t)) for s, t in records])
                for name, request, records in state["requests"]
            )
        except Exception:
            for name, module in zip(names, self._kept()):
                module.restore(before["modules"][name])  # type: ignore[attr-defined]
            self.requests = OrderedDict(((n, r), [tuple(x) for x in records]) for n, r, records in before["requests"])
            raise
        self.seq, self.last_hash, self.folded = seq, hash, seq
        if unused:
            self.log.info("The checkpoint's state of {modules} is left out: this server runs no such module",
                          modules=", ".join(unused))
        self._since = []
        self._set_restore_point(modules)

    def now_ms(self) -> int:
        return int(self.clock.seconds() * 1000)

    def check_permission(self, actor: Actor, command: str) -> None:
        roles = self.permissions.get(command)
        if roles is None:
            raise NotAllowed(f"unknown command {command!r}")
        if actor.role not in roles:
            allowed = ", ".join(sorted(str(r).replace("_", " ") for r in roles))
            raise NotAllowed(
                f"{actor.name} ({str(actor.role).replace('_', ' ')}) may not {command.replace('_', ' ')}; "
                f"that is for: {allowed}"
            )

    def execute(self, actor: Actor, command: str, decide: Decide) -> defer.Deferred[list[Record]]:
        """Run one command; fires with the committed records, or fails with the reason.

        The command is decided at once, on the state the commands before it left
        (committed or not yet); its records go in the next transaction, with those of
        every command decided while the last one was in flight.
        """
        pending = _Command(actor, command, decide, defer.Deferred())
        self._decide(pending)
        self._pending.append(pending)
        self._pump()
        return pending.done

    def once(
        self, actor: Actor, request: str, run: Callable[[Actor], "defer.Deferred[Any]"]
    ) -> defer.Deferred[Any]:
        """Run ``run(actor with request)`` unless ``actor`` already sent ``request``.

        A request carried out before (its records are in the journal) fires with
        :class:`Repeated` at once; one still running fires with :class:`Repeated` once it
        is done (or with its refusal, if it committed nothing and failed).
        """
        key = (actor.name, request)
        # Running first: a request decided but not yet committed is in ``requests``
        # already, and its repeat must wait for the commit (which may still fail).
        waiting = self._running.get(key)
        if waiting is not None:
            repeat: defer.Deferred[Any] = defer.Deferred()
            waiting.append(repeat)
            return repeat
        if key in self.requests:
            return defer.succeed(Repeated(request, tuple(self.requests[key])))
        self._running[key] = []
        running = defer.maybeDeferred(run, replace(actor, request=request))

        def finished(outcome: Any) -> Any:
            for repeat in self._running.pop(key, []):
                if key in self.requests or not isinstance(outcome, Failure):
                    repeat.callback(Repeated(request, tuple(self.requests.get(key, ()))))
                else:
                    repeat.errback(outcome)
            return outcome

        return running.addBoth(finished)

    def known_request(self, actor: Actor, request: str) -> bool:
        """Whether ``actor`` sent ``request`` before and it committed something, or it is running."""
        key = (actor.name, request)
        return key in self.requests or key in self._running

    # --- Group commit ---------------------------------------------------------------------
    #
    # A command is decided as soon as it comes, and its records are folded into the modules
    # at once, so the next command is decided on the state it leaves.  One transaction is
    # in flight at a time; the commands decided meanwhile wait in ``_pending`` and are
    # committed together in the next one.  Only after a commit are the views and observers
    # told and each caller answered.  When a commit fails, the modules are rebuilt from the
    # journal (the state before the batch) and every command decided on the batch fails.

    def _pump(self) -> None:
        if self._pumping:
            return  # the loop below, further up this stack, takes the next batch
        self._pumping = True
        try:
            while self._in_flight is None and self._pending:
                batch, self._pending = self._pending, []
                self._in_flight = batch
                records = [record for command in batch for record in command.records]
                if not records:
                    self._answer(batch)
                    continue
                self._commit_started = time.monotonic()
                committed = defer.maybeDeferred(self.run_blocking, self.journal.commit, records)
                committed.addCallbacks(lambda stored, b=batch: self._answer(_as_stored(b, stored)),
                                       lambda f, b=batch: self._fail(b, f))
                committed.addErrback(lambda f: self.log.failure("answering a batch of commands failed", f))
        finally:
            self._pumping = False

    def _uncommitted(self) -> list[Record]:
        return [record for command in (self._in_flight or []) + self._pending for record in command.records]

    def _decide(self, command: _Command) -> None:
        if self.storage_fault is not None:  # nothing can be committed: refused before it is decided
            command.refused = Failure(self.storage_fault)
            return
        if self._in_flight is None and not self._pending:
            self._tail = self.journal.last  # nothing is waiting: the command follows the journal
        try:
            self.check_permission(command.actor, command.name)
            now = self.now_ms()
            entries = [_stamped(command.name, entry, command.actor, self.epoch) for entry in command.decide(now)]
            records = self.journal.seal(now, entries, self._tail)
        except Exception:
            command.refused = Failure()
            return
        try:
            for record in records:
                self._apply(record)
        except Exception:
            # A module could not fold its own command's records (a fault in the module):
            # the command fails, and the state is put back to what the others left.
            command.refused = Failure()
            self.log.failure("a module could not fold the records of {command}", command.refused, command=command.name)
            self._roll_back(self._uncommitted())
            return
        command.records = records
        if records:
            self._tail = records[-1]

    def _answer(self, batch: Sequence[_Command]) -> None:
        if any(command.records for command in batch):
            self.commits += 1
            self._timed()
        # The next batch goes to the writer before this one's answers go out: its commit runs on the
        # writer's thread meanwhile (its outcome comes back through the reactor, after these answers).
        self._in_flight = None
        self._pump()
        for command in batch:
            for record in command.records:
                self._committed(record)
        self.answering = True
        try:
            for command in batch:
                self._tell_answered(command.name, command.refused)
                if command.refused is not None:
                    command.done.errback(command.refused)
                else:
                    command.done.callback(command.records)
        finally:
            self.answering = False
        for listener in list(self.after_commit):
            try:
                listener()
            except Exception:
                self.log.failure("a listener of the commits failed")
        for command in batch:
            for record in command.records:
                # Folded, told and answered: the declared record is let go (the restore point keeps
                # the record, which parses again if it is ever folded again).
                forget_declared(record)
        if not self._pending and self._in_flight is None:
            self._refresh_restore_point()
        self._fire_flushed()
        self._pump()

    def _committed(self, record: Record) -> None:
        """``record`` is in the journal (folded into the modules already): kept for the restore
        point as stored (its payload's JSON text, not its tree of objects: the collector need not
        walk ten thousand of them), folded by the views, announced."""
        self._since.append(as_kept(record))
        for view in self.views:
            try:
                view.apply(record)
            except Exception:
                self.log.failure("a view failed on record {seq}", seq=record.seq)
        self._announce(record)

    def _timed(self) -> None:
        elapsed = time.monotonic() - self._commit_started
        for listener in self.commit_timed:
            listener(elapsed)

    def _tell_answered(self, command: str, refusal: Failure | None) -> None:
        for listener in self.answered:
            try:
                listener(command, refusal.value if refusal is not None else None)
            except Exception:
                self.log.failure("a listener of the answers failed")

    def refused_before(self, command: str, refusal: BaseException) -> None:
        """An edge refused ``command`` before it reached the core (not allowed, unknown, bad
        arguments): told to the listeners of the answers as a refusal of the core is."""
        self._tell_answered(command, Failure(refusal))

    def _fail(self, batch: Sequence[_Command], failure: Failure) -> None:
        self._timed()
        fault = failure.value if isinstance(failure.value, StorageUnavailable) else None
        if fault is not None:
            self.log.critical("A commit of {n} commands failed: {fault} (record {seq} is the last committed)",
                              n=len(batch), fault=str(fault), seq=self.journal.last.seq if self.journal.last else 0)
            self.unconfirmed = [record for command in batch for record in command.records]
        else:
            self.log.failure("a commit of {n} commands failed; none of them is carried out", failure, n=len(batch))
        # The commands decided while it was in flight were decided on it: they fail with it.
        failed, self._pending = [*batch, *self._pending], []
        self._in_flight = None
        self._roll_back([])
        if fault is not None:
            self._storage_changed(fault)  # refusing from now: nothing decided below is new
        # Up to the first command with records, each was decided on the committed state and
        # its answer stands; from it on, each was decided on the batch, which did not happen.
        decided_on_it = False
        for command in failed:
            decided_on_it = decided_on_it or bool(command.records)
            if decided_on_it:
                self._tell_answered(command.name, failure)
                command.done.errback(failure)
            elif command.refused is not None:
                self._tell_answered(command.name, command.refused)
                command.done.errback(command.refused)
            else:
                self._tell_answered(command.name, None)
                command.done.callback([])
        self._fire_flushed()
        self._pump()

    # --- The restore point and the storage's faults --------------------------------------

    def unkept_modules(self) -> list[str]:
        """The modules with neither a savepoint nor a checkpoint, by name: while there is one, the core
        takes no restore point, keeps every record committed since the start in memory, and a failed
        commit folds them all again (every module of the hall and of the central server has one)."""
        return [name for name, m in zip(self.module_names(), self.modules)
                if not (hasattr(m, "savepoint") or (hasattr(m, "checkpoint") and hasattr(m, "restore")))]

    def _keepable(self) -> bool:
        return not self.unkept_modules()

    def _set_restore_point(self, checkpointed: Mapping[str, Any] | None = None) -> None:
        """The modules' state now (committed: the core is settled) as the restore point.

        ``checkpointed``: their checkpoints already made of this very state, by name.
        """
        if not self._keepable():
            return  # a module that can only be reset: every record since the start is kept
        names = self.module_names()  # the modules' names come first, the views' after them
        kept = []
        with gc_paused():
            for name, module in zip(names, self.modules):
                savepoint = getattr(module, "savepoint", None)
                if savepoint is not None:
                    kept.append(savepoint())
                elif checkpointed is not None and name in checkpointed:
                    kept.append(checkpointed[name])
                else:
                    kept.append(module.checkpoint())  # type: ignore[attr-defined]
            requests = OrderedDict((key, list(records)) for key, records in self.requests.items())
        self._point = _RestorePoint(self.seq, self.last_hash, self.folded, kept, requests)
        released, self._since = self._since, []
        self._let_go(released)

    def _let_go(self, records: list[Record | KeptRecord]) -> None:
        """Let the records the last restore point kept go a slice at a time, between the reactor's
        other work: freeing 10,000 records at once held it up for 90-100 ms."""
        later = getattr(self.clock, "callLater", None)  # a clock with timers: the reactor's
        if later is None or len(records) <= LET_GO_RECORDS:
            return

        def step() -> None:
            del records[-LET_GO_RECORDS:]
            if records:
                later(0, step)

        later(0, step)

    def _refresh_restore_point(self, at_least: int | None = None) -> None:
        due = RESTORE_POINT_RECORDS if at_least is None else at_least
        if len(self._since) >= due and self.settled() and self.storage_fault is None:
            self._set_restore_point()

    def _roll_back(self, uncommitted: Sequence[Record]) -> None:
        """The modules at the restore point with the records committed since folded again (the
        committed state, from memory: the journal is not read), then ``uncommitted``."""
        point = self._point
        with gc_paused():
            for index, module in enumerate(self.modules):
                kept = point.kept[index] if index < len(point.kept) else _RESET
                if kept is _RESET:
                    module.reset()
                elif hasattr(module, "savepoint"):
                    module.rollback(kept)  # type: ignore[attr-defined]
                else:
                    module.restore(kept)  # type: ignore[attr-defined]
            self.requests = OrderedDict((key, list(records)) for key, records in point.requests.items())
            self.seq, self.last_hash, self.folded = point.seq, point.last_hash, point.folded
            for entry in self._since:
                self._apply(entry if isinstance(entry, Record) else from_kept(entry))
        self._tail = self.journal.last
        for record in uncommitted:
            self._apply(record)
            self._tail = record

    def _storage_changed(self, fault: StorageUnavailable | None) -> None:
        self.storage_fault = fault
        for listener in list(self.storage_listeners):
            try:
                listener(fault)
            except Exception:
                self.log.failure("a listener of the storage's state failed")

    def storage_still_unavailable(self, fault: StorageUnavailable) -> None:
        """A new try found the storage still unavailable; ``fault`` says how now (it may have changed)."""
        if self.storage_fault is not None and str(fault) != str(self.storage_fault):
            self.log.critical("The storage is still unavailable: {fault}", fault=str(fault))
            self._storage_changed(fault)

    def storage_back(self, adopted: Sequence[Record]) -> None:
        """The storage takes writes again and the journal ends where the core stands (after
        ``adopted``: the failed batch, found committed after all): commands are taken again.

        ``adopted`` (verified by the journal, :meth:`~server_kit.journal.sql.Journal.probe`)
        were folded into no module since their batch was taken back: they are folded now,
        as committed records are.
        """
        if self.storage_fault is None:
            return
        if adopted:
            self.log.critical(
                "The commit that failed reached the database after all: records {first} to {last} are in the journal "
                "although their commands were answered with the storage error; they stand (sent again with the same "
                "request id, such a command is answered as a repeat)",
                first=adopted[0].seq, last=adopted[-1].seq,
            )
            for record in adopted:
                self._apply(record)
                self._committed(record)
            self._tail = adopted[-1]
            for listener in list(self.after_commit):
                try:
                    listener()
                except Exception:
                    self.log.failure("a listener of the commits failed")
        self.unconfirmed = []
        self.log.info("The storage is back: {fault} no longer holds; commands are taken again from record {seq}",
                      fault=self.storage_fault.kind, seq=self.seq)
        self._storage_changed(None)
        self._pump()

    def _apply(self, record: Record) -> None:
        for module in self.modules:
            module.apply(record)
        self.seq, self.last_hash = record.seq, record.hash
        self.folded += 1
        stamp = record.payload.get("actor")
        if isinstance(stamp, dict) and isinstance(stamp.get("request"), str):
            key = (str(stamp.get("name")), stamp["request"])
            self.requests.setdefault(key, []).append((record.seq, record.type))
            if len(self.requests) > REMEMBERED_REQUESTS:
                self.requests.popitem(last=False)

    def _announce(self, record: Record) -> None:
        for observer in list(self.observers):
            try:
                observer(record)
            except Exception:
                self.log.failure("an observer failed on record {seq}", seq=record.seq)


def _as_stored(batch: Sequence[_Command], stored: Sequence[Record] | None) -> Sequence[_Command]:
    """``batch`` with each command's records as the journal stored them (signed, in the same order)."""
    if not stored:
        return batch
    at = 0
    for command in batch:
        count = len(command.records)
        command.records = list(stored[at : at + count])
        at += count
    return batch


def _stamped(command: str, entry: JournalRecord, actor: Actor, epoch: int | None = None) -> JournalRecord:
    """Every record says who caused it, and the central server's the epoch it was written under.

    A decision emits declared records only (protocol.records): anything else refuses its command.
    """
    if not isinstance(entry, JournalRecord):
        raise TypeError(f"{command} decided a {type(entry).__name__} ({str(entry)[:80]}), "
                        "not a declared record (protocol.records)")
    return entry.stamped(ActorStamp(**actor.to_dict()), epoch)

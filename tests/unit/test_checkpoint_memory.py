"""What a checkpoint leaves behind in a long-running server: its objects as small as it
found them; a checkpoint that came due during a commit written at the next; a
checkpoint holding a module this server does not run used without it (docs/journal.md,
"Checkpoints")."""

from __future__ import annotations

import gc
import json
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from hall_server.hall.session import SessionState
from protocol.game import Input, State, Step
from protocol.records import JournalRecord
from server_kit.core import Actor, CheckpointRefused, CommandCore, run_inline
from server_kit.journal.checkpoints import CheckpointService, CheckpointStore
from server_kit.journal.fake import FakeJournal
from server_kit.journal.projection import ProjectedState, decode, encode
from tests.support.records import declared

STEPS = 20_000


@dataclass(frozen=True, kw_only=True)
class Noted(JournalRecord):
    """The test modules' one record type: something noted."""

    type: ClassVar[str] = "noted"


@pytest.fixture(autouse=True)
def noted_is_declared() -> Iterator[None]:
    with declared(Noted):
        yield


def test_encoding_a_state_leaves_its_objects_as_small_as_it_found_them() -> None:
    """CPython makes an object's ``__dict__`` for good once it is asked for (64 bytes an object):
    a checkpoint reading every record's dataclasses that way grew the hall at each one."""
    steps = [Step(State.DRAWING, Input.BALL_DRAWN, State.DRAWING) for _ in range(STEPS)]
    encode(steps[:1])  # the class's field names and name, looked up once
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        encoded = encode(steps)
        del encoded
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < STEPS * 8, f"encoding {STEPS} steps left {kept} bytes behind ({kept / STEPS:.1f} an object)"
    assert decode(json.loads(json.dumps(encode(steps)))) == steps


class Counter(ProjectedState):
    """A module counting records."""

    def __init__(self, core: CommandCore) -> None:
        self.state = SessionState()
        core.add_module(self)

    def apply(self, record: Any) -> None:
        self.state.extra_checks.append({"seq": record.seq})


class Machines(Counter):
    """An optional module: one server runs it, another does not."""


def _note(core: CommandCore) -> defer.Deferred[Any]:
    return core.execute(Actor("ana", "clerk"), "note", lambda now: [Noted()])


def _core(journal: FakeJournal, run: Callable[..., defer.Deferred[Any]] = run_inline) -> CommandCore:
    return CommandCore(journal, Clock(), run, {"note": frozenset({"clerk"})})


def test_a_checkpoint_with_a_module_this_server_does_not_run_is_used_without_it() -> None:
    journal = FakeJournal()
    with_machines = _core(journal)
    Counter(with_machines)
    Machines(with_machines)
    for _ in range(3):
        _note(with_machines)
    state = json.loads(json.dumps(with_machines.checkpoint()))

    without = _core(journal)
    counter = Counter(without)
    without.restore(state, 3, with_machines.last_hash or "")
    assert counter.state.extra_checks == [{"seq": 1}, {"seq": 2}, {"seq": 3}] and without.seq == 3
    assert without.checkpoint()["modules"].keys() == {"Counter"}


def test_a_checkpoint_without_a_module_this_server_runs_is_refused_for_the_whole_journal() -> None:
    journal = FakeJournal()
    plain = _core(journal)
    Counter(plain)
    _note(plain)
    state = json.loads(json.dumps(plain.checkpoint()))

    with_machines = _core(journal)
    counter, machines = Counter(with_machines), Machines(with_machines)
    with pytest.raises(CheckpointRefused, match="none of Machines"):
        with_machines.restore(state, 1, plain.last_hash or "")
    assert counter.state.extra_checks == [] and machines.state.extra_checks == [] and with_machines.seq == 1


def test_a_checkpoint_due_while_a_batch_waits_for_its_commit_is_written_at_the_next_commit(tmp_path: Path) -> None:
    waiting: list[tuple[defer.Deferred[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def held(function: Callable[..., Any], *args: Any) -> defer.Deferred[Any]:
        deferred: defer.Deferred[Any] = defer.Deferred()
        waiting.append((deferred, function, args))
        return deferred

    def commit_one() -> None:
        deferred, function, args = waiting.pop(0)
        deferred.callback(function(*args))

    journal = FakeJournal()
    clock = Clock()
    core = _core(journal, held)
    Counter(core)
    store = CheckpointStore(tmp_path, journal.key, "release-1")
    service = CheckpointService(core, store, clock, run_inline, every_seconds=60)
    service.startService()
    _note(core)
    clock.advance(60)  # due, with record 1 decided and not committed: nothing is written now
    assert store.paths() == []
    commit_one()
    assert [store.read(p).seq for p in store.paths()] == [1]
    _note(core)
    commit_one()  # nothing due: the next waits for the interval
    assert [store.read(p).seq for p in store.paths()] == [1]
    clock.advance(60)
    assert [store.read(p).seq for p in store.paths()] == [2, 1]

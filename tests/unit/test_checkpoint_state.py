"""A module's projection kept as JSON and read back equal; the checkpoint writer's
schedule on the injected clock; the verification from a checkpoint's record."""

from __future__ import annotations

import datetime
import json
import math
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Iterator

import numpy as np
import pytest
from twisted.internet.task import Clock

from protocol.chain import ChainError
from protocol.claims import CardRef
from hall_server.hall.session import SessionState
from protocol.game import State, TraditionalGame
from protocol.records import JournalRecord
from server_kit.core import Actor, CheckpointRefused, CommandCore, run_inline
from server_kit.journal.checkpoints import CheckpointService, CheckpointStore
from server_kit.journal.fake import FakeJournal
from server_kit.journal.projection import ProjectedState, ProjectionError, decode, encode
from tests.support.records import declared


@dataclass(frozen=True, kw_only=True)
class Noted(JournalRecord):
    """The test module's one record type: something noted."""

    type: ClassVar[str] = "noted"


@pytest.fixture(autouse=True)
def noted_is_declared() -> Iterator[None]:
    with declared(Noted):
        yield


def _json_round_trip(value: Any) -> Any:
    return decode(json.loads(json.dumps(encode(value))))


def test_a_projection_comes_back_equal_through_json() -> None:
    ref = CardRef(7, 41)
    value = {
        "tuple keys": {(1, "a"): ref, ref: State.DRAWING},
        "sets": ({3, 1, 2}, frozenset({"x"})),
        "float": [1.5, math.inf],
        "bytes": b"\x00\xff",
        "dates": (datetime.date(2027, 1, 4), datetime.datetime(2027, 1, 4, 20, 30, tzinfo=datetime.timezone.utc)),
        "deque": deque([1, 2], maxlen=5),
        "array": np.arange(6, dtype=np.uint8).reshape(2, 3),
        "numpy int": np.int64(9),
    }
    back = _json_round_trip(value)
    assert back["tuple keys"] == value["tuple keys"] and back["sets"] == value["sets"]
    assert back["float"] == value["float"] and back["bytes"] == value["bytes"] and back["dates"] == value["dates"]
    assert back["deque"] == value["deque"] and back["deque"].maxlen == 5
    assert back["array"].dtype == np.uint8 and (back["array"] == value["array"]).all()
    assert type(back["numpy int"]) is np.int64
    member = next(k for k in back["tuple keys"] if isinstance(k, CardRef))
    assert back["tuple keys"][member] is State.DRAWING  # a StrEnum stays a member, not a plain string


def test_a_value_shared_in_the_projection_is_shared_once_restored() -> None:
    shelf = SessionState(extra_checks=[{"n": 1}])
    back = _json_round_trip({"a": shelf, "b": [shelf]})
    assert back["a"] is back["b"][0]
    back["a"].extra_checks.append({"n": 2})
    assert back["b"][0].extra_checks == [{"n": 1}, {"n": 2}]


def test_a_game_machine_comes_back_in_its_state_and_takes_the_next_input() -> None:
    machine = TraditionalGame("g1")
    back = _json_round_trip(machine)
    assert back.state is State.SCHEDULED and back.steps == machine.steps
    assert encode(back) == encode(machine)


def test_only_the_systems_classes_are_kept_or_rebuilt() -> None:
    with pytest.raises(ProjectionError, match="cannot be kept in a checkpoint"):
        encode({"path": Path("/tmp")})
    with pytest.raises(ProjectionError, match="which is not the system's"):
        decode({"o": ["os:system", []]})
    with pytest.raises(ProjectionError, match="which this release does not have"):
        decode({"o": ["protocol.chain:NoSuchThing", []]})


class Counter(ProjectedState):
    """A module counting records: the smallest projection a core can checkpoint."""

    def __init__(self, core: CommandCore) -> None:
        self.state = SessionState()
        core.add_module(self)

    def apply(self, record: Any) -> None:
        self.state.extra_checks.append({"seq": record.seq})


def _core(clock: Clock) -> tuple[CommandCore, FakeJournal, Counter]:
    journal = FakeJournal()
    core = CommandCore(journal, clock, run_inline, {"note": frozenset({"clerk"})})
    return core, journal, Counter(core)


def _note(core: CommandCore, request: str | None = None) -> None:
    actor = Actor("ana", "clerk", request)
    core.execute(actor, "note", lambda now: [Noted()])


def test_the_core_restores_its_modules_and_request_ids_or_changes_nothing(tmp_path: Path) -> None:
    clock = Clock()
    core, journal, counter = _core(clock)
    _note(core, "r-1")
    _note(core)
    state = json.loads(json.dumps(core.checkpoint()))
    again, _, restored = _core(clock)
    again.journal = journal
    again.restore(state, core.seq, core.last_hash or "")
    assert restored.state.extra_checks == [{"seq": 1}, {"seq": 2}] and again.known_request(Actor("ana", "clerk"), "r-1")
    with pytest.raises(CheckpointRefused, match="other modules"):
        again.restore({**state, "modules": {"Other": []}}, core.seq, core.last_hash or "")
    assert restored.state.extra_checks == [{"seq": 1}, {"seq": 2}]


def test_checkpoints_are_written_every_n_records_every_interval_and_at_the_stop(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_790_000_000)
    core, journal, _ = _core(clock)
    store = CheckpointStore(tmp_path, journal.key, "release-1")
    service = CheckpointService(core, store, clock, run_inline, every_records=3, every_seconds=60)
    service.startService()
    for _ in range(2):
        _note(core)
    assert store.paths() == []
    _note(core)
    assert [p.name for p in store.paths()] == ["checkpoint-000000000003.ckpt"]
    _note(core)
    clock.advance(60)
    assert store.read(store.paths()[0]).seq == 4
    clock.advance(60)  # nothing new: nothing written
    assert len(store.paths()) == 2
    _note(core)
    service.stopService()
    assert [store.read(p).seq for p in store.paths()] == [5, 4, 3]
    for _ in range(3):
        _note(core)
        service.write()
    assert [store.read(p).seq for p in store.paths()] == [8, 7, 6]  # the newest three are kept


def test_from_a_checkpoint_only_the_records_after_it_are_verified() -> None:
    clock = Clock()
    core, journal, _ = _core(clock)
    for _ in range(5):
        _note(core)
    anchor = (3, journal.kept[2].hash)
    assert journal.verify(after=anchor) == 5
    journal.kept[1] = replace(journal.kept[1], time_ms=1)
    assert journal.verify(after=anchor) == 5  # before the checkpoint: the full verification's to find
    with pytest.raises(ChainError, match="record 2: its content does not match its hash"):
        journal.verify()
    journal.kept[3] = replace(journal.kept[3], time_ms=1)
    with pytest.raises(ChainError, match="record 4: its content does not match its hash"):
        journal.verify(after=anchor)


def test_faults_1_a_state_not_built_from_the_journal_is_never_checkpointed(tmp_path: Path) -> None:
    """A core whose modules do not hold the journal's records (emptied by a failed commit, or
    never folded) refuses a checkpoint, and the writer writes none; once folded, it writes."""
    clock = Clock()
    clock.advance(1_790_000_000)
    core, journal, _ = _core(clock)
    for _ in range(3):
        _note(core)
    unfolded = CommandCore(journal, clock, run_inline, {"note": frozenset({"clerk"})})
    Counter(unfolded)
    assert unfolded.settled() and unfolded.seq == 3
    with pytest.raises(CheckpointRefused, match="the state holds 0 of the journal's 3 records: it was not built from"):
        unfolded.checkpoint()
    store = CheckpointStore(tmp_path, journal.key, "release-1")
    service = CheckpointService(unfolded, store, clock, run_inline)
    service.write()
    assert store.paths() == []
    unfolded.recover()
    _note(unfolded)
    service.write()
    assert [store.read(p).state["folded"] for p in store.paths()] == [4]


def test_no_checkpoint_is_written_while_the_storage_fails_nor_once_the_server_stops_on_a_fault(tmp_path: Path) -> None:
    clock = Clock()
    core, journal, _ = _core(clock)
    _note(core)
    store = CheckpointStore(tmp_path, journal.key, "release-1")
    service = CheckpointService(core, store, clock, run_inline)
    core.storage_fault = "the database cannot be reached"  # type: ignore[attr-defined]
    service.write()
    assert store.paths() == []
    core.storage_fault = None  # type: ignore[attr-defined]
    service.forbid("a peer holds more of the journal")
    service.write()
    assert store.paths() == []


def test_faults_2_a_checkpoint_whose_writing_fails_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills while the checkpoint is written: the write fails, and no partial file is
    left; one left by a crash in the middle of a write is removed at the next start."""
    import errno
    import os

    from server_kit.journal import checkpoints

    clock = Clock()
    core, journal, _ = _core(clock)
    _note(core)
    store = CheckpointStore(tmp_path, journal.key, "release-1")

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checkpoints.os, "fsync", full)
    with pytest.raises(OSError, match="No space left on device"):
        store.write(core.seq, core.last_hash or "", 0, core.checkpoint())
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    (tmp_path / "checkpoint-000000000001.ckpt.x1y2.partial").write_bytes(b"")  # a crash's leftover
    store.remove_partials()
    assert list(tmp_path.iterdir()) == []
    store.write(core.seq, core.last_hash or "", 0, core.checkpoint())
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint-000000000001.ckpt"]

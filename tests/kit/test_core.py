"""The server kit's command loop on the in-memory journal: what every server relies on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

import pytest
from twisted.internet import task

from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import JournalRecord
from server_kit.core import Actor, CommandCore, NotAllowed, Repeated, run_inline
from server_kit.db.faults import StorageUnavailable
from server_kit.journal.fake import FakeJournal
from tests.support.records import declared


CLERK = Actor("ana", "clerk")
GUEST = Actor("bea", "guest")


@dataclass(frozen=True, kw_only=True)
class Added(JournalRecord):
    """The test server's one record type: an amount added to the counter."""

    type: ClassVar[str] = "added"
    amount: int


@pytest.fixture(autouse=True)
def added_is_declared() -> Iterator[None]:
    with declared(Added):
        yield


class Counter:
    """A module that counts what it folded."""

    def __init__(self) -> None:
        self.total = 0

    def reset(self) -> None:
        self.total = 0

    def apply(self, record: Record) -> None:
        if record.type == "added":
            self.total += record.payload["amount"]


def outcome(deferred: Any) -> Any:
    results: list[Any] = []
    deferred.addBoth(results.append)
    assert results, "the command did not finish"
    return results[0]


def core_with(journal: FakeJournal) -> tuple[CommandCore, Counter]:
    core = CommandCore(journal, task.Clock(), run_inline, {"add": frozenset({"clerk"})})
    counter = Counter()
    core.add_module(counter)
    return core, counter


def add(core: CommandCore, actor: Actor, amount: int) -> Any:
    def decide(now_ms: int) -> list[Added]:
        if amount <= 0:
            raise DomainError("an amount is a positive number of cents")
        return [Added(amount=amount)]

    return core.execute(actor, "add", decide)


@pytest.mark.req("R92.3")
def test_a_command_is_decided_committed_applied_and_announced_with_who_gave_it() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    heard: list[Record] = []
    core.observers.append(heard.append)
    (record,) = outcome(add(core, CLERK, 250))
    assert record.payload == {"amount": 250, "actor": {"name": "ana", "role": "clerk"}}
    assert counter.total == 250 and heard == [record] and core.seq == record.seq
    assert journal.verify() == 1


@pytest.mark.req("R80")
def test_a_role_the_server_did_not_allow_is_refused_and_nothing_is_written() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    failure = outcome(add(core, GUEST, 100))
    assert failure.check(NotAllowed)
    assert "bea (guest) may not add; that is for: clerk" in failure.getErrorMessage()
    assert journal.kept == [] and counter.total == 0


def test_a_refused_decision_and_a_failed_commit_change_nothing() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    assert outcome(add(core, CLERK, 0)).check(DomainError)
    journal.fail_next = OSError("disk full")
    assert outcome(add(core, CLERK, 100)).check(OSError)
    assert journal.kept == [] and counter.total == 0 and core.seq == 0
    outcome(add(core, CLERK, 100))
    assert counter.total == 100


@pytest.mark.req("R96.4")
def test_a_request_sent_twice_is_carried_out_once_and_recovery_remembers_it() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    first = outcome(core.once(CLERK, "r-1", lambda actor: add(core, actor, 40)))
    again = outcome(core.once(CLERK, "r-1", lambda actor: add(core, actor, 40)))
    assert isinstance(again, Repeated) and again.records == ((first[0].seq, "added"),)
    assert counter.total == 40
    restarted, folded = core_with(journal)
    assert restarted.recover() == 1 and folded.total == 40
    assert isinstance(outcome(restarted.once(CLERK, "r-1", lambda actor: add(restarted, actor, 40))), Repeated)
    assert folded.total == 40


def test_a_registered_command_needs_a_permission_entry() -> None:
    from server_kit.core import CommandSpec

    core, _ = core_with(FakeJournal())
    with pytest.raises(ValueError, match="has no permission entry"):
        core.register(CommandSpec("remove", lambda actor: None, {}, "remove"))  # type: ignore[arg-type,return-value]


# --- A failed commit, the restore point, the storage unavailable -------------------------------


class Tally:
    """A checkpointable module: amounts per actor (its restore point is its checkpoint)."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}

    def reset(self) -> None:
        self.totals = {}

    def apply(self, record: Record) -> None:
        if record.type == "added":
            name = record.payload["actor"]["name"]
            self.totals[name] = self.totals.get(name, 0) + record.payload["amount"]

    def checkpoint(self) -> Any:
        return dict(self.totals)

    def restore(self, data: Any) -> None:
        self.totals = dict(data)


class Held:
    """A blocking runner whose calls wait until the test lets them run (a commit in flight)."""

    def __init__(self) -> None:
        self.held: list[tuple[Any, tuple[Any, ...], Any]] = []

    def __call__(self, function: Any, *args: Any) -> Any:
        from twisted.internet import defer

        done: Any = defer.Deferred()
        self.held.append((function, args, done))
        return done

    def run_one(self) -> None:
        from twisted.python.failure import Failure

        function, args, done = self.held.pop(0)
        try:
            value = function(*args)
        except Exception:
            done.errback(Failure())
        else:
            done.callback(value)


class UnreadableJournal(FakeJournal):
    """The fake journal, whose records cannot be read back once ``unreadable``: as a database gone away."""

    unreadable = False

    def records(self, after: int = 0) -> Iterator[Record]:
        if self.unreadable:
            raise AssertionError("the journal was read back")
        return super().records(after)

    def probe(self, unconfirmed: Any = ()) -> list[Record]:
        if self.unreadable:
            raise StorageUnavailable("unreachable", "the database server db:5432", "db:5432 cannot be reached")
        found = [r for r in self.kept if self.last is None or r.seq > self.last.seq]
        return found


def tally_core(runner: Any = run_inline) -> tuple[CommandCore, UnreadableJournal, Tally]:
    journal = UnreadableJournal()
    core = CommandCore(journal, task.Clock(), runner, {"add": frozenset({"clerk", "guest"})})
    tally = Tally()
    core.add_module(tally)
    return core, journal, tally


DOWN = StorageUnavailable("unreachable", "the database server db:5432", "db:5432 cannot be reached (refused)")


def test_N1_a_commit_that_fails_for_the_storage_puts_the_state_back_without_reading_the_journal() -> None:
    runner = Held()
    core, journal, tally = tally_core(runner)
    add(core, CLERK, 100)
    runner.run_one()
    assert tally.totals == {"ana": 100}
    in_flight = add(core, CLERK, 5)  # its commit is in flight ...
    decided_on_it = add(core, GUEST, 7)  # ... and this one is decided on it
    assert tally.totals == {"ana": 105, "bea": 7}
    journal.unreadable, journal.fail_next = True, DOWN
    runner.run_one()
    assert outcome(in_flight).check(StorageUnavailable) and outcome(decided_on_it).check(StorageUnavailable)
    assert tally.totals == {"ana": 100} and core.seq == 1 and core.settled()
    assert core.storage_fault is DOWN and [r.seq for r in core.unconfirmed] == [2]
    refused = outcome(add(core, CLERK, 1))  # refused at once, before it is decided: no commit tried
    assert refused.check(StorageUnavailable) and "db:5432" in refused.getErrorMessage() and not runner.held
    assert tally.totals == {"ana": 100}


def test_N1_the_storage_back_resumes_from_the_state_it_held_and_the_next_record_follows_the_last() -> None:
    core, journal, tally = tally_core()
    told: list[Any] = []
    core.storage_listeners.append(told.append)
    outcome(add(core, CLERK, 100))
    journal.fail_next = DOWN
    assert outcome(add(core, CLERK, 5)).check(StorageUnavailable)
    core.storage_back(journal.probe(core.unconfirmed))
    assert told == [DOWN, None] and core.storage_fault is None and core.unconfirmed == []
    (record,) = outcome(add(core, CLERK, 20))
    assert record.seq == 2 and tally.totals == {"ana": 120}
    restarted, _ = core_with(journal)
    assert restarted.recover() == 2


def test_N1_a_failed_batch_found_committed_when_the_storage_is_back_is_folded_and_announced_once() -> None:
    core, journal, tally = tally_core()
    heard: list[int] = []
    core.observers.append(lambda record: heard.append(record.seq))

    def committed_then_lost(records: Any, extra: Any = None) -> Any:
        FakeJournal.commit(journal, records, extra)  # the database took it ...
        journal.last = None  # ... and the answer never came back
        raise DOWN

    journal.commit = committed_then_lost  # type: ignore[method-assign]
    assert outcome(add(core, CLERK, 5)).check(StorageUnavailable)
    assert tally.totals == {} and heard == [] and [r.seq for r in core.unconfirmed] == [1]
    del journal.commit
    found = journal.probe(core.unconfirmed)
    journal.last = found[-1]  # what Journal.probe does once it verified them
    core.storage_back(found)
    assert tally.totals == {"ana": 5} and heard == [1] and core.seq == 1
    (record,) = outcome(add(core, CLERK, 1))
    assert record.seq == 2 and heard == [1, 2]


def test_N1_a_module_that_cannot_fold_its_command_is_taken_back_to_the_restore_point_not_the_journal() -> None:
    core, journal, tally = tally_core()
    outcome(add(core, CLERK, 10))
    apply = tally.apply

    def faulty(record: Record) -> None:
        apply(record)
        if record.payload["amount"] == 13:
            raise KeyError("a fault in the module")

    tally.apply = faulty  # type: ignore[method-assign]
    journal.unreadable = True
    assert outcome(add(core, CLERK, 13)).check(KeyError)
    tally.apply = apply  # type: ignore[method-assign]
    assert tally.totals == {"ana": 10}
    journal.unreadable = False
    outcome(add(core, CLERK, 1))
    assert tally.totals == {"ana": 11}


def test_the_restore_point_moves_on_once_enough_records_are_committed(monkeypatch: pytest.MonkeyPatch) -> None:
    import server_kit.core as kit_core

    monkeypatch.setattr(kit_core, "RESTORE_POINT_RECORDS", 3)
    core, journal, tally = tally_core()
    for amount in range(1, 6):
        outcome(add(core, CLERK, amount))
    assert core._point.seq == 3 and [seq for seq, *_ in core._since] == [4, 5]  # kept: the records after it only
    journal.fail_next, journal.unreadable = DOWN, True
    assert outcome(add(core, CLERK, 100)).check(StorageUnavailable)
    assert tally.totals == {"ana": 15} and core.seq == 5


def test_the_records_a_new_restore_point_no_longer_needs_are_let_go_a_slice_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Freeing them at once held the reactor up (90-100 ms for 10,000 records): a slice each turn."""
    import server_kit.core as kit_core

    monkeypatch.setattr(kit_core, "RESTORE_POINT_RECORDS", 25)
    monkeypatch.setattr(kit_core, "LET_GO_RECORDS", 10)
    core, journal, tally = tally_core()
    clock = core.clock
    assert isinstance(clock, task.Clock)
    released: list[list[Any]] = []
    let_go = core._let_go
    monkeypatch.setattr(core, "_let_go", lambda records: (released.append(records), let_go(records)))
    left: list[int] = []  # what is left to let go each time a slice is put off to a later turn
    call_later = clock.callLater
    monkeypatch.setattr(clock, "callLater", lambda delay, step: (left.append(len(released[-1])),
                                                                  call_later(delay, step))[1])
    for amount in range(1, 27):
        outcome(add(core, CLERK, amount))
    assert core._point.seq == 25 and [seq for seq, *_ in core._since] == [26]
    (records,) = released  # the restore point at record 25 let the 25 records before it go
    assert len(records) == 25 and left == [25]
    clock.advance(0)  # a task.Clock runs the slices one after another; the reactor, one a turn
    assert left == [25, 15, 5] and not records and not clock.getDelayedCalls()
    assert tally.totals == {"ana": sum(range(1, 27))}


def test_a_module_that_cannot_be_kept_is_reset_and_folds_every_record_again() -> None:
    core, journal, tally = tally_core()
    counter = Counter()
    core.add_module(counter)
    for amount in (1, 2, 3):
        outcome(add(core, CLERK, amount))
    journal.fail_next, journal.unreadable = DOWN, True
    assert outcome(add(core, CLERK, 100)).check(StorageUnavailable)
    assert counter.total == 6 and tally.totals == {"ana": 6}


def test_N1_the_storage_watch_tries_with_back_off_on_the_clock_and_resumes_when_the_storage_is_back() -> None:
    from server_kit.storage import StorageWatch

    clock = task.Clock()
    journal = UnreadableJournal()
    core = CommandCore(journal, clock, run_inline, {"add": frozenset({"clerk"})})
    core.add_module(Tally())
    watch = StorageWatch(core, clock, run_inline, journal.probe)
    watch.startService()
    outcome(add(core, CLERK, 1))
    journal.fail_next, journal.unreadable = DOWN, True
    assert outcome(add(core, CLERK, 2)).check(StorageUnavailable)
    assert watch.status() is not None and watch.status()["kind"] == "unreachable"
    for waited in (0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0):  # doubling up to the longest wait
        tries = watch.tries
        clock.advance(waited - 0.01)
        assert watch.tries == tries
        clock.advance(0.01)
        assert watch.tries == tries + 1 and core.storage_fault is not None
    journal.unreadable = False
    clock.advance(5.0)
    assert core.storage_fault is None and watch.status() is None and watch.tries == 0
    assert not clock.getDelayedCalls()  # nothing more is tried
    (record,) = outcome(add(core, CLERK, 3))
    assert record.seq == 2
    watch.stopService()


def test_N1_a_journal_whose_end_is_not_what_was_committed_keeps_the_server_refusing() -> None:
    from server_kit.journal.sql import JournalStateError
    from server_kit.storage import StorageWatch

    clock = task.Clock()
    journal = UnreadableJournal()
    core = CommandCore(journal, clock, run_inline, {"add": frozenset({"clerk"})})
    core.add_module(Tally())

    def foreign(unconfirmed: Any) -> list[Record]:
        raise JournalStateError(7, "and 2 more were written after record 6 by someone else than this server")

    watch = StorageWatch(core, clock, run_inline, foreign)
    watch.startService()
    journal.fail_next = DOWN
    assert outcome(add(core, CLERK, 2)).check(StorageUnavailable)
    clock.advance(0.25)
    assert core.storage_fault is not None and "not what this server committed" in str(core.storage_fault)
    assert not clock.getDelayedCalls()  # no more tries: a restart verifies the journal
    watch.stopService()


def test_flushed_fires_once_every_command_decided_before_it_is_answered_and_not_before() -> None:
    runner = Held()
    core, journal, tally = tally_core(runner)
    assert outcome(core.flushed()) is None  # nothing waits: at once
    first = add(core, CLERK, 1)  # its commit in flight
    second = add(core, GUEST, 2)  # decided on it, for the next commit
    flushed = core.flushed()
    heard: list[str] = []
    first.addCallback(lambda _: heard.append("first"))
    second.addCallback(lambda _: heard.append("second"))
    flushed.addCallback(lambda _: heard.append("flushed"))
    third_after = add(core, CLERK, 3)  # decided after the wait began: not waited for
    runner.run_one()
    assert heard == ["first"]
    runner.run_one()  # the second's commit (with the third's): both answered, then the wait
    assert heard == ["first", "second", "flushed"] and outcome(third_after)
    journal.fail_next = DOWN  # a failed commit ends the wait too: its commands are answered (refused)
    failing = add(core, CLERK, 4)
    after_failure = core.flushed()
    runner.run_one()
    assert outcome(failing).check(StorageUnavailable) and outcome(after_failure) is None
    assert tally.totals == {"ana": 4, "bea": 2}


def test_the_next_commit_goes_to_the_writer_before_the_answers_of_the_one_before_go_out() -> None:
    """The writer is not left idle while a batch's callers are answered: the commands decided during a
    commit are in the writer's hands when the first caller hears of its own; the answers keep their order."""
    runner = Held()
    core, journal, tally = tally_core(runner)
    first = add(core, CLERK, 1)  # its commit in flight
    second = add(core, GUEST, 2)  # decided on it, waiting for the next commit
    writer_holds_when_answered: list[int] = []
    first.addCallback(lambda _: writer_holds_when_answered.append(len(runner.held)))
    heard: list[str] = []
    first.addCallback(lambda _: heard.append("first"))
    second.addCallback(lambda _: heard.append("second"))
    runner.run_one()
    assert writer_holds_when_answered == [1], "the second's commit was handed over before the first was answered"
    assert heard == ["first"]
    runner.run_one()
    assert heard == ["first", "second"] and journal.last is not None and journal.last.seq == 2
    assert tally.totals == {"ana": 1, "bea": 2}


def test_a_commit_handed_over_before_the_answers_that_fails_leaves_the_answered_batch_standing() -> None:
    runner = Held()
    core, journal, tally = tally_core(runner)
    first = add(core, CLERK, 1)
    second = add(core, GUEST, 2)
    journal.unreadable = True  # the state is put back from memory, never by reading the journal
    runner.run_one()  # the first committed and answered; the second's commit is with the writer
    assert len(outcome(first)) == 1
    journal.fail_next = DOWN
    runner.run_one()
    assert outcome(second).check(StorageUnavailable)
    assert tally.totals == {"ana": 1} and core.seq == 1 and core.storage_fault is DOWN

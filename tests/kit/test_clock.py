"""A server's clocks (server_kit/clock.py): the records' time never goes back, a step of the wall
clock is found against the monotonic clock and journaled, timers stay on the reactor.

The wall and monotonic clocks are injected here; ``tests/faults/test_clock_step.py`` steps
the wall clock of a real ``bingo hall serve`` under libfaketime.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Sequence

import pytest
from twisted.internet import task

from protocol.chain import Record
from protocol.records import seal_entries
from protocol.records.clock import ClockStepped
from server_kit.clock import ClockStep, ClockWatch, JournalClock, MonotonicEPollReactor, schedules_monotonic
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.fake import FakeJournal
from server_kit.received import arrival_age_s


SYSTEM = Actor("server", "system")
START = 1_800_000_000.0  # the wall clock at the start, in seconds


class Clocks:
    """A wall clock and a monotonic clock that a test moves: together (time passes) or the wall alone (a step)."""

    def __init__(self) -> None:
        self.wall_s, self.monotonic_s = START, 1000.0
        self.timers = task.Clock()

    def wall(self) -> float:
        return self.wall_s

    def monotonic(self) -> float:
        return self.monotonic_s

    def pass_s(self, seconds: float) -> None:
        self.wall_s += seconds
        self.monotonic_s += seconds

    def step_s(self, seconds: float) -> None:
        self.wall_s += seconds

    def clock(self) -> JournalClock:
        return JournalClock(self.timers, self.wall, self.monotonic)


def test_the_records_time_follows_the_wall_clock_while_it_does_not_step() -> None:
    clocks = Clocks()
    clock, steps = clocks.clock(), []
    clock.listeners.append(steps.append)
    clocks.pass_s(2.5)
    assert clock.seconds() == START + 2.5
    clocks.pass_s(0.2)
    clocks.step_s(0.3)  # slewed and jittered well under the tolerance: followed, no step
    assert clock.seconds() == pytest.approx(START + 3.0)
    assert steps == [] and clock.ahead_s == 0


def test_a_step_back_is_found_and_the_records_carry_on_at_the_monotonic_pace() -> None:
    clocks = Clocks()
    clock, steps = clocks.clock(), []
    clock.listeners.append(steps.append)
    clocks.pass_s(10)
    before = clock.seconds()
    clocks.step_s(-180)
    clocks.pass_s(1)
    after = clock.seconds()
    assert after == pytest.approx(before + 1)  # not back, and not held: a deadline in records' time comes on time
    assert steps == [ClockStep(-180, START - 169, 180)]
    assert clock.ahead_s == 180
    clocks.pass_s(30)
    assert clock.seconds() == pytest.approx(before + 31)
    assert clock.wall_ms() == int((START - 139) * 1000)  # what the clock's check sees: the wall as it reads
    assert len(steps) == 1


def test_a_step_forward_is_followed_and_first_takes_back_what_a_step_back_put_ahead() -> None:
    clocks = Clocks()
    clock, steps = clocks.clock(), []
    clock.listeners.append(steps.append)
    clocks.step_s(-100)
    clock.seconds()
    clocks.step_s(60)
    assert clock.seconds() == pytest.approx(START)  # the records were 100 s ahead; still 40 s ahead
    assert clock.ahead_s == pytest.approx(40)
    clocks.step_s(3 * 3600)  # across midnight, say: followed
    assert clock.seconds() == pytest.approx(START - 100 + 60 + 3 * 3600)
    assert [(round(s.step_s), round(s.ahead_s)) for s in steps] == [(-100, 100), (60, 40), (10800, 0)]


def test_a_step_back_under_the_tolerance_is_held_not_followed() -> None:
    clocks = Clocks()
    clock, steps = clocks.clock(), []
    clock.listeners.append(steps.append)
    first = clock.seconds()
    clocks.step_s(-0.6)
    assert clock.seconds() == first  # held at the last time
    clocks.pass_s(1.0)
    assert clock.seconds() == pytest.approx(first + 0.4)  # the wall clock passed it again
    assert steps == []


def test_at_start_the_records_carry_on_from_the_journal_s_last_record() -> None:
    clocks = Clocks()
    clock, steps = clocks.clock(), []
    clock.listeners.append(steps.append)
    last_ms = int((START + 90) * 1000)  # the wall clock now reads 90 s before the last record
    step = clock.continue_from(last_ms)
    assert step == ClockStep(-90, START, 90, at_start=True) and steps == [step]
    assert clock.now_ms() == last_ms
    clocks.pass_s(5)
    assert clock.now_ms() == last_ms + 5000
    assert JournalClock(clocks.timers, clocks.wall, clocks.monotonic).continue_from(int(START * 1000) - 1) is None


def test_a_reading_interrupted_between_its_two_looks_is_taken_again_not_a_step() -> None:
    clocks = Clocks()
    looks = iter([1000.0, 1000.0, 1030.0, 1030.0, 1030.0])  # paused 30 s between a look's two readings

    def monotonic() -> float:
        return next(looks, 1030.0)

    clock, steps = JournalClock(clocks.timers, lambda: clocks.wall_s, monotonic), []
    clock.listeners.append(steps.append)
    clocks.wall_s += 30
    clock.seconds()
    assert steps == []


def test_two_threads_read_the_clock_one_at_a_time() -> None:
    """The regulator's receiver stamps its records on its feed thread while the reactor's thread reads
    the same clock: a reading under way holds the other back, and neither sees a step."""
    clocks = Clocks()
    inside, go = threading.Event(), threading.Event()

    def monotonic() -> float:
        if threading.current_thread().name == "first" and not inside.is_set():
            inside.set()
            go.wait(10)  # paused inside its reading
        return clocks.monotonic_s

    clock, steps, read = JournalClock(clocks.timers, lambda: clocks.wall_s, monotonic), [], {}
    clock.listeners.append(steps.append)

    def reading() -> None:
        read[threading.current_thread().name] = clock.seconds()

    first = threading.Thread(target=reading, name="first")
    first.start()
    assert inside.wait(10)
    clocks.pass_s(30)
    second = threading.Thread(target=reading, name="second")
    second.start()
    second.join(0.2)
    held_back = second.is_alive()
    go.set()
    first.join(10)
    second.join(10)
    assert held_back  # it waited for the first reading to end
    assert read == {"first": START + 30, "second": START + 30} and steps == []


def test_on_a_reactor_on_the_wall_clock_the_clock_reads_it_and_its_timers_are_the_reactor_s() -> None:
    timers = task.Clock()
    timers.advance(1234.5)
    clock = JournalClock.of(timers)
    assert not schedules_monotonic(timers) and clock.seconds() == 1234.5
    fired: list[int] = []
    clock.callLater(2, fired.append, 1)
    assert clock.getDelayedCalls() == timers.getDelayedCalls()
    timers.advance(2)
    assert fired == [1] and clock.seconds() == 1236.5


def test_the_monotonic_reactor_counts_monotonic_time() -> None:
    reactor = MonotonicEPollReactor()
    try:
        assert schedules_monotonic(reactor) and reactor.seconds is time.monotonic
        due = reactor.callLater(5, lambda: None)
        assert abs(due.getTime() - (time.monotonic() + 5)) < 1
        due.cancel()
    finally:
        reactor._signals.uninstall()  # never run: nothing else to undo


def test_the_journal_never_seals_a_time_before_the_last_record_s() -> None:
    (first,) = seal_entries(None, None, 5_000, [("journal_opened", {"hall": "h"})])
    later = seal_entries(None, first, 4_000, [("journal_opened", {"hall": "h"}), ("journal_opened", {"hall": "h"})])
    assert [r.time_ms for r in later] == [5_000, 5_000]


class FlakyJournal(FakeJournal):
    """A journal whose next ``failures`` commits fail (the storage went away)."""

    failures = 0

    def commit(self, records: Sequence[Record], extra: Any = None) -> list[Record]:
        if self.failures:
            self.failures -= 1
            raise OSError("disk I/O error")
        return super().commit(records, extra)


def watched() -> tuple[Clocks, JournalClock, FlakyJournal, CommandCore, ClockWatch]:
    clocks = Clocks()
    journal = FlakyJournal()
    journal.append(int(START * 1000), [("journal_opened", {"hall": "h"})])
    clock = clocks.clock()
    core = CommandCore(journal, clock, run_inline)
    watch = ClockWatch(core, clock, SYSTEM)
    return clocks, clock, journal, core, watch


def clock_records(journal: FakeJournal) -> list[Record]:
    return [r for r in journal.records() if r.type == ClockStepped.type]


@pytest.mark.req("R92.3")
def test_the_watch_journals_a_step_it_finds_while_nothing_else_reads_the_clock() -> None:
    clocks, clock, journal, core, watch = watched()
    watch.startService()
    clocks.pass_s(1)
    clocks.timers.advance(1)
    assert clock_records(journal) == []
    clocks.step_s(-120)
    clocks.pass_s(1)
    clocks.timers.advance(1)  # the watch's look finds it
    clocks.timers.advance(0)  # and journals it on the next turn
    (record,) = clock_records(journal)
    assert record.payload["step_ms"] == -120_000 and record.payload["ahead_ms"] == 120_000
    assert record.payload["wall_ms"] == int((START + 2 - 120) * 1000)
    assert record.payload["actor"] == SYSTEM.to_dict()
    times = [r.time_ms for r in journal.records()]
    assert times == sorted(times) and times[-1] == int((START + 2) * 1000)
    watch.stopService()


def test_a_step_found_while_a_command_is_decided_is_journaled_after_it() -> None:
    clocks, clock, journal, core, watch = watched()
    watch.startService()
    clocks.step_s(-60)
    core.execute(SYSTEM, "record_clock_step", lambda now: [])  # any command reads the clock: it finds the step
    assert clock_records(journal) == []
    clocks.timers.advance(0)
    assert len(clock_records(journal)) == 1
    watch.stopService()


def test_a_step_whose_record_could_not_be_committed_is_tried_again_at_the_next_look() -> None:
    clocks, clock, journal, core, watch = watched()
    watch.startService()
    journal.failures = 2  # the look that finds it and the turn after it
    clocks.step_s(-60)
    clocks.timers.advance(1)
    clocks.timers.advance(0)
    assert clock_records(journal) == [] and len(watch.waiting) == 1
    clocks.timers.advance(1)
    assert len(clock_records(journal)) == 1 and not watch.waiting
    watch.stopService()


@pytest.mark.req("R92.3")
def test_a_step_found_at_start_is_journaled_once_the_watch_runs() -> None:
    clocks, clock, journal, core, watch = watched()
    clock.continue_from(int((START + 30) * 1000))
    assert clock_records(journal) == []
    watch.startService()
    (record,) = clock_records(journal)
    assert record.payload["at_start"] is True and record.payload["step_ms"] == -30_000
    assert record.time_ms == int((START + 30) * 1000)
    watch.stopService()


# --- When a read's bytes arrived (server_kit/received.py) -------------------------------------


def test_an_arrival_age_is_never_negative_nor_older_than_the_reactor_was_away() -> None:
    assert arrival_age_s(100.0, 103.5, 10.0) == 3.5
    assert arrival_age_s(100.0, 99.0, 10.0) == 0.0  # a wall clock stepped back since: not in the future
    assert arrival_age_s(100.0, 400.0, 10.0) == 10.0  # stepped forward since: no older than the wait


def test_a_stamped_connection_tells_the_age_of_what_it_reads_while_it_is_handled() -> None:
    from twisted.internet.protocol import Protocol

    from server_kit import received

    ages: list[int] = []

    class Handler(Protocol):
        def dataReceived(self, data: bytes) -> None:
            ages.append(received.age_ms())

    class Socket:
        """What the kernel says of a read: its bytes, stamped with the wall clock 1.5 s ago."""

        def __init__(self, stamped: float | None) -> None:
            self.stamped = stamped

        def setsockopt(self, *option: Any) -> None: ...
        def setblocking(self, flag: bool) -> None: ...
        def fileno(self) -> int:
            return -1

        def recvmsg(self, size: int, ancillary_size: int) -> tuple[bytes, list[Any], int, Any]:
            if self.stamped is None:
                return b"buy", [], 0, None
            seconds, fraction = divmod(self.stamped, 1)
            stamp = received._TIMESPEC.pack(int(seconds), int(fraction * 1e9))
            return b"buy", [(socket.SOL_SOCKET, received.SO_TIMESTAMPNS, stamp)], 0, None

    class Reactor:
        reading_since = 0.0  # when it began to wait for its sockets the turn before

        def addReader(self, reader: Any) -> None: ...

    for stamped, away, expected in ((time.time() - 1.5, 10, 1500), (time.time() - 1.5, 0.5, 500), (None, 10, 0)):
        Reactor.reading_since = time.monotonic() - away
        handler = Handler()
        server = received.ReceiptServer(Socket(stamped), handler, ("127.0.0.1", 1), None, 1, Reactor())
        server.doRead()
        assert abs(ages[-1] - expected) < 200, (stamped, away, ages)
    assert received.age_ms() == 0  # outside a read

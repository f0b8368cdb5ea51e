"""A server's two clocks: timers on the monotonic clock, records on the wall clock, never backwards.

**Timers.**  A bare Twisted reactor schedules by ``time.time()``: its ``callLater``
stores ``seconds() + delay``, and both its sleep (``timeout()``, the ``epoll_wait``
timeout) and its firing (``runUntilCurrent``) compare that with ``seconds()`` again.  A
wall clock stepped back by three minutes then holds every pending timer (the next
ball, a sale's close) for three minutes.  :class:`MonotonicEPollReactor` is the epoll
reactor whose ``seconds`` is ``time.monotonic``, so every timer, ``LoopingCall`` and
timeout of the process counts real elapsed time whatever the wall clock does.
:func:`install` installs it as the process's reactor; the composition roots' command
lines do so before anything imports the global reactor, and ``twist --reactor=bingo``
(or ``twist bingo-hall`` alone, whose options install it when no reactor is yet)
does the same.

**Records.**  A record's time is the wall clock's, read by :class:`JournalClock`: it is
also an ``IReactorTime`` whose ``callLater`` is the reactor's (monotonic), so the code
that reads "now" and sets a timer from it (a sale's deadline, the next ball) takes both
from one object.  Each reading compares how far the wall clock moved with how far the
monotonic clock did; a difference of :data:`STEP_TOLERANCE_S` or more is a step:

- **back**: the records' time does not follow it.  It carries on from where it was at the
  monotonic clock's pace, ahead of the wall clock by the step (:attr:`JournalClock.ahead_s`),
  so deadlines written in records' time still fall due on time (a held clock would
  stall them for as long as the step);
- **forward** (a clock set right after running late, or across midnight): followed; it
  first takes back what an earlier step back had put the records ahead.

Every step is handed to the listeners (:class:`ClockWatch` journals it as
``clock_stepped``: the regulator's feed, the consoles and the minutes show it).  A step
back under the tolerance is held (the records keep the last time until the wall clock
passes it), and the journal's sealing never lets a record's time go back in any case
(:func:`protocol.records.seal_entries`).  At start the records carry on from the
journal's last record when the wall clock reads before it (:meth:`JournalClock.continue_from`).

On a reactor that is not monotonic (the tests' ``task.Clock``, pytest's reactor) the
clock reads the reactor's time for both: it clamps, and sees no step.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from twisted.application.service import Service
from twisted.internet import defer, task
from twisted.internet.epollreactor import EPollReactor
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

from protocol.records.clock import ClockStepped

#: A difference between the wall clock's and the monotonic clock's progress that is a step,
#: in seconds.  NTP slews by 0.5 ms a second at most, and the two are read together, so
#: nothing else comes near; chrony and ntpd step at 0.128-1 s.
STEP_TOLERANCE_S = 1.0
#: The longest the two readings of one look may be apart, in seconds (a look interrupted
#: by a pause of the process is taken again, not mistaken for a step).
READ_SPREAD_S = 0.05
#: How often a watch looks at the clock while nothing else does, in seconds.
WATCH_S = 1.0


class MonotonicEPollReactor(EPollReactor):
    """The epoll reactor on the monotonic clock: ``seconds`` (and so every timer's due time,
    the poll's timeout and the firing) is ``time.monotonic``, not the wall clock.

    It also notes when it began to wait for its sockets the turn before this one
    (:attr:`reading_since`): what a read returns now arrived after that, unless a turn left
    it unread, so a receipt time read off a socket is never taken as earlier than that
    (:mod:`server_kit.received`).
    """

    seconds = staticmethod(time.monotonic)  # type: ignore[assignment]
    #: When the reactor began to wait for its sockets the turn before this one (monotonic).
    reading_since = 0.0
    _polled = 0.0

    def doPoll(self, timeout: float | None) -> None:
        now = time.monotonic()
        self.reading_since, self._polled = self._polled or now, now
        super().doPoll(timeout)

    doIteration = doPoll


def install() -> MonotonicEPollReactor:
    """Install :class:`MonotonicEPollReactor` as the process's reactor (before anything imports it)."""
    from twisted.internet.main import installReactor

    reactor = MonotonicEPollReactor()
    installReactor(reactor)
    return reactor


def install_unless_installed() -> None:
    """Install the monotonic reactor unless the process has a reactor already (``twist --reactor``)."""
    if "twisted.internet.reactor" not in sys.modules:
        install()


def schedules_monotonic(reactor: Any) -> bool:
    """Whether ``reactor``'s timers run on the monotonic clock."""
    return getattr(reactor, "seconds", None) is time.monotonic


@dataclass(frozen=True)
class ClockStep:
    """A step of the wall clock: ``step_s`` (negative: back), the wall clock's reading after it,
    how far the records' time is ahead of the wall clock then, and whether it was found at start."""

    step_s: float
    wall_s: float
    ahead_s: float
    at_start: bool = False

    def record(self) -> ClockStepped:
        step_ms = round(self.step_s * 1000) or (-1 if self.step_s < 0 else 1)
        return ClockStepped(step_ms=step_ms, wall_ms=int(self.wall_s * 1000), ahead_ms=round(self.ahead_s * 1000),
                            at_start=self.at_start)

    def describe(self) -> str:
        return self.record().describe()


@implementer(IReactorTime)
class JournalClock:
    """The time a server's records are stamped with, and its timers (``callLater`` on ``timers``).

    ``wall`` and ``monotonic`` are read together at each :meth:`seconds`; see the module.
    It may be read from any thread (the regulator's receiver stamps its records on a thread
    of its own): each reading is one at a time.
    """

    def __init__(self, timers: IReactorTime, wall: Callable[[], float], monotonic: Callable[[], float],
                 tolerance_s: float = STEP_TOLERANCE_S) -> None:
        self.timers = timers
        self.wall = wall
        self.monotonic = monotonic
        self.tolerance_s = tolerance_s
        #: How far the records' time is ahead of the wall clock (after steps back), in seconds.
        self.ahead_s = 0.0
        #: Called with each step found (on the thread that read the clock: the reactor's).
        self.listeners: list[Callable[[ClockStep], None]] = []
        self._wall, self._monotonic = self._look()
        self._last = self._wall
        #: One reading at a time: two interleaved would see a step of the time between them.
        self._reading = threading.Lock()

    @classmethod
    def of(cls, reactor: IReactorTime) -> "JournalClock":
        """The clock of a server on ``reactor``: the wall clock against the reactor's monotonic
        one, or (a reactor on the wall clock, a test's ``task.Clock``) the reactor's time alone."""
        if schedules_monotonic(reactor):
            return cls(reactor, time.time, reactor.seconds)
        return cls(reactor, reactor.seconds, reactor.seconds)

    def _look(self) -> tuple[float, float]:
        """The wall and the monotonic clock read together (again if something came between)."""
        for _ in range(5):
            before = self.monotonic()
            wall = self.wall()
            after = self.monotonic()
            if after - before <= READ_SPREAD_S:
                break
        return wall, after

    def continue_from(self, time_ms: int) -> ClockStep | None:
        """At start: the journal's last record has ``time_ms``; records carry on from it when the
        wall clock reads before it (the step is returned, and told the listeners, when that
        is by the tolerance or more)."""
        last = time_ms / 1000
        self._last = max(self._last, last)
        behind = last - self.wall()
        if behind <= 0:
            return None
        self.ahead_s = max(self.ahead_s, behind)
        if behind < self.tolerance_s:
            return None
        step = ClockStep(-behind, last - behind, self.ahead_s, at_start=True)
        self._tell(step)
        return step

    def seconds(self) -> float:
        """The records' time now: the wall clock, plus what steps back put it ahead, never backwards."""
        step = None
        with self._reading:
            wall, monotonic = self._look()
            drift = (wall - self._wall) - (monotonic - self._monotonic)
            self._wall, self._monotonic = wall, monotonic
            if abs(drift) >= self.tolerance_s:
                self.ahead_s = self.ahead_s - drift if drift < 0 else max(0.0, self.ahead_s - drift)
                step = ClockStep(drift, wall, self.ahead_s)
            now = max(wall + self.ahead_s, self._last)
            self._last = now
        if step is not None:
            self._tell(step)
        return now

    def now_ms(self) -> int:
        return int(self.seconds() * 1000)

    def wall_ms(self) -> int:
        """The wall clock as it reads, steps and all (what a check of the clock looks at); any thread."""
        return int(self.wall() * 1000)

    def _tell(self, step: ClockStep) -> None:
        for listener in list(self.listeners):
            listener(step)

    # IReactorTime: the timers are the reactor's.

    def callLater(self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any) -> IDelayedCall:
        return self.timers.callLater(delay, callable, *args, **kw)

    def getDelayedCalls(self) -> Any:
        return self.timers.getDelayedCalls()


class ClockWatch(Service):
    """Journals every step of ``clock`` as ``clock_stepped`` through ``core`` (command
    ``record_clock_step`` by ``actor``: the server's own system actor), and logs it.

    It looks at the clock every :data:`WATCH_S` seconds, so a step is found while nothing
    else reads the time.  A step is journaled on the reactor's next turn (never from inside
    the reading that found it, which may be a command being decided); one whose record
    could not be committed is tried again at the next look.
    """

    log = Logger()
    COMMAND = "record_clock_step"

    def __init__(self, core: Any, clock: JournalClock, actor: Any, every_s: float = WATCH_S) -> None:
        self.core = core
        self.clock = clock
        self.actor = actor
        self.every_s = every_s
        #: Steps found and not yet journaled, oldest first (one at a time is in flight).
        self.waiting: deque[ClockStep] = deque()
        self._writing: defer.Deferred[Any] | None = None
        self._loop: task.LoopingCall | None = None
        core.allow({self.COMMAND: {actor.role}})
        clock.listeners.append(self.found)  # a step found before the start (at start) waits for it

    def startService(self) -> None:
        super().startService()
        self._loop = task.LoopingCall(self._look)
        self._loop.clock = self.clock.timers
        self._loop.start(self.every_s, now=True)

    def stopService(self) -> None:
        super().stopService()
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def found(self, step: ClockStep) -> None:
        self.log.warn("Clock: {what}", what=step.describe())
        self.waiting.append(step)
        if self.running:
            self.clock.timers.callLater(0, self._write)

    def _look(self) -> None:
        self.clock.seconds()
        self._write()

    def _write(self) -> None:
        if self._writing is not None or not self.waiting or not self.running:
            return
        step = self.waiting[0]
        writing = self.core.execute(self.actor, self.COMMAND, lambda now: [step.record()])
        self._writing = writing

        def written(_: Any) -> None:
            self._writing = None
            if self.waiting and self.waiting[0] is step:
                self.waiting.popleft()
            if self.waiting and self.running:
                self.clock.timers.callLater(0, self._write)

        def failed(failure: Any) -> None:
            self._writing = None  # the next look tries again
            self.log.failure("The clock's step could not be journaled; trying again in {s} s", failure, s=self.every_s)

        writing.addCallbacks(written, failed)

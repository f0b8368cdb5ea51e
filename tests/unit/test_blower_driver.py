"""The blower driver on a fake clock and a fake transport, against the firmware's pure
logic: the protocol object only forwards bytes, so a ``StringTransport`` and the
simulated chamber stand in for the serial port and the board."""

from __future__ import annotations

import os
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from ball_blower_fw.chamber import SimulatedChamber
from ball_blower_fw.host import FAST_TIMINGS
from ball_blower_fw.logic import Blower
from hall_server.blower import ApprovedFirmware, BlowerBusy, BlowerDriver, RecordingObserver
from protocol import blower_messages as bm

VERSION = (1, 0, 0)
HASH = bytes(range(32))
APPROVED = ApprovedFirmware().with_release(VERSION, HASH)


class Bench:
    """A driver on a ``StringTransport`` and a firmware ``Blower`` on one fake clock."""

    def __init__(self, chamber: SimulatedChamber | None = None) -> None:
        self.clock = Clock()
        self.chamber = chamber or SimulatedChamber(os.urandom)
        self.blower = self.boot()
        self.observer = RecordingObserver()
        self.driver = self.connect()

    def boot(self) -> Blower:
        blower = Blower(self.chamber, VERSION, HASH, lambda: int.from_bytes(os.urandom(4), "big"),
                        timings=FAST_TIMINGS)
        blower.boot(self.now())
        return blower

    def connect(self, **kwargs: Any) -> BlowerDriver:
        driver = BlowerDriver(self.clock, APPROVED, observer=self.observer, **kwargs)
        self.transport = StringTransport()
        self.protocol = driver.factory().buildProtocol(None)
        self.protocol.makeConnection(self.transport)
        return driver

    def now(self) -> int:
        return int(self.clock.seconds() * 1000)

    def step(self) -> None:
        self.clock.advance(0.002)
        self.blower.receive(self.transport.value(), self.now())
        self.transport.clear()
        self.blower.tick(self.now())
        out = self.blower.output()
        if out:
            self.protocol.dataReceived(out)

    def wait(self, d: Deferred[Any], limit: float = 20.0) -> Any:
        outcome: list[Any] = []
        d.addBoth(outcome.append)
        end = self.clock.seconds() + limit
        while not outcome and self.clock.seconds() < end:
            self.step()
        assert outcome, "no answer within %s s of fake time" % limit
        if hasattr(outcome[0], "raiseException"):
            outcome[0].raiseException()
        return outcome[0]


def test_a_game_is_drawn_through_a_string_transport_each_ball_once() -> None:
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    bench.wait(bench.driver.start_game(3))
    balls = [bench.wait(bench.driver.draw()) for _ in range(90)]
    assert sorted(balls) == list(range(1, 91))
    assert bench.driver.drawn == balls


def test_a_sync_the_blower_is_busy_for_is_sent_again_on_a_fresh_link() -> None:
    """Right after a count the blower is still returning its balls and refuses SYNC as
    busy; the driver asks again instead of waiting for ever (the reserve switch hung)."""
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    assert bench.wait(bench.driver.count_set()).complete
    # The game resumed has drawn 5, 17 and 90: those balls lie on the rack, not in the
    # chamber (left in it, a draw could read one again and the blower rightly refuses it).
    for number in (5, 17, 90):
        bench.chamber.chamber.remove(number)
        bench.chamber.rack_list.append(number)
    bench.driver.resume_game(8, [5, 17, 90])
    bench.wait(bench.driver.resynchronise(), limit=5)
    assert (bench.blower.game, bench.blower.draws, bench.blower.drawn) == (8, 3, {5, 17, 90})
    assert bench.wait(bench.driver.draw()) not in (5, 17, 90)


def test_a_count_asked_while_the_last_ball_is_racked_is_asked_again() -> None:
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    bench.wait(bench.driver.start_game(2))
    bench.wait(bench.driver.draw())
    # Asked the moment the ball is confirmed: the blower is still racking it.
    report = bench.wait(bench.driver.count_set())
    assert report.complete


def test_a_ball_drawn_but_not_committed_before_a_restart_is_the_next_draws_ball() -> None:
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    bench.wait(bench.driver.start_game(5))
    committed = [bench.wait(bench.driver.draw()) for _ in range(4)]
    uncommitted = bench.wait(bench.driver.draw())  # the hall dies before committing it
    bench.driver.stop()
    bench.driver = bench.connect()
    bench.driver.resume_game(5, committed)
    bench.wait(bench.driver.when_ready())
    assert bench.wait(bench.driver.draw()) == uncommitted
    for _ in range(20):
        bench.step()  # the CONFIRM reaches the blower
    assert (bench.blower.draws, bench.blower.last_ball) == (5, uncommitted)


def test_a_forced_resynchronisation_makes_the_blower_forget_a_recalled_ball() -> None:
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    bench.wait(bench.driver.start_game(6))
    kept = bench.wait(bench.driver.draw())
    recalled = bench.wait(bench.driver.draw())
    bench.driver.resume_game(6, [kept])
    bench.wait(bench.driver.resynchronise(force=True))
    assert (bench.blower.draws, bench.blower.last_ball, bench.blower.drawn) == (1, kept, {kept})
    assert bench.wait(bench.driver.draw()) != recalled  # it lies on the rack


def test_stopping_fails_what_is_asked_and_leaves_no_timer_behind() -> None:
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    bench.wait(bench.driver.start_game(1))
    pending = bench.driver.draw()
    failures: list[Any] = []
    pending.addErrback(failures.append)
    bench.driver.stop()
    assert failures and failures[0].check(BlowerBusy)
    assert bench.clock.getDelayedCalls() == []


def test_a_resynchronisation_waits_while_the_blower_is_busy_and_then_completes() -> None:
    bench = Bench()
    bench.wait(bench.driver.when_ready())
    bench.driver.resume_game(4, [1, 2, 3])
    bench.blower.mode = 1  # counting: the blower is busy until the count ends
    waiting = bench.driver.resynchronise()
    outcome: list[Any] = []
    waiting.addBoth(outcome.append)
    for _ in range(100):
        bench.step()
    assert not outcome  # busy: asked again, still waiting
    bench.blower.mode = 0
    bench.wait(waiting)
    assert bench.blower.game == 4


def test_a_fault_reaches_the_observer_and_fails_the_draw() -> None:
    bench = Bench(SimulatedChamber(os.urandom, {"no_ball": 2}))
    bench.wait(bench.driver.when_ready())
    bench.wait(bench.driver.start_game(1))
    bench.wait(bench.driver.draw())
    failed = bench.driver.draw()
    outcome: list[Any] = []
    failed.addErrback(outcome.append)
    while not outcome:
        bench.step()
    assert [f.code for f in bench.observer.faults] == [bm.NO_BALL]
    bench.wait(bench.driver.clear_fault())
    assert bench.wait(bench.driver.draw()) not in bench.driver.drawn[:-1]

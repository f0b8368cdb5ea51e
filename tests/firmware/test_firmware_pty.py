"""The real firmware on the MicroPython unix port, joined to the real driver by ptys
through a relay process: whole games, line noise, restarts of either side, the cable
pulled, and a hostile host."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import pytest_twisted
from twisted.internet import defer, reactor

from hall_server.blower import (
    BlowerBusy, BlowerDriver, BlowerFault, BlowerPair, RecordingObserver, approved_from_tree,
    blower_service,
)
from hall_server.blower.approval import ApprovedFirmware
from hall_server.blower.simulator import REPO_ROOT, open_raw, spawn_firmware
from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import MESSAGE, Link
from tests.support.waiting import WAIT, wait_until, wait_until_in_reactor

pytestmark = pytest.mark.integration
APPROVED = approved_from_tree(REPO_ROOT)


class Line:
    """A relay process between the firmware's pty and the driver's pty."""

    def __init__(self, tmp: Path, noise: float = 0.0, seed: int = 1, baud: int = 0) -> None:
        self.report = tmp / "relay.json"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hall_server.blower", "relay", "--noise", str(noise),
             "--seed", str(seed), "--baud", str(baud), "--report", str(self.report)],
            stdout=subprocess.PIPE, cwd=REPO_ROOT)
        assert self.process.stdout is not None
        self.blower_side, self.driver_side = self.process.stdout.readline().decode().split()
        self.firmware: subprocess.Popen[bytes] | None = None
        self.state = str(tmp / "chamber.json")

    def start_firmware(self, faults: str = "") -> None:
        self.firmware = spawn_firmware(self.blower_side, faults=faults, state=self.state)

    def kill_firmware(self) -> None:
        assert self.firmware is not None
        self.firmware.kill()
        self.firmware.wait()

    def unplug(self) -> None:
        self.process.send_signal(signal.SIGUSR1)

    def plug(self) -> None:
        self.process.send_signal(signal.SIGUSR2)

    def close(self) -> dict[str, Any]:
        if self.firmware is not None and self.firmware.poll() is None:
            self.kill_firmware()
        self.process.terminate()
        self.process.wait(timeout=10)
        return json.loads(self.report.read_text())

    def chamber(self) -> dict[str, Any] | None:
        """The chamber's physical state as the firmware last wrote it; None while the
        firmware is writing it (it rewrites the file in place)."""
        try:
            return json.loads(Path(self.state).read_text())
        except (OSError, ValueError):
            return None

    def rack_holds(self, balls: list[int]) -> bool:
        """Whether the chamber's rack holds exactly ``balls``, in order."""
        return (self.chamber() or {}).get("rack") == balls

    def rack_seen(self, balls: list[int]) -> str:
        """What the rack holds, beside ``balls``: for a wait that timed out."""
        chamber = self.chamber()
        if chamber is None:
            return "the chamber's state file being rewritten"
        rack = chamber["rack"]
        return (f"{len(rack)} balls racked, the last {rack[-3:]} (expected the last {balls[-3:]}), "
                f"tube {chamber['tube']}")

    def racked(self, balls: list[int]) -> Any:
        """Fires once the chamber's rack holds ``balls`` (for tests in the reactor).

        The firmware racks a ball when the driver's CONFIRM reaches it, which is after
        the driver has the ball: on a noisy line the CONFIRM may need retransmitting.
        """
        return wait_until_in_reactor(reactor, lambda: self.rack_holds(balls), WAIT,
                                     f"the chamber's rack to hold the {len(balls)} balls drawn",
                                     seen=lambda: self.rack_seen(balls))


@pytest.fixture
def line(tmp_path: Path) -> Iterator[Line]:
    made = Line(tmp_path)
    made.start_firmware()
    yield made
    made.close()


def connect(device: str, **kwargs: Any) -> tuple[BlowerDriver, Any]:
    driver = BlowerDriver(reactor, kwargs.pop("approved", APPROVED), **kwargs)
    service = blower_service(reactor, driver, device)
    service.startService()
    return driver, service


@defer.inlineCallbacks
def draw_game(driver: BlowerDriver, game: int, upto: int = 90, start: int = 0):
    balls = []
    for _ in range(start, upto):
        ball = yield driver.draw()
        balls.append(ball)
    return balls


@pytest.mark.req("R84.2", "R84.4", "R84.1")
@pytest_twisted.ensureDeferred
async def test_switch_to_the_reserve_counts_its_balls_before_and_after(tmp_path):
    for name in ("main", "reserve"):
        (tmp_path / name).mkdir()
    main_line = Line(tmp_path / "main")
    main_line.start_firmware()
    reserve_line = Line(tmp_path / "reserve")
    reserve_line.start_firmware()
    main, main_service = connect(main_line.driver_side, name="main")
    reserve, reserve_service = connect(reserve_line.driver_side, name="reserve")
    counts: list[tuple[str, str, bool]] = []
    pair = BlowerPair(main, reserve, lambda name, when, report: counts.append(
        (name, when, report.complete)))
    try:
        await main.when_ready()
        await reserve.when_ready()
        test = await reserve.self_test()
        assert test.passed
        await main.start_game(8)
        balls = []
        for _ in range(10):
            balls.append(await pair.draw())
        # The reserve takes the next game.  Continuing game 8 on it needs staff to take the
        # ten drawn balls out of its chamber after the count, which the simulated chamber
        # cannot have done to it while its firmware runs (the repeated-number fault would
        # rightly stop the draw); the hall's mid-game switch is tested on fakes in
        # tests/hall/test_blower_source.py.
        await pair.switch_to_reserve(9, [])
        assert pair.active is reserve
        reserve_balls = []
        for _ in range(5):
            reserve_balls.append(await pair.draw())
        await pair.retire_reserve()
        assert pair.active is main
        assert counts == [("reserve", "before use", True), ("reserve", "after use", True)]
        assert len(set(balls)) == 10 and len(set(reserve_balls)) == 5
    finally:
        await main_service.stopService()
        await reserve_service.stopService()
        main_line.close()
        reserve_line.close()


@pytest.mark.req("R83.6", "R85.5")
@pytest_twisted.inlineCallbacks
def test_whole_games_are_drawn_through_the_pty(line: Line):
    """Two games of 90 balls: each game is a permutation of 1..90, and each ball drawn is
    the one the chamber racked."""
    driver, service = connect(line.driver_side)
    try:
        yield driver.when_ready()
        for game in (1, 2):
            yield driver.start_game(game)
            balls = yield draw_game(driver, game)
            assert sorted(balls) == list(range(1, 91))
            yield line.racked(balls)
    finally:
        yield service.stopService()


@pytest.mark.req("R83.6")
@pytest_twisted.inlineCallbacks
def test_line_noise_loses_no_ball_doubles_none_and_every_bad_frame_is_caught(tmp_path):
    """At a 2% byte error rate (flips, drops, duplicates, insertions) a game still draws
    each ball once, both ends detect bad frames, and every frame the driver acted on is
    one the blower really sent."""
    noisy = Line(tmp_path, noise=0.02, seed=7)
    noisy.start_firmware()
    observer = RecordingObserver()
    driver, service = connect(noisy.driver_side, observer=observer)
    accepted: list[bytes] = []
    feed = driver.link.feed

    def recording_feed(data: bytes, now: int) -> list:
        events = feed(data, now)
        accepted.extend(_raw(f) for e, f in events if e == MESSAGE)
        return events
    driver.link.feed = recording_feed  # type: ignore[method-assign]
    try:
        yield driver.when_ready()
        yield driver.start_game(3)
        balls = yield draw_game(driver, 3)
        assert sorted(balls) == list(range(1, 91))
        yield noisy.racked(balls)
    finally:
        yield service.stopService()
        report = noisy.close()
    damage = report["damage"]
    assert min(damage.values()) > 0
    sent = {bytes.fromhex(f) for f in report["blower_frames"]}
    assert accepted and all(frame in sent for frame in accepted)
    assert driver.link.stats["bad"] > 0
    assert any(reason == bm.BAD_FRAME for reason, _ in observer.notices)


def _raw(frame: bf.Frame) -> bytes:
    return bf.encode_frame(frame)[:-1]


@pytest_twisted.inlineCallbacks
def test_firmware_restarted_mid_draw_loses_and_doubles_nothing(line: Line):
    """The controller is killed while draws are in flight and started again: the driver
    resynchronises ("draw n, last ball k") and the game completes."""
    observer = RecordingObserver()
    driver, service = connect(line.driver_side, observer=observer)
    try:
        yield driver.when_ready()
        yield driver.start_game(4)
        balls = yield draw_game(driver, 4, upto=30)
        pending = driver.draw()
        line.kill_firmware()
        line.start_firmware()
        balls.append((yield pending))
        balls += yield draw_game(driver, 4, start=31)
        assert sorted(balls) == list(range(1, 91))
        yield line.racked(balls)
        assert [up for up, _ in observer.links].count(True) >= 2
    finally:
        yield service.stopService()


@pytest_twisted.inlineCallbacks
def test_driver_restarted_mid_draw_resumes_from_the_journal(line: Line):
    """A new driver (the hall server restarted) resumes with the balls it had committed;
    a ball the blower drew but the old driver never delivered is the next draw's ball."""
    driver, service = connect(line.driver_side)
    yield driver.when_ready()
    yield driver.start_game(5)
    balls = yield draw_game(driver, 5, upto=40)
    # The server dies with the 41st ball on the wire: its link takes the BALL frame, and
    # the hall never sees the ball.
    undelivered: list[int] = []
    feed = driver.link.feed

    def dying_feed(data: bytes, now: int) -> list:
        events = feed(data, now)
        undelivered.extend(bm.unpack_ball(f.payload)[2] for e, f in events
                           if e == MESSAGE and f.kind == bf.BALL)
        return [(e, f) for e, f in events if not (e == MESSAGE and f.kind == bf.BALL)]
    driver.link.feed = dying_feed  # type: ignore[method-assign]
    in_flight = driver.draw()
    yield wait_until_in_reactor(reactor, lambda: undelivered, WAIT, "the blower to report the ball of draw 41")
    yield service.stopService()
    # Stopping fails a draw still asked: its ball was never delivered to the hall.
    in_flight.addErrback(lambda failure: failure.trap(BlowerBusy))
    second, service = connect(line.driver_side)
    second.resume_game(5, balls)
    try:
        yield second.when_ready()
        balls += yield draw_game(second, 5, start=40)
        assert balls[40] == undelivered[0]
        assert sorted(balls) == list(range(1, 91))
        yield line.racked(balls)
    finally:
        yield service.stopService()


@pytest_twisted.inlineCallbacks
def test_cable_unplugged_and_back(line: Line):
    """With the line dead mid-game, the driver reports the link down, and after it is
    back the game goes on with no ball lost or doubled."""
    observer = RecordingObserver()
    driver, service = connect(line.driver_side, observer=observer)
    try:
        yield driver.when_ready()
        yield driver.start_game(6)
        balls = yield draw_game(driver, 6, upto=20)
        line.unplug()
        pending = driver.draw()
        yield wait_until_in_reactor(
            reactor, lambda: (False, "the blower stopped answering") in observer.links, WAIT,
            "the driver to report the link down", seen=lambda: observer.links[-3:])
        line.plug()
        balls.append((yield pending))
        balls += yield draw_game(driver, 6, start=21)
        assert sorted(balls) == list(range(1, 91))
    finally:
        yield service.stopService()


@pytest_twisted.inlineCallbacks
def test_a_blower_with_unapproved_firmware_is_not_used(line: Line):
    observer = RecordingObserver()
    driver, service = connect(line.driver_side, observer=observer,
                              approved=ApprovedFirmware().with_release((1, 0, 0), bytes(32)))
    try:
        yield wait_until_in_reactor(
            reactor, lambda: observer.links and "not approved" in observer.links[-1][1], WAIT,
            "the driver to refuse the firmware as not approved", seen=lambda: observer.links[-3:])
        assert not driver.ready
    finally:
        yield service.stopService()


class HostileHost:
    """A host written by hand on the raw pty: it sends what a real driver never would."""

    def __init__(self, device: str) -> None:
        self.fd = open_raw(device)
        self.link = Link()
        self.inbox: list[bf.Frame] = []

    def now(self) -> int:
        return int(time.monotonic() * 1000)

    def pump(self) -> None:
        """Read what the blower sent (waiting up to 10 ms for it) and keep the link going."""
        if select.select([self.fd], [], [], 0.01)[0]:
            for event, frame in self.link.feed(os.read(self.fd, 4096), self.now()):
                if event == MESSAGE:
                    self.inbox.append(frame)
        self.link.poll(self.now())
        self.write(self.link.take_output())

    def pump_until(self, done: Any, what: str) -> Any:
        """Pump until ``done()`` holds (the blower's answer came); its value."""
        return wait_until(lambda: self.pump() or done(), WAIT, what, interval=0,
                          seen=lambda: sorted({f.kind for f in self.inbox}))

    def write(self, data: bytes) -> None:
        if data:
            os.write(self.fd, data)

    def open(self) -> None:
        self.link.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(4242), 0)
        hello = self.pump_until(lambda: [f for f in self.inbox if f.kind == bf.HELLO
                                         and bm.unpack_hello(f.payload)[3] == 4242],
                                "the blower's HELLO to our HELLO_REQ")[-1]
        self.link.reset(hello.link)
        self.inbox.clear()

    def has(self, kind: int) -> bool:
        return any(f.kind == kind for f in self.inbox)

    def take(self, kind: int) -> list[bf.Frame]:
        found = [f for f in self.inbox if f.kind == kind]
        self.inbox = [f for f in self.inbox if f.kind != kind]
        return found

    def noticed(self) -> dict[int, int]:
        """The NOTICE counts received so far, by reason (the frames stay in the inbox)."""
        counts: dict[int, int] = {}
        for frame in self.inbox:
            if frame.kind == bf.NOTICE:
                reason, count = bm.unpack_notice(frame.payload)
                counts[reason] = counts.get(reason, 0) + count
        return counts

    def notices(self, *reasons: int) -> dict[int, int]:
        """Pump until a NOTICE for each of ``reasons`` came; the counts, taken from the inbox."""
        self.pump_until(lambda: set(reasons) <= set(self.noticed()),
                        "the blower's NOTICE of " + ", ".join(map(str, reasons)))
        counts = self.noticed()
        self.take(bf.NOTICE)
        return counts

    def ball(self, game: int, draw_no: int) -> int:
        """Ask for draw ``draw_no`` of ``game``; the ball the blower reports for it."""
        self.link.send(bf.DRAW, bm.pack_draw(game, draw_no), self.now())
        self.pump_until(lambda: self.has(bf.BALL), f"the ball of draw {draw_no}")
        balls = {bm.unpack_ball(f.payload) for f in self.take(bf.BALL)}
        assert len(balls) == 1, balls
        (ball,) = balls
        assert ball[:2] == (game, draw_no), ball
        return ball[2]


def test_a_hostile_host_is_refused_or_ignored_and_told_so(line: Line) -> None:
    """Asking for a ball, garbage, a flood and replayed frames: the firmware refuses or
    ignores each, says so (REFUSED or NOTICE), and keeps drawing correctly."""
    host = HostileHost(line.driver_side)
    host.open()
    host.link.send(bf.NEW_GAME, bm.pack_new_game(9), host.now())
    host.pump_until(lambda: host.has(bf.STATUS), "the blower's STATUS after NEW_GAME")
    host.take(bf.STATUS)
    # Asking for ball 42.
    host.link.send(bf.DRAW, bm.pack_draw(9, 1) + bytes([42]), host.now())
    host.pump_until(lambda: host.has(bf.REFUSED), "the blower to refuse a DRAW naming its ball")
    refused = [bm.unpack_refused(f.payload) for f in host.take(bf.REFUSED)]
    assert refused == [(bf.DRAW, bm.BALL_CHOICE, 0, 0)]
    # Garbage.
    host.write(os.urandom(2000) + b"\x00")
    assert host.notices(bm.BAD_FRAME)[bm.BAD_FRAME] > 0
    # Replaying the recorded NEW_GAME frame (seq 1) and a frame of the previous link.
    replay = bf.encode_frame(bf.Frame(bf.NEW_GAME, host.link.link_id, 1, bm.pack_new_game(9)))
    stale = bf.encode_frame(bf.Frame(bf.DRAW, host.link.link_id ^ 1, 3, bm.pack_draw(9, 1)))
    host.write(replay + stale)
    notices = host.notices(bm.REPLAYED, bm.STALE_LINK)
    assert notices[bm.REPLAYED] == 1 and notices[bm.STALE_LINK] == 1
    # A flood of well-formed frames.
    notice = bf.encode_frame(bf.Frame(bf.NOTICE, host.link.link_id, 0, bm.pack_notice(1, 1)))
    host.write(notice * 1500)
    assert host.notices(bm.FLOODED)[bm.FLOODED] > 0
    # The blower still draws, once per draw number: asked again, it names the same ball.
    host.inbox.clear()
    ball = host.ball(9, 1)
    assert host.ball(9, 1) == ball
    os.close(host.fd)


@pytest.mark.req("R86.1-2")
@pytest_twisted.inlineCallbacks
def test_a_fault_reaches_the_observer_and_the_game_continues_after_clearing(tmp_path):
    faulty = Line(tmp_path)
    faulty.start_firmware(faults="no_ball:5,unreadable:9")
    observer = RecordingObserver()
    driver, service = connect(faulty.driver_side, observer=observer)
    try:
        yield driver.when_ready()
        yield driver.start_game(7)
        balls = []
        while len(balls) < 90:
            try:
                balls.append((yield driver.draw()))
            except BlowerFault:
                yield driver.clear_fault()
        assert sorted(balls) == list(range(1, 91))
        assert [f.code for f in observer.faults] == [bm.NO_BALL, bm.UNREADABLE]
    finally:
        yield service.stopService()
        faulty.close()

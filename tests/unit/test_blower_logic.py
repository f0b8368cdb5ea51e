"""The blower firmware's pure logic under CPython: draws, idempotence, faults, counting,
self-test and refusals, with the simulated chamber and a host-side link."""

import os

import pytest

from ball_blower_fw.chamber import SimulatedChamber
from ball_blower_fw.host import FAST_TIMINGS
from ball_blower_fw.logic import TRANSITIONS, Blower
from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import MESSAGE, Link

HASH = bytes(range(32))


class Bench:
    """A blower and a host link joined by a perfect line, on a fake millisecond clock."""

    def __init__(self, faults: dict | None = None, state_path: str = "") -> None:
        self.chamber = SimulatedChamber(os.urandom, faults, state_path)
        self.now = 0
        self.host = Link(retransmit_ms=50)
        self.inbox: list[bf.Frame] = []
        self.boot()

    def boot(self) -> None:
        self.blower = Blower(self.chamber, (1, 0, 0), HASH,
                             lambda: int.from_bytes(os.urandom(4), "big"),
                             timings=FAST_TIMINGS)
        self.blower.boot(self.now)
        self.host.reset(0)
        self.host.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(77), 0)
        hello = self.run_until(bf.HELLO)
        self.host.reset(hello.link)

    def step(self, ms: int = 2) -> None:
        self.now += ms
        self.blower.receive(self.host.take_output(), self.now)
        self.blower.tick(self.now)
        for event, item in self.host.feed(self.blower.output(), self.now):
            if event == MESSAGE and item.kind != bf.HELLO or event == MESSAGE and \
                    bm.unpack_hello(item.payload)[3] == 77:
                self.inbox.append(item)
        self.host.poll(self.now)

    def run_until(self, kind: int, limit_ms: int = 5000) -> bf.Frame:
        end = self.now + limit_ms
        while self.now < end:
            for i, frame in enumerate(self.inbox):
                if frame.kind == kind:
                    return self.inbox.pop(i)
            self.step()
        raise AssertionError("no frame of kind %#x; inbox %r" % (kind, self.inbox))

    def send(self, kind: int, payload: bytes) -> None:
        self.host.send(kind, payload, self.now)

    def new_game(self, game: int = 1) -> None:
        self.send(bf.NEW_GAME, bm.pack_new_game(game))
        assert bm.unpack_status(self.run_until(bf.STATUS).payload)[1] == game

    def draw(self, game: int, n: int) -> int:
        self.send(bf.DRAW, bm.pack_draw(game, n))
        g, d, ball = bm.unpack_ball(self.run_until(bf.BALL).payload)
        assert (g, d) == (game, n)
        return ball

    def draw_and_confirm(self, game: int, n: int) -> int:
        ball = self.draw(game, n)
        self.send(bf.CONFIRM, bm.pack_confirm(game, n, ball))
        return ball

    def refusal(self) -> tuple:
        return bm.unpack_refused(self.run_until(bf.REFUSED).payload)


@pytest.mark.req("R83.6")
def test_a_whole_game_draws_each_of_the_90_balls_once() -> None:
    bench = Bench()
    bench.new_game(1)
    balls = [bench.draw_and_confirm(1, n) for n in range(1, 91)]
    assert sorted(balls) == list(range(1, 91))
    bench.send(bf.DRAW, bm.pack_draw(1, 91))
    assert bench.refusal()[1] == bm.SET_EXHAUSTED


def test_asking_again_for_a_draw_returns_the_same_ball() -> None:
    """DRAW n is idempotent: before and after CONFIRM it reports the one ball of draw n."""
    bench = Bench()
    bench.new_game(2)
    first = bench.draw(2, 1)
    assert bench.draw(2, 1) == first
    bench.send(bf.CONFIRM, bm.pack_confirm(2, 1, first))
    assert bench.draw(2, 1) == first
    assert len(bench.chamber.chamber) == 89


def test_the_host_cannot_choose_a_ball() -> None:
    """A DRAW with a ball number appended is refused, and no ball is released."""
    bench = Bench()
    bench.new_game(3)
    bench.send(bf.DRAW, bm.pack_draw(3, 1) + bytes([42]))
    assert bench.refusal()[:2] == (bf.DRAW, bm.BALL_CHOICE)
    assert bench.chamber.releases == 0


def test_out_of_step_wrong_game_and_unknown_commands_are_refused() -> None:
    bench = Bench()
    bench.new_game(4)
    bench.send(bf.DRAW, bm.pack_draw(4, 5))
    assert bench.refusal()[1] == bm.OUT_OF_STEP
    bench.send(bf.DRAW, bm.pack_draw(9, 1))
    assert bench.refusal()[1] == bm.WRONG_GAME
    bench.send(0x30, b"")
    assert bench.refusal()[:2] == (0x30, bm.UNKNOWN_COMMAND)
    bench.send(bf.NEW_GAME, b"\x00")
    assert bench.refusal()[1] == bm.BAD_PAYLOAD


@pytest.mark.parametrize("fault, code", [
    ({"no_ball": 2}, bm.NO_BALL),
    ({"unreadable": 2}, bm.UNREADABLE),
    ({"repeat": 2}, bm.REPEATED_NUMBER),
    ({"pump": 2}, bm.PUMP_FAILURE),
    ({"jam": 1}, bm.JAM),
])
@pytest.mark.req("R86.1-2")
def test_each_fault_is_reported_and_cleared_without_losing_a_ball(fault: dict,
                                                                  code: int) -> None:
    """The fault is reported, draws are refused until cleared, then the game goes on
    with no ball lost or repeated."""
    bench = Bench(fault)
    bench.new_game(5)
    balls = []
    faults = []
    n = 1
    while n <= 4:
        bench.send(bf.DRAW, bm.pack_draw(5, n))
        while True:
            if any(f.kind == bf.FAULT for f in bench.inbox):
                faults.append(bm.unpack_fault(bench.run_until(bf.FAULT).payload)[0])
                bench.send(bf.DRAW, bm.pack_draw(5, n))
                assert bench.refusal()[1] == bm.IN_FAULT
                bench.send(bf.CLEAR_FAULT, b"")
                bench.run_until(bf.STATUS)
                break
            if any(f.kind == bf.BALL for f in bench.inbox):
                ball = bm.unpack_ball(bench.run_until(bf.BALL).payload)[2]
                bench.send(bf.CONFIRM, bm.pack_confirm(5, n, ball))
                balls.append(ball)
                n += 1
                break
            bench.step()
    for _ in range(10):
        bench.step()  # the last confirmed ball reaches the rack
    assert faults == [code]
    assert len(set(balls)) == 4 and sorted(bench.chamber.rack_list) == sorted(balls)
    assert sorted(bench.chamber.chamber + bench.chamber.rack_list) == list(range(1, 91))


@pytest.mark.req("R84.2", "R84.4")
@pytest.mark.parametrize("fault, counted, missing, repeated", [
    ({}, 90, [], []),
    ({"missing": 17}, 89, [17], []),
    ({"duplicate": 40}, 90, [41], [40]),
])
def test_count_the_set_reports_count_missing_and_repeated(fault: dict, counted: int,
                                                          missing: list,
                                                          repeated: list) -> None:
    bench = Bench(fault)
    bench.new_game(6)
    bench.draw_and_confirm(6, 1)
    bench.send(bf.COUNT_SET, b"")
    result = bm.unpack_count_result(bench.run_until(bf.COUNT_RESULT, 60_000).payload)
    assert result == (counted, 0, missing, repeated)
    assert len(bench.chamber.chamber) == counted and not bench.chamber.rack_list


@pytest.mark.req("R84.1")
def test_self_test_checks_pump_sensor_and_reader() -> None:
    bench = Bench()
    bench.send(bf.SELF_TEST, b"")
    assert bench.run_until(bf.SELF_TEST_RESULT).payload == b"\x00"
    bench.chamber.faults["pump"] = bench.chamber.pump_starts + 1
    bench.send(bf.SELF_TEST, b"")
    assert bench.run_until(bf.SELF_TEST_RESULT).payload == bytes([bm.TEST_PUMP])


def test_a_restart_mid_draw_keeps_the_ball_in_the_tube(tmp_path) -> None:
    """After a controller restart and SYNC, the ball already in the tube is the one
    reported for the draw: none is lost and none released twice."""
    bench = Bench(state_path=str(tmp_path / "chamber.json"))
    bench.new_game(7)
    first = bench.draw_and_confirm(7, 1)
    for _ in range(20):
        bench.step()
    second = bench.draw(7, 2)  # reported, never confirmed
    bench.chamber = SimulatedChamber(os.urandom, None, str(tmp_path / "chamber.json"))
    bench.inbox.clear()
    bench.boot()
    bench.send(bf.SYNC, bm.pack_sync(7, [first], first))
    bench.run_until(bf.STATUS)
    assert bench.draw(7, 2) == second
    assert bench.chamber.releases == 0


def test_replayed_hello_request_of_an_old_host_is_ignored() -> None:
    bench = Bench()
    old = bench.blower.link.link_id
    bench.host.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(78), 0)
    bench.step()
    bench.host.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(77), 0)
    bench.step()
    assert bench.blower.link.link_id != old
    assert bench.blower.link._unreported.get(bm.REPLAYED) == 1


def test_the_transition_table_names_existing_actions() -> None:
    for (state, event), (target, action) in TRANSITIONS.items():
        assert callable(getattr(Blower, action)), action
        assert 0 <= state < len(bm.STATE_NAMES) and 0 <= target < len(bm.STATE_NAMES)

"""The blower as the hall game's ball source, on a real journal with a fake blower:
announce after commit, the uncommitted ball after a restart, faults journaled and
suspending the game (R86.1), the reserve switch with its counts (R84.4), the self-test
as the draw-device check (R84.1)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from twisted.internet.defer import Deferred, fail, succeed

from hall_server.blower.driver import CountReport, SelfTestReport
from hall_server.blower.errors import BlowerFault
from hall_server.blower.hall import HallBlowers, balls_present
from hall_server.blower.source import game_code
from hall_server.hall.games import GameModuleError, GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.session import SessionModule
from protocol import blower_messages as bm
from protocol.balls import BallError
from protocol.chain import Record
from server_kit.core import CommandCore, NotAllowed, run_inline
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_games import CASHIER, CATALOG, RULES, SELLER, TABLE
from tests.hall.test_session import CHIEF, open_session

WITNESSES = ["Marta Soler (public)"]
WHOLE = CountReport(90, 0, (), ())


class FakeMachine:
    """The blower's chamber and controller: what stays true when the hall server restarts.

    It releases balls in ``script`` order and keeps the balls it drew for its game; asked
    for draw n when it already drew n balls, it gives ball n again (the idempotent DRAW).
    """

    def __init__(self, seed: int) -> None:
        self.script = random.Random(seed).sample(range(1, 91), 90)
        self.game = 0
        self.balls: list[int] = []

    def ball_for(self, draw_no: int) -> int:
        if draw_no > len(self.balls):
            self.balls.append(next(b for b in self.script if b not in self.balls))
        return self.balls[draw_no - 1]


class FakeBlower:
    """The driver's port (``hall_server.blower.source.BallBlower`` and what
    ``HallBlowers`` asks of a driver) over a :class:`FakeMachine`."""

    def __init__(self, name: str, machine: FakeMachine) -> None:
        self.name = name
        self.machine = machine
        self.game = 0
        self.drawn: list[int] = []
        self.ready = True
        self.observer: Any = None
        self.hold = False  # a held draw waits for ``read()``: the ball is mixing
        self.held: list[tuple[Deferred[int], int]] = []
        self.in_fault = False
        self.count_report = WHOLE
        self.self_test_failures = 0
        self.syncs: list[bool] = []
        #: Draw number -> the number the reader reads instead of the ball physically drawn.
        self.misreads: dict[int, int] = {}

    def start_game(self, game: int) -> Deferred[None]:
        self.game = self.machine.game = game
        self.drawn, self.machine.balls = [], []
        return succeed(None)

    def resume_game(self, game: int, drawn: list[int]) -> None:
        self.game, self.drawn = game, list(drawn)

    def resynchronise(self, force: bool = False) -> Deferred[None]:
        # The blower takes the hall's balls, unless it is one draw ahead and not forced.
        self.syncs.append(force)
        one_ahead = self.machine.game == self.game and len(self.machine.balls) == len(self.drawn) + 1
        if force or not one_ahead:
            self.machine.game, self.machine.balls = self.game, list(self.drawn)
        return succeed(None)

    def draw(self) -> Deferred[int]:
        if self.in_fault:
            return fail(BlowerFault(bm.JAM, self.game, len(self.drawn) + 1))
        d: Deferred[int] = Deferred()
        draw_no = len(self.drawn) + 1
        ball = self.misreads.pop(draw_no, self.machine.ball_for(draw_no))
        if self.hold:
            self.held.append((d, ball))
        else:
            self._deliver(d, ball)
        return d

    def _deliver(self, d: Deferred[int], ball: int) -> None:
        self.drawn.append(ball)
        d.callback(ball)

    def read(self) -> None:
        d, ball = self.held.pop(0)
        self._deliver(d, ball)

    def jam(self) -> None:
        """The ball jams: the fault reaches the observer, then the draw fails, as the driver does."""
        self.in_fault = True
        fault = BlowerFault(bm.JAM, self.game, len(self.drawn) + 1)
        self.observer.blower_fault(self.name, fault)
        if self.held:
            self.held.pop(0)[0].errback(fault)

    def clear_fault(self) -> Deferred[None]:
        self.in_fault = False
        return succeed(None)

    def count_set(self) -> Deferred[CountReport]:
        self.game = self.machine.game = 0
        self.drawn, self.machine.balls = [], []
        return succeed(self.count_report)

    def self_test(self) -> Deferred[SelfTestReport]:
        return succeed(SelfTestReport(self.self_test_failures))


class BlowerHall:
    """A core with the session, ledger, games and blower modules, as the composition root wires them."""

    def __init__(self, journal: Journal, clock: Any, main: FakeMachine, reserve: FakeMachine) -> None:
        self.journal = journal
        self.clock = clock
        self.machines = (main, reserve)
        self.core = CommandCore(journal, clock, run_inline)
        self.main, self.reserve = FakeBlower("main", main), FakeBlower("reserve", reserve)
        self.blowers = HallBlowers(self.core, self.main, self.reserve)  # type: ignore[arg-type]
        self.session = SessionModule(self.core)
        self.ledger = LedgerModule(self.core)
        self.games = GamesModule(self.core, self.session, self.ledger, CATALOG, self.blowers, RULES)
        self.blowers.install(self.games, self.session)
        self.shown: list[Record] = []
        self.core.observers.append(self.shown.append)

    def restarted(self) -> "BlowerHall":
        """A new process over the same journal and the same blowers."""
        again = BlowerHall(self.journal, self.clock, *self.machines)
        again.core.recover()
        again.blowers.resume()
        return again

    def records(self, kind: str) -> list[Record]:
        return [r for r in self.journal.records() if r.type == kind]

    def balls(self) -> list[int]:
        game = self.games.current
        return list(game.machine.drawn) if game else []

    def draw(self) -> int:
        (record,) = result(self.games.draw_ball(SELLER))
        return record.payload["ball"]


@pytest.fixture
def hall(journal: Journal, clock: Any) -> BlowerHall:
    made = BlowerHall(journal, clock, FakeMachine(1), FakeMachine(2))
    open_session(made.session)
    result(made.games.announce_sale(SELLER, 7))
    result(made.games.sell_cards(SELLER, 7, 1, 20))
    result(made.games.close_sale(CHIEF))
    return made


@pytest.mark.req("R85.5", "R83.6")
def test_a_ball_is_committed_only_once_the_blower_read_it_and_shown_only_after_the_commit(hall: BlowerHall) -> None:
    hall.main.hold = True
    drawing = hall.games.draw_ball(SELLER)
    assert not finished(drawing) and not hall.records("ball_drawn") and not hall.shown[-1].type == "ball_drawn"
    hall.main.read()
    (record,) = result(drawing)
    assert record.type == "ball_drawn" and hall.shown[-1] == record
    assert record.payload["ball"] == hall.machines[0].balls[0]
    assert hall.main.game == game_code(hall.games.current.game_id)


@pytest.mark.req("R83.6")
def test_a_whole_game_is_drawn_in_the_order_the_blower_released_the_balls(hall: BlowerHall) -> None:
    balls = [hall.draw() for _ in range(90)]
    assert balls == hall.machines[0].script


def test_a_ball_the_blower_presented_but_the_hall_never_committed_is_the_next_ball_after_a_restart(
    hall: BlowerHall,
) -> None:
    for _ in range(5):
        hall.draw()
    hall.main.hold = True
    hall.games.draw_ball(SELLER)  # the blower presents ball 6; the server dies before the commit
    presented = hall.machines[0].balls[5]
    assert len(hall.balls()) == 5

    again = hall.restarted()
    assert again.main.drawn == hall.balls() and again.main.game == game_code(again.games.current.game_id)
    assert again.draw() == presented
    assert again.balls() == hall.machines[0].balls


def test_a_draw_refused_after_the_ball_came_leaves_that_ball_for_the_next_draw(hall: BlowerHall) -> None:
    hall.draw()
    hall.main.hold = True
    drawing = hall.games.draw_ball(SELLER)
    result(hall.games.suspend_game(CHIEF, "a player fainted"))
    hall.main.read()
    with pytest.raises(Exception, match="cannot draw a ball"):
        result(drawing)
    result(hall.games.resume_game(CHIEF))
    hall.main.hold = False
    assert hall.draw() == hall.machines[0].balls[1]
    assert hall.balls() == hall.machines[0].balls


def finished(deferred: Deferred) -> bool:
    """Whether ``deferred`` has its result (a Deferred waiting on another is not finished)."""
    outcome: list[object] = []

    def keep(value: object) -> object:
        outcome.append(value)
        return value

    deferred.addBoth(keep)
    return bool(outcome)


def test_only_the_seller_caller_makes_the_blower_draw(hall: BlowerHall) -> None:
    with pytest.raises(NotAllowed):
        result(hall.games.draw_ball(CASHIER))
    assert hall.machines[0].balls == []


def test_a_second_draw_while_the_blower_mixes_waits_its_turn(hall: BlowerHall) -> None:
    hall.main.hold = True
    first = hall.games.draw_ball(SELLER)
    second = hall.games.draw_ball(SELLER)
    assert not finished(first) and not finished(second)
    assert len(hall.main.held) == 1, "the blower is asked for one ball at a time"
    hall.main.read()
    assert result(first)[0].payload["ball_count"] == 1
    assert len(hall.main.held) == 1, "the second draw asks the blower once the first is committed"
    assert not finished(second)
    hall.main.read()
    assert result(second)[0].payload["ball_count"] == 2
    assert hall.balls() == hall.machines[0].balls


@pytest.mark.req("R86.1-2")
def test_a_blower_fault_is_journaled_and_suspends_the_game_as_the_server(hall: BlowerHall) -> None:
    hall.draw()
    hall.main.hold = True
    drawing = hall.games.draw_ball(SELLER)
    hall.main.jam()
    with pytest.raises(BallError, match="main blower: .*jam"):
        result(drawing)
    (fault,) = hall.records("blower_fault")
    assert fault.payload["blower"] == "main" and fault.payload["code"] == bm.JAM
    assert fault.payload["actor"] == {"name": "hall-server", "role": "system"}
    (suspended,) = hall.records("game_suspended")
    assert suspended.payload["actor"]["role"] == "system" and "jam" in suspended.payload["reason"]
    assert [r.type for r in hall.shown[-2:]] == ["blower_fault", "game_suspended"]
    assert len(hall.balls()) == 1

    with pytest.raises(NotAllowed):
        result(hall.blowers.clear_fault(SELLER))
    result(hall.blowers.clear_fault(CHIEF))
    assert hall.records("blower_fault_cleared")[0].payload["blower"] == "main"
    result(hall.games.resume_game(CHIEF))
    hall.main.hold = False
    hall.draw()
    assert hall.balls() == hall.machines[0].balls


def test_a_fault_of_the_blower_not_in_use_is_journaled_without_suspending_the_game(hall: BlowerHall) -> None:
    hall.draw()
    hall.reserve.jam()
    assert hall.records("blower_fault")[0].payload["blower"] == "reserve"
    assert not hall.records("game_suspended")


def test_the_link_going_down_and_up_is_journaled(hall: BlowerHall) -> None:
    hall.blowers.blower_link("main", False, "the blower stopped answering")
    hall.blowers.blower_link("main", True, "firmware 1.0.0 approved")
    assert [(r.payload["up"], r.payload["detail"]) for r in hall.records("blower_link")] == [
        (False, "the blower stopped answering"), (True, "firmware 1.0.0 approved")]


@pytest.mark.req("R84.4", "R83.6")
def test_the_reserve_is_counted_before_and_after_use_and_continues_the_game(hall: BlowerHall) -> None:
    first = [hall.draw() for _ in range(10)]
    result(hall.blowers.switch_to_reserve(CHIEF, WITNESSES))
    (before,) = hall.records("balls_counted")[1:]
    assert (before.payload["stage"], before.payload["missing"], before.payload["witnesses"]) == (
        "reserve_before", [], WITNESSES)
    assert hall.records("blower_switched")[0].payload["to"] == "reserve"
    assert hall.reserve.syncs == [False] and hall.machines[1].balls == first  # "draw 10, last ball k"
    later = [hall.draw() for _ in range(5)]
    assert hall.balls() == first + later and not set(later) & set(first)
    assert hall.machines[0].balls == first  # the main blower drew nothing more

    # A restart draws from the blower the journal says is in use.
    again = hall.restarted()
    assert again.blowers.in_use() is again.reserve and again.reserve.drawn == hall.balls()

    result(again.blowers.retire_reserve(CHIEF, WITNESSES))
    assert [r.payload["stage"] for r in again.records("balls_counted")] == ["opening", "reserve_before", "reserve_after"]
    assert again.blowers.in_use() is again.main
    ball = again.draw()
    assert again.main.syncs == [True] and ball not in first + later


@pytest.mark.req("R84.4")
def test_a_reserve_set_that_is_not_whole_is_recorded_and_not_used(hall: BlowerHall) -> None:
    hall.reserve.count_report = CountReport(89, 0, (17,), ())
    with pytest.raises(Exception, match="not complete"):
        result(hall.blowers.switch_to_reserve(CHIEF, WITNESSES))
    (count,) = hall.records("balls_counted")[1:]
    assert (count.payload["stage"], count.payload["missing"]) == ("reserve_before", [17])
    assert not hall.records("blower_switched") and hall.blowers.in_use() is hall.main
    with pytest.raises(Exception, match="not in use"):
        result(hall.blowers.retire_reserve(CHIEF, WITNESSES))


def test_a_count_read_as_numbers_keeps_missing_and_repeated_balls() -> None:
    present = balls_present(CountReport(90, 0, (41,), (40,)))
    assert len(present) == 90 and 41 not in present and present.count(40) == 2


def misread_second_ball(hall: BlowerHall) -> tuple[int, int]:
    """The reader reads the second ball wrong: (the number announced, the ball physically drawn)."""
    hall.draw()
    on_rack = hall.machines[0].script[1]
    misread = next(b for b in reversed(hall.machines[0].script) if b != on_rack)
    hall.main.misreads[2] = misread
    assert hall.draw() == misread
    return misread, on_rack


def correct(hall: BlowerHall, misread: int, on_rack: int) -> None:
    result(hall.games.correct_ball(CHIEF, misread, on_rack, f"the reader read {on_rack} as {misread}"))
    result(hall.games.correct_ball(TABLE, misread, on_rack, f"the ball on the rack reads {on_rack}"))


@pytest.mark.req("R85.5", "R83.6")
def test_R85_5_a_misread_ball_corrected_is_the_ball_on_the_rack_and_the_misread_number_stays_in_the_chamber(
    hall: BlowerHall,
) -> None:
    misread, on_rack = misread_second_ball(hall)
    correct(hall, misread, on_rack)
    assert hall.balls()[-1] == on_rack
    third = hall.draw()
    # The blower was told the corrected balls before drawing on: the rack holds the ball read again.
    assert hall.main.syncs == [True] and hall.machines[0].balls == hall.balls()
    assert third not in (misread, on_rack)
    rest = [hall.draw() for _ in range(87)]
    assert sorted(hall.balls()) == list(range(1, 91)), "every ball once: the misread one came out of the chamber later"
    assert rest.index(misread) == hall.machines[0].script.index(misread) - 3


@pytest.mark.req("R85.5", "R96.4")
def test_R85_5_a_correction_reaches_the_blower_when_the_hall_restarts_before_the_next_draw(hall: BlowerHall) -> None:
    misread, on_rack = misread_second_ball(hall)
    correct(hall, misread, on_rack)
    again = hall.restarted()  # before the next draw: the blower still counts the misread number as drawn
    assert again.main.syncs == [True] and again.machines[0].balls == [hall.balls()[0], on_rack]
    again.draw()
    third = again.restarted()  # a ball was drawn since the correction: nothing to tell the blower any more
    third.draw()
    assert third.main.syncs == [] and len(third.balls()) == 4 and misread not in third.balls()[:2]


@pytest.mark.req("R84.1")
def test_the_draw_device_check_is_the_blowers_self_test(hall: BlowerHall) -> None:
    assert result(hall.blowers.self_test()) is None
    hall.reserve.self_test_failures = bm.TEST_PUMP | bm.TEST_READER
    assert result(hall.blowers.self_test()) == "reserve blower self-test failed: pump, ball reader"
    hall.main.ready = False
    assert result(hall.blowers.self_test()).startswith("the main blower is not connected")

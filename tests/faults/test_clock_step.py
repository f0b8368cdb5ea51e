"""A real ``bingo hall serve --demo`` whose wall clock is stepped back and forward under libfaketime
(docs/server-kit.md, "Clocks").

The process runs with Debian's libfaketime preloaded, reading its offset from a file the test
rewrites; the monotonic clock is left alone (``FAKETIME_DONT_FAKE_MONOTONIC``), as a step of
the system clock leaves it.  While the demo draws a ball every half second the wall clock is
set back four minutes (inside the five minutes the certificates are back-dated by, so the
demo's terminals keep working): the draw goes on at once - a reactor scheduling by the wall
clock would hold the next ball for the four minutes, beyond the bound of the wait - and the
step is journaled as ``clock_stepped``; the records' times never go back.  Then the clock is
set right (a step forward): journaled too, and the records follow the wall clock again.  The
journal the process wrote then shows the steps among the room chief's faults and in the
session's minutes.
"""

from __future__ import annotations

import glob
import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import pytest

from hall_server.reports.minutes import MinutesBook
from hall_server.web.view import HallView
from protocol.chain import Record
from protocol.records import parse
from protocol.records.clock import ClockStepped
from tests.support.waiting import START, wait_until
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration]

LIBFAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
needs_libfaketime = pytest.mark.skipif(not LIBFAKETIME, reason="needs libfaketime: scripts/system-deps.sh installs "
                                                               "the Debian package faketime")
#: The step back, in seconds: under the five minutes certificates are back-dated by.
STEP_S = 240
#: The bound for the draw to go on after the step: generous for a loaded machine, and well under
#: the step, which a reactor on the wall clock would hold the next ball for.
DRAW_GOES_ON_S = 150.0


def records(folder: Path) -> list[Record]:
    """The journal as the running process has committed it so far (read-only)."""
    connection = sqlite3.connect(f"file:{folder / 'hall.sqlite3'}?mode=ro", uri=True, timeout=10)
    try:
        rows = connection.execute("SELECT seq, time_ms, type, payload, prev, hash, signature FROM journal ORDER BY seq")
        return [Record(seq, time_ms, type, json.loads(payload), prev, hash, signature)
                for seq, time_ms, type, payload, prev, hash, signature in rows]
    finally:
        connection.close()


def balls(folder: Path) -> int:
    return sum(r.type == "ball_drawn" for r in records(folder))


def steps(folder: Path) -> list[ClockStepped]:
    found = [parse(r) for r in records(folder) if r.type == ClockStepped.type]
    return [step for step in found if isinstance(step, ClockStepped)]


@pytest.fixture(scope="module")
def stepped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The demo hall, its clock stepped back by :data:`STEP_S` and then set right; what was seen."""
    folder = tmp_path_factory.mktemp("clock-step")
    offset = folder / "faketime.rc"
    offset.write_text("+0\n")
    env = {"LD_PRELOAD": LIBFAKETIME[0], "FAKETIME_TIMESTAMP_FILE": str(offset), "FAKETIME_CACHE_DURATION": "1",
           "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    hall = HallProcess(folder, demo=True, demo_pace=0.5, env=env).start()
    seen: dict[str, Any] = {"folder": folder}
    try:
        wait_until(lambda: balls(folder) >= 3, START, "the demo to draw three balls", seen=lambda: balls(folder))
        seen["balls_before"] = before = balls(folder)
        seen["last_before_ms"] = records(folder)[-1].time_ms
        offset.write_text(f"-{STEP_S}\n")
        wait_until(lambda: steps(folder), DRAW_GOES_ON_S, "the step back to be journaled",
                   seen=lambda: hall.output.decode(errors="replace")[-2000:])
        wait_until(lambda: balls(folder) >= before + 5, DRAW_GOES_ON_S, "five more balls after the step back",
                   seen=lambda: f"{balls(folder)} balls, {before} before the step")
        seen["balls_after"] = balls(folder)
        offset.write_text("+0\n")
        wait_until(lambda: len(steps(folder)) >= 2, DRAW_GOES_ON_S, "the clock set right to be journaled",
                   seen=lambda: [s.describe() for s in steps(folder)])
        wait_until(lambda: balls(folder) >= seen["balls_after"] + 3, DRAW_GOES_ON_S, "three more balls after it",
                   seen=lambda: balls(folder))
    finally:
        hall.stop()
    seen["output"] = hall.output.decode(errors="replace")
    seen["records"] = records(folder)
    yield seen


@pytest.mark.req("R92.3")
@needs_libfaketime
def test_F5_the_draw_goes_on_through_a_step_back_of_the_wall_clock_and_the_step_is_journaled(
    stepped: dict[str, Any],
) -> None:
    back, forward = [parse(r) for r in stepped["records"] if r.type == ClockStepped.type][:2]
    assert isinstance(back, ClockStepped) and isinstance(forward, ClockStepped)
    assert abs(back.step_ms + STEP_S * 1000) < 3000, back
    assert abs(back.ahead_ms - STEP_S * 1000) < 3000, back
    # Set right, the records' time is the wall clock's again: the step is measured between two looks a
    # few milliseconds apart, so what it leaves ahead is at most those milliseconds (3 ms seen), never the
    # four minutes the step back left.
    assert abs(forward.step_ms - STEP_S * 1000) < 3000 and 0 <= forward.ahead_ms < 3000, forward
    assert "Clock: the server's clock stepped back by" in stepped["output"]
    assert stepped["balls_after"] >= stepped["balls_before"] + 5


@pytest.mark.req("R92.3")
@needs_libfaketime
def test_F5_the_records_times_never_go_back_and_carry_on_through_the_step(stepped: dict[str, Any]) -> None:
    kept: list[Record] = stepped["records"]
    times = [r.time_ms for r in kept]
    assert times == sorted(times), "a record's time went back"
    (back_at,) = [i for i, r in enumerate(kept) if r.type == ClockStepped.type][:1]
    step = parse(kept[back_at])
    assert isinstance(step, ClockStepped)
    # The records after the step carry on from the ones before it, not held at the last
    # time and not the wall clock's (four minutes before).
    assert kept[back_at].time_ms >= stepped["last_before_ms"]
    # Stamped a moment after the step was found: the wall clock then, plus what the step put the records ahead.
    assert 0 <= kept[back_at].time_ms - step.wall_ms - step.ahead_ms < DRAW_GOES_ON_S * 1000


@needs_libfaketime
def test_F5_the_step_is_among_the_room_chief_s_faults_and_in_the_minutes_incidents(stepped: dict[str, Any]) -> None:
    kept: list[Record] = stepped["records"]
    view, book = HallView("Loopback hall"), MinutesBook()
    for record in kept:
        view.apply(record)
        book.apply(record)
    clock_faults = [r.seq for r in kept if r.type == ClockStepped.type]
    assert [f["seq"] for f in view.console()["faults"] if f["type"] == ClockStepped.type] == clock_faults[::-1]
    entries = [e for session in book.sessions for e in session.book if e.kind == "clock stepped"]
    described = [(r.seq, step.describe()) for r in kept if isinstance(step := parse(r), ClockStepped)]
    assert [(e.seq, e.text) for e in entries] == described

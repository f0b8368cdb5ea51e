"""The real firmware on the MicroPython unix port as the hall's ball source: a real
``bingo hall serve`` process configured with ``[draw] source = "blower"`` on a pty, the
staff on console WebSockets over TLS.  A whole game is drawn through it; a fault
injected into the simulated chamber suspends the game and is in the journal; a ball the
reader misreads is corrected by the two chiefs and the blower draws on in step."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Iterator

import pytest

from ball_blower_fw.version import FIRMWARE_VERSION
from hall_server.blower.approval import image_hash_of_tree
from hall_server.blower.simulator import REPO_ROOT
from tests.crash.wire import LiveSocket, console
from tests.firmware.test_firmware_pty import Line
from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import ALL_BALLS, HallProcess

pytestmark = pytest.mark.integration
FAULT_AT = 20  # the 20th release lets no ball out
MISREAD_AT = 5  # the reader reads the 5th release as another ball, still in the chamber
_ids = itertools.count(1)


def draw_section(text: str, device: str) -> str:
    """The configuration ``text`` drawing with the blower on ``device`` (in its ``[draw]`` table)."""
    release = "%d.%d.%d:%s" % (FIRMWARE_VERSION + (image_hash_of_tree(REPO_ROOT).hex(),))
    blower = f'source = "blower"\nmain = "{device}"\napproved_firmware = ["{release}"]\n'
    return text.replace("[draw]\n", f"[draw]\n{blower}", 1) if "[draw]\n" in text else f"{text}\n[draw]\n{blower}"


@pytest.fixture
def blower_hall(tmp_path: Path) -> Iterator[tuple[HallProcess, Line]]:
    line = Line(tmp_path)
    line.start_firmware(faults=f"no_ball:{FAULT_AT},misread:{MISREAD_AT}")
    (tmp_path / "hall").mkdir()
    hall = HallProcess(tmp_path / "hall")
    hall.config.write_text(draw_section(hall.config.read_text(), line.driver_side))
    try:
        yield hall.start(), line
    finally:
        hall.stop()
        line.close()


def command(socket: LiveSocket, name: str, **args: Any) -> dict[str, Any]:
    request = f"t-{next(_ids)}"
    socket.send({"id": request, "command": name, "args": args})
    return socket.answer(request)


def ok(socket: LiveSocket, name: str, **args: Any) -> dict[str, Any]:
    answer = command(socket, name, **args)
    assert answer["ok"], (name, answer)
    return answer


@pytest.mark.req("R83.6", "R85.5", "R86.1-2", "R84.1")
def test_a_whole_game_is_drawn_by_the_real_firmware_a_misread_ball_is_corrected_and_a_fault_suspends_it(
    blower_hall,
) -> None:
    hall, line = blower_hall
    admin, chief, caller = console(hall, "admin"), console(hall, "rosa"), console(hall, "sam")
    watcher = console(hall, "tomas")
    try:
        # The verification's draw-device check is the blower's self-test (R84.1); the
        # blower may still be connecting, so ask until it answers.
        verified: dict[str, Any] = {}

        def blower_checked() -> bool:
            ok(admin, "run_verification", date="2026-12-01")
            verified.update([r for r in admin.records() if r["type"] == "system_verified"][-1]["payload"])
            return verified["results"]["draw_device"] is None

        wait_until(blower_checked, WAIT, "the verification to find the blower ready", interval=0.5,
                   seen=lambda: verified["results"])
        assert verified["passed"], verified["results"]
        ok(chief, "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Marta Soler (public)"])
        ok(admin, "sign_session_opening")
        ok(chief, "sign_session_opening")
        ok(caller, "announce_sale", series=1001)
        ok(caller, "sell_cards", series=1001, first=1, last=10)
        ok(chief, "close_sale")

        balls: list[int] = []
        announced: list[int] = []
        faulted = False
        while len(balls) < 90:
            answer = command(caller, "draw_ball")
            if answer["ok"]:
                balls.append(next(r for r in caller.records() if r["seq"] == answer["records"][0]["seq"])["payload"]["ball"])
                announced.append(balls[-1])
                if len(balls) == MISREAD_AT:
                    # The ball on the rack is not the number read: both chiefs correct it (R85.5).
                    wait_until(lambda: len((line.chamber() or {}).get("rack", ())) == MISREAD_AT, WAIT,
                               "the misread ball on the chamber's rack", seen=lambda: line.rack_seen(balls))
                    on_rack = line.chamber()["rack"][-1]
                    assert on_rack != balls[-1]
                    ok(chief, "correct_ball", ball=balls[-1], corrected=on_rack, reason="the reader misread it")
                    ok(watcher, "correct_ball", ball=balls[-1], corrected=on_rack, reason="the ball on the rack")
                    balls[-1] = on_rack
                continue
            # The chamber let no ball out: the game is suspended by the server (R86.1).
            assert not faulted and "main blower" in answer["error"]["message"], answer
            faulted = True
            watcher.wait_for(lambda: any(r["type"] == "game_suspended" for r in watcher.records()),
                             what="the game to be suspended")
            ok(chief, "clear_blower_fault")
            ok(chief, "resume_game")

        assert faulted and sorted(balls) == list(range(1, 91))
        watcher.wait_for(lambda: sum(r["type"] == "ball_drawn" for r in watcher.records()) == 90,
                         what="the 90th ball")
        shown = [r for r in watcher.records() if r["type"] == "ball_drawn"]
        assert [r["payload"]["ball"] for r in shown] == announced
        assert [r["payload"]["ball_count"] for r in shown] == list(range(1, 91))
        # The misread number was never drawn: it came out of the chamber later, read right.
        (corrected,) = [r["payload"] for r in watcher.records() if r["type"] == "ball_corrected"]
        assert (corrected["ball_count"], corrected["ball"]) == (MISREAD_AT, balls[MISREAD_AT - 1])
        assert balls.count(corrected["misread"]) == 1 and balls.index(corrected["misread"]) > MISREAD_AT - 1
        (fault,) = [r for r in watcher.records() if r["type"] == "blower_fault"]
        assert (fault["payload"]["blower"], fault["payload"]["fault"]) == ("main", "no ball reached the tube in time")
        (suspended,) = [r for r in watcher.records() if r["type"] == "game_suspended"]
        assert suspended["payload"]["actor"]["role"] == "system" and suspended["seq"] > fault["seq"]
        # The chamber racks the last ball once the server's CONFIRM reaches it.
        wait_until(lambda: line.rack_holds(balls), WAIT, "the chamber's rack to hold the 90 balls drawn",
                   seen=lambda: line.rack_seen(balls))
    finally:
        for socket in (admin, chief, caller, watcher):
            socket.close()

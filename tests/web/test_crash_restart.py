"""A hall server started after a crash sells nothing until the room chief's verification passes
(R92.5e, R95.1, R86.1): the real ``bingo hall serve`` killed with SIGKILL in the middle of a game's
draw, started again on its folder, and commanded through the console's command channel.

Before the change the game simply went on after the restart and nothing asked for the
verification, which was refused during an open session ("a session is already under way").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server_kit.db.database import create
from server_kit.journal import table
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_server_process import Staff

pytestmark = [pytest.mark.integration]


def journal(hall: HallProcess) -> list[Any]:
    engine = create(f"sqlite:///{hall.folder / 'hall.sqlite3'}")
    try:
        return list(table.read(engine))
    finally:
        engine.dispose()


def refused(staff: Staff, name: str, command: str, **args: object) -> dict:
    staff.counter += 1
    status, answer = staff.clients[name].call("POST", "/api/command",
                                              {"id": f"t{staff.counter}", "command": command, "args": args})
    assert status != 200 and not answer["ok"], answer
    return answer["error"]


@pytest.mark.req("R92.5e", "R95.1", "R86.1-2")
def test_R92_5e_after_a_kill_the_game_is_suspended_and_nothing_sells_until_the_room_chiefs_verification_passes(
    tmp_path: Path,
) -> None:
    hall = HallProcess(tmp_path).start()
    try:
        staff = Staff(hall)
        staff("admin", "run_verification", date="2026-11-29")
        staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
        staff("rosa", "sign_session_opening")
        staff("admin", "sign_session_opening")
        staff("sam", "announce_sale", series=1001)
        staff("sam", "sell_cards", series=1001, first=1, last=30)
        staff("rosa", "close_sale")
        drawn = [staff("sam", "draw_ball")["records"][0]["seq"] for _ in range(3)]
        hall.kill()
        before = journal(hall)
        assert before[-1].seq >= drawn[-1]

        # A clean start would find no marker; this one finds the dead run's.
        hall.start()
        staff = Staff(hall)
        staff.counter = 100  # request ids are kept in the journal: new ones after the restart
        after = journal(hall)
        new = [r for r in after if r.seq > before[-1].seq]
        kinds = [r.type for r in new]
        assert kinds[:2] == ["restarted_after_crash", "game_suspended"], kinds
        restart, suspended = new[0].payload, new[1].payload
        assert restart["last_record"] == before[-1].seq and restart["stopped_after_ms"] == before[-1].time_ms
        assert restart["game_id"] == suspended["game_id"] and restart["actor"]["role"] == "system"
        assert "restarted after a crash" in suspended["reason"] and suspended["actor"]["role"] == "system"

        # Nothing resumes, and nothing sells, before the verification.
        error = refused(staff, "rosa", "resume_game")
        assert error["code"] == "refused" and "run_verification" in error["message"] and "R92.5e" in error["message"]
        # The room chief runs it during the open session: it checks the journal, the generator, the terminals
        # and the links, and is recorded for the session under way.
        (verified,) = staff("rosa", "run_verification", date="")["records"]
        record = next(r for r in journal(hall) if r.seq == verified["seq"])
        assert record.type == "system_verified" and record.payload["passed"] is True
        assert record.payload["session"] == 1 and record.payload["date"] == "2026-11-29"
        assert set(record.payload["results"]) == {"journal", "database", "draw_device", "clock", "software",
                                                  "terminals", "links"}
        assert (record.payload["actor"]["name"], record.payload["actor"]["role"]) == ("rosa", "room_chief")
        staff("rosa", "resume_game")
        assert [r["type"] for r in staff("sam", "draw_ball")["records"]] == ["ball_drawn"]

        # A clean stop leaves no marker: the next start carries on, nothing suspended.
        hall.stop()
        count = len(journal(hall))
        hall.start()
        staff = Staff(hall)
        staff.counter = 200
        assert [r["type"] for r in staff("sam", "draw_ball")["records"]] == ["ball_drawn"]
        assert "restarted_after_crash" not in [r.type for r in journal(hall)[count:]]
    finally:
        hall.stop()

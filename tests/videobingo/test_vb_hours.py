"""No video bingo machine plays outside the opening hours in force (R74.1)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from twisted.internet.task import Clock

from hall_server.hall.notices import OpeningHoursModule
from hall_server.hall.videobingo import VbRefused
from tests.hall.conftest import result
from tests.videobingo.halls import Hall, count, insert_cash

ANDORRA = ZoneInfo("Europe/Andorra")


@pytest.mark.req("R74.1")
def test_R74_1_a_machine_plays_only_inside_the_opening_hours_in_force(hall: Hall, clock: Clock) -> None:
    """The clock stands at Thursday 2026-05-28 22:26 in Andorra; the hall opens every day 10:00-22:00."""
    hours = OpeningHoursModule(hall.core, ANDORRA)
    hours.enforce(None, hall.vb)
    result(hours.notify("every day 10:00-22:00"))
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    before = count(hall.journal)
    with pytest.raises(VbRefused) as refused:
        result(hall.vb.play("vb-1", 1, 2, False, "p1"))
    assert refused.value.code == "closed"
    assert "closed at 22:26 by the opening hours in force, 'every day 10:00-22:00' (R74.1)" in str(refused.value)
    assert "opens next at 2026-05-29 10:00" in str(refused.value)
    assert count(hall.journal) == before, "a refused play wrote something"
    assert hall.vb.credit("vb-1", 1) == 1_000
    clock.advance(12 * 3600)  # Friday 10:26: open
    shown = result(hall.vb.play("vb-1", 1, 2, False, "p1"))
    plays = [r for r in hall.journal.records() if r.type == "vb_play"]
    assert len(plays) == 1 and plays[0].seq == shown["seq"]
    assert shown["credit_after_cents"] == hall.vb.credit("vb-1", 1)

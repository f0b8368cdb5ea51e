"""The hall's opening hours, reported to the regulator (R74.2).

``[hall] opening_hours`` in ``hall.toml`` says when the hall is open, in words
(``"every day 16:00-02:00"``).  At each start, when it differs from the hours last
reported, the hall journals ``opening_hours_notified``: the regulator reads it through
the feed and the consultation.  The first report is in force at once (the licence's
hours); a change applies three working days (Monday to Friday) after its notice, the
regulator not objecting: until then the hours in force are the previous ones, and the
console shows both.  The hall keeps no other calendar: its staff open the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta, tzinfo
from typing import Any

from twisted.internet.defer import Deferred

from hall_server.hall.admission import local_date
from hall_server.hall.roles import SYSTEM, Role
from protocol.chain import Record
from server_kit.core import CommandCore

#: Working days between a change's notice and the day it applies (R74.2).
WORKING_DAYS = 3

PERMISSIONS = {"notify_opening_hours": {Role.SYSTEM}}


def working_days_after(day: date, count: int) -> date:
    """The date ``count`` working days (Monday-Friday) after ``day``."""
    while count:
        day += timedelta(days=1)
        if day.weekday() < 5:
            count -= 1
    return day


@dataclass
class OpeningHours:
    hours: str | None = None
    applies_from: str | None = None
    previous: str | None = None

    def in_force(self, today: date) -> str | None:
        """The hours in force on ``today``: the previous ones until the change applies."""
        if self.applies_from is not None and today.isoformat() < self.applies_from:
            return self.previous
        return self.hours


class OpeningHoursModule:
    """A module of the hall core: the hours last reported, folded from the journal."""

    def __init__(self, core: CommandCore, timezone: tzinfo) -> None:
        self.core = core
        self.timezone = timezone
        self.state = OpeningHours()
        core.add_module(self)
        core.allow(PERMISSIONS)

    def apply(self, record: Record) -> None:
        if record.type == "opening_hours_notified":
            p = record.payload
            self.state = OpeningHours(p["hours"], p["applies_from"], p.get("previous"))

    def reset(self) -> None:
        self.state = OpeningHours()

    def checkpoint(self) -> Any:
        return {"hours": self.state.hours, "applies_from": self.state.applies_from, "previous": self.state.previous}

    def restore(self, data: Any) -> None:
        if not isinstance(data, dict) or sorted(data) != ["applies_from", "hours", "previous"]:
            raise TypeError("the opening hours' checkpoint holds other fields")
        self.state = OpeningHours(data["hours"], data["applies_from"], data["previous"])

    def notify(self, configured: str | None) -> Deferred[list[Record]] | None:
        """Report ``configured`` when it is not what was reported last; None when nothing changed."""
        if configured is None or configured == self.state.hours:
            return None
        previous = self.state.in_force(local_date(self.core.now_ms(), self.timezone))

        def decide(now: int) -> list[tuple[str, dict[str, Any]]]:
            today = local_date(now, self.timezone)
            applies = today if previous is None else working_days_after(today, WORKING_DAYS)
            payload: dict[str, Any] = {"hours": configured, "applies_from": applies.isoformat()}
            if previous is not None:
                payload["previous"] = previous
            return [("opening_hours_notified", payload)]

        return self.core.execute(SYSTEM, "notify_opening_hours", decide)

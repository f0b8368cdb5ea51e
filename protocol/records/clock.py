"""The server's clock: a wall clock that stepped, and how the records' times carry on (DESIGN.md "Clocks")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class ClockStepped(JournalRecord):
    """The server's wall clock stepped by ``step_ms`` (negative: back; positive: forward) against
    its monotonic clock, and read ``wall_ms`` after the step.

    Records' times never go back: after a step back they carry on from the last one at the
    monotonic clock's pace, ``ahead_ms`` ahead of the wall clock (0: they follow it again);
    a step forward is followed, and first takes back what an earlier step back had put
    them ahead.  ``at_start``: found as the server started, the wall clock reading
    ``-step_ms`` before the journal's last record.
    """

    type: ClassVar[str] = "clock_stepped"
    step_ms: int
    wall_ms: int
    ahead_ms: int
    at_start: bool = optional(False)

    def check(self) -> None:
        if self.step_ms == 0:
            raise self.refusal("names a step: step_ms is not 0")
        if self.ahead_ms < 0:
            raise self.refusal("has the records' times ahead of the wall clock or with it: ahead_ms >= 0")

    def describe(self) -> str:
        """The step as staff and the minutes read it."""
        seconds = abs(self.step_ms) / 1000
        if self.at_start:
            said = f"the server's clock read {seconds:.1f} s before the journal's last record at the start"
        else:
            said = f"the server's clock stepped {'back' if self.step_ms < 0 else 'forward'} by {seconds:.1f} s"
        if self.ahead_ms > 0:
            return f"{said}; the records' times carry on {self.ahead_ms / 1000:.1f} s ahead of it"
        return f"{said}; the records' times follow it"

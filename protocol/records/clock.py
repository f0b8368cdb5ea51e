"""The server's clock: a wall clock that stepped, and how the records' times carry on (DESIGN.md "Clocks")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.errors import N_, Phrase
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

    def describe(self) -> Phrase:
        """The step as staff and the minutes read it (English; a page or a report says it in its reader's words)."""
        seconds = f"{abs(self.step_ms) / 1000:.1f}"
        if self.at_start:
            step = Phrase(N_("the server's clock read {seconds} s before the journal's last record at the start"),
                          seconds=seconds)
        else:
            step = Phrase(N_("the server's clock stepped back by {seconds} s") if self.step_ms < 0
                          else N_("the server's clock stepped forward by {seconds} s"), seconds=seconds)
        if self.ahead_ms > 0:
            return Phrase(N_("{step}; the records' times carry on {ahead} s ahead of it"), step=step,
                          ahead=f"{self.ahead_ms / 1000:.1f}")
        return Phrase(N_("{step}; the records' times follow it"), step=step)

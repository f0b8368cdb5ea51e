"""Notices to the regulator that are facts of the journal, and reach it through the feed (R74.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class OpeningHoursNotified(JournalRecord):
    """The hall's opening hours ``hours`` are reported to the regulator (R74.2); they replace
    ``previous`` (absent: the first report, in force at once) from ``applies_from``
    (YYYY-MM-DD, the hall's date): three working days after the notice, the regulator not
    objecting.  Written at the start after ``[hall] opening_hours`` changed."""

    type: ClassVar[str] = "opening_hours_notified"
    hours: str
    applies_from: str
    previous: str | None = optional()

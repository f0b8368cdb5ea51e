"""Notices to the regulator that are facts of the journal, and reach it through the feed (R74.2, R93.11, R94.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import Json, JournalRecord, optional, record


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


@record
@dataclass(frozen=True, kw_only=True)
class PrizeTermsNotified(JournalRecord):
    """The central server's prize terms of interconnected bingo are reported to the regulator:
    ``prizes`` each winning combination (R93.11) with its share of the sales in basis points
    (R94.3), as game ``game_id`` is configured; they apply from ``applies_from_ms`` (central
    clock): at once for the first terms and for a change of the combinations alone, at
    least 5 days after the notice for a change of the percentages (R94.3).  A game whose
    terms are not in force is not scheduled until they are."""

    type: ClassVar[str] = "prize_terms_notified"
    game_id: str
    prizes: Json
    applies_from_ms: int
    percentages_changed: bool
    combinations_changed: bool

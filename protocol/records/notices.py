"""Notices to the regulator that are facts of the journal, and reach it through the feed (R74.2, R93.11, R94.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import Json, JournalRecord, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class OpeningHoursNotified(JournalRecord):
    """The hall's opening hours ``hours`` are reported to the regulator (R74.2): a change requested.
    They replace ``previous`` (absent: the first report, in force at once) from ``applies_from``
    (YYYY-MM-DD, the hall's date: the day after three whole working days from the notice, Andorra's
    holidays left out) unless the regulator objects, or at once when it approves
    (``opening_hours_decided``).  Written at the start after ``[hall] opening_hours`` changed."""

    type: ClassVar[str] = "opening_hours_notified"
    hours: str
    applies_from: str
    previous: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class OpeningHoursDecided(JournalRecord):
    """The regulator's answer to the change of the opening hours to ``hours`` noticed in record
    ``notice``: ``approved`` (in force from this record) or ``objected`` (the previous hours stay
    in force), with the ``reference`` of its letter; recorded by the administrator when it arrives
    (R74.2)."""

    type: ClassVar[str] = "opening_hours_decided"
    hours: str
    notice: int
    decision: str
    reference: str

    def check(self) -> None:
        if self.decision not in ("approved", "objected"):
            raise self.refusal(f"is approved or objected, not {self.decision!r}", "decision")


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

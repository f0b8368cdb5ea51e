"""Admission: visitors and their leaving, refused entries, the banned list, complaints and incidents
(R73.5, R75, R77.2, R97.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, optional, personal, record


@record
@dataclass(frozen=True, kw_only=True)
class VisitorAdmitted(JournalRecord):
    """Visitor number ``number``, ``name`` with identity ``document``, is admitted.

    ``age_checked`` is true when the desk read the birth date on the document and found the
    visitor of age (R75.1, R97.1); the date itself is not kept (R75.3).  Absent in journals
    written before the check.
    """

    type: ClassVar[str] = "visitor_admitted"
    number: int
    name: str = personal()
    document: str = personal()
    age_checked: bool = optional(False)


@record
@dataclass(frozen=True, kw_only=True)
class VisitorLeft(JournalRecord):
    """Visitor number ``number`` left the hall: no longer among the people present (R73.5)."""

    type: ClassVar[str] = "visitor_left"
    number: int


@record
@dataclass(frozen=True, kw_only=True)
class BannedListImported(JournalRecord):
    """The register of banned people from ``source`` (``rows`` rows, SHA-256 ``sha256``) is in force.

    ``people`` holds each row as ``[document, name, until]`` (``until`` an ISO date or
    ``null`` for ever); ``replaces`` is the SHA-256 of the list it replaces, ``null`` for
    the first.
    """

    type: ClassVar[str] = "banned_list_imported"
    source: str
    sha256: str
    rows: int
    replaces: str | None
    people: tuple[tuple[str, str, str | None], ...] = personal()


@record
@dataclass(frozen=True, kw_only=True)
class ComplaintRecorded(JournalRecord):
    """Complaint number ``number`` by ``complainant``, in their words (``text``) (R75.5).

    ``witnessed`` is true when the room chief wrote it, in whose presence it was written
    (``room_chief``); false when it was written at the door and waits for the room chief's
    confirmation (``complaint_confirmed``); absent in journals written before the confirmation.
    """

    type: ClassVar[str] = "complaint_recorded"
    number: int
    complainant: str = personal()
    text: str = personal()
    witnessed: bool | None = optional()
    room_chief: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class ComplaintConfirmed(JournalRecord):
    """The room chief (the actor) confirms that complaint ``number`` was written in their presence (R75.5)."""

    type: ClassVar[str] = "complaint_confirmed"
    number: int


@record
@dataclass(frozen=True, kw_only=True)
class IncidentRecorded(JournalRecord):
    """Admission incident number ``number`` (R77.2), with the visitors it concerns."""

    type: ClassVar[str] = "incident_recorded"
    number: int
    description: str
    visitors: tuple[int, ...]


@record
@dataclass(frozen=True, kw_only=True)
class EntryRefused(JournalRecord):
    """``name`` with identity ``document`` is refused entry, with the ``reason`` in words and its
    ``ground``: ``banned`` (R75.2), ``self_excluded`` (R97.2), ``minor`` (R75.1, R97.1) or
    ``capacity`` (R73.5); absent in journals written before the grounds were named."""

    type: ClassVar[str] = "entry_refused"
    document: str = personal()
    name: str = personal()
    reason: str
    ground: str | None = optional()

    def check(self) -> None:
        if self.ground is not None and self.ground not in ("banned", "self_excluded", "minor", "capacity", "staff"):
            raise self.refusal(f"is banned, self_excluded, minor, capacity or staff, not {self.ground!r}", "ground")

"""Admission: visitors, the regulator's banned list, complaints and incidents (R77.2, R79)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, personal, record


@record
@dataclass(frozen=True, kw_only=True)
class VisitorAdmitted(JournalRecord):
    """Visitor number ``number``, ``name`` with identity ``document``, is admitted."""

    type: ClassVar[str] = "visitor_admitted"
    number: int
    name: str = personal()
    document: str = personal()


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
    """Complaint number ``number`` by ``complainant``, in their words (``text``)."""

    type: ClassVar[str] = "complaint_recorded"
    number: int
    complainant: str = personal()
    text: str = personal()


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
    """``name`` with identity ``document`` is refused entry, with the ``reason`` (banned, self-excluded)."""

    type: ClassVar[str] = "entry_refused"
    document: str = personal()
    name: str = personal()
    reason: str

"""The regulator's consultation (R95.3): every read of the hall's records by an inspector."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, record


@record
@dataclass(frozen=True, kw_only=True)
class RegulatorConsulted(JournalRecord):
    """The regulator ``regulator`` (the name in its certificate) asked for ``query`` (the path and its
    parameters); ``answered`` is false when the query named nothing the hall holds or was malformed.
    Written before the answer is sent: no reading leaves no trace."""

    type: ClassVar[str] = "regulator_consulted"
    regulator: str
    query: str
    answered: bool

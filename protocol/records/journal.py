"""Records about the journal itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.chain import OPENING
from protocol.records.base import JournalRecord, record


@record
@dataclass(frozen=True, kw_only=True)
class JournalOpened(JournalRecord):
    """The journal's first record, written by its explicit initialisation: the hall it belongs to."""

    type: ClassVar[str] = OPENING
    hall: str

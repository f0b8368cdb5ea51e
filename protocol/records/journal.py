"""Records about the journal itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.chain import OPENING
from protocol.records.base import JournalRecord, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class JournalOpened(JournalRecord):
    """The journal's first record, written by its explicit initialisation: the server it belongs to.

    A hall's journal names its hall; the central server's names the central server; the
    regulator's receiver's names the receiver.
    """

    type: ClassVar[str] = OPENING
    hall: str | None = optional()
    central: str | None = optional()
    receiver: str | None = optional()

    def check(self) -> None:
        if sum(name is not None for name in (self.hall, self.central, self.receiver)) != 1:
            raise self.refusal("names the hall, the central server or the receiver the journal belongs to, one of them")

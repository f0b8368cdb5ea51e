"""The central server's leadership: which process writes the central journal, under which epoch (R92.6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import EPOCH_KEY, JournalRecord, record


@record
@dataclass(frozen=True, kw_only=True)
class CentralLeadershipTaken(JournalRecord):
    """The central server process ``holder`` (the central server's id, the database node it
    runs beside when replicated, its host and process id) took the leadership of the central
    journal; the epoch it took is the record's own ``epoch`` stamp, ``previous_epoch`` the one
    it follows (0: none was taken before).  ``cause`` says why: ``start``, the process
    started (beside the node it, or the process before it, led from); ``failover``, the
    database's leader moved to its node and it took over.  Every record from this one on
    carries this epoch until the next leadership is taken; a commit of an older epoch is
    refused by the database (the fence) and a record of one by the regulator's receiver
    (``fenced_epoch``).  See docs/replica.md."""

    type: ClassVar[str] = "central_leadership_taken"
    holder: str
    previous_epoch: int
    cause: str

    def check(self) -> None:
        if self.epoch is None:
            raise self.refusal("is the epoch taken; it is missing", EPOCH_KEY)
        if not 0 <= self.previous_epoch < self.epoch:
            raise self.refusal(f"is before the epoch taken ({self.epoch}) and not negative, not {self.previous_epoch}",
                               "previous_epoch")

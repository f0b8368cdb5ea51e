"""The central server's leadership: which process writes the central journal, under which epoch (R92.6)."""

from __future__ import annotations

from collections.abc import Mapping
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


#: Why normal play stopped (``central_play_interrupted.cause``).
INTERRUPTION_CAUSES = ("crash", "stopped", "hold_exceeded")


@record
@dataclass(frozen=True, kw_only=True)
class CentralPlayInterrupted(JournalRecord):
    """A stop of the central server interrupted normal play (R92.5e, R95.1).

    ``cause``: ``crash``, a restart after a run that did not stop cleanly (or whose
    journal failed its check); ``stopped``, the single central server was stopped while a
    game was under way; ``hold_exceeded``, no server led for longer than ``hold_ms``.
    ``stopped_after_ms`` is the last moment the server before was known to lead,
    ``resumed_at_ms`` this start's.  ``games``: the games under way, each declared not
    played by the central server right after this record (every stake returned, the
    prizes committed standing).  No new game opens until a ``central_verified`` that
    passed follows.  See docs/central-server.md.
    """

    type: ClassVar[str] = "central_play_interrupted"
    cause: str
    stopped_after_ms: int
    resumed_at_ms: int
    hold_ms: int
    games: tuple[str, ...]

    def check(self) -> None:
        if self.cause not in INTERRUPTION_CAUSES:
            raise self.refusal(f"is one of {', '.join(INTERRUPTION_CAUSES)}, not {self.cause!r}", "cause")
        for name in ("stopped_after_ms", "resumed_at_ms", "hold_ms"):
            if getattr(self, name) < 0:
                raise self.refusal(f"cannot be negative: {getattr(self, name)}", name)


@record
@dataclass(frozen=True, kw_only=True)
class CentralVerified(JournalRecord):
    """A verification of the central server and of every linked hall's link (R92.5e, R95.1).

    ``results`` maps each check of the central server (``journal``, ``database``,
    ``library``, ``clock``) to the fault it found, ``null`` when it passed; ``halls``
    maps each member hall linked at the time to the fault of its link (``null``: its
    protocol agreed and the hall heard within the heartbeat's bound); ``not_linked``
    names the member halls away, which are not checked and take part again when they link.
    ``passed``: every check of ``results`` and every linked hall passed.  The operator
    runs it (``bingo central verify``); after a ``central_play_interrupted``, no game
    opens until one passed.
    """

    type: ClassVar[str] = "central_verified"
    results: Mapping[str, str | None]
    halls: Mapping[str, str | None]
    not_linked: tuple[str, ...]
    passed: bool

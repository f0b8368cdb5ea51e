"""The regulator's receiver of the real-time feed (R92.7): what it journals of the feeds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, record


@record
@dataclass(frozen=True, kw_only=True)
class FeedAlertRaised(JournalRecord):
    """The receiver found a fault in ``sender``'s feed at its record ``seq`` (0: none in
    particular): ``kind`` is one of gap, bad_signature, broken_chain, fenced_epoch, key_changed,
    clock_backwards, clock_stepped, replay_differs, report_unverified, audit_differs; ``detail`` says
    what, for a person.  Each alert is journaled once."""

    type: ClassVar[str] = "feed_alert_raised"
    sender: str
    kind: str
    seq: int
    detail: str


@record
@dataclass(frozen=True, kw_only=True)
class FeedReportReceived(JournalRecord):
    """``sender`` sent its signed report ``name`` (``daily-YYYY-MM-DD``, ``monthly-YYYY-MM``,
    ``audit-YYYY-MM-DD``):
    ``files`` kept under the receiver's ``reports/``, ``digest`` their SHA-256 as
    acknowledged; ``verified`` when every ``.p7s`` verified with ``openssl cms`` under the
    operator's authority, else ``detail`` says which did not (R95.4, R83.5, R77.4)."""

    type: ClassVar[str] = "feed_report_received"
    sender: str
    name: str
    digest: str
    files: tuple[str, ...]
    verified: bool
    detail: str


@record
@dataclass(frozen=True, kw_only=True)
class FeedDayReplayed(JournalRecord):
    """The receiver checked ``sender``'s audit report ``name`` of ``day`` (its files' ``digest`` as
    acknowledged) against the records of ``sender`` it holds, ``first_seq`` to ``last_seq`` (0: the
    report names none), as ``bingo audit verify`` checks an export (R92.7, R95.3): ``verdict`` is
    ``verified`` (``games`` replayed card by card, their prizes reproduced), ``differs`` (``detail``
    names the first fault; an ``audit_differs`` alert is raised) or ``refused`` (the sender could not
    export the day; ``detail`` says why)."""

    type: ClassVar[str] = "feed_day_replayed"
    sender: str
    name: str
    day: str
    digest: str
    first_seq: int
    last_seq: int
    games: tuple[str, ...]
    verdict: str
    detail: str

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
    clock_backwards, clock_stepped, replay_differs, report_unverified, audit_differs,
    audit_not_replayed, secret_held, not_registered; ``detail`` says what, for a person.  Each alert is journaled once; more of its
    kind from the same sender within a minute are counted on it in the receiver's store, not
    journaled one by one."""

    type: ClassVar[str] = "feed_alert_raised"
    sender: str
    kind: str
    seq: int
    detail: str


@record
@dataclass(frozen=True, kw_only=True)
class FeedSenderRegistered(JournalRecord):
    """The receiver checks ``sender``'s records after ``after_seq`` against ``journal_key`` (PEM, Ed25519),
    the key the regulator registered for it (``bingo regulator register-sender``), and takes its
    reports signed by the report-signing certificates ``report_signers``: journaled at the sender's
    first hello, and whenever its registered key has changed since."""

    type: ClassVar[str] = "feed_sender_registered"
    sender: str
    journal_key: str
    after_seq: int
    report_signers: tuple[str, ...]


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
    export the day; ``detail`` says why; an ``audit_not_replayed`` alert is raised)."""

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

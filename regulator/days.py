"""Each day's audit export a sender signs, replayed card by card on the records the receiver holds
(R92.7, R95.3, R95.4; docs/regulator-feed.md "Each day replayed card by card").

A hall at its session's close and the central server at each day's close send the
day's audit export as a signed report (``audit-YYYY-MM-DD``, :mod:`protocol.audit.report`):
the scenario (every card in play with its numbers, the draw), the result (every prize
and payment the sender recorded) and the journal segment they come from.  Once the
report's signatures verify (:mod:`regulator.reports`) and the receiver holds the
segment's records, :class:`AuditDays` makes the checks of ``bingo audit verify`` on
them (:func:`protocol.audit.check.check_documents`):

* the records held, ``first_seq`` to ``last_seq``, end with the hash the segment names;
* the scenario and the result are what those records say, by the hall's or the central
  server's rebuild, chosen by the sender's own identity (never by what the files say);
* the replay of the scenario is the result: each winning card holds its pattern on the
  ball it was paid on, and each prize's amount and split follow from the sales (R88-R94).

A fault is an ``audit_differs`` alert naming the day, the file, and the game and field
that differ; every verdict is journaled (``feed_day_replayed``) in the receiver's own
signed journal.  A day whose records the receiver does not hold yet is checked once
they arrive (and, after a restart, from the report kept on disk).  A day the sender
could not export (a game the replay format cannot express, a day too large for one
report) is not replayed card by card: it is shown with its reason and raises an
``audit_not_replayed`` alert, as a day that differs raises ``audit_differs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Callable, Iterable, Mapping

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.audit import central_rebuild, hall_rebuild
from protocol.audit.check import (
    CENTRAL,
    HALL,
    RESULT,
    SCENARIO,
    ExportFault,
    ExportFiles,
    ExportUnreadable,
    check_documents,
    document,
)
from protocol.audit.report import PREFIX, SEGMENT, AuditSegment, is_audit_report, report_name
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.regulator_feed import CENTRAL as CENTRAL_SENDER
from protocol.regulator_feed import report_digest
from protocol.replay import INPUT_FORMATS, OUTPUT_FORMATS, ReplayError, parse_scenario
from regulator.store import Store
from server_kit.journal.port import JournalPort

AUDIT_DIFFERS = "audit_differs"
#: A day the sender sent as refused (its export could not be made): nothing was replayed card by card.
AUDIT_NOT_REPLAYED = "audit_not_replayed"
#: A day's verdicts.
VERIFIED, DIFFERS, REFUSED = "verified", "differs", "refused"
#: The rebuild of each kind of sender.
REBUILDS = {HALL: hall_rebuild.rebuild, CENTRAL: central_rebuild.rebuild}
DETAIL_CHARS = 1000


def kept_folder(home: Path, sender: str, name: str) -> Path:
    """Where the receiver keeps ``sender``'s report ``name``: ``reports/<sender>/<name>/`` of its folder."""
    return home / "reports" / sender.replace(":", "_") / name


def kind_of(sender: str) -> str:
    """Whose rebuild a sender's records take: the central server's or a hall's, by the sender's identity."""
    return CENTRAL if sender == CENTRAL_SENDER else HALL


@dataclass(frozen=True)
class DayVerdict:
    """What the receiver found of one audit report (as journaled in ``feed_day_replayed``)."""

    sender: str
    name: str
    day: str
    digest: str
    first_seq: int
    last_seq: int
    games: tuple[str, ...]
    verdict: str
    detail: str
    time_ms: int

    @property
    def verified(self) -> bool:
        return self.verdict == VERIFIED

    def line(self) -> str:
        """The verdict for a person, as ``bingo regulator status`` prints it."""
        records = f"records {self.first_seq} to {self.last_seq}" if self.last_seq else "no records named"
        if self.verdict == VERIFIED:
            return (f"{self.sender} day {self.day} ({records}): replayed card by card, {len(self.games)} game(s) "
                    f"verified: {', '.join(self.games)}")
        if self.verdict == REFUSED:
            return f"{self.sender} day {self.day}: not replayed card by card: the sender could not export it: {self.detail}"
        return f"{self.sender} day {self.day} ({records}): DIFFERS: {self.detail}"


@dataclass(frozen=True)
class _Waiting:
    """A day whose records the receiver does not hold yet."""

    digest: str
    segment: AuditSegment
    files: Mapping[str, bytes]


@dataclass(frozen=True)
class Awaited:
    """A day waiting for its records, for the page."""

    sender: str
    name: str
    day: str
    last_seq: int


class AuditDays:
    """The audit reports of every sender, checked against the records held.

    ``journal``: the receiver's own signed journal, where each verdict is recorded
    (None: a read-only receiver, ``bingo regulator status``, that checks nothing and
    reads the verdicts recorded, through ``own_records``); ``alert(sender, kind, seq,
    detail)`` raises an alert once; ``home``: the receiver's folder, where the reports
    are kept.
    """

    def __init__(self, store: Store, clock: Callable[[], int], alert: Callable[[str, str, int, str], None],
                 journal: JournalPort | None, own_records: Callable[[], Iterable[Record]],
                 home: Path | None = None) -> None:
        self.store = store
        self.clock = clock
        self.alert = alert
        self.journal = journal
        self.own_records = own_records
        self.home = home
        self._waiting: dict[tuple[str, str], _Waiting] | None = None

    # --- Reports in, records in ---------------------------------------------------------

    def take(self, sender: str, name: str, digest: str, files: Mapping[str, bytes]) -> None:
        """A report whose signatures verified: checked now, or once the records it names are held."""
        if self.journal is None or not is_audit_report(name):
            return
        waiting = self._pending()
        waiting.pop((sender, name), None)  # a report sent again whole replaces the one before
        try:
            segment = AuditSegment.from_document(_text(files, SEGMENT))
            if name != report_name(segment.day):
                raise ExportFault(f"{SEGMENT}: it names the day {segment.day}, but the report is {name}")
        except (ExportFault, ExportUnreadable) as error:
            self._differs(sender, name, digest, AuditSegment(name.removeprefix(PREFIX), None, None, None),
                          f"{name}: {error}")
            return
        if segment.refused is not None:
            self._record(sender, name, digest, segment, (), REFUSED, segment.refused)
            records = f" (records {segment.first_seq} to {segment.last_seq})" if segment.last_seq else ""
            self.alert(sender, AUDIT_NOT_REPLAYED, segment.last_seq or 0,
                       f"{name}{records}: not replayed card by card: the sender could not export the day: "
                       f"{segment.refused}"[:DETAIL_CHARS])
            return
        assert segment.last_seq is not None
        if self._held(sender) < segment.last_seq:
            waiting[(sender, name)] = _Waiting(digest, segment, dict(files))
            return
        self._check(sender, name, digest, segment, files)

    def stored(self, sender: str, seq: int) -> None:
        """``sender``'s records up to ``seq`` are held: check the days that waited for them."""
        if self.journal is None:
            return
        waiting = self._pending()
        for (who, name), day in sorted(waiting.items()):
            if who == sender and day.segment.last_seq is not None and day.segment.last_seq <= seq:
                del waiting[(who, name)]
                self._check(sender, name, day.digest, day.segment, day.files)

    def _held(self, sender: str) -> int:
        position = self.store.position(sender)
        return position.seq if position is not None else 0

    # --- The check -----------------------------------------------------------------------

    def _check(self, sender: str, name: str, digest: str, segment: AuditSegment, files: Mapping[str, bytes]) -> None:
        assert segment.first_seq is not None and segment.last_seq is not None
        where = f"{name} (records {segment.first_seq} to {segment.last_seq})"
        try:
            records = tuple(self.store.records(sender, segment.first_seq - 1, through=segment.last_seq))
            if not records or records[0].seq != segment.first_seq or records[-1].seq != segment.last_seq:
                raise ExportFault(f"{SEGMENT}: it names records {segment.first_seq} to {segment.last_seq}, which the "
                                  "receiver does not hold")
            if records[-1].hash != segment.last_hash:
                raise ExportFault(f"{SEGMENT}: it names record {segment.last_seq} with the hash {segment.last_hash}; "
                                  f"the record held has {records[-1].hash}")
            scenario = document(_text(files, SCENARIO), SCENARIO, INPUT_FORMATS)
            try:
                parse_scenario(scenario)
            except ReplayError as error:
                raise ExportUnreadable(f"{SCENARIO} is not a scenario the replay reads: {error}") from None
            for session in scenario["sessions"]:
                if session["date"] != segment.day:
                    raise ExportFault(f"{SCENARIO}: session {session['date']} is not of the day {segment.day} the "
                                      "report is")
            exported = ExportFiles(PurePath(name), scenario, document(_text(files, RESULT), RESULT, OUTPUT_FORMATS),
                                   records, self._key(sender))
            kind = kind_of(sender)
            verified = check_documents(exported, kind, REBUILDS[kind])
        except DomainError as error:  # ExportFault, ExportUnreadable: the first fault, named
            self._differs(sender, name, digest, segment, f"{where}: {error}")
            return
        self._record(sender, name, digest, segment, verified.game_ids, VERIFIED,
                     f"{verified.games} game(s), {verified.prizes} prize(s): scenario.json and result.json are what "
                     "the records say, and the replay of the scenario is the result")

    def _key(self, sender: str) -> Ed25519PublicKey:
        position = self.store.position(sender)
        assert position is not None, "a sender whose records are held said its key"
        key = serialization.load_pem_public_key(position.public_key.encode())
        assert isinstance(key, Ed25519PublicKey)
        return key

    def _differs(self, sender: str, name: str, digest: str, segment: AuditSegment, detail: str) -> None:
        detail = detail[:DETAIL_CHARS]
        self._record(sender, name, digest, segment, (), DIFFERS, detail)
        self.alert(sender, AUDIT_DIFFERS, segment.last_seq or 0, detail)

    def _record(self, sender: str, name: str, digest: str, segment: AuditSegment, games: tuple[str, ...],
                verdict: str, detail: str) -> None:
        assert self.journal is not None
        self.journal.append(self.clock(), [("feed_day_replayed", {
            "sender": sender, "name": name, "day": segment.day, "digest": digest,
            "first_seq": segment.first_seq or 0, "last_seq": segment.last_seq or 0, "games": list(games),
            "verdict": verdict, "detail": detail[:DETAIL_CHARS],
        })])  # fmt: skip

    # --- What was found ------------------------------------------------------------------

    def verdicts(self) -> list[DayVerdict]:
        """Every verdict recorded, newest first."""
        found = [DayVerdict(p["sender"], p["name"], p["day"], p["digest"], p["first_seq"], p["last_seq"],
                            tuple(p["games"]), p["verdict"], p["detail"], r.time_ms)
                 for r in self.own_records() if r.type == "feed_day_replayed" for p in (r.payload,)]
        return list(reversed(found))

    def replayed(self) -> dict[tuple[str, str], str]:
        """Each game replayed card by card, ``(sender, game id)``, with the report that verified it."""
        return replayed_games(self.verdicts())

    def awaited(self) -> list[Awaited]:
        """The days waiting for their records."""
        if self.journal is None:
            return []
        return [Awaited(sender, name, day.segment.day, day.segment.last_seq or 0)
                for (sender, name), day in sorted(self._pending().items())]

    def _pending(self) -> dict[tuple[str, str], _Waiting]:
        """The days waiting for their records.  After a start, the audit reports kept whose files as
        received have no verdict yet are taken again, from the folder they are kept in."""
        if self._waiting is None:
            self._waiting = {}
            checked = {(v.sender, v.name, v.digest) for v in self.verdicts()}
            latest: dict[tuple[str, str], Mapping[str, Any]] = {}
            for record in self.own_records():
                p = record.payload
                if record.type == "feed_report_received" and is_audit_report(p["name"]):
                    latest[(p["sender"], p["name"])] = p
            for (sender, name), p in latest.items():
                if not p["verified"] or (sender, name, p["digest"]) in checked or self.home is None:
                    continue
                folder = kept_folder(self.home, sender, name)
                files = {path.name: path.read_bytes() for path in folder.iterdir()} if folder.is_dir() else {}
                if report_digest(files) == p["digest"]:  # else not the files received: nothing to check them on
                    self.take(sender, name, p["digest"], files)
        return self._waiting


def _text(files: Mapping[str, bytes], name: str) -> str:
    if name not in files:
        raise ExportUnreadable(f"{name} is missing from the report")
    try:
        return files[name].decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExportUnreadable(f"{name} is not UTF-8 text: {error}") from None


def replayed_games(verdicts: list[DayVerdict]) -> dict[tuple[str, str], str]:
    """Each game of ``verdicts`` (newest first) replayed card by card, ``(sender, game id)``, with the report
    that verified it."""
    return {(v.sender, game): v.name for v in reversed(verdicts) if v.verified for game in v.games}


def verdict_dict(verdict: DayVerdict) -> dict[str, Any]:
    """A verdict as plain data, for ``/api/status``."""
    return {**verdict.__dict__, "games": list(verdict.games), "verified": verdict.verified}


__all__ = ["AUDIT_DIFFERS", "AUDIT_NOT_REPLAYED", "AuditDays", "Awaited", "DayVerdict", "kept_folder", "kind_of", "replayed_games",
           "verdict_dict"]

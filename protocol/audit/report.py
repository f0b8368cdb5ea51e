"""A day's audit export as a signed report to the regulator (R92.7, R95.4; docs/regulator-feed.md).

At a day's close a hall (at its session's close) and the central server (at midnight)
write the day's audit export into ``reports/audit-YYYY-MM-DD/`` of their folder, each
file with its detached CMS signature, and the feed sends it like the daily report:

* ``scenario.json`` and ``result.json``: the export's two documents (FORMATS.md section
  3), the scenario in compact JSON (it holds every card of the day), the result as
  ``bingo replay`` prints it, so ``bingo replay scenario.json | cmp - result.json``
  holds on the report's files as on an export's;
* ``segment.json`` (:class:`AuditSegment`): the journal segment they come from, by its
  first and last ``seq`` and the last record's hash.  The records themselves are not
  sent again: the receiver holds them, and checks the documents against its own.

A day the export refuses (a game the replay format cannot express, docs/audit.md) is
sent as such: ``segment.json`` alone, its ``refused`` saying why, so the regulator sees
why that day was not replayed card by card.  So is a day whose files would not fit in
the largest report the feed carries in parts (:data:`protocol.regulator_feed.MAX_PARTS`
parts of :data:`~protocol.regulator_feed.PART_BYTES`: 256 MiB).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from protocol.audit.check import RESULT, SCENARIO, ExportUnreadable, document
from protocol.chain import Record
from protocol.regulator_feed import MAX_PARTS, PART_BYTES
from protocol.replay import render

#: The prefix of an audit report's folder name: ``audit-YYYY-MM-DD``.
PREFIX = "audit-"
SEGMENT = "segment.json"
SEGMENT_FORMAT = "bingo-audit-segment/1"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_HASH = re.compile(r"[0-9a-f]{64}")
#: The most a refusal's reason holds.
REASON_CHARS = 1000
#: Room left in a report for the signatures (each ``.p7s`` holds the signer's certificate).
SIGNATURES_BYTES = 64 * 1024


def report_name(day: str) -> str:
    """The folder of ``day``'s audit report: ``audit-YYYY-MM-DD``."""
    return f"{PREFIX}{day}"


def is_audit_report(name: str) -> bool:
    return name.startswith(PREFIX) and bool(_DAY.fullmatch(name.removeprefix(PREFIX)))


@dataclass(frozen=True)
class AuditSegment:
    """The journal segment of a day's export: records ``first_seq`` to ``last_seq``, the last
    one's hash ``last_hash``; ``refused`` the export's refusal, when there is no export (the
    segment is then named when the server knew it, else its fields are None)."""

    day: str
    first_seq: int | None
    last_seq: int | None
    last_hash: str | None
    refused: str | None = None

    @classmethod
    def of(cls, day: str, records: Sequence[Record], refused: str | None = None) -> "AuditSegment":
        if not records:
            return cls(day, None, None, None, refused)
        return cls(day, records[0].seq, records[-1].seq, records[-1].hash, refused)

    def document(self) -> dict[str, Any]:
        return {"format": SEGMENT_FORMAT, "day": self.day, "first_seq": self.first_seq, "last_seq": self.last_seq,
                "last_hash": self.last_hash, "refused": self.refused}

    @classmethod
    def from_document(cls, text: str) -> "AuditSegment":
        """The segment ``text`` says; :class:`ExportUnreadable` naming the field otherwise."""
        data = document(text, SEGMENT, SEGMENT_FORMAT)

        def field(name: str, kind: type, optional: bool) -> Any:
            value = data.get(name)
            if value is None and optional:
                return None
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ExportUnreadable(f"{SEGMENT}: its {name} is not a JSON {kind.__name__}: {value!r:.60}")
            return value

        day = field("day", str, False)
        refused = field("refused", str, True)
        first, last = field("first_seq", int, refused is not None), field("last_seq", int, refused is not None)
        last_hash = field("last_hash", str, refused is not None)
        if not _DAY.fullmatch(day):
            raise ExportUnreadable(f"{SEGMENT}: its day is a date YYYY-MM-DD, not {day!r:.40}")
        if (first is None) != (last is None) or (first is None) != (last_hash is None):
            raise ExportUnreadable(f"{SEGMENT}: first_seq, last_seq and last_hash are all given or none")
        if first is not None and not 1 <= first <= last:
            raise ExportUnreadable(f"{SEGMENT}: its records run from {first} to {last}: not a segment of a journal")
        if last_hash is not None and not _HASH.fullmatch(last_hash):
            raise ExportUnreadable(f"{SEGMENT}: its last_hash is not a SHA-256 hash in lowercase hex")
        extra = sorted(set(data) - {"format", "day", "first_seq", "last_seq", "last_hash", "refused"})
        if extra:
            raise ExportUnreadable(f"{SEGMENT}: holds {extra[0]}, which a segment does not")
        return cls(day, first, last, last_hash, refused)


def export_documents(scenario: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, bytes]:
    """``scenario.json`` and ``result.json`` as an export writes them (the result as ``bingo replay``
    prints it, so that the two files are equal byte for byte when the server and the replay agree)."""
    return {
        SCENARIO: (json.dumps(dict(scenario), indent=2, ensure_ascii=True) + "\n").encode("ascii"),
        RESULT: render(dict(result)).encode("ascii"),
    }


@dataclass(frozen=True)
class AuditReport:
    """What a day's audit report holds: the segment, and the documents unless the export was refused."""

    segment: AuditSegment
    scenario: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None

    @classmethod
    def of_export(cls, day: str, scenario: Mapping[str, Any], result: Mapping[str, Any],
                  records: Sequence[Record]) -> "AuditReport":
        return cls(AuditSegment.of(day, records), scenario, result)

    @classmethod
    def refused(cls, day: str, reason: str, records: Sequence[Record] = ()) -> "AuditReport":
        return cls(AuditSegment.of(day, records, reason[:REASON_CHARS] or "refused"))

    @property
    def name(self) -> str:
        return report_name(self.segment.day)

    def files(self) -> dict[str, bytes]:
        """The report's files (without their signatures)."""
        files = {SEGMENT: (json.dumps(self.segment.document(), indent=2, ensure_ascii=True) + "\n").encode("ascii")}
        if self.scenario is not None and self.result is not None:
            files[SCENARIO] = json.dumps(dict(self.scenario), separators=(",", ":"), ensure_ascii=True).encode("ascii")
            files[RESULT] = render(dict(self.result)).encode("ascii")
        return files

    def fitted(self, limit: int = MAX_PARTS * PART_BYTES) -> "AuditReport":
        """This report, or its refusal when its files and their signatures would not fit in ``limit`` bytes."""
        size = sum(len(data) for data in self.files().values())
        if size + SIGNATURES_BYTES <= limit:
            return self
        reason = (f"the day's audit export holds {size} bytes, more than the largest report the feed carries "
                  f"({limit} with its signatures); the inspector exports it with bingo audit export")
        return AuditReport(replace(self.segment, refused=reason))


__all__ = [
    "PREFIX",
    "SEGMENT",
    "SEGMENT_FORMAT",
    "AuditReport",
    "AuditSegment",
    "export_documents",
    "is_audit_report",
    "report_name",
]

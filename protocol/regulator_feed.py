"""The regulator's real-time feed: the wire format (R92.7, R95; docs/regulator-feed.md).

A sender (a hall server, or the central server) streams its journal, record by
record as stored, to the regulator's receiver.  Every message is one JSON object
(canonical JSON, :func:`protocol.chain.canonical_json`) with a ``kind``:

``hello`` (sender to receiver, once per connection)
    ``sender`` (``"hall:<id>"`` or ``"central"``) and ``public_key`` (the PEM of the
    sender's journal key).  The receiver answers with a ``position``.
``position`` (receiver to sender)
    ``sender`` and ``acked``: the last ``seq`` the receiver has stored for the sender
    (0 for none), and ``hash``: that record's hash (left out for none).  The sender goes
    on from ``acked + 1``; a sender whose journal lacks that record, or has it with
    another hash, was rolled back and does not serve (docs/security.md).
``batch`` (sender to receiver)
    ``sender`` and ``records``: 1 to :data:`MAX_BATCH` consecutive records, each with
    the fields of an audit export's ``journal.jsonl`` line (FORMATS.md section 3):
    ``seq``, ``time_ms``, ``type``, ``payload``, ``prev``, ``hash``, ``signature``.
``ack`` (receiver to sender)
    ``sender`` and ``seq``: every record up to ``seq`` is stored.
``report`` (sender to receiver)
    ``sender``, ``name`` (the report's folder: ``daily-YYYY-MM-DD``, ``monthly-YYYY-MM``,
    or ``audit-YYYY-MM-DD``, the day's audit export, :mod:`protocol.audit.report`) and
    ``files``: each file of the signed report (``report.json``, its ``.p7s``...) as base64.  Sent after every record is acknowledged, and again
    (the whole report) until the receiver acknowledges it.
``report_ack`` (receiver to sender)
    ``sender``, ``name`` and ``digest`` (SHA-256 of the report's files, as
    :func:`report_digest`): the report is stored.
``report_part`` (sender to receiver)
    A report larger than one message (:data:`PART_BYTES`) goes in parts: ``sender``,
    ``name``, ``digest`` (the whole report's), ``size`` (the bytes of the report's files
    framed as :func:`report_blob` frames them), ``index`` (0 to ``count - 1``), ``count``
    (the size in parts of :data:`PART_BYTES`, at most :data:`MAX_PARTS`) and ``data``:
    that part of the framed files, base64.  The receiver keeps each part on disk and
    answers ``report_part_ack``; once it holds every part it takes the report as a
    ``report`` and answers ``report_ack``.
``report_part_ack`` (receiver to sender)
    ``sender``, ``name``, ``digest`` and ``next``: the first part of that report the
    receiver does not hold; the sender sends that one next, so a delivery cut off goes on
    where it stopped.

A message that does not have its fields raises :class:`FeedFormatError` naming the
field; nothing here checks signatures (the receiver does, with the key of ``hello``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Mapping, Union

from protocol import strict_json
from protocol.chain import Record, canonical_json
from protocol.errors import DomainError

FORMAT = "bingo-regulator-feed/1"
#: The most records one ``batch`` may carry.
MAX_BATCH = 200
CENTRAL = "central"
_SENDER = re.compile(r"(hall:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}|central)")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


class FeedFormatError(DomainError):
    """A feed message that is not one; the message names the field."""


def hall_sender(hall_id: str) -> str:
    """The feed identity of the hall ``hall_id``."""
    return f"hall:{hall_id}"


def is_sender(text: str) -> bool:
    """Whether ``text`` is a feed identity: ``hall:<id>`` or ``central``."""
    return _SENDER.fullmatch(text) is not None


@dataclass(frozen=True)
class Hello:
    sender: str
    public_key: str


@dataclass(frozen=True)
class Position:
    sender: str
    acked: int
    hash: str | None = None  # the hash of record ``acked`` (None: no record, or a receiver that does not say)


@dataclass(frozen=True)
class Batch:
    sender: str
    records: tuple[Record, ...]


@dataclass(frozen=True)
class Ack:
    sender: str
    seq: int


@dataclass(frozen=True)
class Report:
    sender: str
    name: str
    files: Mapping[str, bytes]


@dataclass(frozen=True)
class ReportAck:
    sender: str
    name: str
    digest: str


@dataclass(frozen=True)
class ReportPart:
    sender: str
    name: str
    digest: str
    size: int
    index: int
    count: int
    data: bytes


@dataclass(frozen=True)
class ReportPartAck:
    sender: str
    name: str
    digest: str
    next: int


#: A report's folder name (a daily report, a monthly list, a day's audit export), and the names of the
#: files it may hold (each with its signature).
REPORT_NAME = re.compile(r"(daily-\d{4}-\d{2}-\d{2}|monthly-\d{4}-\d{2}|audit-\d{4}-\d{2}-\d{2})")
REPORT_FILE = re.compile(r"((report|cards-sold)\.(json|csv|pdf)|(scenario|result|segment)\.json)(\.p7s)?")
#: The most bytes of one report's files together.
MAX_REPORT_BYTES = 6 * 1024 * 1024


#: The bytes of one part of a report sent in parts (``report_part``): a report whose framed files
#: are larger goes in parts.  Its base64 fits in one message of the link with room to spare.
PART_BYTES = 4 * 1024 * 1024
#: The most parts of one report: 256 MiB of files, a day's audit export of a very busy hall.
MAX_PARTS = 64


def report_digest(files: Mapping[str, bytes]) -> str:
    """SHA-256 over the files in name order (each name, a NUL, its length, a NUL, its bytes): the
    SHA-256 of :func:`report_blob`."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + str(len(files[name])).encode() + b"\0" + files[name])
    return digest.hexdigest()


def report_blob(files: Mapping[str, bytes]) -> bytes:
    """The report's files framed as one: each in name order, its name, a NUL, its length, a NUL, its bytes."""
    return b"".join(name.encode() + b"\0" + str(len(files[name])).encode() + b"\0" + files[name]
                    for name in sorted(files))


def files_of_blob(blob: bytes) -> dict[str, bytes]:
    """The files :func:`report_blob` framed; :class:`FeedFormatError` naming what is wrong otherwise."""
    files: dict[str, bytes] = {}
    at = 0
    while at < len(blob):
        name_end = blob.find(b"\0", at)
        size_end = blob.find(b"\0", name_end + 1) if name_end >= 0 else -1
        if size_end < 0:
            raise FeedFormatError(f"the report's parts: byte {at} does not start a file (a name, NUL, a length, NUL)")
        name = blob[at:name_end].decode("ascii", "replace")
        length = blob[name_end + 1:size_end]
        if not REPORT_FILE.fullmatch(name) or name in files:
            raise FeedFormatError(f"the report's parts: {name[:40]!r} is not a file of a report, or comes twice")
        if not length.isdigit() or size_end + 1 + int(length) > len(blob):
            raise FeedFormatError(f"the report's parts: the length of {name} is not one the parts hold")
        files[name] = blob[size_end + 1:size_end + 1 + int(length)]
        at = size_end + 1 + int(length)
    if not files:
        raise FeedFormatError("the report's parts hold no file")
    return files


def part_count(size: int) -> int:
    """The parts of :data:`PART_BYTES` a report of ``size`` framed bytes goes in."""
    return -(-size // PART_BYTES)


def report_parts(report: Report) -> list[ReportPart]:
    """``report`` as the parts ``report_part`` carries."""
    blob = report_blob(report.files)
    digest = hashlib.sha256(blob).hexdigest()
    count = part_count(len(blob))
    return [ReportPart(report.sender, report.name, digest, len(blob), index, count,
                       blob[index * PART_BYTES:(index + 1) * PART_BYTES]) for index in range(count)]


Message = Union[Hello, Position, Batch, Ack, Report, ReportAck, ReportPart, ReportPartAck]


def record_to_dict(record: Record) -> dict[str, Any]:
    """A record as an audit export's ``journal.jsonl`` line holds it."""
    return {
        "seq": record.seq, "time_ms": record.time_ms, "type": record.type, "payload": dict(record.payload),
        "prev": record.prev, "hash": record.hash, "signature": record.signature,
    }  # fmt: skip


def to_dict(message: Message) -> dict[str, Any]:
    base: dict[str, Any] = {"format": FORMAT, "sender": message.sender}
    if isinstance(message, Hello):
        return {**base, "kind": "hello", "public_key": message.public_key}
    if isinstance(message, Position):
        said = {} if message.hash is None else {"hash": message.hash}
        return {**base, "kind": "position", "acked": message.acked, **said}
    if isinstance(message, Batch):
        return {**base, "kind": "batch", "records": [record_to_dict(r) for r in message.records]}
    if isinstance(message, Report):
        return {**base, "kind": "report", "name": message.name,
                "files": {name: base64.b64encode(data).decode("ascii") for name, data in sorted(message.files.items())}}
    if isinstance(message, ReportAck):
        return {**base, "kind": "report_ack", "name": message.name, "digest": message.digest}
    if isinstance(message, ReportPart):
        return {**base, "kind": "report_part", "name": message.name, "digest": message.digest, "size": message.size,
                "index": message.index, "count": message.count, "data": base64.b64encode(message.data).decode("ascii")}
    if isinstance(message, ReportPartAck):
        return {**base, "kind": "report_part_ack", "name": message.name, "digest": message.digest,
                "next": message.next}
    return {**base, "kind": "ack", "seq": message.seq}


def encode(message: Message) -> bytes:
    """The message's bytes on the wire: canonical JSON."""
    return canonical_json(to_dict(message))


def _field(data: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    if name not in data:
        raise FeedFormatError(f"{where}: the field {name!r} is missing")
    value = data[name]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise FeedFormatError(f"{where}: the field {name!r} must be an integer, not {value!r}")
    if not isinstance(value, kind):
        raise FeedFormatError(f"{where}: the field {name!r} must be a {kind.__name__}")
    return value


def _count(data: Mapping[str, Any], name: str, where: str, least: int) -> int:
    value: int = _field(data, name, int, where)
    if value < least:
        raise FeedFormatError(f"{where}: the field {name!r} must be at least {least}, not {value}")
    return value


def record_from_dict(data: Any, where: str) -> Record:
    """A record as a ``batch`` carries it; :class:`FeedFormatError` naming the field otherwise."""
    if not isinstance(data, dict):
        raise FeedFormatError(f"{where} is not an object")
    extra = sorted(set(data) - {"seq", "time_ms", "type", "payload", "prev", "hash", "signature"})
    if extra:
        raise FeedFormatError(f"{where}: unknown field {extra[0]!r}")
    seq = _count(data, "seq", where, 1)
    time_ms = _count(data, "time_ms", where, 0)
    type_ = _field(data, "type", str, where)
    payload = _field(data, "payload", dict, where)
    prev = _field(data, "prev", str, where)
    hash_ = _field(data, "hash", str, where)
    signature = _field(data, "signature", str, where)
    for name, value, pattern in (("prev", prev, _HEX64), ("hash", hash_, _HEX64), ("signature", signature, _HEX128)):
        if not pattern.fullmatch(value):
            raise FeedFormatError(f"{where}: the field {name!r} is not lowercase hex of the right length")
    return Record(seq, time_ms, type_, payload, prev, hash_, signature)


def from_dict(data: Any) -> Message:
    """The message ``data`` (decoded JSON) is; :class:`FeedFormatError` naming the field otherwise."""
    if not isinstance(data, dict):
        raise FeedFormatError("a feed message is a JSON object")
    if data.get("format") != FORMAT:
        raise FeedFormatError(f"the field 'format' must be {FORMAT!r}, not {data.get('format')!r}")
    kind = _field(data, "kind", str, "the message")
    where = f"the {kind} message"
    sender = _field(data, "sender", str, where)
    if not _SENDER.fullmatch(sender):
        raise FeedFormatError(f"{where}: the field 'sender' must be 'hall:<id>' or 'central', not {sender!r}")
    if kind == "hello":
        key = _field(data, "public_key", str, where)
        if not key.startswith("-----BEGIN PUBLIC KEY-----"):
            raise FeedFormatError(f"{where}: the field 'public_key' is not a PEM public key")
        return Hello(sender, key)
    if kind == "position":
        hash = data.get("hash")
        if hash is not None and (not isinstance(hash, str) or not _HEX64.fullmatch(hash)):
            raise FeedFormatError(f"{where}: the field 'hash' is not lowercase hex of the right length")
        return Position(sender, _count(data, "acked", where, 0), hash)
    if kind == "ack":
        return Ack(sender, _count(data, "seq", where, 0))
    if kind == "batch":
        items = _field(data, "records", list, where)
        if not 1 <= len(items) <= MAX_BATCH:
            raise FeedFormatError(f"{where}: the field 'records' must hold 1 to {MAX_BATCH} records, not {len(items)}")
        return Batch(sender, tuple(record_from_dict(item, f"{where}, record {i + 1}") for i, item in enumerate(items)))
    if kind in ("report", "report_ack", "report_part", "report_part_ack"):
        name = _field(data, "name", str, where)
        if not REPORT_NAME.fullmatch(name):
            raise FeedFormatError(f"{where}: the field 'name' must be daily-YYYY-MM-DD, monthly-YYYY-MM or "
                                  f"audit-YYYY-MM-DD, not {name[:40]!r}")
        if kind != "report":
            digest = _field(data, "digest", str, where)
            if not _HEX64.fullmatch(digest):
                raise FeedFormatError(f"{where}: the field 'digest' is not lowercase hex of the right length")
            if kind == "report_ack":
                return ReportAck(sender, name, digest)
            if kind == "report_part_ack":
                return ReportPartAck(sender, name, digest, _count(data, "next", where, 0))
            return _part(data, sender, name, digest, where)
        listed = _field(data, "files", dict, where)
        if not listed:
            raise FeedFormatError(f"{where}: the field 'files' holds no file")
        files: dict[str, bytes] = {}
        for file, text in listed.items():
            if not REPORT_FILE.fullmatch(file):
                raise FeedFormatError(f"{where}: {file[:40]!r} is not a file of a report (report.json, its .p7s...)")
            if not isinstance(text, str):
                raise FeedFormatError(f"{where}: the file {file!r} is not base64 text")
            try:
                files[file] = base64.b64decode(text, validate=True)
            except ValueError:
                raise FeedFormatError(f"{where}: the file {file!r} is not base64") from None
        if sum(len(d) for d in files.values()) > MAX_REPORT_BYTES:
            raise FeedFormatError(f"{where}: the files hold more than {MAX_REPORT_BYTES} bytes")
        return Report(sender, name, files)
    raise FeedFormatError(f"the field 'kind' must be hello, position, batch, ack, report, report_ack, report_part "
                          f"or report_part_ack, not {kind!r}")


def _part(data: Mapping[str, Any], sender: str, name: str, digest: str, where: str) -> ReportPart:
    """A ``report_part`` whose size, count, index and data agree."""
    size = _count(data, "size", where, PART_BYTES + 1)
    if size > MAX_PARTS * PART_BYTES:
        raise FeedFormatError(f"{where}: a report holds at most {MAX_PARTS * PART_BYTES} bytes, not {size}")
    count = _count(data, "count", where, 2)
    if count != part_count(size):
        raise FeedFormatError(f"{where}: {size} bytes go in {part_count(size)} parts, not {count}")
    index = _count(data, "index", where, 0)
    if index >= count:
        raise FeedFormatError(f"{where}: the field 'index' must be below {count}, not {index}")
    text = _field(data, "data", str, where)
    try:
        part = base64.b64decode(text, validate=True)
    except ValueError:
        raise FeedFormatError(f"{where}: the field 'data' is not base64") from None
    wanted = PART_BYTES if index < count - 1 else size - PART_BYTES * (count - 1)
    if len(part) != wanted:
        raise FeedFormatError(f"{where}: part {index} of {count} holds {wanted} bytes, not {len(part)}")
    return ReportPart(sender, name, digest, size, index, count, part)


def decode(raw: bytes) -> Message:
    """The message of ``raw`` bytes; :class:`FeedFormatError` when they are not one."""
    try:
        data = strict_json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise FeedFormatError(f"a feed message is UTF-8 JSON: {error}") from None
    return from_dict(data)

"""``bingo audit verify DIR``: an audit export checked with nothing but its four files.

FORMATS.md section 3 says what an export holds; this module reads the files and checks
that they hold together, in this order, and stops at the first fault:

1. **the journal segment**: every record of ``journal.jsonl`` hashes to its ``hash``,
   is signed by ``public-key.pem`` and follows the record before it (``seq`` one more,
   ``prev`` its hash); the first record's ``prev`` is the genesis hash exactly when it
   is the journal's record 1, and a SHA-256 hash otherwise;
2. to 4. **``scenario.json`` and ``result.json`` are what the records say, and the
   replay of the scenario is the result**: :func:`protocol.audit.check.check_documents`,
   by the server's own rebuild (a :data:`~protocol.audit.check.Rebuild`), the checks the
   regulator's receiver makes too on the records it holds.

A file that cannot be read as its format (missing, not JSON, not a journal record,
not a key, a scenario the replay does not read) raises :class:`ExportUnreadable`; a
fault in what the files say raises :class:`ExportFault`.  Each message is one line
naming the file, and the record (``seq``) or the game and field at fault.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.audit.check import (
    FILES,
    JOURNAL,
    PUBLIC_KEY,
    RESULT,
    SCENARIO,
    ExportFault,
    ExportFiles,
    ExportUnreadable,
    Rebuild,
    Verified,
    check_documents,
    document,
    export_kind,
    strict_json,
)
from protocol.chain import GENESIS, ChainError, Record
from protocol.replay import INPUT_FORMATS, OUTPUT_FORMATS, ReplayError, parse_scenario
from server_kit.audit_folder import one_line, verify_segment

#: The fields of a ``journal.jsonl`` line and the JSON type each must have.
RECORD_FIELDS: Mapping[str, type] = {
    "seq": int, "time_ms": int, "type": str, "payload": dict, "prev": str, "hash": str, "signature": str,
}  # fmt: skip
_HASH = re.compile(r"[0-9a-f]{64}")
#: The exit status of ``bingo audit verify`` for a fault in what the files say, and for a file it cannot read.
FAULT, UNREADABLE = 1, 2


# --- Reading the files ----------------------------------------------------------------


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ExportUnreadable(f"{path} is not UTF-8 text: {error}") from None
    except OSError as error:
        raise ExportUnreadable(f"{path} cannot be read: {error.strerror or error}") from None


def _document(path: Path, format: str | tuple[str, ...]) -> dict[str, Any]:
    return document(_text(path), str(path), format)


def _record(line: str, path: Path, number: int) -> Record:
    where = f"{path} line {number}"
    try:
        data = strict_json(line)
    except (ValueError, RecursionError) as error:
        raise ExportUnreadable(f"{where} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or set(data) != set(RECORD_FIELDS):
        raise ExportUnreadable(f"{where} is not a journal record (an object of {', '.join(RECORD_FIELDS)})")
    for name, kind in RECORD_FIELDS.items():
        value = data[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ExportUnreadable(f"{where} is not a journal record: its {name} is not a JSON {kind.__name__}")
    return Record(**data)


def _journal(path: Path) -> tuple[Record, ...]:
    lines = _text(path).splitlines()
    records = tuple(_record(line, path, number) for number, line in enumerate(lines, start=1))
    if not records:
        raise ExportUnreadable(f"{path} holds no journal record")
    return records


def _public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as error:
        raise ExportUnreadable(f"{path} cannot be read: {error.strerror or error}") from None
    except (ValueError, TypeError) as error:
        raise ExportUnreadable(f"{path} is not a PEM public key: {error}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ExportUnreadable(f"{path} is not an Ed25519 public key (the journal's keys are Ed25519)")
    return key


def read_export(folder: Path) -> ExportFiles:
    """The four files of ``folder``; :class:`ExportUnreadable` names the first that cannot be read."""
    if not folder.is_dir():
        raise ExportUnreadable(f"{folder} is not a folder (an audit export is a folder of {', '.join(FILES)})")
    for name in FILES:
        if not (folder / name).is_file():
            raise ExportUnreadable(f"{folder / name} is missing (an audit export holds {', '.join(FILES)})")
    scenario = _document(folder / SCENARIO, INPUT_FORMATS)
    try:
        parse_scenario(scenario)
    except ReplayError as error:
        raise ExportUnreadable(f"{folder / SCENARIO} is not a scenario the replay reads: {error}") from None
    return ExportFiles(
        folder=folder,
        scenario=scenario,
        result=_document(folder / RESULT, OUTPUT_FORMATS),
        records=_journal(folder / JOURNAL),
        public_key=_public_key(folder / PUBLIC_KEY),
    )


# --- 1. The journal segment -----------------------------------------------------------


def check_segment(files: ExportFiles) -> None:
    """Every record's hash, signature and link, and the segment's first link."""
    first = files.records[0]
    if first.seq < 1:
        raise ExportFault(f"{JOURNAL} record {first.seq}: a journal's records are numbered from 1")
    if first.seq == 1 and first.prev != GENESIS:
        raise ExportFault(f"{JOURNAL} record 1: the journal's first record follows no record, but its prev is not "
                          "the genesis hash (64 zeros)")
    if first.seq > 1 and (first.prev == GENESIS or not _HASH.fullmatch(first.prev)):
        raise ExportFault(f"{JOURNAL} record {first.seq}: its prev is not the SHA-256 hash of a record before it")
    data = first.body
    if hashlib.sha256(data).hexdigest() == first.hash:
        try:
            files.public_key.verify(bytes.fromhex(first.signature), data)
        except (InvalidSignature, ValueError):
            signed = _signed_by_key(files)
            if not signed:
                raise ExportFault(
                    f"{PUBLIC_KEY} verifies none of the {len(files.records)} records of {JOURNAL}: it is not the key "
                    "that signed the journal (replaced), or every record was forged"
                ) from None
    try:
        verify_segment(files.records, files.public_key)
    except ChainError as error:
        raise ExportFault(f"{JOURNAL} {error}") from None


def _signed_by_key(files: ExportFiles) -> bool:
    for record in files.records:
        try:
            files.public_key.verify(bytes.fromhex(record.signature), record.body)
            return True
        except (InvalidSignature, ValueError):
            continue
    return False


# --- The whole check ------------------------------------------------------------------


def verify_export(folder: Path, rebuilds: Mapping[str, Rebuild]) -> Verified:
    """Check ``folder`` in the order of this module's steps; raises at the first fault."""
    files = read_export(folder)
    check_segment(files)
    kind = export_kind(files.records)
    return check_documents(files, kind, lambda read: rebuilds[kind](read))


def verify_and_tell(folder: Path, rebuilds: Mapping[str, Rebuild], echo: Callable[..., None]) -> int:
    """``bingo audit verify``: the check, its summary or its one-line fault told, the exit status returned.

    0 when everything holds, :data:`FAULT` naming the first fault, :data:`UNREADABLE` when
    a file is missing or cannot be read as its format.
    """
    try:
        verified = verify_export(folder, rebuilds)
    except ExportUnreadable as error:
        echo(one_line(error), err=True)
        return UNREADABLE
    except ExportFault as error:
        echo(one_line(error), err=True)
        return FAULT
    echo(verified.summary(folder))
    return 0


__all__ = [
    "FAULT",
    "UNREADABLE",
    "check_segment",
    "read_export",
    "verify_and_tell",
    "verify_export",
]

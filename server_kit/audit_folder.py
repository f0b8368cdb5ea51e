"""An audit export's folder (FORMATS.md section 3): four files written at once, its journal checked.

Every server that exports a day for the inspector (the hall, the central server)
writes it here.  :func:`write_export` writes ``scenario.json``, ``result.json``,
``journal.jsonl`` and ``public-key.pem`` into a new folder beside the one asked for
and renames it into place at the end, so a refused or interrupted export leaves nothing behind; it never
writes into a folder that holds anything.

``journal.jsonl`` holds one record a line, a JSON object with the record's seven
fields (``seq``, ``time_ms``, ``type``, ``payload``, ``prev``, ``hash``,
``signature``), in the canonical form the journal signs (sorted keys, no spaces,
UTF-8), each in its sealed form: a secret it holds (a PIN's hash) is written as its
commitment, which its signature covers.  A record's signed body is the canonical JSON
of its first five fields (:func:`protocol.chain.body`); :func:`verify_segment` checks each record's hash,
signature and link to the record before it, as an inspector's own script would.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.audit.check import FILES, JOURNAL, PUBLIC_KEY, RESULT, SCENARIO
from protocol.audit.report import export_documents
from protocol.chain import ChainError, Record, canonical_json, sealed_form
from protocol.errors import DomainError

__all__ = [
    "FILES", "JOURNAL", "PUBLIC_KEY", "RESULT", "SCENARIO", "ExportFolderError", "check_out_folder", "is_day",
    "journal_line", "one_line", "read_journal", "verify_segment", "write_export",
]  # fmt: skip


_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_day(text: str) -> bool:
    """Whether ``text`` is a calendar date written ``YYYY-MM-DD`` (the ``--day`` of an export)."""
    if not _DAY.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def one_line(error: Exception) -> str:
    """``error`` as the one line an export command prints (a file error with its file name)."""
    if isinstance(error, OSError) and not isinstance(error, DomainError):
        text = f"{error.strerror or error}: {error.filename}"
    else:
        text = str(error)
    return text.replace("\r", "\\r").replace("\n", "\\n")


class ExportFolderError(DomainError):
    """An export folder that cannot be written; the message names it and why."""


def check_out_folder(out: Path) -> None:
    """Refuse an ``out`` that exists and is not an empty folder."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ExportFolderError(f"{out} exists and is not a folder; name a new or empty folder")
    if out.is_dir() and any(out.iterdir()):
        raise ExportFolderError(f"{out} is not empty; name a new or empty folder")


def journal_line(record: Record) -> str:
    """One record as ``journal.jsonl`` holds it (no final newline): in its sealed form, each secret
    it holds replaced by its commitment (:func:`protocol.chain.sealed_form`; the same hash and signature)."""
    record = sealed_form(record)
    return canonical_json(
        {
            "seq": record.seq,
            "time_ms": record.time_ms,
            "type": record.type,
            "payload": record.payload,
            "prev": record.prev,
            "hash": record.hash,
            "signature": record.signature,
        }
    ).decode("utf-8")


def read_journal(path: Path) -> Iterator[Record]:
    """The records of a ``journal.jsonl``, in file order."""
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            try:
                data = json.loads(line)
                yield Record(**{name: data[name] for name in ("seq", "time_ms", "type", "payload", "prev",
                                                             "hash", "signature")})
            except (ValueError, KeyError, TypeError) as error:
                raise ChainError(None, f"{path} line {number} is not a journal record: {error}") from None


def verify_segment(records: Iterable[Record], public_key: Ed25519PublicKey) -> int:
    """Check a run of consecutive journal records; returns how many.  Raises :class:`ChainError`.

    The run may start anywhere in the journal: its first record's ``prev`` is the hash
    of the record before the run, which the run itself cannot vouch for.
    """
    previous: Record | None = None
    count = 0
    for record in records:
        data = record.body
        if hashlib.sha256(data).hexdigest() != record.hash:
            raise ChainError(record.seq, "its content does not match its hash (altered)")
        if previous is not None:
            if record.seq != previous.seq + 1:
                raise ChainError(record.seq, f"does not follow record {previous.seq} (removed, inserted or reordered)")
            if record.prev != previous.hash:
                raise ChainError(record.seq, "does not link to the record before it (inserted, removed or reordered)")
        try:
            public_key.verify(bytes.fromhex(record.signature), data)
        except (InvalidSignature, ValueError):
            raise ChainError(record.seq, "its signature does not verify (altered or forged)") from None
        previous = record
        count += 1
    return count


def write_export(scenario: Mapping[str, Any], result: Mapping[str, Any], records: Iterable[Record],
                 public_key_pem: bytes, out: Path) -> None:
    """Write the four files into ``out`` (new or empty), all of them or none."""
    check_out_folder(out)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    partial = parent / f".{out.name}.partial-{secrets.token_hex(4)}"
    os.mkdir(partial)
    try:
        # The result in the replay's own rendering: when the server and the replay agree, the files are equal
        # byte for byte.
        for name, data in export_documents(scenario, result).items():
            (partial / name).write_bytes(data)
        with open(partial / JOURNAL, "w", encoding="utf-8") as stream:
            for record in records:
                stream.write(journal_line(record) + "\n")
        (partial / PUBLIC_KEY).write_bytes(public_key_pem)
        for name in FILES:
            with open(partial / name, "rb") as written:
                os.fsync(written.fileno())
        try:
            # rename(2) replaces an empty folder and refuses one that holds anything.
            os.rename(partial, out)
        except OSError:
            check_out_folder(out)
            raise
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise

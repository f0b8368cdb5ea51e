"""Hash-chained, signed journal records (DESIGN.md "The journal is the truth").

A record is ``seq`` (1, 2, 3, ...), ``time_ms`` (the server clock), ``type``, a JSON
``payload`` and ``prev`` (the hash of the record before; 64 zeros for the first).
Its *body* is the canonical JSON of those five fields: keys sorted, no spaces, UTF-8.
``hash`` is SHA-256 of the body and ``signature`` the server's Ed25519 signature of
the body, so a record checks with stock tools::

    openssl pkeyutl -verify -pubin -inkey hall-journal.pub.pem -rawin \\
        -in record-42.body -sigfile record-42.sig

:func:`verify_chain` names the first record that was altered (hash or signature),
removed or inserted (sequence gap or repeat) or moved (``prev`` link broken).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from protocol.errors import DomainError

GENESIS = "0" * 64


class ChainError(DomainError):
    """A journal that does not verify; the message names the first bad record."""

    def __init__(self, seq: int | None, reason: str) -> None:
        self.seq = seq
        super().__init__(f"record {seq}: {reason}" if seq is not None else reason)


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no spaces: one byte string for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def body(seq: int, time_ms: int, type: str, payload: Mapping[str, Any], prev: str) -> bytes:
    return canonical_json(
        {"seq": seq, "time_ms": time_ms, "type": type, "payload": payload, "prev": prev}
    )


@dataclass(frozen=True)
class Record:
    seq: int
    time_ms: int
    type: str
    payload: Mapping[str, Any]
    prev: str
    hash: str
    signature: str

    @property
    def body(self) -> bytes:
        return body(self.seq, self.time_ms, self.type, self.payload, self.prev)


def seal(
    key: Ed25519PrivateKey,
    previous: Record | None,
    time_ms: int,
    type: str,
    payload: Mapping[str, Any],
) -> Record:
    """The record that follows ``previous`` (or the first one), hashed and signed."""
    seq = previous.seq + 1 if previous else 1
    prev = previous.hash if previous else GENESIS
    data = body(seq, time_ms, type, payload, prev)
    return Record(
        seq=seq,
        time_ms=time_ms,
        type=type,
        payload=payload,
        prev=prev,
        hash=hashlib.sha256(data).hexdigest(),
        signature=key.sign(data).hex(),
    )


def verify_chain(
    records: Iterable[Record], public_key: Ed25519PublicKey, *, head: tuple[int, str] | None = None
) -> int:
    """Check every record in order; returns how many.  Raises :class:`ChainError`.

    ``head`` is the (seq, hash) of the last record as kept outside the database: a
    journal cut short at its end is otherwise indistinguishable from a shorter one.
    The journal may run past the head (a crash between commit and head update).
    """
    expected_seq, prev = 1, GENESIS
    at_head: str | None = None
    for record in records:
        if record.seq != expected_seq:
            if record.seq < expected_seq:
                raise ChainError(record.seq, f"appears again after record {expected_seq - 1} (inserted or reordered)")
            raise ChainError(
                expected_seq, f"is missing: the journal jumps from {expected_seq - 1} to {record.seq}"
            )
        data = record.body
        if hashlib.sha256(data).hexdigest() != record.hash:
            raise ChainError(record.seq, "its content does not match its hash (altered)")
        if record.prev != prev:
            raise ChainError(
                record.seq, "does not follow the record before it (inserted, removed or reordered)"
            )
        try:
            public_key.verify(bytes.fromhex(record.signature), data)
        except (InvalidSignature, ValueError):
            raise ChainError(record.seq, "its signature does not verify (altered or forged)") from None
        prev = record.hash
        expected_seq += 1
        if head is not None and record.seq == head[0]:
            at_head = record.hash
    count = expected_seq - 1
    if head is not None:
        head_seq, head_hash = head
        if count < head_seq:
            raise ChainError(
                count + 1, f"is missing: the journal ends at {count} but its head says {head_seq}"
            )
        # The head is written just after each commit, so it may lag by one commit.
        if head_seq and at_head != head_hash:
            raise ChainError(head_seq, "differs from the head kept outside the database")
    return count

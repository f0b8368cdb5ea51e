"""Entries sealed through their declarations: nothing undeclared is ever signed into a journal.

A record type with :func:`~protocol.records.base.secret` fields is sealed with a fresh
random nonce for each (``"sealed": {"pin_hash": "<32 hex>"}``): its signature then
covers each secret's commitment instead of the secret (:mod:`protocol.chain`, "Sealed
secrets"), so its sealed form leaves the server and verifies without the secret.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable, Iterable, Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.chain import SEALED_KEY, Record, canonical_json, canonical_json_without_floats, seal
from protocol.records.base import JournalRecord, entry_record, holds_no_float, keep_declared, secret_keys

#: Bytes of a commitment's nonce.
NONCE_BYTES = 16


def new_nonce() -> str:
    return secrets.token_hex(NONCE_BYTES)


def sealed_payload(record: JournalRecord, nonce: Callable[[], str] = new_nonce) -> dict[str, Any]:
    """``record``'s payload, with a nonce for each of its secret fields unless it holds them already."""
    payload = record.to_payload()
    hidden = [key for key in secret_keys(type(record)) if key in payload]
    if hidden and SEALED_KEY not in payload:
        payload[SEALED_KEY] = {key: nonce() for key in hidden}
    return payload


def seal_entries(
    key: Ed25519PrivateKey | None,
    previous: Record | None,
    time_ms: int,
    entries: Iterable[JournalRecord | tuple[str, Mapping[str, Any]]],
    nonce: Callable[[], str] = new_nonce,
) -> list[Record]:
    """The records that follow ``previous``, one per entry, hashed and signed (not signed yet without a key:
    :func:`protocol.chain.seal`).

    Every entry - a declared record, or a ``(type, payload)`` pair - is built through the
    registry first, all of them before any is sealed: an undeclared type or a bad field
    raises :class:`protocol.records.RecordError` and nothing is sealed.  The payload
    sealed is the record's :meth:`~protocol.records.JournalRecord.to_payload`, with the
    nonces of its secrets (:func:`sealed_payload`); each record sealed keeps the declared
    record it was made from (:func:`~protocol.records.declared`).

    Records' times never go back: a ``time_ms`` before ``previous``'s is sealed as
    ``previous``'s (a server's clock keeps them so and journals why, ``clock_stepped``;
    this is the last guard, for every journal).
    """
    declared = [entry_record(entry) for entry in entries]
    sealed: list[Record] = []
    if previous is not None and time_ms < previous.time_ms:
        time_ms = previous.time_ms
    for record in declared:
        encode = canonical_json_without_floats if holds_no_float(type(record)) else canonical_json
        previous = seal(key, previous, time_ms, record.type, sealed_payload(record, nonce), encode)
        keep_declared(previous, record)
        sealed.append(previous)
    return sealed

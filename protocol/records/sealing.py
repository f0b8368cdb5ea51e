"""Entries sealed through their declarations: nothing undeclared is ever signed into a journal."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.chain import Record, seal
from protocol.records.base import JournalRecord, entry_record


def seal_entries(
    key: Ed25519PrivateKey | None,
    previous: Record | None,
    time_ms: int,
    entries: Iterable[JournalRecord | tuple[str, Mapping[str, Any]]],
) -> list[Record]:
    """The records that follow ``previous``, one per entry, hashed and signed (not signed yet without a key:
    :func:`protocol.chain.seal`).

    Every entry - a declared record, or a ``(type, payload)`` pair - is built through the
    registry first, all of them before any is sealed: an undeclared type or a bad field
    raises :class:`protocol.records.RecordError` and nothing is sealed.  The payload
    sealed is the record's :meth:`~protocol.records.JournalRecord.to_payload`.

    Records' times never go back: a ``time_ms`` before ``previous``'s is sealed as
    ``previous``'s (a server's clock keeps them so and journals why, ``clock_stepped``;
    this is the last guard, for every journal).
    """
    declared = [entry_record(entry) for entry in entries]
    sealed: list[Record] = []
    if previous is not None and time_ms < previous.time_ms:
        time_ms = previous.time_ms
    for record in declared:
        previous = seal(key, previous, time_ms, record.type, record.to_payload())
        sealed.append(previous)
    return sealed

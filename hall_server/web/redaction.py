"""Secrets never leave the server: the declared secret fields, withheld from every view.

The journal keeps what the hall must keep to check a PIN, a password or a terminal's
token later (their hashes).  None of it is for a screen: a 4-digit PIN behind its hash
falls to an offline search in under a minute.  Every picture the consoles and boards
are given, over HTTP or pushed over a WebSocket, is made of :func:`record_json` copies
and passes through :func:`redacted`, which drops every field named in
:data:`SECRET_FIELDS` (or ending in one of :data:`SECRET_SUFFIXES`), at any depth.

A module that journals a new kind of secret declares its field secret
(``protocol/records``) and names it in :mod:`protocol.records.secrets`; a field name is
checked, never a value, so a secret under an innocent name is the module's mistake.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocol.chain import Record
from protocol.records.secrets import SECRET_FIELDS, SECRET_SUFFIXES, is_secret


_PLAIN = frozenset({int, str, bool, float, type(None)})


def redacted(value: Any) -> Any:
    """A copy of the JSON-able ``value`` without any secret field, at any depth."""
    if value.__class__ in _PLAIN:
        return value
    if isinstance(value, Mapping):
        return {key: redacted(item) for key, item in value.items() if not (isinstance(key, str) and is_secret(key))}
    if isinstance(value, (list, tuple)):
        return [redacted(item) for item in value]
    return value


def record_json(record: Record) -> dict[str, Any]:
    """A committed record as screens see it: its number, time, type and redacted payload."""
    return {"seq": record.seq, "time_ms": record.time_ms, "type": record.type, "payload": redacted(record.payload)}


__all__ = ["SECRET_FIELDS", "SECRET_SUFFIXES", "is_secret", "record_json", "redacted"]

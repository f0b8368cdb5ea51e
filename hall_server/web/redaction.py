"""Secrets never leave the server: the declared secret fields, withheld from every view.

The journal keeps what the hall must keep to check a PIN, a password or a terminal's
token later (their hashes).  None of it is for a screen: a 4-digit PIN behind its hash
falls to an offline search in under a minute.  Every picture the consoles and boards
are given, over HTTP or pushed over a WebSocket, is made of :func:`record_json` copies
and passes through :func:`redacted`, which drops every field named in
:data:`SECRET_FIELDS` (or ending in one of :data:`SECRET_SUFFIXES`), at any depth.

A module that journals a new kind of secret names its field here; a field name is
checked, never a value, so a secret under an innocent name is the module's mistake.
"""

from __future__ import annotations

from typing import Any, Mapping

from protocol.chain import Record

#: Field names whose values are secrets or stand for one (a hash that can be searched).
SECRET_FIELDS = frozenset({
    "pin", "pin_hash", "new_pin", "new_pin_hash",
    "password", "password_hash",
    "token", "token_hash",
    "secret", "salt", "private_key", "signing_key", "key_material",
})
#: Endings that make any field name secret (``old_pin_hash``, ``device_token``...).
SECRET_SUFFIXES = ("_pin", "_pin_hash", "_password", "_password_hash", "_token", "_token_hash", "_secret",
                   "_private_key")


def is_secret(name: str) -> bool:
    """Whether a field called ``name`` holds a secret."""
    lowered = name.lower()
    return lowered in SECRET_FIELDS or lowered.endswith(SECRET_SUFFIXES)


def redacted(value: Any) -> Any:
    """A copy of the JSON-able ``value`` without any secret field, at any depth."""
    if isinstance(value, Mapping):
        return {key: redacted(item) for key, item in value.items() if not (isinstance(key, str) and is_secret(key))}
    if isinstance(value, (list, tuple)):
        return [redacted(item) for item in value]
    return value


def record_json(record: Record) -> dict[str, Any]:
    """A committed record as screens see it: its number, time, type and redacted payload."""
    return {"seq": record.seq, "time_ms": record.time_ms, "type": record.type, "payload": redacted(record.payload)}

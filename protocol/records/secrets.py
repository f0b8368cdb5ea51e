"""Which fields of a record are secrets, by declaration and by name, and which a payload still holds.

Two rules, both checked on field names, never on values:

* a record type declares its secret fields (:func:`protocol.records.base.secret`): a PIN's
  hash, a terminal token's hash;
* any field named like a secret (:data:`SECRET_FIELDS`, or ending in one of
  :data:`SECRET_SUFFIXES`), at any depth, is one too: a secret under a name of its own
  (``device_token``) in a free-form payload is caught as well.

The nonces a record seals its secrets with (``sealed``) are secret too: with a
commitment, they would let a short secret be searched.  In a record's sealed form
(:func:`protocol.chain.sealed_form`) every secret is its commitment
(``{"commitment": "<64 hex>"}``) and there is no ``sealed``: :func:`secrets_held` of a
sealed form is empty.  The hall's screens drop every such field
(``hall_server/web/redaction.py``); the regulator's receiver refuses a record that
holds one.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from protocol.chain import SEALED_KEY, is_commitment
from protocol.records.base import REGISTRY, secret_keys

#: Field names whose values are secrets or stand for one (a hash that can be searched).
SECRET_FIELDS = frozenset({
    "pin", "pin_hash", "new_pin", "new_pin_hash",
    "password", "password_hash",
    "token", "token_hash",
    "secret", "salt", "private_key", "signing_key", "key_material",
    SEALED_KEY,
})
#: Endings that make any field name secret (``old_pin_hash``, ``device_token``...).
SECRET_SUFFIXES = ("_pin", "_pin_hash", "_password", "_password_hash", "_token", "_token_hash", "_secret",
                   "_private_key")


@functools.lru_cache(maxsize=4096)
def is_secret(name: str) -> bool:
    """Whether a field called ``name`` holds a secret (asked of every key of every record shown)."""
    lowered = name.lower()
    return lowered in SECRET_FIELDS or lowered.endswith(SECRET_SUFFIXES)


def secrets_held(type: str, payload: Mapping[str, Any]) -> list[str]:
    """The fields of a ``type`` record's ``payload`` that hold a secret rather than its commitment
    (their paths, ``people[2].token``), in order; empty for a sealed form or a record without secrets."""
    declared = secret_keys(REGISTRY[type]) if type in REGISTRY else ()
    held = [key for key in declared if key in payload and not is_commitment(payload[key])]
    held += [path for path in _named(payload, "") if path not in held]
    return held


def _named(value: Any, at: str) -> list[str]:
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{at}.{key}" if at else str(key)
            if isinstance(key, str) and is_secret(key):
                if not is_commitment(item):
                    found.append(path)
            else:
                found += _named(item, path)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found += _named(item, f"{at}[{index}]")
    return found

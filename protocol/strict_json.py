"""JSON read as the wire formats require: an object that names a key twice is refused.

Parsers disagree on such an object (Python's keeps the last member, others the first), so
a value checked by one reader could be carried out differently by another; every
message a server reads from outside is read with :func:`loads`.
"""

from __future__ import annotations

import json
from typing import Any


class NamedTwice(ValueError):
    """An object of the text names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is named twice in one object")
        self.key = key


def _one_of_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise NamedTwice(key)
        found[key] = value
    return found


#: The one decoder (``json.loads`` with a hook would make one for each call: half its time on a message).
_DECODER = json.JSONDecoder(object_pairs_hook=_one_of_each)


def loads(text: str | bytes) -> Any:
    """:func:`json.loads`, refusing an object that names a key twice (:class:`NamedTwice`, a ``ValueError``).

    Text is read as ``json.loads`` reads it: bytes in the encoding their first bytes show,
    a byte order mark refused."""
    if isinstance(text, str):
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    elif isinstance(text, (bytes, bytearray)):
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    else:
        raise TypeError(f"the JSON object must be str, bytes or bytearray, not {text.__class__.__name__}")
    return _DECODER.decode(text)

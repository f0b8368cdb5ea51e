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
    """:func:`json.loads`, refusing an object that names a key twice (:class:`NamedTwice`, a ``ValueError``)."""
    if isinstance(text, str) and not text.startswith("\ufeff"):
        return _DECODER.decode(text)
    return json.loads(text, object_pairs_hook=_one_of_each)  # bytes, and what it refuses, as it does


def surrogate_free_at_sight(text: str | bytes) -> bool:
    """Whether what ``text`` reads as is seen to hold no lone surrogate without a walk of its values:
    it is ASCII with no ``\\u`` escape (a lone surrogate needs one, or a character beyond ASCII)
    and, as bytes, holds no NUL (UTF-16 and UTF-32, which :func:`loads` reads too, set an
    escape's characters apart; UTF-8 JSON holds no NUL byte)."""
    if isinstance(text, str):
        return text.isascii() and "\\u" not in text
    return text.isascii() and b"\\u" not in text and b"\0" not in text

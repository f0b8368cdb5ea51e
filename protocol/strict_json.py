"""JSON read as the wire formats require: an object that names a key twice is refused.

Parsers disagree on such an object (Python's keeps the last member, others the first), so
a value checked by one reader could be carried out differently by another; every
message a server reads from outside is read with :func:`loads`.  Text holding a lone
surrogate (``"\\ud800"``), which ``json`` reads but no journal, hash or screen can encode, is
found by :func:`check_texts` (the command channel, the terminals' and machines' messages)
when :func:`surrogate_free_at_sight` cannot rule it out.
"""

from __future__ import annotations

import json
from typing import Any, Iterator


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


class LoneSurrogate(ValueError):
    """A text of the value holds a lone surrogate (``"\\ud800"``): no journal, hash or screen can encode it."""

    def __init__(self) -> None:
        super().__init__("a text holds a lone surrogate, which is not Unicode")


class TooDeep(ValueError):
    """The value nests arrays and objects deeper than the reader takes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the value nests deeper than {limit} levels")
        self.limit = limit


def check_texts(value: Any, max_depth: int | None = None) -> None:
    """Raise :class:`LoneSurrogate` when a key or a text anywhere in the JSON ``value`` holds a lone
    surrogate, :class:`TooDeep` when it nests deeper than ``max_depth`` (when one is given).

    Iterative, so that checking a deep value cannot itself run out of stack.  A reader calls it
    only when :func:`surrogate_free_at_sight` cannot tell (most messages need no walk).
    """
    for text in _texts(value, max_depth):
        try:
            text.encode()
        except UnicodeEncodeError:
            raise LoneSurrogate() from None


def _texts(value: Any, max_depth: int | None) -> Iterator[str]:
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            if max_depth is not None and depth > max_depth:
                raise TooDeep(max_depth)
            items = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            pending.extend((inner, depth + 1) for inner in items)
        elif isinstance(item, str):
            yield item

"""How a refusal names a JSON value it was given: for the one-line errors of the input parsers.

``describe(value)`` says what kind of value came (``null``, ``true``, ``an array``, the
string or the non-integer number itself), so a message like "must be a JSON integer,
got the string "7"" tells the person which field to fix and how.
"""

from __future__ import annotations

import json
from typing import Any


def quoted(text: str, limit: int | None = None) -> str:
    """``text`` as JSON writes it, cut to ``limit`` characters when given."""
    shown = text if limit is None or len(text) <= limit else text[:limit] + "..."
    return json.dumps(shown)


def describe(value: Any, limit: int | None = None) -> str:
    """A JSON value as a refusal names it; strings are cut to ``limit`` characters when given."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"the non-integer number {value!r}"
    if isinstance(value, str):
        return f"the string {quoted(value, limit)}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return repr(value)

"""Messages written as compact JSON text for the wire: terminals, machines, consoles.

:func:`compact` is orjson's text (no spaces, the keys in their order, text in UTF-8 rather
than ``\\u`` escapes): a video bingo play's answer in about a tenth of the time
``json.dumps`` takes, which the hall's reactor spent on every answer.  What orjson does not
take as ``json`` would (a whole number beyond 64 bits) is written by ``json``; what ``json``
refuses (a dataclass, a date, a set) is refused.  A key that is not text is written as
``json`` writes it (``1`` as ``"1"``).  A reader (``protocol.strict_json``, a browser's
``JSON.parse``) reads the same values either way.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: orjson's options to refuse what ``json`` refuses (a dataclass, a date) rather than write it in
#: orjson's own form: each use of orjson for ``json``'s text starts from them.
AS_JSON_REFUSES = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

#: Keys that are not text written as text, as ``json`` writes them.
_OPTIONS = orjson.OPT_NON_STR_KEYS | AS_JSON_REFUSES


def compact(value: Any) -> str:
    """``value`` as compact JSON text (see the module)."""
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":"))

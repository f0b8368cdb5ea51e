"""The video bingo paytable (FORMATS.md section 4, ``bingo-vb-paytable/1``).

:func:`load_paytable` takes the file's bytes and returns a :class:`Paytable`, or raises
:class:`~protocol.videobingo.errors.PaytableError` whose message starts with the field
at fault (``pool``, ``patterns[2].cells[1]``) or ``(file)`` when the text is not a JSON
object at all, and stays on one line whatever the input holds.

Rules of the format: ``pool`` 20..99, ``balls`` 1..``pool``-1, ``rows`` and ``columns``
1..9, ``cards_max`` 1..12, each pattern a non-empty set of distinct cells inside the
grid with ``pays`` a JSON integer >= 1, pattern names unique, no two patterns with the
same cells.  Where the format is silent this module decides as ``docs/video-bingo.md``
records: every key is required and unknown or repeated keys are refused; a card must
fit in the pool (``rows * columns <= pool``); ``min_rtp_bp`` is 0..10000; ``patterns``
holds at least one pattern; names (of the paytable and of each pattern) are 1..64
characters with no control character; the file is at most :data:`MAX_PAYTABLE_BYTES`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NoReturn

from protocol.json_values import describe, quoted
from protocol.videobingo.errors import PaytableError

FORMAT = "bingo-vb-paytable/1"

POOL_MIN, POOL_MAX = 20, 99
GRID_MIN, GRID_MAX = 1, 9
CARDS_MAX_MIN, CARDS_MAX_MAX = 1, 12
MIN_RTP_BP_MAX = 10000  # basis points of the stake: 10000 is a return of 100%
NAME_MAX = 64
#: The largest paytable file accepted; far above any real paytable (a 9 x 9 card with
#: a thousand full-card-sized patterns is about half of it).
MAX_PAYTABLE_BYTES = 1 << 20

_KEYS = ("format", "name", "pool", "balls", "rows", "columns", "cards_max", "min_rtp_bp", "patterns")
_PATTERN_KEYS = ("name", "cells", "pays")

Cell = tuple[int, int]


@dataclass(frozen=True)
class Pattern:
    """A winning combination: its cells (``(row, column)``, 0-based) and the credits it pays.

    ``mask`` has bit ``row * columns + column`` set for each cell: the card's cells are
    numbered row by row.
    """

    name: str
    cells: tuple[Cell, ...]
    pays: int
    mask: int


@dataclass(frozen=True)
class Paytable:
    """A validated paytable; ``patterns`` keep the file's order."""

    name: str
    pool: int
    balls: int
    rows: int
    columns: int
    cards_max: int
    min_rtp_bp: int
    patterns: tuple[Pattern, ...]

    @property
    def cells(self) -> int:
        """The numbers on one card: ``rows * columns``."""
        return self.rows * self.columns

    @property
    def priority(self) -> tuple[int, ...]:
        """Pattern indices from the one paid first: highest ``pays``, ties to the one listed first."""
        return tuple(sorted(range(len(self.patterns)), key=lambda i: (-self.patterns[i].pays, i)))


# --- Where a fault is -------------------------------------------------------------


def _fail(path: str, message: str) -> NoReturn:
    # One line on stderr whatever the input holds: newlines are shown escaped.
    text = f"{path}: {message}"
    raise PaytableError(text.replace("\n", "\\n").replace("\r", "\\r"))


#: How much of a string a refusal quotes.
QUOTED = 40


def _describe(value: Any) -> str:
    return describe(value, QUOTED)


def _quoted(text: str) -> str:
    return quoted(text, QUOTED)


def _integer(value: Any, path: str, lo: int, hi: int | None = None) -> int:
    # bool is a subclass of int in Python; JSON true/false are not integers.
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(path, f"must be a JSON integer, got {_describe(value)}")
    if value < lo:
        _fail(path, f"must be at least {lo}, got {value}")
    if hi is not None and value > hi:
        _fail(path, f"must be at most {hi}, got {value}")
    return value


def _name(value: Any, path: str) -> str:
    if not isinstance(value, str):
        _fail(path, f"must be a string, got {_describe(value)}")
    if not 1 <= len(value) <= NAME_MAX:
        _fail(path, f"must be 1 to {NAME_MAX} characters long, got {len(value)}")
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in value):
        _fail(path, f"must not hold control characters, got {_quoted(value)}")
    return value


def _keys(value: Any, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, f"must be an object, got {_describe(value)}")
    prefix = f"{path}." if path != "(file)" else ""
    for key in keys:
        if key not in value:
            _fail(f"{prefix}{key}", "is missing")
    for key in value:
        if key not in keys:
            _fail(f"{prefix}{key}", "is not a key of this format (misspelt?)")
    return value


# --- The paytable -----------------------------------------------------------------


def _cells(value: Any, path: str, rows: int, columns: int) -> tuple[Cell, ...]:
    if not isinstance(value, list):
        _fail(path, f"must be an array of [row, column] cells, got {_describe(value)}")
    if not value:
        _fail(path, "a pattern needs at least one cell")
    cells: list[Cell] = []
    seen: dict[Cell, int] = {}
    for i, entry in enumerate(value):
        at = f"{path}[{i}]"
        if not isinstance(entry, list):
            _fail(at, f"must be a [row, column] pair, got {_describe(entry)}")
        if len(entry) != 2:
            _fail(at, f"must be a [row, column] pair, got an array of {len(entry)} items")
        row = _integer(entry[0], f"{at}[0]", 0)
        column = _integer(entry[1], f"{at}[1]", 0)
        if row >= rows or column >= columns:
            _fail(at, f"[{row}, {column}] is outside the {rows} x {columns} grid (rows 0-{rows - 1}, columns 0-{columns - 1})")
        if (row, column) in seen:
            _fail(at, f"[{row}, {column}] is already {path}[{seen[row, column]}]")
        seen[row, column] = i
        cells.append((row, column))
    return tuple(cells)


def _pattern(value: Any, index: int, rows: int, columns: int) -> Pattern:
    path = f"patterns[{index}]"
    data = _keys(value, path, _PATTERN_KEYS)
    name = _name(data["name"], f"{path}.name")
    cells = _cells(data["cells"], f"{path}.cells", rows, columns)
    pays = _integer(data["pays"], f"{path}.pays", 1)
    mask = 0
    for row, column in cells:
        mask |= 1 << (row * columns + column)
    return Pattern(name, cells, pays, mask)


def parse_paytable(data: Any) -> Paytable:
    """Validate decoded JSON against the format; :class:`PaytableError` names the first fault."""
    if not isinstance(data, dict):
        _fail("(file)", f"must be a JSON object, got {_describe(data)}")
    if "format" in data and data["format"] != FORMAT:
        _fail("format", f"must be {json.dumps(FORMAT)}, got {_describe(data['format'])}")
    data = _keys(data, "(file)", _KEYS)
    name = _name(data["name"], "name")
    pool = _integer(data["pool"], "pool", POOL_MIN, POOL_MAX)
    balls = _integer(data["balls"], "balls", 1, pool - 1)
    rows = _integer(data["rows"], "rows", GRID_MIN, GRID_MAX)
    columns = _integer(data["columns"], "columns", GRID_MIN, GRID_MAX)
    if rows * columns > pool:
        _fail(
            "columns",
            f"a {rows} x {columns} card holds {rows * columns} distinct numbers, "
            f"more than the pool of {pool}",
        )
    cards_max = _integer(data["cards_max"], "cards_max", CARDS_MAX_MIN, CARDS_MAX_MAX)
    min_rtp_bp = _integer(data["min_rtp_bp"], "min_rtp_bp", 0, MIN_RTP_BP_MAX)
    entries = data["patterns"]
    if not isinstance(entries, list):
        _fail("patterns", f"must be an array, got {_describe(entries)}")
    if not entries:
        _fail("patterns", "a paytable needs at least one pattern")
    patterns: list[Pattern] = []
    names: dict[str, int] = {}
    masks: dict[int, int] = {}
    for index, entry in enumerate(entries):
        pattern = _pattern(entry, index, rows, columns)
        if pattern.name in names:
            _fail(
                f"patterns[{index}].name",
                f"{_quoted(pattern.name)} is already the name of patterns[{names[pattern.name]}]",
            )
        if pattern.mask in masks:
            first = masks[pattern.mask]
            _fail(
                f"patterns[{index}].cells",
                f"the same cells as patterns[{first}] ({_quoted(patterns[first].name)})",
            )
        names[pattern.name] = index
        masks[pattern.mask] = index
        patterns.append(pattern)
    return Paytable(name, pool, balls, rows, columns, cards_max, min_rtp_bp, tuple(patterns))


def _refuse_constant(name: str) -> NoReturn:
    _fail("(file)", f"{name} is not a JSON number")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            _fail("(file)", f"the key {_quoted(key)} appears twice in one object")
        result[key] = value
    return result


def load_paytable(raw: bytes | str) -> Paytable:
    """Decode and validate a paytable file's text."""
    if len(raw) > MAX_PAYTABLE_BYTES:
        _fail("(file)", f"is larger than {MAX_PAYTABLE_BYTES} bytes; a paytable is far smaller")
    try:
        data = json.loads(raw, parse_constant=_refuse_constant, object_pairs_hook=_no_repeated_keys)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        _fail("(file)", f"not valid JSON: {error}")
    except (RecursionError, ValueError) as error:
        # Nesting too deep, or an integer too long to convert: not a paytable either way.
        _fail("(file)", f"not a usable JSON document: {error}")
    return parse_paytable(data)

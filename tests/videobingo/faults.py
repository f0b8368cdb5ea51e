"""One paytable fault of each kind, with the field the error must name.

Each fault is applied to a valid paytable (the classic 3 x 5 example) and has the
start of the one-line message: the field's path, a colon, and words of the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from tests.videobingo.paytables import example_data

Edit = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Fault:
    id: str
    edit: Edit
    message: str  # the error message starts with this

    def text(self) -> str:
        data = example_data("vb-classic-3x5")
        self.edit(data)
        return json.dumps(data)


def set_(key: str, value: Any) -> Edit:
    return lambda data: data.__setitem__(key, value)


def drop(key: str) -> Edit:
    return lambda data: data.pop(key)


def pattern(index: int, key: str, value: Any) -> Edit:
    return lambda data: data["patterns"][index].__setitem__(key, value)


def cell(index: int, position: int, value: Any) -> Edit:
    return lambda data: data["patterns"][index]["cells"].__setitem__(position, value)


def both(*edits: Edit) -> Edit:
    def apply(data: dict[str, Any]) -> None:
        for edit in edits:
            edit(data)

    return apply


FAULTS = [
    Fault("format-missing", drop("format"), "format: is missing"),
    Fault("format-other", set_("format", "bingo-vb-paytable/2"), 'format: must be "bingo-vb-paytable/1", got the string "bingo-vb-paytable/2"'),
    Fault("format-number", set_("format", 1), 'format: must be "bingo-vb-paytable/1", got 1'),
    Fault("unknown-key", set_("colour", "red"), "colour: is not a key of this format"),
    Fault("name-missing", drop("name"), "name: is missing"),
    Fault("name-empty", set_("name", ""), "name: must be 1 to 64 characters long, got 0"),
    Fault("name-too-long", set_("name", "x" * 65), "name: must be 1 to 64 characters long, got 65"),
    Fault("name-number", set_("name", 7), "name: must be a string, got 7"),
    Fault("name-newline", set_("name", "two\nlines"), 'name: must not hold control characters, got "two\\nlines"'),
    Fault("pool-missing", drop("pool"), "pool: is missing"),
    Fault("pool-below-20", set_("pool", 19), "pool: must be at least 20, got 19"),
    Fault("pool-above-99", set_("pool", 100), "pool: must be at most 99, got 100"),
    Fault("pool-string", set_("pool", "60"), 'pool: must be a JSON integer, got the string "60"'),
    Fault("pool-float", set_("pool", 60.0), "pool: must be a JSON integer, got the non-integer number 60.0"),
    Fault("pool-exponent", set_("pool", 6e1), "pool: must be a JSON integer, got the non-integer number 60.0"),
    Fault("pool-bool", set_("pool", True), "pool: must be a JSON integer, got true"),
    Fault("pool-null", set_("pool", None), "pool: must be a JSON integer, got null"),
    Fault("balls-zero", set_("balls", 0), "balls: must be at least 1, got 0"),
    Fault("balls-whole-pool", set_("balls", 60), "balls: must be at most 59, got 60"),
    Fault("balls-float", set_("balls", 30.5), "balls: must be a JSON integer, got the non-integer number 30.5"),
    Fault("rows-zero", set_("rows", 0), "rows: must be at least 1, got 0"),
    Fault("rows-ten", set_("rows", 10), "rows: must be at most 9, got 10"),
    Fault("rows-bool", set_("rows", False), "rows: must be a JSON integer, got false"),
    Fault("columns-zero", set_("columns", 0), "columns: must be at least 1, got 0"),
    Fault("columns-ten", set_("columns", 10), "columns: must be at most 9, got 10"),
    Fault(
        "card-larger-than-pool",
        both(set_("pool", 20), set_("balls", 10), set_("rows", 5), set_("columns", 5)),
        "columns: a 5 x 5 card holds 25 distinct numbers, more than the pool of 20",
    ),
    Fault("cards-max-zero", set_("cards_max", 0), "cards_max: must be at least 1, got 0"),
    Fault("cards-max-13", set_("cards_max", 13), "cards_max: must be at most 12, got 13"),
    Fault("cards-max-string", set_("cards_max", "4"), 'cards_max: must be a JSON integer, got the string "4"'),
    Fault("min-rtp-negative", set_("min_rtp_bp", -1), "min_rtp_bp: must be at least 0, got -1"),
    Fault("min-rtp-above-100pct", set_("min_rtp_bp", 10001), "min_rtp_bp: must be at most 10000, got 10001"),
    Fault("min-rtp-float", set_("min_rtp_bp", 80.0), "min_rtp_bp: must be a JSON integer, got the non-integer number 80.0"),
    Fault("min-rtp-bool", set_("min_rtp_bp", True), "min_rtp_bp: must be a JSON integer, got true"),
    Fault("patterns-missing", drop("patterns"), "patterns: is missing"),
    Fault("patterns-object", set_("patterns", {}), "patterns: must be an array, got an object"),
    Fault("patterns-empty", set_("patterns", []), "patterns: a paytable needs at least one pattern"),
    Fault("pattern-not-object", lambda d: d["patterns"].__setitem__(2, [[0, 0]]), "patterns[2]: must be an object, got an array"),
    Fault("pattern-name-missing", lambda d: d["patterns"][1].pop("name"), "patterns[1].name: is missing"),
    Fault("pattern-cells-missing", lambda d: d["patterns"][1].pop("cells"), "patterns[1].cells: is missing"),
    Fault("pattern-pays-missing", lambda d: d["patterns"][1].pop("pays"), "patterns[1].pays: is missing"),
    Fault("pattern-unknown-key", pattern(3, "prize", 5), "patterns[3].prize: is not a key of this format"),
    Fault("pattern-name-empty", pattern(0, "name", ""), "patterns[0].name: must be 1 to 64 characters long, got 0"),
    Fault("pattern-name-repeated", pattern(8, "name", "top line"), 'patterns[8].name: "top line" is already the name of patterns[7]'),
    Fault("cells-not-array", pattern(4, "cells", "all"), 'patterns[4].cells: must be an array of [row, column] cells, got the string "all"'),
    Fault("cells-empty", pattern(4, "cells", []), "patterns[4].cells: a pattern needs at least one cell"),
    Fault("cell-not-pair", cell(6, 2, [1]), "patterns[6].cells[2]: must be a [row, column] pair, got an array of 1 items"),
    Fault("cell-triple", cell(6, 2, [1, 1, 1]), "patterns[6].cells[2]: must be a [row, column] pair, got an array of 3 items"),
    Fault("cell-object", cell(6, 2, {"row": 1}), "patterns[6].cells[2]: must be a [row, column] pair, got an object"),
    Fault("cell-row-string", cell(6, 2, ["2", 2]), 'patterns[6].cells[2][0]: must be a JSON integer, got the string "2"'),
    Fault("cell-column-float", cell(6, 2, [2, 2.0]), "patterns[6].cells[2][1]: must be a JSON integer, got the non-integer number 2.0"),
    Fault("cell-row-bool", cell(6, 2, [True, 2]), "patterns[6].cells[2][0]: must be a JSON integer, got true"),
    Fault("cell-negative", cell(6, 2, [-1, 2]), "patterns[6].cells[2][0]: must be at least 0, got -1"),
    Fault("cell-row-outside", cell(6, 2, [3, 2]), "patterns[6].cells[2]: [3, 2] is outside the 3 x 5 grid"),
    Fault("cell-column-outside", cell(6, 2, [2, 5]), "patterns[6].cells[2]: [2, 5] is outside the 3 x 5 grid"),
    Fault("cell-repeated", cell(6, 2, [0, 0]), "patterns[6].cells[2]: [0, 0] is already patterns[6].cells[0]"),
    Fault("pays-zero", pattern(10, "pays", 0), "patterns[10].pays: must be at least 1, got 0"),
    Fault("pays-negative", pattern(10, "pays", -3), "patterns[10].pays: must be at least 1, got -3"),
    Fault("pays-float", pattern(10, "pays", 1.5), "patterns[10].pays: must be a JSON integer, got the non-integer number 1.5"),
    Fault("pays-whole-float", pattern(10, "pays", 2.0), "patterns[10].pays: must be a JSON integer, got the non-integer number 2.0"),
    Fault("pays-exponent", pattern(10, "pays", 1e3), "patterns[10].pays: must be a JSON integer, got the non-integer number 1000.0"),
    Fault("pays-bool", pattern(10, "pays", True), "patterns[10].pays: must be a JSON integer, got true"),
    Fault("pays-string", pattern(10, "pays", "2"), 'patterns[10].pays: must be a JSON integer, got the string "2"'),
    Fault("pays-null", pattern(10, "pays", None), "patterns[10].pays: must be a JSON integer, got null"),
    Fault(
        "same-cells-other-order",
        pattern(9, "cells", [[0, 4], [0, 3], [0, 2], [0, 1], [0, 0]]),
        'patterns[9].cells: the same cells as patterns[7] ("top line")',
    ),
]

#: Texts that are not a paytable object at all, and the start of their message.
RAW_FAULTS = [
    ("empty", b"", "(file): not valid JSON: Expecting value"),
    ("not-json", b"pool = 60", "(file): not valid JSON: Expecting value"),
    ("truncated", b'{"format": "bingo-vb-paytable/1", ', "(file): not valid JSON"),
    ("array", b"[1, 2]", "(file): must be a JSON object, got an array"),
    ("string", b'"paytable"', '(file): must be a JSON object, got the string "paytable"'),
    ("not-utf8", b'{"name": "\xff"}', "(file): not valid JSON"),
    ("nan", b'{"format": "bingo-vb-paytable/1", "pool": NaN}', "(file): NaN is not a JSON number"),
    ("infinity", b'{"pool": -Infinity}', "(file): -Infinity is not a JSON number"),
    ("repeated-key", b'{"pool": 60, "pool": 61}', '(file): the key "pool" appears twice in one object'),
    ("huge-integer", b'{"pool": ' + b"9" * 5000 + b"}", "(file): not a usable JSON document"),
    ("too-deep", b"[" * 100_000 + b"]" * 100_000, "(file): not a usable JSON document"),
    ("too-large", b" " * (1 << 20) + b"{}", "(file): is larger than 1048576 bytes"),
]

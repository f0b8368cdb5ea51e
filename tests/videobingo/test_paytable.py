"""The paytable of FORMATS.md section 4: what is accepted, and every fault named by its field."""

from __future__ import annotations

import json

import pytest

from protocol.videobingo.errors import PaytableError, VideoBingoError
from protocol.videobingo.paytable import Pattern, load_paytable
from protocol.errors import DomainError
from tests.videobingo.faults import FAULTS, RAW_FAULTS
from tests.videobingo.paytables import example, example_data


def test_the_formats_example_loads_with_every_field() -> None:
    """The example of FORMATS.md section 4, as written there, is a valid paytable."""
    table = example("vb-formats-example")
    assert (table.name, table.pool, table.balls, table.rows, table.columns) == ("classic-30", 60, 30, 3, 5)
    assert (table.cards_max, table.min_rtp_bp, table.cells) == (4, 8000, 15)
    bingo, top_line = table.patterns
    assert bingo == Pattern("bingo", tuple((r, c) for r in range(3) for c in range(5)), 1500, (1 << 15) - 1)
    assert top_line == Pattern("top line", tuple((0, c) for c in range(5)), 3, 0b11111)


def test_cell_masks_number_the_cells_row_by_row() -> None:
    data = example_data("vb-classic-3x5")
    data["patterns"] = [{"name": "odd", "cells": [[2, 4], [1, 0]], "pays": 1}]
    (pattern,) = load_paytable(json.dumps(data)).patterns
    assert pattern.cells == ((2, 4), (1, 0))  # the file's order is kept
    assert pattern.mask == 1 << 14 | 1 << 5


def test_priority_is_highest_pays_then_the_pattern_listed_first() -> None:
    data = example_data("vb-classic-3x5")
    data["patterns"] = [
        {"name": "a", "cells": [[0, 0]], "pays": 2},
        {"name": "b", "cells": [[0, 1]], "pays": 5},
        {"name": "c", "cells": [[0, 2]], "pays": 2},
        {"name": "d", "cells": [[0, 3]], "pays": 5},
    ]
    assert load_paytable(json.dumps(data)).priority == (1, 3, 0, 2)


@pytest.mark.parametrize(
    "edit",
    [
        {"pool": 20, "balls": 1, "rows": 4, "columns": 5},  # the card fills the pool
        {"pool": 99, "balls": 98, "rows": 9, "columns": 9, "cards_max": 12},
        {"rows": 1, "columns": 1, "cards_max": 1, "min_rtp_bp": 0},
        {"min_rtp_bp": 10000},
        {"name": "línea ñ ☆"},  # any printable text
    ],
    ids=["smallest-pool", "largest-everything", "one-cell", "min-100pct", "unicode-name"],
)
def test_the_limits_of_every_range_are_accepted(edit: dict) -> None:
    data = example_data("vb-classic-3x5")
    data.update(edit)
    data["patterns"] = [{"name": "corner", "cells": [[0, 0]], "pays": 1}]
    table = load_paytable(json.dumps(data))
    for key, value in edit.items():
        assert getattr(table, key) == value


def test_pays_is_any_json_integer_from_1_up() -> None:
    """``pays`` has no upper bound in the format; a huge one is kept exactly."""
    data = example_data("vb-classic-3x5")
    data["patterns"][0]["pays"] = 10**60
    data["patterns"][10]["pays"] = 1
    table = load_paytable(json.dumps(data))
    assert (table.patterns[0].pays, table.patterns[10].pays) == (10**60, 1)


def test_a_pattern_may_need_more_balls_than_are_drawn() -> None:
    """It can never be paid (its probability is 0), but the format does not forbid it."""
    data = example_data("vb-classic-3x5")
    data["balls"] = 10
    assert load_paytable(json.dumps(data)).patterns[0].name == "bingo"


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.id)
def test_each_fault_is_refused_naming_its_field(fault) -> None:
    with pytest.raises(PaytableError) as caught:
        load_paytable(fault.text())
    message = str(caught.value)
    assert message.startswith(fault.message), message
    assert "\n" not in message


@pytest.mark.parametrize(("raw", "message"), [f[1:] for f in RAW_FAULTS], ids=[f[0] for f in RAW_FAULTS])
def test_a_text_that_is_no_paytable_object_is_refused_as_the_file(raw: bytes, message: str) -> None:
    with pytest.raises(PaytableError) as caught:
        load_paytable(raw)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)


def test_paytable_errors_belong_to_the_one_hierarchy() -> None:
    assert issubclass(PaytableError, VideoBingoError)
    assert issubclass(VideoBingoError, DomainError)

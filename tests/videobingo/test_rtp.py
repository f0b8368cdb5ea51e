"""The exact return of FORMATS.md section 4, against independent brute forces.

Two references that share no code with :mod:`protocol.videobingo.rtp`:

* :func:`brute_force` - every draw of ``balls`` of a small ``pool`` enumerated, the card
  holding the numbers 1..n, its paid pattern found by the format's rule in plain
  Python, the outcomes counted exactly;
* :func:`formats_formula` - the format's sum over every subset ``T`` of the card's
  ``n`` cells of ``best_pays(T) * C(pool - n, balls - |T|) / C(pool, balls)``, literally.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.videobingo.errors import PaytableError
from protocol.videobingo.paytable import Paytable
from protocol.videobingo.rtp import (
    CELL_STATES_MAX,
    ExactReturn,
    exact_return,
    paid_counts,
)
from tests.videobingo.paytables import EXAMPLE_NAMES, column, example, grid, paytable, row


def paid_index(table: Paytable, drawn_cells: set[tuple[int, int]]) -> int | None:
    """The format's rule: the highest ``pays`` among complete patterns, ties to the first listed."""
    best = None
    for index, pattern in enumerate(table.patterns):
        if all(cell in drawn_cells for cell in pattern.cells):
            if best is None or pattern.pays > table.patterns[best].pays:
                best = index
    return best


def brute_force(table: Paytable) -> tuple[Fraction, list[Fraction]]:
    """Every draw of the pool enumerated: exact RTP and per-pattern probabilities."""
    number_of = {(r, c): r * table.columns + c + 1 for r in range(table.rows) for c in range(table.columns)}
    counts = [0] * len(table.patterns)
    draws = 0
    for draw in itertools.combinations(range(1, table.pool + 1), table.balls):
        drawn = set(draw)
        draws += 1
        paid = paid_index(table, {cell for cell, n in number_of.items() if n in drawn})
        if paid is not None:
            counts[paid] += 1
    probabilities = [Fraction(c, draws) for c in counts]
    return sum(p.pays * q for p, q in zip(table.patterns, probabilities)), probabilities


def formats_formula(table: Paytable) -> Fraction:
    """``sum over T of best_pays(T) * C(pool - n, balls - |T|) / C(pool, balls)``, as written."""
    cells = [(r, c) for r in range(table.rows) for c in range(table.columns)]
    n = len(cells)
    total = Fraction(0)
    for size in range(n + 1):
        if not 0 <= table.balls - size <= table.pool - n:
            continue
        weight = Fraction(comb(table.pool - n, table.balls - size), comb(table.pool, table.balls))
        for chosen in itertools.combinations(cells, size):
            paid = paid_index(table, set(chosen))
            if paid is not None:
                total += table.patterns[paid].pays * weight
    return total


def assert_matches_brute_force(table: Paytable) -> None:
    rtp, probabilities = brute_force(table)
    for method in ("subsets", "cells"):
        result = exact_return(table, method)
        assert result.rtp == rtp, method
        assert list(result.probabilities) == probabilities, method
    assert formats_formula(table) == rtp


# Small cards whose every draw can be enumerated: grids, pools, ball counts, ties
# (equal pays: the first listed wins), overlaps, supersets that pay less than their
# subset (never paid), patterns larger than the draw (never paid).
SMALL = {
    "2x2-ties-and-overlaps": paytable(
        [
            ("full", grid(2, 2), 10),
            ("top row", row(0, 2), 2),
            ("left column", column(0, 2), 2),
            ("diagonal", [(0, 0), (1, 1)], 2),
            ("corner", [(1, 1)], 1),
        ],
        rows=2, columns=2, pool=8, balls=4,
    ),
    "1x3-single-cells-all-tied": paytable(
        [("a", [(0, 0)], 3), ("b", [(0, 1)], 3), ("c", [(0, 2)], 3)],
        rows=1, columns=3, pool=6, balls=2,
    ),
    "3x3-lines-columns-diagonals": paytable(
        [("full", grid(3, 3), 50)]
        + [(f"row {r}", row(r, 3), 4) for r in range(3)]
        + [(f"column {c}", column(c, 3), 4) for c in range(3)]
        + [("diagonal", [(0, 0), (1, 1), (2, 2)], 6), ("anti-diagonal", [(0, 2), (1, 1), (2, 0)], 6)]
        + [("centre", [(1, 1)], 1)],
        rows=3, columns=3, pool=12, balls=6,
    ),
    "2x3-almost-every-ball": paytable(
        [("full", grid(2, 3), 3), ("top", row(0, 3), 2), ("bottom", row(1, 3), 2)],
        rows=2, columns=3, pool=10, balls=9,
    ),
    "superset-paying-less-is-never-paid": paytable(
        [("small", [(0, 0), (0, 1)], 9), ("big", [(0, 0), (0, 1), (1, 0)], 4), ("other", [(1, 1)], 1)],
        rows=2, columns=2, pool=9, balls=5,
    ),
    "pattern-larger-than-the-draw": paytable(
        [("full", grid(2, 3), 100), ("pair", [(0, 0), (1, 2)], 2)],
        rows=2, columns=3, pool=11, balls=4,
    ),
    "cells-off-every-pattern": paytable(
        [("left", column(0, 3), 5), ("dot", [(2, 0)], 1)],
        rows=3, columns=3, pool=11, balls=5,
    ),
    "one-cell-card": paytable([("it", [(0, 0)], 7)], rows=1, columns=1, pool=5, balls=2),
    "3x5-card-pool-20": paytable(
        [("bingo", grid(3, 5), 500)]
        + [(f"line {r}", row(r, 5), 3) for r in range(3)]
        + [("corners", [(0, 0), (0, 4), (2, 0), (2, 4)], 3), ("X", [(0, 0), (1, 2), (2, 4), (0, 4), (2, 0)], 8)],
        rows=3, columns=5, pool=20, balls=8,
    ),
}


@pytest.mark.req("R2.2.b")
@pytest.mark.parametrize("name", SMALL)
def test_the_exact_return_equals_every_draw_enumerated(name: str) -> None:
    """Both methods give the brute force's RTP and probabilities, and the format's formula."""
    assert_matches_brute_force(SMALL[name])


def test_ties_go_to_the_pattern_listed_first() -> None:
    """``a`` and ``b`` pay the same and overlap: a card completing both is paid ``a``."""
    table = paytable(
        [("a", [(0, 0), (0, 1)], 5), ("b", [(0, 1), (0, 2)], 5)], rows=1, columns=3, pool=3, balls=2
    )
    # Draws of 2 from 3: {1,2} completes a, {2,3} completes b, {1,3} neither.
    assert exact_return(table).probabilities == (Fraction(1, 3), Fraction(1, 3))
    swapped = paytable(
        [("a", [(0, 0), (0, 1), (0, 2)], 5), ("b", [(0, 1), (0, 2)], 5)], rows=1, columns=3, pool=4, balls=3
    )
    # a is complete only with b; listed first, it takes the tie: 1 draw of 4 for a, 1 for b alone.
    assert exact_return(swapped).probabilities == (Fraction(1, 4), Fraction(1, 4))


@st.composite
def small_paytables(draw: st.DrawFn) -> Paytable:
    rows = draw(st.integers(1, 3))
    columns = draw(st.integers(1, 3))
    cells = grid(rows, columns)
    masks = draw(
        st.lists(st.sets(st.sampled_from(cells), min_size=1), min_size=1, max_size=6, unique_by=frozenset)
    )
    pays = draw(st.lists(st.integers(1, 4), min_size=len(masks), max_size=len(masks)))  # many ties
    pool = draw(st.integers(rows * columns, 10))
    balls = draw(st.integers(1, max(1, pool - 1)))
    patterns = [(f"p{i}", sorted(m), p) for i, (m, p) in enumerate(zip(masks, pays))]
    return paytable(patterns, rows=rows, columns=columns, pool=pool, balls=balls)


@settings(max_examples=150, deadline=None)
@given(small_paytables())
def test_any_small_paytable_matches_the_brute_force(table: Paytable) -> None:
    assert_matches_brute_force(table)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_the_two_methods_agree_and_the_probabilities_sum_to_at_most_one(name: str) -> None:
    table = example(name)
    by_subsets, by_cells = exact_return(table, "subsets"), exact_return(table, "cells")
    assert by_subsets == by_cells
    assert sum(by_subsets.probabilities) <= 1
    assert by_subsets.rtp == sum(p.pays * q for p, q in zip(table.patterns, by_subsets.probabilities))


def test_counts_cover_every_subset_once() -> None:
    """Over the pattern cells, paid + unpaid subsets of each size are C(u, size)."""
    table = example("vb-grand-4x5")
    paid = paid_counts(table)
    assert paid.cells == 20
    for size in range(21):
        assert sum(row_[size] for row_ in paid.counts) <= comb(20, size)
    assert paid.counts[0] == (0,) * 20 + (1,)  # only the whole card is the bingo


def test_the_formats_example_by_hand() -> None:
    """FORMATS's classic-30: bingo = C(45, 15) / C(60, 30); top line = C(55, 25) / C(60, 30) - bingo."""
    result = exact_return(example("vb-formats-example"))
    bingo = Fraction(comb(45, 15), comb(60, 30))
    top_line = Fraction(comb(55, 25), comb(60, 30)) - bingo
    assert result.probabilities == (bingo, top_line)
    assert result.rtp == 1500 * bingo + 3 * top_line
    assert not result.meets_minimum


def big_card(rows: int, columns: int, pool: int, balls: int) -> Paytable:
    cells = grid(rows, columns)
    diagonal = [(i, i) for i in range(min(rows, columns))]
    return paytable(
        [("full", cells, 1000)]
        + [(f"row {r}", row(r, columns), 5) for r in range(rows)]
        + [(f"column {c}", column(c, rows), 5) for c in range(columns)]
        + [("diagonal", diagonal, 7), ("corners", [(0, 0), (0, columns - 1), (rows - 1, 0), (rows - 1, columns - 1)], 2)],
        rows=rows, columns=columns, pool=pool, balls=balls,
    )


def test_a_4x6_card_the_same_both_ways() -> None:
    """24 pattern cells: the most the subsets are enumerated for."""
    table = big_card(4, 6, 75, 40)
    assert exact_return(table, "subsets") == exact_return(table, "cells")


def test_a_9x9_card_is_computed_cell_by_cell() -> None:
    """81 pattern cells are far too many subsets to enumerate; the programme is exact anyway.

    Checked against the full card's and a row's own closed forms.
    """
    assert exact_return(big_card(9, 9, 99, 60)).probabilities[0] == 0  # 60 balls, 81 cells
    table = big_card(9, 9, 99, 90)
    result = exact_return(table)
    assert result.probabilities[0] == Fraction(comb(18, 9), comb(99, 90))
    assert sum(result.probabilities) <= 1
    # With one row only, the card is its row: P(row) = C(pool - 9, balls - 9) / C(pool, balls).
    one_row = paytable([("row", row(0, 9), 5)], rows=9, columns=9, pool=99, balls=50)
    assert exact_return(one_row).probabilities == (Fraction(comb(90, 41), comb(99, 50)),)


def test_patterns_too_entangled_to_certify_are_refused_naming_patterns() -> None:
    """Many overlapping pairs over 81 cells: neither method can, and the error says so."""
    cells = grid(9, 9)
    pairs = [(f"pair {i}", [cells[i], cells[(i * 37 + 11) % 81]], 1 + i % 5) for i in range(81)]
    pairs = [p for p in pairs if p[1][0] != p[1][1]]
    table = paytable(pairs, rows=9, columns=9, pool=99, balls=50)
    with pytest.raises(PaytableError) as caught:
        exact_return(table)
    assert str(caught.value).startswith("patterns: the ")
    assert CELL_STATES_MAX > 0


@pytest.mark.parametrize(
    ("rtp", "percent"),
    [
        (Fraction(1, 32), "3.13"),  # 3.125 exactly: half-up, not half-to-even
        (Fraction(31249, 1000000), "3.12"),
        (Fraction(99995, 1000000), "10.00"),
        (Fraction(1, 20000), "0.01"),
        (Fraction(1, 20001), "0.00"),
        (Fraction(0), "0.00"),
        (Fraction(1), "100.00"),
        (Fraction(15), "1500.00"),
        (Fraction(8229, 10000), "82.29"),
    ],
)
def test_rtp_percent_is_rounded_half_up_to_two_decimals(rtp: Fraction, percent: str) -> None:
    assert ExactReturn(rtp, (), 8000).rtp_percent == percent


@pytest.mark.req("R2.2.b")
@pytest.mark.parametrize(
    ("rtp", "minimum", "meets"),
    [
        (Fraction(8000, 10000), 8000, True),  # exactly the minimum meets it
        (Fraction(79999, 100000), 8000, False),  # rounds to 80.00% but is below
        (Fraction(0), 0, True),
        (Fraction(3, 2), 10000, True),
    ],
)
def test_meets_minimum_compares_the_exact_return(rtp: Fraction, minimum: int, meets: bool) -> None:
    result = ExactReturn(rtp, (), minimum)
    assert result.meets_minimum is meets

"""Claim verification (R85.6, R85.11, R87) and the winning patterns it rests on (R93.11, R94.2)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import Card
from protocol.claims import CardRef, Win, WonPattern, check_claim
from protocol.patterns import (
    BINGO,
    FOUR_CORNERS,
    LINE,
    TWO_LINES,
    CellsPattern,
    GamePatterns,
    PatternError,
    PositionsPattern,
    RowsPattern,
    completion_ball,
    is_satisfied,
    pattern_from_dict,
    pattern_to_dict,
)
from protocol.strips import sample_strips


def strip_cards(seed: int) -> dict[CardRef, Card]:
    """The six cards of a random strip, sold as cards 1-6 of series 1."""
    strip = sample_strips(1, random.Random(seed).randbytes)[0]
    return {CardRef(1, i + 1): Card.from_cells(int(n) for n in strip[i]) for i in range(6)}


def first_count(needed: list[set[int]], rows_needed: int, draw: list[int]) -> int | None:
    """Brute force: the first ball count at which ``rows_needed`` of the sets are drawn."""
    for k in range(1, len(draw) + 1):
        seen = set(draw[:k])
        if sum(s <= seen for s in needed) >= rows_needed:
            return k
    return None


def rows(card: Card) -> list[set[int]]:
    return [set(r) for r in card.rows]


seeds = st.integers(0, 2**32 - 1)
draws = st.permutations(range(1, 91)).flatmap(lambda p: st.integers(0, 90).map(lambda k: list(p[:k])))


@settings(max_examples=30, deadline=None)
@given(seeds, draws)
@pytest.mark.req("R87.a", "R87.b")
def test_patterns_complete_on_the_ball_a_brute_force_finds(seed: int, draw: list[int]) -> None:
    for card in strip_cards(seed).values():
        r = rows(card)
        assert completion_ball(LINE, card, draw) == first_count(r, 1, draw)
        assert completion_ball(TWO_LINES, card, draw) == first_count(r, 2, draw)
        assert completion_ball(BINGO, card, draw) == first_count(r, 3, draw)
        corners = {card.rows[0][0], card.rows[0][4], card.rows[2][0], card.rows[2][4]}
        assert completion_ball(FOUR_CORNERS, card, draw) == first_count([corners], 1, draw)
        assert is_satisfied(LINE, card, draw) == (first_count(r, 1, draw) is not None)


def test_a_cells_pattern_needs_numbers_in_every_cell() -> None:
    card = Card.from_rows([[3, 15, 32, 61, 80], [7, 28, 44, 76, 85], [9, 29, 57, 68, 90]])
    top_left = CellsPattern("top_left", frozenset({0, 1}))  # cells hold 3 and 15
    assert completion_ball(top_left, card, [15, 40, 3]) == 3
    assert completion_ball(top_left, card, [15, 40]) is None
    with_blank = CellsPattern("with_blank", frozenset({0, 2}))  # cell 2 (r1c3) is blank
    assert completion_ball(with_blank, card, list(range(1, 91))) is None


@pytest.mark.req("R94.2", "R93.11")
def test_every_game_plays_the_line_and_the_bingo() -> None:
    assert GamePatterns((LINE, BINGO, FOUR_CORNERS)).names == ("line", "bingo", "four_corners")
    with pytest.raises(PatternError, match="bingo"):
        GamePatterns((LINE, TWO_LINES))
    with pytest.raises(PatternError, match="line"):
        GamePatterns((RowsPattern("line", 2), BINGO))
    with pytest.raises(PatternError, match="share a name"):
        GamePatterns((LINE, BINGO, TWO_LINES, RowsPattern("two_lines", 3)))


@pytest.mark.req("R93.12-13")
def test_the_interconnected_game_is_over_with_a_full_card_or_every_pattern() -> None:
    patterns = GamePatterns((LINE, TWO_LINES, BINGO, FOUR_CORNERS))
    assert not patterns.game_over({"line", "two_lines", "four_corners"})
    assert patterns.game_over({"bingo"})


@pytest.mark.parametrize("pattern", [LINE, BINGO, TWO_LINES, FOUR_CORNERS, CellsPattern("x", frozenset({0, 26}))])
def test_patterns_round_trip_as_configuration(pattern: object) -> None:
    assert pattern_from_dict(pattern_to_dict(pattern)) == pattern  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data",
    [
        {"name": "x"},
        {"name": "x", "rows": 1, "cells": [1]},
        {"name": "x", "rows": 4},
        {"name": "x", "rows": True},
        {"name": "x", "cells": []},
        {"name": "x", "cells": [27]},
        {"name": "x", "cells": [[1]]},
        {"name": "x", "positions": [[3, 0]]},
        {"name": "x", "positions": [[0, 5]]},
        {"name": "Two Lines", "rows": 2},
        {"name": 5, "rows": 2},
    ],
)
def test_bad_pattern_configuration_is_refused(data: dict) -> None:
    with pytest.raises(PatternError):
        pattern_from_dict(data)


def test_positions_are_checked() -> None:
    with pytest.raises(PatternError):
        PositionsPattern("x", frozenset({(0, 0, 0)}))  # type: ignore[arg-type]


# --- Claims --------------------------------------------------------------------------

CARD = Card.from_rows([[3, 15, 32, 61, 80], [7, 28, 44, 76, 85], [9, 29, 57, 68, 90]])
OTHER = Card.from_rows([[1, 12, 33, 50, 70], [4, 23, 45, 66, 81], [8, 27, 49, 69, 86]])
A, B = CardRef(5, 101), CardRef(5, 102)
SOLD = {A: CARD, B: OTHER}
TOP_ROW = [3, 15, 32, 61, 80]


@pytest.mark.req("R85.11")
def test_a_card_not_sold_in_this_game_is_rejected() -> None:
    verdict = check_claim(CardRef(5, 999), SOLD, TOP_ROW, {})
    assert not verdict.valid
    assert verdict.reason == "card 5-999 was not sold in this game"


@pytest.mark.req("R85.11")
def test_an_incomplete_card_is_rejected() -> None:
    verdict = check_claim(A, SOLD, TOP_ROW[:4] + [1], {})
    assert (verdict.valid, verdict.reason) == (False, "card 5-101 has not completed a line")


@pytest.mark.req("R87.a")
def test_a_line_is_won_on_the_ball_it_completed() -> None:
    draw = [50, 3, 15, 32, 61, 80, 2]
    verdict = check_claim(A, SOLD, draw, {})
    assert verdict.wins == (Win("line", 6),)
    assert verdict.checked_at == 7


@pytest.mark.req("R87.a")
def test_a_line_already_won_on_an_earlier_ball_is_rejected() -> None:
    verdict = check_claim(A, SOLD, TOP_ROW + [4], {"line": WonPattern(3, frozenset({B}))})
    assert not verdict.valid
    assert verdict.reason == "the line was won on ball 3; card 5-101 completed it only on ball 5"


@pytest.mark.req("R87.a", "R88.2")
def test_cards_completing_on_the_winning_ball_share() -> None:
    verdict = check_claim(A, SOLD, TOP_ROW, {"line": WonPattern(5, frozenset({B}))})
    assert verdict.wins == (Win("line", 5),)


def test_a_card_claimed_after_the_winning_ball_of_an_earlier_completion_is_late() -> None:
    verdict = check_claim(A, SOLD, TOP_ROW + [1, 2], {"line": WonPattern(7, frozenset({B}))})
    assert verdict.reason == (
        "card 5-101 completed the line on ball 5 but was not claimed before the line was won on ball 7"
    )


def test_a_card_wins_a_pattern_once() -> None:
    verdict = check_claim(A, SOLD, TOP_ROW, {"line": WonPattern(5, frozenset({A}))})
    assert verdict.reason == "card 5-101 has already won the line"


@pytest.mark.req("R87.a", "R87.b")
def test_a_bingo_claimed_before_any_line_also_wins_the_line() -> None:
    """Nobody won the line: the card's own line, on the ball it completed, is the winning one."""
    everything = [n for row in CARD.rows for n in row]
    verdict = check_claim(A, SOLD, everything, {})
    assert verdict.wins == (Win("line", 5), Win("bingo", 15))


@pytest.mark.req("R87.b")
def test_a_bingo_claim_after_the_line_reports_the_bingo() -> None:
    everything = [n for row in CARD.rows for n in row]
    verdict = check_claim(A, SOLD, everything, {"line": WonPattern(3, frozenset({B}))})
    assert verdict.wins == (Win("bingo", 15),)
    late = check_claim(A, SOLD, everything + [1], {"line": WonPattern(3, frozenset({B})), "bingo": WonPattern(10, frozenset({B}))})
    assert late.reason == "the bingo was won on ball 10; card 5-101 completed it only on ball 15"


@settings(max_examples=60, deadline=None)
@given(seeds, draws, st.integers(1, 90), st.integers(1, 90))
@pytest.mark.req("R87.a", "R87.b", "R85.11")
def test_a_claim_wins_exactly_where_the_rules_say(seed: int, draw: list[int], line_at: int, bingo_at: int) -> None:
    cards = strip_cards(seed)
    someone = CardRef(9, 9)
    for won in ({}, {"line": WonPattern(line_at, frozenset({someone}))},
                {"line": WonPattern(line_at, frozenset({someone})), "bingo": WonPattern(bingo_at, frozenset({someone}))}):
        for ref, card in cards.items():
            verdict = check_claim(ref, cards, draw, won)
            expected = []
            for name, rows_needed in (("line", 1), ("bingo", 3)):
                done = first_count(rows(card), rows_needed, draw)
                if done is not None and (name not in won or won[name].ball_count == done):
                    expected.append(Win(name, done))
            assert verdict.wins == tuple(expected)
            assert verdict.valid == bool(expected)
            assert (verdict.reason is None) == verdict.valid

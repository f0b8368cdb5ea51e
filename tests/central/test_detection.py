"""Per-ball detection of every pattern agrees with the card-by-card rule (R93.10-12)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central_server.domain.detection import PatternDetector, pattern_numbers
from protocol.cards import Card
from protocol.patterns import (
    BINGO,
    FOUR_CORNERS,
    LINE,
    TWO_LINES,
    CellsPattern,
    GamePatterns,
    PositionsPattern,
    completion_ball,
)
from protocol.strips import sample_strips

CORNER_CELLS = CellsPattern("corner_cells", frozenset({0, 8, 18, 26}))  # often blank: unwinnable for many
MIDDLE = PositionsPattern("middle", frozenset({(1, 1), (1, 2), (1, 3)}))
PATTERNS = GamePatterns((LINE, TWO_LINES, FOUR_CORNERS, CORNER_CELLS, MIDDLE, BINGO))


def test_pattern_numbers_are_the_numbers_at_the_positions_and_blank_cells_are_zero() -> None:
    cards = sample_strips(2, random.Random(1).randbytes).reshape(-1, 27)
    corners = pattern_numbers(FOUR_CORNERS, cards)
    for cells, found in zip(cards, corners):
        rows = Card.from_cells(int(x) for x in cells).rows
        assert found.tolist() == [rows[0][0], rows[0][4], rows[2][0], rows[2][4]]
    assert (pattern_numbers(CORNER_CELLS, cards) == cards[:, [0, 8, 18, 26]]).all()


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.req("R93.11", "R93.12-13")
def test_every_card_is_reported_on_exactly_the_ball_it_completes_each_pattern(seed: int) -> None:
    rng = random.Random(seed)
    cards = sample_strips(rng.randint(1, 8), rng.randbytes).reshape(-1, 27)
    draw = rng.sample(range(1, 91), 90)
    detector = PatternDetector(cards, PATTERNS)
    reported: dict[str, dict[int, int]] = {p: {} for p in PATTERNS.names}
    for count, ball in enumerate(draw, start=1):
        for name, found in detector.ball_drawn(ball, PATTERNS.names).items():
            assert list(found) == sorted(found)
            for index in found.tolist():
                assert index not in reported[name], "a card completes a pattern once"
                reported[name][index] = count
    for index, cells in enumerate(cards):
        layout = Card.from_cells(int(x) for x in cells)
        for pattern in PATTERNS.patterns:
            assert reported[pattern.name].get(index) == completion_ball(pattern, layout, draw), (pattern.name, index)


def test_a_pattern_no_longer_wanted_is_not_reported() -> None:
    cards = sample_strips(3, random.Random(5).randbytes).reshape(-1, 27)
    detector = PatternDetector(cards, PATTERNS)
    seen = set()
    for ball in random.Random(9).sample(range(1, 91), 90):
        seen |= set(detector.ball_drawn(ball, ("bingo",)))
    assert seen == {"bingo"}
    assert detector.drawn and detector.card_count == 18
    assert np.all(np.array([detector.rows_missing(i) for i in range(18)]) == 0)

"""Win detection (R87.a, R87.b): both detectors against a brute force on Python sets."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from protocol.cards import Card
from protocol.strips import sample_strips
from protocol.wins import (
    NEVER,
    DrawError,
    NumberIndex,
    WinDetector,
    check_draw,
    completion_balls,
    game_winners,
)


def random_cards(seed: int, strips: int) -> np.ndarray:
    """Valid random cards, reproducible from ``seed`` (hypothesis shrinks the seed)."""
    return sample_strips(strips, random.Random(seed).randbytes).reshape(-1, 27)


def rows_of(cells: np.ndarray) -> list[set[int]]:
    return [set(int(n) for n in cells[r * 9 : (r + 1) * 9] if n) for r in range(3)]


def brute_completions(cards: np.ndarray, draw: list[int]) -> tuple[list[int], list[int]]:
    """Per card, the first ball count with a full row and with a full card (NEVER if none)."""
    line, bingo = [], []
    for cells in cards:
        rows = rows_of(cells)
        first_row = whole = NEVER
        drawn: set[int] = set()
        for k, number in enumerate(draw, start=1):
            drawn.add(number)
            complete = [row <= drawn for row in rows]
            if first_row == NEVER and any(complete):
                first_row = k
            if all(complete):
                whole = k
                break
        line.append(first_row)
        bingo.append(whole)
    return line, bingo


def brute_winners(balls: list[int]) -> tuple[int | None, list[int]]:
    first = min(balls, default=NEVER)
    if first == NEVER:
        return None, []
    return first, [i for i, b in enumerate(balls) if b == first]


@st.composite
def games(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    """Random cards, some repeated so that prizes are shared, and a random draw."""
    pool = random_cards(draw(st.integers(0, 2**32)), draw(st.integers(1, 4)))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=40))
    balls = draw(st.permutations(range(1, 91)))
    length = draw(st.integers(0, 90))
    return pool[picks], list(balls[:length])


@pytest.mark.req("R87.a", "R87.b")
@settings(max_examples=60, deadline=None)
@given(games())
def test_whole_game_pass_matches_brute_force(game: tuple[np.ndarray, list[int]]) -> None:
    """Every card's first-row and full-card ball counts, and the winners, match sets."""
    cards, draw = game
    line, bingo = brute_completions(cards, draw)
    balls = completion_balls(cards, draw)
    assert balls.line.tolist() == line
    assert balls.bingo.tolist() == bingo
    winners = game_winners(cards, draw)
    assert (winners.line.ball, winners.line.cards.tolist()) == brute_winners(line)
    assert (winners.bingo.ball, winners.bingo.cards.tolist()) == brute_winners(bingo)


@pytest.mark.req("R87.a", "R87.b")
@settings(max_examples=60, deadline=None)
@given(games())
def test_per_ball_detector_matches_brute_force(game: tuple[np.ndarray, list[int]]) -> None:
    """Ball by ball, the detector reports exactly the rows and cards that just completed."""
    cards, draw = game
    detector = WinDetector(cards)
    card_rows = [rows_of(cells) for cells in cards]
    drawn: set[int] = set()
    for number in draw:
        before = [[row <= drawn for row in rows] for rows in card_rows]
        drawn.add(number)
        after = [[row <= drawn for row in rows] for rows in card_rows]
        new_rows = [i for i in range(len(cards)) if after[i] != before[i]]
        new_cards = [i for i in range(len(cards)) if all(after[i]) and not all(before[i])]
        result = detector.ball_drawn(number)
        assert result.rows.tolist() == new_rows
        assert result.cards.tolist() == new_cards
    for i, rows in enumerate(card_rows):
        assert detector.rows_missing(i) == tuple(len(row - drawn) for row in rows)


@pytest.mark.req("R87.a", "R87.b")
@settings(max_examples=30, deadline=None)
@given(games())
def test_detector_first_completions_are_the_game_winners(game: tuple[np.ndarray, list[int]]) -> None:
    """The first ball with a reported row (card) gives the line (bingo) winners of the pass."""
    cards, draw = game
    detector = WinDetector(cards)
    line = bingo = None
    for k, number in enumerate(draw, start=1):
        result = detector.ball_drawn(number)
        if line is None and len(result.rows):
            line = (k, result.rows.tolist())
        if bingo is None and len(result.cards):
            bingo = (k, result.cards.tolist())
    winners = game_winners(cards, draw)
    assert line == ((winners.line.ball, winners.line.cards.tolist()) if winners.line.won else None)
    assert bingo == ((winners.bingo.ball, winners.bingo.cards.tolist()) if winners.bingo.won else None)


@pytest.mark.req("R87.a", "R87.b")
@settings(max_examples=40, deadline=None)
@given(games())
def test_bingo_card_also_completes_a_row_and_line_comes_first(game: tuple[np.ndarray, list[int]]) -> None:
    """The ball completing a card completes its last row too; the line ball precedes it.

    A ball sits in one row of a card, so a card's three rows complete on three different
    balls: with valid cards the line is always won strictly before the bingo.
    """
    cards, draw = game
    detector = WinDetector(cards)
    for number in draw:
        result = detector.ball_drawn(number)
        assert set(result.cards.tolist()) <= set(result.rows.tolist())
    balls = completion_balls(cards, draw)
    complete = balls.bingo != NEVER
    assert (balls.line[complete] < balls.bingo[complete]).all()


@pytest.mark.req("R87.a", "R87.b")
def test_identical_cards_share_both_prizes() -> None:
    """Two copies of a card complete together: both win the line and the bingo."""
    card = Card.from_rows([[3, 15, 32, 61, 80], [7, 28, 44, 76, 85], [9, 29, 57, 68, 90]])
    other = Card.from_rows([[1, 10, 20, 30, 40], [5, 51, 62, 71, 81], [8, 23, 55, 66, 88]])
    cards = np.array([card.cells, other.cells, card.cells], dtype=np.uint8)
    draw = [17, 3, 15, 32, 61, 80, 7, 28, 44, 76, 85, 9, 29, 57, 68, 90, 1]
    winners = game_winners(cards, draw)
    assert (winners.line.ball, winners.line.cards.tolist()) == (6, [0, 2])
    assert (winners.bingo.ball, winners.bingo.cards.tolist()) == (16, [0, 2])


class DetectorWithRecalls(RuleBasedStateMachine):
    """Draws and ball recalls in any order keep the counters equal to the brute force."""

    def __init__(self) -> None:
        super().__init__()
        self.cards = random_cards(7, 3)[:15]
        self.detector = WinDetector(self.cards)
        self.card_rows = [rows_of(cells) for cells in self.cards]
        self.drawn: list[int] = []

    def complete(self) -> list[list[bool]]:
        drawn = set(self.drawn)
        return [[row <= drawn for row in rows] for rows in self.card_rows]

    @precondition(lambda self: len(self.drawn) < 90)
    @rule(data=st.data())
    def draw_ball(self, data: st.DataObject) -> None:
        number = data.draw(st.sampled_from(sorted(set(range(1, 91)) - set(self.drawn))))
        before = self.complete()
        self.drawn.append(number)
        after = self.complete()
        result = self.detector.ball_drawn(number)
        assert result.rows.tolist() == [i for i in range(len(after)) if after[i] != before[i]]
        assert result.cards.tolist() == [
            i for i in range(len(after)) if all(after[i]) and not all(before[i])
        ]

    @precondition(lambda self: self.drawn)
    @rule()
    def void_last_ball(self) -> None:
        assert self.detector.last_ball_voided() == self.drawn.pop()

    @precondition(lambda self: self.drawn)
    @rule()
    def redraw_a_drawn_ball(self) -> None:
        with pytest.raises(DrawError, match="already drawn"):
            self.detector.ball_drawn(self.drawn[0])

    @invariant()
    def counters_match(self) -> None:
        drawn = set(self.drawn)
        assert self.detector.drawn == tuple(self.drawn)
        for i, rows in enumerate(self.card_rows):
            assert self.detector.rows_missing(i) == tuple(len(row - drawn) for row in rows)


TestDetectorWithRecalls = pytest.mark.req("R87.a", "R87.b")(DetectorWithRecalls.TestCase)
TestDetectorWithRecalls.settings = settings(max_examples=25, stateful_step_count=60, deadline=None)


def test_void_with_nothing_drawn_is_refused() -> None:
    detector = WinDetector(random_cards(1, 1))
    with pytest.raises(DrawError, match="no ball"):
        detector.last_ball_voided()


@pytest.mark.parametrize("ball", [0, 91, -1, True])
def test_detector_refuses_balls_outside_1_90(ball: int) -> None:
    detector = WinDetector(random_cards(1, 1))
    with pytest.raises(DrawError):
        detector.ball_drawn(ball)


@pytest.mark.parametrize(
    ("draw", "message"),
    [([5, 91], "ball 2 is 91, outside 1-90"), ([5, 7, 5], "ball 3 is 5, already drawn as ball 1")],
)
def test_check_draw_names_the_bad_ball(draw: list[int], message: str) -> None:
    with pytest.raises(DrawError, match=message):
        check_draw(draw)


def test_index_lists_each_number_in_ascending_row_slots() -> None:
    """The CSR index holds, for each number, exactly the (card, row) slots that show it."""
    cards = random_cards(3, 5)
    index = NumberIndex.build(cards)
    assert index.offsets[-1] == 15 * len(cards)
    for number in range(1, 91):
        expected = [
            3 * i + r for i, cells in enumerate(cards) for r, row in enumerate(rows_of(cells))
            if number in row
        ]
        assert index.slots_of(number).tolist() == expected


def test_no_cards_means_no_winners() -> None:
    empty = np.zeros((0, 27), dtype=np.uint8)
    winners = game_winners(empty, [1, 2, 3])
    assert not winners.line.won and not winners.bingo.won
    assert WinDetector(empty).ball_drawn(1).rows.tolist() == []

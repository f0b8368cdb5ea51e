"""The 90-ball card and strip rules (R2.2, R82.1 and its ruling)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import (
    Card,
    CardError,
    card_from_rows,
    card_of_cells,
    check_cells,
    check_strip,
    duplicate_pairs,
    fingerprint,
    fingerprints,
    invalid_rows,
)
from protocol.strips import sample_strips

GOOD = [
    3, 0, 0, 32, 0, 55, 61, 0, 80,
    0, 15, 28, 0, 44, 0, 0, 76, 85,
    9, 0, 29, 0, 47, 57, 0, 78, 0,
]


def strip_cards(strip: np.ndarray) -> list[Card]:
    return [Card.from_cells(int(x) for x in cells) for cells in strip]


@pytest.mark.req("R2.2", "R82.1")
def test_a_standard_card_is_valid_and_knows_its_rows() -> None:
    card = Card.from_cells(GOOD)
    assert card.rows == ((3, 32, 55, 61, 80), (15, 28, 44, 76, 85), (9, 29, 47, 57, 78))
    assert len(card.numbers) == 15
    assert Card.from_rows(card.rows) == card


@pytest.mark.req("R2.2", "R82.1")
@pytest.mark.parametrize(
    "change, message",
    [
        ({0: 0}, "row 1 holds 4 numbers"),
        ({1: 12}, "row 1 holds 6 numbers"),
        ({0: 13}, "r1c1 holds 13, but column 1 takes 1-9"),
        ({8: 91}, "r1c9 holds 91, outside 1-90"),
        ({18: 2}, "column 1 is not ascending downwards (3 above 2)"),
        ({18: 3}, "column 1 holds 3 twice"),
        ({3: 0, 1: 12}, "column 4 is empty"),
    ],
)
def test_an_invalid_card_is_refused_with_the_exact_fault(change: dict, message: str) -> None:
    cells = list(GOOD)
    for index, value in change.items():
        cells[index] = value
    with pytest.raises(CardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_cells(cells)


@pytest.mark.req("R82.1")
def test_rows_that_do_not_fit_a_card_are_refused() -> None:
    with pytest.raises(CardError, match="row 2 holds 15 and 17, both in column 2"):
        Card.from_rows([[3, 32, 55, 61, 80], [15, 17, 44, 76, 85], [9, 29, 47, 57, 78]])


@pytest.mark.req("R2.2")
def test_the_remembered_checks_give_the_card_or_the_fault_each_time_and_true_is_never_1() -> None:
    """An audit day holds each card many times: the card is checked once and remembered; a bad card is
    refused each time it comes, and a JSON ``true`` where a 1 stands is refused though it hashes as 1."""
    rows = [[3, 32, 55, 61, 80], [15, 28, 44, 76, 85], [9, 29, 47, 57, 78]]
    assert card_from_rows(rows) is card_from_rows([list(row) for row in rows])
    assert card_from_rows(rows) == Card.from_rows(rows)
    assert card_of_cells(tuple(GOOD)) is card_of_cells(tuple(GOOD))
    bad = [[3, 32, 55, 61, 80], [15, 17, 44, 76, 85], [9, 29, 47, 57, 78]]
    for _ in range(2):
        with pytest.raises(CardError, match="row 2 holds 15 and 17, both in column 2"):
            card_from_rows(bad)
    with_1 = [[1, 32, 55, 61, 80], [15, 28, 44, 76, 85], [9, 29, 47, 57, 78]]
    card_from_rows(with_1)
    with pytest.raises(CardError, match="row 1 holds True, not a whole number"):
        card_from_rows([[True, *with_1[0][1:]], *with_1[1:]])


@pytest.mark.req("R2.2", "R82.1")
def test_sampled_strips_are_six_valid_cards_holding_1_to_90_once() -> None:
    for strip in sample_strips(300):
        check_strip(strip_cards(strip))


@pytest.mark.req("R2.2")
def test_a_strip_missing_a_number_is_refused() -> None:
    cards = strip_cards(sample_strips(1)[0])
    with pytest.raises(CardError, match="appears on card 1 and card 2"):
        check_strip([cards[0], cards[0], *cards[2:]])
    with pytest.raises(CardError, match="a strip has 6 cards"):
        check_strip(cards[:5])




@st.composite
def mutated_cards(draw: st.DrawFn) -> list[int]:
    """A sampled valid card with up to three cells changed to arbitrary 0-99 values."""
    strip = sample_strips(1)[0]
    cells = [int(x) for x in strip[draw(st.integers(0, 5))]]
    for _ in range(draw(st.integers(0, 3))):
        cells[draw(st.integers(0, 26))] = draw(st.integers(0, 99))
    return cells


@pytest.mark.req("R82.1")
@settings(max_examples=300, deadline=None)
@given(mutated_cards())
def test_the_vectorised_check_agrees_with_the_plain_one(cells: list[int]) -> None:
    try:
        check_cells(cells)
        valid = True
    except CardError:
        valid = False
    assert (len(invalid_rows(np.array([cells]))) == 0) == valid


@pytest.mark.req("R82.9-12")
def test_fingerprints_match_the_number_sets_and_find_duplicates() -> None:
    cells = sample_strips(2).reshape(-1, 27)
    prints = fingerprints(cells)
    for row, (low, high) in zip(cells, prints):
        assert int(low) | int(high) << 64 == fingerprint(int(x) for x in row)
    assert duplicate_pairs(prints) == []
    doubled = np.concatenate([prints, prints[[3, 7]], prints[[3]]])
    assert duplicate_pairs(doubled) == [(3, 12), (7, 13), (3, 14)]

"""Exactly uniform strips: the counts, and the sampler against exact marginals (R82.9-12)."""

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from protocol import strips
from protocol.cards import COLUMN_SIZES, Card, check_strip

SAMPLE = 120_000
P_FLOOR = 1e-6  # a correct sampler fails one run in a million


@pytest.fixture(scope="module")
def sample() -> np.ndarray:
    return strips.sample_strips(SAMPLE)


def column_counts(cells: np.ndarray) -> np.ndarray:
    """(..., 9) numbers per column of cards given as (..., 27) cells."""
    return (cells.reshape(*cells.shape[:-1], 3, 9) != 0).sum(axis=-2)


def chi_square_p(observed: Counter, expected: dict, total: int) -> float:
    keys = sorted(expected)
    assert set(observed) <= set(keys)
    f_obs = np.array([observed.get(k, 0) for k in keys], dtype=float)
    f_exp = np.array([float(expected[k]) * total for k in keys])
    return float(chisquare(f_obs, f_exp).pvalue)


def class_of(vector) -> tuple[int, int, int]:
    """A coarse class of a column-count vector with enough mass in every class."""
    v = [int(x) for x in vector]
    return (v[0], v[8], sum(1 for x in v if x == 3))


def exact_class_distribution() -> dict:
    out: dict = {}
    for v, p in strips.first_card_vector_distribution().items():
        out[class_of(v)] = out.get(class_of(v), 0) + p
    return out


def test_the_exact_counts_of_layouts_cards_and_strips() -> None:
    assert strips.layout_count() == 735_210
    assert strips.card_count() == 3_669_688_706_217_187_500
    total = strips.strip_count()
    assert f"{total:.4e}" == "4.6771e+77"
    assert sum(strips.first_card_vector_distribution().values()) == 1


def test_the_layout_count_agrees_with_a_plain_enumeration() -> None:
    """An independent count: every 3 x 9 0/1 grid with rows of 5 and no empty column."""
    rows = [r for r in range(512) if bin(r).count("1") == 5]
    total = sum(1 for a in rows for b in rows for c in rows if a | b | c == 511)
    assert total == 735_210


@pytest.mark.req("R82.9-12")
def test_first_card_column_counts_follow_the_exact_marginal(sample: np.ndarray) -> None:
    expected = exact_class_distribution()
    observed = Counter(class_of(v) for v in column_counts(sample[:, 0]))
    assert chi_square_p(observed, expected, SAMPLE) > P_FLOOR


@pytest.mark.req("R82.9-12")
@pytest.mark.parametrize("position", [2, 5])
def test_every_card_position_has_the_same_exact_marginal(sample: np.ndarray, position: int) -> None:
    """Uniform ordered strips are exchangeable; the last card is what the others left."""
    expected = exact_class_distribution()
    observed = Counter(class_of(v) for v in column_counts(sample[:, position]))
    assert chi_square_p(observed, expected, SAMPLE) > P_FLOOR


@pytest.mark.req("R82.9-12")
def test_layouts_are_uniform_given_the_column_counts(sample: np.ndarray) -> None:
    """Each card's layout, ranked within the layouts of its column counts, is uniform.

    With rank k uniform in [0, L), the decile k * 10 // L has an exact distribution
    for every card; the pooled counts are compared with the pooled expectation.
    """
    table = strips.layout_table()
    group = np.repeat(np.arange(len(table.offsets)), table.layout_counts)
    rank = np.arange(len(table.masks)) - table.offsets[group]
    position = dict(zip(table.masks.tolist(), range(len(table.masks))))
    cards = sample[:20_000].reshape(-1, 27)
    masks = ((cards != 0).astype(np.int64) << np.arange(27)).sum(axis=1)
    index = np.array([position[m] for m in masks.tolist()])
    k, size = rank[index], table.layout_counts[group[index]]
    observed = Counter((k * 10 // size).tolist())
    expected = dict.fromkeys(range(10), 0.0)
    for L, n in Counter(size.tolist()).items():
        for decile, hits in Counter((np.arange(L) * 10 // L).tolist()).items():
            expected[decile] += n * hits / L
    f_exp = np.array([expected[d] for d in range(10)])
    f_obs = np.array([observed.get(d, 0) for d in range(10)], dtype=float)
    assert float(chisquare(f_obs, f_exp).pvalue) > P_FLOOR


@pytest.mark.req("R82.9-12")
def test_numbers_are_shared_among_the_cards_uniformly(sample: np.ndarray) -> None:
    """P(1 and 2 on the same card) = 6 E[n(n-1)] / (9 * 8), n = card 1's column-1 count."""
    dist = strips.first_card_vector_distribution()
    mean = sum(p * v[0] * (v[0] - 1) for v, p in dist.items())
    p_same = 6 * mean / 72
    holder = {}
    for number in (1, 2):
        holder[number] = (sample == number).any(axis=2).argmax(axis=1)
    same = int((holder[1] == holder[2]).sum())
    observed = Counter({True: same, False: SAMPLE - same})
    assert chi_square_p(observed, {True: p_same, False: 1 - p_same}, SAMPLE) > P_FLOOR
    # Which card holds 90: every position equally likely.
    where = Counter(int(x) for x in (sample == 90).any(axis=2).argmax(axis=1))
    assert chi_square_p(where, {k: Fraction(1, 6) for k in range(6)}, SAMPLE) > P_FLOOR


def test_ties_in_the_top_bits_are_settled_exactly() -> None:
    """A source of zero bytes ties every boundary: the exact path must pick entry 0."""
    level = strips.count_table().levels[0]
    rest = np.tile(np.array(COLUMN_SIZES, dtype=np.int8), (3, 1))
    chosen = strips._choose_vectors(level, rest, lambda n: bytes(n))
    order = np.argsort(rest[0], kind="stable")
    first = np.empty(9, dtype=np.int8)
    first[order] = level.flat_vector[0]
    assert (chosen == first).all()


def test_draws_above_the_total_are_drawn_again() -> None:
    """The first draw of all ones is rejected; the sampler then takes the next bytes."""
    calls = []

    def source(n: int) -> bytes:
        calls.append(n)
        return b"\xff" * n if len(calls) == 1 else bytes(n)

    level = strips.count_table().levels[0]
    rest = np.tile(np.array(COLUMN_SIZES, dtype=np.int8), (1, 1))
    strips._choose_vectors(level, rest, source)
    assert len(calls) >= 2


def test_sampled_strips_are_valid() -> None:
    for strip in strips.sample_strips(50):
        check_strip([Card.from_cells(int(x) for x in cells) for cells in strip])
    assert strips.sample_strips(0).shape == (0, 6, 27)
    assert math.isclose(strips.card_count(), 3.67e18, rel_tol=1e-3)

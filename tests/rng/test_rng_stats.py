"""The statistics of the generator certification, on samples whose answer is known (R92.10)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from protocol import rng_stats
from protocol.rng_stats import SampleError, Outcome


def all_permutations(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(1, n + 1))))


def fair_samples(n: int, games: int, count: int, seed: int) -> list[np.ndarray]:
    """Samples of uniformly random permutations from a seeded generator: fixed, so never flaky."""
    rng = np.random.default_rng(seed)
    return [np.argsort(rng.random((games, n)), axis=1) + 1 for _ in range(count)]


def test_ranks_are_the_lehmer_code_each_choice_among_the_balls_left() -> None:
    sample = np.array([[3, 1, 4, 2], [1, 2, 3, 4], [4, 3, 2, 1]])
    assert rng_stats.ranks(sample).tolist() == [[2, 0, 1, 0], [0, 0, 0, 0], [3, 2, 1, 0]]
    every = rng_stats.ranks(all_permutations(5))
    assert len({tuple(r) for r in every}) == 120  # a bijection onto the mixed-radix codes
    assert (every < 5 - np.arange(5)).all()


@pytest.mark.parametrize("n", [4, 6, 8])
def test_the_choice_bits_are_exactly_uniform_over_all_permutations(n: int) -> None:
    """Over every permutation once, each pattern of a game's bits occurs equally often: the
    extraction keeps only bits that a fair generator makes exactly uniform."""
    sample = all_permutations(n)
    width = sum((m & -m).bit_length() - 1 for m in range(1, n + 1))  # v2(n!)
    bits = rng_stats.choice_bits(sample).reshape(len(sample), width)
    patterns = bits @ (1 << np.arange(width)[::-1])
    counts = np.bincount(patterns, minlength=2**width)
    assert (counts == len(sample) // 2**width).all()


def test_a_game_of_ninety_gives_eighty_six_bits() -> None:
    assert rng_stats.BITS_PER_GAME == 86


def test_the_pair_reference_matches_the_moments_of_its_limit() -> None:
    """The trace of the pair covariance is (n-1)^2: the mean of the statistic for any n."""
    for n in (6, 12, 90):
        scale, df = rng_stats.pair_moments(n)
        assert scale * df == pytest.approx((n - 1) ** 2)
        assert 1 < scale < 1.2
    assert rng_stats.pair_moments(90) == pytest.approx((1.01109, 7834.1), rel=1e-4)


@pytest.mark.parametrize("n, games", [(6, 60), (12, 120)])
def test_fair_permutations_give_uniform_p_values(n: int, games: int) -> None:
    """Each test is calibrated: on fair samples about 5% of p-values fall below 0.05, and
    the mean is about one half (400 fixed samples; the bounds are 4 standard errors)."""
    p = np.array([[t.p_value for t in rng_stats.ball_tests(s, n)] for s in fair_samples(n, games, 400, seed=n)])
    assert (abs(p.mean(axis=0) - 0.5) < 0.06).all(), p.mean(axis=0)
    assert (abs((p < 0.05).mean(axis=0) - 0.05) < 0.045).all(), (p < 0.05).mean(axis=0)


def test_a_generator_that_favours_low_balls_first_fails_the_first_ball_test() -> None:
    rng = np.random.default_rng(7)
    sample = np.argsort(rng.random((2000, 90)), axis=1) + 1
    low_first = rng.random(2000) < 0.1
    sample[low_first] = np.sort(sample[low_first], axis=1)  # one game in ten starts with ball 1
    first, *_ = rng_stats.ball_tests(sample)
    assert first.p_value < 1e-10


def repeated_ball() -> np.ndarray:
    sample = np.tile(np.arange(1, 91), (500, 1))
    sample[3, 0] = 2  # game 4 draws ball 2 twice
    return sample


@pytest.mark.parametrize("sample, message", [
    (np.ones((10, 90), dtype=int), "too few"),
    (np.ones((500, 89), dtype=int), "whole games of 90"),
    (repeated_ball(), "game 4 of the sample is not the 90 balls each once"),
])
def test_a_sample_that_is_not_whole_fair_games_is_refused(sample: np.ndarray, message: str) -> None:
    with pytest.raises(SampleError, match=message):
        rng_stats.ball_tests(sample)


def test_bonferroni_over_the_tests_and_over_the_p_values_of_one_test() -> None:
    results = [Outcome("a", "x", None, (0.006,), ""), Outcome("b", "x", None, (0.5, 0.0009), "")]
    verdict = rng_stats.decide(results, 0.01)
    assert verdict.threshold == 0.005 and verdict.failed == ("b",) and not verdict.passed
    assert results[1].p_value == pytest.approx(0.0018)
    assert not rng_stats.decide(results[:1], 0.01).passed  # alone, 0.006 is under 0.01
    assert rng_stats.decide(results[:1], 0.005).passed
    with pytest.raises(SampleError):
        rng_stats.decide(results, 1.5)

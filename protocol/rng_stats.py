"""The statistics of a ball generator's certification (R92.10): pure functions of the draws.

A *sample* is ``G`` whole games, each the 90 balls in the order drawn: an integer
array of shape ``(G, 90)``.  Under the hypothesis that the generator is fair, each game
is a uniformly random permutation of 1..90, independent of the others.  Every test
below turns the sample into a p-value under that hypothesis:

* :func:`first_ball` - the first ball of each game, 90 cells, chi-square with 89
  degrees of freedom.
* :func:`positions` - the ball-by-position table (90 x 90 cells).  Each game is a
  permutation matrix, so the rows and columns of the table are fixed; the Pearson
  statistic ``X`` is then ``n/(n-1)`` times a chi-square with ``(n-1)^2`` degrees of
  freedom (the covariance of a random permutation matrix is ``P (x) P / (n-1)`` with
  ``P`` the centring projection), and ``X (n-1)/n`` is referred to that chi-square.
* :func:`pairs` - consecutive ordered pairs (ball, next ball) within a game, 90 x 89
  cells.  The pairs of one game are dependent (a ball has one successor); the
  statistic is referred to ``c`` times a chi-square with ``nu`` degrees of freedom,
  ``c`` and ``nu`` matched to the exact first two moments of its limit
  (Satterthwaite), computed in :func:`pair_moments`.
* :func:`serial_correlation` - lag-1 correlation of the stream of choices.  Each draw
  picks rank ``r`` among the ``m`` balls left (ascending), uniform on ``0..m-1`` and
  independent of every other draw; standardised, ``z = (r - (m-1)/2) / sqrt((m^2-1)/12)``
  has mean 0 and variance 1, so ``sqrt(L-1)`` times the mean of ``z_t z_(t+1)`` over
  the ``L`` draws with ``m >= 2`` is standard normal (two-sided test).

:func:`choice_bits` gives the bits the bit-level batteries (NIST SP 800-22, dieharder)
read: from each draw with ``m`` balls left, the low ``v`` bits of its rank where
``2^v`` is the largest power of two dividing ``m``.  Those bits are exactly uniform
and independent under the hypothesis (``r mod 2^v`` is uniform when ``2^v`` divides
``m``), which no longer holds for any more bits of a rank.  A game yields
``v2(90!) = 86`` bits.

:func:`decide` applies the multiple-testing rule of the whole run: Bonferroni over
the tests, and within a test that gives several p-values, Bonferroni over those.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy import stats

from protocol.cards import BALLS
from protocol.errors import DomainError

#: The smallest expected count in any cell of the chi-square tests.
MIN_EXPECTED = 5
#: Games needed for every cell of every table to expect MIN_EXPECTED: the position and
#: pair tables expect G/90 per cell.
MIN_GAMES = MIN_EXPECTED * BALLS
#: Bits the bit batteries get from one game: the 2-adic valuation of 90!.
BITS_PER_GAME = sum((m & -m).bit_length() - 1 for m in range(1, BALLS + 1))


class SampleError(DomainError):
    """A sample the tests cannot judge: too small, or not whole games of distinct balls."""


@dataclass(frozen=True)
class Outcome:
    """One test: its statistic, the p-value(s) and how the statistic was referred.

    ``p_values`` holds every p-value the test gave (one for most); ``p_value`` is the
    test's own, Bonferroni-adjusted over them.
    """

    name: str
    battery: str
    statistic: float | None
    p_values: tuple[float, ...]
    reference: str
    detail: dict[str, object] = field(default_factory=dict)

    @property
    def p_value(self) -> float:
        return min(1.0, min(self.p_values) * len(self.p_values))


@dataclass(frozen=True)
class Verdict:
    """The run's decision: pass when every test's p-value reaches its threshold."""

    alpha: float
    tests: int
    threshold: float
    failed: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failed


def check_sample(games: np.ndarray, n: int = BALLS) -> np.ndarray:
    """``games`` as an ``int64`` array of shape ``(G, n)``, each row a permutation of 1..n."""
    sample = np.asarray(games, dtype=np.int64)
    if sample.ndim != 2 or sample.shape[1] != n:
        raise SampleError(f"a sample is whole games of {n} balls, not an array of shape {sample.shape}")
    if sample.shape[0] < MIN_EXPECTED * n:
        raise SampleError(
            f"{sample.shape[0]} games are too few: every cell must expect at least {MIN_EXPECTED} "
            f"draws, which takes {MIN_EXPECTED * n} games ({MIN_EXPECTED * n * n} balls)"
        )
    if not (np.sort(sample, axis=1) == np.arange(1, n + 1)).all():
        bad = int(np.argmax((np.sort(sample, axis=1) != np.arange(1, n + 1)).any(axis=1)))
        raise SampleError(f"game {bad + 1} of the sample is not the {n} balls each once")
    return sample


def _chi_square(observed: np.ndarray, expected: float) -> float:
    return float(((observed - expected) ** 2).sum() / expected)


def first_ball(games: np.ndarray) -> Outcome:
    """Chi-square of the first ball's frequencies: n cells, n - 1 degrees of freedom."""
    sample = np.asarray(games)
    count, n = sample.shape
    observed = np.bincount(sample[:, 0] - 1, minlength=n)
    statistic = _chi_square(observed, count / n)
    return Outcome(
        "first ball frequencies", "balls", statistic, (float(stats.chi2.sf(statistic, n - 1)),),
        f"chi-square, {n - 1} degrees of freedom",
        {"cells": n, "expected_per_cell": count / n, "min_observed": int(observed.min()),
         "max_observed": int(observed.max())},
    )


def positions(games: np.ndarray) -> Outcome:
    """Chi-square of every ball at every position: n x n cells of a sum of permutation matrices."""
    sample = np.asarray(games)
    count, n = sample.shape
    table = np.zeros((n, n), dtype=np.int64)
    for position in range(n):
        table[:, position] = np.bincount(sample[:, position] - 1, minlength=n)
    statistic = _chi_square(table, count / n)
    df = (n - 1) ** 2
    return Outcome(
        "ball by position frequencies", "balls", statistic,
        (float(stats.chi2.sf(statistic * (n - 1) / n, df)),),
        f"X (n-1)/n against chi-square, {df} degrees of freedom",
        {"cells": n * n, "expected_per_cell": count / n, "scale": n / (n - 1)},
    )


def pair_moments(n: int) -> tuple[float, float]:
    """``(c, nu)``: the pair statistic of random permutations of n is about ``c`` chi-square(``nu``).

    Per game, the indicator ``Y_ab`` that b follows a has mean ``1/n``; divided by that
    mean, its covariance has ``1 - 1/n`` on the diagonal, ``-1/n`` between pairs that
    cannot both occur (reversed, same first ball, same second ball: ``2n - 3`` of
    them) and ``1/(n(n-1))`` between pairs that can (chained or disjoint:
    ``(n-1)(n-2)``).  ``c`` and ``nu`` match the trace and the trace of the square.
    """
    cells = n * (n - 1)
    same, exclusive, compatible = 1 - 1 / n, -1 / n, 1 / (n * (n - 1))
    trace = cells * same
    trace_squared = cells * (same**2 + (2 * n - 3) * exclusive**2 + (n - 1) * (n - 2) * compatible**2)
    return trace_squared / trace, trace**2 / trace_squared


def pairs(games: np.ndarray) -> Outcome:
    """Chi-square of consecutive ordered pairs within a game: n(n-1) cells."""
    sample = np.asarray(games)
    count, n = sample.shape
    first, second = sample[:, :-1].ravel() - 1, sample[:, 1:].ravel() - 1
    table = np.bincount(first * n + second, minlength=n * n).reshape(n, n)
    off_diagonal = table[~np.eye(n, dtype=bool)]
    statistic = _chi_square(off_diagonal, count / n)
    scale, df = pair_moments(n)
    return Outcome(
        "consecutive pairs", "balls", statistic, (float(stats.chi2.sf(statistic / scale, df)),),
        f"X / {scale:.5f} against chi-square, {df:.1f} degrees of freedom (Satterthwaite)",
        {"cells": n * (n - 1), "expected_per_cell": count / n, "scale": scale, "df": df},
    )


def ranks(games: np.ndarray) -> np.ndarray:
    """Each draw's rank among the balls left, ascending: ``r`` in ``0..m-1``, ``m = n - position``."""
    sample = np.asarray(games, dtype=np.int64)
    count, n = sample.shape
    result = np.empty((count, n), dtype=np.int64)
    earlier = np.tril(np.ones((n, n), dtype=bool), k=-1)  # earlier[i, j]: draw j came before draw i
    chunk = max(1, 2_000_000 // (n * n))
    for start in range(0, count, chunk):
        block = sample[start:start + chunk]
        smaller_before = ((block[:, None, :] < block[:, :, None]) & earlier).sum(axis=2)
        result[start:start + chunk] = block - 1 - smaller_before
    return result


def serial_correlation(games: np.ndarray) -> Outcome:
    """Lag-1 serial correlation of the standardised choices, over games end to end."""
    rank = ranks(games)
    count, n = rank.shape
    left = n - np.arange(n)  # balls left before each draw
    z = (rank[:, :-1] - (left[:-1] - 1) / 2) / np.sqrt((left[:-1] ** 2 - 1) / 12)
    stream = z.ravel()
    products = stream[:-1] * stream[1:]
    r = float(products.mean())
    normal = r * math.sqrt(products.size)
    return Outcome(
        "serial correlation of choices (lag 1)", "balls", normal,
        (float(2 * stats.norm.sf(abs(normal))),),
        "sqrt(L-1) r against the standard normal, two-sided",
        {"r": r, "draws": int(stream.size)},
    )


def choice_bits(games: np.ndarray) -> np.ndarray:
    """The exactly uniform bits of the choices (see the module), game by game, as 0/1 ``uint8``."""
    rank = ranks(games)
    count, n = rank.shape
    columns = []
    for position in range(n):
        left = n - position
        width = (left & -left).bit_length() - 1
        for bit in range(width - 1, -1, -1):  # most significant first
            columns.append((rank[:, position] >> bit) & 1)
    return np.stack(columns, axis=1).astype(np.uint8).ravel()


def ball_tests(games: np.ndarray, n: int = BALLS) -> list[Outcome]:
    """The four ball-level tests of a sample of games of ``n`` balls, once it is checked."""
    sample = check_sample(games, n)
    return [first_ball(sample), positions(sample), pairs(sample), serial_correlation(sample)]


def decide(results: Sequence[Outcome], alpha: float) -> Verdict:
    """Bonferroni over the tests run: each test's p-value must reach ``alpha / tests``."""
    if not 0 < alpha < 1:
        raise SampleError(f"the significance level is between 0 and 1, not {alpha}")
    threshold = alpha / max(1, len(results))
    failed = tuple(r.name for r in results if r.p_value < threshold)
    return Verdict(alpha, len(results), threshold, failed)


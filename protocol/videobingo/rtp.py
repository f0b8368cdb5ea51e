"""The exact return to player of a video bingo paytable (FORMATS.md section 4).

A card's outcome depends only on which of its cells are drawn.  Let ``U`` be the cells
that some pattern uses (``u = |U|``).  The other cells of the card never change what it
is paid, and the chance that, of the cells of ``U``, exactly those of ``S`` are drawn is
``C(pool - u, balls - |S|) / C(pool, balls)``: the ``|S|`` numbers of ``S`` are among the
balls, the other ``balls - |S|`` balls come from the ``pool - u`` numbers off ``U``.
(Summing the format's formula over the cells off ``U`` gives the same figure, by
Vandermonde's identity.)  So the return needs, for each pattern ``k`` and each size
``s``, only the integer ``N[k][s]``: how many subsets of ``U`` of size ``s`` are paid
pattern ``k``.  Then, exactly::

    P(k is paid) = sum_s N[k][s] * C(pool - u, balls - s) / C(pool, balls)
    RTP          = sum_k pays_k * P(k is paid)

:func:`paid_counts` finds ``N`` in one of two exact ways:

* ``"subsets"``: every subset of ``U`` as a bitmask in one numpy array.  Each
  pattern's own mask starts with the pattern's rank (0 is paid first); a superset
  sweep, one vectorised pass per cell, leaves in every subset the best rank among the
  patterns it contains.  The subsets are then counted by (size, rank).  Cost
  ``u * 2^u`` array steps whatever the patterns, so it serves up to
  :data:`SUBSET_CELLS_MAX` cells.
* ``"cells"``: a dynamic programme over the cells of ``U`` one at a time, whose state
  is the best pattern already complete and the better patterns still possible, and
  whose value is the number of subsets reaching it by size (held as one Python
  integer with a field of ``u + 1`` bits per size).  Its cost grows with how the
  patterns overlap, not with ``2^u``: milliseconds for the lines, columns, diagonals,
  shapes and whole cards of real paytables, even on a 9 x 9 card, but it gives up
  beyond :data:`CELL_STATES_MAX` states.

``"auto"`` enumerates the subsets up to :data:`SUBSET_ALWAYS_MAX` cells, and above it
runs the programme, falling back to the subsets if the programme gives up and ``u``
is at most :data:`SUBSET_CELLS_MAX`.  A paytable neither can handle is refused as too
entangled to certify (``patterns``).

numpy only counts subsets (integers below ``2^u``); every probability is a
:class:`fractions.Fraction` built from integers and :func:`math.comb`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from math import comb, floor
from typing import Literal

import numpy as np

from protocol.videobingo.errors import PaytableError
from protocol.videobingo.paytable import Paytable, load_paytable

OUTPUT_FORMAT = "bingo-vb-rtp/1"

#: Up to this many pattern cells ``"auto"`` enumerates the subsets (under a second).
SUBSET_ALWAYS_MAX = 20
#: The most pattern cells whose subsets are ever enumerated (2^24 subsets: a few
#: seconds and about 50 MB of working arrays).
SUBSET_CELLS_MAX = 24
#: The cell-by-cell programme gives up beyond this many states in one step.
CELL_STATES_MAX = 100_000
# The subsets are counted in slices of this many, to bound the temporary arrays.
_SLICE_BITS = 20

Method = Literal["auto", "subsets", "cells"]


class _TooEntangled(Exception):
    """The cell-by-cell programme needs more than :data:`CELL_STATES_MAX` states."""


@dataclass(frozen=True)
class PaidCounts:
    """``counts[k][s]``: subsets of the ``cells`` pattern cells of size ``s`` paid pattern ``k``.

    ``k`` is the pattern's index in the file; subsets paid nothing are not counted.
    """

    cells: int
    counts: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ExactReturn:
    """The return of a paytable per credit staked on one card, exactly."""

    rtp: Fraction
    #: The chance that each pattern (file order) is the one a card is paid for.
    probabilities: tuple[Fraction, ...]
    min_rtp_bp: int

    @property
    def meets_minimum(self) -> bool:
        """Whether the exact return reaches ``min_rtp_bp`` (not its rounded percentage)."""
        return self.rtp >= Fraction(self.min_rtp_bp, 10000)

    @property
    def rtp_percent(self) -> str:
        """``rtp`` x 100 rounded half-up to two decimals, e.g. ``"82.30"``."""
        hundredths = floor(self.rtp * 10000 + Fraction(1, 2))
        return f"{hundredths // 100}.{hundredths % 100:02d}"


def _ranked_masks(paytable: Paytable) -> tuple[list[int], list[int], int]:
    """Pattern masks over the pattern cells only, best-paid first; their file indices; ``u``."""
    used = 0
    for pattern in paytable.patterns:
        used |= pattern.mask
    bits = [b for b in range(paytable.cells) if used >> b & 1]
    position = {b: i for i, b in enumerate(bits)}
    order = list(paytable.priority)
    masks = []
    for index in order:
        mask = 0
        for row, column in paytable.patterns[index].cells:
            mask |= 1 << position[row * paytable.columns + column]
        masks.append(mask)
    return masks, order, len(bits)


def _rank_dtype(ranks: int) -> type[np.unsignedinteger]:
    # The "paid nothing" rank is ``ranks`` itself, so it must fit too.
    for dtype in (np.uint8, np.uint16, np.uint32):
        if ranks <= np.iinfo(dtype).max:
            return dtype
    return np.uint64


def _popcounts(bits: int) -> np.ndarray:
    counts = np.zeros(1, dtype=np.uint8)
    for _ in range(bits):
        counts = np.concatenate([counts, counts + 1])
    return counts


def _count_subsets(masks: list[int], u: int) -> dict[tuple[int, int], int]:
    """``{(rank, size): subsets}`` by enumerating every subset of the ``u`` cells."""
    ranks = len(masks)
    best = np.full(1 << u, ranks, dtype=_rank_dtype(ranks))
    best[np.array(masks, dtype=np.int64)] = np.arange(ranks)
    for bit in range(u):
        # Index = high * 2^(bit+1) + has_bit * 2^bit + low: the subsets with the bit
        # take the better rank of themselves and the same subset without it.
        sweep = best.reshape(-1, 2, 1 << bit)
        np.minimum(sweep[:, 1, :], sweep[:, 0, :], out=sweep[:, 1, :])
    low = min(u, _SLICE_BITS)
    low_sizes = _popcounts(low).astype(np.int64)
    totals: dict[tuple[int, int], int] = defaultdict(int)
    for high in range(1 << (u - low)):
        chunk = best[high << low : (high + 1) << low].astype(np.int64)
        keys, counts = np.unique(chunk * (low + 1) + low_sizes, return_counts=True)
        extra = high.bit_count()
        for key, count in zip(keys.tolist(), counts.tolist()):
            rank, size = divmod(key, low + 1)
            if rank < ranks:
                totals[rank, size + extra] += count
    return totals


def _count_cells(masks: list[int], u: int) -> dict[tuple[int, int], int]:
    """``{(rank, size): subsets}`` by a dynamic programme over the cells, in order."""
    ranks = len(masks)
    width = u + 1  # a count of subsets of one size is below 2^u: u + 1 bits hold it
    contains = [0] * u  # per cell, the ranks whose pattern holds it
    finishes = [0] * u  # per cell, the ranks whose pattern's last cell it is
    for rank, mask in enumerate(masks):
        finishes[mask.bit_length() - 1] |= 1 << rank
        for cell in range(u):
            if mask >> cell & 1:
                contains[cell] |= 1 << rank
    # State: (best rank complete so far, or ``ranks``; the better ranks still possible).
    # Value: a polynomial in the number of cells drawn, one ``width``-bit field a size.
    states: dict[tuple[int, int], int] = {(ranks, (1 << ranks) - 1): 1}
    for cell in range(u):
        held, done_here = contains[cell], finishes[cell]
        following: dict[tuple[int, int], int] = defaultdict(int)
        for (best, alive), poly in states.items():
            following[best, alive & ~held] += poly  # the cell's number is not drawn
            complete = alive & done_here
            if complete:
                best = (complete & -complete).bit_length() - 1
                alive &= ~done_here & ((1 << best) - 1)
            following[best, alive] += poly << width  # drawn: one more cell
        if len(following) > CELL_STATES_MAX:
            raise _TooEntangled
        states = following
    field = (1 << width) - 1
    totals: dict[tuple[int, int], int] = defaultdict(int)
    for (best, _), poly in states.items():
        if best < ranks:
            for size in range(u + 1):
                if count := poly >> (size * width) & field:
                    totals[best, size] += count
    return totals


def paid_counts(paytable: Paytable, method: Method = "auto") -> PaidCounts:
    """How many subsets of the pattern cells, of each size, each pattern is paid for."""
    masks, order, u = _ranked_masks(paytable)
    if method == "subsets" and u > SUBSET_CELLS_MAX:
        raise ValueError(f"{u} cells are too many to enumerate their 2^{u} subsets")
    if method == "subsets" or (method == "auto" and u <= SUBSET_ALWAYS_MAX):
        totals = _count_subsets(masks, u)
    else:
        try:
            totals = _count_cells(masks, u)
        except _TooEntangled:
            if method == "cells" or u > SUBSET_CELLS_MAX:
                raise PaytableError(
                    f"patterns: the {len(masks)} patterns over {u} cells overlap in too many "
                    "ways to compute the exact return; use fewer patterns or fewer cells"
                ) from None
            totals = _count_subsets(masks, u)
    counts = [[0] * (u + 1) for _ in paytable.patterns]
    for (rank, size), count in totals.items():
        counts[order[rank]][size] = count
    return PaidCounts(u, tuple(tuple(row) for row in counts))


def exact_return(paytable: Paytable, method: Method = "auto") -> ExactReturn:
    """The exact return per credit staked, and each pattern's chance of being paid."""
    paid = paid_counts(paytable, method)
    u, pool, balls = paid.cells, paytable.pool, paytable.balls
    # Ways to draw the balls off the pattern cells when ``s`` of them are on them.
    others = [comb(pool - u, balls - s) if 0 <= balls - s <= pool - u else 0 for s in range(u + 1)]
    draws = comb(pool, balls)
    weights = [sum(n * w for n, w in zip(row, others)) for row in paid.counts]
    won = sum(pattern.pays * weight for pattern, weight in zip(paytable.patterns, weights))
    return ExactReturn(
        rtp=Fraction(won, draws),
        probabilities=tuple(Fraction(weight, draws) for weight in weights),
        min_rtp_bp=paytable.min_rtp_bp,
    )


def _fraction(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def render(paytable: Paytable, result: ExactReturn) -> str:
    """The ``bingo-vb-rtp/1`` document: one line of ASCII JSON and a newline."""
    document = {
        "format": OUTPUT_FORMAT,
        "name": paytable.name,
        "rtp": _fraction(result.rtp),
        "rtp_percent": result.rtp_percent,
        "min_rtp_bp": paytable.min_rtp_bp,
        "meets_minimum": result.meets_minimum,
        "patterns": [
            {"name": pattern.name, "pays": pattern.pays, "probability": _fraction(probability)}
            for pattern, probability in zip(paytable.patterns, result.probabilities)
        ],
    }
    return json.dumps(document, ensure_ascii=True) + "\n"


def rtp_json(raw: bytes | str) -> tuple[str, bool]:
    """Paytable text in, ``(result text, meets_minimum)`` out; :class:`PaytableError` if invalid."""
    paytable = load_paytable(raw)
    result = exact_return(paytable)
    return render(paytable, result), result.meets_minimum

"""Exactly uniform random strips of six 90-ball cards.

Every valid strip (an ordered 6-tuple of valid cards holding 1..90 once) is drawn with
the same probability.  The strip is built in three independent stages, each sampled
exactly:

1. The *count matrix*: how many numbers each card holds in each column (6 x 9 entries
   in 1..3, rows summing to 15, columns to 9, 10 x 7, 11).  A matrix ``M`` is drawn
   with probability proportional to the number of strips that have it,

       w(M) = prod_c N_c! / prod_k M[k,c]!  *  prod_k L(M[k]),

   where ``L(v)`` is the number of card layouts with column counts ``v``.  The matrix is
   drawn card by card: card ``k`` takes vector ``v`` with weight ``g(v) * F(rest - v)``,
   where ``F`` counts the weighted completions of the remaining cards.  ``g`` and ``F``
   are symmetric under any permutation of the columns, so ``F`` is tabulated on sorted
   vectors only (177 states) with exact Python integers.
2. Each card's *layout* (which 15 of its 27 cells are filled): uniform among the ``L(v)``
   layouts with its column counts.
3. The *numbers*: in each column the decade's numbers are shared among the cards by a
   uniformly random arrangement of the card labels, ascending down each column.

Randomness comes from the operating system's CSPRNG (``secrets``); nothing is seeded
or stored.  Weights are exact integers of up to 260 bits.  A draw below a weight total
``T`` is made exactly by rejection: the top 50 bits of the uniform number are drawn in
bulk with numpy and compared with the top 50 bits of the cumulative weights; only when
they tie with a boundary (probability below 1e-12) are the low bits drawn and the
comparison finished with Python integers.  The result is exact, not approximately
uniform.
"""

from __future__ import annotations

import bisect
import itertools
import math
import secrets
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Callable

import numpy as np

from protocol.cards import CARDS_PER_STRIP, CELLS, COLUMN_SIZES, COLUMNS, NUMBERS_PER_CARD, ROWS

RandomBytes = Callable[[int], bytes]

_HI_BITS = 50
_SEXTIC = {1: 6, 2: 3, 3: 1}  # 6 / v! : keeps the per-card weight an integer


def _count_key(vectors: np.ndarray, base: int) -> np.ndarray:
    """Encode rows of small non-negative integers as one int64 each."""
    weights = base ** np.arange(vectors.shape[-1], dtype=np.int64)
    return (vectors.astype(np.int64) * weights).sum(axis=-1)


@dataclass(frozen=True)
class LayoutTable:
    """Every valid card layout, grouped by column-count vector."""

    vectors: np.ndarray  # (1554, 9) int8: the column-count vectors, ordered by key
    vector_keys: np.ndarray  # (1554,) int64, ascending
    layout_counts: np.ndarray  # (1554,) int64: L(v)
    offsets: np.ndarray  # (1554,) int64: first layout of each vector in `cell_order`
    cell_order: np.ndarray  # (735210, 15) uint8: filled cells, column by column, top down
    masks: np.ndarray  # (735210,) int64: 27-bit filled-cell masks, same order


@cache
def layout_table() -> LayoutTable:
    """Enumerate the 735,210 layouts: three rows of five, every column 1-3 filled."""
    row_masks = np.array(
        [sum(1 << c for c in combo) for combo in itertools.combinations(range(COLUMNS), 5)],
        dtype=np.int64,
    )
    row_bits = (row_masks[:, None] >> np.arange(COLUMNS)) & 1  # (126, 9)
    n = len(row_masks)
    top, middle, bottom = (a.ravel() for a in np.meshgrid(*(np.arange(n),) * 3, indexing="ij"))
    counts = row_bits[top] + row_bits[middle] + row_bits[bottom]
    valid = (counts >= 1).all(axis=1)
    top, middle, bottom, counts = top[valid], middle[valid], bottom[valid], counts[valid]
    masks = row_masks[top] | (row_masks[middle] << COLUMNS) | (row_masks[bottom] << 2 * COLUMNS)
    keys = _count_key(counts, 4)
    order = np.argsort(keys, kind="stable")
    keys, masks = keys[order], masks[order]
    vector_keys, offsets, layout_counts = np.unique(keys, return_index=True, return_counts=True)
    vectors = np.array([(k >> (2 * np.arange(COLUMNS))) & 3 for k in vector_keys], dtype=np.int8)
    # Filled cells in column-major order (column, then row), as row-major indices: the
    # order in which a card's ascending numbers fill it.
    column_major = np.array([r * COLUMNS + c for c in range(COLUMNS) for r in range(ROWS)])
    filled = ((masks[:, None] >> column_major) & 1).astype(bool)  # (L, 27) column-major
    cell_order = np.broadcast_to(column_major, filled.shape)[filled].reshape(-1, NUMBERS_PER_CARD)
    return LayoutTable(
        vectors=vectors,
        vector_keys=vector_keys,
        layout_counts=layout_counts.astype(np.int64),
        offsets=offsets.astype(np.int64),
        cell_order=cell_order.astype(np.uint8),
        masks=masks,
    )


@dataclass(frozen=True)
class _Level:
    """Sampling tables for one card position: states are sorted remaining column sums."""

    state_keys: np.ndarray  # (S,) int64 ascending: base-16 keys of the sorted states
    totals: list[int]  # exact total weight of each state
    shifts: np.ndarray  # (S,) int64: bits dropped to keep 50
    total_hi: np.ndarray  # (S,) int64
    flat_keys: np.ndarray  # (E,) uint64: state << 50 | cumulative-weight top bits
    flat_hi: np.ndarray  # (E,) int64
    flat_vector: np.ndarray  # (E, 9) int8: the card vector (sorted coordinates)
    segments: list[tuple[int, list[int]]]  # per state: (first entry, exact cumulative weights)


@dataclass(frozen=True)
class CountTable:
    """Exact completion counts of the count matrix, by number of cards still to place."""

    card_weights: dict[tuple[int, ...], int]  # g(v) for every card vector v
    completions: list[dict[tuple[int, ...], int]]  # [m][sorted rest] -> F_m
    levels: list[_Level]  # levels[k]: choosing card k (k = 0..4); card 5 is what remains


def _card_weight(vector: tuple[int, ...], layouts: int) -> int:
    return layouts * math.prod(_SEXTIC[x] for x in vector)


def _candidates(
    state: tuple[int, ...], remaining: int, weights: dict[tuple[int, ...], int]
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Card vectors ``v`` that leave a state the other ``remaining - 1`` cards can fill."""
    lo, hi = remaining - 1, 3 * (remaining - 1)
    out = []
    for v in weights:
        rest = tuple(s - x for s, x in zip(state, v))
        if min(rest) >= lo and max(rest) <= hi:
            out.append((v, rest))
    return out


@cache
def count_table() -> CountTable:
    layouts = layout_table()
    weights = {
        tuple(int(x) for x in v): _card_weight(tuple(int(x) for x in v), int(n))
        for v, n in zip(layouts.vectors, layouts.layout_counts)
    }
    completions: list[dict[tuple[int, ...], int]] = [{} for _ in range(CARDS_PER_STRIP + 1)]
    completions[1] = {tuple(sorted(v)): w for v, w in weights.items()}  # g is symmetric

    def completion(m: int, state: tuple[int, ...]) -> int:
        key = tuple(sorted(state))
        table = completions[m]
        if key not in table:
            if m == 1:
                return 0
            table[key] = sum(
                weights[v] * completion(m - 1, rest) for v, rest in _candidates(key, m, weights)
            )
        return table[key]

    completion(CARDS_PER_STRIP, COLUMN_SIZES)

    levels = []
    for card in range(CARDS_PER_STRIP - 1):
        m = CARDS_PER_STRIP - card
        states = sorted(completions[m], key=lambda s: int(_count_key(np.array(s), 16)))
        state_keys = _count_key(np.array(states), 16)
        totals: list[int] = []
        shifts: list[int] = []
        total_hi: list[int] = []
        segments: list[tuple[int, list[int]]] = []
        flat_keys: list[int] = []
        flat_hi: list[int] = []
        flat_vector: list[tuple[int, ...]] = []
        for index, state in enumerate(states):
            cumulative: list[int] = []
            entries: list[tuple[int, ...]] = []
            running = 0
            for v, rest in _candidates(state, m, weights):
                w = weights[v] * completions[m - 1].get(tuple(sorted(rest)), 0)
                if w:
                    cumulative.append(running)
                    entries.append(v)
                    running += w
            assert running == completions[m][state], "completion table is inconsistent"
            shift = max(0, running.bit_length() - _HI_BITS)
            totals.append(running)
            shifts.append(shift)
            total_hi.append(running >> shift)
            segments.append((len(flat_keys), cumulative))
            for c, v in zip(cumulative, entries):
                flat_keys.append((index << _HI_BITS) | (c >> shift))
                flat_hi.append(c >> shift)
                flat_vector.append(v)
        levels.append(
            _Level(
                state_keys=state_keys,
                totals=totals,
                shifts=np.array(shifts, dtype=np.int64),
                total_hi=np.array(total_hi, dtype=np.int64),
                flat_keys=np.array(flat_keys, dtype=np.uint64),
                flat_hi=np.array(flat_hi, dtype=np.int64),
                flat_vector=np.array(flat_vector, dtype=np.int8),
                segments=segments,
            )
        )
    return CountTable(card_weights=weights, completions=completions, levels=levels)


# --- Exact counts, for the docs and the tests -------------------------------------


def layout_count() -> int:
    """Number of valid card layouts (which cells are filled): 735,210."""
    return int(layout_table().layout_counts.sum())


def card_count() -> int:
    """Number of valid cards (layouts filled with numbers): about 3.67e18."""
    table = layout_table()
    total = 0
    for v, n in zip(table.vectors, table.layout_counts):
        total += int(n) * math.prod(math.comb(size, int(k)) for size, k in zip(COLUMN_SIZES, v))
    return total


def strip_count() -> int:
    """Number of valid strips (ordered 6-tuples of cards holding 1..90 once)."""
    weighted = count_table().completions[CARDS_PER_STRIP][tuple(sorted(COLUMN_SIZES))]
    multinomials = math.prod(math.factorial(n) for n in COLUMN_SIZES)
    total, rest = divmod(weighted * multinomials, 6 ** (COLUMNS * CARDS_PER_STRIP))
    assert rest == 0
    return total


def first_card_vector_distribution() -> dict[tuple[int, ...], Fraction]:
    """Exact probability of each column-count vector for the first card of a strip."""
    table = count_table()
    state = COLUMN_SIZES
    total = table.completions[CARDS_PER_STRIP][tuple(sorted(state))]
    out = {}
    for v, rest in _candidates(state, CARDS_PER_STRIP, table.card_weights):
        w = table.card_weights[v] * table.completions[CARDS_PER_STRIP - 1].get(tuple(sorted(rest)), 0)
        if w:
            out[v] = Fraction(w, total)
    return out


# --- Sampling ---------------------------------------------------------------------


def _uniform_bits(count: int, bits: int, random_bytes: RandomBytes) -> np.ndarray:
    raw = np.frombuffer(random_bytes(8 * count), dtype=np.uint64)
    return (raw >> np.uint64(64 - bits)).astype(np.int64)


def _uniform_below(limits: np.ndarray, random_bytes: RandomBytes) -> np.ndarray:
    """Exactly uniform integers in [0, limit) for limits below 2**31 (rejection)."""
    limits = limits.astype(np.int64)
    out = np.empty(len(limits), dtype=np.int64)
    todo = np.arange(len(limits))
    while len(todo):
        lim = limits[todo]
        draw = _uniform_bits(len(todo), 32, random_bytes)
        ceiling = ((1 << 32) // lim) * lim
        ok = draw < ceiling
        out[todo[ok]] = draw[ok] % lim[ok]
        todo = todo[~ok]
    return out


def _exact_pick(level: _Level, state: int, hi: int, random_bytes: RandomBytes) -> int | None:
    """Finish a draw whose top bits tied a boundary: returns the entry, or None to redraw."""
    shift = int(level.shifts[state])
    low = int.from_bytes(random_bytes((shift + 7) // 8), "big") >> ((-shift) % 8)
    u = (hi << shift) | low
    if u >= level.totals[state]:
        return None
    first, cumulative = level.segments[state]
    return first + bisect.bisect_right(cumulative, u) - 1


def _choose_vectors(level: _Level, rest: np.ndarray, random_bytes: RandomBytes) -> np.ndarray:
    """Draw each strip's next card vector given its remaining column sums."""
    order = np.argsort(rest, axis=1, kind="stable")
    sorted_rest = np.take_along_axis(rest, order, axis=1)
    states = np.searchsorted(level.state_keys, _count_key(sorted_rest, 16))
    entry = np.empty(len(rest), dtype=np.int64)
    todo = np.arange(len(rest))
    while len(todo):
        s = states[todo]
        hi = _uniform_bits(len(todo), _HI_BITS, random_bytes)
        keys = (s.astype(np.uint64) << np.uint64(_HI_BITS)) | hi.astype(np.uint64)
        found = np.searchsorted(level.flat_keys, keys, side="right").astype(np.int64) - 1
        clear = (hi < level.total_hi[s]) & (level.flat_hi[found] != hi)
        entry[todo[clear]] = found[clear]
        tied = (hi <= level.total_hi[s]) & ~clear
        redo = [todo[~clear & ~tied]]
        for i in np.flatnonzero(tied):
            picked = _exact_pick(level, int(s[i]), int(hi[i]), random_bytes)
            if picked is None:
                redo.append(todo[i : i + 1])
            else:
                entry[todo[i]] = picked
        todo = np.concatenate(redo)
    chosen = np.empty_like(rest)
    np.put_along_axis(chosen, order, level.flat_vector[entry], axis=1)
    return chosen


def sample_count_matrices(count: int, random_bytes: RandomBytes = secrets.token_bytes) -> np.ndarray:
    """``count`` count matrices (count, 6, 9), each with probability proportional to its strips."""
    table = count_table()
    rest = np.tile(np.array(COLUMN_SIZES, dtype=np.int8), (count, 1))
    matrices = np.empty((count, CARDS_PER_STRIP, COLUMNS), dtype=np.int8)
    for card, level in enumerate(table.levels):
        chosen = _choose_vectors(level, rest, random_bytes)
        matrices[:, card] = chosen
        rest = rest - chosen
    matrices[:, -1] = rest
    return matrices


_COLUMN_OF_SLOT = np.repeat(np.arange(COLUMNS), COLUMN_SIZES)  # (90,)
_POSITION_IN_COLUMN = np.concatenate([np.arange(n) for n in COLUMN_SIZES])  # (90,)


def _share_numbers(matrices: np.ndarray, random_bytes: RandomBytes) -> np.ndarray:
    """For each strip, the card (0-5) of each number 1..90, uniformly given the counts."""
    count = len(matrices)
    cumulative = np.cumsum(matrices, axis=1)  # (B, 6, 9): cards 0..k hold this many
    per_slot = cumulative[:, :, _COLUMN_OF_SLOT]  # (B, 6, 90)
    template = (per_slot <= _POSITION_IN_COLUMN).sum(axis=1).astype(np.int8)  # (B, 90)
    # Shuffle the labels inside each column with random keys; rows whose keys tie are
    # drawn again, so the arrangement is exactly uniform.
    column_bits = _COLUMN_OF_SLOT.astype(np.uint64) << np.uint64(58)
    labels = np.empty_like(template)
    todo = np.arange(count)
    while len(todo):
        keys = column_bits | (
            np.frombuffer(random_bytes(8 * 90 * len(todo)), dtype=np.uint64).reshape(-1, 90)
            >> np.uint64(6)
        )
        order = np.argsort(keys, axis=1)
        ordered = np.take_along_axis(keys, order, axis=1)
        tie = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        good = todo[~tie]
        labels[good] = np.take_along_axis(template[good], order[~tie], axis=1)
        todo = todo[tie]
    return labels


def fill_strips(
    matrices: np.ndarray, random_bytes: RandomBytes = secrets.token_bytes
) -> np.ndarray:
    """Turn count matrices into strips: (B, 6, 27) uint8 cells, 0 for a blank."""
    table = layout_table()
    count = len(matrices)
    vectors = matrices.reshape(-1, COLUMNS)
    vector_index = np.searchsorted(table.vector_keys, _count_key(vectors, 4))
    choice = _uniform_below(table.layout_counts[vector_index], random_bytes)
    cells_in_order = table.cell_order[table.offsets[vector_index] + choice]  # (6B, 15)

    labels = _share_numbers(matrices, random_bytes)
    # A stable sort on the card label groups the numbers card by card, ascending: the
    # column-major order in which they fill each card.
    by_card = np.argsort(labels, axis=1, kind="stable").astype(np.uint8) + 1  # numbers
    strips = np.zeros((count * CARDS_PER_STRIP, CELLS), dtype=np.uint8)
    np.put_along_axis(strips, cells_in_order.astype(np.int64), by_card.reshape(-1, NUMBERS_PER_CARD), axis=1)
    return strips.reshape(count, CARDS_PER_STRIP, CELLS)


def sample_strips(count: int, random_bytes: RandomBytes = secrets.token_bytes) -> np.ndarray:
    """``count`` exactly uniform random strips as a (count, 6, 27) uint8 array."""
    if count < 0:
        raise ValueError("the number of strips cannot be negative")
    return fill_strips(sample_count_matrices(count, random_bytes), random_bytes)

"""Building sets of distinct cards from whole, exactly uniform strips.

A virtual library (R82.9-12) and a generated physical card set are both made of whole
strips with no two cards holding the same 15 numbers, and none equal to a card of an
*excluded* collection (the registered physical sets, for a library).  A strip that
would bring a duplicate is dropped whole and another is drawn in its place, so every
strip kept is still a uniform strip conditioned on being new.  With 3.67e18 cards a
duplicate in a million cards happens about once in seven million libraries; the rule
is there so that "about" is never "always".
"""

from __future__ import annotations

import secrets
from typing import Callable

import numpy as np

from protocol.cards import CARDS_PER_STRIP, CELLS, fingerprints
from protocol.strips import RandomBytes, sample_strips

BATCH_STRIPS = 10_000  # the sampler's sweet spot: larger batches fall out of the cache


def _duplicated(prints: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    """Mask of the rows of ``prints`` equal to an excluded print or to an earlier row."""
    everything = np.concatenate([excluded, prints]) if len(excluded) else prints
    order = np.lexsort((np.arange(len(everything)), everything[:, 1], everything[:, 0]))
    ordered = everything[order]
    repeat = np.zeros(len(everything), dtype=bool)
    repeat[order[1:]] = (ordered[1:] == ordered[:-1]).all(axis=1)
    return repeat[len(excluded) :]


def build_distinct_strips(
    strip_total: int,
    excluded: np.ndarray | None = None,
    *,
    random_bytes: RandomBytes = secrets.token_bytes,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``strip_total`` strips of distinct cards as a (strip_total * 6, 27) uint8 array."""
    if strip_total < 0:
        raise ValueError("the number of strips cannot be negative")
    excluded = np.empty((0, 2), dtype=np.uint64) if excluded is None else excluded
    cells = np.empty((strip_total * CARDS_PER_STRIP, CELLS), dtype=np.uint8)
    filled = 0
    while filled < strip_total:
        batch = min(BATCH_STRIPS, strip_total - filled)
        cells[filled * CARDS_PER_STRIP : (filled + batch) * CARDS_PER_STRIP] = sample_strips(
            batch, random_bytes
        ).reshape(-1, CELLS)
        filled += batch
        if progress is not None:
            progress(batch * CARDS_PER_STRIP)
    while True:
        repeat = _duplicated(fingerprints(cells), excluded)
        bad_strips = np.unique(np.flatnonzero(repeat) // CARDS_PER_STRIP)
        if not len(bad_strips):
            return cells
        fresh = sample_strips(len(bad_strips), random_bytes).reshape(-1, CELLS)
        rows = (bad_strips[:, None] * CARDS_PER_STRIP + np.arange(CARDS_PER_STRIP)).ravel()
        cells[rows] = fresh

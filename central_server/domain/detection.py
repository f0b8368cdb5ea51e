"""Per-ball detection of every winning pattern over all the cards of a network game.

The line and the bingo come from :class:`protocol.wins.WinDetector` (per-row counters
of missing numbers, an index number -> rows); this module adds what the operator's
extra patterns (R93.11) need, vectorised the same way:

* a :class:`~protocol.patterns.RowsPattern` of ``k`` rows is complete when a card's
  count of complete rows reaches ``k``.  One ball sits in at most one row of a card,
  so the count grows by at most one per ball and "reaches ``k`` on this ball" is exact;
* a :class:`~protocol.patterns.CellsPattern` or
  :class:`~protocol.patterns.PositionsPattern` is a fixed set of numbers on each card
  (a card with a blank in one of the cells can never win it); a
  :class:`_NumberSets` keeps, per card, how many of them are still missing, with an
  index number -> cards like the win detector's.

:meth:`PatternDetector.ball_drawn` says which cards complete which of the still
*wanted* patterns on that ball; deciding that they win (the first ball with any card in
play) is the game's.  Cards are the detector's row indices 0..n-1.
"""

from __future__ import annotations

from typing import Collection

import numpy as np

from protocol.cards import BALLS, COLUMNS, ROWS
from protocol.patterns import CellsPattern, GamePatterns, Pattern, PositionsPattern, RowsPattern
from protocol.wins import WinDetector

_EMPTY = np.empty(0, dtype=np.int64)


def pattern_numbers(pattern: CellsPattern | PositionsPattern, cards: np.ndarray) -> np.ndarray:
    """Per card, the numbers ``pattern`` needs drawn: ``(n, k)``, 0 where a blank makes it unwinnable."""
    cards = np.asarray(cards, dtype=np.uint8)
    if isinstance(pattern, CellsPattern):
        return cards[:, sorted(pattern.cells)]
    columns = []
    for row, nth in sorted(pattern.positions):
        cells = cards[:, row * COLUMNS : (row + 1) * COLUMNS]
        # The nth number of the row is in the first column where the running count of
        # numbers reaches nth + 1 (every row holds exactly five numbers).
        where = np.argmax(np.cumsum(cells != 0, axis=1) == nth + 1, axis=1)
        columns.append(cells[np.arange(len(cells)), where])
    return np.stack(columns, axis=1) if columns else np.empty((len(cards), 0), dtype=np.uint8)


class _NumberSets:
    """Per card a fixed set of numbers and how many of them are still undrawn."""

    def __init__(self, numbers: np.ndarray) -> None:
        eligible = np.flatnonzero((numbers != 0).all(axis=1))
        required = numbers.shape[1]
        flat = np.ascontiguousarray(numbers[eligible]).ravel()
        order = np.argsort(flat, kind="stable")
        self._owner = eligible[order // required].astype(np.int64) if required else _EMPTY
        self._offsets = np.zeros(BALLS + 2, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=BALLS + 1), out=self._offsets[1:])
        # A card that can never complete it is in no number's list: its count never moves.
        self._missing = np.full(len(numbers), required, dtype=np.uint8)

    def ball_drawn(self, number: int) -> np.ndarray:
        cards = self._owner[self._offsets[number] : self._offsets[number + 1]]
        left = self._missing[cards] - np.uint8(1)
        self._missing[cards] = left
        return cards[left == 0]


class PatternDetector:
    """Which cards complete which patterns, ball by ball, over a fixed set of cards."""

    def __init__(self, cards: np.ndarray, patterns: GamePatterns) -> None:
        self._wins = WinDetector(cards)
        self._rows_done = np.zeros(self._wins.card_count, dtype=np.uint8)
        self._patterns: tuple[Pattern, ...] = patterns.patterns
        self._sets = {
            p.name: _NumberSets(pattern_numbers(p, cards))
            for p in self._patterns
            if isinstance(p, (CellsPattern, PositionsPattern))
        }

    @property
    def card_count(self) -> int:
        return self._wins.card_count

    @property
    def drawn(self) -> tuple[int, ...]:
        return self._wins.drawn

    def ball_drawn(self, number: int, wanted: Collection[str]) -> dict[str, np.ndarray]:
        """Mark ``number``; per wanted pattern, the cards (ascending) that complete it now.

        Patterns not in ``wanted`` (already won) are not reported, and a set pattern no
        longer wanted is no longer counted: it can never be asked for again.
        """
        done = self._wins.ball_drawn(number)
        rows = done.rows
        if len(rows):
            self._rows_done[rows] += 1
        found: dict[str, np.ndarray] = {}
        for pattern in self._patterns:
            if pattern.name not in wanted:
                continue
            if isinstance(pattern, RowsPattern):
                if pattern.rows == ROWS:
                    cards = done.cards
                else:
                    cards = rows[self._rows_done[rows] == pattern.rows] if len(rows) else _EMPTY
            else:
                # Each number's cards are listed ascending (a stable sort of the cells).
                cards = self._sets[pattern.name].ball_drawn(number)
            if len(cards):
                found[pattern.name] = cards
        return found

    def rows_missing(self, card: int) -> tuple[int, ...]:
        """How many numbers each row of ``card`` still misses ("n to go", R93.10)."""
        return self._wins.rows_missing(card)


__all__ = ["PatternDetector", "pattern_numbers"]

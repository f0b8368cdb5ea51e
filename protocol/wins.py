"""Win detection for 90-ball bingo: lines and bingos (R87.a, R87.b and its ruling).

A *line* is a card row whose five numbers have all been drawn; a *bingo* is a card
whose fifteen numbers have all been drawn.  The line is won on the first ball on which
any card completes a row, the bingo on the first ball on which any card is complete;
every card that completes on that ball shares the prize, and line and bingo may fall
on the same ball.  A ball sits in at most one row of a card, so a single ball can
never complete two rows of one card: a card counts once by construction.

Two ways to the same answer, both vectorised over all cards in play:

* :func:`completion_balls` / :func:`game_winners` - the whole-game pass used by the
  audit replay: from the draw, the ball count at which each card's first row and whole
  card complete.  Cost: one table look-up per cell, no per-ball loop.
* :class:`WinDetector` - the live per-ball detector used while a game is drawn: an
  index number -> (card, row) built once, and per-row counters of numbers still
  missing.  A ball costs time proportional to the cards holding its number (about a
  sixth of them).  The last ball can be voided (ball recall) and its effect undone.

Cards are a ``(n, 27)`` ``uint8`` array, row-major cells with 0 for a blank, as
produced by :mod:`protocol.strips`; they are assumed valid (see
:mod:`protocol.cards`).  Ball counts are 1-based (the first ball drawn is 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from protocol.cards import BALLS, CELLS, COLUMNS, NUMBERS_PER_CARD, NUMBERS_PER_ROW, ROWS
from protocol.errors import DomainError

#: The ball count reported for a row or card that the draw never completes.
NEVER = 255

# Cards are processed in chunks by the whole-game pass so that the temporary arrays
# of the table look-up stay in cache and memory stays bounded at millions of cards.
_CHUNK = 65536


class DrawError(DomainError):
    """A draw that breaks the rules (a number outside 1-90, a ball drawn twice...)."""


def check_draw(draw: Iterable[int]) -> np.ndarray:
    """The draw as a ``uint8`` array, or :class:`DrawError` naming the first bad ball."""
    balls = [int(n) for n in draw]
    seen: dict[int, int] = {}
    for position, number in enumerate(balls, start=1):
        if not 1 <= number <= BALLS:
            raise DrawError(f"ball {position} is {number}, outside 1-{BALLS}")
        if number in seen:
            raise DrawError(f"ball {position} is {number}, already drawn as ball {seen[number]}")
        seen[number] = position
    return np.array(balls, dtype=np.uint8)


def _as_cards(cards: np.ndarray) -> np.ndarray:
    cards = np.asarray(cards)
    if cards.ndim != 2 or cards.shape[1] != CELLS:
        raise ValueError(f"cards must be an (n, {CELLS}) array, got shape {cards.shape}")
    if cards.dtype != np.uint8:
        cards = cards.astype(np.uint8)
    return cards


# --- Whole-game pass -------------------------------------------------------------


@dataclass(frozen=True)
class CompletionBalls:
    """Per card, the 1-based ball count at which it completes, :data:`NEVER` if not."""

    line: np.ndarray  # (n,) uint8: first complete row
    bingo: np.ndarray  # (n,) uint8: whole card


def completion_balls(cards: np.ndarray, draw: Sequence[int] | np.ndarray) -> CompletionBalls:
    """For every card, the ball counts at which its first row and its whole card complete.

    Each cell is replaced by the ball count at which its number was drawn (blanks by 0,
    numbers never drawn by :data:`NEVER`); a row completes at the largest count of its
    cells, the first line at the smallest row, the card at the largest.
    """
    cards = _as_cards(cards)
    balls = check_draw(draw)
    position = np.full(BALLS + 1, NEVER, dtype=np.uint8)
    position[0] = 0
    position[balls] = np.arange(1, len(balls) + 1, dtype=np.uint8)

    count = len(cards)
    line = np.empty(count, dtype=np.uint8)
    bingo = np.empty(count, dtype=np.uint8)
    for start in range(0, count, _CHUNK):
        cells = position[cards[start : start + _CHUNK]].reshape(-1, ROWS, COLUMNS)
        # An explicit running maximum over the nine columns is about twice as fast as
        # ``max(axis=2)``, whose inner loop is too short to pay its set-up.
        rows = cells[:, :, 0].copy()
        for column in range(1, COLUMNS):
            np.maximum(rows, cells[:, :, column], out=rows)
        stop = start + len(rows)
        np.minimum(np.minimum(rows[:, 0], rows[:, 1]), rows[:, 2], out=line[start:stop])
        np.maximum(np.maximum(rows[:, 0], rows[:, 1]), rows[:, 2], out=bingo[start:stop])
    return CompletionBalls(line=line, bingo=bingo)


@dataclass(frozen=True)
class Prize:
    """Who won a pattern: the 1-based ball count and the winning card indices (ascending)."""

    ball: int | None  # None: the draw never completed the pattern
    cards: np.ndarray  # int64 indices into the cards array

    @property
    def won(self) -> bool:
        return self.ball is not None


def first_completions(balls: np.ndarray) -> Prize:
    """The cards completing on the earliest ball of ``balls`` (a :class:`CompletionBalls` field)."""
    if len(balls) == 0:
        return Prize(None, np.empty(0, dtype=np.int64))
    first = int(balls.min())
    if first == NEVER:
        return Prize(None, np.empty(0, dtype=np.int64))
    return Prize(first, np.flatnonzero(balls == first))


@dataclass(frozen=True)
class GameWinners:
    """The line and bingo winners of a game (R87.a, R87.b)."""

    line: Prize
    bingo: Prize


def game_winners(cards: np.ndarray, draw: Sequence[int] | np.ndarray) -> GameWinners:
    """Line and bingo winners of the whole draw, by the whole-game pass."""
    balls = completion_balls(cards, draw)
    return GameWinners(line=first_completions(balls.line), bingo=first_completions(balls.bingo))


# --- Per-ball detector -----------------------------------------------------------


@dataclass(frozen=True)
class BallCompletions:
    """What one ball completed: card indices (ascending) with a newly complete row, and
    card indices that are now complete.  A card appears at most once in each."""

    number: int
    rows: np.ndarray  # int64 card indices that just completed a row
    cards: np.ndarray  # int64 card indices that just completed the whole card


@dataclass(frozen=True)
class NumberIndex:
    """Compressed index number -> row slots (``card * 3 + row``), CSR-style.

    The slots of number ``n`` are ``slots[offsets[n]:offsets[n + 1]]``, ascending.
    """

    card_count: int
    offsets: np.ndarray  # (92,) int64
    slots: np.ndarray  # (15 n,) int32

    @classmethod
    def build(cls, cards: np.ndarray) -> "NumberIndex":
        """Index ``cards`` one column at a time to keep the temporary arrays small.

        The three cells of column ``c`` of every card, laid out as an ``(n, 3)`` array,
        have flat index ``card * 3 + row``: exactly the row slot.  A stable sort of a
        ``uint8`` array is a radix sort, and it keeps each number's slots ascending.
        Column ``c`` holds only its decade, so concatenating the columns in order
        leaves the whole index sorted by number.
        """
        cards = _as_cards(cards)
        count = len(cards)
        if ROWS * count >= 2**31:
            raise ValueError("too many cards for 32-bit row slots")
        slots = np.empty(NUMBERS_PER_CARD * count, dtype=np.int32)
        per_number = np.zeros(BALLS + 1, dtype=np.int64)
        filled = 0
        for column in range(COLUMNS):
            cells = np.ascontiguousarray(cards[:, column::COLUMNS]).ravel()
            order = np.argsort(cells, kind="stable")
            tally = np.bincount(cells, minlength=BALLS + 1)
            blanks = int(tally[0])
            tally[0] = 0
            per_number += tally
            numbers = len(cells) - blanks
            if filled + numbers > len(slots):
                raise ValueError("cards hold more than 15 numbers each; are they valid?")
            slots[filled : filled + numbers] = order[blanks:]
            filled += numbers
            del order
        if filled != len(slots):
            raise ValueError("cards hold fewer than 15 numbers each; are they valid?")
        offsets = np.zeros(BALLS + 2, dtype=np.int64)
        np.cumsum(per_number, out=offsets[1:])
        return cls(card_count=count, offsets=offsets, slots=slots)

    def slots_of(self, number: int) -> np.ndarray:
        return self.slots[self.offsets[number] : self.offsets[number + 1]]


class WinDetector:
    """Per-ball line and bingo detection over a fixed set of cards.

    ``ball_drawn(n)`` decrements the missing-number counter of every row holding ``n``
    and reports the rows that reached zero; a card whose row just completed is checked
    for its other two rows.  The detector reports completions only; deciding which of
    them win a prize (the first ball with any) belongs to the game.
    """

    def __init__(self, cards: np.ndarray) -> None:
        self._index = NumberIndex.build(cards)
        self._missing = np.full(ROWS * self._index.card_count, NUMBERS_PER_ROW, dtype=np.uint8)
        self._drawn: list[int] = []
        self._is_drawn = [False] * (BALLS + 1)

    @property
    def card_count(self) -> int:
        return self._index.card_count

    @property
    def drawn(self) -> tuple[int, ...]:
        """The balls drawn so far, in order."""
        return tuple(self._drawn)

    def ball_drawn(self, number: int) -> BallCompletions:
        """Mark ``number`` on every card; return what it completed."""
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)):
            raise DrawError(f"a ball is a whole number, got {number!r}")
        number = int(number)
        if not 1 <= number <= BALLS:
            raise DrawError(f"ball {number} is outside 1-{BALLS}")
        if self._is_drawn[number]:
            raise DrawError(f"ball {number} was already drawn")
        self._drawn.append(number)
        self._is_drawn[number] = True
        slots = self._index.slots_of(number)
        # A number sits at most once on a card, so the slots are distinct and a plain
        # gather / scatter is a correct decrement (no ``np.subtract.at`` needed).
        missing = self._missing[slots] - np.uint8(1)
        self._missing[slots] = missing
        done = slots[missing == 0]
        if len(done) == 0:
            empty = np.empty(0, dtype=np.int64)
            return BallCompletions(number, empty, empty)
        row_cards = done.astype(np.int64) // ROWS
        first = row_cards * ROWS
        whole = (
            self._missing[first].astype(np.int16)
            + self._missing[first + 1]
            + self._missing[first + 2]
        ) == 0
        return BallCompletions(number, row_cards, row_cards[whole])

    def last_ball_voided(self) -> int:
        """Undo the last ball (a ball recall by staff); return its number."""
        if not self._drawn:
            raise DrawError("no ball has been drawn, so none can be voided")
        number = self._drawn.pop()
        self._is_drawn[number] = False
        slots = self._index.slots_of(number)
        self._missing[slots] += np.uint8(1)
        return number

    def rows_missing(self, card: int) -> tuple[int, ...]:
        """How many numbers each row of ``card`` still misses ("n to go")."""
        first = ROWS * card
        return tuple(int(x) for x in self._missing[first : first + ROWS])

"""The 90-ball card and the strip (R2.2, R82.1 and its ruling).

A card is a 3 x 9 grid: column ``c`` holds numbers of its decade (1-9, 10-19, ...,
80-90), every row holds 5 numbers, every column 1-3 numbers, ascending downwards.
A strip is 6 cards that together hold 1..90 exactly once.

Cells are stored row-major as 27 integers, 0 for a blank.  The *fingerprint* of a
card is the set of its 15 numbers as a 90-bit integer: two cards with the same
fingerprint are duplicates even if their numbers sat in other rows, because they
would share every bingo.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from protocol.errors import DomainError

ROWS = 3
COLUMNS = 9
CELLS = ROWS * COLUMNS
NUMBERS_PER_ROW = 5
NUMBERS_PER_CARD = ROWS * NUMBERS_PER_ROW
CARDS_PER_STRIP = 6
BALLS = 90

#: First and last number of each column's decade.
COLUMN_RANGES: tuple[tuple[int, int], ...] = tuple(
    (1 if c == 0 else 10 * c, 90 if c == 8 else 10 * c + 9) for c in range(COLUMNS)
)
#: How many numbers each column's decade holds: 9, 10 x 7, 11.
COLUMN_SIZES: tuple[int, ...] = tuple(hi - lo + 1 for lo, hi in COLUMN_RANGES)


class CardError(DomainError):
    """A card or strip that breaks the rules; the message says exactly what."""


def column_of(number: int) -> int:
    """The column (0-8) where ``number`` (1-90) belongs."""
    return 8 if number == 90 else number // 10


def cell_name(index: int) -> str:
    """``r1c1``-style name of a row-major cell index, as in the card file header."""
    return f"r{index // COLUMNS + 1}c{index % COLUMNS + 1}"


def check_cells(cells: Sequence[int]) -> None:
    """Raise :class:`CardError` naming the first rule ``cells`` breaks."""
    if len(cells) != CELLS:
        raise CardError(f"a card has {CELLS} cells, got {len(cells)}")
    for index, number in enumerate(cells):
        if isinstance(number, bool) or not isinstance(number, int):
            raise CardError(f"{cell_name(index)} is not a whole number: {number!r}")
        if number == 0:
            continue
        if not 1 <= number <= BALLS:
            raise CardError(f"{cell_name(index)} holds {number}, outside 1-90")
        column = index % COLUMNS
        if column_of(number) != column:
            lo, hi = COLUMN_RANGES[column]
            raise CardError(
                f"{cell_name(index)} holds {number}, but column {column + 1} takes {lo}-{hi}"
            )
    for row in range(ROWS):
        filled = sum(1 for c in range(COLUMNS) if cells[row * COLUMNS + c])
        if filled != NUMBERS_PER_ROW:
            raise CardError(f"row {row + 1} holds {filled} numbers, not {NUMBERS_PER_ROW}")
    for column in range(COLUMNS):
        values = [cells[r * COLUMNS + column] for r in range(ROWS) if cells[r * COLUMNS + column]]
        if not values:
            raise CardError(f"column {column + 1} is empty; every column holds 1-3 numbers")
        for upper, lower in zip(values, values[1:]):
            if lower == upper:
                raise CardError(f"column {column + 1} holds {upper} twice")
            if lower < upper:
                raise CardError(
                    f"column {column + 1} is not ascending downwards ({upper} above {lower})"
                )


@dataclass(frozen=True, slots=True)
class Card:
    """A valid 90-ball card.  Build it with :meth:`from_cells` or :meth:`from_rows`."""

    cells: tuple[int, ...]

    @classmethod
    def from_cells(cls, cells: Iterable[int]) -> "Card":
        cells = tuple(cells)
        check_cells(cells)
        return cls(cells)

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]]) -> "Card":
        """A card from its three rows of five numbers (the replay format's ``rows``).

        Each number goes to its decade's column, so the rows alone fix the grid.
        """
        if len(rows) != ROWS:
            raise CardError(f"a card has {ROWS} rows, got {len(rows)}")
        cells = [0] * CELLS
        for r, row in enumerate(rows):
            if len(row) != NUMBERS_PER_ROW:
                raise CardError(f"row {r + 1} holds {len(row)} numbers, not {NUMBERS_PER_ROW}")
            for number in row:
                if isinstance(number, bool) or not isinstance(number, int):
                    raise CardError(f"row {r + 1} holds {number!r}, not a whole number")
                if not 1 <= number <= BALLS:
                    raise CardError(f"row {r + 1} holds {number}, outside 1-90")
                index = r * COLUMNS + column_of(number)
                if cells[index]:
                    raise CardError(
                        f"row {r + 1} holds {cells[index]} and {number}, both in column "
                        f"{column_of(number) + 1}"
                    )
                cells[index] = number
        return cls.from_cells(cells)

    @property
    def rows(self) -> tuple[tuple[int, ...], ...]:
        """The numbers of each row, left to right."""
        return tuple(
            tuple(n for n in self.cells[r * COLUMNS : (r + 1) * COLUMNS] if n) for r in range(ROWS)
        )

    @property
    def numbers(self) -> frozenset[int]:
        return frozenset(n for n in self.cells if n)

    @property
    def fingerprint(self) -> int:
        """The 15 numbers as a 90-bit integer (bit n-1 for number n)."""
        return fingerprint(self.cells)

    @property
    def layout(self) -> int:
        """The 27-bit mask of filled cells (bit i for row-major cell i)."""
        return sum(1 << i for i, n in enumerate(self.cells) if n)


#: How many cards the checked constructors below remember: a day's cards come back game after game (every
#: series of a printed set holds the same cards, a network game's library the same layouts).
CHECKED_CARDS_KEPT = 1 << 14


@functools.lru_cache(maxsize=CHECKED_CARDS_KEPT)
def card_of_rows(rows: tuple[tuple[int, ...], ...]) -> Card:
    """:meth:`Card.from_rows`, checked once for rows met again (an audit day holds each card of a set many
    times); :class:`CardError` as it raises."""
    return Card.from_rows(rows)


def whole_rows(rows: Any, kinds: tuple[type, ...] = (list, tuple)) -> bool:
    """Whether ``rows`` are rows of whole numbers: ``kinds`` of ``kinds`` of ``int`` (``True`` is not ``1``
    here; a JSON document's rows are lists)."""
    return type(rows) in kinds and all(type(row) in kinds and all(type(n) is int for n in row) for row in rows)


def card_from_rows(rows: Sequence[Sequence[int]]) -> Card:
    """:meth:`Card.from_rows` for rows of a document (lists of JSON integers), through :func:`card_of_rows`
    when they are whole numbers, as they are but once in a bad file."""
    if whole_rows(rows):
        return card_of_rows(tuple(tuple(row) for row in rows))
    return Card.from_rows(rows)


@functools.lru_cache(maxsize=CHECKED_CARDS_KEPT)
def card_of_cells(cells: tuple[int, ...]) -> Card:
    """:meth:`Card.from_cells`, checked once for cells met again; :class:`CardError` as it raises."""
    return Card.from_cells(cells)


def fingerprint(cells: Iterable[int]) -> int:
    """The set of a card's numbers as a 90-bit integer (bit n-1 for number n)."""
    mask = 0
    for n in cells:
        if n:
            mask |= 1 << (n - 1)
    return mask


def check_strip(cards: Sequence[Card]) -> None:
    """Raise :class:`CardError` unless ``cards`` are 6 cards holding 1..90 exactly once."""
    if len(cards) != CARDS_PER_STRIP:
        raise CardError(f"a strip has {CARDS_PER_STRIP} cards, got {len(cards)}")
    seen: dict[int, int] = {}
    for position, card in enumerate(cards, start=1):
        for n in card.numbers:
            if n in seen:
                raise CardError(f"{n} appears on card {seen[n]} and card {position} of the strip")
            seen[n] = position
    missing = sorted(set(range(1, BALLS + 1)) - set(seen))
    if missing:
        raise CardError(f"the strip lacks {', '.join(map(str, missing))}")


# --- Whole arrays of cards (libraries of a million cards are checked at once) --------

_COLUMN_LO = [lo for lo, _ in COLUMN_RANGES] * ROWS
_COLUMN_HI = [hi for _, hi in COLUMN_RANGES] * ROWS


def invalid_rows(cells: np.ndarray) -> np.ndarray:
    """Indices of the rows of a (n, 27) integer array that are not valid cards.

    The same rules as :func:`check_cells`, vectorised; call :func:`check_cells` on a
    reported row for the message.
    """
    values = np.asarray(cells).astype(np.int64).reshape(-1, ROWS, COLUMNS)
    filled = values != 0
    lo = np.array(_COLUMN_LO).reshape(ROWS, COLUMNS)
    hi = np.array(_COLUMN_HI).reshape(ROWS, COLUMNS)
    bad = (filled & ((values < lo) | (values > hi))).any(axis=(1, 2))
    bad |= filled.sum(axis=2).min(axis=1) != NUMBERS_PER_ROW
    bad |= filled.sum(axis=2).max(axis=1) != NUMBERS_PER_ROW
    bad |= ~filled.any(axis=1).all(axis=1)
    # Ascending down each column: compare every filled pair of rows (r1 above r2).
    for upper in range(ROWS):
        for lower in range(upper + 1, ROWS):
            both = filled[:, upper] & filled[:, lower]
            bad |= (both & (values[:, lower] <= values[:, upper])).any(axis=1)
    return np.flatnonzero(bad)


def fingerprints(cells: np.ndarray) -> np.ndarray:
    """The 90-bit number sets of a (n, 27) array of cards as an (n, 2) uint64 array."""
    values = np.asarray(cells)
    out = np.zeros((len(values), 2), dtype=np.uint64)
    one = np.uint64(1)
    # Column by column, so a million cards need a few MB, not a (n, 27) uint64 copy.
    for index in range(values.shape[1]):
        column = values[:, index].astype(np.uint64)
        filled = column != 0
        bit = np.where(filled, column - one, 0).astype(np.uint64)
        word = (bit >> np.uint64(6)).astype(np.intp)  # 0 for 1..64, 1 for 65..90
        flags = np.where(filled, one << (bit & np.uint64(63)), np.uint64(0))
        for half in (0, 1):
            out[:, half] |= np.where(word == half, flags, np.uint64(0))
    return out


def duplicate_pairs(prints: np.ndarray) -> list[tuple[int, int]]:
    """Pairs (first, later) of row indices whose fingerprints are equal, in row order."""
    if len(prints) < 2:
        return []
    order = np.lexsort((np.arange(len(prints)), prints[:, 1], prints[:, 0]))
    ordered = prints[order]
    same = (ordered[1:] == ordered[:-1]).all(axis=1)
    pairs: list[tuple[int, int]] = []
    for i in np.flatnonzero(same):
        # Walk back to the first of a run so every later copy pairs with the original.
        j = i
        while j > 0 and same[j - 1]:
            j -= 1
        pairs.append((int(order[j]), int(order[i + 1])))
    pairs.sort(key=lambda pair: pair[1])
    return pairs

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

from dataclasses import dataclass
from typing import Iterable, Sequence

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

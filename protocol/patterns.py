"""Winning patterns: the line, the bingo and the operator's own (R87, R93.11, R94.2).

A pattern is one of two kinds:

* :class:`RowsPattern` - a rule on whole rows: any ``rows`` complete rows of the card.
  The line is any one row, the bingo all three, "two lines" any two.
* :class:`CellsPattern` - a set of cells of the 3 x 9 grid (row-major indices 0-26),
  every one of which must hold a number that has been drawn.  A blank cell cannot be
  marked, so a card whose blank falls in the pattern cannot win it.  Because the
  blanks of 90-ball cards move from card to card, the operator's shapes are usually
  better written with :func:`numbered_positions`: "the first and last number of the
  top and bottom rows" (:data:`FOUR_CORNERS`) is a shape every card has.

Patterns are decided from the order of the draw: :func:`completion_ball` says on which
ball (1-based) a card first satisfies a pattern, which is what claims (R87: only cards
completing on the winning ball share) and the interconnected game's end need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence, Union

from protocol.cards import CELLS, NUMBERS_PER_ROW, ROWS, Card
from protocol.errors import DomainError


class PatternError(DomainError):
    """A pattern or a set of patterns that cannot be played; the message says why."""


@dataclass(frozen=True)
class RowsPattern:
    """Any ``rows`` complete rows of the card."""

    name: str
    rows: int

    def __post_init__(self) -> None:
        _check_name(self.name)
        if isinstance(self.rows, bool) or not isinstance(self.rows, int) or not 1 <= self.rows <= ROWS:
            raise PatternError(f"pattern {self.name!r} needs 1-{ROWS} rows, not {self.rows!r}")


@dataclass(frozen=True)
class CellsPattern:
    """Every listed cell of the grid (row-major 0-26) holds a drawn number."""

    name: str
    cells: frozenset[int]

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not self.cells:
            raise PatternError(f"pattern {self.name!r} lists no cell")
        for cell in self.cells:
            if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell < CELLS:
                raise PatternError(f"pattern {self.name!r} lists cell {cell!r}, outside 0-{CELLS - 1}")


@dataclass(frozen=True)
class PositionsPattern:
    """The numbers at the given (row, n-th number of the row) positions are drawn.

    Every row of a 90-ball card holds exactly five numbers, so positions are the same
    on every card even though the blanks are not.
    """

    name: str
    positions: frozenset[tuple[int, int]]

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not self.positions:
            raise PatternError(f"pattern {self.name!r} lists no position")
        for position in self.positions:
            if not (
                isinstance(position, tuple)
                and len(position) == 2
                and all(type(x) is int for x in position)
                and 0 <= position[0] < ROWS
                and 0 <= position[1] < NUMBERS_PER_ROW
            ):
                raise PatternError(
                    f"pattern {self.name!r} lists position {position!r}; rows are 0-{ROWS - 1} "
                    f"and numbers in a row 0-{NUMBERS_PER_ROW - 1}"
                )


Pattern = Union[RowsPattern, CellsPattern, PositionsPattern]


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or not name.islower():
        raise PatternError(f"a pattern name is a lower-case word like 'two_lines', not {name!r}")


LINE = RowsPattern("line", 1)
TWO_LINES = RowsPattern("two_lines", 2)
BINGO = RowsPattern("bingo", ROWS)
#: The first and last number of the top and bottom rows.
FOUR_CORNERS = PositionsPattern(
    "four_corners",
    frozenset({(0, 0), (0, NUMBERS_PER_ROW - 1), (ROWS - 1, 0), (ROWS - 1, NUMBERS_PER_ROW - 1)}),
)


def numbered_positions(pattern: PositionsPattern, card: Card) -> tuple[int, ...]:
    """The numbers of ``card`` at the pattern's positions."""
    rows = card.rows
    return tuple(rows[row][nth] for row, nth in sorted(pattern.positions))


def completion_ball(pattern: Pattern, card: Card, drawn: Sequence[int]) -> int | None:
    """The 1-based ball count on which ``card`` first satisfies ``pattern``, or ``None``."""
    position = {ball: count for count, ball in enumerate(drawn, start=1)}
    never = len(drawn) + 1

    def when(numbers: Iterable[int]) -> int:
        # A set of numbers is complete on the ball of its last-drawn number.
        return max((position.get(n, never) for n in numbers), default=never)

    if isinstance(pattern, RowsPattern):
        row_done = sorted(when(row) for row in card.rows)
        done = row_done[pattern.rows - 1]
    elif isinstance(pattern, CellsPattern):
        numbers = [card.cells[cell] for cell in pattern.cells]
        done = never if 0 in numbers else when(numbers)
    else:
        done = when(numbered_positions(pattern, card))
    return None if done == never else done


def is_satisfied(pattern: Pattern, card: Card, marked: Iterable[int]) -> bool:
    """Whether the card's marked numbers satisfy the pattern, whatever their order."""
    marked = frozenset(marked)
    return completion_ball(pattern, card, sorted(marked)) is not None


@dataclass(frozen=True)
class GamePatterns:
    """The winning patterns of a game: the line and the bingo always (R94.2), then others.

    Order is the order of announcement; names are unique.
    """

    patterns: tuple[Pattern, ...]

    def __post_init__(self) -> None:
        names = [p.name for p in self.patterns]
        if len(set(names)) != len(names):
            raise PatternError("two winning patterns of a game share a name")
        for required in (LINE, BINGO):
            if required not in self.patterns:
                raise PatternError(
                    f"every game plays the {required.name} (R94.2); it is missing or redefined"
                )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.patterns)

    def __getitem__(self, name: str) -> Pattern:
        for p in self.patterns:
            if p.name == name:
                return p
        raise PatternError(f"this game plays no pattern named {name!r}")

    def game_over(self, won: Iterable[str]) -> bool:
        """The interconnected game ends when a card is complete or every pattern is won (R93.12)."""
        won = set(won)
        return BINGO.name in won or won >= set(self.names)


@dataclass(frozen=True)
class PrizeShare:
    """A winning pattern, its share of the sales and what the previous game carried to it: a network
    game's prize (its configuration), and a ``rules.patterns`` entry of an audit replay."""

    pattern: Pattern
    basis_points: int
    carry_in_cents: int = 0

    @property
    def name(self) -> str:
        return self.pattern.name


#: The traditional game's patterns (R87).
TRADITIONAL_PATTERNS = GamePatterns((LINE, BINGO))


def pattern_to_dict(pattern: Pattern) -> dict[str, object]:
    """A pattern as operator configuration or journal data."""
    if isinstance(pattern, RowsPattern):
        return {"name": pattern.name, "rows": pattern.rows}
    if isinstance(pattern, CellsPattern):
        return {"name": pattern.name, "cells": sorted(pattern.cells)}
    return {"name": pattern.name, "positions": [list(p) for p in sorted(pattern.positions)]}


def pattern_from_dict(data: Mapping[str, object]) -> Pattern:
    """The pattern a configuration entry describes, or :class:`PatternError`."""
    kinds = {"rows", "cells", "positions"} & set(data)
    if len(kinds) != 1 or set(data) - kinds != {"name"}:
        raise PatternError(
            "a pattern has a name and exactly one of 'rows', 'cells' or 'positions'"
        )
    name = data["name"]
    if not isinstance(name, str):
        raise PatternError(f"a pattern name is text, not {name!r}")
    if "rows" in data:
        rows = data["rows"]
        if isinstance(rows, bool) or not isinstance(rows, int):
            raise PatternError(f"pattern {name!r}: rows is a whole number, not {rows!r}")
        return RowsPattern(name, rows)
    if "cells" in data:
        cells = data["cells"]
        if not isinstance(cells, list) or not all(type(c) is int for c in cells):
            raise PatternError(f"pattern {name!r}: cells is a list of cell indices")
        return CellsPattern(name, frozenset(cells))
    positions = data["positions"]
    if not isinstance(positions, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) for p in positions
    ):
        raise PatternError(f"pattern {name!r}: positions is a list of [row, n] pairs")
    return PositionsPattern(name, frozenset((p[0], p[1]) for p in positions))


"""One video bingo play (FORMATS.md section 4, R3.5.d): cards, balls, the outcome in credits.

A play holds 1..``cards_max`` cards, each a ``rows`` x ``columns`` grid of distinct
numbers of 1..``pool`` (a :data:`Card` lists them row by row), each staked one credit.
``balls`` distinct balls are drawn; every card is paid the highest ``pays`` among the
patterns it completes (ties to the pattern listed first), or nothing.

Randomness is passed in as a :class:`RandomSource`: any object with ``randrange(n)``
returning a uniform integer of ``0..n-1``, so the kernel's CSPRNG in production
and a seeded ``random.Random`` in tests both fit as they are.  Cards and balls are
uniform samples without replacement (a partial Fisher-Yates shuffle: one ``randrange``
a number).  The cards of one play are dealt independently of each other: two cards of
a play may share numbers; each card's return is the paytable's whatever the others hold.

:meth:`VideoBingoGame.outcome` settles given cards and balls without randomness (a play
recalled or replayed from the journal settles the same way); :meth:`VideoBingoGame.play`
draws the balls and settles.  A play's few cards are settled one by one
(:meth:`VideoBingoGame.paid_index`, on whole numbers); simulations settle millions at
once with :meth:`VideoBingoGame.paid_patterns`, the same rule on arrays.  A test holds the
two to the same answer on every drawn/undrawn state of a card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, Sequence

import numpy as np

from protocol.videobingo.errors import PlayError
from protocol.videobingo.paytable import Paytable

#: A card's numbers, row by row: cell ``(row, column)`` holds ``card[row * columns + column]``.
Card = tuple[int, ...]

#: :meth:`VideoBingoGame.paid_patterns` for a card that completes no pattern.
NOTHING = -1

# The evaluation works on this many cards at a time, to bound its temporary arrays.
_CHUNK = 1 << 16


class RandomSource(Protocol):
    """Where a play's randomness comes from: ``randrange(n)`` uniform on ``0..n-1``."""

    def randrange(self, stop: int, /) -> int: ...


@dataclass(frozen=True)
class CardResult:
    """What one card is paid: the pattern's name (``None`` if none) and the credits."""

    pattern: str | None
    credits: int


@dataclass(frozen=True)
class PlayOutcome:
    """A settled play: what was staked, what was drawn and what each card won, in credits."""

    cards: tuple[Card, ...]
    balls: tuple[int, ...]
    results: tuple[CardResult, ...]

    @property
    def stake(self) -> int:
        """Credits staked: one a card."""
        return len(self.cards)

    @property
    def won(self) -> int:
        """Credits won by all the cards of the play."""
        return sum(result.credits for result in self.results)


_INT = frozenset({int})


def _whole_numbers(values: Iterable[object], what: str) -> tuple[int, ...]:
    if isinstance(values, tuple) and set(map(type, values)) <= _INT:
        return values  # type: ignore[return-value]  # the common case, in one pass
    numbers = []
    for value in values:
        # bool is an int in Python, and a float would be truncated silently.
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise PlayError(f"{what} holds {value!r}, not a whole number")
        numbers.append(int(value))
    return tuple(numbers)


def _sample(population: int, count: int, rng: RandomSource) -> tuple[int, ...]:
    """``count`` distinct numbers of ``1..population`` in uniformly random order.

    A source that draws the same shuffle in one call (``partial_shuffle``, the kernel's in
    production) is asked for it whole."""
    whole = getattr(rng, "partial_shuffle", None)
    if whole is not None:
        return whole(population, count)  # type: ignore[no-any-return]
    numbers = list(range(1, population + 1))
    for i in range(count):
        j = i + rng.randrange(population - i)
        numbers[i], numbers[j] = numbers[j], numbers[i]
    return tuple(numbers[:count])


class VideoBingoGame:
    """The game of one paytable: deal, draw, settle.  Built once per paytable loaded."""

    def __init__(self, paytable: Paytable) -> None:
        self.paytable = paytable
        n = paytable.cells
        self._words = (n + 63) // 64
        ranked = paytable.priority
        # Pattern masks best-paid first, as 64-bit words, so that the first complete
        # pattern along a row of the evaluation is the one paid.
        masks = np.zeros((len(ranked), self._words), dtype=np.uint64)
        for rank, index in enumerate(ranked):
            mask = paytable.patterns[index].mask
            for word in range(self._words):
                masks[rank, word] = (mask >> (64 * word)) & (2**64 - 1)
        self._masks = masks
        self._index_of_rank = np.array([*ranked, NOTHING], dtype=np.int64)
        # The same masks as whole numbers, best-paid first, for one play at a time.
        self._ranked = tuple((paytable.patterns[index].mask, index) for index in ranked)
        self._result_of = {NOTHING: CardResult(None, 0), **{
            index: CardResult(pattern.name, pattern.pays) for index, pattern in enumerate(paytable.patterns)}}

    # --- Randomness -------------------------------------------------------------

    def deal(self, count: int, rng: RandomSource) -> tuple[Card, ...]:
        """``count`` new cards, each ``rows * columns`` distinct numbers of the pool."""
        self._check_count(count)
        return tuple(_sample(self.paytable.pool, self.paytable.cells, rng) for _ in range(count))

    def draw(self, rng: RandomSource) -> tuple[int, ...]:
        """The balls of one play, in the order drawn."""
        return _sample(self.paytable.pool, self.paytable.balls, rng)

    def play(self, cards: Sequence[Sequence[int]], rng: RandomSource) -> PlayOutcome:
        """Draw the balls for ``cards`` (new or kept from the previous play) and settle."""
        checked = self.check_cards(cards)
        return self._settle(checked, self.draw(rng))

    # --- Settlement -------------------------------------------------------------

    def outcome(self, cards: Sequence[Sequence[int]], balls: Iterable[int]) -> PlayOutcome:
        """Settle a play whose cards and balls are known (a recall or a replay)."""
        return self._settle(self.check_cards(cards), self.check_balls(balls))

    def _settle(self, cards: tuple[Card, ...], balls: tuple[int, ...]) -> PlayOutcome:
        drawn = set(balls)
        results = []
        for card in cards:
            hit = 0
            for cell, number in enumerate(card):
                if number in drawn:
                    hit |= 1 << cell
            results.append(self._result_of[self.paid_index(hit)])
        return PlayOutcome(cards, balls, tuple(results))

    def paid_index(self, hit: int) -> int:
        """The pattern one card is paid when the cells drawn are the bits of ``hit`` (cell ``i``
        is bit ``i``): as :meth:`paid_patterns` gives it for a row, for one card without arrays."""
        for mask, index in self._ranked:
            if hit & mask == mask:
                return index
        return NOTHING

    def hits(self, cards: np.ndarray, balls: np.ndarray) -> np.ndarray:
        """Which cells are drawn: ``cards`` ``(plays, k, cells)``, ``balls`` ``(plays, balls)``.

        Returns a boolean ``(plays, k, cells)`` array.  The inputs are assumed valid.
        """
        plays = balls.shape[0]
        drawn = np.zeros((plays, self.paytable.pool + 1), dtype=bool)
        np.put_along_axis(drawn, balls, True, axis=1)
        flat = cards.reshape(plays, -1)
        return np.take_along_axis(drawn, flat, axis=1).reshape(cards.shape)

    def paid_patterns(self, hits: np.ndarray) -> np.ndarray:
        """For each card of a ``(cards, cells)`` boolean array of drawn cells, the paid pattern.

        The pattern's index in the paytable (highest ``pays`` among those complete, ties
        to the one listed first), or :data:`NOTHING`.
        """
        hits = np.asarray(hits, dtype=bool)
        out = np.empty(hits.shape[0], dtype=np.int64)
        nothing = len(self._masks)
        for start in range(0, hits.shape[0], _CHUNK):
            chunk = hits[start : start + _CHUNK]
            packed = np.zeros((chunk.shape[0], self._words * 8), dtype=np.uint8)
            bits = np.packbits(chunk, axis=1, bitorder="little")
            packed[:, : bits.shape[1]] = bits
            drawn = packed.view("<u8")
            complete = ((drawn[:, None, :] & self._masks[None]) == self._masks[None]).all(axis=2)
            rank = np.where(complete.any(axis=1), complete.argmax(axis=1), nothing)
            out[start : start + _CHUNK] = self._index_of_rank[rank]
        return out

    # --- Validation -------------------------------------------------------------

    def _check_count(self, count: int) -> None:
        if not 1 <= count <= self.paytable.cards_max:
            raise PlayError(
                f"a play holds 1 to {self.paytable.cards_max} cards on this paytable, not {count}"
            )

    def check_cards(self, cards: Sequence[Sequence[int]]) -> tuple[Card, ...]:
        """The cards as tuples, or :class:`PlayError` naming the first card at fault."""
        self._check_count(len(cards))
        pool, cells = self.paytable.pool, self.paytable.cells
        checked = []
        for position, card in enumerate(cards, start=1):
            numbers = _whole_numbers(card, f"card {position}")
            if len(numbers) != cells:
                raise PlayError(f"card {position} holds {len(numbers)} numbers, not {cells}")
            if not 1 <= min(numbers) or not max(numbers) <= pool:
                outside = next(number for number in numbers if not 1 <= number <= pool)
                raise PlayError(f"card {position} holds {outside}, outside 1-{pool}")
            if len(set(numbers)) != cells:
                raise PlayError(f"card {position} holds a number twice")
            checked.append(numbers)
        return tuple(checked)

    def check_balls(self, balls: Iterable[int]) -> tuple[int, ...]:
        """The balls as a tuple, or :class:`PlayError` naming the first bad ball."""
        drawn = _whole_numbers(balls, "the draw")
        pool = self.paytable.pool
        seen: set[int] = set()
        for position, number in enumerate(drawn, start=1):
            if not 1 <= number <= pool:
                raise PlayError(f"ball {position} is {number}, outside 1-{pool}")
            if number in seen:
                raise PlayError(f"ball {position} is {number}, already drawn")
            seen.add(number)
        if len(drawn) != self.paytable.balls:
            raise PlayError(f"a play draws {self.paytable.balls} balls, not {len(drawn)}")
        return drawn

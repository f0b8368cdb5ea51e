"""The card catalog the hall game reads: series and the layouts of their card sets.

The game module needs two facts about paper cards it does not own: what a series is
(its card set, face value and number of cards) and which 15 numbers card ``k`` of a
card set holds.  Both are configuration registered with ``bingo cards``, not game
state, so they are read through this small port:

* :class:`StoreCardCatalog` - the database's card sets and series
  (:mod:`hall_server.store.cards`), read once into memory when the server starts (and
  again after a registration, with :meth:`StoreCardCatalog.reload`, or when a game asks
  for a series registered while the hall runs), so that a game command does not wait on
  the database while it decides;
* :class:`FakeCardCatalog` - the same port over data a test passes in.

How many cards of a series were sold before is *not* taken from here as the last
word: the journal knows what the hall sold, and the game module keeps that count
itself (the catalog's ``last_sold`` is only the starting point, for cards sold before
the hall server kept the series).
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Protocol

import numpy as np
from sqlalchemy import Engine

from hall_server.store.cards import VIRTUAL_SERIES_NUMBER, add_series, list_sets, set_cards
from protocol.cards import CELLS
from protocol.errors import N_, DomainError
from protocol.sale import Series


class CatalogError(DomainError):
    """A series or card set the catalog does not know."""


class CardCatalog(Protocol):
    """Series by number and card-set layouts by name."""

    def series(self, number: int) -> Series:
        """Series ``number`` as registered; :class:`CatalogError` if there is none."""
        ...

    def all_series(self) -> list[Series]:
        """Every registered series, by number."""
        ...

    def layouts(self, card_set: str) -> np.ndarray:
        """The cells of every card of ``card_set``: an ``(n, 27)`` ``uint8`` array, card k at k-1."""
        ...


class FakeCardCatalog:
    """A catalog over data held in memory; implements :class:`CardCatalog`."""

    def __init__(self, series: Iterable[Series], sets: Mapping[str, np.ndarray]) -> None:
        self._sets = {name: _checked_cells(name, cells) for name, cells in sets.items()}
        self._series: dict[int, Series] = {}
        for one in series:
            if one.card_set not in self._sets:
                raise CatalogError(
                    N_("series {number} names an unknown card set {name!r}"), number=one.number, name=one.card_set
                )
            if one.card_count > len(self._sets[one.card_set]):
                raise CatalogError(
                    N_("series {number} prints {count} cards, but card set {name!r} holds {size}"),
                    number=one.number, count=one.card_count, name=one.card_set, size=len(self._sets[one.card_set]),
                )
            self._series[one.number] = one

    def all_series(self) -> list[Series]:
        return sorted(self._series.values(), key=lambda one: one.number)

    def series(self, number: int) -> Series:
        try:
            return self._series[number]
        except KeyError:
            raise CatalogError(N_("there is no series {number}; register it before selling it"), number=number) from None

    def layouts(self, card_set: str) -> np.ndarray:
        try:
            return self._sets[card_set]
        except KeyError:
            raise CatalogError(N_("there is no card set named {name!r}"), name=card_set) from None


class StoreCardCatalog(FakeCardCatalog):
    """The database's card sets and series, held in memory; implements :class:`CardCatalog`.

    A hall has a few card sets of some thousands of cards (27 bytes each), so holding
    them costs little and keeps database reads out of the game's decisions.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.reload()

    def reload(self) -> None:
        """Read the card sets and series again (after one was registered)."""
        sets = list_sets(self.engine)
        series = [
            Series(s.number, s.card_set, s.face_value_cents, s.card_count, s.last_sold)
            for card_set in sets
            for s in card_set.series
        ]
        super().__init__(series, {card_set.name: set_cards(self.engine, card_set.name)[1] for card_set in sets})

    def register_next(self, last_sold: Callable[[Series], int]) -> Series | None:
        """When every series is sold out (``last_sold``: a series' last card sold), register the next number
        with the last series' card set, face value and card count, as ``bingo cards add-series`` does, and
        return it; None while a series has cards left."""
        every = self.all_series()
        if not every or any(last_sold(one) < one.card_count for one in every):
            return None
        last = every[-1]
        number = last.number + 1
        if number == VIRTUAL_SERIES_NUMBER:  # the terminals' virtual cards are played under that one
            number += 1
        add_series(self.engine, last.card_set, number, last.face_value_cents, last.card_count)
        self.reload()
        return self.series(number)

    def series(self, number: int) -> Series:
        """Series ``number``; one registered while the hall runs (``bingo cards add-series``) is read then."""
        if number not in self._series and any(one.number == number for card_set in list_sets(self.engine)
                                              for one in card_set.series):
            self.reload()  # the layouts too, only when there is a series to read (not at every unknown number)
        return super().series(number)


def _checked_cells(name: str, cells: np.ndarray) -> np.ndarray:
    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[1] != CELLS:
        raise CatalogError(N_("card set {name!r}: cells must be an (n, {cells}) array, not {shape}"),
                           name=name, cells=CELLS, shape=cells.shape)
    return cells.astype(np.uint8, copy=False)

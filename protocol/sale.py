"""Numbering of the paper cards sold in a game (R82.4, R82.5, R82.6).

Physical cards are sold consecutively by number within a series.  A game's sale in a
series starts at card 1 of a fresh series or at the card after the last one sold in an
earlier game, the same day or before (R82.5).  If the series runs out, a second series
of the same card set and face value may be sold in the same game, from card 1 to at most
the card before the one where the first series started (R82.6): every series of a set
prints the same layouts (the ruling in REGULATION.md), so that window is exactly what
keeps two identical cards out of one game.  No sale opens before the previous game's
cards are collected (R82.4).

:class:`GameSale` is a pure object: it takes the series as they stood when the sale
opened, accepts or refuses each sale with the reason, and reports what was sold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from protocol.errors import DomainError

#: R83.7: at most 96 cards per player per terminal per game, paper hall or network game.
MAX_CARDS_PER_PLAYER = 96


class SaleRefused(DomainError):
    """A sale that would break the numbering rules; the message says which and why."""


@dataclass(frozen=True)
class Series:
    """A numbered print run of a card set, as it stands before a game's sale."""

    number: int
    card_set: str
    face_value_cents: int
    card_count: int
    last_sold: int = 0  # 0: nothing sold yet

    @property
    def exhausted(self) -> bool:
        return self.last_sold >= self.card_count

    @property
    def next_card(self) -> int:
        """The next card to sell (R82.5): after the last one sold, in any earlier game."""
        if self.exhausted:
            raise SaleRefused(f"series {self.number} is sold out ({self.card_count} cards)")
        return self.last_sold + 1


@dataclass(frozen=True)
class SoldRange:
    """Cards ``first``..``last`` of a series, sold by one seller."""

    series: int
    first: int
    last: int
    seller: str

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class SeriesWindow:
    """The cards of one series that this game may sell: ``first``..``last``."""

    series: Series
    first: int
    last: int


def second_series_window(first: SeriesWindow, second: Series) -> SeriesWindow:
    """The window of the complementary second series of a game (R82.6), or why not."""
    if second.number == first.series.number:
        raise SaleRefused(f"series {second.number} is already the game's first series")
    if second.card_set != first.series.card_set:
        raise SaleRefused(
            f"series {second.number} belongs to card set {second.card_set!r}, not "
            f"{first.series.card_set!r}: a second series must print the same cards"
        )
    if second.face_value_cents != first.series.face_value_cents:
        raise SaleRefused(
            f"series {second.number} has face value {second.face_value_cents} cents, the first "
            f"series {first.series.face_value_cents}: a second series must have the same face value"
        )
    if second.last_sold:
        raise SaleRefused(
            f"series {second.number} already sold cards up to {second.last_sold}; a second "
            "series starts at card 1, so it must be a fresh series"
        )
    last = min(first.first - 1, second.card_count)
    if last < 1:
        raise SaleRefused(
            f"the first series started at card {first.first}, so every card of the set is "
            "already in play; no second series can be sold in this game"
        )
    return SeriesWindow(second, 1, last)


@dataclass
class GameSale:
    """The paper-card sale of one game: at most two series of one card set."""

    windows: list[SeriesWindow] = field(default_factory=list)
    sold: list[SoldRange] = field(default_factory=list)
    closed: bool = False

    @classmethod
    def open(cls, series: Series, *, previous_game_collected: bool) -> "GameSale":
        """Open the sale on ``series`` (R82.4, R82.5)."""
        if not previous_game_collected:
            raise SaleRefused(
                "the previous game's cards have not been collected; no card may be sold yet"
            )
        first = series.next_card
        return cls(windows=[SeriesWindow(series, first, series.card_count)])

    def next_card(self, series_number: int) -> int:
        """The next card of ``series_number`` to sell in this game."""
        window = self._window(series_number)
        sold = [r for r in self.sold if r.series == series_number]
        following = sold[-1].last + 1 if sold else window.first
        if following > window.last:
            raise SaleRefused(
                f"series {series_number} has no card left to sell in this game "
                f"(its window ends at card {window.last})"
            )
        return following

    def add_second_series(self, second: Series) -> SeriesWindow:
        """Open the complementary second series once the first has run out (R82.6)."""
        self._check_open()
        if len(self.windows) > 1:
            raise SaleRefused("this game already sells a second series; a third would repeat cards")
        first = self.windows[0]
        remaining = first.last - self._last_sold(first.series.number)
        if remaining > 0:
            raise SaleRefused(
                f"series {first.series.number} still has {remaining} card(s) to sell in this "
                "game; a second series opens only when the first runs out"
            )
        window = second_series_window(first, second)
        self.windows.append(window)
        return window

    def sell(self, series_number: int, first: int, last: int, seller: str) -> SoldRange:
        """Record cards ``first``..``last`` of a series sold by ``seller``, or refuse."""
        self._check_open()
        if last < first:
            raise SaleRefused(f"a sale runs from a first card to a later one, not {first} to {last}")
        expected = self.next_card(series_number)
        if first != expected:
            raise SaleRefused(
                f"cards are sold in order: the next card of series {series_number} is "
                f"{expected}, not {first}"
            )
        window = self._window(series_number)
        if last > window.last:
            raise SaleRefused(
                f"series {series_number} may sell up to card {window.last} in this game, "
                f"not {last}"
            )
        sold = SoldRange(series_number, first, last, seller)
        self.sold.append(sold)
        return sold

    def close(self) -> list[Series]:
        """Close the sale; returns each series as it stands for the next game."""
        self._check_open()
        self.closed = True
        return [
            replace(w.series, last_sold=max(w.series.last_sold, self._last_sold(w.series.number)))
            for w in self.windows
        ]

    @property
    def cards_sold(self) -> int:
        return sum(r.count for r in self.sold)

    def sold_cards(self) -> list[tuple[int, int]]:
        """Every (series, card number) sold in this game, in order of sale."""
        return [(r.series, n) for r in self.sold for n in range(r.first, r.last + 1)]

    def _window(self, series_number: int) -> SeriesWindow:
        for window in self.windows:
            if window.series.number == series_number:
                return window
        raise SaleRefused(f"series {series_number} is not on sale in this game")

    def _last_sold(self, series_number: int) -> int:
        sold = [r.last for r in self.sold if r.series == series_number]
        return sold[-1] if sold else self._window(series_number).first - 1

    def _check_open(self) -> None:
        if self.closed:
            raise SaleRefused("the sale is closed; no card can be sold or changed")

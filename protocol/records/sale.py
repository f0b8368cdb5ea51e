"""The sale of a game: its opening, paper and virtual cards sold, second series, the close (R82, R83.4, R85)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from protocol import events
from protocol.records.base import JournalRecord, optional, record
from protocol.records.events import EventRecord


@record
@dataclass(frozen=True, kw_only=True)
class SaleOpened(EventRecord, events.SaleOpened):
    """A game's sale opened (:class:`protocol.events.SaleOpened`): game ``game_number`` of
    ``session``, its first series from ``card_set`` (``card_count`` cards a series)."""

    session: int
    game_number: int
    card_set: str
    card_count: int


@record
@dataclass(frozen=True, kw_only=True)
class CardSold(EventRecord, events.CardSold):
    """One card sold (:class:`protocol.events.CardSold`); ``stake_pct`` is the percentage of
    the card's value a virtual card stakes (absent for a paper card, which stakes it whole)."""

    stake_pct: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class PaperCardsSold(JournalRecord):
    """Paper cards ``first``..``last`` of ``series`` sold by ``seller`` (R82.5, R83.4 first and last number).

    ``count`` cards for ``amount_cents``, paid into ``account`` (the seller's cash,
    ``cash:<seller>``), each at ``price_cents``; the record is the cards, and the
    posting follows it.  A record without ``price_cents`` was written before: one
    ``card_sold`` per card followed it, and it is read as written.
    """

    type: ClassVar[str] = "paper_cards_sold"
    game_id: str
    series: int
    first: int
    last: int
    count: int
    seller: str
    account: str
    amount_cents: int
    price_cents: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class SecondSeriesOpened(JournalRecord):
    """A complementary second series goes on sale once the first has run out (R82.6).

    Cards ``first``..``last`` of series ``series`` (from ``card_set``, ``card_count`` cards,
    at ``face_value_cents``).
    """

    type: ClassVar[str] = "second_series_opened"
    game_id: str
    series: int
    card_set: str
    face_value_cents: int
    card_count: int
    first: int
    last: int


@record
@dataclass(frozen=True, kw_only=True)
class SaleClosed(EventRecord, events.SaleClosed):
    """The sale closed (:class:`protocol.events.SaleClosed`) and the prizes are announced (R93.9).

    ``line_cents`` and ``bingo_cents`` are the prizes, including what was carried into
    them (``carry_line_cents``, ``carry_bingo_cents``); ``contributions`` what the
    collection pays into each pot (account -> cents); ``house_cents`` and ``tax_cents``
    the house's share and the tax due (R98); ``series`` each series in play with its
    last card sold, as ``[series, last_sold]``.  ``boost_line_cents`` and
    ``boost_bingo_cents`` are what the jackpot's reserve adds to the line and the bingo
    (R91.7), included in ``line_cents`` and ``bingo_cents``; left out when 0.
    """

    line_cents: int
    bingo_cents: int
    carry_line_cents: int
    carry_bingo_cents: int
    contributions: Mapping[str, int]
    house_cents: int
    tax_cents: int
    series: tuple[tuple[int, int], ...]
    boost_line_cents: int = optional(0)
    boost_bingo_cents: int = optional(0)

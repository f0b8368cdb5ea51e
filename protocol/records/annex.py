"""Records of the hall-annex game (R3.5.b): one traditional game played by a main hall and its annex.

Each fact of the joint game is one record, whichever hall made it: ``hall_id`` names the
hall that did (the main hall's draw, a hall's sales, a claim verified in a hall's room),
and a fact the partner made carries ``relay_seq``, its number in the stream the central
server relays to this hall, so each is taken once.  A fact this hall made is relayed
until ``annex_posted`` says the central server holds it.  The money stays with the hall
that took it: each hall sells into ``stakes:<game>``, pays its own winners, and journals
what it owes its partner in ``interhall:<partner>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import Json, JournalRecord, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class AnnexGameOpened(JournalRecord):
    """The main hall opened joint game ``game_id`` with its annex: the card's price and the prize shares."""

    type: ClassVar[str] = "annex_game_opened"
    game_id: str
    hall_id: str
    main: str
    annex: str
    price_cents: int
    line_bp: int
    bingo_bp: int
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexCardsSold(JournalRecord):
    """Paper cards ``first``..``last`` of this hall's ``series`` sold in the joint game by ``seller``; a posting follows."""

    type: ClassVar[str] = "annex_cards_sold"
    game_id: str
    series: int
    first: int
    last: int
    count: int
    amount_cents: int
    seller: str


@record
@dataclass(frozen=True, kw_only=True)
class AnnexSalesReported(JournalRecord):
    """Hall ``hall_id`` closed its sale in the joint game: ``cards`` sold for ``cents``."""

    type: ClassVar[str] = "annex_sales_reported"
    game_id: str
    hall_id: str
    cards: int
    cents: int
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexPool(JournalRecord):
    """The joint prize pool, from the sum of both halls' sales (``protocol.settlement.close_sale``).

    ``main_line_cents`` and ``main_bingo_cents`` are the main hall's part of each prize
    (its share of the sales); the annex's part is the rest.
    """

    type: ClassVar[str] = "annex_pool"
    game_id: str
    main_sales_cents: int
    annex_sales_cents: int
    cards: int
    sales_cents: int
    line_cents: int
    bingo_cents: int
    main_line_cents: int
    main_bingo_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class AnnexBallDrawn(JournalRecord):
    """Ball number ``ball_count`` of the joint game is ``ball``, drawn by the main hall ``hall_id``."""

    type: ClassVar[str] = "annex_ball_drawn"
    game_id: str
    hall_id: str
    ball: int
    ball_count: int
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexClaimVerified(JournalRecord):
    """Card ``card`` (``series-number``) of hall ``hall_id`` won ``pattern`` on ball ``ball_count``, verified there."""

    type: ClassVar[str] = "annex_claim_verified"
    game_id: str
    hall_id: str
    pattern: str
    card: str
    ball_count: int
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexClaimRejected(JournalRecord):
    """A claim on card ``card`` in this hall's room that wins nothing, and why."""

    type: ClassVar[str] = "annex_claim_rejected"
    game_id: str
    card: str
    reason: str
    ball_count: int


@record
@dataclass(frozen=True, kw_only=True)
class AnnexGameClosed(JournalRecord):
    """The main hall closed the joint game; ``annex_claims`` of the annex's claims were in it."""

    type: ClassVar[str] = "annex_game_closed"
    game_id: str
    hall_id: str
    annex_claims: int
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexPosted(JournalRecord):
    """The central server holds this hall's record ``record_seq`` for the partner, as item ``relay_seq``."""

    type: ClassVar[str] = "annex_posted"
    game_id: str
    record_seq: int
    request_id: str
    relay_seq: int


@record
@dataclass(frozen=True, kw_only=True)
class AnnexPrizesPaid(JournalRecord):
    """This hall paid its winners of the joint game and owes its partner ``owed_to_partner_cents``.

    ``prizes`` holds, per prize, the amount, the ball, every winning card of both halls
    with its share (``[hall, card, cents]``), what this hall paid, its part of the prize
    and what the split left (carried by the main hall).  Negative
    ``owed_to_partner_cents``: the partner owes this hall.  Postings follow.
    """

    type: ClassVar[str] = "annex_prizes_paid"
    game_id: str
    partner: str
    prizes: Json
    owed_to_partner_cents: int
    house_cents: int
    tax_cents: int
    desk: str


@record
@dataclass(frozen=True, kw_only=True)
class AnnexItemIgnored(JournalRecord):
    """Item ``relay_seq`` of the partner's stream, taken but changing nothing, and why (kept so it is taken once)."""

    type: ClassVar[str] = "annex_item_ignored"
    relay_seq: int
    from_hall: str
    game_id: str
    kind: str
    reason: str


@record
@dataclass(frozen=True, kw_only=True)
class AnnexLink(JournalRecord):
    """The link to the central server, through which the partner is reached, went down or came back during a joint game."""

    type: ClassVar[str] = "annex_link"
    game_id: str
    partner: str
    up: bool

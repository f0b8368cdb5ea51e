"""Records of the hall-annex game (R3.5.b): one traditional game played by a main hall and its annex.

Each fact of the joint game is one record, whichever hall made it: ``hall_id`` names the
hall that did (the main hall's draw, a hall's sales, a claim verified in a hall's room,
the cards a hall may sell), and a fact the partner made carries ``relay_seq``, its number
in the stream the central server relays to this hall, so each is taken once.  A fact this
hall made is relayed until ``annex_posted`` says the central server holds it.  The money
stays with the hall that took it: each hall sells into ``stakes:<game>`` (paper cards in
its sellers' drawers, virtual cards from its players' accounts), pays its own winners,
and journals what it owes its partner in ``interhall:<partner>``.
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
    #: At the annex: why its own cards may not be sold in this game (they clash with the main
    #: hall's, R82.6); this room then sells nothing in it.
    clash: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexCardsDeclared(JournalRecord):
    """Part ``part`` of ``parts`` of the cards hall ``hall_id`` may sell in a joint game (R82.6).

    ``cards`` cards of its ``label`` (``set hall``, ``library V1``) from card ``first`` on,
    as their fingerprints (``prints``: each card's 90-bit number set, 12 bytes, base64);
    the parts of one declaration share its ``digest``.  A hall declares its cards at its
    start whenever they are not the ones it declared last; the partner checks its own
    against them.
    """

    type: ClassVar[str] = "annex_cards_declared"
    hall_id: str
    digest: str
    part: int
    parts: int
    label: str
    first: int
    cards: int
    prints: str
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexCardsSold(JournalRecord):
    """Paper cards ``first``..``last`` of this hall's ``series`` sold in the joint game by ``seller``; a posting follows.

    ``card_set`` is the set the series prints (absent in records written before it was kept).
    """

    type: ClassVar[str] = "annex_cards_sold"
    game_id: str
    series: int
    first: int
    last: int
    count: int
    amount_cents: int
    seller: str
    card_set: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexTerminalSaleOpened(JournalRecord):
    """This room's terminals sell joint game ``game_id``'s virtual cards from ``opens_at_ms`` to ``closes_at_ms`` (R93.1)."""

    type: ClassVar[str] = "annex_terminal_sale_opened"
    game_id: str
    opens_at_ms: int
    closes_at_ms: int
    series: str
    price_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class AnnexVirtualCardsBought(JournalRecord):
    """A terminal's purchase in joint game ``game_id``: virtual cards ``first``..``last`` of ``series`` (R82.13-16).

    As ``virtual_cards_bought`` in the hall's own game: ``quantity`` cards at ``stake_pct``
    percent of ``price_cents`` (``stake_cents`` each, ``amount_cents`` in all) for
    ``account``, bought on ``terminal`` by the player signed in as ``signed_in`` with the
    terminal's ``request`` id; ``series_label`` is how the series is shown.  The posting
    follows it.
    """

    type: ClassVar[str] = "annex_virtual_cards_bought"
    game_id: str
    terminal: str
    account: str
    request: str | None
    series: int
    series_label: str
    first: int
    last: int
    quantity: int
    stake_pct: int
    stake_cents: int
    amount_cents: int
    price_cents: int
    signed_in: str | None


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
    """Card ``card`` (``series-number``) of hall ``hall_id`` won ``pattern`` on ball ``ball_count``, verified there.

    A virtual card is found by its hall at the ball it completes the pattern on (R93.10):
    it names the ``terminal`` it was bought on, its ``label`` as the player's screen shows
    it (``V1-17``) and its ``stake_pct`` (R88.4).  ``cells`` are the card's 27 numbers, row
    by row, 0 for a blank, so the partner's audit holds every winning card (absent in
    records written before they were kept).
    """

    type: ClassVar[str] = "annex_claim_verified"
    game_id: str
    hall_id: str
    pattern: str
    card: str
    ball_count: int
    relay_seq: int | None = optional()
    stake_pct: int | None = optional()
    terminal: str | None = optional()
    label: str | None = optional()
    cells: tuple[int, ...] | None = optional()


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
class AnnexGameNotPlayed(JournalRecord):
    """Force majeure (R96.2): the main hall ``hall_id`` declared joint game ``game_id`` not played.

    ``declared_by`` is the main hall's room chief, ``reason`` what they said.  In each
    room every stake of the game still held is returned to where it came from (a paper
    card's to its seller's drawer, a virtual card's to its player's account): the
    ``refund:game`` postings follow, with ``refunded_cents`` their sum; no prize is paid.
    """

    type: ClassVar[str] = "annex_game_not_played"
    game_id: str
    hall_id: str
    reason: str
    declared_by: str
    refunded_cents: int
    relay_seq: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class AnnexTerminalFailed(JournalRecord):
    """Staff declared ``terminal`` failed (R96.3) while it held virtual cards of joint game ``game_id``.

    Before the game's first ball its cards that have won nothing leave the game and are
    refunded, once (``refunded``: their labels, ``refunded_cents``): from the game's
    collection while this room's sale is open (``source`` ``stakes``), from the house once
    it closed (``house``: the pool announced on them stands).  Once a ball is drawn they
    stay in play, their wins credited, and nothing is refunded (``kept_in_play``).
    """

    type: ClassVar[str] = "annex_terminal_failed"
    game_id: str
    terminal: str
    reason: str
    refunded: tuple[str, ...]
    refunded_cents: int
    source: str | None
    kept_in_play: tuple[str, ...]


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
    ``owed_to_partner_cents``: the partner owes this hall.  Paper cards are paid in cash
    from ``desk``; virtual cards are credited to their players' accounts (R85.9), and
    ``desk`` is None when this room's winners were all virtual.  Postings follow.
    """

    type: ClassVar[str] = "annex_prizes_paid"
    game_id: str
    partner: str
    prizes: Json
    owed_to_partner_cents: int
    house_cents: int
    tax_cents: int
    desk: str | None


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

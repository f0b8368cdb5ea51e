"""Records of the hall's side of the network games (R92-R96): what the central server
told the hall, the holds on its players' credit, and every credit it paid.

A purchase on a terminal is three records at most: ``network_credit_held`` (with the
request id the hall relays to the central server and the posting that moves the credit
from the player to ``held:<game>``), then ``network_cards_bought`` (captured: the
credit goes on to ``network:<game>``) or ``network_credit_released`` (back to the
player).  The central server's pushes and the answers the hall asked for on reconnect
are journaled as they are taken in, each with the central server's numbers (the ball's
place in the draw, the winner's and the credit's sequence numbers), so the hall keeps
every ball and every prize once, whatever it missed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, Shape, keyed, optional, record


@dataclass(frozen=True)
class NetworkPrizeShare(Shape):
    """A prize of the game as announced at the opening of the sale."""

    pattern: str
    basis_points: int
    carry_in_cents: int


@dataclass(frozen=True)
class NetworkPrizeAmount(Shape):
    """A prize's amount once the sale has closed (or its carry once the game is over)."""

    pattern: str
    amount_cents: int


@dataclass(frozen=True)
class NetworkWinner(Shape):
    """A winning card of the game, with the hall and terminal where it was bought (R92.11)."""

    seq: int
    pattern: str
    ball_count: int
    series: str
    card_number: int
    hall_id: str
    terminal_id: str
    payment_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class NetworkSaleOpened(JournalRecord):
    """The central server opened the sale of network game ``game_id`` (R93.1).

    ``closes_at_ms`` is the deadline on the central server's clock, ``remaining_ms`` the
    time it said was left; terminals count down to ``closes_here_ms``, the record's time
    plus ``remaining_ms`` on the hall's clock.
    """

    type: ClassVar[str] = "network_sale_opened"
    game_id: str
    series: str
    first_card: int
    price_cents: int
    closes_at_ms: int
    remaining_ms: int
    closes_here_ms: int
    ball_interval_ms: int
    prizes: tuple[NetworkPrizeShare, ...]


@record
@dataclass(frozen=True, kw_only=True)
class NetworkCreditHeld(JournalRecord):
    """A terminal's purchase in a network game: ``amount_cents`` of the player's credit held.

    ``request_id`` is the hall's durable id for the ``buy_cards`` it relays;
    ``terminal_request`` the terminal's own id for the purchase; ``player_ref`` how the
    central server knows the player (``account`` stays in the hall).  The posting
    ``player:<account>`` -> ``held:<game>`` follows.
    """

    type: ClassVar[str] = "network_credit_held"
    game_id: str
    request_id: str
    terminal: str
    terminal_request: str
    account: str
    player_ref: str
    card_count: int
    stake_pct: int
    stake_cents: int
    amount_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class NetworkCardsBought(JournalRecord):
    """The central server confirmed request ``request_id``: cards ``first_card``.. of ``series`` (R93.6).

    ``account`` is the player's ledger account; ``decision`` is the central server's
    number of the decision; ``amount_cents`` is captured (``held:<game>`` -> ``network:<game>``) and what the hold kept beyond it goes back.
    ``cells`` are the cards' numbers as the central server gave them, 27 a card row by
    row (0 a blank), card after card, so the terminal shows them and counts what is to
    go (R93.10); left out when the central server sent none.
    """

    type: ClassVar[str] = "network_cards_bought"
    game_id: str
    request_id: str
    account: str
    decision: int
    series: str
    first_card: int
    card_count: int
    stake_cents: int
    amount_cents: int
    cells: tuple[int, ...] = optional(())


@record
@dataclass(frozen=True, kw_only=True)
class NetworkCreditReleased(JournalRecord):
    """Request ``request_id``'s hold goes back to the player: refused by the central server.

    ``refusal_code`` is the protocol's reason (``sale_over``, ``card_limit``...),
    ``refusal`` (``refusal_text``) what the player is told, ``decision`` the central server's number of the
    decision.
    """

    type: ClassVar[str] = "network_credit_released"
    game_id: str
    request_id: str
    decision: int | None
    refusal_code: str
    refusal_text: str = keyed("refusal")


@record
@dataclass(frozen=True, kw_only=True)
class NetworkSaleClosed(JournalRecord):
    """The network game's sale is closed: cards and sales network-wide and this hall's (R93.9)."""

    type: ClassVar[str] = "network_sale_closed"
    game_id: str
    cards_sold: int
    sales_cents: int
    prizes: tuple[NetworkPrizeAmount, ...]
    hall_cards_sold: int
    hall_sales_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class NetworkBallDrawn(JournalRecord):
    """Ball number ``ball_count`` of the network game is ``ball`` (R92.10), as the central server drew it."""

    type: ClassVar[str] = "network_ball_drawn"
    game_id: str
    ball: int
    ball_count: int


@record
@dataclass(frozen=True, kw_only=True)
class NetworkPrizeWon(JournalRecord):
    """Pattern ``pattern`` was won on ball ``ball_count``: ``amount_cents`` shared by ``winner_count`` cards."""

    type: ClassVar[str] = "network_prize_won"
    game_id: str
    pattern: str
    ball_count: int
    amount_cents: int
    winner_count: int
    final: bool


@record
@dataclass(frozen=True, kw_only=True)
class NetworkWinners(JournalRecord):
    """Winning cards of the game across the network, in the central server's order (R92.11)."""

    type: ClassVar[str] = "network_winners"
    game_id: str
    winners: tuple[NetworkWinner, ...]


@record
@dataclass(frozen=True, kw_only=True)
class NetworkCreditPaid(JournalRecord):
    """Credit ``seq`` of the game for this hall paid into the player's account once (R85.9).

    ``kind`` is ``prize`` (``pattern`` on ``card_number``) or ``refund`` (``card_count``
    cards of purchase ``purchase_request_id``, ``paid_by`` stakes or house); the posting
    ``network:<game>`` -> ``player:<account>`` follows.
    """

    type: ClassVar[str] = "network_credit_paid"
    game_id: str
    seq: int
    kind: str
    account: str
    player_ref: str
    terminal: str
    amount_cents: int
    pattern: str | None = optional()
    card_number: int | None = optional()
    card_count: int | None = optional()
    purchase_request_id: str | None = optional()
    paid_by: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class NetworkGameClosed(JournalRecord):
    """The network game is over after ``ball_count`` balls; what each prize carries on (R88.5)."""

    type: ClassVar[str] = "network_game_closed"
    game_id: str
    ball_count: int
    carries: tuple[NetworkPrizeAmount, ...]


@record
@dataclass(frozen=True, kw_only=True)
class NetworkGameNotPlayed(JournalRecord):
    """Force majeure (R96.2): the network game is deemed not played; every stake comes back as credits."""

    type: ClassVar[str] = "network_game_not_played"
    game_id: str
    reason: str
    last_credit_seq: int


@record
@dataclass(frozen=True, kw_only=True)
class NetworkTerminalFailureReported(JournalRecord):
    """Staff declared ``terminal`` failed (R96.3) while it held cards of network game ``game_id``.

    ``request_id`` is the hall's durable id for the ``terminal_failed`` it sends until
    the central server answers.
    """

    type: ClassVar[str] = "network_terminal_failure_reported"
    game_id: str
    request_id: str
    terminal: str
    reason: str
    declared_by: str


@record
@dataclass(frozen=True, kw_only=True)
class NetworkTerminalFailureAnswered(JournalRecord):
    """The central server took failure ``request_id``: ``refunded_cards`` cards, ``refunded_cents``
    returned as credits (``paid_by`` stakes, house or nobody)."""

    type: ClassVar[str] = "network_terminal_failure_answered"
    game_id: str
    request_id: str
    refunded_cards: int
    refunded_cents: int
    paid_by: str

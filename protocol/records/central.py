"""Records of the central server: its network games' events (R92-R96) and refused hall commands.

The central server's domain (``central_server/domain/events.py``) folds these payloads
into its games; each one is declared here, once, like every record of the system.  The
payload repeats the record's type under ``"type"`` (the event's own dict form).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from protocol.records.base import Json, JournalRecord, keyed, record


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameScheduled(JournalRecord):
    """A network game is set up; ``config`` is its :class:`NetworkGameConfig` as a dict."""

    type: ClassVar[str] = "central_game_scheduled"
    carries_type: ClassVar[bool] = True
    game_id: str
    config: Json


@record
@dataclass(frozen=True, kw_only=True)
class CentralSaleOpened(JournalRecord):
    """The sale is open until ``closes_at_ms`` (R93.1); nothing is assigned after it (R93.8)."""

    type: ClassVar[str] = "central_sale_opened"
    carries_type: ClassVar[bool] = True
    game_id: str
    opened_at_ms: int
    closes_at_ms: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralPurchaseConfirmed(JournalRecord):
    """Request ``request_id`` of ``hall_id`` is decided: cards ``first_card``.. assigned (R93.6)."""

    type: ClassVar[str] = "central_purchase_confirmed"
    carries_type: ClassVar[bool] = True
    game_id: str
    decision: int
    hall_id: str
    request_id: str
    terminal_id: str
    player_ref: str
    card_count: int
    stake_pct: int
    first_card: int
    stake_cents: int
    amount_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralPurchaseRefused(JournalRecord):
    """Request ``request_id`` of ``hall_id`` is refused; ``refusal_code`` is one of the protocol's."""

    type: ClassVar[str] = "central_purchase_refused"
    carries_type: ClassVar[bool] = True
    game_id: str
    decision: int
    hall_id: str
    request_id: str
    terminal_id: str
    player_ref: str
    card_count: int
    stake_pct: int
    refusal_code: str
    refusal_text: str = keyed("refusal")


@record
@dataclass(frozen=True, kw_only=True)
class CentralTerminalFailed(JournalRecord):
    """The hall's staff declared ``terminal_id`` failed (R96.3), with the refund it makes."""

    type: ClassVar[str] = "central_terminal_failed"
    carries_type: ClassVar[bool] = True
    game_id: str
    hall_id: str
    request_id: str
    terminal_id: str
    reason: str
    declared_by: str
    refunded_cards: int
    refunded_cents: int
    paid_by: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralStakeReturned(JournalRecord):
    """The stakes of ``card_numbers`` of one purchase go back to the player."""

    type: ClassVar[str] = "central_stake_returned"
    carries_type: ClassVar[bool] = True
    game_id: str
    hall_id: str
    credit_seq: int
    purchase_request_id: str
    terminal_id: str
    player_ref: str
    card_numbers: tuple[int, ...]
    amount_cents: int
    paid_by: str
    cause: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralSaleClosed(JournalRecord):
    """The sale is closed: the cards in play, the sales and each prize's amount (R93.9)."""

    type: ClassVar[str] = "central_sale_closed"
    carries_type: ClassVar[bool] = True
    game_id: str
    closed_at_ms: int
    cards_in_play: int
    sales_cents: int
    prize_amounts: Mapping[str, int]
    house_share_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralBallDrawn(JournalRecord):
    """Ball number ``ball_count`` of the game is ``ball`` (R92.10), drawn at ``drawn_at_ms``."""

    type: ClassVar[str] = "central_ball_drawn"
    carries_type: ClassVar[bool] = True
    game_id: str
    ball: int
    ball_count: int
    drawn_at_ms: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralPrizeWon(JournalRecord):
    """``pattern`` is won on ball ``ball_count`` by ``winner_count`` cards (R93.12-13)."""

    type: ClassVar[str] = "central_prize_won"
    carries_type: ClassVar[bool] = True
    game_id: str
    pattern: str
    ball_count: int
    amount_cents: int
    winner_count: int
    paid_cents: int
    carry_cents: int
    final: bool


@record
@dataclass(frozen=True, kw_only=True)
class CentralCardWon(JournalRecord):
    """Card ``card_number`` won ``payment_cents`` of ``pattern``; its hall credits the player (R85.9)."""

    type: ClassVar[str] = "central_card_won"
    carries_type: ClassVar[bool] = True
    game_id: str
    pattern: str
    ball_count: int
    winner_seq: int
    credit_seq: int
    card_number: int
    hall_id: str
    terminal_id: str
    player_ref: str
    purchase_request_id: str
    stake_pct: int
    payment_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameClosed(JournalRecord):
    """The game is over; ``carries`` is what each pattern carries to the next game (R88.5)."""

    type: ClassVar[str] = "central_game_closed"
    carries_type: ClassVar[bool] = True
    game_id: str
    closed_at_ms: int
    carries: Mapping[str, int]


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameNotPlayed(JournalRecord):
    """Force majeure (R96.2): the game is deemed not played; every stake returns."""

    type: ClassVar[str] = "central_game_not_played"
    carries_type: ClassVar[bool] = True
    game_id: str
    declared_at_ms: int
    reason: str
    declared_by: str
    carries: Mapping[str, int]


@record
@dataclass(frozen=True, kw_only=True)
class CentralCommandRefused(JournalRecord):
    """A hall's command the central server refused: who sent it, what, the code and the message it was told."""

    type: ClassVar[str] = "central_command_refused"
    peer: str
    command: str
    code: str
    message: str

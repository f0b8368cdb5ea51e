"""Player terminals: enrolment, service, the terminals' sale and their purchases (R82.13-16, R93, R96.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol import events
from protocol.records.base import JournalRecord, optional, record, secret
from protocol.records.events import EventRecord


@record
@dataclass(frozen=True, kw_only=True)
class TerminalEnrolled(JournalRecord):
    """Terminal ``terminal`` at ``place`` is enrolled; ``token_hash`` is the SHA-256 of its token."""

    type: ClassVar[str] = "terminal_enrolled"
    terminal: str
    token_hash: str = secret()
    place: str


@record
@dataclass(frozen=True, kw_only=True)
class TerminalRevoked(JournalRecord):
    """Terminal ``terminal``'s enrolment is revoked, with the reason: its token opens nothing any more."""

    type: ClassVar[str] = "terminal_revoked"
    terminal: str
    reason: str


@record
@dataclass(frozen=True, kw_only=True)
class TerminalOutOfService(JournalRecord):
    """Staff declare terminal ``terminal`` failed, with the reason (R96.3): it sells nothing until returned.

    ``kept_in_play``: its cards of the game under way that stay in play, refunded nothing,
    because the game's draw had started when the failure was declared (the R96.3 ruling as
    the central server reads it: a failure counts only if declared before the first ball);
    absent when it held none, and in journals written before it existed.
    """

    type: ClassVar[str] = "terminal_out_of_service"
    terminal: str
    reason: str
    kept_in_play: tuple[str, ...] | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class TerminalReturnedToService(JournalRecord):
    """Terminal ``terminal`` is repaired, checked and back in service."""

    type: ClassVar[str] = "terminal_returned_to_service"
    terminal: str


@record
@dataclass(frozen=True, kw_only=True)
class TerminalFailed(EventRecord, events.TerminalFailed):
    """A failed terminal's cards leave the game (:class:`protocol.events.TerminalFailed`, R96.3).

    ``refunded`` are its cards that had won nothing (refunded, once), ``kept`` those
    that won (their prizes stand); both absent in journals written before they existed.
    """

    refunded: tuple[str, ...] | None = optional()
    kept: tuple[str, ...] | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class TerminalSaleOpened(JournalRecord):
    """The terminals' sale of game ``game_id`` runs from ``opens_at_ms`` to ``closes_at_ms`` (R93.1).

    ``series`` is the virtual library's label, ``price_cents`` the card's value.
    """

    type: ClassVar[str] = "terminal_sale_opened"
    game_id: str
    opens_at_ms: int
    closes_at_ms: int
    series: str
    price_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class VirtualCardsBought(JournalRecord):
    """A terminal's purchase: virtual cards ``first``..``last`` of ``series`` for ``account`` (R82.13-16, R83.4).

    ``quantity`` cards at ``stake_pct`` percent of their value (``stake_cents`` each,
    ``amount_cents`` in all), bought on ``terminal`` by the player signed in as
    ``signed_in`` with the terminal's ``request`` id; ``series_label`` is how the series
    is shown; each card is priced ``price_cents``.  The record is the cards and the
    posting follows it.  A record without ``price_cents`` was written before: one
    ``card_sold`` per card followed it, and it is read as written.  ``received_ms``: the
    request reached the hall then, in the sale time, and was decided as of then after the
    sale time had ended (the hall read it late: paused, say; R93.8).
    """

    type: ClassVar[str] = "virtual_cards_bought"
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
    signed_in: str | None
    price_cents: int | None = optional()
    received_ms: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class TerminalRequestRefused(JournalRecord):
    """A terminal's request (``what``: buy, sign in, a bad message...) refused with the reason.

    A refused purchase also names the ``account`` it named, the one ``signed_in`` and the
    ``game_id`` on sale, so a repeat of its ``request`` id gets the same answer.
    """

    type: ClassVar[str] = "terminal_request_refused"
    terminal: str
    request: str | None
    what: str
    reason: str
    account: str | None = optional()
    signed_in: str | None = optional()
    game_id: str | None = optional()

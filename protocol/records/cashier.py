"""Money and player accounts: the ledger's postings, accounts, cash desks and PIN lockouts (R92.5d)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, Shape, record, secret


@dataclass(frozen=True)
class PostingReference(Shape):
    """What a posting is about: the game, the card (``series-number``) and the record that caused it."""

    game_id: str | None
    card: str | None
    event_seq: int | None


@record
@dataclass(frozen=True, kw_only=True)
class Posting(JournalRecord):
    """One balanced movement of money (:class:`protocol.ledger.Posting`): the only way money moves.

    ``debits`` and ``credits`` are ``[account, cents]`` pairs that add up to the same sum;
    ``reason`` says why (``sale:paper``, ``prize:line``, ``tax:bingo``, ...).
    """

    type: ClassVar[str] = "posting"
    debits: tuple[tuple[str, int], ...]
    credits: tuple[tuple[str, int], ...]
    reason: str
    reference: PostingReference


@record
@dataclass(frozen=True, kw_only=True)
class PlayerAccountOpened(JournalRecord):
    """Player account ``account`` opened for visitor ``visitor`` on ``medium`` (card, ticket).

    ``pin_hash`` is the scrypt hash of the PIN (never shown in a view or export).
    """

    type: ClassVar[str] = "player_account_opened"
    account: str
    medium: str
    visitor: int
    pin_hash: str = secret()


@record
@dataclass(frozen=True, kw_only=True)
class CreditLoaded(JournalRecord):
    """``amount`` cents loaded onto ``account`` at cash desk ``desk``; the posting follows."""

    type: ClassVar[str] = "credit_loaded"
    account: str
    amount: int
    desk: str


@record
@dataclass(frozen=True, kw_only=True)
class CreditCashedOut(JournalRecord):
    """``amount`` cents paid out of ``account`` at ``desk`` by ``method`` (cash, transfer) with its ``reference``."""

    type: ClassVar[str] = "credit_cashed_out"
    account: str
    amount: int
    desk: str
    method: str
    reference: str


@record
@dataclass(frozen=True, kw_only=True)
class PlayerAccountClosed(JournalRecord):
    """Player account ``account`` is closed."""

    type: ClassVar[str] = "player_account_closed"
    account: str


@record
@dataclass(frozen=True, kw_only=True)
class CashDeskOpened(JournalRecord):
    """Cash desk ``desk`` opens with a float of ``float`` cents from the house."""

    type: ClassVar[str] = "cash_desk_opened"
    desk: str
    float: int


@record
@dataclass(frozen=True, kw_only=True)
class CashDeskHandedOver(JournalRecord):
    """Open cash desk ``desk`` passes from ``from_holder`` to ``to_holder`` (a cashier, or the table chief
    standing in for the cashier, R80.4), who alone works it from now on; ``reason`` says why."""

    type: ClassVar[str] = "cash_desk_handed_over"
    desk: str
    from_holder: str
    to_holder: str
    to_role: str
    reason: str


@record
@dataclass(frozen=True, kw_only=True)
class CashDeskReconciled(JournalRecord):
    """Cash desk ``desk`` is counted and closed on ``date``: ``expected`` and ``counted`` cents, their ``difference``."""

    type: ClassVar[str] = "cash_desk_reconciled"
    desk: str
    date: str
    expected: int
    counted: int
    difference: int


@record
@dataclass(frozen=True, kw_only=True)
class CashMoved(JournalRecord):
    """``amount`` cents of cash moved from drawer ``source`` to drawer ``destination``; the posting follows.

    ``kind`` is ``hand_in`` (a seller's takings, ``cash:<seller>``, into a cash desk),
    ``float_top_up`` (from the operator's safe, ``house``, into a desk) or
    ``desk_to_desk``; ``source`` and ``destination`` are ledger accounts.
    """

    type: ClassVar[str] = "cash_moved"
    kind: str
    source: str
    destination: str
    amount: int


@record
@dataclass(frozen=True, kw_only=True)
class JackpotDeposited(JournalRecord):
    """``amount`` cents of the jackpot's money put into the jackpot's bank account (R91.11) on the
    hall's ``date``, with the bank slip's ``reference``; the posting follows.

    ``counterpart`` is the cash desk whose drawer gave the cash, or ``operator`` (a transfer
    from the operator's own account); ``due_before`` is what the account lacked of the
    jackpot's ``funds`` (accumulated and reserve) before it, ``bank_after`` what it holds after.
    """

    type: ClassVar[str] = "jackpot_deposited"
    counterpart: str
    amount: int
    reference: str
    date: str
    due_before: int
    funds: int
    bank_after: int


@record
@dataclass(frozen=True, kw_only=True)
class JackpotWithdrawn(JournalRecord):
    """``amount`` cents the jackpot's bank account held beyond the jackpot's ``funds`` (a jackpot
    paid in cash) taken back to ``counterpart`` (a desk, or ``operator``); fields as
    :class:`JackpotDeposited`."""

    type: ClassVar[str] = "jackpot_withdrawn"
    counterpart: str
    amount: int
    reference: str
    date: str
    due_before: int
    funds: int
    bank_after: int


@record
@dataclass(frozen=True, kw_only=True)
class PinLockout(JournalRecord):
    """``wrong_pins`` wrong PINs in a row on ``terminal`` lock account ``account``'s PIN.

    ``lockouts`` is the account's count of lockouts so far, ``locked_for_s`` how long this
    one lasts, ``until_ms`` when it ends.
    """

    type: ClassVar[str] = "pin_lockout"
    account: str
    terminal: str
    wrong_pins: int
    lockouts: int
    locked_for_s: int
    until_ms: int


@record
@dataclass(frozen=True, kw_only=True)
class PinLockoutCleared(JournalRecord):
    """The lockout of ``account``'s PIN is lifted; ``why`` says how (at the cashier's desk, ...)."""

    type: ClassVar[str] = "pin_lockout_cleared"
    account: str
    why: str

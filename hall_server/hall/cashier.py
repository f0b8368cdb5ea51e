"""The cashier: player accounts, credit loads, cash-outs, statements, cash desks.

The cashier system (R92.5d) controls every money transaction between a player and
the hall.  Its rules, as this module enforces them:

* A **player account** is opened on a generated card or ticket number (11 random
  digits and a Luhn check digit, so a mistyped number is caught as such and a valid
  one cannot be guessed from its neighbours).  The player is identified by that number
  alone; a printable ticket carries it as text and as a QR code.  The player chooses a
  PIN for the terminals; only its salted scrypt hash is kept.
* An account is opened only for a visitor admitted at the door today who holds no
  other open account, and never for a
  person on the regulator's banned list (R75.2) nor for a member of staff (R81.b): the
  cashier asks the admission module (:meth:`AdmissionModule.is_banned`,
  :meth:`AdmissionModule.is_staff`).
* **Loading credit** moves cash into the desk's drawer and onto the player's account
  (R93.2): ``cash:<desk>`` -> ``player:<number>``.  **Cashing out** (R93.14) moves it
  back; an account never goes below zero, and the payment method is recorded: cash,
  transfer or cheque, never in kind (R78).  A cash payment leaves the drawer; a
  transfer or cheque is paid from the operator's bank, outside the hall's ledger, so
  it is posted against ``house`` (the operator's share grows by what it paid from
  outside) and the drawer is untouched.
* A **closed account** cannot be loaded, cashed out or closed again; it closes only
  at zero.
* A **statement** lists every movement of an account from the journal (R93.7): every
  posting on ``player:<number>``, whichever module made it (loads, cash-outs, card
  purchases, prizes), with its record number, time and running balance.
* A **cash desk** is opened with its float (from the operator's safe: ``house`` ->
  ``cash:<desk>``) and closed by the end-of-day **reconciliation**: the cashier enters
  the counted cash, the ledger gives the expected cash, and the difference is
  recorded and posted to ``over_short:<desk>`` (a shortage is debited there, an excess
  credited), so the ledger stays balanced, the drawer's account equals what was
  counted, and every difference stays visible on an account of its own.
* **Custody.** An open desk is in the hands of the cashier who opened it: only that
  person loads credit at it, pays from it, moves cash in or out of it and counts it at
  the close; anyone else is refused, naming who holds it.  The desk changes hands only
  by a journaled **hand-over** (``hand_over_cash_desk``: by its holder, or by the room
  chief when the holder is away) to another cashier or to the table chief standing in
  for the cashier (R80.4), who then holds it alone.  While a desk is in the table
  chief's hands the table chief does the cashier's work at it - accounts opened, found,
  closed, tickets and statements printed, limits set - and nothing of it before
  (:meth:`CashierModule.standing_in`); every act carries the table chief's name and role.
* **Cash between drawers** moves only by a journaled transfer (a ``cash_moved``
  record and its posting): a seller's takings handed in to a cash desk
  (``cash:<seller>`` -> ``cash:<desk>``), a desk's float topped up from the operator's
  safe (``house`` -> ``cash:<desk>``), or cash moved from one desk to another.  The desk
  receiving (and the one giving) must be open, and the source must hold the amount; a
  seller's stakes of a game that could still be refunded (under way, no prize won yet)
  stay in the drawer, which would pay them back (:attr:`CashierModule.drawer_holds`).
* **Every cash payment** - a cash-out, a prize on a paper card - comes from a cash
  desk that is open (:meth:`CashierModule.paying_drawer`), never from a seller's drawer.
* **The jackpot's bank account** (R91.11): the jackpot's funds (accumulated and
  reserve) are deposited every day into a dedicated account, ``bank:jackpot``.  The
  cashier records what the account lacks going into the bank, from a desk's drawer or
  by the operator's transfer (``deposit_jackpot``, with the bank slip's reference);
  after a jackpot paid in cash the account holds more than the funds, and that surplus
  comes back to a desk or the operator (``withdraw_jackpot_surplus``): the jackpot's
  prizes are paid from the account.

The module holds the state (rebuilt from the journal by :meth:`apply`); rendering
tickets and statements happens outside the decisions, from that state.  The slow work
- a new PIN's scrypt hash, a ticket's or a statement's PDF - runs through ``work``,
which the server points at a thread pool: the reactor thread only reads the state and
decides, and the hash is fed back into the decision that journals it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any, Callable, Iterable, Mapping

from twisted.internet import defer
from twisted.internet.defer import Deferred

from hall_server.hall.admission import DEFAULT_TIMEZONE, AdmissionModule, local_date
from hall_server.hall.ledger import LedgerModule, posting_records
from hall_server.hall.roles import Role
from hall_server.statements import format_account_number, statement_pdf, ticket_pdf
from protocol.chain import Record
from protocol.errors import N_, Cents, DomainError
from protocol.ledger import Posting, account_kind
from protocol.money import format_cents
from protocol.records import JournalRecord, declared
from protocol.records.cashier import (
    CashDeskHandedOver,
    CashDeskOpened,
    CashDeskReconciled,
    CashMoved,
    CreditCashedOut,
    CreditLoaded,
    JackpotDeposited,
    JackpotWithdrawn,
    PlayerAccountClosed,
    PlayerAccountOpened,
)
from protocol.records.cashier import Posting as PostingRecord
from protocol.settlement import (
    JACKPOT_BANK_ACCOUNT,
    POT_ACCOUNTS,
    Pots,
    jackpot_bank_surplus,
    jackpot_deposit_due,
    jackpot_funds,
)
from server_kit.core import Actor, CommandCore, CommandSpec, RunBlocking, run_inline
from server_kit.journal.projection import ProjectedState

MEDIA = ("card", "ticket")
PAYMENT_METHODS = ("cash", "transfer", "cheque")  # R78: never in kind
PIN_LENGTHS = range(4, 9)
#: scrypt cost: 2**14 x 8 x 1 needs 16 MiB and some tens of milliseconds per try.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
ACCOUNT_DIGITS = 12
MAX_REFERENCE = 64
#: The kinds of ``cash_moved`` record: what a transfer between drawers is.
HAND_IN, FLOAT_TOP_UP, DESK_TO_DESK = "hand_in", "float_top_up", "desk_to_desk"
#: The other side of a jackpot bank movement that is not a desk: the operator's own account.
OPERATOR = "operator"

#: Who may hold an open cash desk: a cashier, or the table chief standing in for one (R80.4).
DESK_HOLDERS = (Role.CASHIER, Role.TABLE_CHIEF)
#: The desk's work, for its holder only (the table chief's once a desk is handed over to them).
_AT_THE_DESK = {Role.CASHIER, Role.TABLE_CHIEF}

PERMISSIONS = {
    # The cashier's work; the table chief's only while a desk is in their hands (R80.4, standing_in).
    "open_player_account": _AT_THE_DESK,
    "load_credit": _AT_THE_DESK,
    "cash_out": _AT_THE_DESK,
    "close_player_account": _AT_THE_DESK,
    "open_cash_desk": {Role.CASHIER},
    "reconcile_cash_desk": _AT_THE_DESK,
    "hand_over_cash_desk": {Role.CASHIER, Role.TABLE_CHIEF, Role.ROOM_CHIEF},
    "hand_in_takings": _AT_THE_DESK,
    "top_up_float": _AT_THE_DESK,
    "move_cash": _AT_THE_DESK,
    "cash_drawers": {Role.CASHIER, Role.TABLE_CHIEF, Role.ROOM_CHIEF, Role.ADMINISTRATOR},
    "deposit_jackpot": {Role.CASHIER},
    "withdraw_jackpot_surplus": {Role.CASHIER},
    "print_player_ticket": _AT_THE_DESK,
    # A statement is printed for the player at the desk, or for an inspector (R93.7).
    "print_account_statement": {Role.CASHIER, Role.TABLE_CHIEF, Role.ADMINISTRATOR},
}


class CashierError(DomainError):
    """A cashier command refused; the message says why and what to do."""


# --- Account numbers and PINs ---------------------------------------------------------


def luhn_check_digit(digits: str) -> str:
    """The Luhn digit that makes ``digits`` + it a valid number."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 0:  # doubled: these sit at odd places once the check digit follows
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return str((10 - total % 10) % 10)


def random_account_number() -> str:
    """A fresh account number: 11 random digits and their Luhn check digit."""
    body = "".join(secrets.choice("0123456789") for _ in range(ACCOUNT_DIGITS - 1))
    return body + luhn_check_digit(body)


def normalize_account_number(text: object) -> str:
    """The account number typed or scanned (spaces and hyphens allowed), or :class:`CashierError`."""
    if not isinstance(text, str):
        raise CashierError(N_("an account number is text, not {text!r}"), text=text)
    return _normalized(text)


@functools.lru_cache(maxsize=1 << 14)
def _normalized(text: str) -> str:
    """:func:`normalize_account_number` of a text: every purchase names its account again (a mistyped
    number raises each time: nothing is kept of it)."""
    number = text.replace(" ", "").replace("-", "")
    if len(number) != ACCOUNT_DIGITS or not number.isdigit() or not number.isascii():
        raise CashierError(N_("an account number has {digits} digits, not {text!r}"), digits=ACCOUNT_DIGITS, text=text)
    if luhn_check_digit(number[:-1]) != number[-1]:
        raise CashierError(N_("account number {account} is mistyped: its check digit is wrong"),
                           account=format_account_number(number))
    return number


def hash_pin(pin: str, salt: bytes) -> str:
    """The stored form of a PIN: ``scrypt$n$r$p$salt$hash`` (hex)."""
    digest = hashlib.scrypt(pin.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def pin_matches(pin: str, stored: str) -> bool:
    """Whether ``pin`` is the one ``stored`` was made from (constant-time comparison)."""
    scheme, n, r, p, salt, digest = stored.split("$")
    if scheme != "scrypt" or not isinstance(pin, str):
        return False
    candidate = hashlib.scrypt(
        pin.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(digest) // 2
    )
    return hmac.compare_digest(candidate.hex(), digest)


def check_pin(pin: object) -> str:
    if not isinstance(pin, str) or not pin.isdigit() or not pin.isascii() or len(pin) not in PIN_LENGTHS:
        raise CashierError(N_("a PIN is {least} to {most} digits, chosen by the player"),
                           least=PIN_LENGTHS.start, most=PIN_LENGTHS.stop - 1)
    return pin


def check_cents(amount: object, what: str, *, zero_allowed: bool = False) -> int:
    """A whole, positive (or zero) number of cents, or :class:`CashierError`."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise CashierError(f"the {what} is a whole number of cents, not {amount!r}")
    if amount < 0 or (amount == 0 and not zero_allowed):
        template = AMOUNT_REFUSED.get((what, zero_allowed))
        if template is not None:
            raise CashierError(template, amount=amount)
        raise CashierError(f"the {what} must be {'zero or more' if zero_allowed else 'more than zero'}, not {amount}")
    return amount


#: The refusal of an amount below zero, or of zero where it is no amount, for each amount a cash
#: desk's command takes (the catalog's sentence: the amount's name is a word of the sentence).
AMOUNT_REFUSED = {
    ("amount to load", False): N_("the amount to load must be more than zero, not {amount}"),
    ("amount to cash out", False): N_("the amount to cash out must be more than zero, not {amount}"),
    ("float", True): N_("the float must be zero or more, not {amount}"),
    ("counted cash", True): N_("the counted cash must be zero or more, not {amount}"),
    ("amount handed in", False): N_("the amount handed in must be more than zero, not {amount}"),
    ("top-up", False): N_("the top-up must be more than zero, not {amount}"),
    ("amount moved", False): N_("the amount moved must be more than zero, not {amount}"),
    ("deposit", False): N_("the deposit must be more than zero, not {amount}"),
    ("withdrawal", False): N_("the withdrawal must be more than zero, not {amount}"),
}


def player_account(number: str) -> str:
    return f"player:{number}"


def cash_account(desk: str) -> str:
    return f"cash:{desk}"


def over_short_account(desk: str) -> str:
    return f"over_short:{desk}"


def _named(counterpart: str) -> str:
    return "the operator's account" if counterpart == OPERATOR else f"desk {counterpart}"


def _bank_reference(reference: object) -> str:
    """The bank slip's or transfer's reference of a jackpot deposit or withdrawal, or :class:`CashierError`."""
    if not isinstance(reference, str) or not reference.strip():
        raise CashierError(N_("give the bank slip's reference: it ties the record to the bank's statement"))
    if len(reference.strip()) > MAX_REFERENCE:
        raise CashierError(N_("the bank reference has at most {most} characters"), most=MAX_REFERENCE)
    return reference.strip()


# --- State ------------------------------------------------------------------------------


@dataclass
class PlayerAccount:
    number: str
    medium: str
    visitor: int
    pin_hash: str
    opened_by: str
    opened_ms: int
    seq: int
    closed_seq: int | None = None

    @property
    def closed(self) -> bool:
        return self.closed_seq is not None


@dataclass(frozen=True)
class Movement:
    """One posting on a player's account, as a statement prints it."""

    seq: int
    time_ms: int
    reason: str
    amount: int  # positive: credited to the player; negative: taken from the account
    balance: int  # the account's balance after it
    actor: str


@dataclass
class CashDesk:
    name: str
    open: bool = False
    opened_ms: int | None = None
    opened_by: str | None = None
    #: Who works the open desk now (its opener, or whom it was handed over to), and as which role.
    holder: str | None = None
    holder_role: str | None = None


@dataclass(frozen=True)
class Reconciliation:
    desk: str
    date: str
    expected: int
    counted: int
    cashier: str
    time_ms: int
    seq: int

    @property
    def difference(self) -> int:
        """Counted minus expected: positive is cash over, negative cash short."""
        return self.counted - self.expected


@dataclass(frozen=True)
class CashOut:
    account: str
    amount: int
    method: str
    reference: str
    desk: str
    cashier: str
    time_ms: int
    seq: int


@dataclass
class CashierState:
    accounts: dict[str, PlayerAccount] = field(default_factory=dict)
    movements: dict[str, list[Movement]] = field(default_factory=dict)
    desks: dict[str, CashDesk] = field(default_factory=dict)
    reconciliations: list[Reconciliation] = field(default_factory=list)
    cash_outs: list[CashOut] = field(default_factory=list)


@dataclass(frozen=True)
class Ticket:
    """What a player's ticket shows."""

    number: str
    medium: str
    opened_ms: int


@dataclass(frozen=True)
class Statement:
    """Every movement of one account, for printing (R93.7)."""

    number: str
    medium: str
    opened_ms: int
    closed: bool
    movements: tuple[Movement, ...]
    balance: int


# --- Module -----------------------------------------------------------------------------


class CashierModule(ProjectedState):
    """The cashier desks' state (rebuilt from the journal) and commands."""

    def __init__(
        self,
        core: CommandCore,
        ledger: LedgerModule,
        admission: AdmissionModule,
        desks: Iterable[str],
        *,
        hall_name: str = "Bingo hall",
        timezone: tzinfo = DEFAULT_TIMEZONE,
        new_account_number: Callable[[], str] = random_account_number,
        new_salt: Callable[[], bytes] = lambda: secrets.token_bytes(16),
        work: RunBlocking = run_inline,
        staff: Mapping[str, str] | None = None,
        language: str = "en",
    ) -> None:
        self.core = core
        #: The hall's language (``[hall] language``): the printed tickets' and statements'.
        self.language = language
        #: The hall's staff (name -> role), to check whom a desk is handed over to; None: not checked.
        self.staff = dict(staff) if staff is not None else None
        #: Runs scrypt and PDF rendering: a thread pool in the server, inline in unit tests.
        self.work = work
        self.ledger = ledger
        self.admission = admission
        self.hall_name = hall_name
        self.timezone = timezone
        self.new_account_number = new_account_number
        self.new_salt = new_salt
        self.state = CashierState()
        #: What of a drawer's cash must stay in it, told by the modules that know (the
        #: games: a seller's stakes of a game under way): each returns cents and why.
        self.drawer_holds: list[Callable[[str], tuple[int, str]]] = []
        for desk in desks:
            account_kind(cash_account(desk))  # a desk name must make a valid account name
            self.state.desks[desk] = CashDesk(desk)
        if not self.state.desks:
            raise ValueError("a cashier needs at least one cash desk")
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("open_player_account", self.open_account, {"visitor": int, "medium": str, "pin": str},
             N_("open a player account for a visitor admitted today, on a new card or ticket number")),
            ("load_credit", self.load_credit, {"account": str, "amount_cents": int, "desk": str},
             N_("take cash from the player and credit the account")),
            ("cash_out", self.cash_out,
             {"account": str, "amount_cents": int, "desk": str, "method": str, "reference": str},
             N_("pay the player from the account in cash, by transfer or by cheque")),
            ("close_player_account", self.close_account, {"account": str},
             N_("close an account whose balance is zero")),
            ("open_cash_desk", self.open_desk, {"desk": str, "float_cents": int},
             N_("open a cash desk with its float")),
            ("reconcile_cash_desk", self.reconcile_desk, {"desk": str, "counted_cents": int},
             N_("close a cash desk: record the counted cash and the over or short")),
            ("hand_over_cash_desk", self.hand_over_desk, {"desk": str, "to": str, "to_role": str, "reason": str},
             N_("hand an open cash desk over to another cashier, or to the table chief standing in (R80.4)")),
            ("hand_in_takings", self.hand_in_takings, {"seller": str, "desk": str, "amount_cents": int},
             N_("take a seller's takings from the seller's drawer into an open cash desk")),
            ("top_up_float", self.top_up_float, {"desk": str, "amount_cents": int},
             N_("put more cash from the operator's safe into an open cash desk")),
            ("move_cash", self.move_cash, {"from_desk": str, "to_desk": str, "amount_cents": int},
             N_("move cash from one open cash desk to another")),
            ("cash_drawers", self.cash_drawers, {}, N_("what each cash desk and seller's drawer holds, and the jackpot deposit due")),
            ("deposit_jackpot", self.deposit_jackpot, {"source": str, "amount_cents": int, "reference": str},
             N_("record the day's deposit of the jackpot's money into its bank account, from a desk or the "
             "operator (R91.11)")),
            ("withdraw_jackpot_surplus", self.withdraw_jackpot_surplus,
             {"destination": str, "amount_cents": int, "reference": str},
             N_("take what the jackpot's bank account holds beyond its funds back to a desk or the operator (R91.11)")),
            ("print_player_ticket", self.print_ticket, {"account": str},
             N_("the PDF ticket with the account number and its QR code")),
            ("print_account_statement", self.print_statement, {"account": str},
             N_("the PDF statement of every movement of an account")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- Queries ------------------------------------------------------------------

    def account(self, number: str) -> PlayerAccount:
        """The account ``number`` (typed or scanned), or :class:`CashierError`."""
        normal = normalize_account_number(number)
        account = self.state.accounts.get(normal)
        if account is None:
            raise CashierError(N_("there is no account {account}"), account=format_account_number(normal))
        return account

    def usable_account(self, number: str) -> PlayerAccount:
        account = self.account(number)
        if account.closed:
            raise CashierError(N_("account {account} is closed and cannot be used; open a new one"),
                               account=format_account_number(account.number))
        return account

    def balance(self, number: str) -> int:
        """The credit on an account, in cents."""
        return self.ledger.balance(player_account(self.account(number).number))

    def verify_pin(self, number: str, pin: str) -> bool:
        """Whether ``pin`` opens account ``number`` on a terminal (closed accounts open nothing)."""
        account = self.usable_account(number)
        return pin_matches(pin, account.pin_hash)

    def desk(self, name: object) -> CashDesk:
        if not isinstance(name, str) or name not in self.state.desks:
            raise CashierError(N_("there is no cash desk {desk!r}; the desks are {desks}"),
                               desk=name, desks=", ".join(sorted(self.state.desks)))
        return self.state.desks[name]

    def require_open_desk(self, name: object) -> CashDesk:
        desk = self.desk(name)
        if not desk.open:
            raise CashierError(N_("cash desk {desk} is not open; open it with its float first"), desk=desk.name)
        return desk

    def desk_in_hand(self, actor: Actor, name: object) -> CashDesk:
        """The open desk ``name`` if ``actor`` holds it; else :class:`CashierError` naming its holder.

        Cash goes into or out of a drawer only by the hand of the person who holds it.
        """
        desk = self.require_open_desk(name)
        if actor.name != desk.holder or str(actor.role) != desk.holder_role:
            raise CashierError(
                N_("cash desk {desk} is in the hands of {holder}; only {holder} works it. {holder} hands it over "
                   "(hand_over_cash_desk), or the room chief does if {holder} is away"),
                desk=desk.name, holder=desk.holder)
        return desk

    def standing_in(self, actor: Actor) -> None:
        """Raise :class:`CashierError` when ``actor`` is the table chief holding no open desk: the table
        chief does the cashier's work only while standing in for the cashier (R80.4)."""
        if str(actor.role) != Role.TABLE_CHIEF:
            return
        if any(d.open and (d.holder, d.holder_role) == (actor.name, Role.TABLE_CHIEF) for d in self.state.desks.values()):
            return
        raise CashierError(
            N_("{name} (table chief) does the cashier's work only while standing in for the cashier (R80.4): "
               "the cashier, or the room chief, hands a cash desk over first (hand_over_cash_desk)"),
            name=actor.name)

    def paying_drawer(self, desk: object, actor: Actor | None = None) -> str:
        """The ledger account of ``desk`` if it is a cash desk that is open, or :class:`CashierError`.

        Every cash payment comes from here: a seller's drawer, or a desk closed by its
        reconciliation, pays nothing.  A cashier (or a stand-in table chief) pays only from
        the desk in their own hands; the room chief, who pays prizes too, from any open desk.
        """
        if not isinstance(desk, str) or desk not in self.state.desks:
            raise CashierError(
                N_("{desk!r} is not a cash desk (the desks are {desks}); payments are made at an open cash desk, "
                   "never from a seller's drawer: hand the takings in to a desk first (hand_in_takings)"),
                desk=desk, desks=", ".join(sorted(self.state.desks)))
        if actor is not None and str(actor.role) in DESK_HOLDERS:
            return cash_account(self.desk_in_hand(actor, desk).name)
        return cash_account(self.require_open_desk(desk).name)

    def jackpot_deposit_due(self) -> int:
        """What the jackpot's bank account lacks of the jackpot's funds now, in cents (R91.11)."""
        return jackpot_deposit_due(self._pots(), self.ledger.balance(JACKPOT_BANK_ACCOUNT))

    def jackpot_bank_surplus(self) -> int:
        """What the jackpot's bank account holds beyond the jackpot's funds, in cents."""
        return jackpot_bank_surplus(self._pots(), self.ledger.balance(JACKPOT_BANK_ACCOUNT))

    def _pots(self) -> Pots:
        return Pots.from_accounts({account: self.ledger.balance(account) for account in POT_ACCOUNTS.values()})

    def drawer_hold(self, account: str) -> tuple[int, str]:
        """What of drawer ``account`` must stay in it (cents), and why; (0, "") when nothing."""
        held, why = 0, []
        for hold in self.drawer_holds:
            cents, reason = hold(account)
            if cents:
                held += cents
                why.append(reason)
        return held, "; ".join(why)

    def drawers(self) -> dict[str, dict[str, Any]]:
        """Every cash desk (open or not) and every other drawer holding cash: balance and state."""
        shown: dict[str, dict[str, Any]] = {
            name: {"desk": True, "open": desk.open, "cents": self.ledger.balance(cash_account(name))}
            for name, desk in sorted(self.state.desks.items())
        }
        for account, cents in self.ledger.ledger.balances().items():
            kind, _, name = account.partition(":")
            if kind == "cash" and name not in shown and cents:
                shown[name] = {"desk": False, "open": None, "cents": cents}
        return shown

    def ticket(self, number: str) -> Ticket:
        account = self.usable_account(number)
        return Ticket(account.number, account.medium, account.opened_ms)

    def statement(self, number: str) -> Statement:
        """Every movement of the account, closed or not."""
        account = self.account(number)
        return Statement(
            number=account.number,
            medium=account.medium,
            opened_ms=account.opened_ms,
            closed=account.closed,
            movements=tuple(self.state.movements.get(account.number, ())),
            balance=self.ledger.balance(player_account(account.number)),
        )

    def over_short(self, desk: str) -> int:
        """The desk's accumulated counting difference: positive short, negative over."""
        return self.ledger.balance(over_short_account(self.desk(desk).name))

    # --- Commands -----------------------------------------------------------------

    def open_account(self, actor: Actor, visitor: int, medium: str, pin: str) -> Deferred[list[Record]]:
        """Open an account for visitor ``visitor`` on a new card or ticket number.

        The PIN's hash (scrypt, tens of milliseconds) is made by :attr:`work` first, off
        the reactor thread, and only for a staff member who may open accounts; the
        decision then checks everything against the state as it is by then.
        """
        # Drawn outside the decision, which must be a function of the state alone;
        # the decision checks that the number is still free.
        number = self.new_account_number()
        while number in self.state.accounts:
            number = self.new_account_number()
        salt = self.new_salt()
        try:
            self.core.check_permission(actor, "open_player_account")
        except DomainError:
            return defer.fail()
        try:
            hashing: Deferred[str | None] = self.work(hash_pin, check_pin(pin), salt)
        except DomainError:
            # A PIN the policy refuses is not hashed: the decision refuses it, in its turn.
            hashing = defer.succeed(None)
        return hashing.addCallback(lambda pin_hash: self._open_account(actor, visitor, medium, pin, number, pin_hash))

    def _open_account(
        self, actor: Actor, visitor: int, medium: str, pin: str, number: str, pin_hash: str | None
    ) -> Deferred[list[Record]]:
        def decide(now: int) -> list[JournalRecord]:
            self.standing_in(actor)
            if medium not in MEDIA:
                raise CashierError(f"an account is opened on a {' or a '.join(MEDIA)}, not {medium!r}")
            person = self.admission.visitor(visitor)
            today = local_date(now, self.timezone)
            if local_date(person.time_ms, self.timezone) != today:
                raise CashierError(
                    N_("visitor {visitor} was admitted on {day}, not today; they must pass the admission desk again"),
                    visitor=person.number, day=local_date(person.time_ms, self.timezone).isoformat())
            self.admission.refuse_at_the_door(person.document, today, "opening an account")
            if self.admission.is_staff(person.document):
                raise CashierError(N_("document {document} belongs to a member of staff; staff may not play (R81.b)"),
                                   document=person.document)
            held = [a for a in self.state.accounts.values() if a.visitor == person.number and not a.closed]
            if held:
                # Most often the same request given twice; a second account would split
                # the player's credit for nothing.
                raise CashierError(N_("visitor {visitor} already holds account {account}; use it, or close it first"),
                                   visitor=person.number, account=format_account_number(held[0].number))
            check_pin(pin)  # refused here, in order, if it was not hashed
            if number in self.state.accounts:
                raise CashierError(N_("the new account number was taken meanwhile; try again"))
            assert pin_hash is not None  # hashed whenever check_pin passes
            return [PlayerAccountOpened(account=number, medium=medium, visitor=person.number, pin_hash=pin_hash)]

        return self.core.execute(actor, "open_player_account", decide)

    def load_credit(self, actor: Actor, account: str, amount_cents: int, desk: str) -> Deferred[list[Record]]:
        """The player hands over cash; the account is credited (R92.5d, R93.2)."""

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "amount to load")
            player = self.usable_account(account)
            drawer = self.desk_in_hand(actor, desk)
            posting = Posting.transfer(
                amount,
                debit=cash_account(drawer.name),
                credit=player_account(player.number),
                reason=f"credit loaded in cash at desk {drawer.name}",
            )
            self.ledger.check([posting])
            return [
                CreditLoaded(account=player.number, amount=amount, desk=drawer.name),
                *posting_records([posting]),
            ]

        return self.core.execute(actor, "load_credit", decide)

    def cash_out(
        self, actor: Actor, account: str, amount_cents: int, desk: str, method: str, reference: str
    ) -> Deferred[list[Record]]:
        """Pay the player from the account (R93.14) in cash, by transfer or by cheque (R78).

        ``reference`` is the cheque number or the transfer's reference, and empty for cash.
        """

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "amount to cash out")
            player = self.usable_account(account)
            drawer = self.desk_in_hand(actor, desk)
            if method not in PAYMENT_METHODS:
                raise CashierError(
                    N_("prizes and credit are paid in cash, by transfer or by cheque, never in kind (R78); not {method!r}"),
                    method=method)
            if not isinstance(reference, str):
                raise CashierError(N_("the payment reference is text"))
            ref = reference.strip()
            if method == "cash" and ref:
                raise CashierError(N_("a cash payment has no reference; leave it empty"))
            if method != "cash" and not ref:
                raise CashierError(N_("give the cheque number") if method == "cheque" else N_("give the transfer reference"))
            if len(ref) > MAX_REFERENCE:
                raise CashierError(N_("the payment reference has at most {most} characters"), most=MAX_REFERENCE)
            held = self.ledger.balance(player_account(player.number))
            if amount > held:
                raise CashierError(N_("account {account} holds {held}; it cannot pay out {amount}"),
                                   account=format_account_number(player.number), held=Cents(held), amount=Cents(amount))
            if method == "cash":
                posting = Posting.transfer(
                    amount,
                    debit=player_account(player.number),
                    credit=cash_account(drawer.name),
                    reason=f"cashed out in cash at desk {drawer.name}",
                )
            else:
                # Paid from the operator's bank, outside the hall's ledger: the operator's
                # share grows by what it paid for the hall, and the drawer is untouched.
                posting = Posting.transfer(
                    amount,
                    debit=player_account(player.number),
                    credit="house",
                    reason=f"cashed out by {method} {ref} at desk {drawer.name}",
                )
            self.ledger.check([posting])
            return [
                CreditCashedOut(account=player.number, amount=amount, desk=drawer.name, method=method, reference=ref),
                *posting_records([posting]),
            ]

        return self.core.execute(actor, "cash_out", decide)

    def close_account(self, actor: Actor, account: str) -> Deferred[list[Record]]:
        """Close an account; only at zero, so no credit is left behind."""

        def decide(now: int) -> list[JournalRecord]:
            self.standing_in(actor)
            player = self.usable_account(account)
            held = self.ledger.balance(player_account(player.number))
            if held:
                raise CashierError(N_("account {account} still holds {held}; cash it out before closing"),
                                   account=format_account_number(player.number), held=Cents(held))
            return [PlayerAccountClosed(account=player.number)]

        return self.core.execute(actor, "close_player_account", decide)

    def open_desk(self, actor: Actor, desk: str, float_cents: int) -> Deferred[list[Record]]:
        """Open a cash desk, putting its float from the operator's safe into the drawer."""

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(float_cents, "float", zero_allowed=True)
            drawer = self.desk(desk)
            if drawer.open:
                raise CashierError(N_("cash desk {desk} is already open"), desk=drawer.name)
            entries: list[JournalRecord] = [CashDeskOpened(desk=drawer.name, float=amount)]
            if amount:
                entries += posting_records(
                    [Posting.transfer(amount, debit=cash_account(drawer.name), credit="house",
                                      reason=f"float put in desk {drawer.name}")]
                )
            return entries

        return self.core.execute(actor, "open_cash_desk", decide)

    def reconcile_desk(self, actor: Actor, desk: str, counted_cents: int) -> Deferred[list[Record]]:
        """Close a desk at the end of the day against the cash counted in its drawer."""

        def decide(now: int) -> list[JournalRecord]:
            counted = check_cents(counted_cents, "counted cash", zero_allowed=True)
            drawer = self.desk(desk)
            if not drawer.open:
                last = [r for r in self.state.reconciliations if r.desk == drawer.name]
                if last:
                    raise CashierError(N_("cash desk {desk} is not open (reconciled by {cashier} in record {seq}); "
                                          "there is nothing to reconcile"),
                                       desk=drawer.name, cashier=last[-1].cashier, seq=last[-1].seq)
                raise CashierError(N_("cash desk {desk} is not open; there is nothing to reconcile"), desk=drawer.name)
            self.desk_in_hand(actor, drawer.name)
            expected = self.ledger.balance(cash_account(drawer.name))
            difference = counted - expected
            entries: list[JournalRecord] = [
                CashDeskReconciled(desk=drawer.name, date=local_date(now, self.timezone).isoformat(),
                                   expected=expected, counted=counted, difference=difference)
            ]
            if difference < 0:
                entries += posting_records(
                    [Posting.transfer(-difference, debit=over_short_account(drawer.name),
                                      credit=cash_account(drawer.name),
                                      reason=f"cash short at desk {drawer.name} reconciliation")]
                )
            elif difference > 0:
                entries += posting_records(
                    [Posting.transfer(difference, debit=cash_account(drawer.name),
                                      credit=over_short_account(drawer.name),
                                      reason=f"cash over at desk {drawer.name} reconciliation")]
                )
            return entries

        return self.core.execute(actor, "reconcile_cash_desk", decide)

    def hand_over_desk(self, actor: Actor, desk: str, to: str, to_role: str, reason: str) -> Deferred[list[Record]]:
        """Hand open desk ``desk`` over to ``to`` (a cashier, or the table chief standing in, R80.4).

        Its holder hands it over; the room chief may when the holder is away.  From then on
        only ``to`` works the desk, until it is handed over again or reconciled.
        """

        def decide(now: int) -> list[JournalRecord]:
            drawer = self.require_open_desk(desk)
            if str(actor.role) != Role.ROOM_CHIEF:
                self.desk_in_hand(actor, drawer.name)
            if not isinstance(to, str) or not to.strip():
                raise CashierError(N_("name the person the desk is handed over to"))
            taker = to.strip()
            if to_role not in DESK_HOLDERS:
                raise CashierError(
                    N_("a cash desk is held by a cashier or by the table chief standing in for one (R80.4), not by a {role!r}"),
                    role=to_role)
            if self.staff is not None and self.staff.get(taker) != to_role:
                known = self.staff.get(taker)
                if known is None:
                    raise CashierError(N_("{name} is not a member of staff"), name=taker)
                raise CashierError(f"{taker} is the hall's {str(known).replace('_', ' ')}, not its {to_role.replace('_', ' ')}")
            if (taker, to_role) == (drawer.holder, drawer.holder_role):
                raise CashierError(N_("cash desk {desk} is already in the hands of {name}"), desk=drawer.name, name=taker)
            why = reason.strip() if isinstance(reason, str) else ""
            if not why:
                raise CashierError(N_("say why the desk changes hands; it goes into the record"))
            if len(why) > MAX_REFERENCE * 4:
                raise CashierError(N_("the reason has at most {most} characters"), most=MAX_REFERENCE * 4)
            return [CashDeskHandedOver(desk=drawer.name, from_holder=drawer.holder or "", to_holder=taker,
                                       to_role=to_role, reason=why)]

        return self.core.execute(actor, "hand_over_cash_desk", decide)

    def hand_in_takings(self, actor: Actor, seller: str, desk: str, amount_cents: int) -> Deferred[list[Record]]:
        """A seller hands in ``amount_cents`` of the drawer's takings to an open cash desk."""

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "amount handed in")
            if not isinstance(seller, str) or not seller.strip():
                raise CashierError(N_("name the seller whose takings are handed in"))
            name = seller.strip()
            if name in self.state.desks:
                raise CashierError(N_("{name} is a cash desk, not a seller's drawer; move cash between desks with move_cash"),
                                   name=name)
            source = cash_account(name)
            account_kind(source)
            drawer = self.desk_in_hand(actor, desk)
            self._check_source(source, f"seller {name}'s drawer", amount)
            return self._moved(HAND_IN, source, cash_account(drawer.name), amount,
                               f"takings of seller {name} handed in to desk {drawer.name}")

        return self.core.execute(actor, "hand_in_takings", decide)

    def top_up_float(self, actor: Actor, desk: str, amount_cents: int) -> Deferred[list[Record]]:
        """More cash from the operator's safe into an open desk's drawer (its float grows)."""

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "top-up")
            drawer = self.desk_in_hand(actor, desk)
            return self._moved(FLOAT_TOP_UP, "house", cash_account(drawer.name), amount,
                               f"float of desk {drawer.name} topped up from the safe")

        return self.core.execute(actor, "top_up_float", decide)

    def move_cash(self, actor: Actor, from_desk: str, to_desk: str, amount_cents: int) -> Deferred[list[Record]]:
        """Move cash from one open desk's drawer to another's."""

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "amount moved")
            giving = self.desk_in_hand(actor, from_desk)
            taking = self.require_open_desk(to_desk)
            if giving.name == taking.name:
                raise CashierError(N_("cash moves between two different desks, not from {desk} to itself"), desk=giving.name)
            source = cash_account(giving.name)
            self._check_source(source, f"desk {giving.name}", amount)
            return self._moved(DESK_TO_DESK, source, cash_account(taking.name), amount,
                               f"cash moved from desk {giving.name} to desk {taking.name}")

        return self.core.execute(actor, "move_cash", decide)

    def cash_drawers(self, actor: Actor) -> Deferred[dict[str, str]]:
        """What each drawer holds, the jackpot's bank account and the deposit due (R91.11), in euros,
        for the person at the desk; nothing is written."""

        def run() -> dict[str, str]:
            self.core.check_permission(actor, "cash_drawers")
            self.standing_in(actor)
            shown = {
                (f"desk {name}" if d["desk"] else f"seller {name}"):
                    format_cents(d["cents"]) + ("" if not d["desk"] else " (open)" if d["open"] else " (closed)")
                for name, d in self.drawers().items()
            }
            shown["jackpot bank account"] = format_cents(self.ledger.balance(JACKPOT_BANK_ACCOUNT))
            shown["jackpot deposit due"] = format_cents(self.jackpot_deposit_due())
            return shown

        return defer.maybeDeferred(run)

    def deposit_jackpot(self, actor: Actor, source: str, amount_cents: int, reference: str) -> Deferred[list[Record]]:
        """Put ``amount_cents`` of the jackpot's money into its bank account (R91.11).

        ``source`` is an open cash desk (its drawer's cash goes to the bank) or
        ``operator`` (a transfer from the operator's own account, posted against
        ``house`` as the operator's contributions are).
        """

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "deposit")
            account, name = self._bank_counterpart(actor, source)
            slip = _bank_reference(reference)
            due = self.jackpot_deposit_due()
            if amount > due:
                raise CashierError(
                    N_("the jackpot's bank account lacks {due} of the jackpot's funds; "
                       "a deposit of {amount} is more than is due (R91.11)"),
                    due=Cents(due), amount=Cents(amount))
            if account != "house":
                self._check_source(account, f"desk {name}", amount)
            return self._jackpot_moved(
                JackpotDeposited, now, name, amount, slip, due,
                Posting.transfer(amount, debit=JACKPOT_BANK_ACCOUNT, credit=account,
                                 reason=f"jackpot:bank deposit {slip} from {_named(name)}"),
            )

        return self.core.execute(actor, "deposit_jackpot", decide)

    def withdraw_jackpot_surplus(
        self, actor: Actor, destination: str, amount_cents: int, reference: str
    ) -> Deferred[list[Record]]:
        """Take what the jackpot's bank account holds beyond the funds back to an open desk or the operator."""

        def decide(now: int) -> list[JournalRecord]:
            amount = check_cents(amount_cents, "withdrawal")
            account, name = self._bank_counterpart(actor, destination)
            slip = _bank_reference(reference)
            surplus = self.jackpot_bank_surplus()
            if amount > surplus:
                raise CashierError(
                    N_("the jackpot's bank account holds {surplus} beyond the jackpot's funds; "
                       "only that may be taken back, not {amount} (R91.11)"),
                    surplus=Cents(surplus), amount=Cents(amount))
            return self._jackpot_moved(
                JackpotWithdrawn, now, name, amount, slip, self.jackpot_deposit_due(),
                Posting.transfer(amount, debit=account, credit=JACKPOT_BANK_ACCOUNT,
                                 reason=f"jackpot:bank withdrawal {slip} to {_named(name)}"),
            )

        return self.core.execute(actor, "withdraw_jackpot_surplus", decide)

    def _bank_counterpart(self, actor: Actor, name: object) -> tuple[str, str]:
        """The ledger account and name of the other side of a jackpot bank movement (a desk: the actor's own)."""
        if name == OPERATOR:
            return "house", OPERATOR
        return cash_account(self.desk_in_hand(actor, name).name), str(name)

    def _jackpot_moved(
        self, kind: type[JackpotDeposited | JackpotWithdrawn], now: int, counterpart: str, amount: int,
        reference: str, due: int, posting: Posting,
    ) -> list[JournalRecord]:
        self.ledger.check([posting])
        bank_after = self.ledger.balance(JACKPOT_BANK_ACCOUNT) + (amount if kind is JackpotDeposited else -amount)
        return [
            kind(counterpart=counterpart, amount=amount, reference=reference,
                 date=local_date(now, self.timezone).isoformat(), due_before=due,
                 funds=jackpot_funds(self._pots()), bank_after=bank_after),
            *posting_records([posting]),
        ]

    def _check_source(self, account: str, what: str, amount: int) -> None:
        """Refuse to take ``amount`` from drawer ``account`` if it does not hold it, or must keep it."""
        holds = self.ledger.balance(account)
        kept, why = self.drawer_hold(account)
        if amount > holds - kept:
            free = f"; {format_cents(kept)} of it must stay there ({why})" if kept else ""
            raise CashierError(
                f"{what} holds {format_cents(holds)}{free}: it cannot give {format_cents(amount)}"
            )

    def _moved(self, kind: str, source: str, destination: str, amount: int, reason: str) -> list[JournalRecord]:
        posting = Posting.transfer(amount, debit=destination, credit=source, reason=reason)
        self.ledger.check([posting])
        return [
            CashMoved(kind=kind, source=source, destination=destination, amount=amount),
            *posting_records([posting]),
        ]

    def print_ticket(self, actor: Actor, account: str) -> Deferred[bytes]:
        """The player's ticket as PDF bytes; nothing is written."""
        return self._render(actor, "print_player_ticket", lambda: functools.partial(
            ticket_pdf, self.ticket(account), hall_name=self.hall_name, timezone=self.timezone,
            language=self.language))

    def print_statement(self, actor: Actor, account: str) -> Deferred[bytes]:
        """The account's statement as PDF bytes (R93.7); nothing is written."""
        return self._render(actor, "print_account_statement", lambda: functools.partial(
            statement_pdf, self.statement(account), hall_name=self.hall_name, printed_ms=self.core.now_ms(),
            timezone=self.timezone, language=self.language))

    def _render(self, actor: Actor, command: str, prepare: Callable[[], Callable[[], bytes]]) -> Deferred[bytes]:
        """Check ``actor`` and take what to print from the state here; render it through :attr:`work`."""

        def run() -> Callable[[], bytes]:
            self.core.check_permission(actor, command)
            self.standing_in(actor)
            return prepare()

        return defer.maybeDeferred(run).addCallback(self.work)

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state = CashierState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        state = self.state
        match event:
            case PostingRecord():
                self._apply_posting(record, event)
            case PlayerAccountOpened():
                state.accounts[event.account] = PlayerAccount(
                    event.account, event.medium, event.visitor, event.pin_hash, event.who.name,
                    record.time_ms, record.seq,
                )
                state.movements[event.account] = []
            case PlayerAccountClosed():
                state.accounts[event.account].closed_seq = record.seq
            case CreditCashedOut():
                state.cash_outs.append(
                    CashOut(event.account, event.amount, event.method, event.reference, event.desk,
                            event.who.name, record.time_ms, record.seq)
                )
            case CashDeskOpened():
                desk = state.desks.setdefault(event.desk, CashDesk(event.desk))
                desk.open, desk.opened_ms, desk.opened_by = True, record.time_ms, event.who.name
                desk.holder, desk.holder_role = event.who.name, event.who.role
            case CashDeskHandedOver():
                desk = state.desks.setdefault(event.desk, CashDesk(event.desk))
                desk.holder, desk.holder_role = event.to_holder, event.to_role
            case CashDeskReconciled():
                desk = state.desks.setdefault(event.desk, CashDesk(event.desk))
                desk.open, desk.holder, desk.holder_role = False, None, None
                state.reconciliations.append(
                    Reconciliation(event.desk, event.date, event.expected, event.counted, event.who.name,
                                   record.time_ms, record.seq)
                )

    def _apply_posting(self, record: Record, posting: PostingRecord) -> None:
        """Note every leg on a player's account, whichever module posted it."""
        signed: dict[str, int] = {}
        for account, amount in posting.debits:
            signed[account] = signed.get(account, 0) - amount
        for account, amount in posting.credits:
            signed[account] = signed.get(account, 0) + amount
        for account, change in signed.items():
            kind, _, number = account.partition(":")
            if kind != "player":
                continue
            movements = self.state.movements.setdefault(number, [])
            before = movements[-1].balance if movements else 0
            movements.append(
                Movement(record.seq, record.time_ms, posting.reason, change, before + change, posting.who.name)
            )

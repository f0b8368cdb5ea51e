"""Virtual cards in the hall game: terminals, the sale window, purchases, failures.

Players buy virtual cards on the hall's terminals during the sale of the traditional
game, and play them in that game next to the paper cards (R82.9-16, R83.7, R93):

* **terminals** are enrolled by staff (``enrol_terminal``): the server makes a random
  token, keeps only its hash in the journal and hands the token out once, to be put
  on that device; a terminal proves who it is with its id and token
  (:meth:`VirtualModule.authenticate`).  Staff may revoke a terminal.
* **failures** (R96.3 and its ruling): a dropped connection is not a failure; the
  server holds the cards, they stay in play and their wins are credited to the
  account.  Only the room chief declares a terminal failed (``declare_terminal_failed``,
  with the reason, journaled): its cards of the game under way leave the game, and
  those that have won nothing are refunded - once, from the game's collection before
  the sale closes and from the house after it (the prizes announced stand), if it was
  declared before the game's first ball; declared once a ball is drawn, its cards stay
  in play and their wins are credited, with no refund.  The
  terminal stays out of service until the room chief has checked it and put it back
  (``return_terminal_to_service``).
* **the sale window** (R93.1): the seller-caller or room chief opens the terminals'
  sale for a number of seconds while the game's sale is open; terminals show the
  closing time and the time left; outside it no card is assigned (R93.8).  The room
  chief's ``close_sale`` ends it in any case (R82.16).
* **purchases** (R82.13-16, R93.2-8): a signed-in player asks for a quantity of cards
  at a stake of 1-100% of the face value.  Requests are decided strictly in the order
  received, each against the credit the earlier ones left (R93.6); the cards are the
  next numbers of the virtual series, so the order of cards is the order of requests
  and no card is assigned twice (R93.8); at most 96 cards per player per terminal per
  game (R83.7).  The stake moves ``player:<account>`` -> ``stakes:<game>``.
* **group commit** (the core's): each request is decided as it arrives, on what the
  earlier ones left; those that arrive while a commit is on its way are committed
  together in the next transaction, so a burst at the close of the window costs a few
  commits, not one per request.  A refused request is
  journaled too (``terminal_request_refused``, with the reason), in the same commit.
* **request ids**: each purchase carries the terminal's id for it, journaled in its
  ``virtual_cards_bought`` or ``terminal_request_refused`` record.  The module
  remembers, per game, the outcome of each ``(terminal, request id)``, folded from
  the journal, so a request sent again - after a reconnect, after a restart - gets
  the first outcome (the same cards, or the same refusal) and is never charged twice.

A purchase's cards are one ``virtual_cards_bought`` record holding the range (R83.4
first and last number; the price, the stake and the terminal), which the hall game folds
as its cards sold, so :class:`~hall_server.hall.games.GamesModule` detects, verifies and
pays them like paper cards; it credits their winnings to the account at once (R85.9).

A purchase is asked for by the terminal gateway on behalf of an authenticated
terminal, as the server itself (:data:`~hall_server.hall.roles.SYSTEM` role): staff
roles may not buy (R81.b), and terminals are not staff.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from twisted.internet import defer

from hall_server.hall.cashier import CashierModule, normalize_account_number, player_account
from hall_server.hall.games import Game, GamesModule, _fork, fork_to_sell, recorded
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import SYSTEM, Role
from hall_server.hall.ledger import posting_records
from protocol.chain import Record
from protocol.money import format_cents
from protocol.claims import CardRef
from protocol.errors import N_, DomainError, ReasonedRefusal
from protocol.game import Input, State
from protocol.ledger import Posting, Reference
from protocol.records import JournalRecord, declared
from protocol.records.sale import SaleOpened
from protocol.records.terminals import (
    TerminalEnrolled,
    TerminalFailed,
    TerminalOutOfService,
    TerminalRequestRefused,
    TerminalReturnedToService,
    TerminalRevoked,
    TerminalSaleOpened,
    VirtualCardsBought,
)
from protocol.sale import MAX_CARDS_PER_PLAYER
from protocol.settlement import game_sales, stake_cents
from protocol.settlement.refunds import refunded_cards, stakes_account, terminal_refund_postings
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.projection import ProjectedState

MAX_SALE_SECONDS = 3600
TERMINAL_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")

R = Role
PERMISSIONS = {
    "enrol_terminal": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "revoke_terminal": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "return_terminal_to_service": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    # A person decides a failure (R96.3 ruling): never the server on a dropped connection.
    "declare_terminal_failed": {R.ROOM_CHIEF},
    "open_terminal_sale": {R.SELLER_CALLER, R.ROOM_CHIEF},
    "buy_virtual_cards": {R.SYSTEM},
    "record_terminal_refusal": {R.SYSTEM},
}


class VirtualError(DomainError):
    """A virtual-card or terminal command refused; the message says why."""


class TerminalRefused(VirtualError):
    """A terminal that may not connect: unknown, wrong token, revoked or out of service."""


class PurchaseRefused(ReasonedRefusal, VirtualError):
    """A purchase refused; the refusal is journaled with this message (``reason`` and ``params``:
    :class:`~protocol.errors.ReasonedRefusal`, what the kiosk says in the player's language)."""


# --- The library and the state --------------------------------------------------------


@dataclass(frozen=True)
class VirtualLibrary:
    """A virtual library in play: its series label, its number in the game, its cards.

    ``number`` is the integer series the hall game's :class:`CardRef` carries
    (:meth:`GamesModule.add_virtual_series`); ``label`` is what the card shows
    (R82.9-12, R92.9); ``codes`` are the cards' security codes, card k at k-1.
    """

    label: str
    number: int
    cells: np.ndarray
    codes: Sequence[str]

    @property
    def size(self) -> int:
        return len(self.cells)


@dataclass
class Terminal:
    terminal_id: str
    token_hash: str
    place: str
    revoked: bool = False
    out_of_service: str | None = None  # why, until staff return it to service


@dataclass(frozen=True)
class SaleWindow:
    """The terminals' sale of one game (R93.1)."""

    game_id: str
    opens_at_ms: int
    closes_at_ms: int


@dataclass(frozen=True)
class VirtualCard:
    """A card a player holds in a game, as the terminal shows it (R82.9-12, R92.9)."""

    ref: CardRef
    label: str  # series label and number, what the card shows: ``V1-17``
    cells: tuple[int, ...]
    code: str
    price_cents: int
    stake_cents: int
    stake_pct: int
    terminal_id: str


@dataclass(frozen=True)
class PurchaseOutcome:
    """What a terminal's purchase request came to: cards ``first``-``last`` of the game, or a refusal.

    ``signed_in`` is the account number signed in when it was asked (None: nobody).
    """

    signed_in: str | None
    game_id: str | None
    first: int = 0
    last: int = 0
    refusal: str | None = None


RequestKey = tuple[str, str]  # (terminal, the terminal's request id)


@dataclass
class VirtualState:
    terminals: dict[str, Terminal] = field(default_factory=dict)
    window: SaleWindow | None = None
    assigned: dict[str, int] = field(default_factory=dict)  # game -> virtual cards assigned so far
    # game -> account -> the cards it holds, in order; refunded ones removed
    holdings: dict[str, dict[str, list[VirtualCard]]] = field(default_factory=dict)
    # game ("" before any) -> the first outcome of each purchase request
    requests: dict[str, dict[RequestKey, PurchaseOutcome]] = field(default_factory=dict)


@dataclass(frozen=True)
class PurchaseRequest:
    """A terminal's request, as the gateway passes it on.

    ``signed_in`` is the account the player opened on this terminal with the PIN;
    ``account`` the one the request names: they must be the same.  ``request`` is the
    terminal's id for this request (empty: not to be recognised if sent again).
    ``received_ms`` is when its bytes reached the hall (records' clock,
    :mod:`server_kit.received`): the sale time is checked as of then, so a request sent in
    it is not refused because the hall, paused, read it after the close.  ``None``: as it
    is decided.
    """

    terminal_id: str
    signed_in: str | None
    account: str
    quantity: object
    stake_pct: object
    request: str = ""
    received_ms: int | None = None


def token_hash(token: str) -> str:
    """What the journal keeps of a terminal's token (a random 256-bit secret: a plain hash suffices)."""
    return hashlib.sha256(b"bingo-terminal-token/1\0" + token.encode("utf-8")).hexdigest()


def _whole(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PurchaseRefused(f"{what} is a whole number, not {value!r}")
    if not low <= value <= high:
        raise PurchaseRefused(f"{what} is {low} to {high}, not {value}")
    return value


def quantity_and_stake(request: PurchaseRequest, price_cents: int) -> tuple[int, int, int]:
    """A request's quantity, stake percentage and stake per card at ``price_cents`` (R82.15-16, R83.7)."""
    quantity = _whole(request.quantity, "the number of cards", 1, MAX_CARDS_PER_PLAYER)
    stake_pct = _whole(request.stake_pct, "the stake (percent of the card's value)", 1, 100)
    stake = stake_cents(price_cents, stake_pct)
    if stake <= 0:
        raise PurchaseRefused(f"a stake of {stake_pct}% of {format_cents(price_cents)} is nothing; stake more")
    return quantity, stake_pct, stake


def check_terminal_id(terminal_id: object) -> str:
    if not isinstance(terminal_id, str) or not 1 <= len(terminal_id) <= 40 or not set(terminal_id) <= TERMINAL_ID_CHARS:
        raise VirtualError(N_("a terminal id is 1-40 letters, digits, '-' or '_', not {terminal!r}"),
                           terminal=terminal_id)
    return terminal_id


# --- The module -----------------------------------------------------------------------


class VirtualModule(ProjectedState):
    """Terminals and virtual cards of the hall game: commands in, records out, state from the journal."""

    def __init__(
        self,
        core: CommandCore,
        games: GamesModule,
        ledger: LedgerModule,
        cashier: CashierModule,
        library: VirtualLibrary,
        *,
        new_token: Callable[[], str] = lambda: secrets.token_urlsafe(32),
    ) -> None:
        self.core = core
        self.games = games
        self.ledger = ledger
        self.cashier = cashier
        self.library = library
        self.new_token = new_token
        self.state = VirtualState()
        #: Other reasons a purchase is refused: ``check(ledger account, cents this purchase
        #: brings the day's spending to beyond the journal's, now)`` gives the refusal or
        #: None (the player's daily limit and self-exclusion, R97.2).
        self.purchase_checks: list[Callable[[str, int, int], str | None]] = []
        #: What a terminal declared failed means for the other games it holds cards in (the
        #: hall-annex game's): ``effect(terminal, reason, seq of its first entry)`` gives the
        #: entries, decided with the declaration, in its transaction.
        self.failure_effects: list[Callable[[str, str, int], Sequence[JournalRecord]]] = []
        games.add_virtual_series(library.number, library.cells)
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("enrol_terminal", self.enrol_terminal, {"terminal": str, "place": str},
             N_("enrol a player terminal; its token is shown once, to be put on the device")),
            ("revoke_terminal", self.revoke_terminal, {"terminal": str, "reason": str},
             N_("revoke a terminal: it may not connect any more")),
            ("return_terminal_to_service", self.return_to_service, {"terminal": str},
             N_("a failed terminal was repaired and checked: it may connect again (R96.3)")),
            ("declare_terminal_failed", self.declare_failed, {"terminal": str, "reason": str},
             N_("a terminal failed: refund its cards of this game and take it out of service (R96.3)")),
            ("open_terminal_sale", self.open_sale, {"seconds": int},
             N_("open the sale of virtual cards on the terminals for this many seconds (R93.1)")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- Queries ------------------------------------------------------------------

    def authenticate(self, terminal_id: object, token: object) -> Terminal:
        """The enrolled terminal ``terminal_id`` if ``token`` is its token; else :class:`TerminalRefused`."""
        terminal = self.state.terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None or not isinstance(token, str) or not hmac.compare_digest(
            terminal.token_hash, token_hash(token)
        ):
            raise TerminalRefused("this terminal is not enrolled, or its token is wrong; ask the staff to enrol it")
        if terminal.revoked:
            raise TerminalRefused(f"terminal {terminal.terminal_id} has been revoked; ask the staff")
        if terminal.out_of_service is not None:
            raise TerminalRefused(
                f"terminal {terminal.terminal_id} is out of service ({terminal.out_of_service}) until the "
                "staff have checked it (R96.3)"
            )
        return terminal

    def window(self, game: Game | None) -> SaleWindow | None:
        """The terminals' sale window of ``game``, if one was opened for it."""
        window = self.state.window
        return window if game is not None and window is not None and window.game_id == game.game_id else None

    def cards(self, game_id: str, account: str) -> list[VirtualCard]:
        """The cards ``account`` holds in ``game_id``, in the order they were bought."""
        return list(self.state.holdings.get(game_id, {}).get(account, ()))

    def count_on_terminal(self, game_id: str, account: str, terminal_id: str) -> int:
        return sum(1 for card in self.cards(game_id, account) if card.terminal_id == terminal_id)

    def has_cards(self, game_id: str, terminal_id: str) -> bool:
        return any(
            card.terminal_id == terminal_id
            for cards in self.state.holdings.get(game_id, {}).values()
            for card in cards
        )

    # --- Staff commands ---------------------------------------------------------------

    def enrol_terminal(self, actor: Actor, terminal: str, place: str) -> defer.Deferred[dict[str, str]]:
        """Enrol ``terminal``; fires with its token, which only this answer ever shows."""
        token = self.new_token()

        def decide(now: int) -> list[JournalRecord]:
            terminal_id = check_terminal_id(terminal)
            known = self.state.terminals.get(terminal_id)
            if known is not None and not known.revoked:
                raise VirtualError(N_("terminal {terminal} is already enrolled; revoke it first to replace it"),
                                   terminal=terminal_id)
            return [TerminalEnrolled(terminal=terminal_id, token_hash=token_hash(token), place=str(place).strip())]

        def enrolled(records: list[Record]) -> dict[str, str]:
            made = declared(records[0])
            assert isinstance(made, TerminalEnrolled)
            return {"terminal": made.terminal, "token": token}

        return self.core.execute(actor, "enrol_terminal", decide).addCallback(enrolled)

    def revoke_terminal(self, actor: Actor, terminal: str, reason: str) -> defer.Deferred[list[Record]]:
        def decide(now: int) -> list[JournalRecord]:
            known = self._terminal(terminal)
            if known.revoked:
                raise VirtualError(N_("terminal {terminal} is already revoked"), terminal=known.terminal_id)
            return [TerminalRevoked(terminal=known.terminal_id, reason=_reason(reason))]

        return self.core.execute(actor, "revoke_terminal", decide)

    def return_to_service(self, actor: Actor, terminal: str) -> defer.Deferred[list[Record]]:
        def decide(now: int) -> list[JournalRecord]:
            known = self._terminal(terminal)
            if known.out_of_service is None:
                raise VirtualError(N_("terminal {terminal} is in service"), terminal=known.terminal_id)
            return [TerminalReturnedToService(terminal=known.terminal_id)]

        return self.core.execute(actor, "return_terminal_to_service", decide)

    def open_sale(self, actor: Actor, seconds: int) -> defer.Deferred[list[Record]]:
        """Open (or extend) the terminals' sale of the game on sale for ``seconds`` (R93.1)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.games.require_game()
            if game.machine.state is not State.SELLING:
                raise VirtualError(N_("the terminals' sale opens while the game's sale is open"))
            if isinstance(seconds, bool) or not isinstance(seconds, int) or not 1 <= seconds <= MAX_SALE_SECONDS:
                raise VirtualError(N_("the sale lasts 1 to {most} seconds, not {seconds!r}"), most=MAX_SALE_SECONDS,
                                   seconds=seconds)
            window = self.window(game)
            return [TerminalSaleOpened(
                game_id=game.game_id,
                opens_at_ms=window.opens_at_ms if window else now,
                closes_at_ms=now + seconds * 1000,
                series=self.library.label,
                price_cents=game.machine.price_cents,
            )]

        return self.core.execute(actor, "open_terminal_sale", decide)

    def declare_failed(self, actor: Actor, terminal: str, reason: str) -> defer.Deferred[list[Record]]:
        """Staff declare a terminal failed (R96.3 ruling): its cards of the game under way leave
        the game; those that have won nothing are refunded, once; the prizes announced stand.

        The terminal stays out of service until staff return it to service.  A second
        declaration in the same game (after a return to service) refunds nothing.  Nor does
        a declaration once the game's first ball is drawn: the terminal goes out of service,
        its cards stay in play and their wins are credited to the accounts
        (``terminal_out_of_service.kept_in_play``), as for a dropped connection.
        """

        def decide(now: int) -> list[JournalRecord]:
            known = self._terminal(terminal)
            if known.out_of_service is not None:
                raise VirtualError(N_("terminal {terminal} is already out of service"), terminal=known.terminal_id)
            why = _reason(reason)
            entries = in_own_game(known, why)
            for effect in self.failure_effects:
                entries += effect(known.terminal_id, why, self.core.seq + len(entries) + 1)
            return entries

        def in_own_game(known: Terminal, why: str) -> list[JournalRecord]:
            out = TerminalOutOfService(terminal=known.terminal_id, reason=why)
            game = self.games.current
            if game is None or game.over or not self.has_cards(game.game_id, known.terminal_id):
                return [out]
            if known.terminal_id in game.machine.failed_terminals:
                return [out]  # its cards left this game at the first declaration: never refunded twice
            if game.machine.drawn:
                # Once a ball is known a refund would let the player keep the cards' chances so far and
                # take back the stakes of those that turned out losing, at the house's cost (the R96.3
                # ruling as the central server reads it): the cards stay in play, their wins credited.
                kept_in_play = tuple(
                    ref.label for ref, s in game.machine.sales.items() if s.terminal_id == known.terminal_id
                )
                return [TerminalOutOfService(terminal=known.terminal_id, reason=why, kept_in_play=kept_in_play)]
            machine = _fork(game.machine)
            if not machine.accepts(Input.TERMINAL_FAILED):
                return [out]  # the game is suspended or being settled: nothing to take out now
            won = {ref for pattern in machine.won.values() for ref in pattern.cards}
            done = refunded_cards(self.ledger.ledger, game.game_id)
            on_terminal = [(ref, s) for ref, s in game.machine.sales.items() if s.terminal_id == known.terminal_id]
            # A card that has won anything is never refunded (its prize stands), nor one refunded before.
            sales = [s for ref, s in on_terminal if ref not in won and ref.label not in done]
            kept = sorted(ref.label for ref, _ in on_terminal if ref in won)
            refunded = tuple(CardRef(s.series, s.card_number).label for s in sales)
            failed = [recorded(e, refunded=refunded, kept=kept) for e in machine.terminal_failed(known.terminal_id)]
            seq = self.core.seq + 1 + len(failed)  # the terminal_failed record
            refunds = terminal_refund_postings(sales, game.game_id, seq, sale_closed=game.settlement is not None)
            self.ledger.check(refunds)
            return [out, *failed, *posting_records(refunds)]

        return self.core.execute(actor, "declare_terminal_failed", decide)

    def _terminal(self, terminal: object) -> Terminal:
        known = self.state.terminals.get(terminal) if isinstance(terminal, str) else None
        if known is None:
            raise VirtualError(N_("there is no enrolled terminal {terminal!r}"), terminal=terminal)
        return known

    # --- Purchases ----------------------------------------------------------------

    def request_purchase(self, request: PurchaseRequest) -> defer.Deferred[list[VirtualCard]]:
        """Decide ``request`` now; fires with the cards bought, or fails with :class:`PurchaseRefused`.

        Requests are decided in the order this method is called (R93.6), each on what the
        ones before left; the core commits those that come during a commit together.
        """
        outcomes: list[PurchaseRefused | PurchaseOutcome] = []

        def decide(now: int) -> list[JournalRecord]:
            entries, decided = self._decide_batch([request], now)
            outcomes[:] = decided
            return entries

        def committed(records: list[Record]) -> list[VirtualCard]:
            (outcome,) = outcomes
            if isinstance(outcome, PurchaseRefused):
                raise outcome
            if outcome.refusal is not None:
                raise PurchaseRefused(outcome.refusal)
            return self.bought_cards(outcome)

        return self.core.execute(SYSTEM, "buy_virtual_cards", decide).addCallback(committed)

    def bought_cards(self, outcome: PurchaseOutcome) -> list[VirtualCard]:
        """The cards a purchase assigned that its account still holds (a failed terminal's leave)."""
        if outcome.game_id is None or outcome.signed_in is None:
            return []
        return [
            card for card in self.cards(outcome.game_id, player_account(outcome.signed_in))
            if outcome.first <= card.ref.number <= outcome.last
        ]

    def _decide_batch(
        self, requests: Sequence[PurchaseRequest], now: int
    ) -> tuple[list[JournalRecord], list[PurchaseRefused | PurchaseOutcome]]:
        """The entries of ``requests`` taken in order, each against what the earlier ones left.

        Returns the entries and, per request, its outcome: a new refusal, or what it came
        to (bought, or refused earlier under the same request id).  A request id already
        decided in this game, here or in an earlier batch, gets its first outcome again
        and records nothing.
        """
        entries: list[JournalRecord] = []
        outcomes: list[PurchaseRefused | PurchaseOutcome] = []
        postings: list[Posting] = []
        game = self.games.current
        machine = fork_to_sell(game.machine) if game is not None else None
        spent: dict[str, int] = {}
        on_terminal: dict[tuple[str, str], int] = {}
        assigned = self.state.assigned.get(game.game_id, 0) if game is not None else 0
        game_id = game.game_id if game is not None else None
        # The outcomes of this batch in front of those remembered: nothing copied a purchase.
        remembered = ChainMap({}, self.state.requests.get(game_id or "", {}))
        for request in requests:
            key = (request.terminal_id, request.request)
            earlier = remembered.get(key) if request.request else None
            if earlier is not None:
                if earlier.signed_in == request.signed_in:
                    outcomes.append(earlier)  # sent again: its first outcome, nothing recorded
                    continue
                other = PurchaseRefused(
                    f"request {request.request} was made on this terminal for another account; send a new request"
                )
                outcomes.append(other)
                entries.append(self._refusal(request, game_id, other))
                continue
            try:
                account, quantity, stake_pct, stake = self._check_request(request, game, now)
                received_late = self._received_in_time_read_late(request, game, now)
                assert game is not None and machine is not None
                key = (account, request.terminal_id)
                held = on_terminal.get(key, self.count_on_terminal(game.game_id, account, request.terminal_id))
                if held + quantity > MAX_CARDS_PER_PLAYER:
                    raise PurchaseRefused(
                        f"at most {MAX_CARDS_PER_PLAYER} cards per player on one terminal in a game (R83.7); "
                        f"you hold {held}, so you may buy {MAX_CARDS_PER_PLAYER - held} more",
                        "cards_max", max=MAX_CARDS_PER_PLAYER, held=held, left=MAX_CARDS_PER_PLAYER - held,
                    )
                if request.terminal_id in machine.failed_terminals:
                    raise PurchaseRefused(f"terminal {request.terminal_id} failed in this game; it sells no more cards in it")
                if assigned + quantity > self.library.size:
                    raise PurchaseRefused(
                        f"only {self.library.size - assigned} virtual cards are left in series {self.library.label}"
                    )
                amount = game_sales(game.machine.price_cents, [stake_pct for _ in range(quantity)])
                credit = self.ledger.balance(account) - spent.get(account, 0)
                if amount > credit:
                    raise PurchaseRefused(
                        f"{quantity} card(s) at {format_cents(stake)} cost {format_cents(amount)}; "
                        f"your credit is {format_cents(credit)}",
                        "credit_short", quantity=quantity, stake_cents=stake, amount_cents=amount, credit_cents=credit,
                    )
                for check in self.purchase_checks:
                    refusal = check(account, spent.get(account, 0) + amount, now)
                    if refusal is not None:
                        raise PurchaseRefused(refusal, getattr(refusal, "reason", ""), **getattr(refusal, "params", {}))
            except PurchaseRefused as refusal:
                outcomes.append(refusal)
                if request.request:
                    remembered[key] = PurchaseOutcome(request.signed_in, game_id, refusal=str(refusal))
                entries.append(self._refusal(request, game_id, refusal))
                continue
            first = assigned + 1
            seq = self.core.seq + len(entries) + 1
            bought = PurchaseOutcome(request.signed_in, game.game_id, first, first + quantity - 1)
            outcomes.append(bought)
            if request.request:
                remembered[key] = bought
            entries.append(VirtualCardsBought(
                game_id=game.game_id, terminal=request.terminal_id, account=account,
                request=request.request, series=self.library.number, series_label=self.library.label,
                first=first, last=first + quantity - 1, quantity=quantity, stake_pct=stake_pct,
                stake_cents=stake, amount_cents=amount, signed_in=request.signed_in,
                price_cents=machine.price_cents, received_ms=request.received_ms if received_late else None,
            ))
            for number in range(first, first + quantity):  # every card checked; the range is one record (R83.4)
                machine.sell_card(series=self.library.number, card_number=number, stake_cents=stake,
                                  account=account, terminal_id=request.terminal_id)
            postings.append(Posting.transfer(amount, debit=account, credit=stakes_account(game.game_id),
                                             reason="sale:virtual", reference=Reference(game.game_id, None, seq)))
            assigned += quantity
            spent[account] = spent.get(account, 0) + amount
            on_terminal[key] = held + quantity
        self.ledger.check(postings)
        return [*entries, *posting_records(postings)], outcomes

    @staticmethod
    def _refusal(request: PurchaseRequest, game_id: str | None, refusal: PurchaseRefused) -> TerminalRequestRefused:
        return TerminalRequestRefused(
            terminal=request.terminal_id, request=request.request, what="buy", account=request.account,
            signed_in=request.signed_in, game_id=game_id, reason=str(refusal),
        )

    def _check_request(self, request: PurchaseRequest, game: Game | None, now: int) -> tuple[str, int, int, int]:
        """The account, quantity, stake percentage and stake of a request that may go on (R82.13-16, R93.8)."""
        account = self.buyer(request)
        if game is None or game.machine.state is not State.SELLING:
            raise PurchaseRefused("no sale is open; cards are bought only during the sale time (R93.8)", "no_sale")
        window = self.window(game)
        as_of = now if request.received_ms is None else min(request.received_ms, now)
        if window is None or not window.opens_at_ms <= as_of < window.closes_at_ms:
            raise PurchaseRefused("the sale time for terminals is over or has not begun (R93.1, R93.8)", "sale_time")
        return (account, *quantity_and_stake(request, game.machine.price_cents))

    def _received_in_time_read_late(self, request: PurchaseRequest, game: Game | None, now: int) -> bool:
        """Whether ``request`` came in the terminals' sale time and is decided after it (its record says when)."""
        window = self.window(game) if game is not None else None
        return window is not None and request.received_ms is not None and now >= window.closes_at_ms

    def buyer(self, request: PurchaseRequest) -> str:
        """The ledger account a request buys for, if its terminal may sell and its player may buy (R82.13-14).

        Every game sold on the terminals asks this first: an authorised terminal, a player
        signed in with the PIN, buying for that account, an account open and usable.
        """
        terminal = self.state.terminals.get(request.terminal_id)
        if terminal is None or terminal.revoked or terminal.out_of_service is not None:
            raise PurchaseRefused(f"terminal {request.terminal_id} is not authorised to sell cards (R82.13)")
        if request.signed_in is None:
            raise PurchaseRefused("sign in with your account and PIN first", "signed_out")
        try:
            named = normalize_account_number(request.account)
        except DomainError:
            raise PurchaseRefused(f"{request.account!r} is not an account number") from None
        if named != request.signed_in:
            raise PurchaseRefused("cards are bought only for the account signed in on this terminal")
        try:
            self.cashier.usable_account(named)
        except DomainError as error:
            raise PurchaseRefused(str(error)) from None
        return player_account(named)

    def record_refusal(self, terminal_id: str, what: str, reason: str, request: str = "") -> defer.Deferred[list[Record]]:
        """Journal a request a terminal made and the gateway refused (bad message, order, credentials)."""

        def decide(now: int) -> list[JournalRecord]:
            return [TerminalRequestRefused(terminal=terminal_id[:40], request=request[:64], what=what[:40],
                                           reason=reason[:300])]

        return self.core.execute(SYSTEM, "record_terminal_refusal", decide)

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state = VirtualState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        if type(event) not in _FOLDED:
            return  # another module's record
        state = self.state
        match event:
            case TerminalEnrolled():
                state.terminals[event.terminal] = Terminal(event.terminal, event.token_hash, event.place)
            case TerminalRevoked():
                state.terminals[event.terminal].revoked = True
            case TerminalOutOfService():
                state.terminals[event.terminal].out_of_service = event.reason
            case TerminalReturnedToService():
                state.terminals[event.terminal].out_of_service = None
            case TerminalSaleOpened():
                state.window = SaleWindow(event.game_id, event.opens_at_ms, event.closes_at_ms)
            case VirtualCardsBought():
                self._bought(event)
            case TerminalRequestRefused(what="buy"):
                self._remember(event.terminal, event.request, event.game_id,
                               PurchaseOutcome(event.signed_in, event.game_id, refusal=event.reason))
            case TerminalFailed():
                # The cards refunded leave the account's holding; those that won stay in it, paid.
                refunded = event.refunded
                for cards in state.holdings.get(event.game_id, {}).values():
                    cards[:] = [c for c in cards if c.terminal_id != event.terminal_id
                                or (refunded is not None and c.ref.label not in refunded)]
            case SaleOpened():
                # A new game: the earlier games' holdings and request ids are over and let go.
                state.holdings = {}
                state.assigned = {}
                state.requests = {}
                state.window = None

    def _bought(self, bought: VirtualCardsBought) -> None:
        """A purchase's cards join the account's holding; the request id remembers them."""
        state = self.state
        game = self.games.current
        price = game.machine.price_cents if game is not None and game.game_id == bought.game_id else 0
        held = state.holdings.setdefault(bought.game_id, {}).setdefault(bought.account, [])
        for number in range(bought.first, bought.last + 1):
            row = self.library.cells[number - 1]
            held.append(VirtualCard(
                CardRef(bought.series, number), f"{bought.series_label}-{number}", tuple(row.tolist()),
                self.library.codes[number - 1], price, bought.stake_cents, bought.stake_pct, bought.terminal,
            ))
        state.assigned[bought.game_id] = max(state.assigned.get(bought.game_id, 0), bought.last)
        self._remember(bought.terminal, bought.request, bought.game_id,
                       PurchaseOutcome(bought.signed_in, bought.game_id, bought.first, bought.last))

    def _remember(self, terminal: str, request: str | None, game_id: str | None, outcome: PurchaseOutcome) -> None:
        """The first outcome of a purchase request id (a refused repeat does not replace it)."""
        if request:
            self.state.requests.setdefault(game_id or "", {}).setdefault((terminal, request), outcome)


#: The records the terminals' projection folds.
_FOLDED = frozenset((TerminalEnrolled, TerminalRevoked, TerminalOutOfService, TerminalReturnedToService,
                     TerminalSaleOpened, VirtualCardsBought, TerminalRequestRefused, TerminalFailed, SaleOpened))


def _reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise VirtualError(N_("say why; it goes into the record"))
    return reason.strip()[:300]


__all__ = [
    "MAX_CARDS_PER_PLAYER",
    "PERMISSIONS",
    "PurchaseOutcome",
    "PurchaseRefused",
    "PurchaseRequest",
    "SaleWindow",
    "Terminal",
    "TerminalRefused",
    "VirtualCard",
    "VirtualError",
    "VirtualLibrary",
    "VirtualModule",
    "quantity_and_stake",
    "token_hash",
]

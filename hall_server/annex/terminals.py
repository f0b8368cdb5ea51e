"""Virtual cards of the hall-annex game on this room's terminals (R3.5.b, R82.13-16, R83.7, R93).

Each room sells virtual cards of a joint game to its own terminals as it does in its
own games (:mod:`hall_server.hall.virtual`): the seller-caller or the room chief opens
the terminals' sale for a number of seconds (``annex_open_terminal_sale``, R93.1), and
it ends then, or when the room's sale closes (``annex_close_sale``, R82.16), whichever
comes first.  A signed-in player buys a quantity of cards at a stake of 1-100% of the
joint game's price (R82.15) from the credit of the account (R93.2-4); requests are
decided in the order received, each against what the earlier ones left (R93.6); the
cards are the next numbers of the hall's virtual library in that order, so none is
assigned twice (R93.8); at most 96 cards per player per terminal in the game (R83.7);
the player's own limits and exclusion apply (R97.2).  The terminal's request id is
kept with the outcome, so a request sent again gets its first answer and is charged
once.  A terminal the room chief declares failed (``declare_terminal_failed``, R96.3) gives
up its cards of the joint game as :meth:`AnnexModule.terminal_failed
<hall_server.annex.module.AnnexModule.terminal_failed>` rules.  The stake moves ``player:<account>`` -> ``stakes:<game>``: the room's sales, and
so the joint pool, include it.

A purchase is one ``annex_virtual_cards_bought`` record, which the hall-annex game folds
as cards in play in this room (:class:`~hall_server.annex.module.AnnexModule` checks them
at every ball and credits their prizes to the account, R85.9); a refusal is a
``terminal_request_refused`` (``what``: ``joint_buy``).  Who may buy is the hall's own
rule: :meth:`VirtualModule.buyer <hall_server.hall.virtual.VirtualModule.buyer>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from twisted.internet import defer

from hall_server.annex.module import AnnexError, AnnexModule
from hall_server.hall.ledger import posting_records
from hall_server.hall.cashier import player_account
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import SYSTEM, Role
from hall_server.hall.virtual import (
    MAX_SALE_SECONDS,
    PurchaseOutcome,
    PurchaseRefused,
    PurchaseRequest,
    VirtualLibrary,
    VirtualModule,
    quantity_and_stake,
)
from protocol.annex import JointGame
from protocol.chain import Record
from protocol.claims import CardRef
from protocol.errors import N_
from protocol.ledger import Posting, Reference
from protocol.money import format_cents
from protocol.records import JournalRecord, declared
from protocol.records.annex import (
    AnnexGameOpened,
    AnnexTerminalFailed,
    AnnexTerminalSaleOpened,
    AnnexVirtualCardsBought,
)
from protocol.records.terminals import TerminalRequestRefused
from protocol.sale import MAX_CARDS_PER_PLAYER
from protocol.settlement.refunds import stakes_account
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.projection import ProjectedState

R = Role
PERMISSIONS = {
    "annex_open_terminal_sale": {R.SELLER_CALLER, R.ROOM_CHIEF},
    "annex_buy_virtual_cards": {R.SYSTEM},
}
#: ``terminal_request_refused.what`` of a refused purchase in a joint game.
JOINT_BUY = "joint_buy"


@dataclass(frozen=True)
class JointCard:
    """A virtual card a player holds in a joint game, as the terminal shows it (R82.9-12, R92.9)."""

    ref: CardRef
    label: str  # what the card shows: ``V1-17``
    cells: tuple[int, ...]
    code: str  # its security code (R92.9)
    price_cents: int
    stake_cents: int
    stake_pct: int
    terminal_id: str


@dataclass(frozen=True)
class JointWindow:
    game_id: str
    opens_at_ms: int
    closes_at_ms: int


@dataclass
class JointSalesState:
    game_id: str | None = None  # the joint game the rest is of
    window: JointWindow | None = None
    assigned: int = 0
    holdings: dict[str, list[JointCard]] = field(default_factory=dict)  # account -> cards, in order bought
    requests: dict[tuple[str, str], PurchaseOutcome] = field(default_factory=dict)  # (terminal, request id)


class JointTerminalSales(ProjectedState):
    """This room's terminals in the current joint game: the sale window, purchases, the cards held."""

    def __init__(self, core: CommandCore, annex: AnnexModule, virtual: VirtualModule, ledger: LedgerModule,
                 library: VirtualLibrary) -> None:
        self.core = core
        self.annex = annex
        self.virtual = virtual
        self.ledger = ledger
        self.library = library
        self.state = JointSalesState()
        core.add_module(self)
        core.allow(PERMISSIONS)
        virtual.failure_effects.append(annex.terminal_failed)  # a failed terminal's joint cards (R96.3)
        core.register(CommandSpec(
            "annex_open_terminal_sale", self.open_sale, {"seconds": int},
            N_("open the sale of the hall-annex game's virtual cards on this room's terminals for this many seconds"),
        ))

    # --- Queries ------------------------------------------------------------------

    def window(self, game: JointGame | None) -> JointWindow | None:
        window = self.state.window
        return window if game is not None and window is not None and window.game_id == game.game_id else None

    def cards(self, game_id: str, account: str) -> list[JointCard]:
        """The cards ``account`` holds in joint game ``game_id``, in the order bought."""
        if self.state.game_id != game_id:
            return []
        return list(self.state.holdings.get(account, ()))

    def owner(self, game_id: str, label: str) -> str | None:
        """The account holding card ``label`` (``series-number``) of joint game ``game_id``."""
        if self.state.game_id != game_id:
            return None
        for account, cards in self.state.holdings.items():
            if any(card.ref.label == label for card in cards):
                return account
        return None

    # --- Commands -------------------------------------------------------------------

    def open_sale(self, actor: Actor, seconds: int) -> defer.Deferred[list[Record]]:
        """Open (or extend) this room's terminals' sale of the joint game for ``seconds`` (R93.1)."""

        def decide(now: int) -> list[JournalRecord]:
            try:
                game = self.annex.selling()
            except AnnexError as error:
                raise AnnexError(f"the terminals' sale opens while this room's sale is open: {error}") from None
            if isinstance(seconds, bool) or not isinstance(seconds, int) or not 1 <= seconds <= MAX_SALE_SECONDS:
                raise AnnexError(N_("the sale lasts 1 to {most} seconds, not {seconds!r}"), most=MAX_SALE_SECONDS,
                                 seconds=seconds)
            window = self.window(game)
            return [AnnexTerminalSaleOpened(
                game_id=game.game_id, opens_at_ms=window.opens_at_ms if window else now,
                closes_at_ms=now + seconds * 1000, series=self.library.label, price_cents=game.price_cents,
            )]  # fmt: skip

        return self.core.execute(actor, "annex_open_terminal_sale", decide)

    def request_purchase(self, request: PurchaseRequest, game_id: str) -> defer.Deferred[list[JointCard]]:
        """Decide ``request`` for joint game ``game_id`` now; fires with the cards bought, or fails with
        :class:`~hall_server.hall.virtual.PurchaseRefused` (journaled)."""
        outcomes: list[PurchaseRefused | PurchaseOutcome] = []

        def decide(now: int) -> list[JournalRecord]:
            entries, outcome = self._decide(request, game_id, now)
            outcomes.append(outcome)
            return entries

        def committed(records: list[Record]) -> list[JointCard]:
            (outcome,) = outcomes
            if isinstance(outcome, PurchaseRefused):
                raise outcome
            if outcome.refusal is not None:
                raise PurchaseRefused(outcome.refusal)
            return self.bought_cards(outcome)

        return self.core.execute(SYSTEM, "annex_buy_virtual_cards", decide).addCallback(committed)

    def bought_cards(self, outcome: PurchaseOutcome) -> list[JointCard]:
        if outcome.game_id is None or outcome.signed_in is None:
            return []
        return [card for card in self.cards(outcome.game_id, player_account(outcome.signed_in))
                if outcome.first <= card.ref.number <= outcome.last]

    def _decide(self, request: PurchaseRequest, game_id: str,
                now: int) -> tuple[list[JournalRecord], PurchaseRefused | PurchaseOutcome]:
        key = (request.terminal_id, request.request)
        remembered = self.state.requests if self.state.game_id == game_id else {}
        earlier = remembered.get(key) if request.request else None
        if earlier is not None:
            if earlier.signed_in == request.signed_in:
                return [], earlier  # sent again: its first outcome, nothing recorded
            other = PurchaseRefused(
                f"request {request.request} was made on this terminal for another account; send a new request")
            return [self._refusal(request, game_id, other)], other
        try:
            account = self.virtual.buyer(request)
            game = self._selling(game_id, now)
            quantity, stake_pct, stake = quantity_and_stake(request, game.price_cents)
            held = sum(1 for card in self.cards(game.game_id, account) if card.terminal_id == request.terminal_id)
            if held + quantity > MAX_CARDS_PER_PLAYER:
                raise PurchaseRefused(
                    f"at most {MAX_CARDS_PER_PLAYER} cards per player on one terminal in a game (R83.7); "
                    f"you hold {held}, so you may buy {MAX_CARDS_PER_PLAYER - held} more",
                    "cards_max", max=MAX_CARDS_PER_PLAYER, held=held, left=MAX_CARDS_PER_PLAYER - held)
            assigned = self.state.assigned if self.state.game_id == game.game_id else 0
            if assigned + quantity > self.library.size:
                raise PurchaseRefused(
                    f"only {self.library.size - assigned} virtual cards are left in series {self.library.label}")
            amount = quantity * stake
            credit = self.ledger.balance(account)
            if amount > credit:
                raise PurchaseRefused(f"{quantity} card(s) at {format_cents(stake)} cost {format_cents(amount)}; "
                                      f"your credit is {format_cents(credit)}", "credit_short", quantity=quantity,
                                      stake_cents=stake, amount_cents=amount, credit_cents=credit)
            for check in self.virtual.purchase_checks:
                refusal = check(account, amount, now)
                if refusal is not None:
                    raise PurchaseRefused(refusal, getattr(refusal, "reason", ""), **getattr(refusal, "params", {}))
        except PurchaseRefused as refusal:
            return [self._refusal(request, game_id, refusal)], refusal
        first = assigned + 1
        seq = self.core.seq + 1
        posting = Posting.transfer(amount, debit=account, credit=stakes_account(game.game_id), reason="sale:virtual",
                                   reference=Reference(game.game_id, None, seq))
        self.ledger.check([posting])
        bought = PurchaseOutcome(request.signed_in, game.game_id, first, first + quantity - 1)
        return [AnnexVirtualCardsBought(
            game_id=game.game_id, terminal=request.terminal_id, account=account, request=request.request,
            series=self.library.number, series_label=self.library.label, first=first, last=first + quantity - 1,
            quantity=quantity, stake_pct=stake_pct, stake_cents=stake, amount_cents=amount,
            price_cents=game.price_cents, signed_in=request.signed_in,
        ), *posting_records([posting])], bought  # fmt: skip

    def _selling(self, game_id: str, now: int) -> JointGame:
        """The joint game ``game_id`` if this room's terminals sell it now (R93.1, R93.8)."""
        try:
            game = self.annex.selling()
        except AnnexError as error:
            raise PurchaseRefused(f"no hall-annex game is on sale in this room ({error})", "no_sale") from None
        if game.game_id != game_id:
            raise PurchaseRefused(f"hall-annex game {game_id} is not the one on sale; {game.game_id} is")
        window = self.window(game)
        if window is None or not window.opens_at_ms <= now < window.closes_at_ms:
            raise PurchaseRefused("the sale time for terminals is over or has not begun (R93.1, R93.8)", "sale_time")
        return game

    @staticmethod
    def _refusal(request: PurchaseRequest, game_id: str, refusal: PurchaseRefused) -> TerminalRequestRefused:
        return TerminalRequestRefused(
            terminal=request.terminal_id, request=request.request, what=JOINT_BUY, account=request.account,
            signed_in=request.signed_in, game_id=game_id[:64], reason=str(refusal),
        )

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        self.state = JointSalesState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        state = self.state
        match event:
            case AnnexGameOpened():
                self.state = JointSalesState(game_id=event.game_id)  # a new joint game: the last one's are over
            case AnnexTerminalSaleOpened():
                state.window = JointWindow(event.game_id, event.opens_at_ms, event.closes_at_ms)
            case AnnexVirtualCardsBought() if event.game_id == state.game_id:
                self._bought(event)
            case AnnexTerminalFailed() if event.game_id == state.game_id and event.refunded:
                refunded = set(event.refunded)  # they left the game: the player holds them no more
                for cards in state.holdings.values():
                    cards[:] = [card for card in cards if card.ref.label not in refunded]
            case TerminalRequestRefused() if event.what == JOINT_BUY and event.game_id == state.game_id:
                self._remember(event.terminal, event.request,
                               PurchaseOutcome(event.signed_in, event.game_id, refusal=event.reason))

    def _bought(self, event: AnnexVirtualCardsBought) -> None:
        state = self.state
        held = state.holdings.setdefault(event.account, [])
        for number in range(event.first, event.last + 1):
            held.append(JointCard(
                CardRef(event.series, number), f"{event.series_label}-{number}",
                tuple(int(n) for n in self.library.cells[number - 1]), self.library.codes[number - 1],
                event.price_cents, event.stake_cents, event.stake_pct, event.terminal,
            ))
        state.assigned = max(state.assigned, event.last)
        self._remember(event.terminal, event.request,
                       PurchaseOutcome(event.signed_in, event.game_id, event.first, event.last))

    def _remember(self, terminal: str, request: str | None, outcome: PurchaseOutcome) -> None:
        if request:
            self.state.requests.setdefault((terminal, request), outcome)


__all__ = ["JOINT_BUY", "JointCard", "JointTerminalSales", "JointWindow"]

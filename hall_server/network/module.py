"""The hall's side of the network games, on the command core: holds, captures, balls, prizes, credits.

:class:`NetworkModule` folds the ``network_*`` records (:mod:`protocol.records.network`)
into :class:`NetworkState` and decides every change as a command of the hall's core, so
a restarted hall holds each network game, each hold and each credit exactly as its
journal left them.  It does no I/O: the relay (:mod:`hall_server.network.relay`) hands
it what the central server said and sends what it journaled.

* **Purchases, exactly once** (R93.1-8).  :meth:`NetworkModule.hold` checks a
  terminal's request (the player signed in, the account usable, the game's sale open as
  far as the hall knows, the credit, the player's limits), then journals
  ``network_credit_held`` with a new request id (``<hall>.<seq of that record>``: unique
  for ever within the hall) and moves the credit ``player:<account>`` ->
  ``held:<game>``.  The relay sends ``buy_cards`` with that id once the hold is
  committed, and again after any failure, until :meth:`NetworkModule.settle` takes the
  central server's answer: confirmed -> ``network_cards_bought`` and ``held:<game>`` ->
  ``network:<game>``; refused -> ``network_credit_released`` and the credit goes back.
  A hold is settled once: a second answer for it changes nothing.  The terminal's own
  request id maps to the hold, so a terminal that sends its purchase again is told the
  first outcome and charged once.
* **What the central server pushes** (the sale, balls, prizes, winners, credits, the
  end) is journaled once, in order: a ball is taken only as the next one
  (``ball_count`` = balls held + 1); one the hall holds already is nothing new; a gap or
  a different ball at a known place is refused (:class:`NetworkRefused`) and changes
  nothing.  Winners and credits are kept by their sequence numbers.
* **Credits** (R85.9): each credit ``seq`` of a game is paid once into the account of
  the player the hall named in the purchase (``network:<game>`` -> ``player:<account>``).
* **A terminal declared failed** (R96.3) while it holds cards of a network game that is
  not over: ``network_terminal_failure_reported`` with its own request id, sent until
  the central server answers; its refunds come back as credits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from twisted.internet import defer
from twisted.logger import Logger

from hall_server.hall.cashier import CashierModule, normalize_account_number, player_account
from hall_server.hall.ledger import LedgerModule, posting_records
from hall_server.hall.roles import SYSTEM, Role
from protocol.chain import Record
from protocol.errors import DomainError, ReasonedRefusal
from protocol.ledger import Posting, Reference
from protocol.money import format_cents
from protocol.records import JournalRecord, declared
from protocol.records.network import (
    NetworkBallDrawn,
    NetworkCardsBought,
    NetworkCreditHeld,
    NetworkCreditPaid,
    NetworkCreditReleased,
    NetworkGameClosed,
    NetworkGameNotPlayed,
    NetworkPrizeAmount,
    NetworkPrizeShare,
    NetworkPrizeWon,
    NetworkSaleClosed,
    NetworkSaleOpened,
    NetworkTerminalFailureAnswered,
    NetworkTerminalFailureReported,
    NetworkWinner,
    NetworkWinners,
)
from protocol.sale import MAX_CARDS_PER_PLAYER  # the central server checks it too
from protocol.settlement import stake_cents
from server_kit.core import CommandCore, Decide
from server_kit.journal.projection import ProjectedState

#: A card's cells: 3 rows of 9, row by row, 0 for a blank.
CARD_CELLS = 27
#: Phases of a network game as the hall knows it.
SELLING, SALE_CLOSED, DRAWING, CLOSED, NOT_PLAYED = "selling", "sale_closed", "drawing", "closed", "not_played"
FINAL = frozenset({CLOSED, NOT_PLAYED})

PERMISSIONS = {
    name: {Role.SYSTEM}
    for name in (
        "network_sale_opened", "network_hold", "network_settle", "network_sale_closed", "network_ball",
        "network_prize_won", "network_winners", "network_credit", "network_game_closed",
        "network_game_not_played", "network_terminal_failure", "network_terminal_failure_answered",
        "network_gate",
    )  # fmt: skip
}


class NetworkError(ReasonedRefusal):
    """A network-game request the hall refused; the message says why (for a purchase a player
    meets on the kiosk, the same ``reason`` and figures as the hall game's)."""


class NetworkRefused(NetworkError):
    """What the central server sent that the hall does not take; ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def held_account(game_id: str) -> str:
    return f"held:{game_id}"


def network_account(game_id: str) -> str:
    return f"network:{game_id}"


def _sale_opened(args: Mapping[str, Any], *, remaining_ms: int, closes_here_ms: int) -> NetworkSaleOpened:
    """The opening of a sale as the central server announced it (``sale_opened``, ``game_under_way``)."""
    return NetworkSaleOpened(
        game_id=args["game_id"], series=args["series"], first_card=args["first_card"],
        price_cents=args["price_cents"], closes_at_ms=args["closes_at_ms"], remaining_ms=remaining_ms,
        closes_here_ms=closes_here_ms, ball_interval_ms=args["ball_interval_ms"],
        prizes=tuple(NetworkPrizeShare(pattern=prize["pattern"], basis_points=prize["basis_points"],
                                       carry_in_cents=prize["carry_in_cents"]) for prize in args["prizes"]),
    )  # fmt: skip


def _prize_amounts(prizes: Iterable[Mapping[str, Any]]) -> tuple[NetworkPrizeAmount, ...]:
    """Each prize's amount as the central server gave it (``sale_closed``, ``game_under_way``)."""
    return tuple(NetworkPrizeAmount(pattern=prize["pattern"], amount_cents=prize["amount_cents"]) for prize in prizes)


#: The records of a game the hall knows, folded into its :class:`NetworkGame`.
GameRecord = (NetworkSaleClosed | NetworkBallDrawn | NetworkPrizeWon | NetworkWinners | NetworkCreditPaid
              | NetworkGameClosed | NetworkGameNotPlayed)

# --- State ------------------------------------------------------------------------------


@dataclass
class NetworkGame:
    """One network game as the hall knows it."""

    game_id: str
    series: str
    first_card: int
    price_cents: int
    closes_at_ms: int  # central clock
    closes_here_ms: int  # hall clock: what terminals count down to
    ball_interval_ms: int
    prizes: list[tuple[str, int]]  # (pattern, basis points), in the order of announcement
    phase: str = SELLING
    balls: list[int] = field(default_factory=list)
    cards_sold: int | None = None
    sales_cents: int | None = None
    prize_amounts: dict[str, int] = field(default_factory=dict)
    hall_cards_sold: int | None = None
    hall_sales_cents: int | None = None
    won: dict[str, int] = field(default_factory=dict)  # pattern -> ball count
    winners: list[NetworkWinner] = field(default_factory=list)
    credits_paid: set[int] = field(default_factory=set)
    not_played_reason: str | None = None

    @property
    def over(self) -> bool:
        return self.phase in FINAL

    @property
    def last_credit_paid(self) -> int:
        """The highest credit seq paid with every one below it paid too (where get_credits resumes)."""
        seq = 0
        while seq + 1 in self.credits_paid:
            seq += 1
        return seq


@dataclass
class Hold:
    """A network purchase: the credit held, then captured or released."""

    request_id: str
    game_id: str
    terminal: str
    terminal_request: str
    account: str  # the ledger account, player:<number>
    player_ref: str
    card_count: int
    stake_pct: int
    stake_cents: int
    amount_cents: int
    seq: int  # the hold's record
    status: str = "held"  # held, bought, released
    first_card: int | None = None
    series: str | None = None
    refusal_code: str | None = None
    refusal: str | None = None
    cells: tuple[int, ...] = ()  # 27 a card, card after card, as the central server gave them

    @property
    def decided(self) -> bool:
        return self.status != "held"

    @property
    def labels(self) -> list[str]:
        if self.first_card is None or self.series is None:
            return []
        return [f"{self.series}-{n}" for n in range(self.first_card, self.first_card + self.card_count)]

    def card_cells(self, index: int) -> list[int]:
        """The 27 cells of the purchase's card ``index`` (0, 1...), or none if the central server sent none."""
        if len(self.cells) != self.card_count * CARD_CELLS:
            return []
        return list(self.cells[index * CARD_CELLS : (index + 1) * CARD_CELLS])


@dataclass
class FailureReport:
    request_id: str
    game_id: str
    terminal: str
    reason: str
    declared_by: str
    answered: bool = False


@dataclass
class NetworkState:
    games: dict[str, NetworkGame] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # game ids in the order their sales opened
    holds: dict[str, Hold] = field(default_factory=dict)  # by request id
    by_terminal_request: dict[tuple[str, str], str] = field(default_factory=dict)
    players: dict[str, str] = field(default_factory=dict)  # player_ref -> ledger account
    failures: dict[str, FailureReport] = field(default_factory=dict)


@dataclass(frozen=True)
class NetworkPurchase:
    """A terminal's purchase in a network game, as the gateway passes it on."""

    terminal: str
    signed_in: str | None
    account: str
    game_id: str
    quantity: int
    stake_pct: int
    request: str


# --- The module -------------------------------------------------------------------------


class NetworkModule(ProjectedState):
    """The network games at this hall: commands in, records out, state from the journal."""

    log = Logger()

    def __init__(
        self,
        core: CommandCore,
        ledger: LedgerModule,
        cashier: CashierModule,
        hall_id: str,
        *,
        purchase_checks: Sequence[Callable[[str, int, int], str | None]] = (),
    ) -> None:
        self.core = core
        self.ledger = ledger
        self.cashier = cashier
        self.hall_id = hall_id
        #: Other reasons a purchase is refused (the player's limits, R97.2): as VirtualModule's.
        self.purchase_checks = purchase_checks
        self.state = NetworkState()
        #: Called with each hold once committed, to relay it (set by the relay).
        self.relay_hold: Callable[[Hold], None] = lambda hold: None
        #: Called with each failure report once committed.
        self.relay_failure: Callable[[FailureReport], None] = lambda report: None
        #: Whether the link to the central server is up (set by the relay); purchases need it.
        self.link_up: Callable[[], bool] = lambda: False
        #: The central clock less this hall's, as the link measures it (protocol version 3), or None: a
        #: sale's deadline on the central clock is then this hall's gate on its own.
        self.central_offset_ms: int | None = None
        self._waiting: dict[str, list[defer.Deferred[Hold]]] = {}
        self._deciding: set[str] = set()  # holds whose settlement is decided but not committed yet
        core.add_module(self)
        core.allow(PERMISSIONS)
        core.observers.append(self._committed)

    # --- Queries ------------------------------------------------------------------

    def game(self, game_id: str) -> NetworkGame | None:
        return self.state.games.get(game_id)

    def current(self) -> NetworkGame | None:
        """The network game terminals show: the latest whose sale opened."""
        return self.state.games[self.state.order[-1]] if self.state.order else None

    def live_games(self) -> list[NetworkGame]:
        return [self.state.games[g] for g in self.state.order if not self.state.games[g].over]

    def pending_holds(self) -> list[Hold]:
        """Holds the central server has not answered yet, oldest first."""
        return sorted((h for h in self.state.holds.values() if not h.decided), key=lambda h: h.seq)

    def pending_failures(self) -> list[FailureReport]:
        return [f for f in self.state.failures.values() if not f.answered]

    def holds_of(self, game_id: str, account: str) -> list[Hold]:
        """The purchases of ``account`` (ledger form) in ``game_id``, in order."""
        return sorted((h for h in self.state.holds.values() if h.game_id == game_id and h.account == account),
                      key=lambda h: h.seq)

    def hold_for(self, terminal: str, terminal_request: str) -> Hold | None:
        request_id = self.state.by_terminal_request.get((terminal, terminal_request))
        return self.state.holds.get(request_id) if request_id is not None else None

    def account_of(self, player_ref: str) -> str | None:
        return self.state.players.get(player_ref)

    def settled(self, request_id: str) -> defer.Deferred[Hold]:
        """Fires with the hold once the central server's answer is committed (at once if it is)."""
        hold = self.state.holds.get(request_id)
        if hold is not None and hold.decided and request_id not in self._deciding:
            return defer.succeed(hold)
        waiting: defer.Deferred[Hold] = defer.Deferred()
        self._waiting.setdefault(request_id, []).append(waiting)
        return waiting

    # --- Running commands ------------------------------------------------------------

    def _run(self, command: str, decide: Decide) -> defer.Deferred[list[Record]]:
        return self.core.execute(SYSTEM, command, decide)

    def _known(self, game_id: str) -> NetworkGame:
        game = self.state.games.get(game_id)
        if game is None:
            raise NetworkRefused("unknown_game", f"this hall knows no network game {game_id}")
        return game

    # --- Purchases ----------------------------------------------------------------------

    def hold(self, purchase: NetworkPurchase) -> defer.Deferred[Hold]:
        """Hold the credit of a terminal's purchase and give it a request id; fires with the hold.

        The same terminal request sent again fires with the hold it made the first time.
        Refused with :class:`NetworkError` (nothing journaled here; the gateway journals
        the refusal as it does every terminal refusal).
        """
        found: list[Hold] = []

        def decide(now: int) -> list[JournalRecord]:
            earlier = self.hold_for(purchase.terminal, purchase.request)
            if earlier is not None:
                if earlier.account != player_account(purchase.signed_in or ""):
                    raise NetworkError(f"request {purchase.request} was made on this terminal for another account; "
                                       "send a new request")
                found.append(earlier)
                return []
            account, game, stake = self._check(purchase, now)
            amount = stake * purchase.quantity
            seq = self.core.seq + 1
            request_id = f"{self.hall_id}.{seq}"
            player_ref = self._player_ref(account)
            posting = Posting.transfer(amount, debit=account, credit=held_account(game.game_id),
                                       reason="network:hold", reference=Reference(game.game_id, None, seq))
            self.ledger.check([posting])
            return [NetworkCreditHeld(
                game_id=game.game_id, request_id=request_id, terminal=purchase.terminal,
                terminal_request=purchase.request, account=account, player_ref=player_ref,
                card_count=purchase.quantity, stake_pct=purchase.stake_pct, stake_cents=stake, amount_cents=amount,
            ), *posting_records([posting])]  # fmt: skip

        def committed(records: list[Record]) -> Hold:
            if found:
                return found[0]
            held = declared(records[0])
            assert isinstance(held, NetworkCreditHeld), "a hold's first record is the hold"
            hold = self.state.holds[held.request_id]
            self.relay_hold(hold)
            return hold

        return self._run("network_hold", decide).addCallback(committed)

    def _player_ref(self, account: str) -> str:
        """How the central server knows the player: ``p.`` and the seq of the account's opening record."""
        number = account.removeprefix("player:")
        known = self.cashier.state.accounts.get(number)
        return f"p.{known.seq}" if known is not None else f"p.{number}"

    def _check(self, purchase: NetworkPurchase, now: int) -> tuple[str, NetworkGame, int]:
        if purchase.signed_in is None:
            raise NetworkError("sign in with your account and PIN first", "signed_out")
        try:
            named = normalize_account_number(purchase.account)
        except DomainError:
            raise NetworkError(f"{purchase.account!r} is not an account number") from None
        if named != purchase.signed_in:
            raise NetworkError("cards are bought only for the account signed in on this terminal")
        try:
            self.cashier.usable_account(named)
        except DomainError as error:
            raise NetworkError(str(error)) from None
        game = self.state.games.get(purchase.game_id)
        if game is None:
            raise NetworkError(f"there is no network game {purchase.game_id} on sale")
        if game.phase != SELLING or now >= game.closes_here_ms:  # the hall's gate closes at the deadline
            raise NetworkError("the sale time of this network game is over; no card can be bought any more (R93.8)",
                               "sale_time")
        if not self.link_up():
            raise NetworkError("the link to the central server is down; the purchase cannot be sent now. "
                               "Try again when the terminal shows the link back", "link_down")
        if not 1 <= purchase.quantity <= MAX_CARDS_PER_PLAYER:
            raise NetworkError(f"the number of cards is 1 to {MAX_CARDS_PER_PLAYER}, not {purchase.quantity}")
        if not 1 <= purchase.stake_pct <= 100:
            raise NetworkError(f"the stake is 1 to 100 percent of the card's value, not {purchase.stake_pct}")
        account = player_account(named)
        held = sum(h.card_count for h in self.holds_of(game.game_id, account)
                   if h.terminal == purchase.terminal and h.status != "released")
        if held + purchase.quantity > MAX_CARDS_PER_PLAYER:
            raise NetworkError(f"at most {MAX_CARDS_PER_PLAYER} cards per player on one terminal in a game (R83.7); "
                               f"you hold or await {held}, so you may buy {MAX_CARDS_PER_PLAYER - held} more",
                               "cards_max", max=MAX_CARDS_PER_PLAYER, held=held, left=MAX_CARDS_PER_PLAYER - held)
        stake = stake_cents(game.price_cents, purchase.stake_pct)
        if stake < 1:
            raise NetworkError(f"a stake of {purchase.stake_pct}% of {format_cents(game.price_cents)} is nothing; "
                               "stake more")
        amount = stake * purchase.quantity
        credit = self.ledger.balance(account)
        if amount > credit:
            raise NetworkError(f"{purchase.quantity} card(s) at {format_cents(stake)} cost {format_cents(amount)}; "
                               f"your credit is {format_cents(credit)}", "credit_short", quantity=purchase.quantity,
                               stake_cents=stake, amount_cents=amount, credit_cents=credit)
        # What the central server has not answered yet counts against the player's limits too.
        awaiting = sum(h.amount_cents for h in self.state.holds.values() if h.account == account and not h.decided)
        for check in self.purchase_checks:
            refusal = check(account, amount + awaiting, now)
            if refusal is not None:  # the responsible-play limits: a Refusal with its reason and figures
                raise NetworkError(refusal, getattr(refusal, "reason", ""), **getattr(refusal, "params", {}))
        return account, game, stake

    def settle(self, request_id: str, answer: Mapping[str, Any]) -> defer.Deferred[Hold]:
        """Take the central server's answer to ``buy_cards`` (checked against the protocol
        by the relay): capture or release the hold, once; fires with the hold."""

        def decide(now: int) -> list[JournalRecord]:
            hold = self.state.holds.get(request_id)
            if hold is None:
                raise NetworkRefused("bad_argument", f"this hall holds no purchase {request_id}")
            if hold.decided:
                return []  # answered before: the first answer stands
            reference = Reference(hold.game_id, None, self.core.seq + 1)
            if answer.get("status") == "confirmed":
                amount = int(answer["amount_cents"])
                if amount != hold.amount_cents or int(answer["card_count"]) != hold.card_count:
                    self.log.error("The central server confirmed {request} for {amount} cents and {n} card(s); "
                                   "the hall held {held} cents for {k}", request=request_id, amount=amount,
                                   n=answer["card_count"], held=hold.amount_cents, k=hold.card_count)
                captured = min(amount, hold.amount_cents)
                postings = [] if captured == 0 else [
                    Posting.transfer(captured, debit=held_account(hold.game_id),
                                     credit=network_account(hold.game_id), reason="network:stake",
                                     reference=reference)]
                if captured < hold.amount_cents:
                    postings.append(Posting.transfer(hold.amount_cents - captured, debit=held_account(hold.game_id),
                                                     credit=hold.account, reason="network:release",
                                                     reference=reference))
                bought = NetworkCardsBought(
                    game_id=hold.game_id, request_id=request_id, account=hold.account,
                    decision=int(answer["decision"]), series=str(answer["series"]),
                    first_card=int(answer["first_card"]), card_count=int(answer["card_count"]),
                    stake_cents=int(answer["stake_cents"]), amount_cents=captured,
                    cells=self._cells_of(request_id, answer),
                )  # fmt: skip
                return [bought, *posting_records(postings)]
            posting = Posting.transfer(hold.amount_cents, debit=held_account(hold.game_id), credit=hold.account,
                                       reason="network:release", reference=reference)
            decision = answer.get("decision")
            return [NetworkCreditReleased(
                game_id=hold.game_id, request_id=request_id,
                decision=int(decision) if decision is not None else None,
                refusal_code=str(answer.get("refusal_code") or "refused"),
                refusal_text=str(answer.get("refusal") or "The central server refused the purchase.")[:300],
            ), *posting_records([posting])]  # fmt: skip

        self._deciding.add(request_id)

        def done(outcome: Any) -> Any:
            self._deciding.discard(request_id)
            self._wake(request_id)
            return outcome

        return self._run("network_settle", decide).addBoth(done).addCallback(lambda _: self.state.holds[request_id])

    def _cells_of(self, request_id: str, answer: Mapping[str, Any]) -> tuple[int, ...]:
        """The confirmed cards' numbers, if the answer carries all of them and each card is a card."""
        cells = tuple(int(n) for n in answer.get("cells") or ())
        if not cells:
            return ()
        count = int(answer["card_count"])
        cards = [cells[i : i + CARD_CELLS] for i in range(0, len(cells), CARD_CELLS)]
        if len(cells) != count * CARD_CELLS or any(sum(1 for n in card if n) != 15 for card in cards):
            self.log.error("The central server's answer to {request} carries {n} cells for {k} card(s); the cards "
                           "are shown without their numbers", request=request_id, n=len(cells), k=count)
            return ()
        return cells

    def _wake(self, request_id: str) -> None:
        hold = self.state.holds.get(request_id)
        if hold is None or not hold.decided:
            return
        for waiting in self._waiting.pop(request_id, []):
            waiting.callback(hold)

    def _committed(self, record: Record) -> None:
        event = declared(record)
        if isinstance(event, (NetworkCardsBought, NetworkCreditReleased)):
            self._wake(event.request_id)

    # --- What the central server says ----------------------------------------------------

    def sale_opened(self, args: Mapping[str, Any]) -> defer.Deferred[list[Record]]:
        """The sale of a network game opened (R93.1): journaled once per game."""

        def decide(now: int) -> list[JournalRecord]:
            if args["game_id"] in self.state.games:
                return []  # heard before (a push sent again, a catch-up)
            # The gate: the deadline on the central clock as the link measures it (version 3), else what
            # remains of the sale from when its opening is heard.
            offset = self.central_offset_ms
            closes_here = now + args["remaining_ms"] if offset is None else args["closes_at_ms"] - offset
            return [_sale_opened(args, remaining_ms=args["remaining_ms"], closes_here_ms=closes_here)]

        return self._run("network_sale_opened", decide)

    def game_under_way(self, args: Mapping[str, Any]) -> defer.Deferred[list[Record]]:
        """A game whose sale closed before this hall linked (``game_under_way``): its sale and its close,
        as ``sale_opened`` and ``sale_closed`` would have said them, journaled once; the hall bought nothing in it."""

        def decide(now: int) -> list[JournalRecord]:
            if args["game_id"] in self.state.games:
                return []  # the hall knows it: its catch-up does the rest
            return [_sale_opened(args, remaining_ms=0, closes_here_ms=now), NetworkSaleClosed(
                game_id=args["game_id"], cards_sold=args["cards_sold"], sales_cents=args["sales_cents"],
                prizes=_prize_amounts(args["prize_amounts"]), hall_cards_sold=0, hall_sales_cents=0,
            )]  # fmt: skip

        return self._run("network_sale_opened", decide)

    def gate_passed(self) -> defer.Deferred[list[Record]]:
        """Fires once every command decided before it is committed (and each hold relayed): a gate closes
        after the purchases it let through."""
        return self._run("network_gate", lambda now: [])

    def sale_closed(self, args: Mapping[str, Any]) -> defer.Deferred[list[Record]]:
        """The sale closed: cards and prizes network-wide and the hall's share (R93.9)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._known(args["game_id"])
            if game.phase != SELLING:
                return []
            return [NetworkSaleClosed(
                game_id=game.game_id, cards_sold=args["cards_sold"], sales_cents=args["sales_cents"],
                prizes=_prize_amounts(args["prizes"]), hall_cards_sold=args["hall_cards_sold"],
                hall_sales_cents=args["hall_sales_cents"],
            )]  # fmt: skip

        return self._run("network_sale_closed", decide)

    def ball(self, game_id: str, ball: int, ball_count: int) -> defer.Deferred[list[Record]]:
        """Ball number ``ball_count`` is ``ball``: journaled if it is the next one; nothing if held already."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._known(game_id)
            have = len(game.balls)
            if ball_count <= have:
                if game.balls[ball_count - 1] != ball:
                    raise NetworkRefused("bad_argument", f"ball {ball_count} of game {game_id} is "
                                         f"{game.balls[ball_count - 1]} here, not {ball}")
                return []
            if ball_count != have + 1:
                raise NetworkRefused("bad_argument", f"game {game_id}: ball {ball_count} came after ball {have}; "
                                     "the balls between are missing")
            if game.over:
                raise NetworkRefused("bad_argument", f"game {game_id} is over; no ball follows")
            if ball in game.balls:
                raise NetworkRefused("bad_argument", f"game {game_id}: ball {ball} was drawn already")
            return [NetworkBallDrawn(game_id=game_id, ball=ball, ball_count=ball_count)]

        return self._run("network_ball", decide)

    def prize_won(self, args: Mapping[str, Any]) -> defer.Deferred[list[Record]]:
        """A pattern won (R93.12): journaled once per pattern, its winners after it."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._known(args["game_id"])
            entries: list[JournalRecord] = []
            if args["pattern"] not in game.won:
                entries.append(NetworkPrizeWon(
                    game_id=game.game_id, pattern=args["pattern"], ball_count=args["ball_count"],
                    amount_cents=args["amount_cents"], winner_count=args["winner_count"], final=args["final"],
                ))  # fmt: skip
            entries += self._winner_entries(game, args["winners"])
            return entries

        return self._run("network_prize_won", decide)

    def winners(self, game_id: str, page: Sequence[Mapping[str, Any]]) -> defer.Deferred[list[Record]]:
        """Winners the hall does not hold yet (a page of ``get_winners``)."""
        return self._run("network_winners", lambda now: self._winner_entries(self._known(game_id), page))

    def _winner_entries(self, game: NetworkGame, page: Sequence[Mapping[str, Any]]) -> list[JournalRecord]:
        known = {w.seq for w in game.winners}
        new = tuple(NetworkWinner(**w) for w in page if w["seq"] not in known)
        return [NetworkWinners(game_id=game.game_id, winners=new)] if new else []

    def credit(self, game_id: str, item: Mapping[str, Any]) -> defer.Deferred[list[Record]]:
        """Pay credit ``item["seq"]`` of the game into its player's account, once (R85.9)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._known(game_id)
            if item["seq"] in game.credits_paid:
                return []
            account = self.state.players.get(item["player_ref"])
            if account is None:
                raise NetworkRefused("bad_argument", f"credit {item['seq']} of game {game_id} is for player "
                                     f"{item['player_ref']}, who bought nothing here")
            seq = self.core.seq + 1
            entries: list[JournalRecord] = [NetworkCreditPaid(
                game_id=game_id, seq=item["seq"], kind=item["kind"], account=account, player_ref=item["player_ref"],
                terminal=item["terminal_id"], amount_cents=item["amount_cents"], pattern=item.get("pattern"),
                card_number=item.get("card_number"), card_count=item.get("card_count"),
                purchase_request_id=item.get("purchase_request_id"), paid_by=item.get("paid_by"),
            )]  # fmt: skip
            if item["amount_cents"] > 0:
                reason = f"network:prize:{item['pattern']}" if item["kind"] == "prize" else "network:refund"
                posting = Posting.transfer(item["amount_cents"], debit=network_account(game_id), credit=account,
                                           reason=reason, reference=Reference(game_id, None, seq))
                entries += posting_records([posting])
            return entries

        return self._run("network_credit", decide)

    def game_closed(self, game_id: str, ball_count: int, carries: Iterable[Mapping[str, Any]]) -> defer.Deferred[list[Record]]:
        def decide(now: int) -> list[JournalRecord]:
            game = self._known(game_id)
            if game.over:
                return []
            return [NetworkGameClosed(game_id=game_id, ball_count=ball_count, carries=tuple(
                NetworkPrizeAmount(pattern=c["pattern"], amount_cents=c["carry_cents"]) for c in carries
            ))]

        return self._run("network_game_closed", decide)

    def game_not_played(self, game_id: str, reason: str, last_credit_seq: int) -> defer.Deferred[list[Record]]:
        """Force majeure (R96.2): the refunds follow as credits."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._known(game_id)
            if game.over:
                return []
            return [NetworkGameNotPlayed(game_id=game_id, reason=reason, last_credit_seq=last_credit_seq)]

        return self._run("network_game_not_played", decide)

    # --- Terminal failures -------------------------------------------------------------------

    def report_terminal_failure(self, terminal: str, reason: str, declared_by: str) -> defer.Deferred[list[Record]]:
        """Staff declared ``terminal`` failed (R96.3): report it in every network game not over
        in which it bought cards (or holds credit for them)."""

        def decide(now: int) -> list[JournalRecord]:
            reported = {(f.game_id, f.terminal) for f in self.state.failures.values()}
            entries: list[JournalRecord] = []
            for game in self.live_games():
                if (game.game_id, terminal) in reported:
                    continue
                if not any(h.terminal == terminal and h.game_id == game.game_id and h.status != "released"
                           for h in self.state.holds.values()):
                    continue
                seq = self.core.seq + len(entries) + 1
                entries.append(NetworkTerminalFailureReported(
                    game_id=game.game_id, request_id=f"{self.hall_id}.{seq}", terminal=terminal, reason=reason[:200],
                    declared_by=declared_by[:64],
                ))  # fmt: skip
            return entries

        def committed(records: list[Record]) -> list[Record]:
            for record in records:
                report = declared(record)
                if isinstance(report, NetworkTerminalFailureReported):
                    self.relay_failure(self.state.failures[report.request_id])
            return records

        return self._run("network_terminal_failure", decide).addCallback(committed)

    def failure_answered(self, request_id: str, answer: Mapping[str, Any]) -> defer.Deferred[list[Record]]:
        def decide(now: int) -> list[JournalRecord]:
            report = self.state.failures.get(request_id)
            if report is None or report.answered:
                return []
            return [NetworkTerminalFailureAnswered(
                game_id=report.game_id, request_id=request_id, refunded_cards=answer["refunded_cards"],
                refunded_cents=answer["refunded_cents"], paid_by=answer["paid_by"],
            )]  # fmt: skip

        return self._run("network_terminal_failure_answered", decide)

    # --- Projection ---------------------------------------------------------------------

    def reset(self) -> None:
        self.state = NetworkState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        state = self.state
        match event:
            case NetworkSaleOpened():
                state.games[event.game_id] = NetworkGame(
                    event.game_id, event.series, event.first_card, event.price_cents, event.closes_at_ms,
                    event.closes_here_ms, event.ball_interval_ms, [(x.pattern, x.basis_points) for x in event.prizes],
                )
                state.order.append(event.game_id)
            case NetworkCreditHeld():
                hold = Hold(event.request_id, event.game_id, event.terminal, event.terminal_request, event.account,
                            event.player_ref, event.card_count, event.stake_pct, event.stake_cents,
                            event.amount_cents, record.seq)
                state.holds[hold.request_id] = hold
                state.by_terminal_request[(hold.terminal, hold.terminal_request)] = hold.request_id
                state.players[hold.player_ref] = hold.account
            case NetworkCardsBought():
                hold = state.holds[event.request_id]
                hold.status, hold.first_card, hold.series = "bought", event.first_card, event.series
                hold.cells = event.cells
            case NetworkCreditReleased():
                hold = state.holds[event.request_id]
                hold.status, hold.refusal_code, hold.refusal = "released", event.refusal_code, event.refusal_text
            case NetworkTerminalFailureReported():
                state.failures[event.request_id] = FailureReport(event.request_id, event.game_id, event.terminal,
                                                                 event.reason, event.declared_by)
            case NetworkTerminalFailureAnswered():
                state.failures[event.request_id].answered = True
            case _ if isinstance(event, GameRecord):
                self._fold_game(state.games[event.game_id], event)

    @staticmethod
    def _fold_game(game: NetworkGame, event: GameRecord) -> None:
        match event:
            case NetworkSaleClosed():
                game.phase = SALE_CLOSED
                game.cards_sold, game.sales_cents = event.cards_sold, event.sales_cents
                game.prize_amounts = {x.pattern: x.amount_cents for x in event.prizes}
                game.hall_cards_sold, game.hall_sales_cents = event.hall_cards_sold, event.hall_sales_cents
            case NetworkBallDrawn():
                game.balls.append(event.ball)
                if game.phase in (SELLING, SALE_CLOSED):
                    game.phase = DRAWING
            case NetworkPrizeWon():
                game.won.setdefault(event.pattern, event.ball_count)
            case NetworkWinners():
                for winner in event.winners:
                    game.winners.append(winner)
                    game.won.setdefault(winner.pattern, winner.ball_count)
            case NetworkCreditPaid():
                game.credits_paid.add(event.seq)
            case NetworkGameClosed():
                game.phase = CLOSED
            case NetworkGameNotPlayed():
                game.phase, game.not_played_reason = NOT_PLAYED, event.reason


__all__ = [
    "FINAL",
    "FailureReport",
    "Hold",
    "NetworkError",
    "NetworkGame",
    "NetworkModule",
    "NetworkPurchase",
    "NetworkRefused",
    "NetworkState",
    "held_account",
    "network_account",
]

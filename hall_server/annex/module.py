"""The hall-annex game (R3.5.b) at one hall, on the command core: commands in, ``annex_*`` records out.

One traditional game is played in two rooms: the main hall's and its annex's
(``[annex]`` in ``hall.toml``).  :class:`AnnexModule` folds the records of
:mod:`protocol.records.annex` into :class:`~protocol.annex.JointGame` objects and decides
every change as a command of the hall's core; the rules and the money are
:mod:`protocol.annex`'s.  It does no I/O: :mod:`hall_server.annex.link` relays what this
hall made to the partner through the central server and hands it what the partner made.

* **The cards** (R82.6): at its start a hall declares to its partner the fingerprints
  of every card it may sell in a joint game - its paper card sets with a series, its
  virtual library - whenever they are not the ones it declared last
  (:meth:`AnnexModule.declare_cards`).  The main hall opens a game only on cards that
  do not clash with the annex's last declaration, and the annex checks its own against
  the main hall's when it learns of the game: a room whose cards clash sells nothing in it.
* **The main hall** opens the game (room chief), draws its balls from the hall's own
  draw (the software generator or the blower: the ball source the traditional game
  uses) and closes it once a bingo is verified in either room.
* **Each room** sells its own paper cards (seller-caller: its own series, at the game's
  price, into ``stakes:<game>``) and virtual cards on its own terminals
  (:mod:`hall_server.annex.terminals`), closes its own sale (room chief) and verifies
  the claims made on its paper cards (table chief, against the card set's layouts and
  the balls).  Its virtual cards need no claim: each ball is checked against them as it
  is committed (the main hall's draw, the annex's copy of it), and a card completing a
  pattern is a verified claim of its room (R93.10), under the same rule of the earliest
  ball as a paper card's.
* **The hall's own game** and the joint game share the room and its paper cards: no
  paper card of one is sold before the other's are collected (R82.4), so the main hall
  opens, and each room sells and closes, only while the hall has no game of its own
  under way, and the hall opens its own next game only once the joint game is paid.
* **The pool** is journaled by both halls (``annex_pool``) once both sales are known;
  balls are drawn only after it.
* **Paying**: each hall pays its own winners its share of each prize - a paper card in
  cash at an open desk (cashier), a virtual card to its player's account (R85.9) - and
  journals what it owes its partner in ``interhall:<partner>``.  A room whose winners
  are all virtual is settled with the close, without a desk.
* **What the partner made** arrives as numbered items (``relay_seq``), taken once and in
  order; an item that changes nothing is kept as ``annex_item_ignored`` with the reason.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from twisted.internet.defer import Deferred, DeferredLock, ensureDeferred, maybeDeferred

from hall_server.hall.catalog import CardCatalog, CatalogError
from hall_server.hall.games.common import CARRY, BallSourceFactory, CashDesks
from hall_server.hall.ledger import LedgerModule, posting_records
from hall_server.hall.roles import SYSTEM, Role
from hall_server.hall.virtual import VirtualLibrary
from protocol.annex import (
    CLOSED,
    DRAWING,
    NOT_PLAYED,
    PATTERNS,
    SELLING,
    CardRun,
    JointClaim,
    JointGame,
    JointPool,
    JointVirtualCard,
    card_ref,
    declaration_digest,
    declaration_parts,
    decode_prints,
    find_clash,
    house_and_tax,
    joint_pool,
    joint_rules_refusal,
    owed_to_partner,
    prize_shares,
    winners_of,
)
from protocol.cards import CELLS, Card, fingerprints
from protocol.chain import Record
from protocol.claims import CardRef, WonPattern, check_claim
from protocol.errors import N_, Cents, DomainError, Template
from protocol.ledger import Posting, Reference
from protocol.records import JournalRecord, declared
from protocol.records.annex import (
    AnnexBallDrawn,
    AnnexCardsDeclared,
    AnnexCardsSold,
    AnnexClaimRejected,
    AnnexClaimVerified,
    AnnexGameClosed,
    AnnexGameNotPlayed,
    AnnexGameOpened,
    AnnexItemIgnored,
    AnnexLink,
    AnnexPool,
    AnnexPosted,
    AnnexPrizesPaid,
    AnnexSalesReported,
    AnnexTerminalFailed,
    AnnexVirtualCardsBought,
)
from protocol.settlement import PAPER_STAKE_PCT, PrizeRules
from protocol.settlement.refunds import GAME_REFUND, TERMINAL_REFUND, stakes_account
from protocol.wins import completion_balls
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.projection import ProjectedState

R = Role
PERMISSIONS = {
    "annex_open_game": {R.ROOM_CHIEF},
    "annex_sell_cards": {R.SELLER_CALLER},
    "annex_close_sale": {R.ROOM_CHIEF},
    "annex_draw_ball": {R.SELLER_CALLER},
    "annex_verify_claim": {R.TABLE_CHIEF},
    "annex_close_game": {R.ROOM_CHIEF},
    "annex_pay_prizes": {R.CASHIER, R.ROOM_CHIEF},
    "annex_declare_not_played": {R.ROOM_CHIEF},
    "annex_take": {R.SYSTEM},
    "annex_posted": {R.SYSTEM},
    "annex_link": {R.SYSTEM},
    "annex_declare_cards": {R.SYSTEM},
}
#: The records of facts relayed to the partner (:func:`item_of` says the item each is).
Relayed = (AnnexGameOpened | AnnexSalesReported | AnnexBallDrawn | AnnexClaimVerified | AnnexGameClosed
           | AnnexCardsDeclared | AnnexGameNotPlayed)
#: The records of a joint game the hall knows, folded into its :class:`~protocol.annex.JointGame`.
GameRecord = (AnnexCardsSold | AnnexVirtualCardsBought | AnnexSalesReported | AnnexPool | AnnexBallDrawn
              | AnnexClaimVerified | AnnexGameClosed | AnnexGameNotPlayed | AnnexTerminalFailed | AnnexPrizesPaid)
#: The longest reason a joint game is declared not played for: what the relayed item carries.
NOT_PLAYED_REASON_CHARS = 200
#: The fields of a card declaration's part, in the record and in the item alike.
DECLARATION_FIELDS = ("digest", "part", "parts", "label", "first", "cards", "prints")


class AnnexError(DomainError):
    """A hall-annex command the hall refused; the message says why and what to do."""


class AnnexGap(AnnexError):
    """An item of the partner's stream came before one it follows: the hall fetches the ones it lacks."""


@dataclass
class Declaration:
    """A partner's declaration of its cards as its parts came: complete once it holds ``parts`` of them."""

    digest: str
    parts: int
    received: dict[int, tuple[str, int, np.ndarray]] = field(default_factory=dict)  # part -> (label, first, prints)

    @property
    def complete(self) -> bool:
        return len(self.received) == self.parts

    def runs(self) -> list[CardRun]:
        return [CardRun(label, first, prints) for _, (label, first, prints) in sorted(self.received.items())]


@dataclass
class AnnexState:
    games: dict[str, JointGame] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    last_relay_seq: int = 0  # the partner's items taken, 1..n
    outbox: dict[int, dict[str, Any]] = field(default_factory=dict)  # own record seq -> item, not yet posted
    link_up: bool = True  # as last journaled during a joint game
    declared: str | None = None  # the digest of this hall's last declaration of its cards
    partner_cards: Declaration | None = None  # the partner's last complete declaration
    partner_incoming: Declaration | None = None  # one whose parts are still coming
    #: What each winning card of the latest game settled here was paid: (pattern, hall, card) -> cents.
    payouts: dict[tuple[str, str, str], int] = field(default_factory=dict)


def cells_text(cells: Sequence[int]) -> str:
    """A card's 27 cells as the hall-annex stream carries them: comma-separated, row by row."""
    return ",".join(str(int(n)) for n in cells)


def cells_of_text(text: object) -> tuple[int, ...] | None:
    """The 27 cells of :func:`cells_text`, or None for text that is not a card's cells."""
    if not isinstance(text, str):
        return None
    try:
        cells = tuple(int(n) for n in text.split(","))
    except ValueError:
        return None
    return cells if len(cells) == CELLS and all(0 <= n <= 90 for n in cells) else None


def cards_declared(hall_id: str, part: Mapping[str, Any], relay_seq: int | None = None) -> AnnexCardsDeclared:
    """Part ``part`` (its :data:`DECLARATION_FIELDS`) of hall ``hall_id``'s declaration of its cards."""
    return AnnexCardsDeclared(hall_id=hall_id, **part, relay_seq=relay_seq)


def item_of(event: Relayed) -> dict[str, Any]:
    """The item of the hall-annex stream a relayed record is (``protocol.central_messages.ANNEX_FIELDS``)."""
    fields: dict[str, Any]
    match event:
        case AnnexCardsDeclared():  # of no game: it goes under the declaring hall's name
            return {"game_id": f"{event.hall_id}.cards", "kind": "cards", "digest": event.digest, "part": event.part,
                    "parts": event.parts, "label": event.label, "first": event.first, "cards": event.cards,
                    "prints": event.prints}
        case AnnexGameOpened():
            kind, fields = "opened", {"cents": event.price_cents, "line_bp": event.line_bp, "bingo_bp": event.bingo_bp}
        case AnnexSalesReported():
            kind, fields = "sales", {"cards": event.cards, "cents": event.cents}
        case AnnexBallDrawn():
            kind, fields = "ball", {"ball": event.ball, "ball_count": event.ball_count}
        case AnnexClaimVerified():
            kind, fields = "claim", {"pattern": event.pattern, "card": event.card, "ball_count": event.ball_count}
            virtual_card = {"stake_pct": event.stake_pct, "terminal": event.terminal, "label": event.label}
            fields.update({key: value for key, value in virtual_card.items() if value is not None})
            if event.cells:
                fields["cells"] = cells_text(event.cells)
        case AnnexGameNotPlayed():
            kind, fields = "not_played", {"reason": event.reason}
        case AnnexGameClosed():
            kind, fields = "closed", {"cards": event.annex_claims}
    return {"game_id": event.game_id, "kind": kind, **fields}


class AnnexModule(ProjectedState):
    """The hall-annex games of this hall, main or annex."""

    def __init__(
        self,
        core: CommandCore,
        ledger: LedgerModule,
        catalog: CardCatalog,
        ball_sources: BallSourceFactory,
        rules: PrizeRules,
        *,
        hall_id: str,
        role: str,
        partner: str,
        desks: CashDesks | None = None,
        library: VirtualLibrary | None = None,
        own_game: Callable[[], str | None] = lambda: None,
        session_open: Callable[[], object] = lambda: None,
    ) -> None:
        self.core = core
        self.ledger = ledger
        self.catalog = catalog
        self.ball_sources = ball_sources
        self.rules = rules
        self.hall_id = hall_id
        self.role = role
        self.partner = partner
        self.main = hall_id if role == "main" else partner
        self.desks = desks
        self.library = library
        #: The id of this hall's own game while one is under way (not collected), else None (R82.4).
        self.own_game = own_game
        #: Raises a domain error unless the hall's session is open: cards are sold in a session only.
        self.session_open = session_open
        self.state = AnnexState()
        self._draw_turn = DeferredLock()
        self._own_runs: list[CardRun] | None = None
        #: Told each record this hall made that the partner must get, once committed (set by the link).
        self.relay: Callable[[], None] = lambda: None
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("annex_open_game", self.open_game, {}, N_("open a hall-annex game with the annex hall (main hall)")),
            ("annex_sell_cards", self.sell_cards, {"series": int, "first": int, "last": int},
             N_("record paper cards first..last of a series sold in the hall-annex game")),
            ("annex_close_sale", self.close_sale, {}, N_("close this room's sale in the hall-annex game")),
            ("annex_draw_ball", self.draw_ball, {}, N_("draw the hall-annex game's next ball (main hall)")),
            ("annex_verify_claim", self.verify_claim, {"series": int, "card_number": int},
             N_("verify a card claimed in this room in the hall-annex game")),
            ("annex_close_game", self.close_game, {}, N_("close the hall-annex game once a bingo is verified (main hall)")),
            ("annex_pay_prizes", self.pay_prizes, {"desk": str},
             N_("pay this room's winners of the hall-annex game and record what is owed to the partner")),
            ("annex_declare_not_played", self.declare_not_played, {"reason": str},
             N_("force majeure (R96.2): declare the hall-annex game not played; every stake goes back in both rooms")),
        ):
            core.register(CommandSpec(name, handler, params, summary))
        core.observers.append(self._committed)

    # --- Queries ------------------------------------------------------------------

    @property
    def is_main(self) -> bool:
        return self.role == "main"

    def game(self, game_id: str) -> JointGame | None:
        return self.state.games.get(game_id)

    def current(self) -> JointGame | None:
        return self.state.games[self.state.order[-1]] if self.state.order else None

    def pending(self) -> list[tuple[int, dict[str, Any]]]:
        """What this hall made that the central server does not hold yet, oldest first."""
        return sorted(self.state.outbox.items())

    def own_runs(self) -> list[CardRun]:
        """The cards this hall may sell in a joint game (R82.6): every card set a series prints, cards
        1 to the most any of its series prints, then the virtual library."""
        if self._own_runs is None:
            printed: dict[str, int] = {}
            for series in self.catalog.all_series():
                printed[series.card_set] = max(printed.get(series.card_set, 0), series.card_count)
            runs = [CardRun(f"set {name}", 1, fingerprints(self.catalog.layouts(name)[:count]))
                    for name, count in sorted(printed.items())]
            if self.library is not None:
                runs.append(CardRun(f"library {self.library.label}", 1, fingerprints(self.library.cells)))
            self._own_runs = runs
        return self._own_runs

    def own_game_refusal(self) -> str | None:
        """Why this hall may not open a game of its own now: a joint game not yet paid here (R82.4)."""
        game = self.current()
        if game is None or game.over:
            return None
        return (f"hall-annex game {game.game_id} is under way in this room; its prizes are paid before this hall's "
                "own next game opens (R82.4: a game's paper cards are collected before the next one's are sold)")

    def closing_refusal(self) -> str | None:
        """Why the session may not close yet: a joint game of this room not yet paid."""
        game = self.current()
        if game is None or game.over:
            return None
        return (f"hall-annex game {game.game_id} is under way in this room; its prizes are paid before the session "
                "closes")

    def winners(self, game: JointGame) -> list[tuple[JointClaim, int | None]]:
        """Every card sharing a prize won in either room, with what it was paid once the game is settled here."""
        out: list[tuple[JointClaim, int | None]] = []
        for pattern in PATTERNS:
            for claim in winners_of(game.counted_claims(), pattern, game.main)[1]:
                cents = self.state.payouts.get((pattern, claim.hall_id, claim.card)) if game.paid else None
                out.append((claim, cents))
        return out

    def virtual_card(self, number: int) -> tuple[int, ...]:
        assert self.library is not None, "a virtual card comes from the library"
        return tuple(int(n) for n in self.library.cells[number - 1])

    def _require(self) -> JointGame:
        game = self.current()
        if game is None:
            raise AnnexError(N_("no hall-annex game is open; the main hall's room chief opens one (annex_open_game)"))
        if game.not_played is not None:
            raise AnnexError(N_("hall-annex game {game} was declared not played (R96.2: {reason}); its stakes went "
                                "back, and the main hall's room chief may open the next one"),
                             game=game.game_id, reason=game.not_played)
        return game

    def _main_only(self, refusal: Template) -> None:
        """:class:`AnnexError` ``refusal`` (its ``{main}``: the main hall) unless this hall is the main hall."""
        if not self.is_main:
            raise AnnexError(refusal, main=self.main)

    def _no_own_game(self, refusal: Template) -> None:
        """:class:`AnnexError` ``refusal`` (its ``{own}``: the hall's own game) while that game is under way."""
        own = self.own_game()
        if own is not None:
            raise AnnexError(refusal, own=own)

    # --- The fold -------------------------------------------------------------------

    def reset(self) -> None:
        self.state = AnnexState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        state = self.state
        if isinstance(event, Relayed | AnnexItemIgnored) and event.relay_seq is not None:
            state.last_relay_seq = max(state.last_relay_seq, event.relay_seq)  # the partner's: taken
        elif isinstance(event, Relayed) and event.hall_id == self.hall_id:
            state.outbox[record.seq] = item_of(event)  # this hall's: relayed until posted
        match event:
            case AnnexCardsDeclared():
                self._declared(event)
            case AnnexGameOpened():
                state.games[event.game_id] = JointGame(
                    event.game_id, event.main, event.annex, event.price_cents,
                    PrizeRules(line_bp=event.line_bp, bingo_bp=event.bingo_bp), clash=event.clash,
                )
                state.order.append(event.game_id)
            case AnnexPosted():
                state.outbox.pop(event.record_seq, None)
            case AnnexLink():
                state.link_up = event.up
            case _ if isinstance(event, GameRecord):
                game = state.games.get(event.game_id)
                if game is not None:
                    self._fold_game(game, event)

    def _fold_game(self, game: JointGame, event: GameRecord) -> None:
        match event:
            case AnnexCardsSold():
                game.sold.setdefault(event.series, []).append((event.first, event.last))
                game.drawers[event.seller] = game.drawers.get(event.seller, 0) + event.amount_cents
            case AnnexVirtualCardsBought():
                for number in range(event.first, event.last + 1):
                    game.virtual[number] = JointVirtualCard(number, event.account, event.terminal, event.stake_pct,
                                                            event.stake_cents)
            case AnnexSalesReported():
                game.sales[event.hall_id] = (event.cards, event.cents)
            case AnnexPool():
                game.pool = JointPool(
                    main_sales_cents=event.main_sales_cents, annex_sales_cents=event.annex_sales_cents,
                    cards=event.cards, sales_cents=event.sales_cents, line_cents=event.line_cents,
                    bingo_cents=event.bingo_cents, main_line_cents=event.main_line_cents,
                    main_bingo_cents=event.main_bingo_cents,
                )
                game.phase = DRAWING
            case AnnexBallDrawn():
                game.balls.append(event.ball)
            case AnnexClaimVerified():
                game.claims.append(JointClaim(event.hall_id, event.pattern, event.card, event.ball_count,
                                              event.stake_pct or PAPER_STAKE_PCT, event.terminal, event.label))
            case AnnexGameClosed():
                game.phase, game.annex_claims_counted = CLOSED, event.annex_claims
            case AnnexGameNotPlayed():
                game.phase, game.not_played = NOT_PLAYED, event.reason
            case AnnexTerminalFailed():
                for label in event.refunded:
                    number = card_ref(label)[1]
                    game.refunded[number] = game.virtual.pop(number)
            case AnnexPrizesPaid():
                game.paid = True
                self.state.payouts = {(prize["pattern"], hall, card): cents
                                      for prize in event.prizes for hall, card, cents in prize["winners"]}

    def _declared(self, event: AnnexCardsDeclared) -> None:
        state = self.state
        if event.hall_id == self.hall_id:
            state.declared = event.digest
            return
        incoming = state.partner_incoming
        if incoming is None or incoming.digest != event.digest:
            incoming = state.partner_incoming = Declaration(event.digest, event.parts)
        incoming.received[event.part] = (event.label, event.first, decode_prints(event.prints))
        if incoming.complete:
            state.partner_cards, state.partner_incoming = incoming, None

    def _committed(self, record: Record) -> None:
        if record.seq in self.state.outbox:
            self.relay()

    # --- This hall's cards (R82.6) ----------------------------------------------------

    def declare_cards(self) -> Deferred[list[Record]]:
        """Declare to the partner the cards this hall may sell in a joint game, unless they are the ones declared last."""

        def decide(now: int) -> list[JournalRecord]:
            runs = self.own_runs()
            if self.state.declared == declaration_digest(runs):
                return []
            return [cards_declared(self.hall_id, part) for part in declaration_parts(runs)]

        return self.core.execute(SYSTEM, "annex_declare_cards", decide)

    def _clash_with_partner(self) -> str | None:
        """Why this hall's cards may not be sold in a game with the partner's (R82.6), if they may not."""
        known = self.state.partner_cards
        if known is None:
            return (f"{self.partner} has not declared the cards it may sell yet (it does when it starts, through the "
                    "central server); no two identical cards may be sold in one game (R82.6), so the halls' cards "
                    "are checked first")
        clash = find_clash(self.own_runs(), known.runs())
        return clash.message(self.partner) if clash is not None else None

    # --- Commands of this hall's staff ------------------------------------------------

    def open_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Open a joint game with the annex (main hall's room chief): its price is the first series' face value."""

        def decide(now: int) -> list[JournalRecord]:
            self._main_only(N_("only the main hall ({main}) opens the hall-annex game; this hall is its annex"))
            self.session_open()
            current = self.current()
            if current is not None and not current.over:
                raise AnnexError(N_("hall-annex game {game} is not over; close it and pay its prizes first"),
                                 game=current.game_id)
            self._no_own_game(N_("this hall's own game {own} is under way (its cards are not collected); the "
                                 "hall-annex game opens once it is over (R82.4: a game's paper cards are collected "
                                 "before the next one's are sold)"))
            series = self.catalog.all_series()
            if not series:
                raise AnnexError(N_("this hall has no series of paper cards to sell"))
            refusal = joint_rules_refusal(self.rules)
            if refusal is not None:
                raise AnnexError(refusal)
            if self.state.declared != declaration_digest(self.own_runs()):
                raise AnnexError(N_("this hall's cards have not been declared to the annex yet; it does so as it "
                                    "starts"))
            clash = self._clash_with_partner()
            if clash is not None:
                raise AnnexError(f"the hall-annex game does not open: {clash}")
            return [AnnexGameOpened(
                game_id=f"{self.hall_id}.j{self.core.seq + 1}", hall_id=self.hall_id, main=self.hall_id,
                annex=self.partner, price_cents=series[0].face_value_cents, line_bp=self.rules.line_bp,
                bingo_bp=self.rules.bingo_bp,
            )]  # fmt: skip

        return self.core.execute(actor, "annex_open_game", decide)

    def selling(self) -> JointGame:
        """The game whose sale is open in this room; :class:`AnnexError` says why there is none."""
        game = self._require()
        if game.phase != SELLING or self.hall_id in game.sales:
            raise AnnexError(N_("the sale of hall-annex game {game} is closed in this room"), game=game.game_id)
        if game.clash is not None:
            raise AnnexError(f"this room sells nothing in hall-annex game {game.game_id}: {game.clash}")
        return game

    def sell_cards(self, actor: Actor, series: int, first: int, last: int) -> Deferred[list[Record]]:
        """Record paper cards ``first``..``last`` of this hall's ``series`` sold by the seller (cash in their drawer)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.selling()
            self.session_open()
            self._no_own_game(N_("this hall's own game {own} is under way (its cards are not collected); the "
                                 "hall-annex game's cards are sold once it is over (R82.4: a game's paper cards are "
                                 "collected before the next one's are sold)"))
            try:
                known = self.catalog.series(series)
            except (CatalogError, KeyError):
                raise AnnexError(N_("this hall has no series {series}"), series=series) from None
            if known.face_value_cents != game.price_cents:
                raise AnnexError(N_("series {series} is worth {worth}; the hall-annex game's card costs {price}"),
                                 series=series, worth=Cents(known.face_value_cents), price=Cents(game.price_cents))
            if not 1 <= first <= last <= known.card_count:
                raise AnnexError(N_("cards are {first}..{last}; series {series} holds cards 1..{count}"),
                                 first=first, last=last, series=series, count=known.card_count)
            after = game.last_sold(series)
            if after and first != after + 1:
                raise AnnexError(N_("card {card} of series {series} is the next one to sell (R82.5)"),
                                 card=after + 1, series=series)
            for other, ranges in sorted(game.sold.items()):
                # Every series of a card set prints the same cards (R82.6 ruling): none twice in one game.
                if other != series and self.catalog.series(other).card_set == known.card_set:
                    twice = [(a, b) for a, b in ranges if a <= last and first <= b]
                    if twice:
                        a, b = twice[0]
                        raise AnnexError(
                            N_("cards {first}..{last} of series {series} print the same numbers as those of series "
                               "{other} sold in this game (card set {card_set}): no two identical cards in one game "
                               "(R82.6)"),
                            first=max(a, first), last=min(b, last), series=series, other=other,
                            card_set=known.card_set)
            count = last - first + 1
            amount = count * game.price_cents
            posting = Posting.transfer(amount, debit=f"cash:{actor.name}", credit=stakes_account(game.game_id),
                                       reason="annex:sale", reference=Reference(game.game_id, None, self.core.seq + 1))
            self.ledger.check([posting])
            return [AnnexCardsSold(game_id=game.game_id, series=series, first=first, last=last, count=count,
                                   amount_cents=amount, seller=actor.name, card_set=known.card_set),
                    *posting_records([posting])]

        return self.core.execute(actor, "annex_sell_cards", decide)

    def close_sale(self, actor: Actor) -> Deferred[list[Record]]:
        """Close this room's sale: its cards and takings go to the partner; the pool once both are in."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._require()
            if self.hall_id in game.sales:
                raise AnnexError(N_("this room's sale of hall-annex game {game} is already closed"), game=game.game_id)
            self._no_own_game(N_("this hall's own game {own} is under way (its cards are not collected); this room's "
                                 "sale of the hall-annex game closes once it is over (R82.4: a game's paper cards are "
                                 "collected before the next one's are sold)"))
            cards, cents = game.cards_sold_here()
            if not cards and game.clash is None:
                raise AnnexError(N_("no card has been sold in this room; sell cards first"))
            reported = AnnexSalesReported(game_id=game.game_id, hall_id=self.hall_id, cards=cards, cents=cents)
            return [reported, *self._pool_entries(game, {self.hall_id: (cards, cents)})]

        return self.core.execute(actor, "annex_close_sale", decide)

    def _pool_entries(self, game: JointGame, adding: Mapping[str, tuple[int, int]]) -> list[JournalRecord]:
        sales = {**game.sales, **adding}
        if game.main not in sales or game.annex not in sales:
            return []
        pool = joint_pool(game.rules, sales[game.main], sales[game.annex])
        return [AnnexPool(game_id=game.game_id, **asdict(pool))]

    def draw_ball(self, actor: Actor) -> Deferred[list[Record]]:
        """Draw the next ball from this hall's draw (main hall): committed, then relayed to the annex."""
        return self._draw_turn.run(lambda: ensureDeferred(self._draw_ball(actor)))

    async def _draw_ball(self, actor: Actor) -> list[Record]:
        before: list[tuple[int, ...]] = []

        def check(now: int) -> list[JournalRecord]:
            before.append(tuple(self._game_drawing().balls))
            return []

        await self.core.execute(actor, "annex_draw_ball", check)
        ball = await maybeDeferred(self.ball_sources(before[0]).draw)
        assert isinstance(ball, int), "a ball source gives ball numbers"

        def decide(now: int) -> list[JournalRecord]:
            game = self._game_drawing()
            if tuple(game.balls) != before[0]:
                raise AnnexError(N_("the game's balls changed while the ball was drawn; draw again"))
            return [AnnexBallDrawn(game_id=game.game_id, hall_id=self.hall_id, ball=ball,
                                   ball_count=len(game.balls) + 1),
                    *self._virtual_wins(game, [*game.balls, ball])]

        return await self.core.execute(actor, "annex_draw_ball", decide)

    def _game_drawing(self) -> JointGame:
        self._main_only(N_("only the main hall ({main}) draws the balls; this hall is its annex"))
        game = self._require()
        if game.phase == SELLING:
            raise AnnexError(N_("the draw starts once both rooms have closed their sale and the pool is known"))
        if game.phase == CLOSED or game.bingo_won:
            raise AnnexError(N_("the bingo of hall-annex game {game} is won; the room chief closes the game"),
                             game=game.game_id)
        if len(game.balls) == 90:
            raise AnnexError(N_("all 90 balls are drawn"))
        return game

    def _won(self, game: JointGame) -> dict[str, WonPattern]:
        """The patterns won as this hall knows them: the earliest ball, and this room's cards on it."""
        won = {}
        for pattern in PATTERNS:
            known = game.won_here(pattern, self.hall_id)
            if known is not None:
                won[pattern] = WonPattern(known[0], frozenset(CardRef(*ref) for ref in known[1]))
        return won

    def _virtual_wins(self, game: JointGame, balls: Sequence[int]) -> list[JournalRecord]:
        """This room's virtual cards completing a pattern on the last of ``balls`` win it without a claim (R93.10).

        The hall marks its virtual cards itself, so it is their claimant: each one
        ``check_claim`` finds winning is a verified claim of this room, on the ball it
        completed the pattern on, under the rule of the earliest ball as a paper card's.
        """
        if not game.virtual or self.library is None:
            return []
        numbers = sorted(game.virtual)
        cells = self.library.cells[np.asarray(numbers, dtype=np.int64) - 1]
        completed = completion_balls(cells, balls)
        now = len(balls)
        due = np.flatnonzero((completed.line == now) | (completed.bingo == now))
        if not len(due):
            return []
        won = self._won(game)
        entries: list[JournalRecord] = []
        for index in due:
            number = numbers[int(index)]
            card = game.virtual[number]
            ref = CardRef(self.library.number, number)
            layout = self.virtual_card(number)
            verdict = check_claim(ref, {ref: Card.from_cells(layout)}, balls, won)
            for win in verdict.wins:
                entries.append(AnnexClaimVerified(
                    game_id=game.game_id, hall_id=self.hall_id, pattern=win.pattern, card=ref.label,
                    ball_count=win.ball_count, stake_pct=card.stake_pct, terminal=card.terminal,
                    label=f"{self.library.label}-{number}", cells=layout,
                ))
                earlier = won.get(win.pattern)
                sharing = earlier.cards if earlier is not None and earlier.ball_count == win.ball_count else frozenset()
                won[win.pattern] = WonPattern(win.ball_count, sharing | {ref})
        return entries

    def verify_claim(self, actor: Actor, series: int, card_number: int) -> Deferred[list[Record]]:
        """Verify a claim made in this room on one of its paper cards; a win is relayed to the partner (R85.6, R87)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._require()
            if game.phase != DRAWING:
                raise AnnexError(N_("claims are verified while the game is drawing, before it is closed"))
            ref = CardRef(series, card_number)
            if not game.sold_here(series, card_number):
                virtual = self.library is not None and series == self.library.number
                reason = (f"card {ref.label} is a virtual card: the system checks every virtual card at each ball "
                          "and its wins need no claim (R93.10)" if virtual
                          else f"card {ref.label} was not sold in this room in this game")
                return [AnnexClaimRejected(game_id=game.game_id, card=ref.label, ball_count=len(game.balls),
                                           reason=reason)]
            layout = self.catalog.layouts(self.catalog.series(series).card_set)[card_number - 1]
            verdict = check_claim(ref, {ref: Card.from_cells(int(n) for n in layout)}, game.balls, self._won(game))
            if not verdict.wins:
                return [AnnexClaimRejected(game_id=game.game_id, card=ref.label, ball_count=len(game.balls),
                                           reason=verdict.reason or "it wins nothing")]
            cells = tuple(int(n) for n in layout)
            return [AnnexClaimVerified(game_id=game.game_id, hall_id=self.hall_id, pattern=win.pattern, card=ref.label,
                                       ball_count=win.ball_count, cells=cells)
                    for win in verdict.wins]

        return self.core.execute(actor, "annex_verify_claim", decide)

    def close_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Close the game (main hall's room chief) once a bingo is verified in either room.

        A room whose winners are all virtual is settled in the same records (R85.9).
        """

        def decide(now: int) -> list[JournalRecord]:
            self._main_only(N_("only the main hall ({main}) closes the hall-annex game; this hall is its annex"))
            game = self._require()
            if game.phase != DRAWING or not game.bingo_won:
                raise AnnexError(N_("the game closes once a bingo is verified in either room"))
            counted = sum(1 for c in game.claims if c.hall_id == game.annex)
            closed = AnnexGameClosed(game_id=game.game_id, hall_id=self.hall_id, annex_claims=counted)
            return [closed, *self._settled_at_close(game, list(game.claims))]

        return self.core.execute(actor, "annex_close_game", decide)

    def _settled_at_close(self, game: JointGame, counted: list[JointClaim]) -> list[JournalRecord]:
        """The settlement with the close when this room has no paper winner to pay in cash, else nothing yet."""
        assert game.pool is not None, "a game closes after its pool"
        shares = prize_shares(game.pool, counted, main=game.main, here=self.hall_id)
        if any(hall == self.hall_id and card_ref(card)[0] != self._virtual_number
               for share in shares for hall, card, _ in share.winners):
            return []  # the cashier pays this room's paper winners (annex_pay_prizes)
        return self._payments(game, counted, None, self.core.seq + 2)

    @property
    def _virtual_number(self) -> int | None:
        return self.library.number if self.library is not None else None

    def declare_not_played(self, actor: Actor, reason: str) -> Deferred[list[Record]]:
        """Force majeure (R96.2), main hall's room chief: the game is deemed not played; every stake goes back.

        Declared before the game is closed (once a bingo is verified and the game closed, its
        prizes are won and paid).  Nothing is paid before the close, so no prize stands: in
        each room every stake the game holds returns where it came from.  The declaration
        is relayed, and the annex returns its room's stakes when it takes it.
        """

        def decide(now: int) -> list[JournalRecord]:
            self._main_only(N_("only the main hall ({main}) declares the hall-annex game not played; the annex's "
                               "room chief asks the main hall's; this hall is its annex"))
            game = self._require()  # refused if it was declared not played already
            if game.over:
                raise AnnexError(N_("hall-annex game {game} is over in this room"), game=game.game_id)
            if game.phase == CLOSED:
                raise AnnexError(N_("hall-annex game {game} is closed: its prizes are won, and paid with "
                                    "annex_pay_prizes"), game=game.game_id)
            why = str(reason).strip() if isinstance(reason, str) else ""
            if not why:
                raise AnnexError(N_("say why the game cannot run; the reason goes into the record and to the annex"))
            if len(why) > NOT_PLAYED_REASON_CHARS:
                raise AnnexError(N_("the reason is at most {most} characters, not {length}"),
                                 most=NOT_PLAYED_REASON_CHARS, length=len(why))
            return self._not_played(game, why, actor.name, None)

        return self.core.execute(actor, "annex_declare_not_played", decide)

    def _not_played(self, game: JointGame, reason: str, declared_by: str,
                    relay_seq: int | None) -> list[JournalRecord]:
        """The ``annex_game_not_played`` record and the postings returning this room's stakes (R96.2)."""
        seq = self.core.seq + 1
        stakes = stakes_account(game.game_id)
        postings: list[Posting] = []

        def back(amount: int, to: str, card: str | None) -> None:
            if amount > 0:
                postings.append(Posting.transfer(amount, debit=stakes, credit=to, reason=GAME_REFUND,
                                                 reference=Reference(game.game_id, card, seq)))

        for seller, cents in sorted(game.drawers.items()):
            back(cents, f"cash:{seller}", None)  # the seller gives the paper cards' price back at the tables
        virtual_number = self._virtual_number
        for number, card in sorted(game.virtual.items()):
            back(card.stake_cents, card.account, f"{virtual_number}-{number}")
        # A failed terminal's cards the house refunded once the sale had closed: their stakes go back to it.
        if self.hall_id in game.sales:
            for number, card in sorted(game.refunded.items()):
                back(card.stake_cents, "house", f"{virtual_number}-{number}")
        self.ledger.check(postings)
        head = AnnexGameNotPlayed(game_id=game.game_id, hall_id=self.main, reason=reason, declared_by=declared_by,
                                  refunded_cents=sum(p.amount for p in postings), relay_seq=relay_seq)
        return [head, *posting_records(postings)]

    def terminal_failed(self, terminal: str, reason: str, seq: int) -> list[JournalRecord]:
        """Staff declared ``terminal`` failed (R96.3): what becomes of its cards of the joint game under way.

        ``seq`` is the number the first entry returned will have.  Before the game's first
        ball is known in this room, its cards that have won nothing leave the game and are
        refunded once: from the game's collection while this room's sale is open, from the
        house once it closed (the pool announced on them stands).  Once a ball is known they
        stay in play, their wins credited, as for a dropped connection: nothing is refunded.
        """
        game = self.current()
        if game is None or game.over or game.phase == CLOSED:
            return []
        virtual_number = self._virtual_number
        on_terminal = [(number, card) for number, card in sorted(game.virtual.items()) if card.terminal == terminal]
        if not on_terminal:
            return []
        labels = tuple(f"{virtual_number}-{number}" for number, _ in on_terminal)
        if game.balls:
            return [AnnexTerminalFailed(game_id=game.game_id, terminal=terminal, reason=reason, refunded=(),
                                        refunded_cents=0, source=None, kept_in_play=labels)]
        # Before the first ball no card has won anything: every one of them is refunded.
        source = "house" if self.hall_id in game.sales else stakes_account(game.game_id)
        postings = [Posting.transfer(card.stake_cents, debit=source, credit=card.account, reason=TERMINAL_REFUND,
                                     reference=Reference(game.game_id, label, seq))
                    for label, (_, card) in zip(labels, on_terminal) if card.stake_cents > 0]
        self.ledger.check(postings)
        failed = AnnexTerminalFailed(game_id=game.game_id, terminal=terminal, reason=reason, refunded=labels,
                                     refunded_cents=sum(p.amount for p in postings),
                                     source="house" if source == "house" else "stakes", kept_in_play=())
        return [failed, *posting_records(postings)]

    def pay_prizes(self, actor: Actor, desk: str) -> Deferred[list[Record]]:
        """Pay this room's winners (paper cards in cash at ``desk``, virtual ones to their accounts); record what is owed."""

        def decide(now: int) -> list[JournalRecord]:
            game = self._require()
            if game.phase != CLOSED or game.pool is None:
                raise AnnexError(N_("the prizes are paid once the main hall has closed the game"))
            if game.paid:
                raise AnnexError(N_("the prizes of hall-annex game {game} are paid"), game=game.game_id)
            if self.desks is None:
                raise AnnexError(N_("this hall has no cash desk; prizes on paper cards are paid at an open one"))
            drawer = self.desks.paying_drawer(str(desk), actor)
            return self._payments(game, game.counted_claims(), drawer, self.core.seq + 1)

        return self.core.execute(actor, "annex_pay_prizes", decide)

    def _payments(self, game: JointGame, claims: list[JointClaim], drawer: str | None,
                  seq: int) -> list[JournalRecord]:
        """The ``annex_prizes_paid`` record (number ``seq``) and its postings."""
        assert game.pool is not None
        here, partner = self.hall_id, game.partner(self.hall_id)
        shares = prize_shares(game.pool, claims, main=game.main, here=here)
        owed = owed_to_partner(shares, main=game.main, here=here)
        house, tax = house_and_tax(game.rules, game.pool, here_is_main=here == game.main)
        stakes = stakes_account(game.game_id)
        postings: list[Posting] = []

        def move(amount: int, debit: str, credit: str, reason: str, card: str | None = None) -> None:
            if amount > 0:
                postings.append(Posting.transfer(amount, debit=debit, credit=credit, reason=reason,
                                                 reference=Reference(game.game_id, card, seq)))

        move(-owed, f"interhall:{partner}", stakes, "annex:owed by partner")
        for share in shares:
            for hall, card, cents in share.winners:
                if hall != here:
                    continue
                series, number = card_ref(card)
                if series == self._virtual_number and number in game.virtual:
                    move(cents, stakes, game.virtual[number].account, f"prize:{share.pattern}", card)  # R85.9
                elif drawer is None:
                    raise AnnexError(N_("card {card} is a paper card: this room's paper winners are paid in cash at "
                                        "an open desk (annex_pay_prizes)"), card=card)
                else:
                    move(cents, stakes, drawer, f"prize:{share.pattern}", card)
            if here == game.main:
                move(share.carry_cents, stakes, CARRY[share.pattern], f"carry:{share.pattern}:out")
        move(owed, stakes, f"interhall:{partner}", "annex:owed to partner")
        move(house, stakes, "house", "house share")
        move(tax, "house", "tax", "tax")
        self.ledger.check(postings)
        return [AnnexPrizesPaid(game_id=game.game_id, partner=partner, prizes=[s.to_json() for s in shares],
                                owed_to_partner_cents=owed, house_cents=house, tax_cents=tax, desk=drawer),
                *posting_records(postings)]

    # --- What the partner made, and what the central server holds -----------------------

    def take(self, item: Mapping[str, Any]) -> Deferred[list[Record]]:
        """Journal item ``seq`` of the partner's stream (once, in order); :class:`AnnexGap` if one is missing."""

        def decide(now: int) -> list[JournalRecord]:
            seq = int(item["seq"])
            if seq <= self.state.last_relay_seq:
                return []  # taken already
            if seq != self.state.last_relay_seq + 1:
                raise AnnexGap(f"item {seq} of the partner's stream came before item {self.state.last_relay_seq + 1}")
            return self._taken(item, seq)

        return self.core.execute(SYSTEM, "annex_take", decide)

    def _taken(self, item: Mapping[str, Any], seq: int) -> list[JournalRecord]:
        kind, game_id, sender = item["kind"], item["game_id"], item["from_hall"]

        def ignored(reason: str) -> list[JournalRecord]:
            return [AnnexItemIgnored(relay_seq=seq, from_hall=sender, game_id=game_id, kind=kind, reason=reason)]

        if sender != self.partner:
            return ignored(f"{sender} is not this hall's partner ({self.partner})")
        if kind == "cards":
            return self._taken_cards(item, seq, ignored)
        if kind == "opened":
            if self.is_main:
                return ignored("the annex cannot open a hall-annex game; the main hall does")
            # The main hall checked this room's cards as it knew them: they may have changed since.
            return [AnnexGameOpened(game_id=game_id, hall_id=sender, main=sender, annex=self.hall_id,
                                    price_cents=item.get("cents", 0), line_bp=item.get("line_bp", 0),
                                    bingo_bp=item.get("bingo_bp", 0), relay_seq=seq, clash=self._clash_with_partner())]
        game = self.game(game_id)
        if game is None:
            return ignored(f"this hall knows no hall-annex game {game_id}")
        if game.not_played is not None:
            return ignored(f"hall-annex game {game_id} was declared not played (R96.2)")
        if kind == "not_played":
            if self.is_main or game.phase == CLOSED:
                return ignored("only the main hall declares the game not played, before it closes it")
            return self._not_played(game, str(item.get("reason") or ""), sender, seq)
        if kind == "sales":
            if sender in game.sales:
                return ignored(f"{sender}'s sales are known already")
            sales = (int(item.get("cards", 0)), int(item.get("cents", 0)))
            return [AnnexSalesReported(game_id=game_id, hall_id=sender, cards=sales[0], cents=sales[1], relay_seq=seq),
                    *self._pool_entries(game, {sender: sales})]
        if kind == "ball":
            if self.is_main or item.get("ball_count") != len(game.balls) + 1 or game.pool is None:
                return ignored(f"ball {item.get('ball_count')} is not the next one of the main hall's draw")
            return [AnnexBallDrawn(game_id=game_id, hall_id=sender, ball=item["ball"], ball_count=item["ball_count"],
                                   relay_seq=seq),
                    *self._virtual_wins(game, [*game.balls, int(item["ball"])])]
        if kind == "claim":
            if game.phase == CLOSED:
                return ignored("the claim came after the main hall closed the game")
            return [AnnexClaimVerified(game_id=game_id, hall_id=sender, pattern=item["pattern"], card=item["card"],
                                       ball_count=item["ball_count"], relay_seq=seq, stake_pct=item.get("stake_pct"),
                                       terminal=item.get("terminal"), label=item.get("label"),
                                       cells=cells_of_text(item.get("cells")))]
        if self.is_main or game.phase == CLOSED:
            return ignored("only the main hall closes the game, once")
        counted = int(item.get("cards", 0))
        closed = AnnexGameClosed(game_id=game_id, hall_id=sender, annex_claims=counted, relay_seq=seq)
        if game.pool is None:
            return [closed]
        claims = [c for c in game.claims if c.hall_id == game.main]
        claims += [c for c in game.claims if c.hall_id == game.annex][:counted]
        return [closed, *self._settled_at_close(game, claims)]

    def _taken_cards(self, item: Mapping[str, Any], seq: int,
                     ignored: Callable[[str], list[JournalRecord]]) -> list[JournalRecord]:
        part: dict[str, Any] = {key: item.get(key) for key in DECLARATION_FIELDS}
        if any(part[key] is None for key in DECLARATION_FIELDS if key != "prints"):
            return ignored("a part of a declaration of cards names its digest, part, parts, label, first and cards")
        part["prints"] = part["prints"] or ""
        try:
            prints = decode_prints(str(part["prints"]))
        except ValueError as error:
            return ignored(f"the part's fingerprints do not read: {error}")
        if len(prints) != part["cards"] or not 1 <= int(part["part"]) <= int(part["parts"]):
            return ignored(f"part {part['part']} of {part['parts']} holds {len(prints)} fingerprints, "
                           f"not {part['cards']}")
        return [cards_declared(item["from_hall"], part, seq)]

    def link_changed(self, up: bool) -> Deferred[list[Record]]:
        """Journal that the partner is out of reach, or back, while a joint game is under way."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.current()
            if game is None or game.over or self.state.link_up == up:
                return []
            return [AnnexLink(game_id=game.game_id, partner=game.partner(self.hall_id), up=up)]

        return self.core.execute(SYSTEM, "annex_link", decide)

    def posted(self, record_seq: int, request_id: str, relay_seq: int) -> Deferred[list[Record]]:
        """The central server holds this hall's record ``record_seq`` for the partner."""

        def decide(now: int) -> list[JournalRecord]:
            item = self.state.outbox.get(record_seq)
            if item is None:
                return []
            return [AnnexPosted(game_id=item["game_id"], record_seq=record_seq, request_id=request_id,
                                relay_seq=relay_seq)]

        return self.core.execute(SYSTEM, "annex_posted", decide)

"""The hall-annex game (R3.5.b) at one hall, on the command core: commands in, ``annex_*`` records out.

One traditional game is played in two rooms: the main hall's and its annex's
(``[annex]`` in ``hall.toml``).  :class:`AnnexModule` folds the records of
:mod:`protocol.records.annex` into :class:`~protocol.annex.JointGame` objects and decides
every change as a command of the hall's core; the rules and the money are
:mod:`protocol.annex`'s.  It does no I/O: :mod:`hall_server.annex.link` relays what this
hall made to the partner through the central server and hands it what the partner made.

* **The main hall** opens the game (room chief), draws its balls from the hall's own
  draw (the software generator or the blower: the ball source the traditional game
  uses) and closes it once a bingo is verified in either room.
* **Each room** sells its own paper cards (seller-caller: its own series, at the game's
  price, into ``stakes:<game>``), closes its own sale (room chief) and verifies the
  claims made in it (table chief, against the card set's layouts and the balls).
* **The pool** is journaled by both halls (``annex_pool``) once both sales are known;
  balls are drawn only after it.
* **Paying** (cashier): each hall pays its own winners their share of each prize in cash
  at an open desk, and journals what it owes its partner in ``interhall:<partner>``.
* **What the partner made** arrives as numbered items (``relay_seq``), taken once and in
  order; an item that changes nothing is kept as ``annex_item_ignored`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from twisted.internet.defer import Deferred, DeferredLock, ensureDeferred, maybeDeferred

from hall_server.hall.catalog import CardCatalog, CatalogError
from hall_server.hall.games.common import CARRY, BallSourceFactory, CashDesks
from hall_server.hall.ledger import LedgerModule, posting_entries
from hall_server.hall.roles import SYSTEM, Role
from protocol.annex import (
    CLOSED,
    DRAWING,
    SELLING,
    JointClaim,
    JointGame,
    JointPool,
    house_and_tax,
    joint_pool,
    owed_to_partner,
    prize_shares,
)
from protocol.cards import Card
from protocol.chain import Record
from protocol.claims import CardRef, WonPattern, check_claim
from protocol.errors import DomainError
from protocol.ledger import Posting, Reference
from protocol.money import format_cents
from protocol.settlement import PrizeRules
from protocol.settlement.refunds import stakes_account
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.port import Entry
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
    "annex_take": {R.SYSTEM},
    "annex_posted": {R.SYSTEM},
    "annex_link": {R.SYSTEM},
}
#: The records of facts relayed to the partner, and the item kind each is.
RELAYED = {
    "annex_game_opened": "opened", "annex_sales_reported": "sales", "annex_ball_drawn": "ball",
    "annex_claim_verified": "claim", "annex_game_closed": "closed",
}  # fmt: skip


class AnnexError(DomainError):
    """A hall-annex command the hall refused; the message says why and what to do."""


class AnnexGap(AnnexError):
    """An item of the partner's stream came before one it follows: the hall fetches the ones it lacks."""


@dataclass
class AnnexState:
    games: dict[str, JointGame] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    last_relay_seq: int = 0  # the partner's items taken, 1..n
    outbox: dict[int, dict[str, Any]] = field(default_factory=dict)  # own record seq -> item, not yet posted
    link_up: bool = True  # as last journaled during a joint game


def item_of(record_type: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The item of the hall-annex stream a relayed record is (``protocol.central_messages.ANNEX_FIELDS``)."""
    kind = RELAYED[record_type]
    item: dict[str, Any] = {"game_id": payload["game_id"], "kind": kind}
    if kind == "opened":
        item.update(cents=payload["price_cents"], line_bp=payload["line_bp"], bingo_bp=payload["bingo_bp"])
    elif kind == "sales":
        item.update(cards=payload["cards"], cents=payload["cents"])
    elif kind == "ball":
        item.update(ball=payload["ball"], ball_count=payload["ball_count"])
    elif kind == "claim":
        item.update(pattern=payload["pattern"], card=payload["card"], ball_count=payload["ball_count"])
    else:
        item.update(cards=payload["annex_claims"])
    return item


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
        self.state = AnnexState()
        self._draw_turn = DeferredLock()
        #: Told each record this hall made that the partner must get, once committed (set by the link).
        self.relay: Callable[[], None] = lambda: None
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("annex_open_game", self.open_game, {}, "open a hall-annex game with the annex hall (main hall)"),
            ("annex_sell_cards", self.sell_cards, {"series": int, "first": int, "last": int},
             "record paper cards first..last of a series sold in the hall-annex game"),
            ("annex_close_sale", self.close_sale, {}, "close this room's sale in the hall-annex game"),
            ("annex_draw_ball", self.draw_ball, {}, "draw the hall-annex game's next ball (main hall)"),
            ("annex_verify_claim", self.verify_claim, {"series": int, "card_number": int},
             "verify a card claimed in this room in the hall-annex game"),
            ("annex_close_game", self.close_game, {}, "close the hall-annex game once a bingo is verified (main hall)"),
            ("annex_pay_prizes", self.pay_prizes, {"desk": str},
             "pay this room's winners of the hall-annex game and record what is owed to the partner"),
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

    def _require(self) -> JointGame:
        game = self.current()
        if game is None:
            raise AnnexError("no hall-annex game is open; the main hall's room chief opens one (annex_open_game)")
        return game

    def _main_only(self, what: str) -> None:
        if not self.is_main:
            raise AnnexError(f"only the main hall ({self.main}) {what}; this hall is its annex")

    # --- The fold -------------------------------------------------------------------

    def reset(self) -> None:
        self.state = AnnexState()

    def apply(self, record: Record) -> None:
        kind, p = record.type, record.payload
        if not kind.startswith("annex_"):
            return
        state = self.state
        if p.get("relay_seq") is not None and kind != "annex_posted":
            state.last_relay_seq = max(state.last_relay_seq, int(p["relay_seq"]))
        elif kind in RELAYED and p.get("hall_id") == self.hall_id:
            state.outbox[record.seq] = item_of(kind, p)
        if kind == "annex_game_opened":
            state.games[p["game_id"]] = JointGame(
                p["game_id"], p["main"], p["annex"], p["price_cents"],
                PrizeRules(line_bp=p["line_bp"], bingo_bp=p["bingo_bp"]),
            )
            state.order.append(p["game_id"])
            return
        if kind == "annex_posted":
            state.outbox.pop(int(p["record_seq"]), None)
            return
        if kind == "annex_link":
            state.link_up = bool(p["up"])
            return
        game = state.games.get(str(p.get("game_id")))
        if game is None:
            return
        if kind == "annex_cards_sold":
            game.sold.setdefault(p["series"], []).append((p["first"], p["last"]))
        elif kind == "annex_sales_reported":
            game.sales[p["hall_id"]] = (p["cards"], p["cents"])
        elif kind == "annex_pool":
            game.pool = JointPool(**{k: p[k] for k in JointPool.__dataclass_fields__})
            game.phase = DRAWING
        elif kind == "annex_ball_drawn":
            game.balls.append(p["ball"])
        elif kind == "annex_claim_verified":
            game.claims.append(JointClaim(p["hall_id"], p["pattern"], p["card"], p["ball_count"]))
        elif kind == "annex_game_closed":
            game.phase, game.annex_claims_counted = CLOSED, p["annex_claims"]
        elif kind == "annex_prizes_paid":
            game.paid = True

    def _committed(self, record: Record) -> None:
        if record.seq in self.state.outbox:
            self.relay()

    # --- Commands of this hall's staff ------------------------------------------------

    def open_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Open a joint game with the annex (main hall's room chief): its price is the first series' face value."""

        def decide(now: int) -> list[Entry]:
            self._main_only("opens the hall-annex game")
            current = self.current()
            if current is not None and not current.paid:
                raise AnnexError(f"hall-annex game {current.game_id} is not over; close it and pay its prizes first")
            series = self.catalog.all_series()
            if not series:
                raise AnnexError("this hall has no series of paper cards to sell")
            return [("annex_game_opened", {
                "game_id": f"{self.hall_id}.j{self.core.seq + 1}", "hall_id": self.hall_id, "main": self.hall_id,
                "annex": self.partner, "price_cents": series[0].face_value_cents, "line_bp": self.rules.line_bp,
                "bingo_bp": self.rules.bingo_bp,
            })]  # fmt: skip

        return self.core.execute(actor, "annex_open_game", decide)

    def sell_cards(self, actor: Actor, series: int, first: int, last: int) -> Deferred[list[Record]]:
        """Record paper cards ``first``..``last`` of this hall's ``series`` sold by the seller (cash in their drawer)."""

        def decide(now: int) -> list[Entry]:
            game = self._require()
            if game.phase != SELLING or self.hall_id in game.sales:
                raise AnnexError(f"the sale of hall-annex game {game.game_id} is closed in this room")
            try:
                known = self.catalog.series(series)
            except (CatalogError, KeyError):
                raise AnnexError(f"this hall has no series {series}") from None
            if known.face_value_cents != game.price_cents:
                raise AnnexError(f"series {series} is worth {format_cents(known.face_value_cents)}; the hall-annex "
                                 f"game's card costs {format_cents(game.price_cents)}")
            if not 1 <= first <= last <= known.card_count:
                raise AnnexError(f"cards are {first}..{last}; series {series} holds cards 1..{known.card_count}")
            after = game.last_sold(series)
            if after and first != after + 1:
                raise AnnexError(f"card {after + 1} of series {series} is the next one to sell (R82.5)")
            count = last - first + 1
            amount = count * game.price_cents
            posting = Posting.transfer(amount, debit=f"cash:{actor.name}", credit=stakes_account(game.game_id),
                                       reason="annex:sale", reference=Reference(game.game_id, None, self.core.seq + 1))
            self.ledger.check([posting])
            return [("annex_cards_sold", {"game_id": game.game_id, "series": series, "first": first, "last": last,
                                          "count": count, "amount_cents": amount, "seller": actor.name}),
                    *posting_entries([posting])]

        return self.core.execute(actor, "annex_sell_cards", decide)

    def close_sale(self, actor: Actor) -> Deferred[list[Record]]:
        """Close this room's sale: its cards and takings go to the partner; the pool once both are in."""

        def decide(now: int) -> list[Entry]:
            game = self._require()
            if self.hall_id in game.sales:
                raise AnnexError(f"this room's sale of hall-annex game {game.game_id} is already closed")
            cards, cents = game.cards_sold_here()
            if not cards:
                raise AnnexError("no card has been sold in this room; sell cards first")
            entries: list[Entry] = [("annex_sales_reported", {"game_id": game.game_id, "hall_id": self.hall_id,
                                                              "cards": cards, "cents": cents})]
            return entries + self._pool_entries(game, {self.hall_id: (cards, cents)})

        return self.core.execute(actor, "annex_close_sale", decide)

    def _pool_entries(self, game: JointGame, adding: Mapping[str, tuple[int, int]]) -> list[Entry]:
        sales = {**game.sales, **adding}
        if game.main not in sales or game.annex not in sales:
            return []
        pool = joint_pool(game.rules, sales[game.main], sales[game.annex])
        return [("annex_pool", {"game_id": game.game_id, **pool.__dict__})]

    def draw_ball(self, actor: Actor) -> Deferred[list[Record]]:
        """Draw the next ball from this hall's draw (main hall): committed, then relayed to the annex."""
        return self._draw_turn.run(lambda: ensureDeferred(self._draw_ball(actor)))

    async def _draw_ball(self, actor: Actor) -> list[Record]:
        before: list[tuple[int, ...]] = []

        def check(now: int) -> list[Entry]:
            before.append(tuple(self._game_drawing().balls))
            return []

        await self.core.execute(actor, "annex_draw_ball", check)
        ball = await maybeDeferred(self.ball_sources(before[0]).draw)
        assert isinstance(ball, int), "a ball source gives ball numbers"

        def decide(now: int) -> list[Entry]:
            game = self._game_drawing()
            if tuple(game.balls) != before[0]:
                raise AnnexError("the game's balls changed while the ball was drawn; draw again")
            return [("annex_ball_drawn", {"game_id": game.game_id, "hall_id": self.hall_id, "ball": ball,
                                          "ball_count": len(game.balls) + 1})]

        return await self.core.execute(actor, "annex_draw_ball", decide)

    def _game_drawing(self) -> JointGame:
        self._main_only("draws the balls")
        game = self._require()
        if game.phase == SELLING:
            raise AnnexError("the draw starts once both rooms have closed their sale and the pool is known")
        if game.phase == CLOSED or game.bingo_won:
            raise AnnexError(f"the bingo of hall-annex game {game.game_id} is won; the room chief closes the game")
        if len(game.balls) == 90:
            raise AnnexError("all 90 balls are drawn")
        return game

    def verify_claim(self, actor: Actor, series: int, card_number: int) -> Deferred[list[Record]]:
        """Verify a claim made in this room on one of its cards; a win is relayed to the partner (R85.6, R87)."""

        def decide(now: int) -> list[Entry]:
            game = self._require()
            if game.phase != DRAWING:
                raise AnnexError("claims are verified while the game is drawing, before it is closed")
            ref = CardRef(series, card_number)
            if not game.sold_here(series, card_number):
                return [("annex_claim_rejected", {"game_id": game.game_id, "card": ref.label, "ball_count": len(game.balls),
                                                  "reason": f"card {ref.label} was not sold in this room in this game"})]
            layout = self.catalog.layouts(self.catalog.series(series).card_set)[card_number - 1]
            won = {}
            for pattern in ("line", "bingo"):
                ball = game.won(pattern)
                if ball is not None:
                    mine = frozenset(CardRef(*map(int, c.card.split("-"))) for c in game.claims
                                     if c.hall_id == self.hall_id and c.pattern == pattern and c.ball_count == ball)
                    won[pattern] = WonPattern(ball, mine)
            verdict = check_claim(ref, {ref: Card.from_cells(int(n) for n in layout)}, game.balls, won)
            if not verdict.wins:
                return [("annex_claim_rejected", {"game_id": game.game_id, "card": ref.label, "ball_count": len(game.balls),
                                                  "reason": verdict.reason or "it wins nothing"})]
            return [("annex_claim_verified", {"game_id": game.game_id, "hall_id": self.hall_id, "pattern": win.pattern,
                                              "card": ref.label, "ball_count": win.ball_count})
                    for win in verdict.wins]

        return self.core.execute(actor, "annex_verify_claim", decide)

    def close_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Close the game (main hall's room chief) once a bingo is verified in either room."""

        def decide(now: int) -> list[Entry]:
            self._main_only("closes the hall-annex game")
            game = self._require()
            if game.phase != DRAWING or not game.bingo_won:
                raise AnnexError("the game closes once a bingo is verified in either room")
            counted = sum(1 for c in game.claims if c.hall_id == game.annex)
            return [("annex_game_closed", {"game_id": game.game_id, "hall_id": self.hall_id, "annex_claims": counted})]

        return self.core.execute(actor, "annex_close_game", decide)

    def pay_prizes(self, actor: Actor, desk: str) -> Deferred[list[Record]]:
        """Pay this room's winners their shares in cash at ``desk`` and record what is owed to the partner."""

        def decide(now: int) -> list[Entry]:
            game = self._require()
            if game.phase != CLOSED or game.pool is None:
                raise AnnexError("the prizes are paid once the main hall has closed the game")
            if game.paid:
                raise AnnexError(f"the prizes of hall-annex game {game.game_id} are paid")
            if self.desks is None:
                raise AnnexError("this hall has no cash desk; prizes on paper cards are paid at an open one")
            drawer = self.desks.paying_drawer(str(desk))
            return self._payments(game, game.pool, drawer)

        return self.core.execute(actor, "annex_pay_prizes", decide)

    def _payments(self, game: JointGame, pool: JointPool, drawer: str) -> list[Entry]:
        here, partner = self.hall_id, game.partner(self.hall_id)
        shares = prize_shares(pool, game.counted_claims(), main=game.main, here=here)
        owed = owed_to_partner(shares, main=game.main, here=here)
        house, tax = house_and_tax(game.rules, pool, here_is_main=here == game.main)
        stakes, seq = stakes_account(game.game_id), self.core.seq + 1
        postings: list[Posting] = []

        def move(amount: int, debit: str, credit: str, reason: str, card: str | None = None) -> None:
            if amount > 0:
                postings.append(Posting.transfer(amount, debit=debit, credit=credit, reason=reason,
                                                 reference=Reference(game.game_id, card, seq)))

        move(-owed, f"interhall:{partner}", stakes, "annex:owed by partner")
        for share in shares:
            for hall, card, cents in share.winners:
                if hall == here:
                    move(cents, stakes, drawer, f"prize:{share.pattern}", card)
            if here == game.main:
                move(share.carry_cents, stakes, CARRY[share.pattern], f"carry:{share.pattern}:out")
        move(owed, stakes, f"interhall:{partner}", "annex:owed to partner")
        move(house, stakes, "house", "house share")
        move(tax, "house", "tax", "tax")
        self.ledger.check(postings)
        return [("annex_prizes_paid", {"game_id": game.game_id, "partner": partner,
                                       "prizes": [s.to_json() for s in shares], "owed_to_partner_cents": owed,
                                       "house_cents": house, "tax_cents": tax, "desk": drawer}),
                *posting_entries(postings)]

    # --- What the partner made, and what the central server holds -----------------------

    def take(self, item: Mapping[str, Any]) -> Deferred[list[Record]]:
        """Journal item ``seq`` of the partner's stream (once, in order); :class:`AnnexGap` if one is missing."""

        def decide(now: int) -> list[Entry]:
            seq = int(item["seq"])
            if seq <= self.state.last_relay_seq:
                return []  # taken already
            if seq != self.state.last_relay_seq + 1:
                raise AnnexGap(f"item {seq} of the partner's stream came before item {self.state.last_relay_seq + 1}")
            return self._taken(item, seq)

        return self.core.execute(SYSTEM, "annex_take", decide)

    def _taken(self, item: Mapping[str, Any], seq: int) -> list[Entry]:
        kind, game_id, sender = item["kind"], item["game_id"], item["from_hall"]

        def ignored(reason: str) -> list[Entry]:
            return [("annex_item_ignored", {"relay_seq": seq, "from_hall": sender, "game_id": game_id, "kind": kind,
                                            "reason": reason})]

        if sender != self.partner:
            return ignored(f"{sender} is not this hall's partner ({self.partner})")
        if kind == "opened":
            if self.is_main:
                return ignored("the annex cannot open a hall-annex game; the main hall does")
            return [("annex_game_opened", {"game_id": game_id, "hall_id": sender, "main": sender, "annex": self.hall_id,
                                           "price_cents": item.get("cents", 0), "line_bp": item.get("line_bp", 0),
                                           "bingo_bp": item.get("bingo_bp", 0), "relay_seq": seq})]
        game = self.game(game_id)
        if game is None:
            return ignored(f"this hall knows no hall-annex game {game_id}")
        if kind == "sales":
            if sender in game.sales:
                return ignored(f"{sender}'s sales are known already")
            sales = (int(item.get("cards", 0)), int(item.get("cents", 0)))
            return [("annex_sales_reported", {"game_id": game_id, "hall_id": sender, "cards": sales[0],
                                              "cents": sales[1], "relay_seq": seq}),
                    *self._pool_entries(game, {sender: sales})]
        if kind == "ball":
            if self.is_main or item.get("ball_count") != len(game.balls) + 1 or game.pool is None:
                return ignored(f"ball {item.get('ball_count')} is not the next one of the main hall's draw")
            return [("annex_ball_drawn", {"game_id": game_id, "hall_id": sender, "ball": item["ball"],
                                          "ball_count": item["ball_count"], "relay_seq": seq})]
        if kind == "claim":
            if game.phase == CLOSED:
                return ignored("the claim came after the main hall closed the game")
            return [("annex_claim_verified", {"game_id": game_id, "hall_id": sender, "pattern": item["pattern"],
                                              "card": item["card"], "ball_count": item["ball_count"], "relay_seq": seq})]
        if self.is_main or game.phase == CLOSED:
            return ignored("only the main hall closes the game, once")
        return [("annex_game_closed", {"game_id": game_id, "hall_id": sender, "annex_claims": item.get("cards", 0),
                                       "relay_seq": seq})]

    def link_changed(self, up: bool) -> Deferred[list[Record]]:
        """Journal that the partner is out of reach, or back, while a joint game is under way."""

        def decide(now: int) -> list[Entry]:
            game = self.current()
            if game is None or game.paid or self.state.link_up == up:
                return []
            return [("annex_link", {"game_id": game.game_id, "partner": game.partner(self.hall_id), "up": up})]

        return self.core.execute(SYSTEM, "annex_link", decide)

    def posted(self, record_seq: int, request_id: str, relay_seq: int) -> Deferred[list[Record]]:
        """The central server holds this hall's record ``record_seq`` for the partner."""

        def decide(now: int) -> list[Entry]:
            item = self.state.outbox.get(record_seq)
            if item is None:
                return []
            return [("annex_posted", {"game_id": item["game_id"], "record_seq": record_seq, "request_id": request_id,
                                      "relay_seq": relay_seq})]

        return self.core.execute(SYSTEM, "annex_posted", decide)

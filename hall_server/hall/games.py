"""The traditional game of the hall: sale, draw, claims, prizes, pots, failures.

One game at a time, with paper cards, the way the hall's staff run it (R85):

1. the sale is announced: series, price (the series' face value) and first card, the
   card after the last one sold of that series (R82.5) - and only once the previous
   game's cards are collected (R82.4);
2. sellers record the cards they sell by numbered range (R82.5), a second series of
   the same set and face value may follow when the first runs out (R82.6); the room
   chief may put pots in play (superbingo, grand superbingo, megabingo, jackpot;
   R89-R91) and announce the session's last game (R93.15);
3. the room chief closes the sale: cards sold, collection, line and bingo prizes (with
   the carries of earlier games, R88.5) are announced, the pots' shares set aside;
4. balls are drawn from the ball source; each ball's record names the cards that have
   just completed a line or the whole card, so consoles and boards show them (R85.5,
   R92.11); the room chief may void the last ball (ball recall);
5. the table chief verifies each claimed card by series and number (R85.6, R85.11);
   every card completing the pattern on the winning ball shares it (R87);
6. the prizes are paid in cash from a drawer (R78): the line once the draw has moved on,
   the bingo and the pots it wins once the game is closed; what a split leaves goes to
   the same prize of the next game (R88.5);
7. the game is closed: the house's share and the tax (R98) are posted; then the cards
   are collected and the next sale may open.

On a failure (R86) the room chief suspends the game and resumes it, or suspends it for
good: the stakes are refunded when no prize was won, otherwise the room chief finishes
the game by hand, entering the balls, and the table chief verifies the claims.

The module follows :mod:`hall_server.hall.session`: its state is rebuilt by
:meth:`GamesModule.apply` from journal records only, and each command's ``decide``
works on a fork of that state, so a refused command (or a commit that fails) leaves
nothing changed.  The game's lifecycle is :class:`protocol.game.TraditionalGame`; the
paper numbering :class:`protocol.sale.GameSale`; claims :func:`protocol.claims.check_claim`;
the per-ball detection :class:`protocol.wins.WinDetector`; the arithmetic
:mod:`protocol.prizes` in the order of the audit replay (``docs/replay.md``).  The
commands, roles and records are listed in ``docs/hall-game.md``.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

import numpy as np
from twisted.internet.defer import Deferred, DeferredLock, ensureDeferred, maybeDeferred

from hall_server.hall.catalog import CardCatalog, CatalogError
from hall_server.hall.ledger import LedgerModule, posting_entries
from hall_server.hall.roles import Role
from hall_server.hall.session import Session, SessionModule
from protocol.balls import BallSource
from protocol.cards import CELLS, Card
from protocol.chain import Record
from protocol.claims import CardRef, ClaimVerdict, Win, check_claim
from protocol.errors import DomainError
from protocol.events import (
    EVENT_TYPES,
    BallDrawn,
    BallVoided,
    CardSold,
    ClaimRejected,
    Event,
    GameClosed,
    GameFinished,
    GameRefunded,
    GameResumed,
    GameSuspended,
    GameSuspendedForGood,
    ManualFinishStarted,
    PrizeWon,
    SaleClosed,
    SaleOpened,
    TerminalFailed,
    event_from_dict,
)
from protocol.game import FINAL_STATES, Input, InvalidTransition, State, TraditionalGame, describe
from protocol.ledger import Ledger, Leg, Posting, Reference, account_kind
from protocol.money import format_cents
from protocol.prizes import (
    PrizeRules,
    check_grand_superbingo_fund,
    check_operator_jackpot,
    check_operator_superbingo,
    house_share,
    jackpot_fed,
    jackpot_sales_share,
    megabingo_contribution,
    reserve_transfer,
    split_prize,
    superbingo_contribution,
    tax_cents,
)
from protocol.refunds import refund_game, stakes_account
from protocol.sale import GameSale, SaleRefused, Series
from protocol.wins import WinDetector
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.port import Entry
from server_kit.journal.projection import ProjectedState

SUPERBINGO_LIMITS = range(42, 91)  # R89: the ball limit L, 42 <= L <= 90
JACKPOT_THRESHOLDS = (40, 41, 42)  # R91
MEGABINGO_NOTICE_DAYS = 10  # R90
#: Pots an operator may pay into (R89.5, R91.9); the megabingo is funded by sales only.
OPERATOR_POTS = ("superbingo", "grand_superbingo", "jackpot")

#: Ledger accounts of the carries and pots (protocol/ledger.py's scheme).
CARRY = {"line": "carry:line", "bingo": "carry:bingo"}
SUPERBINGO = "pot:superbingo"
GRAND_SUPERBINGO = "pot:grand_superbingo"
MEGABINGO = "pot:megabingo"
JACKPOT = "pot:jackpot_accumulated"
RESERVE = "pot:jackpot_reserve"

R = Role
PERMISSIONS = {
    "announce_sale": {R.SELLER_CALLER, R.ROOM_CHIEF},
    "sell_cards": {R.SELLER_CALLER},
    "open_second_series": {R.SELLER_CALLER, R.ROOM_CHIEF},
    "announce_pots": {R.ROOM_CHIEF},
    "announce_last_game": {R.ROOM_CHIEF},
    "announce_megabingo": {R.ROOM_CHIEF},
    "contribute_to_pot": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "close_sale": {R.ROOM_CHIEF},
    "draw_ball": {R.SELLER_CALLER},
    "void_ball": {R.ROOM_CHIEF},
    "verify_claim": {R.TABLE_CHIEF},
    "pay_prizes": {R.CASHIER, R.ROOM_CHIEF},
    "close_game": {R.ROOM_CHIEF},
    "suspend_game": {R.ROOM_CHIEF, R.SYSTEM},
    "resume_game": {R.ROOM_CHIEF},
    "suspend_game_for_good": {R.ROOM_CHIEF},
    "enter_ball": {R.ROOM_CHIEF},
    "finish_game": {R.ROOM_CHIEF},
    "collect_cards": {R.ROOM_CHIEF, R.SELLER_CALLER},
}

class DeferredBallSource(Protocol):
    """A :class:`BallSource` whose ``draw()`` answers later: the ball blower, whose ball
    is known once its reader has read it (``hall_server/blower/source.py``)."""

    @property
    def drawn(self) -> tuple[int, ...]: ...

    def draw(self) -> Deferred[int]: ...

    def put_back(self, ball: int) -> None: ...


#: Given the balls already drawn in the current game, the source of the next ones.
BallSourceFactory = Callable[[Sequence[int]], "BallSource | DeferredBallSource"]


class GameModuleError(DomainError):
    """A game command refused; the message says why and what to do."""


# --- State ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Settlement:
    """What the sale's close announced and set aside (R85, R88, R89-R91, R98)."""

    sales_cents: int
    line_cents: int  # line prize, its carry included
    bingo_cents: int
    carry_line_cents: int  # the carries taken from earlier games
    carry_bingo_cents: int
    contributions: Mapping[str, int]  # pot account -> cents set aside at the close
    house_cents: int
    tax_cents: int


@dataclass(frozen=True)
class PrizePaid:
    """A prize paid: to which cards, how much, and what stayed behind."""

    prize: str
    ball_count: int
    amount_cents: int
    carry_cents: int
    payments: tuple[tuple[str, int], ...]  # (card label, cents)
    desk: str | None  # the cash drawer; None when only players' accounts were credited


@dataclass
class Game:
    """One game of the hall as the journal tells it."""

    game_id: str
    session: int
    number: int  # within the session
    machine: TraditionalGame
    sale: GameSale
    card_set: str
    superbingo_limit: int | None = None
    grand_superbingo_limit: int | None = None
    jackpot_threshold: int | None = None
    megabingo_cents: int | None = None
    last_game: bool = False
    settlement: Settlement | None = None
    refs: tuple[CardRef, ...] = ()  # the cards in play, in the detector's order
    detector: WinDetector | None = None
    paid: dict[str, PrizePaid] = field(default_factory=dict)
    collected: bool = False
    #: Virtual cards sold at a stake below their price: their stake in percent (R88.4-5).
    #: A card not listed stakes its whole price, as every paper card does.
    stake_pcts: dict[CardRef, int] = field(default_factory=dict)

    @property
    def over(self) -> bool:
        return self.machine.state in FINAL_STATES

    @property
    def superbingo_won(self) -> bool | None:
        """Whether the superbingo in play was won; None when none was in play or not yet known."""
        if self.superbingo_limit is None or "bingo" not in self.paid:
            return None
        return self.paid["bingo"].ball_count <= self.superbingo_limit


@dataclass
class GamesState:
    games: list[Game] = field(default_factory=list)
    last_sold: dict[int, int] = field(default_factory=dict)  # series -> last card sold
    megabingo: dict[str, Any] | None = None  # the announced megabingo not yet played
    operator_superbingo: dict[str, int] = field(default_factory=dict)  # session date -> cents
    operator_jackpot: dict[str, int] = field(default_factory=dict)  # "YYYY-MM" -> cents

    @property
    def current(self) -> Game | None:
        """The game under way or waiting for its cards to be collected."""
        if self.games and not self.games[-1].collected:
            return self.games[-1]
        return None


class _Layouts(Mapping[CardRef, Card]):
    """The cards in play, looked up by reference; a card is built only when asked for."""

    def __init__(self, refs: Sequence[CardRef], cells: np.ndarray) -> None:
        self._index = {ref: i for i, ref in enumerate(refs)}
        self._cells = cells

    def __getitem__(self, ref: CardRef) -> Card:
        return Card.from_cells(int(n) for n in self._cells[self._index[ref]])

    def __iter__(self) -> Iterator[CardRef]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


# --- Helpers ----------------------------------------------------------------------------


def _whole(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise GameModuleError(f"{what} is a whole number, not {value!r}")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GameModuleError(f"say {what}; it goes into the record")
    return value.strip()


def _entry(event: Event, **extra: Any) -> Entry:
    """A journal entry for a domain event: its dict form, plus what consoles need besides."""
    return (event.type, {**event.to_dict(), **extra})


def _event_of(record: Record) -> Event:
    """The domain event inside a record written by :func:`_entry` (extras and actor dropped)."""
    cls = EVENT_TYPES[record.type]
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return event_from_dict({"type": record.type, **{k: v for k, v in record.payload.items() if k in names}})


def _fork(machine: TraditionalGame) -> TraditionalGame:
    """A copy of the machine a decision may advance without touching the live one.

    Events are frozen, so only the containers are copied: cheap even with thousands of
    cards sold, which a deep copy would not be.
    """
    clone = copy.copy(machine)
    clone.steps = list(machine.steps)
    clone.sales = dict(machine.sales)
    clone.failed_terminals = set(machine.failed_terminals)
    clone.won = dict(machine.won)
    clone._drawn = list(machine._drawn)
    return clone


def _fork_sale(sale: GameSale) -> GameSale:
    return dataclasses.replace(sale, windows=list(sale.windows), sold=list(sale.sold))


def feed(machine: TraditionalGame, event: Event) -> None:
    """Take the transition ``event`` records: how the journal rebuilds a game."""
    if isinstance(event, SaleOpened):
        machine.open_sale(
            series=event.series,
            first_card=event.first_card,
            price_cents=event.price_cents,
            closes_at_ms=event.closes_at_ms,
        )
    elif isinstance(event, CardSold):
        machine.sell_card(
            series=event.series,
            card_number=event.card_number,
            stake_cents=event.stake_cents,
            account=event.account,
            terminal_id=event.terminal_id,
        )
    elif isinstance(event, SaleClosed):
        machine.close_sale()
    elif isinstance(event, TerminalFailed):
        machine.terminal_failed(event.terminal_id)
    elif isinstance(event, BallDrawn):
        if event.entered_by is None:
            machine.draw_ball(event.ball)
        else:
            machine.enter_ball(event.ball, entered_by=event.entered_by)
    elif isinstance(event, BallVoided):
        machine.void_ball(event.ball, voided_by=event.voided_by, role=event.role, reason=event.reason)
    elif isinstance(event, ClaimRejected):
        ref = CardRef(event.series, event.card_number)
        machine.claim_checked(ClaimVerdict(ref, len(machine.drawn), (), event.reason))
    elif isinstance(event, PrizeWon):
        ref = CardRef(event.series, event.card_number)
        win = Win(event.pattern, event.ball_count)
        machine.claim_checked(ClaimVerdict(ref, len(machine.drawn), (win,)))
    elif isinstance(event, GameSuspended):
        machine.report_failure(event.reason)
    elif isinstance(event, GameResumed):
        machine.resolve_failure()
    elif isinstance(event, GameSuspendedForGood):
        machine.give_up(event.reason)
    elif isinstance(event, GameRefunded):
        machine.refund()
    elif isinstance(event, ManualFinishStarted):
        machine.finish_by_hand(authorised_by=event.authorised_by)
    elif isinstance(event, GameClosed):
        machine.close()
    elif isinstance(event, GameFinished):
        machine.finish(finished_by=event.finished_by)
    else:  # a programming error: every event of the hall game is handled above
        raise TypeError(f"the hall game does not record {event.type} events")


def _session_date(session: Session) -> datetime.date:
    try:
        return datetime.date.fromisoformat(session.date)
    except ValueError:
        raise GameModuleError(
            f"the session's date {session.date!r} is not a YYYY-MM-DD date; pot rules count days by it"
        ) from None


# --- The module ---------------------------------------------------------------------------


class GamesModule(ProjectedState):
    """The hall's traditional game: commands in, journal records out, state from the journal."""

    def __init__(
        self,
        core: CommandCore,
        session: SessionModule,
        ledger: LedgerModule,
        catalog: CardCatalog,
        ball_sources: BallSourceFactory,
        rules: PrizeRules,
    ) -> None:
        # A configuration that could pay out less than 70% never starts a game (R88.1).
        rules.check()
        self.core = core
        self.session = session
        self.ledger = ledger
        self.catalog = catalog
        self.ball_sources = ball_sources
        self.rules = rules
        self.state = GamesState()
        self._source: BallSource | DeferredBallSource | None = None
        # One draw at a time: a draw asked while a ball is being taken waits its turn.
        self._draw_turn = DeferredLock()
        #: Virtual series in play by their number in the game (R82.9): card k is row k-1.
        self.virtual_series: dict[int, np.ndarray] = {}
        session.closing_checks.append(self.closing_refusal)
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("announce_sale", self.announce_sale, {"series": int},
             "open a game's sale on a series: its price and first card"),
            ("sell_cards", self.sell_cards, {"series": int, "first": int, "last": int},
             "record paper cards first..last of a series sold by this seller"),
            ("open_second_series", self.open_second_series, {"series": int},
             "sell a second series of the same set once the first runs out"),
            ("announce_pots", self.announce_pots,
             {"superbingo_limit": int, "grand_superbingo_limit": int, "jackpot_threshold": int, "megabingo": bool},
             "put pots in play for this game (0: not in play)"),
            ("announce_last_game", self.announce_last_game, {}, "announce this game as the session's last"),
            ("announce_megabingo", self.announce_megabingo, {"date": str, "time": str, "amount_cents": int},
             "announce a megabingo at least 10 days ahead"),
            ("contribute_to_pot", self.contribute_to_pot, {"pot": str, "amount_cents": int},
             "pay an operator contribution into a pot"),
            ("close_sale", self.close_sale, {}, "close the sale and announce the prizes"),
            ("draw_ball", self.draw_ball, {}, "draw the next ball"),
            ("void_ball", self.void_ball, {"ball": int, "reason": str}, "void the last ball drawn"),
            ("verify_claim", self.verify_claim, {"series": int, "card_number": int}, "verify a claimed card"),
            ("pay_prizes", self.pay_prizes, {"desk": str}, "pay the settled prizes from a cash drawer"),
            ("close_game", self.close_game, {}, "close the game once the bingo is verified"),
            ("suspend_game", self.suspend_game, {"reason": str}, "suspend the game on a failure"),
            ("resume_game", self.resume_game, {}, "resume the suspended game"),
            ("suspend_game_for_good", self.suspend_game_for_good, {"reason": str},
             "suspend the game for good: refund, or finish by hand"),
            ("enter_ball", self.enter_ball, {"ball": int}, "enter a ball by hand while finishing the game"),
            ("finish_game", self.finish_game, {}, "end the game finished by hand"),
            ("collect_cards", self.collect_cards, {}, "record that the game's cards are collected"),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- Queries ------------------------------------------------------------------------

    @property
    def current(self) -> Game | None:
        return self.state.current

    def require_game(self) -> Game:
        game = self.state.current
        if game is None:
            raise GameModuleError("no game is under way; announce a sale first")
        return game

    def _series_left(self, exhausted: int) -> str:
        """What the seller can open instead of a sold-out series."""
        left = [
            f"{info.number} ({info.card_count - self.last_sold(info)} cards left)"
            for info in self.catalog.all_series()
            if info.number != exhausted and self.last_sold(info) < info.card_count
        ]
        if not left:
            return "no registered series has cards left: register a new series (bingo cards add-series)"
        return "open the sale on another series: " + ", ".join(left)

    def last_sold(self, series: Series) -> int:
        """The last card of ``series`` sold: by the journal, or before it by the catalog."""
        return max(series.last_sold, self.state.last_sold.get(series.number, 0))

    def due_prizes(self, game: Game) -> list[str]:
        """The won prizes that may be paid now (line, bingo), not yet paid."""
        return self._due(game, game.machine)

    def _due(self, game: Game, machine: TraditionalGame) -> list[str]:
        """:meth:`due_prizes` as ``machine`` (the game's, or a decision's fork) stands."""
        won = machine.won
        over = machine.state in FINAL_STATES
        due = []
        line = won.get("line")
        # The line is settled once the caller has moved on (R85: the staff ask for other
        # cards before the draw goes on) or the draw is over.
        if line and "line" not in game.paid and (
            len(machine.drawn) > line.ball_count or "bingo" in won or over
        ):
            due.append("line")
        # The bingo is settled when the game is closed: every claim has been verified (R85.11).
        if "bingo" in won and "bingo" not in game.paid and over:
            due.append("bingo")
        return due

    def add_virtual_series(self, number: int, layouts: np.ndarray) -> None:
        """Put a virtual library in the game as series ``number`` (R82.9).

        The hall game names every card by an integer series and a number
        (:class:`CardRef`); a virtual library's series is a label (``V1``), so the hall
        gives it a number of its own, which no paper series may have: virtual cards
        then take part in detection, claims and prizes like paper ones, and their
        layouts come from ``layouts`` (card k at row k-1) instead of a card set.
        """
        number = _whole(number, "a virtual series number")
        try:
            self.catalog.series(number)
        except CatalogError:
            pass
        else:
            raise GameModuleError(
                f"series {number} is a paper series; a virtual series needs a number of its own (R82.9)"
            )
        self.virtual_series[number] = np.asarray(layouts, dtype=np.uint8)

    def is_virtual(self, ref: CardRef) -> bool:
        return ref.series in self.virtual_series

    def unpaid(self, game: Game) -> list[str]:
        """Prizes won in an ended game and not paid yet."""
        if not game.over:
            return []
        return [p for p in ("line", "bingo") if p in game.machine.won and p not in game.paid]

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain data: for consoles, audits and recovery checks."""
        games = []
        for game in self.state.games:
            machine = game.machine
            detector = game.detector
            games.append(
                {
                    "game_id": game.game_id,
                    "session": game.session,
                    "number": game.number,
                    "card_set": game.card_set,
                    "state": str(machine.state),
                    "steps": [(str(s.before), str(s.input), str(s.after)) for s in machine.steps],
                    "price_cents": machine.price_cents,
                    "sales": sorted((ref.label, sale.to_dict()) for ref, sale in machine.sales.items()),
                    "won": {p: (w.ball_count, sorted(r.label for r in w.cards)) for p, w in machine.won.items()},
                    "drawn": machine.drawn,
                    "suspended_from": machine.suspended_from,
                    "sale": dataclasses.asdict(game.sale),
                    "pots": (game.superbingo_limit, game.grand_superbingo_limit, game.jackpot_threshold,
                             game.megabingo_cents),
                    "last_game": game.last_game,
                    "settlement": dataclasses.asdict(game.settlement) if game.settlement else None,
                    "refs": [r.label for r in game.refs],
                    "detector": None if detector is None else (
                        detector.drawn, [detector.rows_missing(i) for i in range(detector.card_count)]
                    ),
                    "paid": {k: dataclasses.asdict(v) for k, v in game.paid.items()},
                    "collected": game.collected,
                    "stake_pcts": sorted((ref.label, pct) for ref, pct in game.stake_pcts.items()),
                }
            )
        return {
            "games": games,
            "last_sold": dict(self.state.last_sold),
            "megabingo": self.state.megabingo,
            "operator_superbingo": dict(self.state.operator_superbingo),
            "operator_jackpot": dict(self.state.operator_jackpot),
        }

    # --- The sale ---------------------------------------------------------------------

    def announce_sale(self, actor: Actor, series: int) -> Deferred[list[Record]]:
        """Open a game's sale on ``series``: price = face value, first card = the next one (R85, R82.4-5)."""

        def decide(now: int) -> list[Entry]:
            session = self.session.require_open()
            self.session.require_ball_set_usable()
            previous = self.state.current
            if previous is not None and not previous.over:
                raise GameModuleError(
                    f"game {previous.game_id} is still under way ({describe(previous.machine.state)}); "
                    "it must end before another sale opens"
                )
            if previous is not None and (due := self.unpaid(previous)):
                raise GameModuleError(
                    f"game {previous.game_id}'s {' and '.join(due)} not yet paid; pay them and "
                    "collect the cards before the next sale"
                )
            last = [g for g in self.state.games if g.session == session.number and g.last_game]
            if last:
                raise GameModuleError(
                    f"game {last[0].game_id} was announced as the session's last game (R93.15); "
                    "no other game is played in this session"
                )
            info = self.catalog.series(_whole(series, "a series"))
            on_sale = dataclasses.replace(info, last_sold=self.last_sold(info))
            if previous is not None:
                raise GameModuleError(
                    f"the previous game's cards have not been collected (R82.4; game {previous.game_id}); "
                    "record the collection first"
                )
            if on_sale.exhausted:
                raise GameModuleError(f"series {on_sale.number} is sold out ({on_sale.card_count} cards); "
                                      + self._series_left(on_sale.number))
            try:
                sale = GameSale.open(on_sale, previous_game_collected=True)
            except SaleRefused as error:
                raise GameModuleError(str(error)) from None
            first = sale.next_card(on_sale.number)
            number = 1 + sum(1 for g in self.state.games if g.session == session.number)
            game_id = f"{_session_date(session).isoformat()}-s{session.number}-g{number}"
            (opened,) = TraditionalGame(game_id).open_sale(
                series=on_sale.number, first_card=first, price_cents=on_sale.face_value_cents
            )
            return [
                _entry(
                    opened,
                    session=session.number,
                    game_number=number,
                    card_set=on_sale.card_set,
                    card_count=on_sale.card_count,
                )
            ]

        return self.core.execute(actor, "announce_sale", decide)

    def sell_cards(self, actor: Actor, series: int, first: int, last: int) -> Deferred[list[Record]]:
        """Record paper cards ``first``..``last`` of ``series`` sold by this seller (R82.5, R82.6)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.CARD_SOLD):
                raise InvalidTransition(f"cannot sell a card {describe(machine.state)}")
            sale = _fork_sale(game.sale)
            sold = sale.sell(
                _whole(series, "a series"), _whole(first, "a card number"), _whole(last, "a card number"),
                actor.name,
            )
            account = f"cash:{actor.name}"
            account_kind(account)
            price = machine.price_cents
            events = [
                machine.sell_card(series=sold.series, card_number=n, stake_cents=price, account=account)[0]
                for n in range(sold.first, sold.last + 1)
            ]
            posting = Posting.transfer(
                price * sold.count,
                debit=account,
                credit=stakes_account(game.game_id),
                reason="sale:paper",
                reference=Reference(game.game_id, None, self.core.seq + 1),
            )
            self.ledger.check([posting])
            summary = {
                "game_id": game.game_id,
                "series": sold.series,
                "first": sold.first,
                "last": sold.last,
                "count": sold.count,
                "seller": actor.name,
                "account": account,
                "amount_cents": posting.amount,
            }
            return [("paper_cards_sold", summary), *(_entry(e) for e in events), *posting_entries([posting])]

        return self.core.execute(actor, "sell_cards", decide)

    def open_second_series(self, actor: Actor, series: int) -> Deferred[list[Record]]:
        """Open the complementary second series once the first has run out (R82.6)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            if not game.machine.accepts(Input.CARD_SOLD):
                raise InvalidTransition(f"cannot open a second series {describe(game.machine.state)}")
            info = self.catalog.series(_whole(series, "a series"))
            window = _fork_sale(game.sale).add_second_series(
                dataclasses.replace(info, last_sold=self.last_sold(info))
            )
            return [
                (
                    "second_series_opened",
                    {
                        "game_id": game.game_id,
                        "series": info.number,
                        "card_set": info.card_set,
                        "face_value_cents": info.face_value_cents,
                        "card_count": info.card_count,
                        "first": window.first,
                        "last": window.last,
                    },
                )
            ]

        return self.core.execute(actor, "open_second_series", decide)

    # --- Pots and announcements ---------------------------------------------------------

    def announce_pots(
        self,
        actor: Actor,
        superbingo_limit: int = 0,
        grand_superbingo_limit: int = 0,
        jackpot_threshold: int = 0,
        megabingo: bool = False,
    ) -> Deferred[list[Record]]:
        """Put pots in play for the game on sale, before its draw (R89, R90, R91); 0: not in play.

        Announced again while the sale is open, the later announcement replaces the earlier.
        """

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            if game.machine.state is not State.SELLING:
                raise GameModuleError(
                    f"pots are announced before the game, while its sale is open, not {describe(game.machine.state)}"
                )
            superbingo = _whole(superbingo_limit, "a superbingo ball limit") or None
            grand = _whole(grand_superbingo_limit, "a grand superbingo ball limit") or None
            threshold = _whole(jackpot_threshold, "a jackpot threshold") or None
            for name, limit in (("superbingo", superbingo), ("grand superbingo", grand)):
                if limit is not None and limit not in SUPERBINGO_LIMITS:
                    raise GameModuleError(
                        f"the {name}'s ball limit is {SUPERBINGO_LIMITS.start} to "
                        f"{SUPERBINGO_LIMITS.stop - 1} (R89), not {limit}"
                    )
            if superbingo is not None and not self.rules.superbingo_bp:
                raise GameModuleError("the hall's prize rules fund no superbingo (superbingo_bp is 0)")
            if superbingo is not None and grand is not None:
                raise GameModuleError("superbingo and grand superbingo are never in play in the same game (R89)")
            if threshold is not None:
                if threshold not in JACKPOT_THRESHOLDS:
                    raise GameModuleError(f"the jackpot is won within 40, 41 or 42 balls (R91), not {threshold}")
                if not self.rules.jackpot:
                    raise GameModuleError("the hall's prize rules fund no jackpot")
            megabingo_cents = None
            if not isinstance(megabingo, bool):
                raise GameModuleError(f"megabingo is true or false, not {megabingo!r}")
            if megabingo:
                session = self.session.require_open()
                announced = self.state.megabingo
                if announced is None or announced["date"] != session.date:
                    when = "none is announced" if announced is None else f"it is announced for {announced['date']}"
                    raise GameModuleError(
                        f"a megabingo is played on the day announced at least {MEGABINGO_NOTICE_DAYS} "
                        f"days ahead (R90); {when}"
                    )
                megabingo_cents = int(announced["amount_cents"])
            return [
                (
                    "pots_announced",
                    {
                        "game_id": game.game_id,
                        "superbingo_limit": superbingo,
                        "grand_superbingo_limit": grand,
                        "jackpot_threshold": threshold,
                        "megabingo_cents": megabingo_cents,
                        "superbingo_cents": self.ledger.balance(SUPERBINGO),
                        "grand_superbingo_cents": self.ledger.balance(GRAND_SUPERBINGO),
                        "jackpot_cents": self.ledger.balance(JACKPOT),
                    },
                )
            ]

        return self.core.execute(actor, "announce_pots", decide)

    def announce_last_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Announce the game on sale as the session's last (R93.15), before its draw."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            if game.machine.state not in (State.SELLING, State.SALE_CLOSED):
                raise GameModuleError(
                    f"the last game is announced before its draw, not {describe(game.machine.state)}"
                )
            if game.last_game:
                raise GameModuleError(f"game {game.game_id} is already announced as the session's last")
            return [("last_game_announced", {"game_id": game.game_id, "session": game.session})]

        return self.core.execute(actor, "announce_last_game", decide)

    def announce_megabingo(self, actor: Actor, date: str, time: str, amount_cents: int) -> Deferred[list[Record]]:
        """Set a megabingo's date, time and amount at least 10 days ahead (R90)."""

        def decide(now: int) -> list[Entry]:
            if not self.rules.megabingo:
                raise GameModuleError("the hall's prize rules fund no megabingo")
            try:
                day = datetime.date.fromisoformat(date)
            except (TypeError, ValueError):
                raise GameModuleError(f"a megabingo date is YYYY-MM-DD, not {date!r}") from None
            at = _text(time, "the megabingo's time")
            today = self.session.local_date(now)  # the hall's day, in its configured time zone
            if (day - today).days < MEGABINGO_NOTICE_DAYS:
                raise GameModuleError(
                    f"a megabingo is announced at least {MEGABINGO_NOTICE_DAYS} days ahead (R90); "
                    f"{day} is {(day - today).days} day(s) after today ({today})"
                )
            pending = self.state.megabingo
            if pending is not None and datetime.date.fromisoformat(pending["date"]) >= today:
                raise GameModuleError(f"a megabingo is already announced for {pending['date']}")
            amount = _whole(amount_cents, "an amount in cents")
            fund = self.ledger.balance(MEGABINGO)
            if not 0 < amount <= fund:
                raise GameModuleError(
                    f"the megabingo's amount is more than nothing and at most its fund ({fund} cents), "
                    f"not {amount} (R90)"
                )
            return [
                (
                    "megabingo_announced",
                    {"date": day.isoformat(), "time": at, "amount_cents": amount,
                     "announced_on": today.isoformat(), "fund_cents": fund},
                )
            ]

        return self.core.execute(actor, "announce_megabingo", decide)

    def contribute_to_pot(self, actor: Actor, pot: str, amount_cents: int) -> Deferred[list[Record]]:
        """The operator pays into the superbingo, grand superbingo or jackpot (R89.5, R91.9).

        Taken from the house's share (the ruling of R89.5), within the daily and monthly limits.
        """

        def decide(now: int) -> list[Entry]:
            session = self.session.require_open()
            if pot not in OPERATOR_POTS:
                raise GameModuleError(f"the operator pays into {', '.join(OPERATOR_POTS)}, not {pot!r}")
            amount = _whole(amount_cents, "an amount in cents")
            if amount <= 0:
                raise GameModuleError(f"a contribution is a positive number of cents, not {amount}")
            day, month = session.date, session.date[:7]
            if pot == "jackpot":
                check_operator_jackpot(self.state.operator_jackpot.get(month, 0), amount)
                split = jackpot_fed(amount, self.ledger.balance(JACKPOT))
                credits = tuple(
                    Leg(account, cents)
                    for account, cents in ((JACKPOT, split.to_accumulated), (RESERVE, split.to_reserve))
                    if cents
                )
            else:
                check_operator_superbingo(self.state.operator_superbingo.get(day, 0), amount)
                if pot == "grand_superbingo":
                    check_grand_superbingo_fund(self.ledger.balance(GRAND_SUPERBINGO), amount)
                credits = (Leg(f"pot:{pot}", amount),)
            posting = Posting((Leg("house", amount),), credits, f"operator:{pot}", Reference(event_seq=self.core.seq + 1))
            self.ledger.check([posting])
            return [
                ("operator_contribution", {"pot": pot, "amount_cents": amount, "date": day, "month": month}),
                *posting_entries([posting]),
            ]

        return self.core.execute(actor, "contribute_to_pot", decide)

    def close_sale(self, actor: Actor) -> Deferred[list[Record]]:
        """Close the sale: cards sold, collection, line and bingo prizes; pot shares set aside."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            (closed,) = machine.close_sale()
            assert isinstance(closed, SaleClosed)
            if closed.cards_sold == 0:
                raise GameModuleError(
                    "no card has been sold; sell cards first, or suspend the game for good to cancel it"
                )
            sales = closed.collection_cents
            carry_line = self.ledger.balance(CARRY["line"])
            carry_bingo = self.ledger.balance(CARRY["bingo"])
            contributions = {
                SUPERBINGO: superbingo_contribution(sales, self.rules.superbingo_bp),
                MEGABINGO: megabingo_contribution(sales) if self.rules.megabingo else 0,
            }
            if self.rules.jackpot:
                share = jackpot_sales_share(sales, self.ledger.balance(JACKPOT))
                contributions[JACKPOT] = share.to_accumulated
                contributions[RESERVE] = share.to_reserve
            contributions = {pot: cents for pot, cents in contributions.items() if cents}
            postings = []
            top_up = self.rules.house_top_up(sales)
            if top_up:
                # The prizes' fixed sums exceed their percentages: the house makes up the difference (R88.3).
                postings.append(
                    Posting.transfer(
                        top_up, debit="house", credit=stakes_account(game.game_id),
                        reason="prizes:fixed sum top-up", reference=Reference(game.game_id, None, self.core.seq + 1),
                    )
                )
            if contributions:
                postings.append(
                    Posting(
                        (Leg(stakes_account(game.game_id), sum(contributions.values())),),
                        tuple(Leg(pot, cents) for pot, cents in contributions.items()),
                        "pots:contribution",
                        Reference(game.game_id, None, self.core.seq + 1),
                    )
                )
            self.ledger.check(postings)
            series_after = _fork_sale(game.sale).close()
            return [
                _entry(
                    closed,
                    line_cents=self.rules.line_amount(sales) + carry_line,
                    bingo_cents=self.rules.bingo_amount(sales) + carry_bingo,
                    carry_line_cents=carry_line,
                    carry_bingo_cents=carry_bingo,
                    contributions=contributions,
                    house_cents=house_share(self.rules, sales),
                    tax_cents=tax_cents(sales),
                    series=[[s.number, s.last_sold] for s in series_after],
                ),
                *posting_entries(postings),
            ]

        return self.core.execute(actor, "close_sale", decide)

    # --- The draw ----------------------------------------------------------------------

    def _source_for(self, drawn: Sequence[int]) -> BallSource | DeferredBallSource:
        """The ball source, rebuilt from the journal's draw when it does not match it.

        A source that drew a ball whose record was never committed (a refused decision,
        a crash) no longer matches; a new one from the journal's balls knows nothing of
        that ball, so nobody ever saw it (announce after commit).
        """
        if self._source is None or tuple(self._source.drawn) != tuple(drawn):
            self._source = self.ball_sources(tuple(drawn))
        return self._source

    def _completions(self, game: Game, ball: int) -> dict[str, list[str]]:
        """The cards ``ball`` completes a row or the card of, per the detector (R85.5, R92.11)."""
        detector = game.detector
        assert detector is not None, "the detector is built when the sale closes"
        # The detector marks the ball to tell; the mark is undone so that only the
        # committed record, applied, advances it.
        completed = detector.ball_drawn(ball)
        try:
            refs = [game.refs[i] for i in completed.rows], [game.refs[i] for i in completed.cards]
        finally:
            detector.last_ball_voided()
        if game.machine.failed_terminals:
            # Cards refunded with a failed terminal left the game (R96.3).
            in_play = game.machine.in_play
            refs = [r for r in refs[0] if r in in_play], [r for r in refs[1] if r in in_play]
        return {
            "completed_line": [ref.label for ref in refs[0]],
            "completed_bingo": [ref.label for ref in refs[1]],
        }

    def _virtual_wins(self, game: Game, machine: TraditionalGame, completions: Mapping[str, list[str]]) -> list[Entry]:
        """Virtual cards completing a pattern on this ball win it without a claim (R93.10, R85.9).

        The system marks virtual cards itself, so it is their claimant: each one
        ``check_claim`` finds winning is fed to ``machine`` (a decision's fork), and
        its ``prize_won`` is recorded with the ball.  Paper cards still need their
        player's call and the table chief's verification (R85.6).
        """
        if not self.virtual_series:
            return []
        labels = dict.fromkeys([*completions["completed_line"], *completions["completed_bingo"]])
        refs = sorted(
            ref for ref in (CardRef(*(int(part) for part in label.split("-"))) for label in labels)
            if self.is_virtual(ref)
        )
        layouts = {
            ref: Card.from_cells(int(n) for n in self.virtual_series[ref.series][ref.number - 1]) for ref in refs
        }
        entries: list[Entry] = []
        for ref in refs:
            verdict = check_claim(ref, layouts, machine.drawn, machine.won)
            if verdict.wins:
                entries += [_entry(e) for e in machine.claim_checked(verdict)]
        return entries

    def _auto_payments(self, game: Game, machine: TraditionalGame, before: int) -> list[Entry]:
        """The prizes due that only virtual cards won, credited now (R85.9).

        ``before`` is how many entries of the same decision precede these.  A prize
        shared with a paper card waits for the cashier's ``pay_prizes``, which pays the
        paper cards in cash and credits the virtual ones.
        """
        due = self._due(game, machine)
        if not due or not all(
            game.machine.sales[ref].account.startswith("player:") if ref in game.machine.sales else False
            for pattern in due
            for ref in machine.won[pattern].cards
        ):
            return []
        return self._payments(game, machine, due, None, self.core.seq + before + 1)

    def draw_ball(self, actor: Actor) -> Deferred[list[Record]]:
        """Draw the next ball (R85.5, R92.10): take it from the ball source, then commit it.

        The ball comes first - the software generator's at once, the blower's once its
        reader has read it - and only then is its ``ball_drawn`` decided and committed,
        and shown after the commit.  The source is asked only after a check, in turn
        with the other commands, that the actor may draw and the game takes a ball, so
        a refused draw moves no ball.  A ball the source gave whose record was not
        committed was seen by nobody: the software generator forgets it, the blower
        gives it again to the next draw.
        """
        return self._draw_turn.run(lambda: ensureDeferred(self._draw_ball(actor)))

    async def _draw_ball(self, actor: Actor) -> list[Record]:
        before: list[tuple[int, ...]] = []

        def check(now: int) -> list[Entry]:
            before.append(tuple(self._game_taking_a_ball().machine.drawn))
            return []  # nothing to record yet: the ball is not known

        await self.core.execute(actor, "draw_ball", check)
        ball = await maybeDeferred(self._source_for(before[0]).draw)
        assert isinstance(ball, int), "a ball source gives ball numbers"

        def decide(now: int) -> list[Entry]:
            game = self._game_taking_a_ball()
            if tuple(game.machine.drawn) != before[0]:
                raise GameModuleError("the game's balls changed while the ball was drawn; draw again")
            machine = _fork(game.machine)
            (drawn,) = machine.draw_ball(ball)
            completions = self._completions(game, ball)
            entries = [_entry(drawn, **completions), *self._virtual_wins(game, machine, completions)]
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return await self.core.execute(actor, "draw_ball", decide)

    def _game_taking_a_ball(self) -> Game:
        game = self.require_game()
        if not game.machine.accepts(Input.BALL_DRAWN):
            raise InvalidTransition(f"cannot draw a ball {describe(game.machine.state)}")
        return game

    def enter_ball(self, actor: Actor, ball: int) -> Deferred[list[Record]]:
        """The room chief enters a ball while finishing the game by hand (R86.2)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            (drawn,) = machine.enter_ball(_whole(ball, "a ball"), entered_by=actor.name)
            assert isinstance(drawn, BallDrawn)
            completions = self._completions(game, drawn.ball)
            entries = [_entry(drawn, **completions), *self._virtual_wins(game, machine, completions)]
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return self.core.execute(actor, "enter_ball", decide)

    def void_ball(self, actor: Actor, ball: int, reason: str) -> Deferred[list[Record]]:
        """Void the last ball drawn, with the reason (ball recall)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            (voided,) = _fork(game.machine).void_ball(
                _whole(ball, "a ball"), voided_by=actor.name, role=str(actor.role), reason=str(reason).strip()
            )
            return [_entry(voided)]

        return self.core.execute(actor, "void_ball", decide)

    # --- Claims and prizes -------------------------------------------------------------

    def verify_claim(self, actor: Actor, series: int, card_number: int) -> Deferred[list[Record]]:
        """Verify a claimed card by series and number (R85.6, R85.11, R87).

        A winning card is recorded as a ``prize_won`` per pattern, a losing one as a
        ``claim_rejected`` with the reason.  A prize already paid takes no more cards.
        """

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.CLAIM_REJECTED):
                raise InvalidTransition(f"cannot verify a claim {describe(machine.state)}")
            ref = CardRef(_whole(series, "a series"), _whole(card_number, "a card number"))
            layouts = _Layouts(game.refs, self._cells(game))
            verdict = check_claim(ref, layouts, machine.drawn, machine.won)
            settled = [w for w in verdict.wins if w.pattern in game.paid]
            if settled:
                wins = tuple(w for w in verdict.wins if w.pattern not in game.paid)
                reason = None if wins else (
                    f"the {settled[0].pattern} was paid after ball {game.paid[settled[0].pattern].ball_count}; "
                    f"card {ref} was claimed too late to share it"
                )
                verdict = ClaimVerdict(ref, verdict.checked_at, wins, reason)
            events = machine.claim_checked(verdict)
            return [
                _entry(e, ball_count=len(machine.drawn)) if isinstance(e, ClaimRejected) else _entry(e)
                for e in events
            ]

        return self.core.execute(actor, "verify_claim", decide)

    def _cells(self, game: Game) -> np.ndarray:
        """The cells of the cards in play, in the detector's order (every series of a set prints the same cards)."""
        rows = np.fromiter((ref.number - 1 for ref in game.refs), dtype=np.int64, count=len(game.refs))
        if not self.virtual_series:
            return self.catalog.layouts(game.card_set)[rows]
        # Virtual cards take their layouts from their library (R82.9), paper ones from the set.
        series = np.fromiter((ref.series for ref in game.refs), dtype=np.int64, count=len(game.refs))
        cells = np.empty((len(rows), CELLS), dtype=np.uint8)
        paper = ~np.isin(series, list(self.virtual_series))
        if paper.any():
            cells[paper] = self.catalog.layouts(game.card_set)[rows[paper]]
        for number, layouts in self.virtual_series.items():
            mine = series == number
            cells[mine] = layouts[rows[mine]]
        return cells

    def pay_prizes(self, actor: Actor, desk: str) -> Deferred[list[Record]]:
        """Pay the settled prizes: paper cards in cash from drawer ``desk``, virtual ones to
        their players' accounts (R78, R85.9, R87, R88.5, R89-R91)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            due = self.due_prizes(game)
            if not due:
                raise GameModuleError(self._nothing_due(game))
            account = f"cash:{_text(desk, 'which cash drawer pays')}"
            account_kind(account)
            return self._payments(game, game.machine, due, account, self.core.seq + 1)

        return self.core.execute(actor, "pay_prizes", decide)

    def _payments(
        self, game: Game, machine: TraditionalGame, due: Sequence[str], desk: str | None, first_seq: int
    ) -> list[Entry]:
        """The records and postings paying the prizes ``due`` as ``machine`` has them won.

        A card sold from a player's account (a virtual card) is credited to that account
        at its stake's fraction of its share (R85.9, R88.4-5); any other card is paid in
        cash from ``desk``.  ``first_seq`` is the sequence number the first of these
        records will get: the postings' references name their ``prize_paid`` record.
        """
        moved: dict[str, int] = {}  # what this payment has moved so far, debit minus credit
        entries: list[Entry] = []
        postings: list[Posting] = []

        def post(posting: Posting) -> None:
            postings.append(posting)
            for name, change in posting.signed().items():
                moved[name] = moved.get(name, 0) + change

        def balance(pot: str) -> int:
            # Pots are credit accounts: what they hold falls as they are debited.
            return self.ledger.balance(pot) - moved.get(pot, 0)

        def payee(ref: CardRef) -> str:
            sale = machine.sales.get(ref)
            if sale is not None and sale.account.startswith("player:"):
                return sale.account
            assert desk is not None, "prizes on paper cards are paid only through pay_prizes"
            return desk

        def pay(prize: str, amount: int, source: str, ball_count: int, winners: list[CardRef]) -> int:
            # Paper cards stake their whole price; a virtual card its chosen percentage.
            split = split_prize(amount, [game.stake_pcts.get(ref, 100) for ref in winners])
            seq = first_seq + len(entries)  # the prize_paid record; postings follow all records
            moves = [
                Posting.transfer(cents, debit=source, credit=payee(ref), reason=f"prize:{prize}",
                                 reference=Reference(game.game_id, ref.label, seq))
                for ref, cents in zip(winners, split.payments)
                if cents
            ]
            entries.append(
                (
                    "prize_paid",
                    {
                        "game_id": game.game_id,
                        "prize": prize,
                        "ball_count": ball_count,
                        "amount_cents": amount,
                        "carry_cents": split.carry,
                        "payments": [[ref.label, cents] for ref, cents in zip(winners, split.payments)],
                        "desk": desk,
                    },
                )
            )
            for posting in moves:
                post(posting)
            return split.carry

        def move(amount: int, debit: str, credit: str, reason: str) -> None:
            if amount:
                post(Posting.transfer(amount, debit=debit, credit=credit, reason=reason,
                                      reference=Reference(game.game_id, None, first_seq)))

        settlement = game.settlement
        assert settlement is not None, "a prize is won only after the sale closed"
        stakes = stakes_account(game.game_id)
        for pattern in due:
            won = machine.won[pattern]
            winners = sorted(won.cards)
            carry_in = settlement.carry_line_cents if pattern == "line" else settlement.carry_bingo_cents
            amount = settlement.line_cents if pattern == "line" else settlement.bingo_cents
            # The carry joins this game's collection, and what the split leaves goes back (R88.5).
            move(carry_in, CARRY[pattern], stakes, f"carry:{pattern}:in")
            left = pay(pattern, amount, stakes, won.ball_count, winners)
            move(left, stakes, CARRY[pattern], f"carry:{pattern}:out")
            if pattern == "bingo":
                self._pay_pots(game, won.ball_count, winners, pay, move, balance)
        self.ledger.check(postings)
        return [*entries, *posting_entries(postings)]

    def _pay_pots(
        self,
        game: Game,
        ball: int,
        winners: list[CardRef],
        pay: Callable[[str, int, str, int, list[CardRef]], int],
        move: Callable[[int, str, str, str], None],
        balance: Callable[[str], int],
    ) -> None:
        """The pots the bingo wins, in the audit replay's order (steps 8-11); unpaid cents stay."""
        if game.superbingo_limit is not None and ball <= game.superbingo_limit:
            pay("superbingo", balance(SUPERBINGO), SUPERBINGO, ball, winners)
        if game.grand_superbingo_limit is not None and ball <= game.grand_superbingo_limit:
            pay("grand_superbingo", balance(GRAND_SUPERBINGO), GRAND_SUPERBINGO, ball, winners)
        if game.megabingo_cents is not None:
            pay("megabingo", game.megabingo_cents, MEGABINGO, ball, winners)
        if game.jackpot_threshold is not None and ball <= game.jackpot_threshold:
            stayed = pay("jackpot", balance(JACKPOT), JACKPOT, ball, winners)
            # Then the reserve tops up the accumulated jackpot (R91).
            move(reserve_transfer(balance(RESERVE), stayed), RESERVE, JACKPOT, "jackpot:reserve transfer")
        if game.last_game:
            # The day's last superbingo game unwon: its fund goes to this bingo (R89).
            superbingo_games = [
                g for g in self.state.games
                if g.session == game.session and g.superbingo_limit is not None and g.machine.state is not State.REFUNDED
            ]
            if superbingo_games and superbingo_games[-1] is not game:
                unwon = superbingo_games[-1].superbingo_won is False
            else:
                unwon = game.superbingo_limit is not None and ball > game.superbingo_limit
            if unwon:
                pay("superbingo_last_game", balance(SUPERBINGO), SUPERBINGO, ball, winners)

    def closing_refusal(self) -> str | None:
        """Why the session may not close yet, or None (R89, R93.15).

        A game under way is finished first.  A superbingo fund left unwon by the
        session's last superbingo game belongs to the bingo of the session's last game:
        the session closes only once that game, announced as the last, was played.
        """
        current = self.state.current
        if current is not None and not current.over:
            return (
                f"game {current.game_id} is under way ({describe(current.machine.state)}); "
                "finish it before the session closes"
            )
        session = self.session.state.current
        if session is None:
            return None
        games = [g for g in self.state.games if g.session == session.number and g.machine.state is not State.REFUNDED]
        if any(g.last_game and g.over for g in games):
            return None
        superbingo_games = [g for g in games if g.superbingo_limit is not None]
        fund = self.ledger.balance(SUPERBINGO)
        if superbingo_games and superbingo_games[-1].superbingo_won is False and fund > 0:
            return (
                f"the superbingo of game {superbingo_games[-1].game_id} was not won, and its fund of "
                f"{format_cents(fund)} goes to the bingo of the session's last game (R89): announce a game as "
                "the last (R93.15) and play it before the session closes"
            )
        return None

    def _nothing_due(self, game: Game) -> str:
        won = game.machine.won
        if game.machine.state is State.REFUNDED:
            return f"game {game.game_id} was refunded; it has no prize to pay"
        if game.over:
            return f"every prize of game {game.game_id} has been paid"
        if "bingo" in won:
            return "the bingo and its pots are paid once the game is closed"
        if "line" in won and "line" not in game.paid:
            return "the line is paid once the next ball is drawn (other cards may still share it) or the game ends"
        if "line" in game.paid:
            return "the line is paid; the bingo is paid once it is won and the game is closed"
        return f"no prize has been won in game {game.game_id} yet"

    # --- The end ------------------------------------------------------------------------

    def _settle(self, game: Game, ended: Event) -> list[Entry]:
        """The game's end with its house share and tax (R98), both posted."""
        settlement = game.settlement
        assert settlement is not None
        reference = Reference(game.game_id, None, self.core.seq + 1)
        postings = []
        if settlement.house_cents:
            postings.append(Posting.transfer(settlement.house_cents, debit=stakes_account(game.game_id),
                                             credit="house", reason="house:share", reference=reference))
        if settlement.tax_cents:
            postings.append(Posting.transfer(settlement.tax_cents, debit="house", credit="tax",
                                             reason="tax:bingo", reference=reference))
        self.ledger.check(postings)
        return [
            _entry(ended, house_cents=settlement.house_cents, tax_cents=settlement.tax_cents,
                   tax_base_cents=settlement.sales_cents),
            *posting_entries(postings),
        ]

    def close_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Close the game once the bingo and the claims are verified (R85)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            (closed,) = machine.close()
            entries = self._settle(game, closed)
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return self.core.execute(actor, "close_game", decide)

    def finish_game(self, actor: Actor) -> Deferred[list[Record]]:
        """End a game finished by hand once its bingo is verified (R86.2)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            (finished,) = machine.finish(finished_by=actor.name)
            entries = self._settle(game, finished)
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return self.core.execute(actor, "finish_game", decide)

    def collect_cards(self, actor: Actor) -> Deferred[list[Record]]:
        """The game's cards are collected: the next sale may open (R82.4)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            if not game.over:
                raise GameModuleError(
                    f"game {game.game_id}'s cards are collected once it has ended, not {describe(game.machine.state)}"
                )
            if due := self.unpaid(game):
                raise GameModuleError(f"pay the {' and '.join(due)} of game {game.game_id} before collecting its cards")
            return [("cards_collected", {"game_id": game.game_id, "cards": len(game.machine.sales)})]

        return self.core.execute(actor, "collect_cards", decide)

    # --- Failures (R86) ------------------------------------------------------------------

    def suspend_game(self, actor: Actor, reason: str) -> Deferred[list[Record]]:
        """Suspend the game on a failure of the installation, machines or software (R86.1)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            (suspended,) = _fork(game.machine).report_failure(_text(reason, "what failed"))
            return [_entry(suspended)]

        return self.core.execute(actor, "suspend_game", decide)

    def resume_game(self, actor: Actor) -> Deferred[list[Record]]:
        """The failure is resolved: the game goes on where it stopped."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            (resumed,) = _fork(game.machine).resolve_failure()
            return [_entry(resumed)]

        return self.core.execute(actor, "resume_game", decide)

    def suspend_game_for_good(self, actor: Actor, reason: str) -> Deferred[list[Record]]:
        """Unresolved after a reasonable time (R86.2): refund when no prize was won, else finish by hand."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            entries = [_entry(e) for e in machine.give_up(_text(reason, "why the game cannot go on"))]
            if machine.won:
                entries += [_entry(e) for e in machine.finish_by_hand(authorised_by=actor.name)]
                return entries
            entries += [_entry(e) for e in machine.refund()]
            refund_seq = self.core.seq + len(entries)
            # The pots give back what the close set aside, then every stake goes home.
            back = []
            if game.settlement is not None and game.settlement.contributions:
                contributions = game.settlement.contributions
                back.append(
                    Posting(
                        tuple(Leg(pot, cents) for pot, cents in contributions.items()),
                        (Leg(stakes_account(game.game_id), sum(contributions.values())),),
                        "pots:contribution returned",
                        Reference(game.game_id, None, refund_seq),
                    )
                )
            # The whole ledger, not the game's postings alone: a virtual card's stake came
            # from a player's account funded outside the game, which a ledger of the
            # game's postings would see overdrawn (every refund of a game with one failed).
            scratch = Ledger(self.ledger.ledger.postings)
            scratch.post_all(back)
            refunds = refund_game(scratch, machine.sales.values(), game.game_id, refund_seq)
            self.ledger.check([*back, *refunds])
            return [*entries, *posting_entries([*back, *refunds])]

        return self.core.execute(actor, "suspend_game_for_good", decide)

    # --- Projection ----------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        p = record.payload
        state = self.state
        kind = record.type
        if kind == "sale_opened" and "card_set" in p:  # a paper game of this hall, not a relayed one
            opened = _event_of(record)
            assert isinstance(opened, SaleOpened)
            machine = TraditionalGame(opened.game_id)
            feed(machine, opened)
            series = Series(opened.series, p["card_set"], opened.price_cents, p["card_count"], opened.first_card - 1)
            # Only this session's games matter from now on (numbering, the last superbingo
            # game, the last game): earlier sessions' games, all collected, are let go.
            state.games = [g for g in state.games if g.session == p["session"]]
            state.games.append(
                Game(
                    game_id=opened.game_id,
                    session=p["session"],
                    number=p["game_number"],
                    machine=machine,
                    sale=GameSale.open(series, previous_game_collected=True),
                    card_set=p["card_set"],
                )
            )
            return
        if kind == "megabingo_announced":
            state.megabingo = {k: p[k] for k in ("date", "time", "amount_cents", "announced_on")}
            return
        if kind == "operator_contribution":
            if p["pot"] == "jackpot":
                state.operator_jackpot[p["month"]] = state.operator_jackpot.get(p["month"], 0) + p["amount_cents"]
            else:
                state.operator_superbingo[p["date"]] = state.operator_superbingo.get(p["date"], 0) + p["amount_cents"]
            return
        game = state.current
        if game is None or p.get("game_id") != game.game_id:
            return  # not a record of the game under way: another module's
        if kind == "paper_cards_sold":
            game.sale.sell(p["series"], p["first"], p["last"], p["seller"])
            state.last_sold[p["series"]] = max(state.last_sold.get(p["series"], 0), p["last"])
        elif kind == "second_series_opened":
            game.sale.add_second_series(Series(p["series"], p["card_set"], p["face_value_cents"], p["card_count"]))
        elif kind == "pots_announced":
            game.superbingo_limit = p["superbingo_limit"]
            game.grand_superbingo_limit = p["grand_superbingo_limit"]
            game.jackpot_threshold = p["jackpot_threshold"]
            game.megabingo_cents = p["megabingo_cents"]
        elif kind == "last_game_announced":
            game.last_game = True
        elif kind == "prize_paid":
            game.paid[p["prize"]] = PrizePaid(
                p["prize"], p["ball_count"], p["amount_cents"], p["carry_cents"],
                tuple((label, cents) for label, cents in p["payments"]), p["desk"],
            )
            if p["prize"] == "megabingo":
                state.megabingo = None  # played
        elif kind == "cards_collected":
            game.collected = True
            game.detector = None  # the draw is over: free the per-card counters
        elif kind in EVENT_TYPES:
            event = _event_of(record)
            feed(game.machine, event)
            if isinstance(event, CardSold) and "stake_pct" in p:
                game.stake_pcts[CardRef(event.series, event.card_number)] = p["stake_pct"]
            elif isinstance(event, SaleClosed):
                self._sale_closed(game, p)
            elif isinstance(event, BallDrawn):
                assert game.detector is not None
                game.detector.ball_drawn(event.ball)
            elif isinstance(event, BallVoided):
                assert game.detector is not None
                game.detector.last_ball_voided()
                source = self._source
                if source is not None and source.drawn and source.drawn[-1] == event.ball:
                    source.put_back(event.ball)  # the ball goes back into the chamber

    def _sale_closed(self, game: Game, p: Mapping[str, Any]) -> None:
        game.sale.close()
        game.settlement = Settlement(
            sales_cents=p["collection_cents"],
            line_cents=p["line_cents"],
            bingo_cents=p["bingo_cents"],
            carry_line_cents=p["carry_line_cents"],
            carry_bingo_cents=p["carry_bingo_cents"],
            contributions=dict(p["contributions"]),
            house_cents=p["house_cents"],
            tax_cents=p["tax_cents"],
        )
        game.refs = tuple(sorted(game.machine.in_play))
        game.detector = WinDetector(self._cells(game))
        self._source = None  # a new draw: the next ball comes from a fresh source

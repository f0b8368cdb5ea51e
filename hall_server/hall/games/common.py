"""What every part of the hall game shares: its errors, the ledger accounts of its pots, the
helpers that make the declared journal records of domain events and postings, and
:class:`GamesBase`, the state and queries the command mixins of
:class:`~hall_server.hall.games.module.GamesModule` work on."""

from __future__ import annotations

import abc
import dataclasses
import datetime
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np
from twisted.internet.defer import Deferred, DeferredLock

from hall_server.hall.catalog import CardCatalog, CatalogError
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.session import Session, SessionModule
from protocol.balls import BallSource
from protocol.cards import CELLS, Card
from protocol.claims import CardRef
from protocol.errors import N_, DomainError, Template
from protocol.events import Event
from protocol.game import State, TraditionalGame
from protocol.records import REGISTRY, EventRecord, JournalRecord
from protocol.sale import Series
from protocol.settlement import POT_ACCOUNTS, Pots, PrizeRules
from server_kit.core import Actor, CommandCore

if TYPE_CHECKING:
    from hall_server.hall.games.state import Game, GamesState


#: Ledger accounts of the carries and pots (protocol/ledger.py's scheme).
CARRY = {"line": POT_ACCOUNTS["carry_line"], "bingo": POT_ACCOUNTS["carry_bingo"]}
SUPERBINGO = POT_ACCOUNTS["superbingo"]
GRAND_SUPERBINGO = POT_ACCOUNTS["grand_superbingo"]
MEGABINGO = POT_ACCOUNTS["megabingo"]
JACKPOT = POT_ACCOUNTS["jackpot_accumulated"]
RESERVE = POT_ACCOUNTS["jackpot_reserve"]


class DeferredBallSource(Protocol):
    """A :class:`BallSource` whose ``draw()`` answers later: the ball blower, whose ball
    is known once its reader has read it (``hall_server/blower/source.py``)."""

    @property
    def drawn(self) -> tuple[int, ...]: ...

    def draw(self) -> Deferred[int]: ...

    reads_balls: bool

    def correct(self, misread: int, ball: int) -> None: ...


class CashDesks(Protocol):
    """Where the hall's cash payments come from: the cashier's open desks (``hall_server/hall/cashier.py``)."""

    #: What of a drawer's cash must stay in it: the games add the stakes of the game under way.
    drawer_holds: list[Callable[[str], tuple[int, str]]]

    def paying_drawer(self, desk: object, actor: Actor | None = None) -> str:
        """The ledger account of ``desk`` if it is an open cash desk ``actor`` may pay from; a domain error otherwise."""
        ...


#: Given the balls already drawn in the current game, the source of the next ones.
BallSourceFactory = Callable[[Sequence[int]], "BallSource | DeferredBallSource"]


class GameModuleError(DomainError):
    """A game command refused; the message says why and what to do."""


# --- Helpers ----------------------------------------------------------------------------


#: The refusal of a value that is not a whole number, a catalog sentence for each value's name.
_NOT_WHOLE: dict[str, Template] = {
    "a series": N_("a series is a whole number, not {value!r}"),
    "a card number": N_("a card number is a whole number, not {value!r}"),
    "a ball": N_("a ball is a whole number, not {value!r}"),
    "the ball announced": N_("the ball announced is a whole number, not {value!r}"),
    "the ball read again": N_("the ball read again is a whole number, not {value!r}"),
    "a virtual series number": N_("a virtual series number is a whole number, not {value!r}"),
    "a superbingo ball limit": N_("a superbingo ball limit is a whole number, not {value!r}"),
    "a grand superbingo ball limit": N_("a grand superbingo ball limit is a whole number, not {value!r}"),
    "a jackpot threshold": N_("a jackpot threshold is a whole number, not {value!r}"),
    "the line's boost in cents": N_("the line's boost in cents is a whole number, not {value!r}"),
    "the bingo's boost in cents": N_("the bingo's boost in cents is a whole number, not {value!r}"),
    "an amount in cents": N_("an amount in cents is a whole number, not {value!r}"),
}

#: The refusal of a reason or a name left empty, a catalog sentence for each.
_NOT_SAID: dict[str, Template] = {
    "what failed": N_("say what failed; it goes into the record"),
    "why the game cannot go on": N_("say why the game cannot go on; it goes into the record"),
    "why the card is refused": N_("say why the card is refused; it goes into the record"),
    "why the ball is corrected": N_("say why the ball is corrected; it goes into the record"),
    "the megabingo's time": N_("say the megabingo's time; it goes into the record"),
    "which cash desk pays": N_("say which cash desk pays; it goes into the record"),
    "the name on the identity document": N_("say the name on the identity document; it goes into the record"),
}


def _whole(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if what in _NOT_WHOLE:
            raise GameModuleError(_NOT_WHOLE[what], value=value)
        raise GameModuleError(f"{what} is a whole number, not {value!r}")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        if what in _NOT_SAID:
            raise GameModuleError(_NOT_SAID[what])
        raise GameModuleError(f"say {what}; it goes into the record")
    return value.strip()


def _retold(error: DomainError) -> GameModuleError:
    """``error`` of another module as the game's refusal: the same English text, and its catalog template
    when it has one (so that the console says it in its reader's language)."""
    if error.template is not None:
        return GameModuleError(error.template, **error.template_params)
    return GameModuleError(str(error))


#: The declared record of each domain event (protocol.records): the event, and what consoles need besides.
_RECORDS: dict[type[Event], type[EventRecord]] = {
    cls.event_class(): cls for cls in REGISTRY.values() if issubclass(cls, EventRecord)
}


def recorded(event: Event, **extra: Any) -> JournalRecord:
    """The declared record of a domain event, with ``extra`` (what consoles need besides)."""
    fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}  # type: ignore[arg-type]
    return _RECORDS[type(event)](**fields, **extra)


def close_open_prizes(machine: TraditionalGame, actor: Actor) -> list[JournalRecord]:
    """While a game is finished by hand, the room chief's next step - the next ball entered,
    the game finished - closes the prize found on the ball before (R85.6, R86.2)."""
    if not machine.open_prizes:
        return []
    return [recorded(e) for e in machine.close_prizes(closed_by=actor.name)]


def _session_date(session: Session) -> datetime.date:
    try:
        return datetime.date.fromisoformat(session.date)
    except ValueError:
        raise GameModuleError(
            N_("the session's date {date!r} is not a YYYY-MM-DD date; pot rules count days by it"), date=session.date
        ) from None


class GamesBase(abc.ABC):
    """The attributes and queries every part of :class:`~hall_server.hall.games.module.GamesModule` uses."""

    core: CommandCore
    session: SessionModule
    ledger: LedgerModule
    catalog: CardCatalog
    ball_sources: BallSourceFactory
    rules: PrizeRules
    desks: CashDesks | None
    state: "GamesState"
    virtual_series: dict[int, np.ndarray]
    sale_checks: list[Callable[[], str | None]]
    resume_checks: list[Callable[[], str | None]]
    _source: BallSource | DeferredBallSource | None
    _draw_turn: DeferredLock

    # --- Queries ------------------------------------------------------------------------

    @property
    def current(self) -> Game | None:
        return self.state.current

    def require_game(self) -> Game:
        game = self.state.current
        if game is None:
            raise GameModuleError(N_("no game is under way; announce a sale first"))
        return game

    def last_sold(self, series: Series) -> int:
        """The last card of ``series`` sold: by the journal, or before it by the catalog."""
        return max(series.last_sold, self.state.last_sold.get(series.number, 0))

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
                N_("series {series} is a paper series; a virtual series needs a number of its own (R82.9)"),
                series=number,
            )
        self.virtual_series[number] = np.asarray(layouts, dtype=np.uint8)

    def is_virtual(self, ref: CardRef) -> bool:
        return ref.series in self.virtual_series

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

    def card_in_play(self, game: Game, ref: CardRef) -> Card | None:
        """The layout of card ``ref`` if it is in play in ``game``, else ``None``."""
        if ref not in game.refs:
            return None
        row = np.array([ref.number - 1], dtype=np.int64)
        if ref.series in self.virtual_series:
            cells = self.virtual_series[ref.series][row]
        else:
            cells = self.catalog.layouts(game.card_set)[row]
        return Card.from_cells(int(n) for n in cells[0])

    def unpaid(self, game: Game) -> list[str]:
        """Prizes won in an ended game and not paid yet."""
        if not game.over:
            return []
        return [p for p in ("line", "bingo") if p in game.machine.won and p not in game.paid]

    def boosted_in_session(self, session: int, *, besides: Game) -> int:
        """What the session's games other than ``besides`` took from the jackpot's reserve (R91.7).

        A game counts once its sale closed with the boost; a refunded game gave it back.
        """
        return sum(
            g.settlement.boost_cents for g in self.state.games
            if g.session == session and g is not besides and g.settlement is not None
            and g.machine.state is not State.REFUNDED
        )

    def pots(self) -> Pots:
        """The carries and pots as the ledger holds them now."""
        return Pots.from_accounts({account: self.ledger.balance(account) for account in POT_ACCOUNTS.values()})

    @abc.abstractmethod
    def _auto_payments(self, game: Game, machine: TraditionalGame, before: int) -> list[JournalRecord]:
        """The prizes due that only virtual cards won, credited in the same decision (payments.py)."""

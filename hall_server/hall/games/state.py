"""The hall game's state as the journal tells it, and how records rebuild it.

:class:`GamesState` holds the session's games; each :class:`Game` its lifecycle machine
(:class:`protocol.game.TraditionalGame`), its paper sale, what its sale's close fixed
(:class:`Settlement`) and the prizes paid (their ``prize_paid`` records).  :func:`feed`
takes a domain event into a machine; the ``_fork`` helpers copy what a decision may
change, so a refused command leaves the live state untouched."""

from __future__ import annotations

import copy
from collections import ChainMap
import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

import numpy as np

from protocol.cards import Card
from protocol.claims import CardRef, ClaimVerdict, Win
from protocol.events import (
    BallCorrected,
    BallDrawn,
    BallVoided,
    CardRefused,
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
    PrizeClosed,
    PrizeWon,
    SaleClosed,
    SaleOpened,
    TerminalFailed,
)
from protocol.game import FINAL_STATES, TraditionalGame
from protocol.records.game import BallCorrectionSigned
from protocol.records.prizes import MegabingoAnnounced, PrizePaid
from protocol.sale import GameSale
from protocol.settlement import OperatorJackpot, superbingo_won
from protocol.wins import WinDetector


@dataclass(frozen=True)
class Settlement:
    """What the sale's close announced and set aside (R85, R88, R89-R91, R98), as its ``sale_closed``
    record holds it: the figures :func:`protocol.settlement.close_sale` fixed."""

    sales_cents: int
    line_cents: int  # line prize, its carry included
    bingo_cents: int
    carry_line_cents: int  # the carries taken from earlier games
    carry_bingo_cents: int
    contributions: Mapping[str, int]  # pot account -> cents set aside at the close
    house_cents: int
    tax_cents: int
    boost_cents: int = 0  # what the jackpot's reserve added to the line and bingo (R91.7)


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
    #: What the jackpot's reserve adds to the line and the bingo, as announced (R91.7).
    boost_line_cents: int = 0
    boost_bingo_cents: int = 0
    last_game: bool = False
    settlement: Settlement | None = None
    refs: tuple[CardRef, ...] = ()  # the cards in play, in the detector's order
    detector: WinDetector | None = None
    paid: dict[str, PrizePaid] = field(default_factory=dict)  # by prize: its record
    collected: bool = False
    #: The stakes of failed terminals' cards the house refunded after the sale's close (R96.3):
    #: they were not played, so they leave the tax base (R98).
    refunded_after_close_cents: int = 0
    #: Virtual cards sold at a stake below their price: their stake in percent (R88.4-5).
    #: A card not listed stakes its whole price, as every paper card does.
    stake_pcts: dict[CardRef, int] = field(default_factory=dict)
    #: The sequence number of the last claim record (won, rejected, refused): the wait before
    #: a prize found closes by itself runs from it (R85.6).
    pause_mark: int | None = None
    #: A correction of the last ball one chief signed (R85.5); it lapses when a card is claimed.
    correction: BallCorrectionSigned | None = None
    #: Paper cards whose winner showed an identity document (R75.6): card label -> (the identity record, the document).
    identified: dict[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def over(self) -> bool:
        return self.machine.state in FINAL_STATES

    @property
    def superbingo_won(self) -> bool | None:
        """Whether the superbingo in play was won; None when none was in play or not yet known."""
        if "bingo" not in self.paid:
            return None
        return superbingo_won(self.superbingo_limit, self.paid["bingo"].ball_count)


@dataclass
class GamesState:
    games: list[Game] = field(default_factory=list)
    last_sold: dict[int, int] = field(default_factory=dict)  # series -> last card sold
    megabingo: MegabingoAnnounced | None = None  # the announced megabingo not yet played
    operator_superbingo: dict[str, int] = field(default_factory=dict)  # session date -> cents
    operator_jackpot: dict[str, int] = field(default_factory=dict)  # "YYYY-MM" -> cents
    #: The jackpot's reserve when each session opened (session number -> cents): 30% of it
    #: is what the session may add to its prizes (R91.7).
    reserve_at_session_start: dict[int, int] = field(default_factory=dict)
    #: The operator's jackpot contributions players have not won, oldest first: what it may take back (R91.9).
    jackpot_contributions: OperatorJackpot = field(default_factory=OperatorJackpot)

    @property
    def current(self) -> Game | None:
        """The game under way or waiting for its cards to be collected."""
        if self.games and not self.games[-1].collected:
            return self.games[-1]
        return None


def let_go_of_cards(game: Game) -> None:
    """A game whose cards are collected keeps only what the session still asks of it.

    Once collected a game is never the one under way again: what the rest of the session
    reads of it is its number, whether it was refunded or the session's last, its
    settlement and its prizes (the superbingo's outcome, the reserve's boosts, the close).
    Its cards sold, their stakes, its sale's ranges, its machine's steps and its detector
    are the journal's to keep (the records hold every one): held in memory for every
    game of a long session, they grew the hall by megabytes an hour and each checkpoint
    by as much.  Replay lets go of them at the same record, so a hall restarted from its
    journal or from a checkpoint holds exactly what it held.
    """
    game.detector = None
    game.refs = ()
    game.stake_pcts = {}
    game.sale = dataclasses.replace(game.sale, sold=[])
    machine = game.machine
    machine.sales = {}
    machine.steps = []


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


def _fork(machine: TraditionalGame) -> TraditionalGame:
    """A copy of the machine a decision may advance without touching the live one.

    Events are frozen, so only the containers are copied: cheap even with thousands of
    cards sold, which a deep copy would not be.
    """
    clone = _fork_small(machine)
    clone.steps = list(machine.steps)
    clone.sales = dict(machine.sales)
    return clone


def _fork_small(machine: TraditionalGame) -> TraditionalGame:
    """A copy of the machine with its own small containers (failed terminals, prizes won and
    refused, balls drawn); the steps and the sales are the caller's to give it."""
    clone = copy.copy(machine)
    clone.failed_terminals = set(machine.failed_terminals)
    clone.won = dict(machine.won)
    clone.refused = dict(machine.refused)
    clone._drawn = list(machine._drawn)
    return clone


def fork_to_sell(machine: TraditionalGame) -> TraditionalGame:
    """A copy of the machine that a purchase's decision may sell cards on, as cheap as the purchase.

    :func:`_fork` copies the steps and the sales, which grow with every card sold: a burst of
    purchases, each decided on its own copy, would copy them again for each.  Selling reads
    neither the steps nor more of the sales than whether a card is sold; so this copy starts
    its steps afresh and keeps its own sales in front of the live machine's (a
    :class:`~collections.ChainMap`: a card sold here is seen here only).  It is only for
    deciding sales, and is dropped once they are decided.
    """
    clone = _fork_small(machine)
    clone.steps = []
    clone.sales = ChainMap({}, machine.sales)  # type: ignore[assignment]
    return clone


def _fork_sale(sale: GameSale) -> GameSale:
    return dataclasses.replace(sale, windows=list(sale.windows), sold=list(sale.sold))


#: Where a journal written before the claim pause (R85.6) went on with no ``prize_closed``.
_MOVED_ON = (BallDrawn, GameClosed, GameFinished)
#: Who closed such a prize, as the fold says.
_OLDER_JOURNAL = "(the next step: a journal written before the claim pause)"


def feed(machine: TraditionalGame, event: Event) -> None:
    """Take the transition ``event`` records: how the journal rebuilds a game."""
    if isinstance(event, _MOVED_ON) and machine.open_prizes:
        # A journal written before the claim pause closed a prize by drawing on or closing the
        # game: that step closed it (the hall server today records prize_closed first).
        machine.close_prizes(closed_by=_OLDER_JOURNAL)
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
    elif isinstance(event, BallCorrected):
        machine.correct_ball(event.misread, event.ball, reason=event.reason, signed_by=event.signed_by)
    elif isinstance(event, PrizeClosed):
        machine.close_prizes(closed_by=event.closed_by)
    elif isinstance(event, CardRefused):
        machine.refuse_card(CardRef(event.series, event.card_number), reason=event.reason,
                            refused_by=event.refused_by)
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

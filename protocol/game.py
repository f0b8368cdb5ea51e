"""Game lifecycles as state machines with a transition table (R85, R86, R93.9-13, R94.2).

:class:`TraditionalGame` - the hall game with paper and virtual cards (R85, R86).
A line or a bingo found stops the draw while the caller asks for another card
(``line_found``, ``bingo_found``); the prize closes (R85.6), then the draw goes on for
the bingo, or the game is closed.  The game across halls is the central server's
(:mod:`central_server.domain.game`: a million cards, decision records, refusals, force
majeure), with its own table of phases.

The machine is a table, ``(state, input) -> (new state, events emitted)``:
:data:`TRADITIONAL_TABLE`.  States are nouns
(``selling``, ``drawing``), inputs are what happened (``ball_drawn``,
``sale_closed``), outputs are the domain events of :mod:`protocol.events`, which the
server journals before it announces or pays anything.  A pair that is not in the
table is refused with :class:`InvalidTransition`, whose message a caller can show
("cannot draw a ball while the sale is open"), and changes nothing.

Questions such as "is this claim a winner?" or "is this the game's last prize?" are
answered by pure functions (:mod:`protocol.claims`, :mod:`protocol.patterns`,
:func:`settlement_after_failure`); the machine then receives the input that says the
answer.  A method also checks what the table cannot express (a ball drawn twice, a
card sold twice, a refund after a prize) and refuses it with :class:`GameError`.

The machines are pure: no clock (times come in as arguments, in milliseconds on the
caller's clock), no I/O, no randomness.  A suspended game remembers the state it left
and resumes there: in the tables that target is written :data:`SUSPENDED_FROM`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import ClassVar, Final, Mapping, Sequence

from protocol.balls import check_recall
from protocol.cards import BALLS
from protocol.claims import CardRef, ClaimVerdict, WonPattern
from protocol.errors import N_, DomainError, Template
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
from protocol.ledger import LedgerError, account_kind
from protocol.patterns import BINGO, LINE, TRADITIONAL_PATTERNS, GamePatterns


class GameError(DomainError):
    """An input the game refuses; the message says why."""


class InvalidTransition(GameError):
    """An input the game's current state does not accept."""


class State(StrEnum):
    """Where a game stands."""

    SCHEDULED = "scheduled"
    SELLING = "selling"
    SALE_CLOSED = "sale_closed"
    DRAWING = "drawing"
    LINE_FOUND = "line_found"
    LINE_WON = "line_won"
    BINGO_FOUND = "bingo_found"
    BINGO_WON = "bingo_won"
    CLOSED = "closed"
    SUSPENDED = "suspended"
    SUSPENDED_FOR_GOOD = "suspended_for_good"
    REFUNDED = "refunded"
    FINISHING_BY_HAND = "finishing_by_hand"
    WON_BY_HAND = "won_by_hand"
    FINISHED = "finished"


class Input(StrEnum):
    """What can happen to a game."""

    SALE_OPENED = "sale_opened"
    CARD_SOLD = "card_sold"
    SALE_CLOSED = "sale_closed"
    BALL_DRAWN = "ball_drawn"
    BALL_VOIDED = "ball_voided"
    BALL_CORRECTED = "ball_corrected"
    LINE_VERIFIED = "line_verified"
    BINGO_VERIFIED = "bingo_verified"
    CLAIM_REJECTED = "claim_rejected"
    CARD_REFUSED = "card_refused"
    PRIZE_CLOSED = "prize_closed"
    GAME_CLOSED = "game_closed"
    TERMINAL_FAILED = "terminal_failed"
    FAILURE_REPORTED = "failure_reported"
    FAILURE_RESOLVED = "failure_resolved"
    FAILURE_UNRESOLVED = "failure_unresolved"
    REFUND_DUE = "refund_due"
    MANUAL_FINISH_DUE = "manual_finish_due"
    BALL_ENTERED = "ball_entered"
    GAME_FINISHED = "game_finished"


#: The target of ``failure_resolved``: the state the game was suspended in.
SUSPENDED_FROM: Final = "(the state it was suspended in)"

Target = State | str
Table = Mapping[tuple[State, Input], tuple[Target, tuple[type[Event], ...]]]

S, I = State, Input

#: The traditional hall game (R85, R86).  A line or bingo found (a paper card verified, a
#: virtual card on its ball) opens its prize: ``line_found`` / ``bingo_found`` take no ball
#: while the caller asks for another card; ``prize_closed`` closes every prize open (R85.6).
#: While a game is finished by hand the room chief closes a prize by entering the next ball
#: or finishing the game (the hall server feeds ``prize_closed`` first).  ``ball_voided``
#: is only read from journals written before a drawn ball stopped going back to the draw;
#: a misread ball is corrected (``ball_corrected``, R85.5).
TRADITIONAL_TABLE: Table = {
    (S.SCHEDULED, I.SALE_OPENED): (S.SELLING, (SaleOpened,)),
    (S.SELLING, I.CARD_SOLD): (S.SELLING, (CardSold,)),
    (S.SELLING, I.TERMINAL_FAILED): (S.SELLING, (TerminalFailed,)),
    (S.SELLING, I.SALE_CLOSED): (S.SALE_CLOSED, (SaleClosed,)),
    (S.SELLING, I.FAILURE_REPORTED): (S.SUSPENDED, (GameSuspended,)),
    (S.SALE_CLOSED, I.BALL_DRAWN): (S.DRAWING, (BallDrawn,)),
    (S.SALE_CLOSED, I.TERMINAL_FAILED): (S.SALE_CLOSED, (TerminalFailed,)),
    (S.SALE_CLOSED, I.FAILURE_REPORTED): (S.SUSPENDED, (GameSuspended,)),
    (S.DRAWING, I.BALL_DRAWN): (S.DRAWING, (BallDrawn,)),
    (S.DRAWING, I.BALL_VOIDED): (S.DRAWING, (BallVoided,)),
    (S.DRAWING, I.BALL_CORRECTED): (S.DRAWING, (BallCorrected,)),
    (S.DRAWING, I.LINE_VERIFIED): (S.LINE_FOUND, (PrizeWon,)),
    (S.DRAWING, I.BINGO_VERIFIED): (S.BINGO_FOUND, (PrizeWon,)),
    (S.DRAWING, I.CLAIM_REJECTED): (S.DRAWING, (ClaimRejected,)),
    (S.DRAWING, I.CARD_REFUSED): (S.DRAWING, (CardRefused,)),
    (S.DRAWING, I.TERMINAL_FAILED): (S.DRAWING, (TerminalFailed,)),
    (S.DRAWING, I.FAILURE_REPORTED): (S.SUSPENDED, (GameSuspended,)),
    (S.LINE_FOUND, I.LINE_VERIFIED): (S.LINE_FOUND, (PrizeWon,)),
    (S.LINE_FOUND, I.BINGO_VERIFIED): (S.BINGO_FOUND, (PrizeWon,)),
    (S.LINE_FOUND, I.CLAIM_REJECTED): (S.LINE_FOUND, (ClaimRejected,)),
    (S.LINE_FOUND, I.CARD_REFUSED): (S.LINE_FOUND, (CardRefused,)),
    (S.LINE_FOUND, I.PRIZE_CLOSED): (S.LINE_WON, (PrizeClosed,)),
    (S.LINE_FOUND, I.TERMINAL_FAILED): (S.LINE_FOUND, (TerminalFailed,)),
    (S.LINE_FOUND, I.FAILURE_REPORTED): (S.SUSPENDED, (GameSuspended,)),
    (S.LINE_WON, I.BALL_DRAWN): (S.LINE_WON, (BallDrawn,)),
    (S.LINE_WON, I.BALL_VOIDED): (S.LINE_WON, (BallVoided,)),
    (S.LINE_WON, I.BALL_CORRECTED): (S.LINE_WON, (BallCorrected,)),
    (S.LINE_WON, I.BINGO_VERIFIED): (S.BINGO_FOUND, (PrizeWon,)),
    (S.LINE_WON, I.CLAIM_REJECTED): (S.LINE_WON, (ClaimRejected,)),
    (S.LINE_WON, I.CARD_REFUSED): (S.LINE_WON, (CardRefused,)),
    (S.LINE_WON, I.TERMINAL_FAILED): (S.LINE_WON, (TerminalFailed,)),
    (S.LINE_WON, I.FAILURE_REPORTED): (S.SUSPENDED, (GameSuspended,)),
    (S.BINGO_FOUND, I.LINE_VERIFIED): (S.BINGO_FOUND, (PrizeWon,)),
    (S.BINGO_FOUND, I.BINGO_VERIFIED): (S.BINGO_FOUND, (PrizeWon,)),
    (S.BINGO_FOUND, I.CLAIM_REJECTED): (S.BINGO_FOUND, (ClaimRejected,)),
    (S.BINGO_FOUND, I.CARD_REFUSED): (S.BINGO_FOUND, (CardRefused,)),
    (S.BINGO_FOUND, I.PRIZE_CLOSED): (S.BINGO_WON, (PrizeClosed,)),
    (S.BINGO_WON, I.CLAIM_REJECTED): (S.BINGO_WON, (ClaimRejected,)),
    (S.BINGO_WON, I.CARD_REFUSED): (S.BINGO_WON, (CardRefused,)),
    (S.BINGO_WON, I.GAME_CLOSED): (S.CLOSED, (GameClosed,)),
    (S.SUSPENDED, I.FAILURE_RESOLVED): (SUSPENDED_FROM, (GameResumed,)),
    (S.SUSPENDED, I.FAILURE_UNRESOLVED): (S.SUSPENDED_FOR_GOOD, (GameSuspendedForGood,)),
    (S.SUSPENDED_FOR_GOOD, I.REFUND_DUE): (S.REFUNDED, (GameRefunded,)),
    (S.SUSPENDED_FOR_GOOD, I.MANUAL_FINISH_DUE): (S.FINISHING_BY_HAND, (ManualFinishStarted,)),
    (S.FINISHING_BY_HAND, I.BALL_ENTERED): (S.FINISHING_BY_HAND, (BallDrawn,)),
    (S.FINISHING_BY_HAND, I.BALL_VOIDED): (S.FINISHING_BY_HAND, (BallVoided,)),
    (S.FINISHING_BY_HAND, I.LINE_VERIFIED): (S.FINISHING_BY_HAND, (PrizeWon,)),
    (S.FINISHING_BY_HAND, I.BINGO_VERIFIED): (S.WON_BY_HAND, (PrizeWon,)),
    (S.FINISHING_BY_HAND, I.CLAIM_REJECTED): (S.FINISHING_BY_HAND, (ClaimRejected,)),
    (S.FINISHING_BY_HAND, I.CARD_REFUSED): (S.FINISHING_BY_HAND, (CardRefused,)),
    (S.FINISHING_BY_HAND, I.PRIZE_CLOSED): (S.FINISHING_BY_HAND, (PrizeClosed,)),
    (S.WON_BY_HAND, I.LINE_VERIFIED): (S.WON_BY_HAND, (PrizeWon,)),
    (S.WON_BY_HAND, I.BINGO_VERIFIED): (S.WON_BY_HAND, (PrizeWon,)),
    (S.WON_BY_HAND, I.CLAIM_REJECTED): (S.WON_BY_HAND, (ClaimRejected,)),
    (S.WON_BY_HAND, I.CARD_REFUSED): (S.WON_BY_HAND, (CardRefused,)),
    (S.WON_BY_HAND, I.PRIZE_CLOSED): (S.WON_BY_HAND, (PrizeClosed,)),
    (S.WON_BY_HAND, I.GAME_FINISHED): (S.FINISHED, (GameFinished,)),
}

#: States a game never leaves.
FINAL_STATES: Final = frozenset({S.CLOSED, S.REFUNDED, S.FINISHED})

# How refusals read: "cannot <input> <state>".
_DOING: dict[Input, Template] = {
    I.SALE_OPENED: N_("open the sale"),
    I.CARD_SOLD: N_("sell a card"),
    I.SALE_CLOSED: N_("close the sale"),
    I.BALL_DRAWN: N_("draw a ball"),
    I.BALL_VOIDED: N_("void a ball"),
    I.BALL_CORRECTED: N_("correct a ball"),
    I.LINE_VERIFIED: N_("award the line"),
    I.BINGO_VERIFIED: N_("award the bingo"),
    I.CLAIM_REJECTED: N_("verify a claim"),
    I.CARD_REFUSED: N_("refuse a card"),
    I.PRIZE_CLOSED: N_("close a prize"),
    I.GAME_CLOSED: N_("close the game"),
    I.TERMINAL_FAILED: N_("take a failed terminal's cards out of the game"),
    I.FAILURE_REPORTED: N_("suspend the game"),
    I.FAILURE_RESOLVED: N_("resume the game"),
    I.FAILURE_UNRESOLVED: N_("suspend the game for good"),
    I.REFUND_DUE: N_("refund the game"),
    I.MANUAL_FINISH_DUE: N_("start finishing the game by hand"),
    I.BALL_ENTERED: N_("enter a ball by hand"),
    I.GAME_FINISHED: N_("finish the game"),
}
_WHILE: dict[State, Template] = {
    S.SCHEDULED: N_("before the sale has opened"),
    S.SELLING: N_("while the sale is open"),
    S.SALE_CLOSED: N_("before the first ball"),
    S.DRAWING: N_("while balls are being drawn"),
    S.LINE_FOUND: N_("while the line is open (\"Line! Another card?\"): the caller closes the prize first"),
    S.LINE_WON: N_("while drawing for the bingo"),
    S.BINGO_FOUND: N_("while the bingo is open (\"Bingo! Another card?\"): the caller closes the prize first"),
    S.BINGO_WON: N_("once the bingo is won"),
    S.CLOSED: N_("once the game is closed"),
    S.SUSPENDED: N_("while the game is suspended"),
    S.SUSPENDED_FOR_GOOD: N_("once the game is suspended for good"),
    S.REFUNDED: N_("once the game is refunded"),
    S.FINISHING_BY_HAND: N_("while the game is being finished by hand"),
    S.WON_BY_HAND: N_("once the game's last prize is won by hand"),
    S.FINISHED: N_("once the game is finished"),
}


def describe(state: State) -> Template:
    """How a refusal names ``state`` (``while the sale is open``): a template of the catalogs, which an
    edge says in its reader's language when it fills a refusal's ``{when}`` (``protocol.errors.fill``)."""
    return _WHILE[state]


def settlement_after_failure(won: Mapping[str, WonPattern]) -> Input:
    """What a game suspended for good comes to (R86.2).

    No prize won yet: the stakes are refunded.  A prize already won: the game is
    finished by hand, impartially, by an authorised person.
    """
    return I.MANUAL_FINISH_DUE if won else I.REFUND_DUE


@dataclass(frozen=True)
class Step:
    """One transition taken: the audit trail of the machine."""

    before: State
    input: Input
    after: State


class GameMachine:
    """The part both games share: sale, draw, recall, failures; the table decides."""

    table: ClassVar[Table]

    def __init__(self, game_id: str, patterns: GamePatterns) -> None:
        if not isinstance(game_id, str) or not game_id:
            raise GameError("a game needs an id")
        self.game_id = game_id
        self.patterns = patterns
        self.state = S.SCHEDULED
        self.steps: list[Step] = []
        self.price_cents = 0
        self.closes_at_ms: int | None = None
        self.sales: dict[CardRef, CardSold] = {}
        self.failed_terminals: set[str] = set()
        self.won: dict[str, WonPattern] = {}
        #: Cards the table chief refused as invalid, with the reason (R82.8).
        self.refused: dict[CardRef, str] = {}
        #: How many balls were drawn when a card was last claimed, refused or found winning
        #: (0: none yet): a ball claimed on is corrected no more (R85.5).
        self.claimed_at = 0
        self.suspended_from: State | None = None
        self._drawn: list[int] = []

    # --- What the game knows ------------------------------------------------------

    @property
    def drawn(self) -> tuple[int, ...]:
        """The balls drawn so far, in order, voided ones removed."""
        return tuple(self._drawn)

    @property
    def in_play(self) -> frozenset[CardRef]:
        """Cards sold in this game and not taken out with a failed terminal."""
        return frozenset(
            ref for ref, sale in self.sales.items() if sale.terminal_id not in self.failed_terminals
        )

    def accepts(self, input: Input) -> bool:
        """Whether the table has a transition for ``input`` from the current state."""
        return (self.state, input) in self.table

    # --- The machinery ------------------------------------------------------------

    def _check(self, input: Input) -> None:
        if (self.state, input) not in self.table:
            raise InvalidTransition(N_("cannot {doing} {when}"), doing=_DOING[input], when=_WHILE[self.state])

    def _fire(self, input: Input, event: Event) -> Event:
        """Take the table's transition for ``input``, emitting ``event``."""
        self._check(input)
        target, effects = self.table[(self.state, input)]
        if effects != (type(event),):
            raise TypeError(f"{input} emits {effects}, not {type(event).__name__}")  # a bug
        if target == SUSPENDED_FROM:
            assert self.suspended_from is not None
            after = self.suspended_from
        else:
            after = State(target)
        self.steps.append(Step(self.state, input, after))
        self.state = after
        return event

    # --- The sale -----------------------------------------------------------------

    def open_sale(
        self, *, series: int, first_card: int, price_cents: int, closes_at_ms: int | None = None
    ) -> list[Event]:
        """Announce the series, the price and the first card on sale (R85, R93.1)."""
        self._check(I.SALE_OPENED)
        if isinstance(price_cents, bool) or not isinstance(price_cents, int) or price_cents <= 0:
            raise GameError(f"a card's price is a positive number of cents, not {price_cents!r}")
        event = SaleOpened(
            self.game_id, series, first_card, price_cents, self.patterns.names, closes_at_ms
        )
        self._fire(I.SALE_OPENED, event)
        self.price_cents = price_cents
        self.closes_at_ms = closes_at_ms
        return [event]

    def sell_card(
        self,
        *,
        series: int,
        card_number: int,
        stake_cents: int,
        account: str,
        terminal_id: str | None = None,
        at_ms: int | None = None,
    ) -> list[Event]:
        """Sell one card; ``stake_cents`` up to the price (R82.15), from ``account``."""
        self._check(I.CARD_SOLD)
        ref = CardRef(series, card_number)
        if ref in self.sales:
            raise GameError(f"card {ref} is already sold in this game")
        if isinstance(stake_cents, bool) or not isinstance(stake_cents, int):
            raise GameError(f"a stake is a whole number of cents, not {stake_cents!r}")
        if not 0 < stake_cents <= self.price_cents:
            raise GameError(
                f"a stake is more than nothing and at most the card's price "
                f"({self.price_cents} cents), not {stake_cents}"
            )
        try:
            account_kind(account)
        except LedgerError as error:
            raise GameError(str(error)) from error
        if account.partition(":")[0] not in ("player", "cash"):
            raise GameError(f"a card is paid from a player's account or a cash desk, not {account}")
        if terminal_id is not None and terminal_id in self.failed_terminals:
            raise GameError(
                f"terminal {terminal_id} has failed and stays disconnected until it is repaired "
                "and checked"
            )
        if self.closes_at_ms is not None:
            if at_ms is None:
                raise GameError("this sale has a closing time; give the time of the purchase")
            if at_ms >= self.closes_at_ms:
                raise GameError("the sale time is over; no card can be bought any more")
        event = CardSold(
            self.game_id, series, card_number, self.price_cents, stake_cents, account, terminal_id
        )
        self._fire(I.CARD_SOLD, event)
        self.sales[ref] = event
        return [event]

    def close_sale(self) -> list[Event]:
        """Close the sale; announce the cards sold and the collection (R82.16, R85)."""
        self._check(I.SALE_CLOSED)
        live = [self.sales[ref] for ref in self.in_play]
        event = SaleClosed(self.game_id, len(live), sum(s.stake_cents for s in live))
        return [self._fire(I.SALE_CLOSED, event)]

    def terminal_failed(self, terminal_id: str) -> list[Event]:
        """A terminal failed: its cards leave the game, to be refunded (R96.3)."""
        self._check(I.TERMINAL_FAILED)
        if terminal_id in self.failed_terminals:
            raise GameError(f"terminal {terminal_id} has already failed in this game")
        event = self._fire(I.TERMINAL_FAILED, TerminalFailed(self.game_id, terminal_id))
        self.failed_terminals.add(terminal_id)
        return [event]

    # --- The draw -----------------------------------------------------------------

    def _check_ball(self, ball: int) -> None:
        if isinstance(ball, bool) or not isinstance(ball, int) or not 1 <= ball <= BALLS:
            raise GameError(f"a ball is a number from 1 to {BALLS}, not {ball!r}")
        if ball in self._drawn:
            raise GameError(f"{ball} has already been drawn, as ball {self._drawn.index(ball) + 1}")

    def draw_ball(self, ball: int) -> list[Event]:
        """The next ball from the blower or the generator (R85.5)."""
        self._check(I.BALL_DRAWN)
        self._check_ball(ball)
        event = BallDrawn(self.game_id, ball, len(self._drawn) + 1)
        self._fire(I.BALL_DRAWN, event)
        self._drawn.append(ball)
        return [event]

    def enter_ball(self, ball: int, *, entered_by: str) -> list[Event]:
        """A ball entered by the authorised person finishing the game by hand (R86.2)."""
        self._check(I.BALL_ENTERED)
        self._check_ball(ball)
        if not entered_by:
            raise GameError("say who enters the ball")
        event = BallDrawn(self.game_id, ball, len(self._drawn) + 1, entered_by)
        self._fire(I.BALL_ENTERED, event)
        self._drawn.append(ball)
        return [event]

    def void_ball(self, ball: int, *, voided_by: str, role: str, reason: str) -> list[Event]:
        """Take back the last ball, as journals written before the ruling of R85.5 record it.

        Nothing takes a ball back any more (a drawn ball never returns to the draw); a
        misread ball of the hall game is corrected (:meth:`TraditionalGame.correct_ball`).
        """
        self._check(I.BALL_VOIDED)
        check_recall(self._drawn, ball, role, reason)
        count = len(self._drawn)
        for name, won in self.won.items():
            if won.ball_count == count:
                raise GameError(
                    f"the {name.replace('_', ' ')} was won on this ball; a prize already "
                    "verified cannot be undone by voiding its ball"
                )
        event = BallVoided(self.game_id, ball, count, voided_by, role, reason)
        self._fire(I.BALL_VOIDED, event)
        self._drawn.pop()
        return [event]

    # --- Prizes -------------------------------------------------------------------

    def _check_win(self, ref: CardRef, pattern: str, ball_count: int) -> None:
        if ref not in self.sales:
            raise GameError(f"card {ref} was not sold in this game")
        if ref not in self.in_play:
            raise GameError(f"card {ref} was refunded with its failed terminal")
        if ref in self.refused:
            raise GameError(f"card {ref} was refused as invalid: {self.refused[ref]}")
        if not 1 <= ball_count <= len(self._drawn):
            raise GameError(f"ball {ball_count} has not been drawn")
        earlier = self.won.get(pattern)
        if earlier is not None:
            if ref in earlier.cards:
                raise GameError(f"card {ref} has already won the {pattern.replace('_', ' ')}")
            if earlier.ball_count != ball_count:
                raise GameError(
                    f"the {pattern.replace('_', ' ')} was won on ball {earlier.ball_count}; only "
                    "cards completing it on that ball share it"
                )
            if earlier.closed:
                raise GameError(f"the {pattern.replace('_', ' ')} is closed; no other card shares it")

    def _award(self, input: Input, ref: CardRef, pattern: str, ball_count: int) -> Event:
        event = PrizeWon(self.game_id, pattern, ref.series, ref.number, ball_count)
        self._fire(input, event)
        earlier = self.won.get(pattern)
        cards = (earlier.cards if earlier else frozenset()) | {ref}
        self.won[pattern] = WonPattern(ball_count, cards)
        return event

    # --- Failures (R86) -----------------------------------------------------------

    def report_failure(self, reason: str) -> list[Event]:
        """Suspend the game on a failure; it remembers where it stopped (R86.1)."""
        self._check(I.FAILURE_REPORTED)
        before = self.state
        event = self._fire(I.FAILURE_REPORTED, GameSuspended(self.game_id, before, reason))
        self.suspended_from = before
        return [event]

    def resolve_failure(self) -> list[Event]:
        """The failure is fixed: back to the state the game was suspended in."""
        self._check(I.FAILURE_RESOLVED)
        assert self.suspended_from is not None
        event = self._fire(I.FAILURE_RESOLVED, GameResumed(self.game_id, self.suspended_from))
        self.suspended_from = None
        return [event]

    def give_up(self, reason: str) -> list[Event]:
        """Unresolved after a reasonable time: the game is suspended for good (R86.2)."""
        self._check(I.FAILURE_UNRESOLVED)
        return [self._fire(I.FAILURE_UNRESOLVED, GameSuspendedForGood(self.game_id, reason))]

    def refund(self) -> list[Event]:
        """No prize was won: every stake is returned (R86.2); see :mod:`protocol.settlement.refunds`."""
        self._check(I.REFUND_DUE)
        if settlement_after_failure(self.won) is not I.REFUND_DUE:
            raise GameError("a prize has been won, so the game is finished by hand, not refunded")
        return [self._fire(I.REFUND_DUE, GameRefunded(self.game_id))]

    def finish_by_hand(self, *, authorised_by: str) -> list[Event]:
        """A prize was won: ``authorised_by`` finishes the game by hand (R86.2)."""
        self._check(I.MANUAL_FINISH_DUE)
        if settlement_after_failure(self.won) is not I.MANUAL_FINISH_DUE:
            raise GameError("no prize has been won, so the stakes are refunded instead")
        if not authorised_by:
            raise GameError("say who is authorised to finish the game")
        return [self._fire(I.MANUAL_FINISH_DUE, ManualFinishStarted(self.game_id, authorised_by))]

    # --- The end ------------------------------------------------------------------

    def close(self) -> list[Event]:
        """Every winning card is verified: the game is closed (R85)."""
        return [self._fire(I.GAME_CLOSED, GameClosed(self.game_id))]

    def finish(self, *, finished_by: str) -> list[Event]:
        """The game finished by hand is over."""
        self._check(I.GAME_FINISHED)
        if not finished_by:
            raise GameError("say who finished the game")
        return [self._fire(I.GAME_FINISHED, GameFinished(self.game_id, finished_by))]


class TraditionalGame(GameMachine):
    """The hall game (R85, R86): claims are called, verified, then fed in."""

    table = TRADITIONAL_TABLE

    def __init__(self, game_id: str) -> None:
        super().__init__(game_id, TRADITIONAL_PATTERNS)

    @property
    def open_prizes(self) -> tuple[str, ...]:
        """The patterns found whose prize is still open to other cards (R85.6), in pattern order."""
        return tuple(name for name in self.patterns.names if name in self.won and not self.won[name].closed)

    def _check_closed(self, doing: str) -> None:
        if open := self.open_prizes:
            names = " and the ".join(open)
            raise GameError(f"the {names} found on ball {self.won[open[0]].ball_count} is open; close it before {doing}")

    def enter_ball(self, ball: int, *, entered_by: str) -> list[Event]:
        self._check(I.BALL_ENTERED)
        self._check_closed("the next ball is entered")
        return super().enter_ball(ball, entered_by=entered_by)

    def finish(self, *, finished_by: str) -> list[Event]:
        self._check(I.GAME_FINISHED)
        self._check_closed("the game is finished")
        return super().finish(finished_by=finished_by)

    def close_prizes(self, *, closed_by: str) -> list[Event]:
        """Close every prize found and still open: no other card shares it (R85.6).

        The caller does it after asking for another card, or the hall server once the
        configured wait passed with no new claim; while a game is finished by hand, the
        room chief, before entering the next ball or finishing the game.
        """
        self._check(I.PRIZE_CLOSED)
        closing = self.open_prizes
        if not closing:
            raise GameError("no prize is open; there is nothing to close")
        if not closed_by:
            raise GameError("say who closes the prize")
        event = self._fire(I.PRIZE_CLOSED, PrizeClosed(self.game_id, closing, len(self._drawn), closed_by))
        for name in closing:
            self.won[name] = replace(self.won[name], closed=True)
        return [event]

    def correct_ball(self, misread: int, corrected: int, *, reason: str, signed_by: Sequence[str]) -> list[Event]:
        """The last ball, announced as ``misread``, is ``corrected`` (R85.5).

        The announced number is replaced; the misread number was never drawn.  Only the
        last ball, only before any claim on it or any card found winning on it, with the
        reason and the two chiefs' signatures.
        """
        self.check_correction(misread, corrected)
        count = len(self._drawn)
        if not reason.strip():
            raise GameError("say why the ball is corrected; the reason goes into the record")
        if len(signed_by) != 2 or len(set(signed_by)) != 2 or not all(signed_by):
            raise GameError("a correction is signed by two staff members: the room chief and the table chief")
        event = BallCorrected(self.game_id, misread, corrected, count, reason.strip(), tuple(signed_by))
        self._fire(I.BALL_CORRECTED, event)
        self._drawn[-1] = corrected
        return [event]

    def check_correction(self, misread: int, corrected: int) -> None:
        """Raise :class:`GameError` unless the last ball, ``misread``, may now be corrected to ``corrected``."""
        self._check(I.BALL_CORRECTED)
        if not self._drawn:
            raise GameError("no ball has been drawn; there is nothing to correct")
        count = len(self._drawn)
        if misread != self._drawn[-1]:
            if misread in self._drawn:
                raise GameError(f"only the last ball ({self._drawn[-1]}) can be corrected, not {misread}")
            raise GameError(f"{misread!r} has not been drawn in this game; the last ball is {self._drawn[-1]}")
        if isinstance(corrected, bool) or not isinstance(corrected, int) or not 1 <= corrected <= BALLS:
            raise GameError(f"the ball read again is a number from 1 to {BALLS}, not {corrected!r}")
        if corrected == misread:
            raise GameError(f"ball {count} was announced as {misread}: a correction names another number")
        if corrected in self._drawn:
            raise GameError(f"{corrected} has already been drawn, as ball {self._drawn.index(corrected) + 1}")
        if self.claimed_at == count:
            raise GameError(
                f"a card was claimed or found winning on ball {count} ({misread}): the announced number stands"
            )

    def refuse_card(self, ref: CardRef, *, reason: str, refused_by: str) -> list[Event]:
        """The table chief refuses claimed card ``ref`` as invalid, with the reason (R82.8).

        A card verified as a winner stands: the card is looked at before it is verified.
        """
        self._check(I.CARD_REFUSED)
        if ref not in self.sales:
            raise GameError(f"card {ref} was not sold in this game")
        if ref not in self.in_play:
            raise GameError(f"card {ref} was refunded with its failed terminal")
        if ref in self.refused:
            raise GameError(f"card {ref} is already refused: {self.refused[ref]}")
        for name, won in self.won.items():
            if ref in won.cards:
                raise GameError(f"card {ref} was verified as winning the {name}; a verified card stands")
        if not reason.strip():
            raise GameError("say why the card is refused (tampered, damaged, not the card sold); "
                            "the reason goes into the record")
        if not refused_by:
            raise GameError("say who refuses the card")
        event = CardRefused(self.game_id, ref.series, ref.number, reason.strip(), refused_by)
        self._fire(I.CARD_REFUSED, event)
        self.refused[ref] = reason.strip()
        self.claimed_at = len(self._drawn)
        return [event]

    def claim_checked(self, verdict: ClaimVerdict) -> list[Event]:
        """Feed in a verdict of :func:`protocol.claims.check_claim` (R85.6, R85.11).

        A winning card becomes ``line_verified`` and/or ``bingo_verified`` (the line
        first when both fall on one ball), a losing one ``claim_rejected``.  All or
        nothing: if one of the inputs is refused, none is taken.
        """
        inputs = {LINE.name: I.LINE_VERIFIED, BINGO.name: I.BINGO_VERIFIED}
        for win in verdict.wins:
            if win.pattern not in inputs:
                raise GameError(f"the hall game plays the line and the bingo, not {win.pattern!r}")
        wins = sorted(verdict.wins, key=lambda w: self.patterns.names.index(w.pattern))
        self._check(inputs[wins[0].pattern] if wins else I.CLAIM_REJECTED)
        if verdict.checked_at != len(self._drawn):
            raise GameError(
                f"card {verdict.card} was checked after ball {verdict.checked_at}, but "
                f"{len(self._drawn)} balls are drawn now; check it again"
            )
        if not wins:
            event = ClaimRejected(
                self.game_id, verdict.card.series, verdict.card.number, verdict.reason or ""
            )
            self._fire(I.CLAIM_REJECTED, event)
            self.claimed_at = len(self._drawn)
            return [event]
        # Walk the table first so a refusal leaves the game untouched.
        state = self.state
        for win in wins:
            key = (state, inputs[win.pattern])
            if key not in self.table:
                raise InvalidTransition(N_("cannot {doing} {when}"), doing=_DOING[key[1]], when=_WHILE[state])
            self._check_win(verdict.card, win.pattern, win.ball_count)
            state = State(self.table[key][0])
        self.claimed_at = len(self._drawn)
        return [self._award(inputs[w.pattern], verdict.card, w.pattern, w.ball_count) for w in wins]


def render_table(table: Table) -> str:
    """The table as a Markdown table, as ``docs/game-engine.md`` shows it."""
    lines = ["| state | input | new state | emits |", "|---|---|---|---|"]
    for (state, input), (target, effects) in table.items():
        emits = ", ".join(e.type for e in effects)
        lines.append(f"| {state} | {input} | {target} | {emits} |")
    return "\n".join(lines)


__all__ = [
    "FINAL_STATES",
    "SUSPENDED_FROM",
    "TRADITIONAL_TABLE",
    "GameError",
    "GameMachine",
    "Input",
    "InvalidTransition",
    "State",
    "Step",
    "TraditionalGame",
    "describe",
    "render_table",
    "settlement_after_failure",
]

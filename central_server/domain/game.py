"""The network game as a state machine whose state is the fold of its events.

:class:`CentralGame` is one interconnected game with virtual cards across halls
(R92.1, R93, R94), from the opening of the sale to its close.  It is pure: no clock
(times come in as integer milliseconds on the caller's clock), no I/O, no randomness
(balls come in as numbers, or from an injected :class:`~protocol.balls.BallSource`).

Its lifecycle is :data:`TABLE`, ``(phase, input) -> (new phase, events emitted)``,
the shape of :data:`protocol.game.INTERCONNECTED_TABLE` with what a central server
adds (ordered purchase decisions, refusals, force majeure).  A command (``open_sale``,
``request_purchase``, ``draw_ball``...) checks what it is given, decides, and returns
the events to journal; the game's state changes only by :meth:`CentralGame.apply`,
one event at a time, so a server that restarts rebuilds every game exactly with
:meth:`CentralGame.replay` over its journal.  A command that raises has changed
nothing.  The server journals a command's events before it answers or announces
anything (DESIGN.md, "Announce after commit"); if that commit fails, it rebuilds the
game from the journal.

It is a machine of its own, not the hall's :class:`protocol.game.TraditionalGame`: that
machine records one ``card_sold`` and one step per card, which a million-card game cannot
afford, and stops at each prize.  The names of phases and inputs are the same where the
two agree.

Decisions the regulation leaves open are listed in ``docs/network-game.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Iterable, Mapping, Sequence

import numpy as np

from central_server.domain.config import NetworkGameConfig
from central_server.domain.detection import PatternDetector
from central_server.domain.errors import (
    BadArgument,
    DrawStarted,
    EventError,
    HallMismatch,
    NotNow,
    RequestIdReused,
    TerminalAlreadyFailed,
    UnknownHall,
)
from protocol import central_messages as wire
from protocol.balls import BallSource
from protocol.cards import BALLS
from protocol.central_messages import REFUSALS, CentralMessageError
from protocol.records.central import (
    CentralBallDrawn,
    CentralCardWon,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameScheduled,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralPurchaseRefused,
    CentralRecord,
    CentralSaleClosed,
    CentralSaleOpened,
    CentralStakeReturned,
    CentralTerminalFailed,
)
from protocol.settlement import BY_STAKE, share_by_stake, share_of_sales, split_prize, stake_cents


class Phase(StrEnum):
    """Where a network game stands."""

    SCHEDULED = "scheduled"
    SELLING = "selling"
    SALE_CLOSED = "sale_closed"
    DRAWING = "drawing"
    LAST_PRIZE_WON = "last_prize_won"
    CLOSED = "closed"
    NOT_PLAYED = "not_played"


class Input(StrEnum):
    """What can happen to a network game."""

    SALE_OPENED = "sale_opened"
    PURCHASE_CONFIRMED = "purchase_confirmed"
    PURCHASE_REFUSED = "purchase_refused"
    TERMINAL_FAILED = "terminal_failed"
    SALE_CLOSED = "sale_closed"
    BALL_DRAWN = "ball_drawn"
    PRIZE_WON = "prize_won"
    FINAL_PRIZE_WON = "final_prize_won"
    GAME_CLOSED = "game_closed"
    NOT_PLAYED = "not_played"


Table = Mapping[tuple[Phase, Input], tuple[Phase, tuple[type[CentralRecord], ...]]]
P, I = Phase, Input

_REFUND = (CentralTerminalFailed, CentralStakeReturned)
_PRIZE = (CentralPrizeWon, CentralCardWon)
_FORCE_MAJEURE = (CentralGameNotPlayed, CentralStakeReturned)

#: The network game (R93.1, R93.6, R93.8-13, R94.2, R96.2, R96.3).  A purchase is
#: decided in every phase: outside the sale it is refused, and the refusal is kept.
TABLE: Table = {
    (P.SCHEDULED, I.SALE_OPENED): (P.SELLING, (CentralSaleOpened,)),
    (P.SCHEDULED, I.PURCHASE_REFUSED): (P.SCHEDULED, (CentralPurchaseRefused,)),
    (P.SCHEDULED, I.NOT_PLAYED): (P.NOT_PLAYED, (CentralGameNotPlayed,)),
    (P.SELLING, I.PURCHASE_CONFIRMED): (P.SELLING, (CentralPurchaseConfirmed,)),
    (P.SELLING, I.PURCHASE_REFUSED): (P.SELLING, (CentralPurchaseRefused,)),
    (P.SELLING, I.TERMINAL_FAILED): (P.SELLING, _REFUND),
    (P.SELLING, I.SALE_CLOSED): (P.SALE_CLOSED, (CentralSaleClosed,)),
    (P.SELLING, I.NOT_PLAYED): (P.NOT_PLAYED, _FORCE_MAJEURE),
    (P.SALE_CLOSED, I.PURCHASE_REFUSED): (P.SALE_CLOSED, (CentralPurchaseRefused,)),
    (P.SALE_CLOSED, I.TERMINAL_FAILED): (P.SALE_CLOSED, _REFUND),
    (P.SALE_CLOSED, I.BALL_DRAWN): (P.DRAWING, (CentralBallDrawn,)),
    (P.SALE_CLOSED, I.GAME_CLOSED): (P.CLOSED, (CentralGameClosed,)),
    (P.SALE_CLOSED, I.NOT_PLAYED): (P.NOT_PLAYED, _FORCE_MAJEURE),
    (P.DRAWING, I.PURCHASE_REFUSED): (P.DRAWING, (CentralPurchaseRefused,)),
    (P.DRAWING, I.TERMINAL_FAILED): (P.DRAWING, _REFUND),
    (P.DRAWING, I.BALL_DRAWN): (P.DRAWING, (CentralBallDrawn,)),
    (P.DRAWING, I.PRIZE_WON): (P.DRAWING, _PRIZE),
    (P.DRAWING, I.FINAL_PRIZE_WON): (P.LAST_PRIZE_WON, _PRIZE),
    (P.DRAWING, I.GAME_CLOSED): (P.CLOSED, (CentralGameClosed,)),
    (P.DRAWING, I.NOT_PLAYED): (P.NOT_PLAYED, _FORCE_MAJEURE),
    (P.LAST_PRIZE_WON, I.PURCHASE_REFUSED): (P.LAST_PRIZE_WON, (CentralPurchaseRefused,)),
    (P.LAST_PRIZE_WON, I.GAME_CLOSED): (P.CLOSED, (CentralGameClosed,)),
    (P.CLOSED, I.PURCHASE_REFUSED): (P.CLOSED, (CentralPurchaseRefused,)),
    (P.NOT_PLAYED, I.PURCHASE_REFUSED): (P.NOT_PLAYED, (CentralPurchaseRefused,)),
}

#: Phases a game never leaves.
FINAL_PHASES: Final = frozenset({P.CLOSED, P.NOT_PLAYED})

#: Events that are part of the transition of the event before them (a refund's
#: stakes, a prize's cards), not transitions of their own.
DETAIL_EVENTS: Final = frozenset({CentralStakeReturned, CentralCardWon})

_DOING = {
    I.SALE_OPENED: "open the sale",
    I.PURCHASE_CONFIRMED: "assign cards",
    I.PURCHASE_REFUSED: "decide a purchase",
    I.TERMINAL_FAILED: "refund a failed terminal",
    I.SALE_CLOSED: "close the sale",
    I.BALL_DRAWN: "draw a ball",
    I.PRIZE_WON: "award a prize",
    I.FINAL_PRIZE_WON: "award the last prize",
    I.GAME_CLOSED: "close the game",
    I.NOT_PLAYED: "declare the game not played",
}
_WHILE = {
    P.SCHEDULED: "before the sale has opened",
    P.SELLING: "while the sale is open",
    P.SALE_CLOSED: "before the first ball",
    P.DRAWING: "while balls are being drawn",
    P.LAST_PRIZE_WON: "once the last prize is won",
    P.CLOSED: "once the game is closed",
    P.NOT_PLAYED: "once the game is declared not played",
}


def render_table(table: Table = TABLE) -> str:
    """The table as Markdown, as ``docs/network-game.md`` shows it."""
    lines = ["| phase | input | new phase | emits |", "|---|---|---|---|"]
    for (phase, input), (target, effects) in table.items():
        emits = ", ".join(e.type + _EACH.get(e, "") for e in effects)
        lines.append(f"| {phase} | {input} | {target} | {emits} |")
    return "\n".join(lines)


_EACH = {CentralStakeReturned: " (one per purchase refunded)", CentralCardWon: " (one per winning card)"}


def _input_of(event: CentralRecord) -> Input | None:
    """The table input an event realises; ``None`` for a detail event."""
    if isinstance(event, CentralPrizeWon):
        return I.FINAL_PRIZE_WON if event.final else I.PRIZE_WON
    return _INPUTS.get(type(event))


_INPUTS: dict[type[CentralRecord], Input] = {
    CentralSaleOpened: I.SALE_OPENED,
    CentralPurchaseConfirmed: I.PURCHASE_CONFIRMED,
    CentralPurchaseRefused: I.PURCHASE_REFUSED,
    CentralTerminalFailed: I.TERMINAL_FAILED,
    CentralSaleClosed: I.SALE_CLOSED,
    CentralBallDrawn: I.BALL_DRAWN,
    CentralGameClosed: I.GAME_CLOSED,
    CentralGameNotPlayed: I.NOT_PLAYED,
}


# --- Commands' arguments -------------------------------------------------------------


def _checked(kind: wire.FieldType, name: str, value: object) -> Any:
    try:
        return kind.check(name, value)
    except CentralMessageError as error:
        raise BadArgument(str(error)) from None


def _time(name: str, value: object) -> int:
    return int(_checked(wire.TIME_MS, name, value))


@dataclass(frozen=True)
class PurchaseRequest:
    """A terminal's purchase relayed by its hall (R93.6), as ``buy_cards`` carries it."""

    request_id: str
    hall_id: str
    terminal_id: str
    player_ref: str
    card_count: int
    stake_pct: int

    def __post_init__(self) -> None:
        for f in ("request_id", "hall_id", "terminal_id", "player_ref", "card_count", "stake_pct"):
            _checked(wire.BUY_CARDS.field(f).type, f, getattr(self, f))

    def same_as(self, decision: CentralPurchaseConfirmed | CentralPurchaseRefused) -> bool:
        """Whether ``decision`` answered this very request (a resend), not another one."""
        return (self.terminal_id, self.player_ref, self.card_count, self.stake_pct) == (
            decision.terminal_id, decision.player_ref, decision.card_count, decision.stake_pct,
        )  # fmt: skip


def refund_refusal(first_ball_at_ms: int | None, received_ms: int) -> str | None:
    """Why a terminal's failure received at ``received_ms`` refunds nothing, or None: it may.

    The R96.3 ruling: the refund covers that game's cards that have won nothing, once,
    from the house once the sale has closed, the prizes announced standing.  A refund
    asked once balls are known would let a player keep the cards' chances up to then and
    take back the stakes of the cards that turned out losing, at the house's cost, every
    game: so a failure counts only if it was declared before the first ball became known.
    A terminal that fails later loses its player nothing: its cards stay in play on the
    central server and their wins are credited to the account (a dropped connection is
    not a failure).
    """
    if first_ball_at_ms is None or received_ms < first_ball_at_ms:
        return None
    return ("its draw had started when the failure was declared; the terminal's cards stay in play, held by the "
            "central server, and their wins are credited to the player's account, but no stake is refunded "
            "once a ball is known (R96.3 ruling: declare a failure before the first ball)")


@dataclass(frozen=True)
class TerminalFailure:
    """The hall's staff declare one of its terminals failed (R96.3), as ``terminal_failed`` carries it."""

    request_id: str
    hall_id: str
    terminal_id: str
    reason: str
    declared_by: str

    def __post_init__(self) -> None:
        for f in ("request_id", "hall_id", "terminal_id", "reason", "declared_by"):
            _checked(wire.TERMINAL_FAILED.field(f).type, f, getattr(self, f))
        if not self.reason.strip():
            raise BadArgument("say why the terminal is declared failed; the reason goes into the record")

    def same_as(self, decision: CentralTerminalFailed) -> bool:
        return (self.terminal_id, self.reason, self.declared_by) == (
            decision.terminal_id, decision.reason, decision.declared_by,
        )  # fmt: skip


Decision = CentralPurchaseConfirmed | CentralPurchaseRefused | CentralTerminalFailed


@dataclass(frozen=True)
class Outcome:
    """What a hall's command came to: the events to journal and the decision to answer.

    ``repeated``: the request id was already decided; ``events`` is empty and
    ``decision`` is the first decision, answered again.
    """

    events: tuple[CentralRecord, ...]
    decision: Decision
    repeated: bool = False


@dataclass(frozen=True)
class Page:
    """A page of a paged list: at most ``limit`` items after the cursor, and whether more follow."""

    items: tuple[CentralRecord, ...]
    more: bool


# --- The game --------------------------------------------------------------------------


class CentralGame:
    """One network game; build it with :meth:`schedule` or :meth:`replay`."""

    def __init__(self, scheduled: CentralGameScheduled, layouts: np.ndarray) -> None:
        config = NetworkGameConfig.from_dict(scheduled.config)
        if config.game_id != scheduled.game_id:
            raise EventError(f"game {scheduled.game_id} was scheduled with the configuration of {config.game_id}")
        config.check_library(layouts)
        self.config = config
        self.game_id = config.game_id
        self._layouts = np.asarray(layouts, dtype=np.uint8)
        self._patterns = config.patterns
        self.phase = P.SCHEDULED
        self.events: list[CentralRecord] = [scheduled]
        self._detail_of: tuple[type[CentralRecord], ...] = ()  # details the last head allows
        # The sale.
        self.opened_at_ms: int | None = None
        self.closes_at_ms: int | None = None
        self._decisions: dict[tuple[str, str], Decision] = {}
        self.decision_count = 0
        self.purchases: list[CentralPurchaseConfirmed] = []
        self.next_card = config.first_card
        self._held: dict[tuple[str, str, str], int] = {}  # (hall, terminal, player) -> cards (R83.7)
        self._by_terminal: dict[tuple[str, str], list[int]] = {}  # -> purchase indices
        self._purchase_of: dict[tuple[str, str], int] = {}  # (hall, request id) -> purchase index
        self.failed_terminals: dict[tuple[str, str], CentralTerminalFailed] = {}
        self._refunded: dict[int, set[int]] = {}  # purchase index -> card numbers refunded
        # The close and the draw.
        self.sale: CentralSaleClosed | None = None
        self._detector: PatternDetector | None = None
        self._in_play: np.ndarray = np.empty(0, dtype=bool)  # per card index, after the close
        self._starts: np.ndarray = np.empty(0, dtype=np.int64)  # first card of each purchase
        self.balls: list[int] = []
        self.first_ball_at_ms: int | None = None  # when the first ball became known: no refund is declared after
        self.last_ball_at_ms: int | None = None
        self._found: dict[str, np.ndarray] = {}  # what the last ball completed
        self.prizes: dict[str, CentralPrizeWon] = {}
        self.winners: list[CentralCardWon] = []
        self._won_cards: set[int] = set()
        self._credits: dict[str, list[CentralStakeReturned | CentralCardWon]] = {hall: [] for hall in config.halls}
        self.carries: dict[str, int] | None = None

    # --- Building ---------------------------------------------------------------

    @classmethod
    def schedule(cls, config: NetworkGameConfig, layouts: np.ndarray) -> tuple["CentralGame", list[CentralRecord]]:
        """A new game set up with ``config`` over the series ``layouts``, and its first event."""
        config.check_library(layouts)
        event = CentralGameScheduled(game_id=config.game_id, config=config.to_dict())
        return cls(event, layouts), [event]

    @classmethod
    def replay(cls, events: Iterable[CentralRecord], layouts: np.ndarray) -> "CentralGame":
        """The game its journaled ``events`` describe (the first is ``CentralGameScheduled``)."""
        stream = iter(events)
        first = next(stream, None)
        if not isinstance(first, CentralGameScheduled):
            raise EventError("a network game's journal starts with central_game_scheduled")
        game = cls(first, layouts)
        for event in stream:
            game.apply(event)
        return game

    # --- The fold ---------------------------------------------------------------

    def apply(self, event: CentralRecord) -> None:
        """Take one journaled event: the only way the game's state changes."""
        if getattr(event, "game_id", None) != self.game_id:
            raise EventError(f"{event.type} belongs to game {getattr(event, 'game_id', None)}, not {self.game_id}")
        input = _input_of(event)
        if input is None:
            if type(event) not in self._detail_of:
                raise EventError(f"{event.type} does not follow the event it belongs to")
        else:
            key = (self.phase, input)
            if key not in TABLE:
                raise EventError(f"{event.type} cannot happen {_WHILE[self.phase]}")
            target, emits = TABLE[key]
            if type(event) is not emits[0]:
                raise EventError(f"{input} emits {emits[0].type}, not {event.type}")  # a bug
            self.phase = target
            self._detail_of = emits[1:]
        _APPLY[type(event)](self, event)
        self.events.append(event)

    def _apply_sale_opened(self, event: CentralSaleOpened) -> None:
        self.opened_at_ms = event.opened_at_ms
        self.closes_at_ms = event.closes_at_ms

    def _apply_decision(self, event: CentralPurchaseConfirmed | CentralPurchaseRefused) -> None:
        self._decisions[(event.hall_id, event.request_id)] = event
        self.decision_count = event.decision

    def _apply_confirmed(self, event: CentralPurchaseConfirmed) -> None:
        self._apply_decision(event)
        index = len(self.purchases)
        self.purchases.append(event)
        self.next_card = event.first_card + event.card_count
        holder = (event.hall_id, event.terminal_id, event.player_ref)
        self._held[holder] = self._held.get(holder, 0) + event.card_count
        self._by_terminal.setdefault((event.hall_id, event.terminal_id), []).append(index)
        self._purchase_of[(event.hall_id, event.request_id)] = index

    def _apply_terminal_failed(self, event: CentralTerminalFailed) -> None:
        self._decisions[(event.hall_id, event.request_id)] = event
        self.failed_terminals[(event.hall_id, event.terminal_id)] = event

    def _apply_stake_returned(self, event: CentralStakeReturned) -> None:
        index = self._purchase_index(event.hall_id, event.purchase_request_id)
        self._refunded.setdefault(index, set()).update(event.card_numbers)
        if self._detector is not None:
            first = self.config.first_card
            self._in_play[[n - first for n in event.card_numbers]] = False
        self._credits[event.hall_id].append(event)

    def _apply_sale_closed(self, event: CentralSaleClosed) -> None:
        self.sale = event
        first, assigned = self.config.first_card, self.next_card - self.config.first_card
        self._detector = PatternDetector(self._layouts[first - 1 : first - 1 + assigned], self._patterns)
        self._in_play = np.ones(assigned, dtype=bool)
        for cards in self._refunded.values():
            self._in_play[[n - first for n in cards]] = False
        self._starts = np.array([p.first_card for p in self.purchases], dtype=np.int64)

    def _apply_ball(self, event: CentralBallDrawn) -> None:
        assert self._detector is not None
        wanted = [name for name in self._patterns.names if name not in self.prizes]
        self._found = self._detector.ball_drawn(event.ball, wanted)
        self.balls.append(event.ball)
        if self.first_ball_at_ms is None:
            self.first_ball_at_ms = event.drawn_at_ms
        self.last_ball_at_ms = event.drawn_at_ms

    def _apply_prize(self, event: CentralPrizeWon) -> None:
        self.prizes[event.pattern] = event

    def _apply_card_won(self, event: CentralCardWon) -> None:
        self.winners.append(event)
        self._won_cards.add(event.card_number)
        self._credits[event.hall_id].append(event)

    def _apply_end(self, event: CentralGameClosed | CentralGameNotPlayed) -> None:
        self.carries = dict(event.carries)

    # --- What the game knows ----------------------------------------------------

    @property
    def cards_assigned(self) -> int:
        return self.next_card - self.config.first_card

    def card_cells(self, first_card: int, count: int) -> bytes:
        """The 27 cells (row by row, 0 a blank) of cards ``first_card``.. of the series, card after card.

        One byte a cell, as the protocol carries them (``WholeList`` of 0-90).
        """
        if first_card < 1 or count < 0 or first_card - 1 + count > len(self._layouts):
            raise ValueError(f"the series has no cards {first_card} to {first_card + count - 1}")
        return self._layouts[first_card - 1 : first_card - 1 + count].tobytes()

    @property
    def cards_left(self) -> int:
        """Cards of the series still free to assign in this game."""
        return self.config.series_cards - self.next_card + 1

    @property
    def cards_in_play(self) -> int:
        """Cards that can still win: assigned and not refunded."""
        if self._detector is not None:
            return int(self._in_play.sum())
        return self.cards_assigned - sum(len(c) for c in self._refunded.values())

    @property
    def refunded_cards(self) -> frozenset[int]:
        """Numbers of the cards whose stakes were returned (R96.2, R96.3)."""
        return frozenset(n for cards in self._refunded.values() for n in cards)

    def remaining_ms(self, now_ms: int) -> int | None:
        """Time left in the sale at ``now_ms``; ``None`` outside the sale."""
        if self.phase is not P.SELLING or self.closes_at_ms is None:
            return None
        return max(0, self.closes_at_ms - now_ms)

    @property
    def next_ball_due_ms(self) -> int | None:
        """When the next ball may be drawn: one interval after the close or the last ball."""
        if self.phase not in (P.SALE_CLOSED, P.DRAWING):
            return None
        assert self.sale is not None
        last = self.last_ball_at_ms if self.last_ball_at_ms is not None else self.sale.closed_at_ms
        return last + self.config.ball_interval_ms

    def decision_for(self, hall_id: str, request_id: str) -> Decision | None:
        """The first decision taken on ``request_id`` of ``hall_id``, if any."""
        return self._decisions.get((hall_id, request_id))

    def credits(self, hall_id: str, after: int = 0, limit: int = wire.PAGE_ITEMS) -> Page:
        """The hall's credits (prizes, stakes returned) numbered after ``after``."""
        items = self._credits[self.check_member(hall_id)]
        return Page(tuple(items[after : after + limit]), len(items) > after + limit)

    def credit_count(self, hall_id: str) -> int:
        return len(self._credits[self.check_member(hall_id)])

    def winners_page(self, after: int = 0, limit: int = wire.PAGE_ITEMS, pattern: str | None = None) -> Page:
        """The game's winning cards after winner ``after`` (of ``pattern`` only, if given)."""
        items = [w for w in self.winners[after:] if pattern is None or w.pattern == pattern]
        return Page(tuple(items[:limit]), len(items) > limit)

    def sales_by_hall(self) -> dict[str, tuple[int, int]]:
        """Per hall, its cards not refunded and their stakes in cents (every hall listed)."""
        totals = {hall: (0, 0) for hall in self.config.halls}
        for index, p in enumerate(self.purchases):
            kept = p.card_count - len(self._refunded.get(index, ()))
            cards, cents = totals[p.hall_id]
            totals[p.hall_id] = (cards + kept, cents + kept * p.stake_cents)
        return totals

    def rows_missing(self, card_number: int) -> tuple[int, ...]:
        """How many numbers each row of an assigned card still misses ("n to go", R93.10)."""
        if self._detector is None:
            raise NotNow("cards are marked once the sale has closed")
        index = card_number - self.config.first_card
        if not 0 <= index < self.cards_assigned:
            raise BadArgument(f"card {card_number} is not assigned in this game")
        return self._detector.rows_missing(index)

    def snapshot(self) -> dict[str, Any]:
        """Everything the game knows, as plain data: two games with equal snapshots are the same game."""
        return {
            "phase": str(self.phase),
            "config": self.config.to_dict(),
            "opened_at_ms": self.opened_at_ms,
            "closes_at_ms": self.closes_at_ms,
            "decisions": sorted((k, d.to_payload()) for k, d in self._decisions.items()),
            "decision_count": self.decision_count,
            "purchases": [p.to_payload() for p in self.purchases],
            "next_card": self.next_card,
            "held": sorted(self._held.items()),
            "failed_terminals": sorted(self.failed_terminals),
            "refunded": sorted((i, sorted(c)) for i, c in self._refunded.items()),
            "sale": self.sale.to_payload() if self.sale else None,
            "in_play": np.flatnonzero(self._in_play).tolist(),
            "balls": list(self.balls),
            "last_ball_at_ms": self.last_ball_at_ms,
            "prizes": {k: v.to_payload() for k, v in self.prizes.items()},
            "winners": [w.to_payload() for w in self.winners],
            "won_cards": sorted(self._won_cards),
            "credits": {h: [c.to_payload() for c in cs] for h, cs in self._credits.items()},
            "carries": self.carries,
        }

    # --- Checks shared by commands ----------------------------------------------

    def _check(self, input: Input) -> None:
        if (self.phase, input) not in TABLE:
            raise NotNow(f"cannot {_DOING[input]} {_WHILE[self.phase]}")

    def check_member(self, hall_id: object) -> str:
        """``hall_id`` if the hall takes part in this game, else :class:`UnknownHall`."""
        if not isinstance(hall_id, str) or hall_id not in self._credits:
            raise UnknownHall(f"hall {hall_id!r} does not take part in network game {self.game_id}")
        return hall_id

    def check_speaker(self, from_hall: str, hall_id: str) -> None:
        """``from_hall`` (the authenticated peer) may speak for ``hall_id`` only if they are one."""
        self.check_member(from_hall)
        if hall_id != from_hall:
            raise HallMismatch(
                f"hall {from_hall} may only speak for itself and its own terminals, not for hall {hall_id}"
            )

    def _purchase_index(self, hall_id: str, request_id: str) -> int:
        index = self._purchase_of.get((hall_id, request_id))
        if index is None:
            raise EventError(f"no confirmed purchase {request_id} of hall {hall_id}")
        return index

    def _emit(self, events: list[CentralRecord]) -> list[CentralRecord]:
        for event in events:
            self.apply(event)
        return events

    # --- The sale ---------------------------------------------------------------

    def open_sale(self, now_ms: int) -> list[CentralRecord]:
        """Open the sale for the configured window: terminals count down to its deadline (R93.1)."""
        self._check(I.SALE_OPENED)
        now = _time("now_ms", now_ms)
        return self._emit([CentralSaleOpened(game_id=self.game_id, opened_at_ms=now, closes_at_ms=now + self.config.sale_window_ms)])

    def _refusal(self, request: PurchaseRequest, now_ms: int, gate_open: bool = False) -> str | None:
        """Why ``request`` is refused at ``now_ms``, or ``None`` if it is confirmed; ``gate_open``: its hall's
        gate had not closed when it was received (its hall took it before the deadline)."""
        if self.phase is P.SCHEDULED:
            return "sale_not_open"
        if self.phase is P.NOT_PLAYED:
            return "not_played"
        if self.phase is not P.SELLING:
            return "sale_over"
        assert self.closes_at_ms is not None
        if now_ms >= self.closes_at_ms and not gate_open:
            return "sale_over"  # R93.8: nothing is assigned outside the sale time
        if (request.hall_id, request.terminal_id) in self.failed_terminals:
            return "terminal_failed"
        if stake_cents(self.config.price_cents, request.stake_pct) < 1:
            return "stake_too_small"
        held = self._held.get((request.hall_id, request.terminal_id, request.player_ref), 0)
        if held + request.card_count > wire.MAX_CARDS_PER_PLAYER:
            return "card_limit"
        if request.card_count > self.cards_left:
            return "series_exhausted"
        return None

    def _refusal_text(self, code: str, request: PurchaseRequest) -> str:
        if code == "card_limit":
            held = self._held.get((request.hall_id, request.terminal_id, request.player_ref), 0)
            return (
                f"{REFUSALS[code]} The player holds {held} on this terminal, so may buy "
                f"{wire.MAX_CARDS_PER_PLAYER - held} more."
            )
        if code == "series_exhausted":
            return f"Only {self.cards_left} card(s) are left in series {self.config.series_label}."
        return REFUSALS[code]

    def request_purchase(self, request: PurchaseRequest, *, from_hall: str, now_ms: int,
                         gate_open: bool = False) -> Outcome:
        """Decide ``request``, received at ``now_ms``, in the order received (R93.6, R93.8).

        ``gate_open``: received at or after the deadline, but from a hall whose gate had not closed
        (protocol version 3): decided on the sale while it is open here.

        ``from_hall`` is the hall the connection authenticated; it may only speak for
        itself.  A request id already decided gets its first decision back (and no new
        event); the same id with other arguments is refused with :class:`RequestIdReused`.
        """
        self.check_speaker(from_hall, request.hall_id)
        now = _time("now_ms", now_ms)
        earlier = self._decisions.get((request.hall_id, request.request_id))
        if earlier is not None:
            if isinstance(earlier, CentralTerminalFailed) or not request.same_as(earlier):
                raise RequestIdReused(
                    f"request {request.request_id} of hall {request.hall_id} was already used for "
                    "another request; the first one stands"
                )
            return Outcome((), earlier, repeated=True)
        decision = self.decision_count + 1
        code = self._refusal(request, now, gate_open)
        event: CentralPurchaseConfirmed | CentralPurchaseRefused
        if code is None:
            stake = stake_cents(self.config.price_cents, request.stake_pct)
            event = CentralPurchaseConfirmed(
                game_id=self.game_id, decision=decision, hall_id=request.hall_id, request_id=request.request_id,
                terminal_id=request.terminal_id, player_ref=request.player_ref, card_count=request.card_count,
                stake_pct=request.stake_pct, first_card=self.next_card, stake_cents=stake,
                amount_cents=stake * request.card_count, received_ms=now,
                at_gate=True if self.closes_at_ms is not None and now >= self.closes_at_ms else None,
            )  # fmt: skip
        else:
            event = CentralPurchaseRefused(
                game_id=self.game_id, decision=decision, hall_id=request.hall_id, request_id=request.request_id,
                terminal_id=request.terminal_id, player_ref=request.player_ref, card_count=request.card_count,
                stake_pct=request.stake_pct, refusal_code=code, refusal_text=self._refusal_text(code, request),
                received_ms=now,
            )  # fmt: skip
        self.apply(event)
        return Outcome((event,), event)

    def _unrefunded(self, index: int, *, unwon_only: bool) -> list[int]:
        purchase = self.purchases[index]
        refunded = self._refunded.get(index, set())
        return [
            n
            for n in range(purchase.first_card, purchase.first_card + purchase.card_count)
            if n not in refunded and not (unwon_only and n in self._won_cards)
        ]

    def _returns(
        self, indices: Sequence[int], cause: str, paid_by: str, *, unwon_only: bool
    ) -> list[CentralStakeReturned]:
        """One :class:`CentralStakeReturned` per purchase of ``indices`` with a card left to refund."""
        returns: list[CentralStakeReturned] = []
        numbered: dict[str, int] = {}
        for index in indices:
            cards = self._unrefunded(index, unwon_only=unwon_only)
            if not cards:
                continue
            p = self.purchases[index]
            seq = numbered.get(p.hall_id, len(self._credits[p.hall_id])) + 1
            numbered[p.hall_id] = seq
            returns.append(
                CentralStakeReturned(
                    game_id=self.game_id, hall_id=p.hall_id, credit_seq=seq, purchase_request_id=p.request_id,
                    terminal_id=p.terminal_id, player_ref=p.player_ref, card_numbers=tuple(cards),
                    amount_cents=len(cards) * p.stake_cents, paid_by=paid_by, cause=cause,
                )  # fmt: skip
            )
        return returns

    def declare_terminal_failed(self, failure: TerminalFailure, *, from_hall: str, now_ms: int) -> Outcome:
        """A terminal declared failed by its hall's staff (R96.3 and its ruling), received at ``now_ms``.

        That game's cards bought on it that have won nothing are refunded, once, and
        leave the game; the terminal buys nothing more in it.  Before the close the
        stakes come back out of the collection; after it the house pays, and the
        prizes announced stand.  A dropped connection is not a failure: only this
        declaration moves money.

        A declaration received once a ball of the game is known is refused
        (:func:`refund_refusal`): the cards stay in play, held by the central server,
        and their wins are credited.  One received before the first ball is decided as
        of then, even if balls came while it waited: the cards that won meanwhile keep
        their prizes and are not refunded.
        """
        self.check_speaker(from_hall, failure.hall_id)
        _time("now_ms", now_ms)
        earlier = self._decisions.get((failure.hall_id, failure.request_id))
        if earlier is not None:
            if not isinstance(earlier, CentralTerminalFailed) or not failure.same_as(earlier):
                raise RequestIdReused(
                    f"request {failure.request_id} of hall {failure.hall_id} was already used for "
                    "another request; the first one stands"
                )
            return Outcome((), earlier, repeated=True)
        self._check(I.TERMINAL_FAILED)
        refusal = refund_refusal(self.first_ball_at_ms, now_ms)
        if refusal is not None:
            raise DrawStarted(f"network game {self.game_id}: {refusal}")
        key = (failure.hall_id, failure.terminal_id)
        if key in self.failed_terminals:
            raise TerminalAlreadyFailed(
                f"terminal {failure.terminal_id} of hall {failure.hall_id} was already declared failed "
                "in this game and refunded once"
            )
        paid_by = "stakes" if self.phase is P.SELLING else "house"
        returns = self._returns(self._by_terminal.get(key, []), "terminal_failed", paid_by, unwon_only=True)
        head = CentralTerminalFailed(
            game_id=self.game_id, hall_id=failure.hall_id, request_id=failure.request_id,
            terminal_id=failure.terminal_id, reason=failure.reason, declared_by=failure.declared_by,
            refunded_cards=sum(len(r.card_numbers) for r in returns),
            refunded_cents=sum(r.amount_cents for r in returns), paid_by=paid_by if returns else "nobody",
        )  # fmt: skip
        events: list[CentralRecord] = self._emit([head, *returns])
        if self.phase in (P.SALE_CLOSED, P.DRAWING) and self.cards_in_play == 0:
            events += self._emit([self._closing(now_ms)])  # nothing left that could win
        return Outcome(tuple(events), head)

    def close_sale(self, now_ms: int) -> list[CentralRecord]:
        """Close the sale at its deadline: the sales and each prize's amount (R93.9).

        A sale that left no card in play ends the game: there is nothing to draw for.
        """
        self._check(I.SALE_CLOSED)
        now = _time("now_ms", now_ms)
        assert self.closes_at_ms is not None
        if now < self.closes_at_ms:
            raise NotNow(
                f"the sale closes at its announced deadline, in {self.closes_at_ms - now} ms; "
                "terminals count down to it"
            )
        sales = sum(
            (p.card_count - len(self._refunded.get(i, ()))) * p.stake_cents for i, p in enumerate(self.purchases)
        )
        amounts = {
            p.name: share_of_sales(sales, p.basis_points) + p.carry_in_cents for p in self.config.prizes
        }
        house = sales - sum(share_of_sales(sales, p.basis_points) for p in self.config.prizes)
        closed = CentralSaleClosed(
            game_id=self.game_id, closed_at_ms=now, cards_in_play=self.cards_in_play, sales_cents=sales,
            prize_amounts=amounts, house_share_cents=house, sharing=BY_STAKE,
        )  # fmt: skip
        events = self._emit([closed])
        if self.cards_in_play == 0:
            events += self._emit([self._closing(now)])
        return events

    # --- The draw ---------------------------------------------------------------

    def check_draw(self, now_ms: int) -> None:
        """Raise unless a ball may be drawn at ``now_ms`` (phase, ball interval)."""
        self._check(I.BALL_DRAWN)
        now = _time("now_ms", now_ms)
        due = self.next_ball_due_ms
        assert due is not None
        if now < due:
            raise NotNow(f"the next ball is due in {due - now} ms (a ball every {self.config.ball_interval_ms} ms)")
        if len(self.balls) == BALLS:
            raise NotNow(f"all {BALLS} balls have been drawn")

    def draw_next(self, source: BallSource, now_ms: int) -> list[CentralRecord]:
        """Draw the next ball from ``source`` (the random ball generator, R92.10), then as :meth:`ball_drawn`.

        ``source`` must know the balls already drawn (build it from :attr:`balls`).
        """
        self.check_draw(now_ms)
        return self.ball_drawn(source.draw(), now_ms)

    def ball_drawn(self, ball: int, now_ms: int) -> list[CentralRecord]:
        """The next ball is ``ball``: mark it on every card and award what it wins (R93.10-13).

        Every card in play that completes a pattern not won yet on this ball shares
        its whole prize in proportion to its stake, cents by the largest remainder
        (R93.13); the game goes on after each prize and ends with the bingo, or when
        every pattern is won (R93.12).
        """
        self.check_draw(now_ms)
        now = _time("now_ms", now_ms)
        ball = int(_checked(wire.BALL, "ball", ball))
        if ball in self.balls:
            raise BadArgument(f"ball {ball} was already drawn, as ball {self.balls.index(ball) + 1}")
        events: list[CentralRecord] = self._emit([CentralBallDrawn(game_id=self.game_id, ball=ball, ball_count=len(self.balls) + 1, drawn_at_ms=now)])
        awards = self._awards()
        if awards:
            won = {*self.prizes, *(pattern for pattern, _ in awards)}
            final = self._patterns.game_over(won)
            for position, (pattern, cards) in enumerate(awards):
                events += self._emit(self._prize(pattern, cards, final and position == len(awards) - 1))
            if final:
                events += self._emit([self._closing(now)])
        return events

    def _awards(self) -> list[tuple[str, np.ndarray]]:
        """The patterns the last ball won, in the order of announcement, with their cards in play."""
        awards = []
        for name in self._patterns.names:
            cards = self._found.get(name)
            if cards is None or name in self.prizes:
                continue
            cards = cards[self._in_play[cards]]
            if len(cards):
                awards.append((name, cards))
        return awards

    def _prize(self, pattern: str, cards: np.ndarray, final: bool) -> list[CentralRecord]:
        assert self.sale is not None
        amount = self.sale.prize_amounts[pattern]
        numbers = (cards + self.config.first_card).tolist()
        owners = np.searchsorted(self._starts, numbers, side="right") - 1
        purchases = [self.purchases[int(i)] for i in owners]
        if self.sale.sharing == BY_STAKE:  # the whole prize, by each card's stake (R93.13)
            split = share_by_stake(amount, [p.stake_cents for p in purchases])
        else:  # a game whose sale closed under the earlier rule keeps it to its end (R88.4-5)
            split = split_prize(amount, [p.stake_pct for p in purchases])
        count = len(self.balls)
        head = CentralPrizeWon(
            game_id=self.game_id, pattern=pattern, ball_count=count, amount_cents=amount, winner_count=len(numbers),
            paid_cents=split.paid, carry_cents=split.carry, final=final,
        )  # fmt: skip
        details: list[CentralRecord] = []
        credit_seq = {hall: len(items) for hall, items in self._credits.items()}
        for offset, (number, purchase, payment) in enumerate(zip(numbers, purchases, split.payments)):
            credit_seq[purchase.hall_id] += 1
            details.append(
                CentralCardWon(
                    game_id=self.game_id, pattern=pattern, ball_count=count,
                    winner_seq=len(self.winners) + offset + 1, credit_seq=credit_seq[purchase.hall_id],
                    card_number=number, hall_id=purchase.hall_id, terminal_id=purchase.terminal_id,
                    player_ref=purchase.player_ref, purchase_request_id=purchase.request_id,
                    stake_pct=purchase.stake_pct, payment_cents=payment,
                )  # fmt: skip
            )
        return [head, *details]

    # --- The end ----------------------------------------------------------------

    def _closing(self, now_ms: int) -> CentralGameClosed:
        """The game's close: an unwon prize carries its whole amount; a won one nothing (R93.13), or in a
        game of an older journal its split's rest."""
        assert self.sale is not None
        carries = {
            name: self.prizes[name].carry_cents if name in self.prizes else self.sale.prize_amounts[name]
            for name in self._patterns.names
        }
        return CentralGameClosed(game_id=self.game_id, closed_at_ms=now_ms, carries=carries)

    def declare_not_played(self, reason: str, declared_by: str, now_ms: int) -> list[CentralRecord]:
        """Force majeure (R96.2): the game is deemed not played and every stake is returned.

        Prizes already won and credited stand (money moves only on a decision; a credit
        is not taken back); a prize won carries what its sharing left (nothing, R93.13), every other prize
        carries to the next game what the previous one carried to it.
        """
        self._check(I.NOT_PLAYED)
        now = _time("now_ms", now_ms)
        reason = str(_checked(wire.REASON, "reason", reason))
        declared_by = str(_checked(wire.PERSON, "declared_by", declared_by))
        if not reason.strip():
            raise BadArgument("say why the game cannot run; the reason goes into the record")
        carries = {
            p.name: self.prizes[p.name].carry_cents if p.name in self.prizes else p.carry_in_cents
            for p in self.config.prizes
        }
        head = CentralGameNotPlayed(
            game_id=self.game_id, declared_at_ms=now, reason=reason, declared_by=declared_by, carries=carries,
        )
        returns = self._returns(range(len(self.purchases)), "not_played", "stakes", unwon_only=False)
        return self._emit([head, *returns])


_APPLY: dict[type[CentralRecord], Any] = {
    CentralSaleOpened: CentralGame._apply_sale_opened,
    CentralPurchaseConfirmed: CentralGame._apply_confirmed,
    CentralPurchaseRefused: CentralGame._apply_decision,
    CentralTerminalFailed: CentralGame._apply_terminal_failed,
    CentralStakeReturned: CentralGame._apply_stake_returned,
    CentralSaleClosed: CentralGame._apply_sale_closed,
    CentralBallDrawn: CentralGame._apply_ball,
    CentralPrizeWon: CentralGame._apply_prize,
    CentralCardWon: CentralGame._apply_card_won,
    CentralGameClosed: CentralGame._apply_end,
    CentralGameNotPlayed: CentralGame._apply_end,
}


__all__ = [
    "DETAIL_EVENTS",
    "FINAL_PHASES",
    "TABLE",
    "CentralGame",
    "Decision",
    "Input",
    "Outcome",
    "Page",
    "Phase",
    "PurchaseRequest",
    "TerminalFailure",
    "render_table",
]

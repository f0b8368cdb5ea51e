"""The minutes book as a projection of the journal (R77, R83.3-5, R89.6, R90.4, R91.10).

:func:`build` folds journal records, in order, into a :class:`MinutesBook`:

* per game (:class:`GameMinutes`, R77.1, R83.3-4): its number, face value, the series
  in play with the first and last card sold of each, the paper sales per seller, the
  virtual cards with their stake percentages, the collection, the line and bingo
  prizes, the pots in play with their levels, collections and payouts, the balls in
  the order drawn with every prize, claim, payment and pot movement at its ball (the
  *draw record*), and the winning cards of each prize with the ball they won on;
* per session (:class:`SessionMinutes`, R77.1-2, R83.5): the verification before it,
  the ball counts with their witnesses, the opening and closing signatures of the
  administrator and the room chief (with their class I licences, R79), every game, the
  incidents - every refusal at the door with its ground, self-exclusions, failed
  terminals, the blower's faults, suspended games, a failed verification, a clock that
  stepped, and those staff recorded by hand (R75.4, R77.2) - the complaints with the room
  chief who witnessed each (R75.5), the extra checks, the jackpot's bank deposits with its funds and account at the close (R91.11),
  and the daily summary with running totals;
* per joint game played with the partner hall (:class:`JointGameMinutes`, R3.5.b): this
  room's paper and virtual sales and the partner room's, the joint pool, the main hall's
  balls, the winning cards of both rooms with the ball they won on, and each prize's
  settlement: what each winning card got, what this hall paid and to whom, what it owes
  its partner or is owed, the carry, the house's share and the tax;
* per month (:class:`MonthCount`, R77.4): the physical and virtual cards sold.

Every part names the journal records it covers (:class:`JournalRange`): the first and
last sequence numbers and the last record's hash.  The journal is a hash chain, so
that hash also vouches for every record before it.

The fold reads records only; it writes nothing and asks no clock, so the minutes are
the same whenever they are made from the same records (R77.3).  Records it does not
know are skipped: the minutes hold what the articles ask, not every fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from protocol.chain import Record
from protocol.errors import N_, Phrase, Template, one_or_joined
from protocol.records import JournalRecord, annex, declared
from protocol.records.admission import ComplaintConfirmed, ComplaintRecorded, EntryRefused, IncidentRecorded
from protocol.records.annex import (
    AnnexBallDrawn,
    AnnexCardsSold,
    AnnexClaimRejected,
    AnnexClaimVerified,
    AnnexGameClosed,
    AnnexGameNotPlayed,
    AnnexGameOpened,
    AnnexLink,
    AnnexPool,
    AnnexPrizesPaid,
    AnnexSalesReported,
    AnnexTerminalFailed,
    AnnexVirtualCardsBought,
)
from protocol.records.blower import BlowerFault, BlowerLink, BlowerSwitched
from protocol.records.cashier import JackpotDeposited, JackpotWithdrawn, Posting
from protocol.records.catalogue import group_types
from protocol.records.clock import ClockStepped
from protocol.records.game import (
    BallCorrected,
    BallCorrectionCancelled,
    BallCorrectionSigned,
    BallDrawn,
    BallVoided,
    CardsCollected,
    GameClosed,
    GameFinished,
    GameRefunded,
    GameResumed,
    GameSuspended,
    GameSuspendedForGood,
    LastGameAnnounced,
    ManualFinishStarted,
)
from protocol.records.prizes import (
    CardRefused,
    ClaimRejected,
    JackpotContributionRecovered,
    OperatorContribution,
    PotsAnnounced,
    PrizeClosed,
    PrizePaid,
    PrizeWon,
)
from protocol.records.responsible import SelfExcluded
from protocol.records.sale import CardSold, PaperCardsSold, SaleClosed, SaleOpened, SecondSeriesOpened
from protocol.records.session import (
    BallSetReplaced,
    BallsCounted,
    ExtraCheckRequested,
    SessionClosed,
    SessionClosingSigned,
    SessionOpened,
    SessionOpeningSigned,
    SystemVerified,
)
from protocol.records.terminals import TerminalFailed, TerminalOutOfService, VirtualCardsBought
from server_kit.reports.document import JournalRange, ReportError

#: The pots' ledger accounts, in the order the minutes list them.
POTS = (
    "pot:superbingo",
    "pot:grand_superbingo",
    "pot:megabingo",
    "pot:jackpot_accumulated",
    "pot:jackpot_reserve",
)
#: The prizes paid out of a pot (``prize_paid.prize``) and the pot each comes from.
POT_PRIZES = {
    "superbingo": "pot:superbingo",
    "superbingo_last_game": "pot:superbingo",
    "grand_superbingo": "pot:grand_superbingo",
    "megabingo": "pot:megabingo",
    "jackpot": "pot:jackpot_accumulated",
}
JACKPOT_ACCUMULATED, JACKPOT_RESERVE = "pot:jackpot_accumulated", "pot:jackpot_reserve"
JACKPOT_BANK = "bank:jackpot"  # the jackpot's own bank account (R91.11)
_MONTH = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")
GAME_REFUND = "refund:game"
TERMINAL_REFUND = "refund:terminal"

#: What each lifecycle record says of the game's state afterwards.
_OUTCOMES: dict[type[JournalRecord], str] = {
    SaleOpened: "selling",
    SaleClosed: "sale closed",
    BallDrawn: "drawing",
    GameSuspended: "suspended",
    GameSuspendedForGood: "suspended for good",
    GameRefunded: "refunded",
    ManualFinishStarted: "being finished by hand",
    GameClosed: "closed",
    GameFinished: "finished by hand",
}
#: The records of a game's lifecycle the record of balls drawn lists by their name.
_LIFECYCLE = (GameSuspended, GameResumed, GameSuspendedForGood, GameRefunded, ManualFinishStarted, GameClosed,
              GameFinished, TerminalFailed)


# --- The parts of the minutes ------------------------------------------------------------


class _Span:
    """A growing :class:`JournalRange`."""

    def __init__(self) -> None:
        self.first_seq: int | None = None
        self.last_seq = 0
        self.last_hash = ""

    def cover(self, record: Record) -> None:
        if self.first_seq is None:
            self.first_seq = record.seq
        self.last_seq, self.last_hash = record.seq, record.hash

    def frozen(self) -> JournalRange:
        assert self.first_seq is not None, "a span is read only once it covers a record"
        return JournalRange(self.first_seq, self.last_seq, self.last_hash)


@dataclass
class SeriesInPlay:
    """One series of the game (R83.3): the paper cards sold from it, first to last."""

    series: int
    card_set: str
    face_value_cents: int
    second: bool  # opened when the first ran short (R82.6)
    first: int | None = None
    last: int | None = None
    count: int = 0
    amount_cents: int = 0


@dataclass(frozen=True)
class PaperSale:
    """A range of paper cards recorded by one seller."""

    seq: int
    time_ms: int
    seller: str
    series: int
    first: int
    last: int
    count: int
    amount_cents: int


@dataclass(frozen=True)
class VirtualCard:
    """A virtual card bought on a terminal, with the share of its price staked (R82.15)."""

    seq: int
    series: int
    card_number: int
    price_cents: int
    stake_cents: int
    terminal_id: str | None
    account: str
    stake_percent: int | None  # as chosen on the purchase screen, when the record names it

    @property
    def label(self) -> str:
        return f"{self.series}-{self.card_number}"


@dataclass(frozen=True)
class DrawEvent:
    """One line of the record of balls drawn: a ball, or what happened at a ball.

    ``order`` is the count of balls drawn the event belongs to: 0 before the first
    ball (the pots' collection at the close of the sale), the ball count of the win for
    a prize, its payment and the pot payouts (R89.6, R90.4, R91.10).
    """

    seq: int
    time_ms: int
    order: int
    ball: int | None
    event: str
    cards: tuple[str, ...] = ()
    amount_cents: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class Winner:
    """A card verified as winning ``pattern`` on the ``order``-th ball, ``ball``."""

    seq: int
    pattern: str
    card: str
    order: int
    ball: int | None


@dataclass(frozen=True)
class RejectedClaim:
    seq: int
    card: str
    order: int
    reason: str


@dataclass(frozen=True)
class RefusedCard:
    """A claimed card the table chief refused as invalid after the ``order``-th ball (R82.8)."""

    seq: int
    card: str
    order: int
    reason: str
    refused_by: str


@dataclass(frozen=True)
class CorrectedBall:
    """The ``order``-th ball, announced as ``misread``, corrected to ``ball`` by both chiefs (R85.5)."""

    seq: int
    order: int
    misread: int
    ball: int
    reason: str
    signed_by: tuple[str, ...]


@dataclass(frozen=True)
class PrizePayment:
    """A prize paid: its amount, what each winning card got, what stayed behind."""

    seq: int
    prize: str
    order: int
    ball: int | None
    amount_cents: int
    carry_cents: int
    payments: tuple[tuple[str, int], ...]
    desk: str | None  # None when every winning card was virtual, credited to its account

    @property
    def paid_from(self) -> str:
        return f"desk {self.desk.removeprefix('cash:')}" if self.desk else "to the players' accounts"

    @property
    def paid_cents(self) -> int:
        return sum(cents for _, cents in self.payments)


@dataclass
class PotInGame:
    """A pot's life during one game: in play or not, fed, paid, and its levels (R77.1)."""

    pot: str
    in_play: str = ""  # the condition announced, empty when not in play
    collected_cents: int = 0  # set aside from this game's sales at the close
    paid_cents: int = 0
    moved_cents: int = 0  # into (+) or out of (-) the pot by the jackpot's reserve transfer
    level_at_draw_cents: int | None = None  # after the collection, before the first ball
    level_after_cents: int | None = None  # once the game's cards are collected


@dataclass
class GameMinutes:
    """Everything R77.1 and R83.3-4 ask of one game, as the journal tells it."""

    game_id: str
    session: int
    number: int
    card_set: str
    price_cents: int
    first_card: int
    opened_seq: int
    opened_ms: int
    span: _Span = field(default_factory=_Span, repr=False)
    state: str = "selling"
    last_game: bool = False
    collected: bool = False
    series: list[SeriesInPlay] = field(default_factory=list)
    paper_sales: list[PaperSale] = field(default_factory=list)
    virtual_cards: list[VirtualCard] = field(default_factory=list)
    virtual_labels: dict[int, str] = field(default_factory=dict)  # series number -> the label cards show
    refunded_virtual: set[str] = field(default_factory=set)  # cards refunded with a failed terminal (R96.3)
    cards_sold: int | None = None  # announced at the close of the sale
    collection_cents: int | None = None
    line_cents: int | None = None
    bingo_cents: int | None = None
    carry_line_cents: int = 0
    carry_bingo_cents: int = 0
    boost_line_cents: int = 0  # from the jackpot's reserve (R91.7), inside line_cents
    boost_bingo_cents: int = 0
    house_cents: int | None = None
    tax_cents: int | None = None  # posted when the game is closed or finished
    tax_base_cents: int | None = None
    refunded_cents: int = 0
    pots: dict[str, PotInGame] = field(default_factory=lambda: {pot: PotInGame(pot) for pot in POTS})
    drawn: list[int] = field(default_factory=list)  # the balls in play, voided ones taken out
    draw: list[DrawEvent] = field(default_factory=list)
    winners: list[Winner] = field(default_factory=list)
    rejected: list[RejectedClaim] = field(default_factory=list)
    refused: list[RefusedCard] = field(default_factory=list)  # R82.8
    corrections: list[CorrectedBall] = field(default_factory=list)  # R85.5
    prizes: list[PrizePayment] = field(default_factory=list)

    @property
    def journal_range(self) -> JournalRange:
        return self.span.frozen()

    @property
    def physical_cards(self) -> int:
        return sum(s.count for s in self.series)

    @property
    def stakes_cents(self) -> int:
        """The collection: as announced at the close, or the stakes recorded so far."""
        if self.collection_cents is not None:
            return self.collection_cents
        return sum(s.amount_cents for s in self.paper_sales) + sum(
            c.stake_cents for c in self.virtual_cards if c.label not in self.refunded_virtual
        )

    @property
    def refunded_cards(self) -> int:
        """Cards sold and paid back: all of a refunded game's, else those of failed terminals."""
        if self.refunded:
            return self.physical_cards + len(self.virtual_cards)
        return len(self.refunded_virtual)

    @property
    def prizes_paid_cents(self) -> int:
        return sum(p.paid_cents for p in self.prizes)

    @property
    def refunded(self) -> bool:
        return self.state == "refunded"

    def ball_at(self, order: int) -> int | None:
        return self.drawn[order - 1] if 0 < order <= len(self.drawn) else None


@dataclass(frozen=True)
class JointWinner:
    """A card of either room verified as winning ``pattern`` on the ``order``-th ball of a joint game."""

    seq: int
    hall: str
    pattern: str
    ref: str  # series-number, as the records name it: 1001-17, 9001-17
    card: str  # as its room shows it: 1001-17, V1-17
    order: int
    ball: int | None
    terminal: str | None  # a virtual card's terminal; None for a paper card


@dataclass(frozen=True)
class JointPayment:
    """One winning card of a joint game's prize as this hall settled it: its room, its share, who paid."""

    prize: str
    order: int | None
    ball: int | None
    amount_cents: int
    hall: str
    card: str
    cents: int
    paid_by: str  # "desk <name>", "player's account", or the partner hall


@dataclass
class JointGameMinutes:
    """A game played with the partner hall (R3.5.b), as this hall's journal tells it."""

    game_id: str
    main: str
    annex: str
    here: str
    price_cents: int
    line_bp: int
    bingo_bp: int
    opened_seq: int
    opened_ms: int
    span: _Span = field(default_factory=_Span, repr=False)
    state: str = "selling"
    clash: str | None = None
    paper_sales: list[PaperSale] = field(default_factory=list)
    virtual_cards: list[VirtualCard] = field(default_factory=list)
    virtual_labels: dict[int, str] = field(default_factory=dict)
    sales: dict[str, tuple[int, int]] = field(default_factory=dict)  # each room's (cards, cents) as reported
    pool: AnnexPool | None = None
    drawn: list[int] = field(default_factory=list)
    draw: list[DrawEvent] = field(default_factory=list)
    winners: list[JointWinner] = field(default_factory=list)
    rejected: list[RejectedClaim] = field(default_factory=list)
    payments: list[JointPayment] = field(default_factory=list)
    carry_cents: int = 0  # what the splits left (the main hall carries it)
    paid_here_cents: int = 0
    owed_to_partner_cents: int | None = None
    house_cents: int | None = None
    tax_cents: int | None = None

    @property
    def partner(self) -> str:
        return self.annex if self.here == self.main else self.main

    @property
    def journal_range(self) -> JournalRange:
        return self.span.frozen()

    @property
    def own_sales_cents(self) -> int:
        return sum(s.amount_cents for s in self.paper_sales) + sum(c.stake_cents for c in self.virtual_cards)

    def ball_at(self, order: int) -> int | None:
        return self.drawn[order - 1] if 0 < order <= len(self.drawn) else None


@dataclass(frozen=True)
class Verification:
    seq: int
    time_ms: int
    by: str
    date: str
    passed: bool
    results: tuple[tuple[str, str | None], ...]  # (check, fault or None)
    said: Mapping[str, Any] = field(default_factory=dict)  # check -> its fault's catalog template and parts


@dataclass(frozen=True)
class BallCount:
    seq: int
    time_ms: int
    stage: str
    ball_set: str
    counted: int
    missing: tuple[int, ...]
    repeated: tuple[int, ...]
    witnesses: tuple[str, ...]
    room_chief: str


@dataclass(frozen=True)
class Signature:
    seq: int
    time_ms: int
    act: str  # opening, closing
    role: str
    signer: str
    licence: str = ""  # the signer's class I licence (R79); "" in journals written before it was named


@dataclass(frozen=True)
class BookEntry:
    """An incident (R75.4, R77.2), a complaint (R75.5) or an extra-check request (R84.3).

    ``witness`` is the room chief in whose presence a complaint was written ("" while none
    confirmed it, and for every other entry).  ``said`` is how a report says ``text`` in its
    reader's words (:meth:`server_kit.reports.document.Wording.said`) when the server composed it;
    a text a person wrote (a complaint, an incident) has none and reads as written.
    """

    seq: int
    time_ms: int
    kind: str
    number: int | None
    recorded_by: str
    role: str
    text: str
    people: tuple[str, ...]
    witness: str = ""
    said: Mapping[str, Any] | None = None

    @classmethod
    def phrased(cls, record: Record, kind: str, name: str, role: str, phrase: Phrase,
                people: tuple[str, ...] = ()) -> "BookEntry":
        """The entry of ``record`` whose text the server composed: ``phrase`` in English, and said."""
        return cls(record.seq, record.time_ms, kind, None, name, role, str(phrase), people, said=phrase.said())


#: What each ground of a refusal at the door is, in the minutes' words.
REFUSAL_GROUNDS = {
    "banned": N_("on the regulator's banned list (R75.2)"),
    "self_excluded": N_("self-excluded (R97.2)"),
    "minor": N_("under 18 (R75.1, R97.1)"),
    "capacity": N_("the hall at its authorised capacity (R73.5)"),
    "staff": N_("a member of staff, who may not play (R81.b)"),
}


def incident_entry(record: Record, name: str, role: str) -> BookEntry | None:
    """The incident ``record`` is for the minutes (R75.4, R77.2) - a refusal at the door, a
    self-exclusion, a failed terminal, a fault of the draw or of the game - or None."""
    event = declared(record)

    def entry(what: str, text: Template, people: tuple[str, ...] = (), **parts: Any) -> BookEntry:
        return BookEntry.phrased(record, what, name, role, Phrase(text, **parts), people)

    match event:
        case EntryRefused():
            ground = REFUSAL_GROUNDS.get(event.ground or "")
            if ground is None:
                return BookEntry(record.seq, record.time_ms, "entry refused", None, name, role, event.reason,
                                 (event.name,))
            return entry("entry refused", N_("{ground}: {reason}"), (event.name,), ground=ground, reason=event.reason)
        case SelfExcluded(terminal=terminal) if terminal:
            return entry("self-exclusion", N_("excluded from play for {days} days, until {until}, at terminal {terminal}"),
                         days=event.days, until=event.until, terminal=terminal)
        case SelfExcluded():
            return entry("self-exclusion", N_("excluded from play for {days} days, until {until}"),
                         days=event.days, until=event.until)
        case TerminalFailed():
            return entry("terminal failed", N_("terminal {terminal} failed in game {game}: its cards left the game (R96.3)"),
                         terminal=event.terminal_id, game=event.game_id)
        case TerminalOutOfService():
            return entry("terminal out of service", N_("terminal {terminal}: {reason}"), terminal=event.terminal,
                         reason=event.reason)
        case BlowerFault():
            return entry("blower fault", N_("the {blower} blower: {fault} (draw {draw}): {message}"),
                         blower=event.blower, fault=event.fault, draw=event.draw_no, message=event.message)
        case BlowerLink(up=False):
            return entry("blower link down", N_("the {blower} blower: {detail}"), blower=event.blower,
                         detail=event.detail)
        case BlowerSwitched():
            return entry("blower switched", N_("drawing from the {to} blower instead of the {instead}"), to=event.to,
                         instead=event.from_)
        case GameSuspended() | GameSuspendedForGood():
            return entry(event.type.replace("_", " "), N_("game {game}: {reason}"), game=event.game_id,
                         reason=event.reason)
        case SystemVerified(passed=False):
            return entry("verification failed", N_("for the session of {date}: {faults}"), date=event.date,
                         faults=verification_faults(event))
    return None


def verification_faults(verified: SystemVerified) -> str | None:
    """A failed verification's faults in one line, each said from its catalog template where the record keeps one."""
    said = verified.said or {}
    return one_or_joined([
        Phrase(N_("{check}: {fault}"), check=check, fault=Phrase.from_said(said[check]) if check in said else fault)
        for check, fault in sorted(verified.results.items()) if fault
    ])


@dataclass(frozen=True)
class PotMovement:
    """A pot movement outside any game: an operator contribution (R89.5), or what it took back of the
    jackpot's (R91.9), as a negative amount."""

    seq: int
    time_ms: int
    pot: str
    amount_cents: int
    by: str


@dataclass(frozen=True)
class JackpotBankMovement:
    """Jackpot money into (``deposit``) or back out of (``withdrawal``) its bank account (R91.11)."""

    seq: int
    time_ms: int
    kind: str
    counterpart: str  # the cash desk, or "operator"
    amount_cents: int
    reference: str
    due_before_cents: int  # what the account lacked of the jackpot's funds before it
    funds_cents: int
    bank_after_cents: int
    by: str


@dataclass(frozen=True)
class SummaryRow:
    """One game of the daily summary with the running totals after it (R83.5)."""

    game: GameMinutes
    total_games: int
    total_cards: int
    total_prizes_paid_cents: int
    total_collection_cents: int


@dataclass
class SessionMinutes:
    """One session of the hall: opening to closing, with every game (R77.1-2, R83.5)."""

    number: int
    date: str
    ball_set: str
    span: _Span = field(default_factory=_Span, repr=False)
    verifications: list[Verification] = field(default_factory=list)
    counts: list[BallCount] = field(default_factory=list)
    signatures: list[Signature] = field(default_factory=list)
    opened_seq: int | None = None
    closed_seq: int | None = None
    games: list[GameMinutes] = field(default_factory=list)
    joint_games: list[JointGameMinutes] = field(default_factory=list)
    book: list[BookEntry] = field(default_factory=list)
    ball_sets: list[BookEntry] = field(default_factory=list)
    pot_movements: list[PotMovement] = field(default_factory=list)
    jackpot_bank: list[JackpotBankMovement] = field(default_factory=list)
    #: At the closing: the jackpot's funds (accumulated and reserve) and its bank account (R91.11).
    jackpot_funds_at_close_cents: int | None = None
    jackpot_bank_at_close_cents: int | None = None

    @property
    def journal_range(self) -> JournalRange:
        return self.span.frozen()

    @property
    def month(self) -> str:
        return self.date[:7]

    def summary(self) -> list[SummaryRow]:
        """The games with running totals of games, cards sold, prizes paid and collection.

        A refunded game counts as a game played but adds nothing to the money totals:
        its stakes went back (R86.2, R96.2).
        """
        rows, games, cards, prizes, collection = [], 0, 0, 0, 0
        for game in self.games:
            games += 1
            if not game.refunded:
                cards += game.physical_cards + len(game.virtual_cards) - game.refunded_cards
                collection += game.stakes_cents
            prizes += game.prizes_paid_cents
            rows.append(SummaryRow(game, games, cards, prizes, collection))
        return rows


@dataclass(frozen=True)
class SeriesCount:
    """Cards of one series sold in a month (R77.4), and in how many games."""

    series: int
    kind: str  # physical, virtual
    cards: int
    refunded: int
    games: int


@dataclass(frozen=True)
class SessionCount:
    number: int
    date: str
    games: int
    physical: int
    virtual: int
    refunded: int


@dataclass(frozen=True)
class MonthCount:
    """The physical and virtual cards sold in a calendar month, to the regulator (R77.4).

    Cards of a refunded game, or bought on a terminal that failed, were handed out and
    paid back; they are counted as sold and shown again under ``refunded``.
    """

    month: str
    sessions: tuple[SessionCount, ...]
    series: tuple[SeriesCount, ...]
    journal_range: JournalRange

    @property
    def physical(self) -> int:
        return sum(s.physical for s in self.sessions)

    @property
    def virtual(self) -> int:
        return sum(s.virtual for s in self.sessions)

    @property
    def refunded(self) -> int:
        return sum(s.refunded for s in self.sessions)

    @property
    def games(self) -> int:
        return sum(s.games for s in self.sessions)


# --- The fold ------------------------------------------------------------------------------


def _actor(event: JournalRecord) -> tuple[str, str]:
    """Who caused a record and in which role ("" for a record that names nobody)."""
    actor = event.actor
    return (actor.name, actor.role) if actor is not None else ("", "")


def _game_of(event: JournalRecord) -> str | None:
    """The game a record is about, for the types that name one (``game_id``)."""
    return getattr(event, "game_id", None)


def _in_play(pot: str, announced: PotsAnnounced) -> str:
    """The announced condition of ``pot`` in a ``pots_announced`` record, or ''."""
    superbingo, grand = announced.superbingo_limit, announced.grand_superbingo_limit
    jackpot, megabingo = announced.jackpot_threshold, announced.megabingo_cents
    if pot == "pot:superbingo" and superbingo is not None:
        return f"bingo within {superbingo} balls"
    if pot == "pot:grand_superbingo" and grand is not None:
        return f"bingo within {grand} balls"
    if pot == "pot:jackpot_accumulated" and jackpot is not None:
        return f"bingo within {jackpot} balls"
    if pot == "pot:megabingo" and megabingo is not None:
        return "the announced megabingo to the bingo"
    return ""


def _signed(posting: Posting) -> dict[str, int]:
    """Debit minus credit per account: what ``posting`` does to the balances."""
    effect = dict(posting.debits)
    effect.update((account, -cents) for account, cents in posting.credits)
    return effect


class MinutesBook:
    """The fold: feed it records in journal order with :meth:`apply`, then ask it."""

    def __init__(self) -> None:
        self.sessions: list[SessionMinutes] = []
        self.games: dict[str, GameMinutes] = {}
        self.joint_games: dict[str, JointGameMinutes] = {}
        self._current_session: SessionMinutes | None = None
        self._current_game: GameMinutes | None = None
        # Records between one session's close and the next one's opening count (the
        # verification, a complaint at the door) belong to the next session.
        self._pending_span = _Span()
        self._pending_verifications: list[Verification] = []
        self._pending_book: list[BookEntry] = []
        self._pending_moves: list[PotMovement] = []
        self._pending_bank: list[JackpotBankMovement] = []
        self._pending_sets: list[BookEntry] = []
        self._balances: dict[str, int] = {}  # account -> debit minus credit
        self.last: Record | None = None

    # --- Queries ---------------------------------------------------------------------

    def pot_level(self, pot: str) -> int:
        """What ``pot`` holds now (pots are credit accounts)."""
        return -self._balances.get(pot, 0)

    def game(self, game_id: str) -> GameMinutes:
        try:
            return self.games[game_id]
        except KeyError:
            known = f"; the last is {next(reversed(self.games))}" if self.games else "; it holds none yet"
            raise ReportError(f"there is no game {game_id!r} in the journal{known}") from None

    def joint_game(self, game_id: str) -> JointGameMinutes | None:
        """The game played with the partner hall named ``game_id`` (``hall-1.j812``), if the journal holds it."""
        return self.joint_games.get(game_id)

    def session(self, number: int) -> SessionMinutes:
        if not 1 <= number <= len(self.sessions):
            held = f"sessions 1 to {len(self.sessions)}" if self.sessions else "no session yet"
            raise ReportError(f"there is no session {number} in the journal; it holds {held}")
        return self.sessions[number - 1]

    def month(self, month: str) -> MonthCount:
        """The cards sold in the sessions dated in ``month`` (``YYYY-MM``)."""
        if not _MONTH.fullmatch(month):
            raise ReportError(f"a month is written YYYY-MM, not {month!r}")
        sessions = [s for s in self.sessions if s.month == month]
        if not sessions:
            months = sorted({s.month for s in self.sessions})
            held = f"sessions in {', '.join(months)}" if months else "no session yet"
            raise ReportError(f"no session was held in {month}; the journal holds {held}")
        per_session: list[SessionCount] = []
        per_series: dict[tuple[int, str], list[int]] = {}  # (series, kind) -> [cards, refunded, games]
        for session in sessions:
            physical = virtual = refunded = 0
            for game in session.games:
                counted: set[tuple[int, str]] = set()
                gone = game.refunded
                for s in game.series:
                    if s.count:
                        _count(per_series, (s.series, "physical"), s.count, s.count if gone else 0, counted)
                        physical += s.count
                for card in game.virtual_cards:
                    back = gone or card.label in game.refunded_virtual
                    _count(per_series, (card.series, "virtual"), 1, 1 if back else 0, counted)
                    virtual += 1
                refunded += game.refunded_cards
            per_session.append(SessionCount(session.number, session.date, len(session.games), physical, virtual, refunded))
        first, last = sessions[0].journal_range, sessions[-1].journal_range
        return MonthCount(
            month,
            tuple(per_session),
            tuple(
                SeriesCount(series, kind, *per_series[(series, kind)])
                for series, kind in sorted(per_series, key=lambda key: (key[1], key[0]))
            ),
            JournalRange(first.first_seq, last.last_seq, last.last_hash),
        )

    # --- The fold ----------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        """Fold one record in; records must come in journal order."""
        expected = self.last.seq + 1 if self.last is not None else 1
        if record.seq != expected:
            raise ReportError(
                f"the minutes are made from the whole journal in order; record {record.seq} came "
                f"where record {expected} was expected"
            )
        self.last = record
        event = declared(record)
        session = self._current_session
        if session is not None:
            session.span.cover(record)
        else:
            self._pending_span.cover(record)
        name, role = _actor(event)
        incident = incident_entry(record, name, role)
        if incident is not None:
            (session.book if session is not None else self._pending_book).append(incident)

        match event:
            case Posting():
                self._posting(record, event)
            case ComplaintConfirmed():
                self._complaint_witnessed(event.number, name)
            case SystemVerified():
                self._pending_verifications.append(
                    Verification(
                        record.seq, record.time_ms, name, event.date, event.passed,
                        tuple(sorted(event.results.items())), event.said or {},
                    )
                )
            case BallsCounted():
                if event.stage == "opening" and session is None:
                    session = self._open_session(event)
                if session is not None:
                    session.counts.append(
                        BallCount(
                            record.seq, record.time_ms, event.stage, event.ball_set, event.counted,
                            event.missing, event.repeated, event.witnesses, event.room_chief,
                        )
                    )
            case SessionOpeningSigned() | SessionClosingSigned() if session is not None:
                act = "opening" if isinstance(event, SessionOpeningSigned) else "closing"
                session.signatures.append(Signature(record.seq, record.time_ms, act, event.role, event.signer,
                                                    event.licence or ""))
            case SessionOpened() if session is not None:
                session.opened_seq = record.seq
            case SessionClosed() if session is not None:
                session.closed_seq = record.seq
                session.jackpot_funds_at_close_cents = (self.pot_level(JACKPOT_ACCUMULATED)
                                                        + self.pot_level(JACKPOT_RESERVE))
                session.jackpot_bank_at_close_cents = self._balances.get(JACKPOT_BANK, 0)
                self._current_session = None
                self._pending_span = _Span()
            case IncidentRecorded() | ComplaintRecorded() | ExtraCheckRequested() | ClockStepped():
                entry = self._book_entry(record, name, role)
                (session.book if session is not None else self._pending_book).append(entry)
            case BallSetReplaced():
                replaced = Phrase(N_("{old} replaced by {new} after {games} games: {reason}"), old=event.old,
                                  new=event.new, games=event.games_played, reason=event.reason)
                entry = BookEntry.phrased(record, "ball set replaced", name, role, replaced)
                (session.ball_sets if session is not None else self._pending_sets).append(entry)
            case OperatorContribution() | JackpotContributionRecovered():
                # What the operator takes back of its jackpot contributions (R91.9) shows as a negative amount.
                move = (PotMovement(record.seq, record.time_ms, event.pot, event.amount_cents, name)
                        if isinstance(event, OperatorContribution)
                        else PotMovement(record.seq, record.time_ms, "jackpot (taken back)", -event.amount_cents, name))
                (session.pot_movements if session is not None else self._pending_moves).append(move)
            case JackpotDeposited() | JackpotWithdrawn():
                movement = JackpotBankMovement(
                    record.seq, record.time_ms, "deposit" if isinstance(event, JackpotDeposited) else "withdrawal",
                    event.counterpart, event.amount, event.reference, event.due_before, event.funds,
                    event.bank_after, name,
                )
                (session.jackpot_bank if session is not None else self._pending_bank).append(movement)
            case SaleOpened():
                self._game_opened(record, event)
            case _ if isinstance(event, _JOINT_RECORDS):
                _joint_record(self, record, event)
            case _:
                game = self._current_game
                if game is not None and _game_of(event) == game.game_id:
                    game.span.cover(record)
                    self._game_record(game, record, event)

    def _open_session(self, counted: BallsCounted) -> SessionMinutes:
        verification = self._pending_verifications[-1] if self._pending_verifications else None
        session = SessionMinutes(
            number=len(self.sessions) + 1,
            date=verification.date if verification else "",
            ball_set=counted.ball_set,
            span=self._pending_span,
            verifications=self._pending_verifications,
            book=self._pending_book,
            ball_sets=self._pending_sets,
            pot_movements=self._pending_moves,
            jackpot_bank=self._pending_bank,
        )
        self._pending_verifications, self._pending_book, self._pending_sets, self._pending_moves = [], [], [], []
        self._pending_bank = []
        self.sessions.append(session)
        self._current_session = session
        return session

    @staticmethod
    def _book_entry(record: Record, name: str, role: str) -> BookEntry:
        event = declared(record)
        match event:
            case IncidentRecorded():
                visitors = tuple(f"visitor {n}" for n in event.visitors)
                return BookEntry(record.seq, record.time_ms, "incident", event.number, name, role, event.description,
                                 visitors)
            case ClockStepped():  # a fault of the server's clock (docs/server-kit.md, "Clocks")
                return BookEntry.phrased(record, "clock stepped", name, role, event.describe())
            case ComplaintRecorded():
                # Journaled before the room chief's confirmation existed (no ``witnessed``): it stands as written.
                witness = (event.room_chief or "") if event.witnessed is not None else name
                return BookEntry(record.seq, record.time_ms, "complaint", event.number, name, role, event.text,
                                 (event.complainant,), witness)
        assert isinstance(event, ExtraCheckRequested), f"record {record.seq} ({record.type}) is no entry of the book"
        return BookEntry(record.seq, record.time_ms, "extra ball check requested", None, name, role, event.complaint,
                         event.players)

    def _complaint_witnessed(self, number: int, room_chief: str) -> None:
        """Complaint ``number``'s entry, wherever it stands, names the room chief who confirmed it (R75.5)."""
        for book in [self._pending_book, *(session.book for session in reversed(self.sessions))]:
            for index, entry in enumerate(book):
                if entry.kind == "complaint" and entry.number == number:
                    book[index] = replace(entry, witness=room_chief)
                    return

    def _posting(self, record: Record, posting: Posting) -> None:
        signed = _signed(posting)
        for account, change in signed.items():
            self._balances[account] = self._balances.get(account, 0) + change
        game_id = posting.reference.game_id or ""
        joint = self.joint_games.get(game_id)
        if joint is not None:
            joint.span.cover(record)
            return
        game = self.games.get(game_id)
        if game is None:
            return
        game.span.cover(record)
        amount = sum(cents for _, cents in posting.debits)
        if posting.reason in (GAME_REFUND, TERMINAL_REFUND):
            game.refunded_cents += amount
            if posting.reason == TERMINAL_REFUND and posting.reference.card:
                game.refunded_virtual.add(posting.reference.card)
        elif posting.reason == "jackpot:reserve transfer":
            game.pots["pot:jackpot_reserve"].moved_cents -= amount
            game.pots["pot:jackpot_accumulated"].moved_cents += amount
            game.draw.append(
                DrawEvent(record.seq, record.time_ms, len(game.drawn), game.drawn[-1] if game.drawn else None,
                          "pot moved", (), amount, "jackpot reserve to accumulated jackpot (R91)")
            )
        elif posting.reason in ("jackpot:reserve boost", "jackpot:reserve boost returned"):
            out = posting.reason == "jackpot:reserve boost"
            game.pots[JACKPOT_RESERVE].moved_cents += -amount if out else amount
            game.draw.append(
                DrawEvent(record.seq, record.time_ms, len(game.drawn), None, "pot moved", (), amount,
                          "jackpot reserve to the line and bingo (R91.7)" if out
                          else "reserve boost back to the jackpot reserve: the game was refunded")
            )
        elif posting.reason == "pots:contribution returned":
            for account, change in signed.items():
                if account in game.pots:
                    game.pots[account].collected_cents -= change
            game.draw.append(
                DrawEvent(record.seq, record.time_ms, len(game.drawn), None, "pot collection returned", (),
                          amount, "the game was refunded")
            )

    def _game_opened(self, record: Record, opened: SaleOpened) -> None:
        game = GameMinutes(
            game_id=opened.game_id,
            session=opened.session,
            number=opened.game_number,
            card_set=opened.card_set,
            price_cents=opened.price_cents,
            first_card=opened.first_card,
            opened_seq=record.seq,
            opened_ms=record.time_ms,
            series=[SeriesInPlay(opened.series, opened.card_set, opened.price_cents, second=False)],
        )
        game.span.cover(record)
        self.games[game.game_id] = game
        self._current_game = game
        session = self._current_session
        if session is not None and session.number == game.session:
            session.games.append(game)

    def _game_record(self, game: GameMinutes, record: Record, event: JournalRecord) -> None:
        seq, ms = record.seq, record.time_ms
        order = len(game.drawn)
        game.state = _OUTCOMES.get(type(event), game.state)
        match event:
            case PaperCardsSold():
                series = next((s for s in game.series if s.series == event.series), None)
                if series is None:  # a series neither announced nor opened as second: keep it anyway
                    series = SeriesInPlay(event.series, game.card_set, game.price_cents, second=True)
                    game.series.append(series)
                series.first = event.first if series.first is None else min(series.first, event.first)
                series.last = event.last if series.last is None else max(series.last, event.last)
                series.count += event.count
                series.amount_cents += event.amount_cents
                game.paper_sales.append(PaperSale(seq, ms, event.seller, event.series, event.first, event.last,
                                                  event.count, event.amount_cents))
            case CardSold() if event.terminal_id is not None or event.account.startswith("player:"):
                # A card bought from a player's account on a terminal; paper cards are in paper_cards_sold.
                game.virtual_cards.append(
                    VirtualCard(seq, event.series, event.card_number, event.price_cents, event.stake_cents,
                                event.terminal_id, event.account, event.stake_pct)
                )
            case VirtualCardsBought():
                game.virtual_labels[event.series] = event.series_label
                if event.price_cents is not None:  # the range is the cards (older journals: a card_sold each)
                    game.virtual_cards.extend(
                        VirtualCard(seq, event.series, number, event.price_cents, event.stake_cents, event.terminal,
                                    event.account, event.stake_pct)
                        for number in range(event.first, event.last + 1)
                    )
            case SecondSeriesOpened():
                game.series.append(SeriesInPlay(event.series, event.card_set, event.face_value_cents, second=True))
            case PotsAnnounced():
                for pot, line in game.pots.items():
                    line.in_play = _in_play(pot, event)
            case LastGameAnnounced():
                game.last_game = True
            case SaleClosed():
                self._sale_closed(game, record, event)
            case BallDrawn():
                if not game.drawn:
                    for pot, line in game.pots.items():
                        line.level_at_draw_cents = self.pot_level(pot)
                game.drawn.append(event.ball)
                entered = f"entered by {event.entered_by}" if event.entered_by else ""
                game.draw.append(DrawEvent(seq, ms, event.ball_count, event.ball,
                                           "ball entered" if entered else "ball drawn", (), None, entered))
                _completed(game, record, event)
            case BallVoided():  # journals written before the ruling of R85.5
                if game.drawn and game.drawn[-1] == event.ball:
                    game.drawn.pop()
                game.draw.append(DrawEvent(seq, ms, event.ball_count, event.ball, "ball voided", (), None,
                                           f"by {event.voided_by}: {event.reason}"))
            case BallCorrectionSigned():
                game.draw.append(DrawEvent(seq, ms, event.ball_count, event.misread, "correction signed", (), None,
                                           f"read again as {event.corrected}; by {event.signer} "
                                           f"({event.role.replace('_', ' ')}): {event.reason}"))
            case BallCorrectionCancelled():
                game.draw.append(DrawEvent(seq, ms, event.ball_count, event.misread, "correction withdrawn", (), None,
                                           f"{event.misread} stands; by {event.by} ({event.role.replace('_', ' ')})"))
            case BallCorrected():
                if game.drawn and game.drawn[-1] == event.misread:
                    game.drawn[-1] = event.ball
                game.corrections.append(CorrectedBall(seq, event.ball_count, event.misread, event.ball, event.reason,
                                                      event.signed_by))
                game.draw.append(DrawEvent(seq, ms, event.ball_count, event.ball, "ball corrected", (), None,
                                           f"announced as {event.misread}; signed by {' and '.join(event.signed_by)}: "
                                           f"{event.reason} (R85.5)"))
                _completed(game, record, event)
            case CardRefused():
                card = f"{event.series}-{event.card_number}"
                game.refused.append(RefusedCard(seq, card, event.ball_count, event.reason, event.refused_by))
                game.draw.append(DrawEvent(seq, ms, event.ball_count, game.ball_at(event.ball_count), "card refused",
                                           (card,), None, f"invalid (R82.8), by {event.refused_by}: {event.reason}"))
            case PrizeClosed():
                how = (f"after {event.wait_s} s with no new claim" if event.wait_s is not None
                       else f"by {event.closed_by}")
                game.draw.append(DrawEvent(seq, ms, event.ball_count, game.ball_at(event.ball_count), "prize closed",
                                           (), None,
                                           f"{' and '.join(event.patterns)}: no other card, closed {how} (R85.6)"))
            case PrizeWon():
                card = f"{event.series}-{event.card_number}"
                ball = game.ball_at(event.ball_count)
                game.winners.append(Winner(seq, event.pattern, card, event.ball_count, ball))
                game.draw.append(DrawEvent(seq, ms, event.ball_count, ball, "prize won", (card,), None, event.pattern))
            case ClaimRejected():
                card = f"{event.series}-{event.card_number}"
                game.rejected.append(RejectedClaim(seq, card, event.ball_count, event.reason))
                game.draw.append(DrawEvent(seq, ms, event.ball_count, game.ball_at(event.ball_count), "claim rejected",
                                           (card,), None, event.reason))
            case PrizePaid():
                self._prize_paid(game, record, event)
            case _ if isinstance(event, _LIFECYCLE):
                if isinstance(event, (GameClosed, GameFinished)):
                    game.tax_cents, game.tax_base_cents = event.tax_cents, event.tax_base_cents
                if isinstance(event, GameResumed):
                    game.state = "drawing" if game.drawn else event.state.replace("_", " ")
                game.draw.append(DrawEvent(seq, ms, order, game.ball_at(order), event.type.replace("_", " "), (), None,
                                           _lifecycle_detail(event)))
            case CardsCollected():
                game.collected = True
                for pot, line in game.pots.items():
                    line.level_after_cents = self.pot_level(pot)

    @staticmethod
    def _sale_closed(game: GameMinutes, record: Record, closed: SaleClosed) -> None:
        """The sale's close: the cards sold, the collection, the prizes announced and what the pots took."""
        game.cards_sold = closed.cards_sold
        game.collection_cents = closed.collection_cents
        game.line_cents, game.bingo_cents = closed.line_cents, closed.bingo_cents
        game.carry_line_cents, game.carry_bingo_cents = closed.carry_line_cents, closed.carry_bingo_cents
        game.boost_line_cents, game.boost_bingo_cents = closed.boost_line_cents, closed.boost_bingo_cents
        game.house_cents = closed.house_cents
        for pot, cents in sorted(closed.contributions.items(), key=lambda item: POTS.index(item[0])):
            game.pots[pot].collected_cents += cents
            game.draw.append(
                DrawEvent(record.seq, record.time_ms, 0, None, "pot collected", (), cents, f"{pot} from the sales")
            )

    @staticmethod
    def _prize_paid(game: GameMinutes, record: Record, paid: PrizePaid) -> None:
        ball = game.ball_at(paid.ball_count)
        payment = PrizePayment(record.seq, paid.prize, paid.ball_count, ball, paid.amount_cents, paid.carry_cents,
                               paid.payments, paid.desk)
        game.prizes.append(payment)
        pot = POT_PRIZES.get(payment.prize)
        if pot is not None:
            game.pots[pot].paid_cents += payment.paid_cents
        event = "pot paid" if pot else "prize paid"
        for card, cents in payment.payments:
            game.draw.append(DrawEvent(record.seq, record.time_ms, payment.order, ball, event, (card,), cents,
                                       f"{payment.prize}, {payment.paid_from}"))
        if payment.carry_cents:
            to = pot or f"carry:{payment.prize}"
            game.draw.append(DrawEvent(record.seq, record.time_ms, payment.order, ball, "carried", (),
                                       payment.carry_cents, f"{payment.prize}: left in {to} (R88.5)"))


def _completed(game: GameMinutes, record: Record, event: BallDrawn | BallCorrected) -> None:
    """The cards a ball (drawn or corrected) completed a line or a bingo on, as lines of the record of balls."""
    for pattern, cards in (("line", event.completed_line), ("bingo", event.completed_bingo)):
        if cards:
            game.draw.append(DrawEvent(record.seq, record.time_ms, event.ball_count, event.ball,
                                       f"{pattern} completed", cards))


def _lifecycle_detail(event: JournalRecord) -> str:
    """What the record of balls says beside a lifecycle record: why, who authorised or finished it, or the terminal."""
    match event:
        case GameSuspended() | GameSuspendedForGood():
            return event.reason
        case ManualFinishStarted():
            return event.authorised_by
        case GameFinished():
            return event.finished_by
        case TerminalFailed():
            return event.terminal_id
    return ""


# --- Games played with the partner hall (R3.5.b) ---------------------------------------------

#: The records of the games played with the partner hall, folded into :class:`JointGameMinutes`.
_JOINT_RECORDS = tuple(group_types(annex))
_JOINT_STATES: dict[type[JournalRecord], str] = {
    AnnexPool: "drawing", AnnexGameClosed: "closed", AnnexPrizesPaid: "paid", AnnexGameNotPlayed: "not played",
}


def _joint_opened(book: MinutesBook, record: Record, opened: AnnexGameOpened) -> None:
    here = opened.annex if opened.relay_seq is not None else opened.main  # the annex took it from the stream
    joint = JointGameMinutes(opened.game_id, opened.main, opened.annex, here, opened.price_cents, opened.line_bp,
                             opened.bingo_bp, record.seq, record.time_ms, clash=opened.clash)
    joint.span.cover(record)
    book.joint_games[joint.game_id] = joint
    if book._current_session is not None:
        book._current_session.joint_games.append(joint)


def _joint_record(book: MinutesBook, record: Record, event: JournalRecord) -> None:
    if isinstance(event, AnnexGameOpened):
        _joint_opened(book, record, event)
        return
    joint = book.joint_games.get(_game_of(event) or "")
    if joint is None:
        return
    seq, ms = record.seq, record.time_ms
    joint.span.cover(record)
    joint.state = _JOINT_STATES.get(type(event), joint.state)
    order = len(joint.drawn)
    match event:
        case AnnexCardsSold():
            joint.paper_sales.append(PaperSale(seq, ms, event.seller, event.series, event.first, event.last,
                                               event.count, event.amount_cents))
        case AnnexVirtualCardsBought():
            joint.virtual_labels[event.series] = event.series_label
            joint.virtual_cards.extend(
                VirtualCard(seq, event.series, number, event.price_cents, event.stake_cents, event.terminal,
                            event.account, event.stake_pct)
                for number in range(event.first, event.last + 1)
            )
        case AnnexSalesReported():
            joint.sales[event.hall_id] = (event.cards, event.cents)
            if event.hall_id == joint.here:
                joint.state = "sale closed here"
        case AnnexPool():
            joint.pool = event
        case AnnexBallDrawn():
            joint.drawn.append(event.ball)
            joint.draw.append(DrawEvent(seq, ms, event.ball_count, event.ball, "ball drawn", (), None,
                                        f"by {event.hall_id}"))
        case AnnexClaimVerified():
            card = event.label or event.card
            ball = joint.ball_at(event.ball_count)
            joint.winners.append(JointWinner(seq, event.hall_id, event.pattern, event.card, card, event.ball_count,
                                             ball, event.terminal))
            where = event.hall_id + (f", terminal {event.terminal}" if event.terminal else ", paper card")
            joint.draw.append(DrawEvent(seq, ms, event.ball_count, ball, "prize won", (card,), None,
                                        f"{event.pattern} ({where})"))
        case AnnexClaimRejected():
            joint.rejected.append(RejectedClaim(seq, event.card, event.ball_count, event.reason))
            joint.draw.append(DrawEvent(seq, ms, event.ball_count, joint.ball_at(event.ball_count), "claim rejected",
                                        (event.card,), None, event.reason))
        case AnnexGameClosed():
            joint.draw.append(DrawEvent(seq, ms, order, joint.ball_at(order), "game closed", (), None,
                                        f"by {event.hall_id}; {event.annex_claims} claim(s) of the annex counted"))
        case AnnexLink():
            joint.draw.append(DrawEvent(seq, ms, order, joint.ball_at(order), "link back" if event.up else "link lost",
                                        (), None, f"to {event.partner}"))
        case AnnexGameNotPlayed():
            joint.draw.append(DrawEvent(seq, ms, order, joint.ball_at(order), "declared not played", (),
                                        event.refunded_cents,
                                        f"by {event.declared_by} (R96.2): {event.reason}; "
                                        "the stakes returned in this room"))
        case AnnexTerminalFailed():
            refunded = set(event.refunded)  # out of the game, refunded (R96.3)
            joint.virtual_cards = [c for c in joint.virtual_cards if c.label not in refunded]
            what = (f"refunded by the {'house' if event.source == 'house' else 'collection'}" if refunded
                    else "its cards stay in play, no refund")
            joint.draw.append(DrawEvent(seq, ms, order, joint.ball_at(order), "terminal failed",
                                        event.refunded or event.kept_in_play, event.refunded_cents or None,
                                        f"terminal {event.terminal} (R96.3): {event.reason}; {what}"))
        case AnnexPrizesPaid():
            _joint_paid(joint, record, event)


def _joint_paid(joint: JointGameMinutes, record: Record, paid: AnnexPrizesPaid) -> None:
    # ``prizes`` is declared free-form JSON (protocol.records.annex): each prize is read as the object it is.
    virtual = {c.label for c in joint.virtual_cards}
    labels = joint.virtual_labels
    for prize in paid.prizes:
        order = prize["ball_count"]
        ball = joint.ball_at(order) if order is not None else None
        for hall, card, cents in prize["winners"]:
            series, _, number = card.partition("-")
            shown = f"{labels.get(int(series), series)}-{number}" if hall == joint.here and series.isdigit() else card
            if hall != joint.here:
                shown = next((w.card for w in joint.winners if (w.hall, w.ref) == (hall, card)), card)
                paid_by = hall
            elif card in virtual:
                paid_by = "player's account"
            else:
                paid_by = f"desk {(paid.desk or '').removeprefix('cash:')}"
            joint.payments.append(JointPayment(prize["pattern"], order, ball, prize["amount_cents"], hall, shown, cents,
                                               paid_by))
            joint.draw.append(DrawEvent(record.seq, record.time_ms, order or 0, ball, "prize paid", (shown,), cents,
                                        f"{prize['pattern']}, {hall}: {paid_by}"))
        joint.carry_cents += prize["carry_cents"]
        joint.paid_here_cents += prize["paid_here_cents"]
        if prize["carry_cents"] and joint.here == joint.main:
            to = f"to this hall's next game (carry:{prize['pattern']}, R88.5)"
            joint.draw.append(DrawEvent(record.seq, record.time_ms, order or 0, ball, "carried", (),
                                        prize["carry_cents"], f"{prize['pattern']}: {to}"))
    joint.owed_to_partner_cents = paid.owed_to_partner_cents
    joint.house_cents, joint.tax_cents = paid.house_cents, paid.tax_cents


def _count(
    table: dict[tuple[int, str], list[int]],
    key: tuple[int, str],
    cards: int,
    refunded: int,
    counted: set[tuple[int, str]],
) -> None:
    """Add cards to a series' monthly line; a game counts once per series."""
    line = table.setdefault(key, [0, 0, 0])
    line[0] += cards
    line[1] += refunded
    if key not in counted:
        counted.add(key)
        line[2] += 1


def build(records: Iterable[Record]) -> MinutesBook:
    """The minutes book of ``records`` (the journal from its first record, in order)."""
    book = MinutesBook()
    for record in records:
        book.apply(record)
    return book

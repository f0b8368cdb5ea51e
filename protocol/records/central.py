"""Records of the central server: its network games' events (R92-R96) and refused hall commands.

Every fact a network game decides is one of the frozen dataclasses below, declared
once: the central domain (``central_server/domain/``) emits these very records, folds
them into its games and journals them as they are, so a server that restarts rebuilds
every game from its journal.  The payload repeats the record's type under ``"type"``.

Every number of a game's record (cents, times, counts, card numbers) is a whole
number that cannot be negative (:class:`CentralRecord` checks it), on top of the
checks every record has: ``true`` is not a number and ``1.0`` is not a cent.

Unlike the hall games' events (:mod:`protocol.events`, which carry no time), records
whose rules depend on time carry it, in milliseconds on the central server's clock:
the sale's deadline and each ball's time, which paces the next ball.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from protocol.records.base import Json, JournalRecord, annotations_of, keyed, optional, payload_key, record


@dataclass(frozen=True, kw_only=True)
class CentralRecord(JournalRecord):
    """Base of a network game's records: the type repeated in the payload, no negative number."""

    carries_type: ClassVar[bool] = True

    def check(self) -> None:
        for attribute, key in _numeric_fields(type(self)):
            _not_negative(self, key, getattr(self, attribute))


_NUMERIC: dict[type, tuple[tuple[str, str], ...]] = {}


def _numeric_fields(cls: type[CentralRecord]) -> tuple[tuple[str, str], ...]:
    """The fields of ``cls`` that hold numbers (whole numbers, lists or objects of them)."""
    known = _NUMERIC.get(cls)
    if known is None:
        hints = annotations_of(cls)
        known = _NUMERIC[cls] = tuple(
            (f.name, payload_key(f)) for f in fields(cls) if _numeric(hints[f.name])
        )
    return known


def _numeric(hint: Any) -> bool:
    """Whether a field annotated ``hint`` holds numbers (``X | None`` when ``X`` does)."""
    if isinstance(hint, types.UnionType):
        return any(_numeric(arg) for arg in typing.get_args(hint) if arg is not type(None))
    return hint is int or typing.get_origin(hint) in (tuple, Mapping)


def _not_negative(record: CentralRecord, key: str, value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if value < 0:
            raise record.refusal(f"cannot be negative: {value}", key)
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            _not_negative(record, f"{key}[{i}]", item)
    elif isinstance(value, Mapping):
        for name, item in value.items():
            _not_negative(record, f"{key}.{name}", item)


# --- Scheduling and the sale -------------------------------------------------------


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameScheduled(CentralRecord):
    """A network game is set up; ``config`` is its ``NetworkGameConfig`` as a dict.

    A game of the chain (R88.5: the games the central server's programme schedules,
    and the operator's one-off games) says so in ``chain`` (``programme`` or
    ``operator``), names the game before it in ``after_game`` (absent for the chain's
    first game) and repeats that game's carries out in ``carries_taken``: its
    ``carry_in_cents`` are those carries by pattern, and a carry whose pattern it does not
    play is added to its bingo.  ``opens_after_ms``: its sale opens that long after this
    record (absent: as the configuration says, or when the operator opens it).  A game
    of ``central.toml``'s ``[[games]]`` carries none of these.
    """

    type: ClassVar[str] = "central_game_scheduled"
    game_id: str
    config: Json
    chain: str | None = optional()
    after_game: str | None = optional()
    carries_taken: Mapping[str, int] | None = optional()
    opens_after_ms: int | None = optional()

    def check(self) -> None:
        super().check()
        if self.chain not in (None, "programme", "operator"):
            raise self.refusal(f"is programme or operator, not {self.chain!r}", "chain")
        if self.chain is None and (self.after_game is not None or self.carries_taken is not None):
            raise self.refusal("only a game of the chain follows another game", "after_game")
        if (self.after_game is None) != (self.carries_taken is None):
            raise self.refusal("a game that follows another takes its carries, and only then", "carries_taken")


@record
@dataclass(frozen=True, kw_only=True)
class CentralSaleOpened(CentralRecord):
    """The sale is open until ``closes_at_ms`` (R93.1); nothing is assigned after it (R93.8)."""

    type: ClassVar[str] = "central_sale_opened"
    game_id: str
    opened_at_ms: int
    closes_at_ms: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralPurchaseConfirmed(CentralRecord):
    """Request ``request_id`` of ``hall_id`` is decided: cards ``first_card``.. assigned (R93.6).

    ``decision`` numbers the game's decisions in the order the requests were received;
    cards are assigned in that order within the series, so ``first_card`` grows with it.
    """

    type: ClassVar[str] = "central_purchase_confirmed"
    game_id: str
    decision: int
    hall_id: str
    request_id: str
    terminal_id: str
    player_ref: str
    card_count: int
    stake_pct: int
    first_card: int
    stake_cents: int
    amount_cents: int
    #: When the central server received the request (its clock): decided as of then, before
    #: the sale's deadline (R93.8), though a burst's last ones are journaled a moment after.
    received_ms: int | None = optional()
    #: True: received at or after the deadline from a hall whose gate (protocol version 3) had
    #: not closed yet: the hall took it before its gate closed at the deadline, and the sale was
    #: still open here (docs/network-game.md, "The sale's deadline at the halls' gates").
    at_gate: bool | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class CentralPurchaseRefused(CentralRecord):
    """Request ``request_id`` of ``hall_id`` is refused; ``refusal_code`` is one of the protocol's.

    ``refusal`` (the attribute ``refusal_text``) is the sentence the terminal shows.
    """

    type: ClassVar[str] = "central_purchase_refused"
    game_id: str
    decision: int
    hall_id: str
    request_id: str
    terminal_id: str
    player_ref: str
    card_count: int
    stake_pct: int
    refusal_code: str
    refusal_text: str = keyed("refusal")
    #: When the central server received the request (its clock): ``sale_over`` means at or after the deadline.
    received_ms: int | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class CentralTerminalFailed(CentralRecord):
    """The hall's staff declared ``terminal_id`` failed (R96.3), with the refund it makes.

    The refund itself follows as one ``central_stake_returned`` per purchase concerned.
    ``paid_by`` is ``stakes`` before the sale closed, ``house`` after it (the prizes
    announced stand), ``nobody`` when no unwon card was left to refund.
    """

    type: ClassVar[str] = "central_terminal_failed"
    game_id: str
    hall_id: str
    request_id: str
    terminal_id: str
    reason: str
    declared_by: str
    refunded_cards: int
    refunded_cents: int
    paid_by: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralStakeReturned(CentralRecord):
    """The stakes of ``card_numbers`` of one purchase go back to the player.

    ``credit_seq`` numbers the money the hall passes to its players in this game
    (prizes and refunds), so the hall pays each one once; ``cause`` is
    ``terminal_failed`` or ``not_played``.
    """

    type: ClassVar[str] = "central_stake_returned"
    game_id: str
    hall_id: str
    credit_seq: int
    purchase_request_id: str
    terminal_id: str
    player_ref: str
    card_numbers: tuple[int, ...]
    amount_cents: int
    paid_by: str
    cause: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralSaleClosed(CentralRecord):
    """The sale is closed: the cards in play, the sales and each prize's amount (R93.9).

    ``prize_amounts`` is each pattern's share of ``sales_cents`` plus what the previous
    game carried to it; ``house_share_cents`` is what of the sales goes to no prize.
    ``sharing`` is how the game's prizes are shared among their winners: ``by_stake``, the
    whole prize in proportion to each card's stake, cents by the largest remainder, nothing
    carried (R93.13); absent in journals written before it existed, whose games shared by
    the hall's rule (R88.4-5: each card ``floor(P * stake% / (100 * W))``, the rest carried).
    """

    type: ClassVar[str] = "central_sale_closed"
    game_id: str
    closed_at_ms: int
    cards_in_play: int
    sales_cents: int
    prize_amounts: Mapping[str, int]
    house_share_cents: int
    sharing: str | None = optional()

    def check(self) -> None:
        super().check()
        if self.sharing not in (None, "by_stake"):
            raise self.refusal(f"is by_stake (or absent), not {self.sharing!r}", "sharing")


# --- The draw ----------------------------------------------------------------------


@record
@dataclass(frozen=True, kw_only=True)
class CentralBallDrawn(CentralRecord):
    """Ball number ``ball_count`` of the game is ``ball`` (R92.10), drawn at ``drawn_at_ms``."""

    type: ClassVar[str] = "central_ball_drawn"
    game_id: str
    ball: int
    ball_count: int
    drawn_at_ms: int


@record
@dataclass(frozen=True, kw_only=True)
class CentralPrizeWon(CentralRecord):
    """``pattern`` is won on ball ``ball_count`` by ``winner_count`` cards (R93.12-13).

    One ``central_card_won`` per winning card follows.  ``carry_cents`` is what the
    split leaves, carried to the next game: 0 in a game that shares by stake (R93.13,
    ``central_sale_closed.sharing``); in a game of an older journal, the remainders of
    partial stakes and rounding (R88.5).  ``final``: this prize ends the game.
    """

    type: ClassVar[str] = "central_prize_won"
    game_id: str
    pattern: str
    ball_count: int
    amount_cents: int
    winner_count: int
    paid_cents: int
    carry_cents: int
    final: bool


@record
@dataclass(frozen=True, kw_only=True)
class CentralCardWon(CentralRecord):
    """Card ``card_number`` won ``payment_cents`` of ``pattern``; its hall credits the player (R85.9).

    ``hall_id`` and ``terminal_id`` say where the card was bought (R92.11);
    ``winner_seq`` numbers the game's winners, ``credit_seq`` the hall's credits.
    """

    type: ClassVar[str] = "central_card_won"
    game_id: str
    pattern: str
    ball_count: int
    winner_seq: int
    credit_seq: int
    card_number: int
    hall_id: str
    terminal_id: str
    player_ref: str
    purchase_request_id: str
    stake_pct: int
    payment_cents: int


# --- The end -----------------------------------------------------------------------


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameClosed(CentralRecord):
    """The game is over; ``carries`` is what each pattern carries to the next game (R88.5)."""

    type: ClassVar[str] = "central_game_closed"
    game_id: str
    closed_at_ms: int
    carries: Mapping[str, int]


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameNotPlayed(CentralRecord):
    """Force majeure (R96.2): the game is deemed not played; every stake returns.

    The refunds follow as ``central_stake_returned`` records; ``carries`` is what
    passes to the next game; ``declared_by`` is the operator who declared it.
    """

    type: ClassVar[str] = "central_game_not_played"
    game_id: str
    declared_at_ms: int
    reason: str
    declared_by: str
    carries: Mapping[str, int]


#: The records of a network game, by type: what the central server folds into its games.
GAME_RECORDS: dict[str, type[CentralRecord]] = {
    cls.type: cls
    for cls in (
        CentralGameScheduled, CentralSaleOpened, CentralPurchaseConfirmed, CentralPurchaseRefused,
        CentralTerminalFailed, CentralStakeReturned, CentralSaleClosed, CentralBallDrawn, CentralPrizeWon,
        CentralCardWon, CentralGameClosed, CentralGameNotPlayed,
    )
}  # fmt: skip


# --- The programme -------------------------------------------------------------------


@record
@dataclass(frozen=True, kw_only=True)
class CentralProgrammePaused(CentralRecord):
    """The operator paused the programme: no game of it is scheduled until it is resumed.

    The games under way play on; a one-off game the operator queued is still scheduled.
    """

    type: ClassVar[str] = "central_programme_paused"
    reason: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralProgrammeResumed(CentralRecord):
    """The operator resumed the programme: its next game is scheduled once the chain's last one is over."""

    type: ClassVar[str] = "central_programme_resumed"


@record
@dataclass(frozen=True, kw_only=True)
class CentralGameQueued(CentralRecord):
    """The operator's one-off game ``game_id`` waits for ``after_game``, the chain's game under way.

    It is scheduled once that game is over, with its carries, in place of the programme's
    next game; ``settings`` holds what the operator chose (``price_cents``,
    ``sale_window_ms``, ``ball_interval_ms``, ``opens_after_ms``).
    """

    type: ClassVar[str] = "central_game_queued"
    game_id: str
    after_game: str
    settings: Mapping[str, int]


#: The programme's own records (the games it schedules are ``central_game_scheduled``).
PROGRAMME_RECORDS: dict[str, type[CentralRecord]] = {
    cls.type: cls for cls in (CentralProgrammePaused, CentralProgrammeResumed, CentralGameQueued)
}


@record
@dataclass(frozen=True, kw_only=True)
class CentralCommandRefused(JournalRecord):
    """A hall's command the central server refused: who sent it, what, the code and the message it was told."""

    type: ClassVar[str] = "central_command_refused"
    peer: str
    command: str
    code: str
    message: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralRefusalsCounted(JournalRecord):
    """Refused commands of ``peer`` (a hall, or an operator: ``role``) beyond those journaled one by one
    in an interval: ``refused`` of them from ``from_ms`` to ``to_ms`` (central clock), ``by_code`` how many
    of each ``command: code``, ``shown`` the message of the last one."""

    type: ClassVar[str] = "central_refusals_counted"
    peer: str
    role: str
    from_ms: int
    to_ms: int
    refused: int
    by_code: Mapping[str, int]
    shown: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralReportDelivered(JournalRecord):
    """The regulator's receiver acknowledged report ``name`` (``daily-YYYY-MM-DD``, ``audit-...``) with
    files of digest ``digest`` (``protocol.regulator_feed.report_digest``): in the replicated journal, so
    a process that takes over after a failover does not send it again."""

    type: ClassVar[str] = "central_report_delivered"
    name: str
    digest: str


@record
@dataclass(frozen=True, kw_only=True)
class CentralAnnexRelayed(JournalRecord):
    """What one hall of a hall-annex pair told its partner (R3.5.b), kept for the partner.

    ``request_id`` is the sending hall's id for its ``annex_post`` (a resend is answered
    with this record's ``seq``); ``seq`` numbers the items sent to ``to_hall``, 1, 2, 3...;
    ``item`` holds the post's fields of the joint game (``game_id``, ``kind``, ...).
    """

    type: ClassVar[str] = "central_annex_relayed"
    from_hall: str
    to_hall: str
    request_id: str
    seq: int
    item: Json

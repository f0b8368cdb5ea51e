"""The domain events of a game, as the journal stores them.

Every fact the game machines of :mod:`protocol.game` emit is one of the frozen
dataclasses below.  Each has a stable ``type`` name and turns into a JSON-able dict
(:meth:`Event.to_dict`) and back (:func:`event_from_dict`); the journal stores exactly
that dict, so renaming a ``type`` or a field is a format change.

Values are plain JSON: integers (money always in whole cents), strings, ``null`` and
lists of integers or strings.  Construction checks every field's type, so a bad event
cannot be journaled and a bad journal record cannot be read back: ``True`` is not an
integer here, and ``1.0`` is not a cent.

Events carry no time: the journal record that wraps each event holds its sequence
number and time, and the ledger postings an event causes name that sequence number.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, fields
from types import NoneType, UnionType
from typing import Any, ClassVar, Mapping

from protocol.cards import BALLS
from protocol.errors import DomainError


class EventError(DomainError):
    """An event or journal record that is not a well-formed domain event."""


JsonValue = int | str | None | list[int] | list[str]


class Event:
    """Base of all domain events: field checks and the dict form the journal stores."""

    __slots__ = ()
    type: ClassVar[str]

    def __post_init__(self) -> None:
        for name, hint, plain in _plan(type(self)):
            value: Any = getattr(self, name)
            if plain is not None and type(value) is plain and (plain is str or _plain_int(name, value)):
                continue  # the common case, checked as _check_value would, without building its names
            checked = _check_value(self.type, name, hint, value)
            if checked is not value:
                # Lists read from JSON become tuples so the event stays hashable and frozen.
                object.__setattr__(self, name, checked)

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON-able form: ``{"type": ..., <field>: <value>, ...}``."""
        data: dict[str, JsonValue] = {"type": self.type}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            data[f.name] = list(value) if isinstance(value, tuple) else value
        return data


#: Every event class by its ``type`` name: what :func:`event_from_dict` can read.
EVENT_TYPES: dict[str, type[Event]] = {}


def _event(cls: type[Event]) -> type[Event]:
    if cls.type in EVENT_TYPES:
        raise TypeError(f"two events are named {cls.type!r}")
    EVENT_TYPES[cls.type] = cls
    return cls


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The event a journal record's payload describes, or :class:`EventError` saying why not."""
    if not isinstance(data, Mapping):
        raise EventError(f"an event is a JSON object, not {type(data).__name__}")
    name = data.get("type")
    if not isinstance(name, str) or name not in EVENT_TYPES:
        raise EventError(f"unknown event type {name!r}")
    cls = EVENT_TYPES[name]
    expected = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    given = set(data) - {"type"}
    if missing := sorted(expected - given):
        raise EventError(f"{name}: missing field(s) {', '.join(missing)}")
    if extra := sorted(given - expected):
        raise EventError(f"{name}: unknown field(s) {', '.join(extra)}")
    return cls(**{key: data[key] for key in expected})


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


_PLANS: dict[type, tuple[tuple[str, Any, type | None], ...]] = {}
#: The integer fields whose values :func:`_check_value` bounds (see there).
_BOUNDED = ("ball", "ball_count", "misread", "series", "card_number", "cards_sold")


def _plan(cls: type) -> tuple[tuple[str, Any, type | None], ...]:
    """Each field's name, annotation, and ``int`` or ``str`` when the annotation is exactly that
    (None for the others, which :func:`_check_value` reads whole)."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = _hints(cls)
        plan = _PLANS[cls] = tuple(
            (f.name, hints[f.name], hints[f.name] if hints[f.name] in (int, str) else None)
            for f in fields(cls)  # type: ignore[arg-type]
        )
    return plan


def _plain_int(name: str, value: Any) -> bool:
    """Whether ``value`` (an ``int``, not a ``bool``) passes :func:`_check_value` with nothing to say."""
    if value < 0:
        return not (name.endswith("_cents") or name in _BOUNDED)
    if name in ("ball", "ball_count", "misread"):
        return 1 <= value <= BALLS
    return True


def _check_value(event: str, name: str, hint: Any, value: Any) -> Any:
    """``value`` checked against the field's annotation; lists become tuples."""
    where = f"{event}.{name}"
    if isinstance(hint, UnionType):  # ``X | None``
        if value is None and NoneType in hint.__args__:
            return value
        (hint,) = [a for a in hint.__args__ if a is not NoneType]
    if typing.get_origin(hint) is tuple:
        if not isinstance(value, (list, tuple)):
            raise EventError(f"{where} is a list, not {value!r}")
        item = typing.get_args(hint)[0]
        items = tuple(_check_value(event, f"{name}[{i}]", item, v) for i, v in enumerate(value))
        return value if isinstance(value, tuple) else items
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise EventError(f"{where} is a whole number, not {value!r}")
        if name.endswith("_cents") and value < 0:
            raise EventError(f"{where} is an amount and cannot be negative: {value}")
        if name in ("ball", "ball_count", "misread") and not 1 <= value <= BALLS:
            raise EventError(f"{where} is {value}, outside 1-{BALLS}")
        if name in ("series", "card_number", "cards_sold") and value < 0:
            raise EventError(f"{where} cannot be negative: {value}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise EventError(f"{where} is text, not {value!r}")
        return value
    raise TypeError(f"{where}: no JSON form for {hint!r}")  # a programming error


# --- The sale ----------------------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class SaleOpened(Event):
    """The sale of a game opened: series, price and first card on sale (R85, R93.1).

    ``closes_at_ms`` is the end of the sale window the central server sets for an
    interconnected game (R93.1), on the injected clock; ``None`` for a hall game whose
    sale the room manager closes.  ``patterns`` names the winning patterns in play.
    """

    type: ClassVar[str] = "sale_opened"
    game_id: str
    series: int
    first_card: int
    price_cents: int
    patterns: tuple[str, ...]
    closes_at_ms: int | None = None


@_event
@dataclass(frozen=True, slots=True)
class CardSold(Event):
    """One card sold in a game (R82.5, R93.6).

    ``account`` is the ledger account the stake came from (``player:<id>`` for a
    virtual card, ``cash:<desk>`` for a paper card): a refund pays it back there.
    ``stake_cents`` is what was paid, at most ``price_cents`` (R82.15).
    ``terminal_id`` is where a virtual card was bought, ``None`` for paper.
    """

    type: ClassVar[str] = "card_sold"
    game_id: str
    series: int
    card_number: int
    price_cents: int
    stake_cents: int
    account: str
    terminal_id: str | None = None


@_event
@dataclass(frozen=True, slots=True)
class SaleClosed(Event):
    """The sale closed; no purchase or change is possible any more (R82.16, R85)."""

    type: ClassVar[str] = "sale_closed"
    game_id: str
    cards_sold: int
    collection_cents: int


# --- The draw ----------------------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class BallDrawn(Event):
    """Ball number ``ball_count`` (1-based) of the game is ``ball`` (R85.5).

    ``entered_by`` names the authorised person who entered it when a game is finished
    by hand (R86.2); ``None`` for a ball from the blower or the generator.
    """

    type: ClassVar[str] = "ball_drawn"
    game_id: str
    ball: int
    ball_count: int
    entered_by: str | None = None


@_event
@dataclass(frozen=True, slots=True)
class BallVoided(Event):
    """A wrongly entered ball was taken back by an authorised person, with the reason.

    Only journals written before the ruling of R85.5 hold it: a drawn ball is never
    returned to the draw any more; a misread is corrected (:class:`BallCorrected`).
    """

    type: ClassVar[str] = "ball_voided"
    game_id: str
    ball: int
    ball_count: int
    voided_by: str
    role: str
    reason: str


@_event
@dataclass(frozen=True, slots=True)
class BallCorrected(Event):
    """Ball ``ball_count`` was announced as ``misread``; the ball physically drawn is ``ball`` (R85.5).

    The room chief and the table chief, both named in ``signed_by``, corrected the
    misreading together, with the reason, before any claim or win on that ball.  The
    misread number was never drawn: it stays in the chamber.
    """

    type: ClassVar[str] = "ball_corrected"
    game_id: str
    misread: int
    ball: int
    ball_count: int
    reason: str
    signed_by: tuple[str, ...]


# --- Claims and prizes -------------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class ClaimRejected(Event):
    """A claimed card was verified and does not win (R85.11); ``reason`` says why."""

    type: ClassVar[str] = "claim_rejected"
    game_id: str
    series: int
    card_number: int
    reason: str


@_event
@dataclass(frozen=True, slots=True)
class PrizeWon(Event):
    """A card won ``pattern`` on ball ``ball_count``; every card of that ball shares (R87)."""

    type: ClassVar[str] = "prize_won"
    game_id: str
    pattern: str
    series: int
    card_number: int
    ball_count: int


@_event
@dataclass(frozen=True, slots=True)
class PrizeClosed(Event):
    """The prizes ``patterns`` found on ball ``ball_count`` are closed: no other card shares them (R85.6).

    The caller asked for another card and closed them, or the configured wait passed
    with no new claim; ``closed_by`` names who (the hall server for the wait).  The
    draw goes on, or the game may close.
    """

    type: ClassVar[str] = "prize_closed"
    game_id: str
    patterns: tuple[str, ...]
    ball_count: int
    closed_by: str


@_event
@dataclass(frozen=True, slots=True)
class CardRefused(Event):
    """The table chief refused claimed card ``series-card_number`` as invalid, with the reason (R82.8).

    A card tampered with, damaged or not matching the sale is not valid: it shares no
    prize of this game, whatever it completes.
    """

    type: ClassVar[str] = "card_refused"
    game_id: str
    series: int
    card_number: int
    reason: str
    refused_by: str


# --- Failures ----------------------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class TerminalFailed(Event):
    """A terminal failed: its cards leave this game and are refunded (R96.3)."""

    type: ClassVar[str] = "terminal_failed"
    game_id: str
    terminal_id: str


@_event
@dataclass(frozen=True, slots=True)
class GameSuspended(Event):
    """The game is suspended on a failure (R86.1); ``state`` is where it stopped."""

    type: ClassVar[str] = "game_suspended"
    game_id: str
    state: str
    reason: str


@_event
@dataclass(frozen=True, slots=True)
class GameResumed(Event):
    """The failure is resolved; the game goes on from ``state``."""

    type: ClassVar[str] = "game_resumed"
    game_id: str
    state: str


@_event
@dataclass(frozen=True, slots=True)
class GameSuspendedForGood(Event):
    """The failure was not resolved in a reasonable time (R86.2)."""

    type: ClassVar[str] = "game_suspended_for_good"
    game_id: str
    reason: str


@_event
@dataclass(frozen=True, slots=True)
class GameRefunded(Event):
    """No prize was won before the game was suspended for good: every stake is returned."""

    type: ClassVar[str] = "game_refunded"
    game_id: str


@_event
@dataclass(frozen=True, slots=True)
class ManualFinishStarted(Event):
    """A prize was already won: ``authorised_by`` finishes the game by hand (R86.2)."""

    type: ClassVar[str] = "manual_finish_started"
    game_id: str
    authorised_by: str


# --- The end -----------------------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class GameClosed(Event):
    """The game ended normally once its last prize was verified (R85, R93.12)."""

    type: ClassVar[str] = "game_closed"
    game_id: str


@_event
@dataclass(frozen=True, slots=True)
class GameFinished(Event):
    """A game finished by hand ended once its last prize was verified (R86.2)."""

    type: ClassVar[str] = "game_finished"
    game_id: str
    finished_by: str

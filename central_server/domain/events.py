"""The events of a network game, as the central server's journal stores them.

Every fact the central game (:mod:`central_server.domain.game`) decides is one of the
frozen dataclasses below.  Each has a stable ``type`` and a ``version`` and turns into
a JSON-able dict (:meth:`CentralEvent.to_dict`, ``{"type": ..., "v": 1, ...}``) and
back (:func:`event_from_dict`).  The game's state is the fold of its events
(:meth:`CentralGame.replay <central_server.domain.game.CentralGame.replay>`), so a
server that restarts rebuilds every game from its journal.

Values are plain JSON: whole numbers (money always in cents), text, true/false,
``null``, lists of whole numbers, and objects of text to whole numbers (the prize
amounts) or, for the configuration, any JSON object.  Construction checks every
field's type: ``True`` is not a number and ``1.0`` is not a cent, so a bad event cannot
be journaled and a bad record cannot be read back.

Changing a field or its meaning is a new ``version`` of that event; this code reads
the versions it names and refuses any other with a message saying so.

Unlike :mod:`protocol.events` (the hall games' events, which carry no time), events
whose rules depend on time carry it, in milliseconds on the central server's clock:
the sale's deadline and each ball's time, which paces the next ball.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, fields
from types import NoneType, UnionType
from typing import Any, ClassVar, Mapping

from central_server.domain.errors import EventError


class CentralEvent:
    """Base of the central game's events: field checks and the dict form."""

    __slots__ = ()
    type: ClassVar[str]
    version: ClassVar[int] = 1

    def __post_init__(self) -> None:
        hints = _hints(type(self))
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            checked = _check(self.type, f.name, hints[f.name], value)
            if checked is not value:
                object.__setattr__(self, f.name, checked)

    def to_dict(self) -> dict[str, Any]:
        """``{"type": ..., "v": ..., <field>: <value>, ...}``, JSON-able."""
        data: dict[str, Any] = {"type": self.type, "v": self.version}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            data[f.name] = list(value) if isinstance(value, tuple) else value
        return data


#: Every event class by its ``type``: what :func:`event_from_dict` reads.
EVENT_TYPES: dict[str, type[CentralEvent]] = {}


def _event(cls: type[CentralEvent]) -> type[CentralEvent]:
    if cls.type in EVENT_TYPES:
        raise TypeError(f"two central events are named {cls.type!r}")
    EVENT_TYPES[cls.type] = cls
    return cls


def event_from_dict(data: Mapping[str, Any]) -> CentralEvent:
    """The event a journal record holds, or :class:`EventError` saying what is wrong."""
    if not isinstance(data, Mapping):
        raise EventError(f"an event is a JSON object, not {type(data).__name__}")
    name = data.get("type")
    if not isinstance(name, str) or name not in EVENT_TYPES:
        raise EventError(f"unknown central event type {name!r}")
    cls = EVENT_TYPES[name]
    version = data.get("v")
    if version != cls.version or isinstance(version, bool):
        raise EventError(f"{name}: version {version!r}; this server reads version {cls.version}")
    expected = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    given = set(data) - {"type", "v"}
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


def _json(where: str, value: Any) -> Any:
    """``value`` if it is plain JSON (objects with text keys, lists, text, numbers, null)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json(f"{where}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EventError(f"{where} has a key that is not text: {key!r}")
            out[key] = _json(f"{where}.{key}", item)
        return out
    raise EventError(f"{where} is not plain JSON: {value!r}")


def _whole(where: str, value: Any) -> int:
    # Every number of a central event (cents, times, counts, card numbers) is >= 0.
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventError(f"{where} is a whole number, not {value!r}")
    if value < 0:
        raise EventError(f"{where} cannot be negative: {value}")
    return value


def _check(event: str, name: str, hint: Any, value: Any) -> Any:
    """``value`` checked against the field's annotation; lists become tuples."""
    where = f"{event}.{name}"
    if isinstance(hint, UnionType):  # ``X | None``
        if value is None and NoneType in hint.__args__:
            return value
        (hint,) = [a for a in hint.__args__ if a is not NoneType]
    origin = typing.get_origin(hint)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise EventError(f"{where} is a list, not {value!r}")
        items = tuple(_whole(f"{where}[{i}]", v) for i, v in enumerate(value))
        return value if isinstance(value, tuple) and items == value else items
    if origin is dict:
        key_type, value_type = typing.get_args(hint)
        if not isinstance(value, Mapping):
            raise EventError(f"{where} is an object, not {value!r}")
        if value_type is int:
            for key, item in value.items():
                if not isinstance(key, str):
                    raise EventError(f"{where} has a key that is not text: {key!r}")
                _whole(f"{where}.{key}", item)
            return value if isinstance(value, dict) else dict(value)
        checked = _json(where, value)
        return value if checked == value and isinstance(value, dict) else checked
    if hint is bool:
        if not isinstance(value, bool):
            raise EventError(f"{where} is true or false, not {value!r}")
        return value
    if hint is int:
        return _whole(where, value)
    if hint is str:
        if not isinstance(value, str):
            raise EventError(f"{where} is text, not {value!r}")
        return value
    raise TypeError(f"{where}: no JSON form for {hint!r}")  # a programming error


# --- Scheduling and the sale -------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class GameScheduled(CentralEvent):
    """A network game is set up; ``config`` is its :class:`NetworkGameConfig` as a dict."""

    type: ClassVar[str] = "central_game_scheduled"
    game_id: str
    config: dict[str, Any]


@_event
@dataclass(frozen=True, slots=True)
class SaleOpened(CentralEvent):
    """The sale is open until ``closes_at_ms`` (R93.1); nothing is assigned after it (R93.8)."""

    type: ClassVar[str] = "central_sale_opened"
    game_id: str
    opened_at_ms: int
    closes_at_ms: int


@_event
@dataclass(frozen=True, slots=True)
class PurchaseConfirmed(CentralEvent):
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


@_event
@dataclass(frozen=True, slots=True)
class PurchaseRefused(CentralEvent):
    """Request ``request_id`` of ``hall_id`` is refused; ``refusal_code`` is one of the protocol's."""

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
    refusal: str


@_event
@dataclass(frozen=True, slots=True)
class TerminalFailed(CentralEvent):
    """The hall's staff declared ``terminal_id`` failed (R96.3), with the refund it makes.

    The refund itself follows as one :class:`StakeReturned` per purchase concerned.
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


@_event
@dataclass(frozen=True, slots=True)
class StakeReturned(CentralEvent):
    """The stakes of ``card_numbers`` of one purchase go back to the player.

    ``credit_seq`` numbers the money the hall passes to its players in this game
    (prizes and refunds), so the hall pays each one once.
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
    cause: str  # "terminal_failed" or "not_played"


@_event
@dataclass(frozen=True, slots=True)
class SaleClosed(CentralEvent):
    """The sale is closed: the cards in play, the sales and each prize's amount (R93.9).

    ``prize_amounts`` is each pattern's share of ``sales_cents`` plus what the previous
    game carried to it; ``house_share_cents`` is what of the sales goes to no prize.
    """

    type: ClassVar[str] = "central_sale_closed"
    game_id: str
    closed_at_ms: int
    cards_in_play: int
    sales_cents: int
    prize_amounts: dict[str, int]
    house_share_cents: int


# --- The draw ----------------------------------------------------------------------


@_event
@dataclass(frozen=True, slots=True)
class BallDrawn(CentralEvent):
    """Ball number ``ball_count`` of the game is ``ball`` (R92.10), drawn at ``drawn_at_ms``."""

    type: ClassVar[str] = "central_ball_drawn"
    game_id: str
    ball: int
    ball_count: int
    drawn_at_ms: int


@_event
@dataclass(frozen=True, slots=True)
class PrizeWon(CentralEvent):
    """``pattern`` is won on ball ``ball_count`` by ``winner_count`` cards (R93.12-13).

    One :class:`CardWon` per winning card follows.  ``carry_cents`` is what the split
    leaves (remainders of partial stakes and rounding), carried to the next game
    (R88.5).  ``final``: this prize ends the game.
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


@_event
@dataclass(frozen=True, slots=True)
class CardWon(CentralEvent):
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


@_event
@dataclass(frozen=True, slots=True)
class GameClosed(CentralEvent):
    """The game is over; ``carries`` is what each pattern carries to the next game (R88.5)."""

    type: ClassVar[str] = "central_game_closed"
    game_id: str
    closed_at_ms: int
    carries: dict[str, int]


@_event
@dataclass(frozen=True, slots=True)
class GameNotPlayed(CentralEvent):
    """Force majeure (R96.2): the game is deemed not played; every stake returns.

    The refunds follow as :class:`StakeReturned` events; ``carries`` is what passes to
    the next game.
    """

    type: ClassVar[str] = "central_game_not_played"
    game_id: str
    declared_at_ms: int
    reason: str
    declared_by: str
    carries: dict[str, int]


__all__ = [
    "EVENT_TYPES",
    "BallDrawn",
    "CardWon",
    "CentralEvent",
    "GameClosed",
    "GameNotPlayed",
    "GameScheduled",
    "PrizeWon",
    "PurchaseConfirmed",
    "PurchaseRefused",
    "SaleClosed",
    "SaleOpened",
    "StakeReturned",
    "TerminalFailed",
    "event_from_dict",
]

"""The programme: network games played one after another, their carries chained (R88.5).

A real network plays its games all day, one after the other.  The central server's
programme (``[programme]`` in ``central.toml``) is a template of a game, how long after
a game ends the next one's sale opens, a scheme of game ids and, optionally, the hours
it runs and how many games it plays.  When the last game of the *chain* is over (closed,
or declared not played) the programme schedules the next game itself, and that game takes,
prize by prize, what the game before it carried out, written into its scheduling record.
A network game pays each prize won whole to its winners (R93.13), so what it carries out
is only what no winner took: a prize nobody won (a pattern of cells the bingo left
blank, every prize of a game left with no card in play) carries its whole amount, and a
game declared not played passes on what was carried into its prizes not won; the games
of a journal written before that rule also carried their splits' rests (R88.5).  The
operator may add a one-off game to the chain and pause or resume the programme.

The chain is every game the programme or the operator's one-offs scheduled, in order:
each game takes the carries of the game before it, once; so the chain is a list, never
a tree, and a journal in which two games follow one game is refused.  A game of
``[[games]]`` is not part of it: its carries are the operator's to write, as before.

**A carry whose prize the next game does not play** (its template dropped a pattern)
is added to the next game's bingo: every game plays a bingo (R94.2), the prize every
game is played for, so the money reaches the players at the first bingo, and nothing is
lost.  A pattern kept by name keeps its carry, whatever its share becomes.

Pure: no clock, no calendar, no I/O.  The time of day comes in as :class:`Local` (the
day in the central server's time zone and whether the programme's hours are open),
worked out by the shell (``central_server/programme.py``); the prize terms in force
(R94.3) come in as the prizes to play.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Mapping, Sequence

from central_server.domain.config import NetworkGameConfig, PrizeShare
from central_server.domain.errors import BadArgument, CentralError, ConfigError, EventError, NotNow
from protocol import central_messages as wire
from protocol.central_messages import CentralMessageError
from protocol.patterns import BINGO, PatternError, pattern_from_dict
from protocol.records.central import (
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameQueued,
    CentralGameScheduled,
    CentralProgrammePaused,
    CentralProgrammeResumed,
    CentralRecord,
)

#: Who scheduled a game of the chain: the programme itself, or the operator (a one-off).
BY_PROGRAMME, BY_OPERATOR = "programme", "operator"
#: The settings of a one-off game the operator may choose; the rest is the programme's template.
ONE_OFF_SETTINGS: Final = ("price_cents", "sale_window_ms", "ball_interval_ms", "opens_after_ms")
#: How long after its scheduling a game's sale may open: up to a day.
MAX_OPENS_AFTER_MS = 24 * 3600 * 1000
#: The id scheme's prefix: what a game id may hold, leaving room for ``-YYYY-MM-DD-NNNN``.
PREFIX = wire.Text(40, charset=wire.KEY_CHARS)
_HOURS = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-3]):([0-5][0-9])")


class Phase(StrEnum):
    """Whether the programme schedules its games."""

    RUNNING = "running"
    PAUSED = "paused"


class Input(StrEnum):
    PAUSED = "paused"
    RESUMED = "resumed"


#: The programme's lifecycle: ``(phase, input) -> new phase``.
TABLE: Final[Mapping[tuple[Phase, Input], Phase]] = {
    (Phase.RUNNING, Input.PAUSED): Phase.PAUSED,
    (Phase.PAUSED, Input.RESUMED): Phase.RUNNING,
}


# --- The configuration -------------------------------------------------------------


@dataclass(frozen=True)
class Hours:
    """The hours the programme schedules games, in minutes of the day (the central server's zone).

    ``end`` before ``start`` runs over midnight (``18:00-02:00``).
    """

    start: int
    end: int

    @classmethod
    def parse(cls, text: object) -> "Hours":
        """``HH:MM-HH:MM``, or :class:`ConfigError` saying what it should be."""
        match = _HOURS.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise ConfigError("hours", f"is HH:MM-HH:MM, when the programme starts and stops scheduling games, not {text!r}")
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        hours = cls(h1 * 60 + m1, h2 * 60 + m2)
        if hours.start == hours.end:
            raise ConfigError("hours", f"{text} is no time at all; a programme that never stops needs no hours")
        return hours

    def open_at(self, minute: int) -> bool:
        """Whether minute ``minute`` of the day (0-1439) is inside the hours."""
        if self.start < self.end:
            return self.start <= minute < self.end
        return minute >= self.start or minute < self.end

    def __str__(self) -> str:
        return f"{self.start // 60:02d}:{self.start % 60:02d}-{self.end // 60:02d}:{self.end % 60:02d}"


@dataclass(frozen=True)
class ProgrammeConfig:
    """The programme: the template of its games and when it schedules them.

    ``template`` holds a game's settings as :meth:`NetworkGameConfig.from_dict` takes
    them, without ``game_id`` and ``library_digest`` (each game gets its id, the series'
    digest comes from the library); its prizes' ``carry_in_cents`` go to the chain's first
    game only (what the games before the programme left), every later game taking the
    carries of the one before it.
    """

    template: Mapping[str, Any]
    id_prefix: str = "net"
    opens_after_ms: int = 60_000
    games: int | None = None
    hours: Hours | None = None

    def __post_init__(self) -> None:
        try:
            PREFIX.check("id_prefix", self.id_prefix)
        except CentralMessageError as error:
            raise ConfigError("id_prefix", str(error).removeprefix("id_prefix ")) from None
        _opens_after("opens_after_ms", self.opens_after_ms)
        if self.games is not None and (isinstance(self.games, bool) or not isinstance(self.games, int)
                                       or not 1 <= self.games <= 1_000_000):
            raise ConfigError("games", f"is how many games the programme plays, 1 or more, not {self.games!r}")
        for computed in ("game_id", "library_digest"):
            if computed in self.template:
                raise ConfigError(f"game.{computed}", "is the programme's to set; leave it out")
        try:
            self.game_config("x", "0" * 64)
        except ConfigError as error:
            raise ConfigError(f"game.{error.field}", str(error).removeprefix(f"{error.field}: ")) from None

    def game_config(self, game_id: str, digest: str, *, prizes: Sequence[PrizeShare] | None = None,
                    overrides: Mapping[str, int] | None = None) -> NetworkGameConfig:
        """A game of the programme: the template, ``prizes`` in place of its own if given, ``overrides``."""
        settings = {**self.template, **(overrides or {}), "game_id": game_id, "library_digest": digest}
        config = NetworkGameConfig.from_dict(settings)
        if prizes is not None:
            config = NetworkGameConfig(**{**_fields(config), "prizes": tuple(prizes)})
        return config

    @property
    def first_carries(self) -> dict[str, int]:
        """What the template says the games before the programme carried, by pattern."""
        return {str(p["pattern"]["name"]): int(p.get("carry_in_cents", 0)) for p in self.template["prizes"]}


def _fields(config: NetworkGameConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in config.__dataclass_fields__}


def _opens_after(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_OPENS_AFTER_MS:
        raise ConfigError(field, f"is 0 to {MAX_OPENS_AFTER_MS} milliseconds (a day), not {value!r}")
    return value


def prizes_of_terms(terms: Sequence[Mapping[str, Any]]) -> tuple[PrizeShare, ...]:
    """The prizes of the terms in force (``prize_terms_notified``'s ``prizes``), with no carry yet."""
    try:
        return tuple(PrizeShare(pattern_from_dict(t["pattern"]), int(t["basis_points"])) for t in terms)
    except (KeyError, TypeError, ValueError, PatternError) as error:
        raise EventError(f"the prize terms in force cannot be read: {error}") from None


# --- The carries (R88.5) -----------------------------------------------------------


def chained_carries(taken: Mapping[str, int], patterns: Sequence[str]) -> dict[str, int]:
    """What a game playing ``patterns`` carries in from a game that carried out ``taken``.

    Each prize takes the carry of the prize of the same name; a carry whose pattern this
    game does not play goes to its bingo.  The sum is kept to the cent.
    """
    if BINGO.name not in patterns:
        raise ConfigError("prizes", "every game plays the bingo (R94.2)")
    carries = {name: int(taken.get(name, 0)) for name in patterns}
    carries[BINGO.name] += sum(int(cents) for name, cents in taken.items() if name not in carries)
    return carries


def with_carries(prizes: Sequence[PrizeShare], carries: Mapping[str, int]) -> tuple[PrizeShare, ...]:
    return tuple(PrizeShare(p.pattern, p.basis_points, int(carries.get(p.name, 0))) for p in prizes)


def next_id(prefix: str, day: str, taken: set[str] | frozenset[str]) -> str:
    """The id scheme: ``<prefix>-<day>-<n>``, ``n`` one more than the highest of that day taken."""
    head = f"{prefix}-{day}-"
    numbers = [int(g[len(head):]) for g in taken if g.startswith(head) and g[len(head):].isdigit()]
    return f"{head}{max(numbers, default=0) + 1}"


# --- The chain, folded from the journal ---------------------------------------------


@dataclass
class Link:
    """A game of the chain: who scheduled it, and what it carried out once it was over."""

    game_id: str
    by: str
    carries_out: dict[str, int] | None = None  # None: under way

    @property
    def over(self) -> bool:
        return self.carries_out is not None


@dataclass(frozen=True)
class Local:
    """What the calendar says now, in the central server's time zone."""

    day: str  # YYYY-MM-DD: the day in a game's id
    in_hours: bool = True
    hours_open_ms: int | None = None  # outside the hours: when they open next


@dataclass(frozen=True)
class Wait:
    """No game is scheduled now; ``until_ms``: look again then (the programme's hours)."""

    reason: str
    until_ms: int | None = None


@dataclass(frozen=True)
class OneOff:
    """The operator's one-off game: its id (or the scheme's) and the settings chosen."""

    game_id: str | None = None
    settings: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.settings) - set(ONE_OFF_SETTINGS))
        if unknown:
            raise BadArgument(f"{unknown[0]} is not a setting of a one-off game ({', '.join(ONE_OFF_SETTINGS)})")
        if self.game_id is not None:
            try:
                wire.GAME_ID.check("game_id", self.game_id)
            except CentralMessageError as error:
                raise BadArgument(str(error)) from None


class Chain:
    """The programme's state: the chain of games, paused or running, the one-off waiting.

    Built by folding records (:meth:`apply`); decisions read it and return records.
    """

    def __init__(self) -> None:
        self.links: list[Link] = []
        self._link: dict[str, Link] = {}
        self.phase = Phase.RUNNING
        self.paused_reason: str | None = None
        self.queued: CentralGameQueued | None = None
        self.programme_games = 0
        self.taken: set[str] = set()

    @property
    def tail(self) -> Link | None:
        """The chain's last game."""
        return self.links[-1] if self.links else None

    def link(self, game_id: str) -> Link | None:
        return self._link.get(game_id)

    # --- The fold ----------------------------------------------------------------

    def apply(self, event: CentralRecord) -> None:
        if isinstance(event, CentralGameScheduled):
            self.taken.add(event.game_id)
            if event.chain is not None:
                self._chained(event)
        elif isinstance(event, (CentralGameClosed, CentralGameNotPlayed)):
            link = self._link.get(event.game_id)
            if link is not None:
                link.carries_out = dict(event.carries)
        elif isinstance(event, (CentralProgrammePaused, CentralProgrammeResumed)):
            input = Input.PAUSED if isinstance(event, CentralProgrammePaused) else Input.RESUMED
            target = TABLE.get((self.phase, input))
            if target is None:
                raise EventError(f"{event.type} cannot follow a programme that is {self.phase}")
            self.phase = target
            self.paused_reason = event.reason if isinstance(event, CentralProgrammePaused) else None
        elif isinstance(event, CentralGameQueued):
            if self.queued is not None:
                raise EventError(f"game {event.game_id} is queued while {self.queued.game_id} still waits")
            self.queued = event
            self.taken.add(event.game_id)

    def _chained(self, event: CentralGameScheduled) -> None:
        tail = self.tail
        if event.after_game != (tail.game_id if tail else None):
            raise EventError(
                f"game {event.game_id} follows {event.after_game or 'no game'}, but the chain's last game is "
                f"{tail.game_id if tail else 'none'}: each game's carries go to one game"
            )
        if tail is not None and (not tail.over or dict(event.carries_taken or {}) != tail.carries_out):
            raise EventError(
                f"game {event.game_id} takes the carries {dict(event.carries_taken or {})} of {tail.game_id}, "
                f"which carried out {tail.carries_out if tail.over else 'nothing yet (it is under way)'}"
            )
        link = Link(event.game_id, str(event.chain))
        self.links.append(link)
        self._link[event.game_id] = link
        if event.chain == BY_PROGRAMME:
            self.programme_games += 1
        if self.queued is not None and self.queued.game_id == event.game_id:
            self.queued = None

    # --- What comes next ---------------------------------------------------------

    def next_game(self, programme: ProgrammeConfig | None, *, now_ms: int, local: Local,
                  prizes: Sequence[PrizeShare], digest: str) -> CentralGameScheduled | Wait:
        """The game to schedule now, or why none is (and when to look again).

        ``prizes`` are the prize terms in force now (R94.3: a game on terms not yet in
        force is not scheduled; the programme plays the terms in force until then).
        """
        tail = self.tail
        if tail is not None and not tail.over:
            return Wait(f"game {tail.game_id} of the chain is under way")
        if programme is None:
            return Wait("this central server has no programme ([programme] in central.toml)")
        if self.queued is not None:
            one_off = OneOff(self.queued.game_id, dict(self.queued.settings))
            return self._scheduled(programme, one_off.game_id or "", BY_OPERATOR, prizes, digest, one_off.settings)
        if self.phase is Phase.PAUSED:
            return Wait(f"the programme is paused ({self.paused_reason})")
        if programme.games is not None and self.programme_games >= programme.games:
            return Wait(f"the programme has played its {programme.games} game(s)")
        if not local.in_hours:
            assert local.hours_open_ms is not None and local.hours_open_ms > now_ms
            return Wait("outside the programme's hours", local.hours_open_ms)
        game_id = next_id(programme.id_prefix, local.day, self.taken)
        return self._scheduled(programme, game_id, BY_PROGRAMME, prizes, digest, {})

    def _scheduled(self, programme: ProgrammeConfig, game_id: str, by: str, prizes: Sequence[PrizeShare],
                   digest: str, settings: Mapping[str, int]) -> CentralGameScheduled:
        tail = self.tail
        names = [p.name for p in prizes]
        taken = tail.carries_out if tail is not None else None
        carries = chained_carries(taken, names) if taken is not None else programme.first_carries
        overrides = {k: v for k, v in settings.items() if k != "opens_after_ms"}
        config = programme.game_config(game_id, digest, prizes=with_carries(prizes, carries), overrides=overrides)
        return CentralGameScheduled(
            game_id=game_id, config=config.to_dict(), chain=by,
            after_game=tail.game_id if tail is not None else None,
            carries_taken=dict(taken) if taken is not None else None,
            opens_after_ms=settings.get("opens_after_ms", programme.opens_after_ms),
        )  # fmt: skip

    # --- The operator's commands --------------------------------------------------

    def pause(self, reason: str) -> list[CentralRecord]:
        """Pause the programme: no game of it is scheduled until it is resumed."""
        text = _reason(reason)
        if (self.phase, Input.PAUSED) not in TABLE:
            raise NotNow(f"the programme is already paused ({self.paused_reason})")
        return [CentralProgrammePaused(reason=text)]

    def resume(self) -> list[CentralRecord]:
        if (self.phase, Input.RESUMED) not in TABLE:
            raise NotNow("the programme is running; there is nothing to resume")
        return [CentralProgrammeResumed()]

    def one_off(self, programme: ProgrammeConfig | None, request: OneOff, *, now_ms: int, local: Local,
                prizes: Sequence[PrizeShare], digest: str) -> CentralGameScheduled | CentralGameQueued:
        """The operator's one-off game: scheduled now if the chain's last game is over, else queued after it."""
        if programme is None:
            raise NotNow("this central server has no programme ([programme] in central.toml): a one-off game "
                         "is a game of the programme's template, chained to its games")
        if self.queued is not None:
            raise NotNow(f"one-off game {self.queued.game_id} already waits for {self.queued.after_game}; "
                         "schedule the next one once it is scheduled")
        game_id = request.game_id or next_id(programme.id_prefix, local.day, self.taken)
        if game_id in self.taken:
            raise NotNow(f"there is already a network game {game_id}; choose another id")
        settings = dict(request.settings)
        _opens_after("opens_after_ms", settings.get("opens_after_ms", programme.opens_after_ms))
        overrides = {k: v for k, v in settings.items() if k != "opens_after_ms"}
        programme.game_config(game_id, digest, prizes=prizes, overrides=overrides)  # refuses what breaks a rule
        tail = self.tail
        if tail is not None and not tail.over:
            return CentralGameQueued(game_id=game_id, after_game=tail.game_id, settings=settings)
        return self._scheduled(programme, game_id, BY_OPERATOR, prizes, digest, settings)


# --- The chain of a day, checked (the audit export) --------------------------------------


class ChainBroken(CentralError):
    """Games whose carries do not chain (R88.5); the message names the game and the link."""

    code = "internal_error"


def check_links(games: Sequence[tuple[CentralGameScheduled, Mapping[str, int]]]) -> tuple[str, ...]:
    """The chain through ``games`` (ended games in the order scheduled, each with its carries out).

    Every game of the chain must follow the one before it in ``games`` and take exactly its
    carries, and carry them in by the rule of :func:`chained_carries`; the first may follow
    a game outside ``games`` (the day before), whose carries only its own record vouches
    for.  Games of ``[[games]]`` are not in the chain and are passed over.  Returns the
    chain's game ids; raises :class:`ChainBroken` at the first link that does not hold.
    """
    chain: list[str] = []
    previous: tuple[str, dict[str, int]] | None = None
    for event, carries_out in games:
        if event.chain is None:
            continue
        carried_in = {str(p["pattern"]["name"]): int(p.get("carry_in_cents", 0)) for p in event.config["prizes"]}
        if event.after_game is None:
            if previous is not None:
                raise ChainBroken(f"network game {event.game_id} starts a chain of its own after {previous[0]}, "
                                  f"whose carries {previous[1]} no game takes (R88.5)")
        else:
            taken = {str(k): int(v) for k, v in (event.carries_taken or {}).items()}
            if previous is not None and event.after_game != previous[0]:
                raise ChainBroken(f"network game {event.game_id} follows {event.after_game}, but the game of the "
                                  f"chain before it is {previous[0]}, whose carries no game takes (R88.5)")
            if previous is not None and taken != previous[1]:
                raise ChainBroken(f"network game {event.game_id} took the carries {taken} of {previous[0]}, which "
                                  f"carried out {previous[1]} (R88.5)")
            expected = chained_carries(taken, list(carried_in))
            if carried_in != expected:
                raise ChainBroken(f"network game {event.game_id} carries in {carried_in}; the carries it took, "
                                  f"{taken}, make {expected} (R88.5)")
        previous = (event.game_id, {str(k): int(v) for k, v in carries_out.items()})
        chain.append(event.game_id)
    return tuple(chain)


def _reason(reason: object) -> str:
    try:
        text = str(wire.REASON.check("reason", reason))
    except CentralMessageError as error:
        raise BadArgument(str(error)) from None
    if not text.strip():
        raise BadArgument("say why the programme is paused; the reason goes into the record")
    return text


__all__ = [
    "BY_OPERATOR",
    "BY_PROGRAMME",
    "ONE_OFF_SETTINGS",
    "ChainBroken",
    "check_links",
    "TABLE",
    "Chain",
    "Hours",
    "Input",
    "Link",
    "Local",
    "OneOff",
    "Phase",
    "ProgrammeConfig",
    "Wait",
    "chained_carries",
    "next_id",
    "prizes_of_terms",
    "with_carries",
]

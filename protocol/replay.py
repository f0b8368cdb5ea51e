"""The audit replay (FORMATS.md section 2): recompute every prize and pot from raw facts.

:func:`replay_json` takes the scenario's bytes and returns the result's text, or raises
:class:`ReplayError` whose message names the session date, the game and the field at
fault (``rules.line_bp``-style outside ``sessions``).  It works in two stages:

1. :func:`parse_scenario` checks the input's shape, types and ranges, card by card and
   ball by ball, and finds each game's line and bingo winners (a draw that never
   reaches a bingo is invalid input).
2. :func:`replay` runs the per-game computation of the format in its order (steps
   1-12), refusing any limit that would be exceeded.

Two versions are read (``docs/replay.md``): ``bingo-replay/1``, where every card complete
on the first ball any is wins, and ``bingo-replay/2``, the hall's claim pause (R85.6): a
paper card (``"paper": true``) shares a prize only if its claim was verified before the
prize closed (the game's ``claims``), and the draw is every ball the hall drew
(``corrections`` names the balls misread and corrected, R85.5).  The result is of the
input's version.

A session may also hold **joint games** (``joint_games``): the games a hall played with
its partner hall (R3.5.b), with the pool of both rooms' sales, this hall's cards, the
partner's winning cards and what this hall owes its partner; they are replayed through
:mod:`protocol.annex`, the settlement both halls run (``docs/replay.md``, "Joint games").

**Versions.**  ``bingo-replay/2`` (the format the hall's audit export writes) replays
the pots as the regulation is read now (:data:`protocol.settlement.RULING`): a game
marked ``last_game`` (the session's last, R93.15) takes the superbingo fund whenever
its own superbingo did not pay it, and the megabingo pays its whole fund, its
``megabingo_cents`` being the least announced.  ``bingo-replay/1`` files replay as the
days they record were paid (:data:`protocol.settlement.FIRST_RULING`): the session's
last game in the file takes only a superbingo its latest superbingo game did not win,
and the megabingo pays the amount announced.  Version 2 also says how a prize is shared
among its winners (``rules.sharing``: the hall's way by default, or ``by_stake``, the
network game's whole prize by stake, R93.13); version 1 shares the hall's way.  The
result says the version of its input (``bingo-replay-result/1`` or ``/2``).
``bingo-replay/3`` is version 2 with each session numbered (``session``), so that a date may
hold several sessions (the result's games say their session, and R89.5 counts the date), the
fixed sums the line and the bingo never fall below (``rules.line_minimum_cents``,
``rules.bingo_minimum_cents``, R88.3), and the tax of a game with cards refunded after its
close taken on the amounts staked, net of those refunds (R98).
``bingo-replay/4`` is version 3 with the network game's other winning patterns (``rules.patterns``,
R93.11): each a shape of :mod:`protocol.patterns` with its share of the sales, found by the system
on every card, won on the first ball a card completes it up to the bingo's, shared whole by stake
(R93.13), and carried whole into the next game's prize of the same name when no card completes it
in time (``opening.carry_NAME``, the result's ``pots.carry_NAME``).

Where the format is silent this module decides as ``docs/replay.md`` records: unknown
or repeated keys are refused, ``null`` means "absent" only for a game's optional keys,
the total of the prize shares may not exceed 100%, ``sessions`` and each session's
``games`` may not be empty, and the operator's monthly jackpot allowance starts unused
at the file's first session.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, NoReturn, Sequence, TypeVar

import numpy as np

from protocol.annex import JointClaim, joint_pool, joint_rules_refusal, owed_to_partner, prize_shares
from protocol.cards import Card, CardError, card_of_rows, whole_rows
from protocol.errors import DomainError
from protocol.json_values import describe
from protocol.patterns import Pattern, PatternError, PrizeShare, completion_ball, pattern_from_dict, pattern_to_dict
from protocol.settlement import (
    BASIS_POINTS,
    BY_STAKE,
    FIRST_RULING,
    GRAND_SUPERBINGO_CAP,
    JACKPOT_CAP,
    JACKPOT_THRESHOLDS,
    MEGABINGO_NOTICE_DAYS,
    PAYOUT_FLOOR_BP,
    POT_PRIZES,
    SUPERBINGO_BP_MAX,
    SUPERBINGO_BP_MIN,
    SUPERBINGO_LIMITS,
    Pots,
    PotRuling,
    PotsInPlay,
    PayoutFloorError,
    PrizeError,
    PrizeRules,
    RULING,
    Split,
    bingo_pot_prizes,
    carry_forward,
    check_reserve_boost,
    close_sale,
    game_sales,
    operator_contribution,
    reserve_boost_allowance,
    share_by_stake,
    share_of_sales,
    split_prize,
    stake_cents,
    tax_base_after_refunds,
    tax_cents,
)
from protocol.wins import NEVER, completion_balls, game_winners

#: The formats written now, and the first ones, which stay readable.
INPUT_FORMAT = "bingo-replay/2"
OUTPUT_FORMAT = "bingo-replay-result/2"
FIRST_INPUT_FORMAT = "bingo-replay/1"
FIRST_OUTPUT_FORMAT = "bingo-replay-result/1"
#: Version 3: version 2 with each session numbered (``session``), so that one date may hold several
#: sessions (a hall that closed its session and opened another the same day), its result's games
#: saying their session; the rules' fixed sums (R88.3); and the tax of a game with cards refunded
#: after its close on the amounts staked, the collection less those refunds (R98, as the hall posts
#: it).  The hall's export writes it only for a day that needs one of these.
SESSIONS_INPUT_FORMAT = "bingo-replay/3"
SESSIONS_OUTPUT_FORMAT = "bingo-replay-result/3"
#: Version 4: version 3 with the network game's other winning patterns (``rules.patterns``, R93.11), each
#: with its share of the sales and its carry; the central server writes it for a day whose games play one.
PATTERNS_INPUT_FORMAT = "bingo-replay/4"
PATTERNS_OUTPUT_FORMAT = "bingo-replay-result/4"
#: The versions whose sessions are numbered, with the fixed sums and the tax net of refunds after the close.
NUMBERED_FORMATS = (SESSIONS_INPUT_FORMAT, PATTERNS_INPUT_FORMAT)
#: Each input format with the result format it gives and the ruling its pots are paid under.
VERSIONS: dict[str, tuple[str, PotRuling]] = {
    FIRST_INPUT_FORMAT: (FIRST_OUTPUT_FORMAT, FIRST_RULING),
    INPUT_FORMAT: (OUTPUT_FORMAT, RULING),
    SESSIONS_INPUT_FORMAT: (SESSIONS_OUTPUT_FORMAT, RULING),
    PATTERNS_INPUT_FORMAT: (PATTERNS_OUTPUT_FORMAT, RULING),
}
INPUT_FORMATS = tuple(VERSIONS)
OUTPUT_FORMATS = tuple(output for output, _ in VERSIONS.values())
#: ``rules.sharing`` (version 2 only): how a prize is shared among its winners.  ``hall``, the
#: default: card c is paid ``P * stake_pct_c // (100 * W)`` and the rest carries (R88.4-5);
#: ``by_stake``: the network game's, the whole prize in proportion to each card's stake in
#: cents, the cents by the largest remainder, nothing carried (R93.13).
SHARINGS = ("hall", BY_STAKE)

SUPERBINGO_LIMIT_MIN, SUPERBINGO_LIMIT_MAX = SUPERBINGO_LIMITS[0], SUPERBINGO_LIMITS[-1]


T = TypeVar("T")


class ReplayError(DomainError):
    """Invalid replay input; the message names where (session date, game, field)."""


# --- Where a fault is -------------------------------------------------------------


@dataclass(frozen=True)
class _At:
    """A field's place in the scenario, for error messages."""

    context: str  # "" outside sessions, else "session 2026-12-01, game 3"
    path: str  # "rules.line_bp", "cards[2].stake_pct"

    def __getitem__(self, key: str | int) -> "_At":
        if isinstance(key, int):
            return _At(self.context, f"{self.path}[{key}]")
        return _At(self.context, f"{self.path}.{key}" if self.path else key)

    def fail(self, message: str) -> NoReturn:
        if self.context:
            where = f"{self.context}, field {self.path}" if self.path else self.context
        else:
            where = self.path
        # One line on stderr whatever the input holds: newlines are shown escaped.
        raise ReplayError(f"{where}: {message}".replace("\n", "\\n").replace("\r", "\\r"))


def _integer(value: Any, at: _At, lo: int | None = None, hi: int | None = None) -> int:
    # bool is a subclass of int in Python; JSON true/false are not integers.
    if isinstance(value, bool) or not isinstance(value, int):
        at.fail(f"must be a JSON integer, got {describe(value)}")
    if lo is not None and value < lo:
        at.fail(f"must be at least {lo}, got {value}")
    if hi is not None and value > hi:
        at.fail(f"must be at most {hi}, got {value}")
    return value


def _boolean(value: Any, at: _At) -> bool:
    if not isinstance(value, bool):
        at.fail(f"must be true or false, got {describe(value)}")
    return value


def _object(value: Any, at: _At, required: tuple[str, ...], optional: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        at.fail(f"must be an object, got {describe(value)}")
    for key in required:
        if key not in value:
            at[key].fail("is missing")
    for key in value:
        if key not in required and key not in optional:
            at[key].fail("is not a key of this format (misspelt?)")
    return value


def _array(value: Any, at: _At) -> list:
    if not isinstance(value, list):
        at.fail(f"must be an array, got {describe(value)}")
    return value


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _date(value: Any, at: _At) -> datetime.date:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        at.fail(f"must be a YYYY-MM-DD date, got {describe(value)}")
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        at.fail(f"{value} is not a calendar date")


# --- The scenario -----------------------------------------------------------------


@dataclass(frozen=True)
class CardPlay:
    """A card in a game: its id, the percentage of the price staked and its cells.

    ``paper``: a card that wins only when its player's claim is verified in time (version 2).
    """

    id: str
    stake_pct: int
    cells: tuple[int, ...]
    paper: bool = False


@dataclass(frozen=True)
class Winners:
    """A pattern's winners: the 1-based ball count and the winning cards' positions."""

    ball: int
    cards: tuple[int, ...]


@dataclass(frozen=True)
class GamePlay:
    """One game of the scenario, validated, with its line and bingo winners found."""

    game: int
    price_cents: int
    cards: tuple[CardPlay, ...]
    draw: tuple[int, ...]
    #: The line's and the bingo's winners; None for both when no card is left in play.
    line: Winners | None
    bingo: Winners | None
    superbingo_limit: int | None = None
    grand_superbingo_limit: int | None = None
    jackpot_threshold: int | None = None
    megabingo_cents: int | None = None
    operator_superbingo: int = 0
    operator_grand_superbingo: int = 0
    operator_jackpot: int = 0
    boost_line: int = 0
    boost_bingo: int = 0
    #: Cards counted in the sales at the close and refunded by the house afterwards (a failed
    #: terminal, R96.3): ``(id, stake_pct)``; they play no part in the draw.
    refunded_after_close: tuple[tuple[str, int], ...] = ()
    last_game: bool = False  # announced as the session's last (R93.15); bingo-replay/2 only
    #: Balls drawn in the game: the bingo's ball (version 1), or every ball of the draw (bingo-replay/2).
    balls_drawn: int = 0
    #: Each of ``rules.patterns``' winners (version 4), in its order; None for a pattern no card completes
    #: by the bingo's ball.
    extras: tuple[Winners | None, ...] = ()


@dataclass(frozen=True)
class JointPlay:
    """A joint game of the scenario (R3.5.b): this hall's cards, the partner's sales and winning cards."""

    game_id: str
    after_game: int
    role: str  # "main" or "annex": which of the two halls this one is
    partner: str
    price_cents: int
    rules: PrizeRules
    partner_cards: int
    partner_sales_cents: int
    cards: tuple[CardPlay, ...]
    partner_winners: tuple[CardPlay, ...]
    draw: tuple[int, ...]
    line: Winners  # positions in cards + partner_winners
    bingo: Winners


@dataclass(frozen=True)
class Session:
    date: datetime.date
    games: tuple[GamePlay, ...]
    joint_games: tuple[JointPlay, ...] = ()
    number: int | None = None  # the session's number on its date (bingo-replay/3 and /4)

    @property
    def name(self) -> str:
        """How messages name the session: its date, and in version 3 its number (``2026-12-01-s2``)."""
        return str(self.date) if self.number is None else f"{self.date}-s{self.number}"

    def stamp(self) -> dict[str, Any]:
        """The keys that name the session in each game of the result: ``date`` (and ``session`` in version 3)."""
        return {"date": self.date.isoformat(), **({} if self.number is None else {"session": self.number})}


@dataclass(frozen=True)
class Scenario:
    rules: PrizeRules
    opening: Pots
    sessions: tuple[Session, ...]
    format: str = INPUT_FORMAT
    #: How prizes are shared (version 2's ``rules.sharing``; version 1 shares the hall's way).
    sharing: str = "hall"
    #: The other winning patterns (version 4's ``rules.patterns``), in their order of announcement, each
    #: with its share and what the opening carries into it.
    patterns: tuple[PrizeShare, ...] = ()

    @property
    def result_format(self) -> str:
        return VERSIONS[self.format][0]

    @property
    def ruling(self) -> PotRuling:
        return VERSIONS[self.format][1]

    def tax(self, figures_tax: int, sales: int, refunded: int) -> int:
        """Step 12's tax: on the whole collection (versions 1 and 2, ``figures_tax``), or in version 3 on the
        amounts staked, the collection less the stakes refunded after the close (R98)."""
        if self.format not in NUMBERED_FORMATS or not refunded:
            return figures_tax
        return tax_cents(tax_base_after_refunds(sales, refunded))


_GAME_REQUIRED = ("game", "price_cents", "cards", "draw")
_GAME_OPTIONAL = (
    "superbingo_limit",
    "grand_superbingo_limit",
    "jackpot_threshold",
    "megabingo_cents",
    "megabingo_announced",
    "operator",
    "reserve_boost",
    "refunded_after_close",
)
#: What ``bingo-replay/2`` adds to a game: the session's last game, the paper cards' claims
#: verified in time and the balls corrected.
_GAME_OPTIONAL_2 = ("last_game", "claims", "corrections")
#: The patterns every game plays (R94.2); version 4's ``rules.patterns`` lists the others.
PATTERN_NAMES = ("line", "bingo")


def network_day_format(*, other_patterns: bool, refunds_after_close: bool) -> str:
    """The version a central server's day of network games is written in: 4 when its games play other
    patterns than the line and the bingo, 3 when cards were refunded after a sale's close (the tax net of
    them, R98), 2 otherwise."""
    if other_patterns:
        return PATTERNS_INPUT_FORMAT
    return SESSIONS_INPUT_FORMAT if refunds_after_close else INPUT_FORMAT


def day_stamp(date: str, version: str) -> dict[str, Any]:
    """What names a day of one session in each of its games: its date, and in the numbered versions (3
    and 4) its session, 1."""
    return {"date": date, **({"session": 1} if version in NUMBERED_FORMATS else {})}


#: What ``bingo-replay/3`` adds to the rules: the fixed sums the line and the bingo never fall below (R88.3).
_RULES_FIXED_SUMS = ("line_minimum_cents", "bingo_minimum_cents")


def _parse_rules(value: Any, version: str = INPUT_FORMAT, extra_bp: int = 0) -> PrizeRules:
    """The rules; ``extra_bp``, the shares of ``rules.patterns`` (version 4), counts in the 70% floor and the 100%."""
    at = _At("", "rules")
    data = _object(value, at, ("line_bp", "bingo_bp"), ("superbingo_bp", "megabingo", "jackpot")
                   + (_RULES_FIXED_SUMS if version in NUMBERED_FORMATS else ()))
    superbingo_bp = _integer(data.get("superbingo_bp", 0), at["superbingo_bp"], 0)
    # Checked here as well as by PrizeRules.check so that the message names the field.
    if superbingo_bp and not SUPERBINGO_BP_MIN <= superbingo_bp <= SUPERBINGO_BP_MAX:
        at["superbingo_bp"].fail(
            f"must be 0 (no superbingo) or {SUPERBINGO_BP_MIN}..{SUPERBINGO_BP_MAX}, "
            f"got {superbingo_bp}"
        )
    rules = PrizeRules(
        line_bp=_integer(data["line_bp"], at["line_bp"], 0),
        bingo_bp=_integer(data["bingo_bp"], at["bingo_bp"], 0),
        superbingo_bp=superbingo_bp,
        megabingo=_boolean(data.get("megabingo", False), at["megabingo"]),
        jackpot=_boolean(data.get("jackpot", False), at["jackpot"]),
        line_minimum_cents=_integer(data.get("line_minimum_cents", 0), at["line_minimum_cents"], 0),
        bingo_minimum_cents=_integer(data.get("bingo_minimum_cents", 0), at["bingo_minimum_cents"], 0),
    )
    try:
        rules.check()
    except PayoutFloorError as error:
        if rules.payout_bp + extra_bp < PAYOUT_FLOOR_BP:
            at.fail(f"{error}" if not extra_bp else
                    f"line, bingo and the other patterns total {rules.payout_bp + extra_bp} basis points of sales; "
                    f"prizes must take at least {PAYOUT_FLOOR_BP} (70%, R88.1, R94.1)")
    except PrizeError as error:
        at.fail(str(error))
    if extra_bp and rules.payout_bp + extra_bp > BASIS_POINTS:
        at.fail(f"line, bingo and the other patterns total {rules.payout_bp + extra_bp} basis points of sales, "
                f"more than the {BASIS_POINTS} (100%) a game collects")
    return rules


#: The keys of an entry of ``rules.patterns`` besides its shape (``rows``, ``cells`` or ``positions``).
_PATTERN_KEYS = ("name", "bp")
_SHAPES = ("rows", "cells", "positions")


def pattern_rule(pattern: Pattern, bp: int) -> dict[str, Any]:
    """An entry of ``rules.patterns`` (version 4): the pattern's name, its share and its shape."""
    shape = pattern_to_dict(pattern)
    return {"name": shape.pop("name"), "bp": bp, **shape}


def _parse_patterns(value: Any) -> tuple[PrizeShare, ...]:
    """``rules.patterns`` (version 4): the winning patterns beyond the line and the bingo, in their order."""
    at = _At("", "rules")["patterns"]
    out: list[PrizeShare] = []
    for k, entry in enumerate(_array(value, at)):
        data = _object(entry, at[k], _PATTERN_KEYS, _SHAPES)
        name = data["name"]
        if name in PATTERN_NAMES:
            at[k]["name"].fail(f"{json.dumps(name)} is always played; rules.patterns lists the others")
        if any(extra.name == name for extra in out):
            at[k]["name"].fail(f"{json.dumps(name)} is already the name of rules.patterns[{[e.name for e in out].index(name)}]")
        bp = _integer(data["bp"], at[k]["bp"], 1, BASIS_POINTS)
        try:
            pattern = pattern_from_dict({key: v for key, v in data.items() if key != "bp"})
        except PatternError as error:
            at[k].fail(str(error))
        out.append(PrizeShare(pattern, bp))
    return tuple(out)


def _parse_opening(value: Any, extras: tuple[PrizeShare, ...] = ()) -> tuple[Pots, tuple[PrizeShare, ...]]:
    """The pots before the file's first game, and ``extras`` with what the opening carries into each
    (``carry_NAME``, version 4)."""
    at = _At("", "opening")
    names = tuple(field.name for field in dataclasses.fields(Pots))
    data = _object(value, at, (), names + tuple(f"carry_{extra.name}" for extra in extras))
    caps = {"jackpot_accumulated": JACKPOT_CAP, "grand_superbingo": GRAND_SUPERBINGO_CAP}
    pots = Pots(**{name: _integer(data.get(name, 0), at[name], 0, caps.get(name)) for name in names})
    carried = tuple(dataclasses.replace(extra, carry_in_cents=_integer(
        data.get(f"carry_{extra.name}", 0), at[f"carry_{extra.name}"], 0)) for extra in extras)
    return pots, carried


def _parse_cards(value: Any, at: _At, *, may_be_empty: bool = False,
                 seen: dict[str, dict[Any, str]] | None = None, paper: bool = False) -> tuple[CardPlay, ...]:
    """The cards of ``value``; ``seen`` carries the ids and numbers of another list of the same game.

    ``paper``: a card may say it is a paper card (version 2).
    """
    entries = _array(value, at)
    if not entries and not may_be_empty:
        at.fail("a game needs at least one card")
    cards: list[CardPlay] = []
    ids: dict[str, Any] = dict((seen or {}).get("ids", {}))
    fingerprints: dict[int, Any] = dict((seen or {}).get("prints", {}))
    for i, entry in enumerate(entries):
        card_at = at[i]
        data = _object(entry, card_at, ("id", "stake_pct", "rows"), ("paper",) if paper else ())
        card_id = data["id"]
        if not isinstance(card_id, str) or not card_id:
            card_at["id"].fail(f"must be a non-empty string, got {describe(card_id)}")
        if card_id in ids:
            first = ids[card_id]
            card_at["id"].fail(f"{json.dumps(card_id)} is already the id of "
                               + (f"cards[{first}]" if isinstance(first, int) else first))
        ids[card_id] = i
        stake_pct = _integer(data["stake_pct"], card_at["stake_pct"], 1, 100)
        rows_at = card_at["rows"]
        rows = data["rows"]
        if not whole_rows(rows, (list,)):  # most cards of a file; else found again number by number, to name the one at fault
            for r, row in enumerate(_array(rows, rows_at)):
                for c, number in enumerate(_array(row, rows_at[r])):
                    _integer(number, rows_at[r][c])
        try:
            card = card_of_rows(tuple(tuple(row) for row in rows))
        except CardError as error:
            rows_at.fail(f"not a valid card: {error}")
        if card.fingerprint in fingerprints:
            first = fingerprints[card.fingerprint]
            shown = f"cards[{first}] ({json.dumps(entries[first]['id'])})" if isinstance(first, int) else first
            rows_at.fail(f"the same numbers as {shown}")
        fingerprints[card.fingerprint] = i
        is_paper = _boolean(data.get("paper", False), card_at["paper"])
        if is_paper and stake_pct != 100:
            card_at["stake_pct"].fail(f"a paper card stakes its whole price (100), not {stake_pct}")
        cards.append(CardPlay(card_id, stake_pct, card.cells, is_paper))
    if seen is not None:
        seen["ids"] = {**seen.get("ids", {}), **{c.id: f"{at.path}[{k}]" for k, c in enumerate(cards)}}
        seen["prints"] = {**seen.get("prints", {}), **{Card(c.cells).fingerprint: f"{at.path}[{k}] ({json.dumps(c.id)})"
                                                         for k, c in enumerate(cards)}}
    return tuple(cards)


def _parse_draw(value: Any, at: _At) -> tuple[int, ...]:
    balls = _array(value, at)
    seen: dict[int, int] = {}
    for i, ball in enumerate(balls):
        number = _integer(ball, at[i], 1, 90)
        if number in seen:
            at[i].fail(f"{number} was already drawn as draw[{seen[number]}]")
        seen[number] = i
    return tuple(balls)


def _winners_v2(data: dict, at: _At, cards: tuple[CardPlay, ...], draw: tuple[int, ...]) -> tuple[Winners, Winners]:
    """The line and bingo winners under the claim pause (R85.6), and the corrections checked (R85.5).

    A card that is not paper is found by the system on the ball it completes a pattern; a
    paper card takes part in a pattern only if ``claims`` lists it for it.  A pattern is won
    on the first ball on which a card taking part in it completes it, by every such card
    complete on that ball; a claim listed that does not win is invalid.
    """
    ids = {card.id: i for i, card in enumerate(cards)}
    claimed: dict[str, set[int]] = {name: set() for name in PATTERN_NAMES}
    claims_at = at["claims"]
    for k, entry in enumerate(_array(data.get("claims") or [], claims_at)):
        claim = _object(entry, claims_at[k], ("card", "pattern"), ())
        card_id, pattern = claim["card"], claim["pattern"]
        if pattern not in PATTERN_NAMES:
            claims_at[k]["pattern"].fail(f"is \"line\" or \"bingo\", not {describe(pattern)}")
        if not isinstance(card_id, str) or card_id not in ids:
            shown = json.dumps(card_id) if isinstance(card_id, str) else describe(card_id)
            claims_at[k]["card"].fail(f"{shown} is not a card of this game")
        if not cards[ids[card_id]].paper:
            claims_at[k]["card"].fail(f"{json.dumps(card_id)} is not a paper card: the system finds its wins itself")
        if ids[card_id] in claimed[pattern]:
            claims_at[k].fail(f"{json.dumps(card_id)} is already claimed for the {pattern}")
        claimed[pattern].add(ids[card_id])
    found = completion_balls(np.array([card.cells for card in cards], dtype=np.uint8), draw)
    winners = []
    for pattern, balls in (("line", found.line), ("bingo", found.bingo)):
        taking_part = [i for i, card in enumerate(cards) if not card.paper or i in claimed[pattern]]
        first = min((int(balls[i]) for i in taking_part), default=NEVER)
        if first == NEVER:
            what = "a bingo" if pattern == "bingo" else "the line"
            at["draw"].fail(f"no card found or claimed completes {what} in the {len(draw)} balls; "
                            "a draw must reach a bingo")
        for i in sorted(claimed[pattern]):
            if int(balls[i]) != first:
                done = "never completes it" if int(balls[i]) == NEVER else f"completes it on ball {int(balls[i])}"
                claims_at.fail(f"{json.dumps(cards[i].id)} is claimed for the {pattern}, won on ball {first}, "
                               f"but {done}")
        winners.append(Winners(first, tuple(i for i in taking_part if int(balls[i]) == first)))
    corrections_at = at["corrections"]
    for k, entry in enumerate(_array(data.get("corrections") or [], corrections_at)):
        correction = _object(entry, corrections_at[k], ("ball", "misread"), ())
        count = _integer(correction["ball"], corrections_at[k]["ball"], 1, len(draw))
        misread = _integer(correction["misread"], corrections_at[k]["misread"], 1, 90)
        if draw[count - 1] == misread:
            corrections_at[k]["misread"].fail(f"ball {count} is {misread} in the draw: a correction names another number")
    return winners[0], winners[1]


def _extra_winners(extras: tuple[PrizeShare, ...], cards: tuple[CardPlay, ...], draw: tuple[int, ...],
                   bingo: Winners, at: _At) -> tuple[Winners | None, ...]:
    """Each of ``rules.patterns``' winners: every card complete on the first ball a card completes it, when
    that ball is not after the bingo's (the game ends with its bingo, R93.12); None otherwise."""
    if not extras:
        return ()
    for k, card in enumerate(cards):
        if card.paper:
            at["cards"][k]["paper"].fail("a game of rules.patterns is a network game, whose cards are virtual")
    layouts = [Card(card.cells) for card in cards]
    winners: list[Winners | None] = []
    for extra in extras:
        balls = [completion_ball(extra.pattern, layout, draw) for layout in layouts]
        first = min((ball for ball in balls if ball is not None), default=None)
        if first is None or first > bingo.ball:
            winners.append(None)
        else:
            winners.append(Winners(first, tuple(i for i, ball in enumerate(balls) if ball == first)))
    return tuple(winners)


def _parse_game(
    data: dict, number: int, at: _At, rules: PrizeRules, date: datetime.date, version: str = INPUT_FORMAT,
    extras: tuple[PrizeShare, ...] = (),
) -> GamePlay:
    def optional(key: str) -> Any:
        return data.get(key)  # absent or null: not in play / zero

    price_cents = _integer(data["price_cents"], at["price_cents"], 1)

    superbingo_limit = optional("superbingo_limit")
    if superbingo_limit is not None:
        _integer(superbingo_limit, at["superbingo_limit"], SUPERBINGO_LIMIT_MIN, SUPERBINGO_LIMIT_MAX)
        if not rules.superbingo_bp:
            at["superbingo_limit"].fail("a superbingo game needs rules.superbingo_bp above 0")
    grand_limit = optional("grand_superbingo_limit")
    if grand_limit is not None:
        _integer(grand_limit, at["grand_superbingo_limit"], SUPERBINGO_LIMIT_MIN, SUPERBINGO_LIMIT_MAX)
        if superbingo_limit is not None:
            at["grand_superbingo_limit"].fail(
                "superbingo and grand superbingo are never in play in the same game (R89)"
            )
    threshold = optional("jackpot_threshold")
    if threshold is not None:
        _integer(threshold, at["jackpot_threshold"])
        if threshold not in JACKPOT_THRESHOLDS:
            at["jackpot_threshold"].fail(f"must be 40, 41 or 42, got {threshold}")
        if not rules.jackpot:
            at["jackpot_threshold"].fail("a jackpot game needs rules.jackpot")
    megabingo_cents = optional("megabingo_cents")
    announced = optional("megabingo_announced")
    if (megabingo_cents is None) != (announced is None):
        missing = "megabingo_announced" if announced is None else "megabingo_cents"
        at[missing].fail("megabingo_cents and megabingo_announced go together")
    if megabingo_cents is not None:
        _integer(megabingo_cents, at["megabingo_cents"], 0)
        announced_on = _date(announced, at["megabingo_announced"])
        if (date - announced_on).days < MEGABINGO_NOTICE_DAYS:
            at["megabingo_announced"].fail(
                f"{announced_on} is less than {MEGABINGO_NOTICE_DAYS} days before the "
                f"session ({date}) (R90)"
            )
        if not rules.megabingo:
            at["megabingo_cents"].fail("a megabingo game needs rules.megabingo")

    contributions: dict[str, int] = {}
    for group, keys in (
        ("operator", ("superbingo", "grand_superbingo", "jackpot")),
        ("reserve_boost", ("line", "bingo")),
    ):
        raw = optional(group)
        fields = {} if raw is None else _object(raw, at[group], (), keys)
        for key in keys:
            contributions[f"{group}.{key}"] = _integer(fields.get(key, 0), at[group][key], 0)

    last_game = optional("last_game")
    if last_game is not None:
        _boolean(last_game, at["last_game"])

    v2 = version != FIRST_INPUT_FORMAT
    refunded = _parse_refunded(optional("refunded_after_close"), at["refunded_after_close"])
    cards = _parse_cards(data["cards"], at["cards"], may_be_empty=bool(refunded), paper=v2)
    for k, card in enumerate(cards):
        if any(card.id == card_id for card_id, _ in refunded):
            at["cards"][k]["id"].fail(f"{json.dumps(card.id)} is also a card of refunded_after_close")
    draw = _parse_draw(data["draw"], at["draw"])
    line = bingo = None
    extra_winners: tuple[Winners | None, ...] = ()
    if cards and v2:
        line, bingo = _winners_v2(data, at, cards, draw)
        extra_winners = _extra_winners(extras, cards, draw, bingo, at)
    elif cards:
        cells = np.array([card.cells for card in cards], dtype=np.uint8)
        winners = game_winners(cells, draw)
        if not winners.bingo.won:
            at["draw"].fail(f"no card is complete after all {len(draw)} balls; a draw must reach a bingo")
        assert winners.line.ball is not None and winners.bingo.ball is not None  # a bingo implies a line
        line = Winners(winners.line.ball, tuple(winners.line.cards.tolist()))
        bingo = Winners(winners.bingo.ball, tuple(winners.bingo.cards.tolist()))
    else:
        for key in ("superbingo_limit", "grand_superbingo_limit", "jackpot_threshold", "megabingo_cents"):
            if optional(key) is not None:
                at[key].fail("a game with no card left in play (every one refunded) has no pot in play")
    return GamePlay(
        game=number,
        price_cents=price_cents,
        cards=cards,
        draw=draw,
        line=line,
        bingo=bingo,
        superbingo_limit=superbingo_limit,
        grand_superbingo_limit=grand_limit,
        jackpot_threshold=threshold,
        megabingo_cents=megabingo_cents,
        operator_superbingo=contributions["operator.superbingo"],
        operator_grand_superbingo=contributions["operator.grand_superbingo"],
        operator_jackpot=contributions["operator.jackpot"],
        boost_line=contributions["reserve_boost.line"],
        boost_bingo=contributions["reserve_boost.bingo"],
        refunded_after_close=refunded,
        last_game=bool(last_game),
        balls_drawn=len(draw) if v2 or bingo is None else bingo.ball,
        extras=extra_winners,
    )


def _parse_refunded(value: Any, at: _At) -> tuple[tuple[str, int], ...]:
    """``refunded_after_close``: the cards a failed terminal's refund took out after the close (R96.3)."""
    if value is None:
        return ()
    entries = _array(value, at)
    if not entries:
        at.fail("lists at least one card when it is given")
    seen: dict[str, int] = {}
    out = []
    for i, entry in enumerate(entries):
        data = _object(entry, at[i], ("id", "stake_pct"), ())
        card_id = data["id"]
        if not isinstance(card_id, str) or not card_id:
            at[i]["id"].fail(f"must be a non-empty string, got {describe(card_id)}")
        if card_id in seen:
            at[i]["id"].fail(f"{json.dumps(card_id)} is already the id of refunded_after_close[{seen[card_id]}]")
        seen[card_id] = i
        out.append((card_id, _integer(data["stake_pct"], at[i]["stake_pct"], 1, 100)))
    return tuple(out)


_JOINT_KEYS = (
    "game_id", "after_game", "role", "partner", "price_cents", "line_bp", "bingo_bp", "partner_cards",
    "partner_sales_cents", "cards", "partner_winners", "draw",
)


def _text(value: Any, at: _At) -> str:
    if not isinstance(value, str) or not value:
        at.fail(f"must be a non-empty string, got {describe(value)}")
    return value


def _parse_joint_game(data: dict, at: _At) -> JointPlay:
    """A joint game (R3.5.b): checked like a game, its winners found over both rooms' cards the file holds."""
    role = data["role"]
    if role not in ("main", "annex"):
        at["role"].fail(f"must be \"main\" or \"annex\", got {describe(role)}")
    partner = _text(data["partner"], at["partner"])
    rules = PrizeRules(line_bp=_integer(data["line_bp"], at["line_bp"], 0, 10_000),
                       bingo_bp=_integer(data["bingo_bp"], at["bingo_bp"], 0, 10_000))
    refusal = joint_rules_refusal(rules)
    if refusal is not None:
        at["line_bp"].fail(refusal.replace("in this hall's [prizes]", "here"))
    if rules.line_bp + rules.bingo_bp > 10_000:
        at["bingo_bp"].fail("the line and the bingo take more than the sales (10000 basis points)")
    seen: dict[str, dict[Any, str]] = {}
    cards = _parse_cards(data["cards"], at["cards"], may_be_empty=True, seen=seen)
    winners = _parse_cards(data["partner_winners"], at["partner_winners"], may_be_empty=True, seen=seen)
    for k, card in enumerate(winners):
        if not card.id.startswith(f"{partner}/"):
            at["partner_winners"][k]["id"].fail(f"a card of the partner's is named {partner}/<card>, "
                                                f"not {json.dumps(card.id)}")
    for k, card in enumerate(cards):
        if "/" in card.id:
            at["cards"][k]["id"].fail(f"a card of this hall's room is named without a hall, not {json.dumps(card.id)}")
    draw = _parse_draw(data["draw"], at["draw"])
    both = (*cards, *winners)
    if not both:
        at["cards"].fail("a joint game's bingo is won by a card of this room or by one of the partner's")
    found = game_winners(np.array([card.cells for card in both], dtype=np.uint8), draw)
    if not found.bingo.won:
        at["draw"].fail(f"no card is complete after all {len(draw)} balls; a draw must reach a bingo")
    assert found.line.ball is not None and found.bingo.ball is not None
    return JointPlay(
        game_id=_text(data["game_id"], at["game_id"]), after_game=_integer(data["after_game"], at["after_game"], 0),
        role=role, partner=partner, price_cents=_integer(data["price_cents"], at["price_cents"], 1), rules=rules,
        partner_cards=_integer(data["partner_cards"], at["partner_cards"], 0),
        partner_sales_cents=_integer(data["partner_sales_cents"], at["partner_sales_cents"], 0),
        cards=cards, partner_winners=winners, draw=draw,
        line=Winners(found.line.ball, tuple(found.line.cards.tolist())),
        bingo=Winners(found.bingo.ball, tuple(found.bingo.cards.tolist())),
    )


def _parse_session(value: Any, index: int, rules: PrizeRules, after: "Session | None",
                   version: str = INPUT_FORMAT, extras: tuple[PrizeShare, ...] = ()) -> Session:
    at = _At("", f"sessions[{index}]")
    numbered = version in NUMBERED_FORMATS
    data = _object(value, at, ("date", "session", "games") if numbered else ("date", "games"), ("joint_games",))
    date = _date(data["date"], at["date"])
    session_number = _integer(data["session"], at["session"], 1) if numbered else None
    if after is not None and date < after.date:
        at["date"].fail(f"{date} is before the previous session's date {after.date}")
    if after is not None and date == after.date:
        if not numbered:
            at["date"].fail(f"{date} is not after the previous session's date {after.date}")
        assert session_number is not None and after.number is not None
        if session_number <= after.number:
            at["session"].fail(f"{session_number} is not after the previous session {after.number} of {date}")
    label = str(date) if session_number is None else f"{date}-s{session_number}"
    session_at = _At(f"session {label}", "")
    games = _array(data["games"], session_at["games"])
    joint_entries = _array(data.get("joint_games", []), session_at["joint_games"])
    if not games and not joint_entries:
        session_at["games"].fail("a session needs at least one game")
    parsed: list[GamePlay] = []
    for g, game in enumerate(games):
        # The game number names the game in messages, so it is read first; until it
        # is known the game is named by its position.
        game_at = _At(f"session {label}, games[{g}]", "")
        if not isinstance(game, dict):
            game_at.fail(f"must be an object, got {describe(game)}")
        if "game" not in game:
            game_at["game"].fail("is missing")
        number = _integer(game["game"], game_at["game"], 1)
        if parsed and number <= parsed[-1].game:
            game_at["game"].fail(f"{number} is not after the previous game {parsed[-1].game}")
        at = _At(f"session {label}, game {number}", "")
        fields = _object(game, at, _GAME_REQUIRED,
                         _GAME_OPTIONAL + (_GAME_OPTIONAL_2 if version != FIRST_INPUT_FORMAT else ()))
        if parsed and parsed[-1].last_game:
            _At(f"session {label}, game {parsed[-1].game}", "last_game").fail(
                f"the session's last game (R93.15) is its last in the file; game {number} follows it"
            )
        parsed.append(_parse_game(fields, number, at, rules, date, version, extras))
    joint: list[JointPlay] = []
    for g, game in enumerate(joint_entries):
        game_at = _At(f"session {label}, joint_games[{g}]", "")
        if not isinstance(game, dict):
            game_at.fail(f"must be an object, got {describe(game)}")
        name = game.get("game_id")
        at = _At(f"session {label}, joint game {name}", "") if isinstance(name, str) and name else game_at
        fields = _object(game, at, _JOINT_KEYS, ())
        played = _parse_joint_game(fields, at)
        if joint and played.after_game < joint[-1].after_game:
            at["after_game"].fail(f"{played.after_game} is before the previous joint game's {joint[-1].after_game}")
        if any(j.game_id == played.game_id for j in joint):
            at["game_id"].fail(f"{json.dumps(played.game_id)} is already a joint game of this session")
        joint.append(played)
    return Session(date, tuple(parsed), tuple(joint), session_number)


def parse_scenario(data: Any) -> Scenario:
    """Validate a decoded scenario; raise :class:`ReplayError` at the first fault."""
    if not isinstance(data, dict):
        _At("", "(top level)").fail(f"must be an object, got {describe(data)}")
    top = _At("", "")
    _object(data, top, ("format", "rules", "sessions"), ("opening",))
    version = data["format"]
    if not isinstance(version, str) or version not in VERSIONS:
        top["format"].fail(f"must be {' or '.join(json.dumps(f) for f in INPUT_FORMATS)}, got {describe(version)}")
    sharing = _parse_sharing(data["rules"], version)
    extras = _parse_extras(data["rules"], version, sharing)
    rules = _parse_rules({k: v for k, v in data["rules"].items() if k not in ("sharing", "patterns")}, version,
                         sum(extra.basis_points for extra in extras))
    if sharing == BY_STAKE and (rules.superbingo_bp or rules.megabingo or rules.jackpot):
        _At("", "rules")["sharing"].fail("the network game's sharing (by_stake) plays no pot: superbingo_bp is 0, "
                                         "megabingo and jackpot false")
    opening, extras = _parse_opening(data.get("opening", {}), extras)
    entries = _array(data["sessions"], top["sessions"])
    if not entries:
        top["sessions"].fail("a scenario needs at least one session")
    sessions: list[Session] = []
    for index, entry in enumerate(entries):
        sessions.append(_parse_session(entry, index, rules, sessions[-1] if sessions else None, version, extras))
    return Scenario(rules, opening, tuple(sessions), version, sharing, extras)


def _parse_extras(rules: dict, version: str, sharing: str) -> tuple[PrizeShare, ...]:
    """``rules.patterns``: a key of version 4 only, where the prizes are shared by stake (R93.13)."""
    if "patterns" not in rules:
        return ()
    at = _At("", "rules")["patterns"]
    if version != PATTERNS_INPUT_FORMAT:
        at.fail(f"is not a key of this format (misspelt?); it is a key of {PATTERNS_INPUT_FORMAT}")
    if sharing != BY_STAKE:
        at.fail(f"the other patterns are the network game's: rules.sharing is {json.dumps(BY_STAKE)}")
    return _parse_patterns(rules["patterns"])


def day_sharing(shared_by_stake: Sequence[bool]) -> str | None:
    """``rules.sharing`` of a day of network games that shared their prizes as ``shared_by_stake`` says,
    game by game: ``by_stake`` (R93.13) when every one did, ``hall`` (games of a journal written before
    that rule, which carried their split's rest) when none did, ``None`` when the day holds both: one
    file plays one rule."""
    if all(shared_by_stake):
        return BY_STAKE
    if not any(shared_by_stake):
        return "hall"
    return None


def _parse_sharing(rules: Any, version: str) -> str:
    """``rules.sharing``: a key of version 2 only, ``hall`` when absent."""
    at = _At("", "rules")
    if not isinstance(rules, dict):
        at.fail(f"must be an object, got {describe(rules)}")
    if "sharing" not in rules:
        return "hall"
    if version == FIRST_INPUT_FORMAT:
        at["sharing"].fail(f"is not a key of this format (misspelt?); it is a key of {INPUT_FORMAT}")
    sharing = rules["sharing"]
    if sharing not in SHARINGS:
        at["sharing"].fail(f"is {' or '.join(json.dumps(s) for s in SHARINGS)}, not {describe(sharing)}")
    return str(sharing)


def _refuse_constant(name: str) -> NoReturn:
    raise ReplayError(f"(file): {name} is not a JSON number")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ReplayError(f"(file): the key {json.dumps(key)} appears twice in one object")
        result[key] = value
    return result


def load_scenario(raw: bytes | str) -> Scenario:
    """Decode and validate a scenario's JSON text."""
    try:
        data = json.loads(
            raw, parse_constant=_refuse_constant, object_pairs_hook=_no_repeated_keys
        )
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ReplayError(f"(file): not valid JSON: {error}") from None
    except (RecursionError, ValueError) as error:
        # Nesting too deep, or an integer too long to convert: not a scenario either way.
        raise ReplayError(f"(file): not a usable JSON document: {error}") from None
    return parse_scenario(data)


# --- The computation (FORMATS.md section 2, steps 1-12) ---------------------------


def _prize(ball: int, split: Split, cards: tuple[CardPlay, ...], winners: tuple[int, ...]) -> dict:
    # Python orders str by code point, the order the format asks for.
    paid = sorted((cards[w].id, cents) for w, cents in zip(winners, split.payments))
    return {
        "ball": ball,
        "amount_cents": split.amount,
        "carry_cents": split.carry,
        "paid": [{"card": card_id, "cents": cents} for card_id, cents in paid],
    }


def replay(scenario: Scenario) -> dict[str, Any]:
    """Recompute every game; return the result as JSON-ready data.

    Every figure comes from :mod:`protocol.settlement`, the computation the hall itself runs.
    """
    rules = scenario.rules
    pots = scenario.opening
    operator_jackpot_by_month: dict[tuple[int, int], int] = {}
    games_out: list[dict[str, Any]] = []
    joints_out: list[dict[str, Any]] = []
    total_sales = total_paid = total_tax = 0
    # What each of rules.patterns (version 4) carries into the next game: its whole prize when no card won it.
    extra_carries = {extra.name: extra.carry_in_cents for extra in scenario.patterns}

    def pots_of(pots: Pots) -> dict[str, int]:
        """The result's ``pots``: the pot levels, then each other pattern's carry (version 4)."""
        return {**dataclasses.asdict(pots), **{f"carry_{name}": cents for name, cents in extra_carries.items()}}

    def extra_amount(extra: PrizeShare, sales: int) -> int:
        return share_of_sales(sales, extra.basis_points) + extra_carries[extra.name]

    operator_superbingo_by_date: dict[datetime.date, int] = {}
    for session in scenario.sessions:
        boost_allowance = reserve_boost_allowance(pots.jackpot_reserve)  # a session's allowance (R91.7)
        boosted = 0
        # R89.5 counts the day: every session of the date (version 3 may hold several).
        operator_superbingo_today = operator_superbingo_by_date.get(session.date, 0)
        last_superbingo_won: bool | None = None  # None: no superbingo game yet today
        month = (session.date.year, session.date.month)

        joint = list(session.joint_games)

        def joints_up_to(number: int | None) -> None:
            """Play the joint games that come after game ``number`` (None: all that are left)."""
            nonlocal pots, total_sales, total_paid, total_tax
            while joint and (number is None or joint[0].after_game < number):
                played, pots = _replay_joint(joint.pop(0), session, pots)
                joints_out.append(played)
                total_sales += played["sales_cents"]
                total_paid += played["paid_here_cents"]
                total_tax += played["tax_cents"]

        for position, game in enumerate(session.games):
            joints_up_to(game.game)
            at = _At(f"session {session.name}, game {game.game}", "")

            def checked(field: str, check: Callable[[], T]) -> T:
                try:
                    return check()
                except PrizeError as error:
                    at[field].fail(str(error))

            # 1. Operator contributions.
            for pot, amount in (
                ("superbingo", game.operator_superbingo),
                ("grand_superbingo", game.operator_grand_superbingo),
                ("jackpot", game.operator_jackpot),
            ):
                contribution = checked(
                    f"operator.{pot}",
                    lambda: operator_contribution(
                        pot, amount, pots, operator_superbingo_today, operator_jackpot_by_month.get(month, 0)
                    ),
                )
                operator_superbingo_today = operator_superbingo_by_date[session.date] = contribution.superbingo_today
                operator_jackpot_by_month[month] = contribution.jackpot_this_month
                pots = pots.plus(contribution.credits)

            # 2-3. Sales, and the pot contributions whether or not the pot is in play; 5. the
            # prize amounts with the carries and the boosts (checked in 4 on the reserve as
            # the contributions leave it).
            # Cards refunded after the close were counted in the sales: the prizes announced stand on them.
            sales = game_sales(game.price_cents, (*(card.stake_pct for card in game.cards),
                                                  *(pct for _, pct in game.refunded_after_close)))
            figures = close_sale(rules, sales, pots, game.boost_line, game.boost_bingo)
            pots = figures.pots_after(pots)

            # 4. Reserve boost (R91.7).
            for field, boost in (("line", game.boost_line), ("bingo", game.boost_bingo)):
                checked(
                    f"reserve_boost.{field}",
                    lambda: check_reserve_boost(boost, boosted, boost_allowance, pots.jackpot_reserve),
                )
                boosted += boost
                pots = pots.replace(jackpot_reserve=pots.jackpot_reserve - boost)

            # 6-7. The draw's winners (found while parsing) and the splits (R88.5).
            def stakes(winners: Winners) -> list[int]:
                return [game.cards[w].stake_pct for w in winners.cards]

            refunds = game_sales(game.price_cents, (pct for _, pct in game.refunded_after_close))
            if game.line is None or game.bingo is None:
                # No card left in play: nobody wins, each prize carries whole (R88.5); no pot is won.
                line, bingo = Split(figures.line_cents, ()), Split(figures.bingo_cents, ())
                pots = carry_forward(pots, line, bingo)
                unwon = [("line", line), ("bingo", bingo)]
                for extra in scenario.patterns:
                    unwon.append((extra.name, Split(extra_amount(extra, sales), ())))
                    extra_carries[extra.name] = unwon[-1][1].amount
                prizes_out = {name: _prize(0, split, game.cards, ()) for name, split in unwon}
                taxed = scenario.tax(figures.tax_cents, sales, refunds)
                total_sales += sales
                total_tax += taxed
                games_out.append({**session.stamp(), "game": game.game, "sales_cents": sales,
                                  "tax_cents": taxed, "balls_drawn": len(game.draw), "prizes": prizes_out,
                                  "refunded_after_close_cents": refunds, "pots": pots_of(pots)})
                continue
            if scenario.sharing == BY_STAKE:  # the whole prize by each card's stake in cents (R93.13)
                def by_stake(amount: int, winners: Winners) -> Split:
                    cents = [stake_cents(game.price_cents, pct) for pct in stakes(winners)]
                    return checked("cards", lambda: share_by_stake(amount, cents))

                line, bingo = by_stake(figures.line_cents, game.line), by_stake(figures.bingo_cents, game.bingo)
            else:
                line = split_prize(figures.line_cents, stakes(game.line))
                bingo = split_prize(figures.bingo_cents, stakes(game.bingo))
            pots = carry_forward(pots, line, bingo)
            prizes: dict[str, tuple[int, Split, Winners]] = {
                "line": (game.line.ball, line, game.line),
                "bingo": (game.bingo.ball, bingo, game.bingo),
            }
            bingo_ball, bingo_winners = game.bingo.ball, game.bingo
            # The other patterns (version 4, shared by stake): each won whole, or carried whole when no card
            # completed it by the bingo's ball.
            for extra, winners in zip(scenario.patterns, game.extras):
                amount = extra_amount(extra, sales)
                if winners is None:
                    prizes[extra.name] = (0, Split(amount, ()), Winners(0, ()))
                    extra_carries[extra.name] = amount
                else:
                    split = by_stake(amount, winners)
                    prizes[extra.name] = (winners.ball, split, winners)
                    extra_carries[extra.name] = split.carry

            # 8-11. The pots the bingo wins; the session's last game takes the superbingo fund (R89):
            # the game marked so (bingo-replay/2), the file's last of the session (bingo-replay/1).
            in_play = PotsInPlay(
                game.superbingo_limit, game.grand_superbingo_limit, game.jackpot_threshold, game.megabingo_cents
            )
            last_game = game.last_game if scenario.ruling is RULING else position == len(session.games) - 1
            won = checked(
                "megabingo_cents",
                lambda: bingo_pot_prizes(
                    in_play, bingo_ball, stakes(bingo_winners), pots,
                    last_game=last_game, earlier_superbingo_won=last_superbingo_won, ruling=scenario.ruling,
                ),
            )
            pots = won.pots
            if won.superbingo_won is not None:
                last_superbingo_won = won.superbingo_won
            for pot_prize in won.prizes:
                prizes[pot_prize.prize] = (bingo_ball, pot_prize.split, bingo_winners)

            # 12. Tax (R98).
            tax = scenario.tax(figures.tax_cents, sales, refunds)

            paid = sum(split.paid for _, split, _ in prizes.values())
            total_sales += sales
            total_paid += paid
            total_tax += tax
            ordered = ("line", "bingo", *POT_PRIZES, *(extra.name for extra in scenario.patterns))
            played: dict[str, Any] = {
                **session.stamp(),
                "game": game.game,
                "sales_cents": sales,
                "tax_cents": tax,
                "balls_drawn": game.balls_drawn,
                "prizes": {
                    name: _prize(prizes[name][0], prizes[name][1], game.cards, prizes[name][2].cards)
                    for name in ordered
                    if name in prizes
                },
            }
            if game.refunded_after_close:
                played["refunded_after_close_cents"] = refunds
            games_out.append({**played, "pots": pots_of(pots)})
        joints_up_to(None)

    result: dict[str, Any] = {"format": scenario.result_format, "games": games_out}
    if joints_out:
        result["joint_games"] = joints_out
    result["totals"] = {"sales_cents": total_sales, "paid_cents": total_paid, "tax_cents": total_tax}
    return result


def _replay_joint(game: JointPlay, session: Session, pots: Pots) -> tuple[dict[str, Any], Pots]:
    """A joint game's figures and the pots after it, by the hall-annex settlement (:mod:`protocol.annex`).

    The pool is the prize shares of both rooms' sales; every card of either room complete on
    the first ball any is shares its prize at its stake; the main hall carries what the
    splits leave (R88.5), the annex none; the joint game takes no carry and feeds no pot.
    """
    here, partner = "", game.partner  # this hall needs no name: the partner's is never empty
    main_id = here if game.role == "main" else partner
    own = (len(game.cards), game_sales(game.price_cents, (card.stake_pct for card in game.cards)))
    theirs = (game.partner_cards, game.partner_sales_cents)
    pool = joint_pool(game.rules, *((own, theirs) if game.role == "main" else (theirs, own)))
    both = (*game.cards, *game.partner_winners)
    claims = [
        JointClaim(here if w < len(game.cards) else partner, pattern, both[w].id, winners.ball, both[w].stake_pct)
        for pattern, winners in (("line", game.line), ("bingo", game.bingo)) for w in winners.cards
    ]
    shares = prize_shares(pool, claims, main=main_id, here=here)
    owed = owed_to_partner(shares, main=main_id, here=here)
    prizes = {}
    for share in shares:
        paid = sorted((card, cents) for _, card, cents in share.winners)
        prizes[share.pattern] = {"ball": share.ball_count, "amount_cents": share.amount_cents,
                                 "carry_cents": share.carry_cents,
                                 "paid": [{"card": card, "cents": cents} for card, cents in paid]}
    if game.role == "main":
        carried = {share.pattern: share.carry_cents for share in shares}
        pots = pots.replace(carry_line=pots.carry_line + carried["line"],
                            carry_bingo=pots.carry_bingo + carried["bingo"])
    return {
        **session.stamp(),
        "game_id": game.game_id,
        "role": game.role,
        "sales_cents": own[1],
        "pool_sales_cents": pool.sales_cents,
        "tax_cents": tax_cents(own[1]),
        "prizes": prizes,
        "paid_here_cents": sum(share.paid_here_cents for share in shares),
        "owed_to_partner_cents": owed,
        "pots": dataclasses.asdict(pots),
    }, pots


def render(result: dict[str, Any]) -> str:
    """The result as the command prints it: indented JSON, ASCII only, one final newline."""
    return json.dumps(result, indent=2, ensure_ascii=True) + "\n"


def replay_json(raw: bytes | str) -> str:
    """Scenario text in, result text out; :class:`ReplayError` on any invalid input."""
    return render(replay(load_scenario(raw)))

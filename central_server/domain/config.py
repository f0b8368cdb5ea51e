"""The configuration of one network game, checked against the regulation.

A network game (R92.1, R93) is set up on the central server with:

* the card price, at most the maximum the regulator approved (R93.5);
* its winning patterns, in the order they are announced: the line and the bingo
  always (R94.2), then any of the operator's approved patterns (R93.11,
  :mod:`protocol.patterns`), each with its share of the game's sales in basis points
  (1/100 of a percent) and what the previous game carried to it (R88.5); the shares
  add up to at least 70% (R94.1) and at most 100%;
* the sale window's length and the interval between balls;
* the series of virtual cards it sells from (the central library, R82.9-12): its label
  (``V1``), its size, the first card on sale, and a digest of its layouts so that a
  journal can never be replayed against other cards;
* the halls that take part (R92.5b: two or more).

:class:`NetworkGameConfig` refuses a configuration that breaks a rule with
:class:`ConfigError`, whose message names the field and says what would be right.  It
turns into a JSON-able dict and back, which is what the ``game_scheduled`` event
stores.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from central_server.domain.errors import ConfigError
from protocol import central_messages as wire
from protocol.cards import CELLS
from protocol.central_messages import CentralMessageError
from protocol.patterns import GamePatterns, PatternError, PrizeShare, pattern_from_dict, pattern_to_dict
from protocol.settlement import BASIS_POINTS, PAYOUT_FLOOR_BP

#: The sale window may last from 10 seconds to an hour.
SALE_WINDOW_MS = (10_000, 3_600_000)
#: A ball every 1 to 60 seconds.
BALL_INTERVAL_MS = (1_000, 60_000)
#: R92.5b: a central server runs games across two or more interconnected halls.
MIN_HALLS = 2
MAX_HALLS = 1_000
#: The protocol announces at most this many patterns.
MAX_PATTERNS = wire.PRIZE_SHARE.max_items

_HEX = frozenset("0123456789abcdef")


def library_digest(layouts: np.ndarray) -> str:
    """The SHA-256 of a series' layouts (card k at row k-1), as lowercase hex."""
    cells = np.ascontiguousarray(layouts, dtype=np.uint8)
    if cells.ndim != 2 or cells.shape[1] != CELLS:
        raise ConfigError("series", f"layouts are an (n, {CELLS}) array, not shape {cells.shape}")
    digest = hashlib.sha256(f"{cells.shape[0]}x{CELLS}:".encode())
    digest.update(cells.tobytes())
    return digest.hexdigest()


def card_label(series_label: str, number: int) -> str:
    """What a virtual card shows and the journal names it by: ``V1-13``."""
    return f"{series_label}-{number}"


def export_card_id(hall_id: str, series_label: str, number: int) -> str:
    """The card's id in the central server's audit export: ``HALL/V1-13`` (FORMATS.md 3)."""
    return f"{hall_id}/{card_label(series_label, number)}"


def _whole(field: str, value: object, low: int, high: int, what: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(field, f"is a whole number{what}, not {value!r}")
    if not low <= value <= high:
        raise ConfigError(field, f"is {low} to {high}{what}, not {value}")
    return value


def _text(field: str, value: object, kind: wire.Text) -> str:
    try:
        return kind.check(field, value)
    except CentralMessageError as error:
        message = str(error)
        raise ConfigError(field, message.removeprefix(f"{field} ")) from None


@dataclass(frozen=True)
class NetworkGameConfig:
    """Everything a network game is set up with; checked on construction."""

    game_id: str
    halls: tuple[str, ...]
    price_cents: int
    max_price_cents: int
    prizes: tuple[PrizeShare, ...]
    sale_window_ms: int
    ball_interval_ms: int
    series_label: str
    series_cards: int
    library_digest: str
    first_card: int = 1

    def __post_init__(self) -> None:
        _text("game_id", self.game_id, wire.GAME_ID)
        self._check_halls()
        _whole("max_price_cents", self.max_price_cents, 1, wire.MAX_EXACT, " of cents")
        _whole("price_cents", self.price_cents, 1, wire.MAX_EXACT, " of cents")
        if self.price_cents > self.max_price_cents:
            raise ConfigError(
                "price_cents",
                f"{self.price_cents} cents is above the maximum price the regulator approved, "
                f"{self.max_price_cents} cents (R93.5)",
            )
        self._check_prizes()
        low, high = SALE_WINDOW_MS
        _whole("sale_window_ms", self.sale_window_ms, low, high, " milliseconds")
        low, high = BALL_INTERVAL_MS
        _whole("ball_interval_ms", self.ball_interval_ms, low, high, " milliseconds")
        _text("series_label", self.series_label, wire.SERIES_LABEL)
        _whole("series_cards", self.series_cards, 1, wire.MAX_CARD_NUMBER)
        _whole("first_card", self.first_card, 1, self.series_cards, f" (series of {self.series_cards} cards)")
        digest = self.library_digest
        if not isinstance(digest, str) or len(digest) != 64 or set(digest) - _HEX:
            raise ConfigError("library_digest", "is the SHA-256 of the series' layouts, 64 lowercase hex digits")

    def _check_halls(self) -> None:
        halls = self.halls
        if not isinstance(halls, tuple):
            raise ConfigError("halls", f"is a list of hall ids, not {halls!r}")
        for index, hall in enumerate(halls):
            _text(f"halls[{index}]", hall, wire.HALL_ID)
        if len(set(halls)) != len(halls):
            raise ConfigError("halls", "names a hall twice")
        if not MIN_HALLS <= len(halls) <= MAX_HALLS:
            raise ConfigError(
                "halls",
                f"a network game runs across {MIN_HALLS} to {MAX_HALLS} halls (R92.5b), not {len(halls)}",
            )

    def _check_prizes(self) -> None:
        prizes = self.prizes
        if not isinstance(prizes, tuple) or not all(isinstance(p, PrizeShare) for p in prizes):
            raise ConfigError("prizes", "is a list of patterns with their shares")
        if len(prizes) > MAX_PATTERNS:
            raise ConfigError("prizes", f"at most {MAX_PATTERNS} winning patterns, not {len(prizes)}")
        for index, prize in enumerate(prizes):
            where = f"prizes[{index}]"
            _text(f"{where}.pattern.name", prize.name, wire.PATTERN_NAME)
            _whole(
                f"{where}.basis_points", prize.basis_points, 1, BASIS_POINTS,
                " (a winning pattern takes a share of the sales, 1 = 0.01%)",
            )  # fmt: skip
            _whole(f"{where}.carry_in_cents", prize.carry_in_cents, 0, wire.MAX_EXACT, " of cents")
        try:
            GamePatterns(tuple(p.pattern for p in prizes))
        except PatternError as error:
            raise ConfigError("prizes", str(error)) from None
        total = sum(p.basis_points for p in prizes)
        if total < PAYOUT_FLOOR_BP:
            raise ConfigError(
                "prizes",
                f"the prizes take {total} basis points of the sales; at least {PAYOUT_FLOOR_BP} "
                "(70%) must go to prizes (R94.1)",
            )
        if total > BASIS_POINTS:
            raise ConfigError(
                "prizes", f"the prizes take {total} basis points, more than the {BASIS_POINTS} (100%) a game sells"
            )

    # --- What the game reads ------------------------------------------------------

    @property
    def patterns(self) -> GamePatterns:
        """The winning patterns in their order of announcement (R93.11)."""
        return GamePatterns(tuple(p.pattern for p in self.prizes))

    def share(self, pattern: str) -> PrizeShare:
        for prize in self.prizes:
            if prize.name == pattern:
                return prize
        raise KeyError(pattern)

    @property
    def cards_on_sale(self) -> int:
        """How many cards the series still has from the first card on sale."""
        return self.series_cards - self.first_card + 1

    def check_library(self, layouts: np.ndarray) -> None:
        """Refuse ``layouts`` unless they are the series this game was set up with."""
        if len(layouts) != self.series_cards:
            raise ConfigError(
                "series_cards", f"the game sells a series of {self.series_cards} cards; the layouts hold {len(layouts)}"
            )
        if library_digest(layouts) != self.library_digest:
            raise ConfigError(
                "library_digest", f"the layouts are not those of series {self.series_label} this game was set up with"
            )

    # --- Dict form ----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form the ``game_scheduled`` event stores."""
        return {
            "game_id": self.game_id,
            "halls": list(self.halls),
            "price_cents": self.price_cents,
            "max_price_cents": self.max_price_cents,
            "prizes": [
                {
                    "pattern": pattern_to_dict(p.pattern),
                    "basis_points": p.basis_points,
                    "carry_in_cents": p.carry_in_cents,
                }
                for p in self.prizes
            ],
            "sale_window_ms": self.sale_window_ms,
            "ball_interval_ms": self.ball_interval_ms,
            "series_label": self.series_label,
            "series_cards": self.series_cards,
            "first_card": self.first_card,
            "library_digest": self.library_digest,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NetworkGameConfig":
        """The configuration a dict (operator file, journal) describes, or :class:`ConfigError`."""
        if not isinstance(data, Mapping):
            raise ConfigError("configuration", "is a table of settings")
        required = {
            "game_id", "halls", "price_cents", "max_price_cents", "prizes", "sale_window_ms",
            "ball_interval_ms", "series_label", "series_cards", "library_digest",
        }  # fmt: skip
        missing = sorted(required - set(data))
        if missing:
            raise ConfigError(missing[0], "is missing")
        unknown = sorted(set(data) - required - {"first_card"})
        if unknown:
            raise ConfigError(unknown[0], "is not a setting of a network game")
        halls = data["halls"]
        if not isinstance(halls, list):
            raise ConfigError("halls", f"is a list of hall ids, not {halls!r}")
        raw_prizes = data["prizes"]
        if not isinstance(raw_prizes, list):
            raise ConfigError("prizes", "is a list of patterns with their shares")
        prizes = []
        for index, entry in enumerate(raw_prizes):
            where = f"prizes[{index}]"
            if not isinstance(entry, Mapping) or not {"pattern", "basis_points"} <= set(entry) or set(
                entry
            ) - {"pattern", "basis_points", "carry_in_cents"}:
                raise ConfigError(where, "has a pattern, its basis_points and optionally carry_in_cents")
            pattern = entry["pattern"]
            if not isinstance(pattern, Mapping):
                raise ConfigError(f"{where}.pattern", "is a pattern table (name and rows, cells or positions)")
            try:
                parsed = pattern_from_dict(pattern)
            except PatternError as error:
                raise ConfigError(f"{where}.pattern", str(error)) from None
            prizes.append(PrizeShare(parsed, entry["basis_points"], entry.get("carry_in_cents", 0)))
        return cls(
            game_id=data["game_id"],
            halls=tuple(halls),
            price_cents=data["price_cents"],
            max_price_cents=data["max_price_cents"],
            prizes=tuple(prizes),
            sale_window_ms=data["sale_window_ms"],
            ball_interval_ms=data["ball_interval_ms"],
            series_label=data["series_label"],
            series_cards=data["series_cards"],
            library_digest=data["library_digest"],
            first_card=data.get("first_card", 1),
        )


__all__ = [
    "BALL_INTERVAL_MS",
    "MAX_HALLS",
    "MIN_HALLS",
    "SALE_WINDOW_MS",
    "NetworkGameConfig",
    "PrizeShare",
    "card_label",
    "export_card_id",
    "library_digest",
]

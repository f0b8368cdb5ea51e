"""A hall game's prize rules and its sales: the shares of the stakes, in basis points.

:class:`PrizeRules` says what share of each game's sales goes to the line, the bingo
and each pot; :func:`stake_cents` what one card stakes and :func:`game_sales` what a
game collects; :func:`share_of_sales` is the one rounding of a share (down, FORMATS.md
section 2).  The errors of the whole settlement are declared here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from protocol.errors import DomainError

BASIS_POINTS = 10_000  # 100% in basis points
PAYOUT_FLOOR_BP = 7_000  # R88.1, R94.1: at least 70% of each game's collection
SUPERBINGO_BP_MIN, SUPERBINGO_BP_MAX = 200, 500  # R89: 2%-5% of sales
MEGABINGO_BP = 100  # R90: 1% of sales
JACKPOT_BP = 1_000  # R91: 10% of sales
SUPERBINGO_LIMITS = range(42, 91)  # R89: the ball limit L of a (grand) superbingo, 42 <= L <= 90
JACKPOT_THRESHOLDS = (40, 41, 42)  # R91: the jackpot is won within 40, 41 or 42 balls
MEGABINGO_NOTICE_DAYS = 10  # R90: a megabingo is announced at least 10 days ahead
PAPER_STAKE_PCT = 100  # a paper card stakes its whole price


class PrizeError(DomainError):
    """Prize rules or amounts that break the regulation."""


class PayoutFloorError(PrizeError):
    """A configuration that could return less than 70% of a game's sales (R88.1, R94.1)."""


class LimitExceeded(PrizeError):
    """An amount that would push a pot, a contribution or a boost over its limit."""


def check_cents(name: str, value: int) -> None:
    """Refuse anything but a whole, non-negative number of cents."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PrizeError(f"{name} must be a whole number of cents, got {value!r}")
    if value < 0:
        raise PrizeError(f"{name} cannot be negative, got {value}")


def share_of_sales(sales_cents: int, basis_points: int) -> int:
    """``basis_points`` of the sales, rounded down."""
    return sales_cents * basis_points // BASIS_POINTS


def stake_cents(price_cents: int, stake_pct: int) -> int:
    """What a card staked at ``stake_pct`` percent of ``price_cents`` costs (R82.15)."""
    return price_cents * stake_pct // 100


def game_sales(price_cents: int, stake_pcts: Iterable[int]) -> int:
    """A game's collection: the sum of its cards' stakes (100 for a paper card)."""
    return sum(stake_cents(price_cents, pct) for pct in stake_pcts)


@dataclass(frozen=True)
class PrizeRules:
    """What share of each game's sales goes to which prize or pot, in basis points.

    R88.3 lets the operator set each prize as a fixed sum or as a percentage of the
    stakes.  Here every prize has its percentage, and may also have a fixed sum it never
    falls below (``line_minimum_cents``, ``bingo_minimum_cents``): the 70% floor is
    checked on the percentages alone, so it holds whatever a game sells, and when the
    fixed sum is the larger the house puts in the difference.  A prize given as a
    fixed sum only is refused: with enough sales it would pay less than 70%.
    """

    line_bp: int
    bingo_bp: int
    superbingo_bp: int = 0
    megabingo: bool = False
    jackpot: bool = False
    line_minimum_cents: int = 0
    bingo_minimum_cents: int = 0

    def line_amount(self, sales_cents: int) -> int:
        """The line prize of a game that sold ``sales_cents`` (before any carry)."""
        return max(share_of_sales(sales_cents, self.line_bp), self.line_minimum_cents)

    def bingo_amount(self, sales_cents: int) -> int:
        """The bingo prize of a game that sold ``sales_cents`` (before any carry)."""
        return max(share_of_sales(sales_cents, self.bingo_bp), self.bingo_minimum_cents)

    def house_top_up(self, sales_cents: int) -> int:
        """What the house adds so the line and bingo reach their fixed sums."""
        return (
            self.line_amount(sales_cents) - share_of_sales(sales_cents, self.line_bp)
            + self.bingo_amount(sales_cents) - share_of_sales(sales_cents, self.bingo_bp)
        )

    @property
    def payout_bp(self) -> int:
        """Line + bingo + every pot contribution, in basis points of sales."""
        return (
            self.line_bp
            + self.bingo_bp
            + self.superbingo_bp
            + (MEGABINGO_BP if self.megabingo else 0)
            + (JACKPOT_BP if self.jackpot else 0)
        )

    def check(self) -> None:
        """Raise :class:`PrizeError` unless the shares are in range and meet the floor.

        The total may not exceed 100%: a game cannot hand out more than it collects.
        """
        for name in ("line_minimum_cents", "bingo_minimum_cents"):
            check_cents(name.replace("_", " "), getattr(self, name))
        if self.superbingo_bp and not SUPERBINGO_BP_MIN <= self.superbingo_bp <= SUPERBINGO_BP_MAX:
            raise PrizeError(
                f"the superbingo takes 0 (none) or {SUPERBINGO_BP_MIN}-{SUPERBINGO_BP_MAX} "
                f"basis points of sales (R89), not {self.superbingo_bp}"
            )
        total = self.payout_bp
        if total < PAYOUT_FLOOR_BP:
            raise PayoutFloorError(
                f"line, bingo and pot contributions total {total} basis points of sales; "
                f"prizes must take at least {PAYOUT_FLOOR_BP} (70%, R88.1, R94.1)"
            )
        if total > BASIS_POINTS:
            raise PrizeError(
                f"line, bingo and pot contributions total {total} basis points of sales, "
                f"more than the {BASIS_POINTS} (100%) a game collects"
            )

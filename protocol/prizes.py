"""Prize and pot arithmetic (R88-R91, R98), in integer cents only.

Small pure functions and frozen dataclasses that the audit replay, the hall server and
the central server share: the payout floor, prize splits with their carries, the pot
contributions, the jackpot and its reserve, and the operator and boost limits.  Every
division rounds down (floor), as the audit replay format (FORMATS.md section 2) fixes;
no function here rounds up, and none ever uses a float.

A limit that would be exceeded raises :class:`LimitExceeded`; nothing is silently
capped.  Only the jackpot's 1,500,000-cent cap on the accumulated part *diverts* money
(the excess goes to the reserve), because the regulation says so (R91).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

from protocol.errors import DomainError

BASIS_POINTS = 10_000  # 100% in basis points
PAYOUT_FLOOR_BP = 7_000  # R88.1, R94.1: at least 70% of each game's collection
SUPERBINGO_BP_MIN, SUPERBINGO_BP_MAX = 200, 500  # R89: 2%-5% of sales
MEGABINGO_BP = 100  # R90: 1% of sales
JACKPOT_BP = 1_000  # R91: 10% of sales
JACKPOT_ACCUMULATED_PCT = 70  # R91: of the 10%, 70% to the accumulated jackpot
JACKPOT_CAP = 1_500_000  # R91: the accumulated jackpot never exceeds 15,000 EUR
RESERVE_TRANSFER_PCT = 70  # R91: after a win, up to 70% of the reserve moves up
RESERVE_BOOST_PCT = 30  # R91.7: a session may add 30% of the reserve to prizes
GRAND_SUPERBINGO_CAP = 400_000  # R89: at most 4,000 EUR
OPERATOR_SUPERBINGO_DAILY_LIMIT = 300_000  # R89.5: superbingo + grand superbingo, per day
OPERATOR_JACKPOT_MONTHLY_LIMIT = 1_500_000  # R91.9: per calendar month
TAX_PCT = 10  # R98: of the amounts staked


class PrizeError(DomainError):
    """Prize rules or amounts that break the regulation."""


class PayoutFloorError(PrizeError):
    """A configuration that could return less than 70% of a game's sales (R88.1, R94.1)."""


class LimitExceeded(PrizeError):
    """An amount that would push a pot, a contribution or a boost over its limit."""


def _check_cents(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PrizeError(f"{name} must be a whole number of cents, got {value!r}")
    if value < 0:
        raise PrizeError(f"{name} cannot be negative, got {value}")


# --- The game's rules and its sales ---------------------------------------------


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
            _check_cents(name.replace("_", " "), getattr(self, name))
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


def stake_cents(price_cents: int, stake_pct: int) -> int:
    """What a card staked at ``stake_pct`` percent of ``price_cents`` costs (R82.15)."""
    return price_cents * stake_pct // 100


def share_of_sales(sales_cents: int, basis_points: int) -> int:
    """``basis_points`` of the sales, rounded down."""
    return sales_cents * basis_points // BASIS_POINTS


def tax_cents(sales_cents: int) -> int:
    """The bingo tax on a game's stakes (R98): 10%, rounded down."""
    return sales_cents * TAX_PCT // 100


def house_share(rules: PrizeRules, sales_cents: int) -> int:
    """What of a game's sales goes neither to its prizes nor to any pot."""
    return (
        sales_cents
        - share_of_sales(sales_cents, rules.line_bp)
        - share_of_sales(sales_cents, rules.bingo_bp)
        - share_of_sales(sales_cents, rules.superbingo_bp)
        - (megabingo_contribution(sales_cents) if rules.megabingo else 0)
        - (jackpot_contribution(sales_cents) if rules.jackpot else 0)
    )


# --- Sharing a prize -------------------------------------------------------------


@dataclass(frozen=True)
class Split:
    """A prize shared among winning cards: one payment per card, and what is not paid."""

    amount: int
    payments: tuple[int, ...]

    @property
    def paid(self) -> int:
        return sum(self.payments)

    @property
    def carry(self) -> int:
        """The remainders and rounding cents: they stay in the prize or pot (R88.5)."""
        return self.amount - self.paid


def split_prize(amount: int, stake_pcts: Sequence[int]) -> Split:
    """Share ``amount`` among winning cards staked at ``stake_pcts`` (R88.2, R88.4-5).

    Card c is paid ``amount * stake_pct_c // (100 * len(stake_pcts))``: an equal share
    per card, scaled by its stake; a card staked below 100% leaves the rest unpaid.
    """
    _check_cents("a prize", amount)
    if not stake_pcts:
        raise PrizeError("a prize needs at least one winning card")
    for pct in stake_pcts:
        if isinstance(pct, bool) or not isinstance(pct, int) or not 1 <= pct <= 100:
            raise PrizeError(f"a stake is 1-100% of the card's price, not {pct!r}")
    divisor = 100 * len(stake_pcts)
    return Split(amount, tuple(amount * pct // divisor for pct in stake_pcts))


# --- Pots ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pots:
    """Every amount carried from one game to the next, in cents."""

    carry_line: int = 0
    carry_bingo: int = 0
    superbingo: int = 0
    grand_superbingo: int = 0
    megabingo: int = 0
    jackpot_accumulated: int = 0
    jackpot_reserve: int = 0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            _check_cents(field.name.replace("_", " "), getattr(self, field.name))
        if self.jackpot_accumulated > JACKPOT_CAP:
            raise LimitExceeded(
                f"the accumulated jackpot is at most {JACKPOT_CAP} cents (R91), "
                f"not {self.jackpot_accumulated}"
            )
        if self.grand_superbingo > GRAND_SUPERBINGO_CAP:
            raise LimitExceeded(
                f"the grand superbingo fund is at most {GRAND_SUPERBINGO_CAP} cents (R89), "
                f"not {self.grand_superbingo}"
            )

    @property
    def total(self) -> int:
        return sum(getattr(self, field.name) for field in dataclasses.fields(self))

    def replace(self, **changes: int) -> "Pots":
        return dataclasses.replace(self, **changes)


def superbingo_contribution(sales_cents: int, superbingo_bp: int) -> int:
    """The superbingo fund's share of a game's sales (R89: 2%-5%)."""
    return share_of_sales(sales_cents, superbingo_bp)


def megabingo_contribution(sales_cents: int) -> int:
    """The megabingo fund's share of a game's sales (R90: 1%)."""
    return share_of_sales(sales_cents, MEGABINGO_BP)


def jackpot_contribution(sales_cents: int) -> int:
    """The jackpot's share of a game's sales (R91: 10%), split by :func:`jackpot_fed`."""
    return share_of_sales(sales_cents, JACKPOT_BP)


@dataclass(frozen=True)
class JackpotSplit:
    """How an amount entering the jackpot divides between accumulated and reserve."""

    to_accumulated: int
    to_reserve: int


def jackpot_fed(amount: int, accumulated: int, accumulated_pct: int = 100) -> JackpotSplit:
    """Feed ``amount`` into the jackpot whose accumulated part stands at ``accumulated``.

    ``accumulated_pct`` of the amount is meant for the accumulated part (70 for the
    10% of sales, 100 for an operator contribution); it takes what fits under
    :data:`JACKPOT_CAP` and the reserve takes everything else (R91).
    """
    _check_cents("a jackpot amount", amount)
    meant = amount * accumulated_pct // 100
    taken = min(meant, JACKPOT_CAP - accumulated)
    return JackpotSplit(to_accumulated=taken, to_reserve=amount - taken)


def jackpot_sales_share(sales_cents: int, accumulated: int) -> JackpotSplit:
    """The 10% of sales: 70% to the accumulated part (up to the cap), the rest to reserve."""
    return jackpot_fed(jackpot_contribution(sales_cents), accumulated, JACKPOT_ACCUMULATED_PCT)


def reserve_transfer(reserve: int, accumulated: int) -> int:
    """What moves from the reserve to the accumulated jackpot after a jackpot win (R91)."""
    return min(reserve * RESERVE_TRANSFER_PCT // 100, JACKPOT_CAP - accumulated)


def reserve_boost_allowance(reserve_at_session_start: int) -> int:
    """The most a session may add from the reserve to its prizes (R91.7: 30%)."""
    return reserve_at_session_start * RESERVE_BOOST_PCT // 100


def check_reserve_boost(boost: int, boosted_before: int, allowance: int, reserve: int) -> None:
    """Refuse a boost above the session's allowance or above what the reserve holds."""
    _check_cents("a reserve boost", boost)
    if boosted_before + boost > allowance:
        raise LimitExceeded(
            f"the session's reserve boosts would total {boosted_before + boost} cents, above "
            f"{RESERVE_BOOST_PCT}% of the reserve at the session's start ({allowance} cents, R91.7)"
        )
    if boost > reserve:
        raise LimitExceeded(f"a boost of {boost} cents exceeds the reserve's {reserve} cents")


def check_operator_superbingo(contributed_today: int, amount: int) -> int:
    """Today's operator superbingo + grand superbingo total after ``amount`` (R89.5)."""
    _check_cents("an operator contribution", amount)
    total = contributed_today + amount
    if total > OPERATOR_SUPERBINGO_DAILY_LIMIT:
        raise LimitExceeded(
            f"operator contributions to the superbingo and grand superbingo would total "
            f"{total} cents today, above the {OPERATOR_SUPERBINGO_DAILY_LIMIT} a day (R89.5)"
        )
    return total


def check_grand_superbingo_fund(fund: int, amount: int) -> int:
    """The grand superbingo fund after an operator contribution of ``amount`` (R89)."""
    _check_cents("an operator contribution", amount)
    if fund + amount > GRAND_SUPERBINGO_CAP:
        raise LimitExceeded(
            f"the grand superbingo fund would reach {fund + amount} cents, above its "
            f"{GRAND_SUPERBINGO_CAP} cap (R89)"
        )
    return fund + amount


def check_operator_jackpot(contributed_this_month: int, amount: int) -> int:
    """This calendar month's operator jackpot contributions after ``amount`` (R91.9)."""
    _check_cents("an operator contribution", amount)
    total = contributed_this_month + amount
    if total > OPERATOR_JACKPOT_MONTHLY_LIMIT:
        raise LimitExceeded(
            f"operator jackpot contributions would total {total} cents this month, above "
            f"the {OPERATOR_JACKPOT_MONTHLY_LIMIT} a calendar month (R91.9)"
        )
    return total

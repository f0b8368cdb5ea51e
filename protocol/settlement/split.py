"""A prize shared among the cards that won it, and the cents the sharing leaves (R88.2, R88.4-5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from protocol.settlement.rules import PrizeError, check_cents


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
    check_cents("a prize", amount)
    if not stake_pcts:
        raise PrizeError("a prize needs at least one winning card")
    for pct in stake_pcts:
        if isinstance(pct, bool) or not isinstance(pct, int) or not 1 <= pct <= 100:
            raise PrizeError(f"a stake is 1-100% of the card's price, not {pct!r}")
    divisor = 100 * len(stake_pcts)
    return Split(amount, tuple(amount * pct // divisor for pct in stake_pcts))

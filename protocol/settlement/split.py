"""A prize shared among the cards that won it, and the cents the sharing leaves (R88.2, R88.4-5, R93.13).

Two rules, one a kind of game:

* the hall's (:func:`split_prize`, R88.4-5): an equal share per card scaled by its stake,
  each rounded down; what is not paid carries to the next game;
* the network game's (:func:`share_by_stake`, R93.13): the whole prize among its winners in
  proportion to each card's stake, the cents by the largest-remainder rule; nothing carries.
"""

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


#: How a network game shares a prize (``central_sale_closed.sharing``): the whole of it, by stake (R93.13).
BY_STAKE = "by_stake"


def share_by_stake(amount: int, stakes_cents: Sequence[int]) -> Split:
    """Share the whole of ``amount`` among winning cards staked ``stakes_cents`` (R93.13).

    Card c is first paid ``amount * stake_c // total``, the floor of its exact share; the
    cents those floors leave (fewer than the number of cards) go one each to the cards whose
    exact shares lost the largest fractions, the earlier card first among equal fractions
    (the order given: the network game gives its winners in card order).  Nothing is left:
    ``carry`` is 0.
    """
    check_cents("a prize", amount)
    if not stakes_cents:
        raise PrizeError("a prize needs at least one winning card")
    for stake in stakes_cents:
        if isinstance(stake, bool) or not isinstance(stake, int) or stake < 1:
            raise PrizeError(f"a winning card's stake is a whole number of cents, at least 1, not {stake!r}")
    total = sum(stakes_cents)
    floors = [amount * stake // total for stake in stakes_cents]
    left = amount - sum(floors)
    # Largest remainder first; Python's sort is stable, so equal remainders keep the cards' order.
    order = sorted(range(len(stakes_cents)), key=lambda c: -(amount * stakes_cents[c] % total))
    for c in order[:left]:
        floors[c] += 1
    return Split(amount, tuple(floors))

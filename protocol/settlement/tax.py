"""What of a game's stakes is the tax (R98) and what is the house's."""

from __future__ import annotations

from protocol.settlement.pots import sales_contributions
from protocol.settlement.rules import PrizeRules, share_of_sales

TAX_PCT = 10  # R98: of the amounts staked


def tax_cents(sales_cents: int) -> int:
    """The bingo tax on a game's stakes (R98): 10%, rounded down."""
    return sales_cents * TAX_PCT // 100


def house_share(rules: PrizeRules, sales_cents: int) -> int:
    """What of a game's sales goes neither to its prizes nor to any pot.

    The line and bingo count at their percentages: a fixed sum above them is the
    house's own top-up (R88.3), not a part of the sales.
    """
    return (
        sales_cents
        - share_of_sales(sales_cents, rules.line_bp)
        - share_of_sales(sales_cents, rules.bingo_bp)
        - sum(sales_contributions(rules, sales_cents, 0).values())
    )

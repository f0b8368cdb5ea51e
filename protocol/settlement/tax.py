"""What of a game's stakes is the tax (R98) and what is the house's."""

from __future__ import annotations

from protocol.settlement.pots import sales_contributions
from protocol.settlement.rules import PrizeRules, share_of_sales

TAX_PCT = 10  # R98: of the amounts staked


def tax_cents(sales_cents: int) -> int:
    """The bingo tax on a game's stakes (R98): 10%, rounded down."""
    return sales_cents * TAX_PCT // 100


def tax_base_after_refunds(sales_cents: int, refunded_cents: int) -> int:
    """The amounts staked on a game once the stakes refunded after its sale's close are taken out (R98).

    A failed terminal's cards refunded after the close (R96.3) were never played: the
    house pays them back, and what it paid back was not staked.  Refunds before the close
    never reach the collection, and a refunded game owes no tax at all.
    """
    if refunded_cents < 0 or refunded_cents > sales_cents:
        raise ValueError(f"a game that collected {sales_cents} cents cannot have refunded {refunded_cents}")
    return sales_cents - refunded_cents


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

"""The settlement of a hall game: every money figure, in integer cents (R82, R86, R88-R91, R96, R98).

One computation shared by the hall server (``hall_server/hall/games/``), the audit
replay (``bingo replay``, :mod:`protocol.replay`) and the audit export's checks, so the
money the hall moves and the money an inspector recomputes cannot drift apart.
Every division rounds down (floor), as the replay format fixes (FORMATS.md section 2);
no function rounds up, and none ever uses a float.

========================= ============================================================
module                    concern
========================= ============================================================
:mod:`.rules`             the prize rules (shares in basis points, the 70% floor), a
                          card's stake and a game's sales; the errors
:mod:`.pots`              the pot levels, their funding from sales and by the operator
                          within its limits, the jackpot's cap, reserve and boosts, what
                          its bank account must receive each day (R91.11), and the
                          operator's unwon contributions it may take back (R91.9)
:mod:`.prizes`            the figures the sale's close fixes (line, bingo, contributions,
                          house, tax) and the pots a bingo wins, under a ruling
:mod:`.split`             a prize shared among its winners, and the cents left over;
                          the network game's sharing of the whole prize (R93.13)
:mod:`.carry`             where unpaid cents and an unwon superbingo go
:mod:`.tax`               the tax (R98), its base after late refunds, the house's share
:mod:`.refunds`           stakes given back, as ledger postings (R86.2, R96.3)
========================= ============================================================
"""

from protocol.settlement.carry import (
    carry_forward,
    superbingo_fund_to_last_game,
    superbingo_goes_to_last_game,
    superbingo_won,
)
from protocol.settlement.pots import (
    GRAND_SUPERBINGO_CAP,
    JACKPOT_ACCUMULATED_PCT,
    JACKPOT_BANK_ACCOUNT,
    JACKPOT_CAP,
    OPERATOR_JACKPOT_MONTHLY_LIMIT,
    OPERATOR_POTS,
    OPERATOR_SUPERBINGO_DAILY_LIMIT,
    POT_ACCOUNTS,
    RESERVE_BOOST_PCT,
    RESERVE_TRANSFER_PCT,
    JackpotContribution,
    JackpotRecovery,
    JackpotSplit,
    OperatorContribution,
    OperatorJackpot,
    Pots,
    check_grand_superbingo_fund,
    check_operator_jackpot,
    check_operator_superbingo,
    check_reserve_boost,
    jackpot_bank_surplus,
    jackpot_contribution,
    jackpot_deposit_due,
    jackpot_fed,
    jackpot_funds,
    jackpot_recovery,
    jackpot_sales_share,
    megabingo_contribution,
    operator_contribution,
    recovery_last_day,
    reserve_boost_allowance,
    reserve_transfer,
    sales_contributions,
    superbingo_contribution,
)
from protocol.settlement.prizes import (
    FIRST_RULING,
    POT_PRIZES,
    PRIZE_FUNDS,
    RULING,
    BingoPots,
    PotPrize,
    PotRuling,
    PotsInPlay,
    SaleFigures,
    bingo_pot_prizes,
    close_sale,
)
from protocol.settlement.rules import (
    BASIS_POINTS,
    JACKPOT_BP,
    JACKPOT_THRESHOLDS,
    MEGABINGO_BP,
    MEGABINGO_NOTICE_DAYS,
    PAPER_STAKE_PCT,
    PAYOUT_FLOOR_BP,
    SUPERBINGO_BP_MAX,
    SUPERBINGO_BP_MIN,
    SUPERBINGO_LIMITS,
    LimitExceeded,
    PayoutFloorError,
    PrizeError,
    PrizeRules,
    game_sales,
    share_of_sales,
    stake_cents,
)
from protocol.settlement.split import BY_STAKE, Split, share_by_stake, split_prize
from protocol.settlement.tax import TAX_PCT, house_share, tax_base_after_refunds, tax_cents

__all__ = [
    "BASIS_POINTS", "BY_STAKE", "GRAND_SUPERBINGO_CAP", "JACKPOT_ACCUMULATED_PCT", "JACKPOT_BANK_ACCOUNT", "JACKPOT_BP", "JACKPOT_CAP", "JACKPOT_THRESHOLDS", "MEGABINGO_NOTICE_DAYS", "SUPERBINGO_LIMITS",
    "MEGABINGO_BP", "OPERATOR_JACKPOT_MONTHLY_LIMIT", "OPERATOR_POTS", "OPERATOR_SUPERBINGO_DAILY_LIMIT",
    "PAPER_STAKE_PCT", "PAYOUT_FLOOR_BP", "POT_ACCOUNTS", "POT_PRIZES", "PRIZE_FUNDS", "RESERVE_BOOST_PCT", "RESERVE_TRANSFER_PCT",
    "SUPERBINGO_BP_MAX", "SUPERBINGO_BP_MIN", "TAX_PCT",
    "FIRST_RULING", "RULING",
    "BingoPots", "JackpotContribution", "JackpotRecovery", "JackpotSplit", "LimitExceeded", "OperatorContribution",
    "OperatorJackpot", "PayoutFloorError", "PotPrize", "PotRuling",
    "Pots", "PotsInPlay", "PrizeError", "PrizeRules", "SaleFigures", "Split",
    "bingo_pot_prizes", "carry_forward", "check_grand_superbingo_fund", "check_operator_jackpot",
    "check_operator_superbingo", "check_reserve_boost", "close_sale", "game_sales", "house_share",
    "jackpot_bank_surplus", "jackpot_contribution", "jackpot_deposit_due", "jackpot_fed", "jackpot_funds", "jackpot_recovery", "jackpot_sales_share", "megabingo_contribution",
    "operator_contribution", "recovery_last_day", "reserve_boost_allowance", "reserve_transfer", "sales_contributions",
    "share_by_stake", "share_of_sales", "split_prize", "stake_cents", "superbingo_contribution", "superbingo_fund_to_last_game",
    "superbingo_goes_to_last_game",
    "superbingo_won", "tax_base_after_refunds", "tax_cents",
]

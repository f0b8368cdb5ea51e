"""Prize and pot arithmetic (R88-R91, R98): hand-computed cases and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.settlement import (
    GRAND_SUPERBINGO_CAP,
    JACKPOT_CAP,
    LimitExceeded,
    PayoutFloorError,
    Pots,
    PrizeError,
    PrizeRules,
    check_grand_superbingo_fund,
    check_operator_jackpot,
    check_operator_superbingo,
    check_reserve_boost,
    house_share,
    jackpot_fed,
    jackpot_sales_share,
    megabingo_contribution,
    reserve_boost_allowance,
    reserve_transfer,
    split_prize,
    stake_cents,
    superbingo_contribution,
    tax_cents,
)


@pytest.mark.req("R88.2", "R88.4-5")
def test_split_pays_each_card_its_stake_share_and_carries_the_rest() -> None:
    """1000 among cards staked 100%, 100%, 50%: 333, 333, 166 paid, 168 carried."""
    split = split_prize(1000, [100, 100, 50])
    assert split.payments == (333, 333, 166)
    assert (split.paid, split.carry) == (832, 168)


@pytest.mark.req("R88.4-5")
def test_single_full_stake_winner_takes_all_and_zero_prizes_split_to_zero() -> None:
    assert split_prize(4567, [100]).payments == (4567,)
    assert split_prize(4567, [100]).carry == 0
    assert split_prize(0, [100, 40]).payments == (0, 0)


@pytest.mark.parametrize("stakes", [[], [0], [101], [True]])
def test_split_refuses_no_winner_and_bad_stakes(stakes: list[int]) -> None:
    with pytest.raises(PrizeError):
        split_prize(100, stakes)


@pytest.mark.req("R88.2", "R88.4-5")
@settings(max_examples=200)
@given(st.integers(0, 10**9), st.lists(st.integers(1, 100), min_size=1, max_size=30))
def test_split_never_creates_or_loses_a_cent(amount: int, stakes: list[int]) -> None:
    """Payments plus carry equal the prize; each payment is its stake's floor share."""
    split = split_prize(amount, stakes)
    assert split.paid + split.carry == amount
    assert split.carry >= 0
    for pct, paid in zip(stakes, split.payments):
        assert paid * 100 * len(stakes) <= amount * pct < (paid + 1) * 100 * len(stakes)
    if all(pct == 100 for pct in stakes):
        assert split.carry < len(stakes)  # only rounding cents stay


@pytest.mark.req("R88.1", "R94.1")
@pytest.mark.parametrize(
    "rules",
    [
        PrizeRules(line_bp=2000, bingo_bp=5000),
        PrizeRules(line_bp=1500, bingo_bp=4500, superbingo_bp=300, megabingo=True, jackpot=True),
        PrizeRules(line_bp=0, bingo_bp=6000, jackpot=True),
        PrizeRules(line_bp=3000, bingo_bp=7000),
    ],
)
def test_payout_floor_accepts_70_percent_and_more(rules: PrizeRules) -> None:
    rules.check()
    assert 7000 <= rules.payout_bp <= 10000


@pytest.mark.req("R88.1", "R94.1")
def test_payout_floor_refuses_less_than_70_percent_with_a_clear_error() -> None:
    """6999 basis points are refused, naming the total and the 70% floor."""
    with pytest.raises(PayoutFloorError, match=r"6999 basis points.*at least 7000 \(70%"):
        PrizeRules(line_bp=1399, bingo_bp=4500, superbingo_bp=0, megabingo=True, jackpot=True).check()


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (PrizeRules(line_bp=2000, bingo_bp=5000, superbingo_bp=199), "0 \\(none\\) or 200-500"),
        (PrizeRules(line_bp=2000, bingo_bp=5000, superbingo_bp=501), "0 \\(none\\) or 200-500"),
        (PrizeRules(line_bp=5000, bingo_bp=5001), "more than the 10000"),
    ],
)
def test_rules_refuse_superbingo_outside_2_to_5_percent_and_more_than_all_sales(
    rules: PrizeRules, message: str
) -> None:
    with pytest.raises(PrizeError, match=message):
        rules.check()


@pytest.mark.req("R89", "R90", "R91", "R98")
def test_contributions_stakes_and_tax_round_down() -> None:
    assert stake_cents(150, 33) == 49
    assert superbingo_contribution(1999, 300) == 59
    assert megabingo_contribution(1999) == 19
    assert tax_cents(1999) == 199
    rules = PrizeRules(line_bp=1500, bingo_bp=4500, superbingo_bp=300, megabingo=True, jackpot=True)
    # 1000 of sales: line 150, bingo 450, superbingo 30, megabingo 10, jackpot 100.
    assert house_share(rules, 1000) == 260


@pytest.mark.req("R91")
def test_jackpot_sales_share_is_70_30_of_ten_percent() -> None:
    """12,345 of sales: J = 1234, 863 to the accumulated jackpot, 371 to the reserve."""
    share = jackpot_sales_share(12_345, accumulated=0)
    assert (share.to_accumulated, share.to_reserve) == (863, 371)


@pytest.mark.req("R91")
def test_jackpot_excess_over_the_cap_goes_to_the_reserve() -> None:
    """Only 100 fits under the cap: the other 600 of the 70% join the 300 of reserve."""
    share = jackpot_sales_share(10_000, accumulated=JACKPOT_CAP - 100)
    assert (share.to_accumulated, share.to_reserve) == (100, 900)
    operator = jackpot_fed(200_000, accumulated=1_400_000)
    assert (operator.to_accumulated, operator.to_reserve) == (100_000, 100_000)


@pytest.mark.req("R91")
@settings(max_examples=200)
@given(st.integers(0, 10**9), st.integers(0, JACKPOT_CAP), st.sampled_from([70, 100]))
def test_jackpot_feeding_keeps_every_cent_and_the_cap(amount: int, accumulated: int, pct: int) -> None:
    fed = jackpot_fed(amount, accumulated, pct)
    assert fed.to_accumulated + fed.to_reserve == amount
    assert 0 <= fed.to_accumulated and 0 <= fed.to_reserve
    assert accumulated + fed.to_accumulated <= JACKPOT_CAP


@pytest.mark.req("R91")
def test_reserve_transfer_after_a_win_is_70_percent_up_to_the_cap() -> None:
    assert reserve_transfer(reserve=50_030, accumulated=0) == 35_021
    assert reserve_transfer(reserve=1_000, accumulated=JACKPOT_CAP - 500) == 500
    assert reserve_transfer(reserve=10**8, accumulated=0) == JACKPOT_CAP


@pytest.mark.req("R91")
def test_reserve_boost_is_limited_to_30_percent_of_the_session_start_and_the_reserve() -> None:
    allowance = reserve_boost_allowance(10_001)
    assert allowance == 3000
    check_reserve_boost(1000, boosted_before=2000, allowance=allowance, reserve=1000)
    with pytest.raises(LimitExceeded, match="total 3001 cents.*30%"):
        check_reserve_boost(1001, boosted_before=2000, allowance=allowance, reserve=5000)
    with pytest.raises(LimitExceeded, match="exceeds the reserve's 900 cents"):
        check_reserve_boost(1000, boosted_before=0, allowance=allowance, reserve=900)


@pytest.mark.req("R89.5")
def test_operator_superbingo_contributions_stop_at_300000_a_day() -> None:
    assert check_operator_superbingo(200_000, 100_000) == 300_000
    with pytest.raises(LimitExceeded, match="300001 cents today.*R89.5"):
        check_operator_superbingo(200_000, 100_001)


@pytest.mark.req("R89")
def test_grand_superbingo_fund_stops_at_400000() -> None:
    assert check_grand_superbingo_fund(399_999, 1) == GRAND_SUPERBINGO_CAP
    with pytest.raises(LimitExceeded, match="400001 cents"):
        check_grand_superbingo_fund(399_999, 2)


@pytest.mark.req("R91")
def test_operator_jackpot_contributions_stop_at_1500000_a_month() -> None:
    assert check_operator_jackpot(1_000_000, 500_000) == 1_500_000
    with pytest.raises(LimitExceeded, match="1500001 cents this month"):
        check_operator_jackpot(1_000_000, 500_001)


@pytest.mark.parametrize(
    "levels",
    [{"superbingo": -1}, {"jackpot_accumulated": JACKPOT_CAP + 1},
     {"grand_superbingo": GRAND_SUPERBINGO_CAP + 1}, {"megabingo": 1.0}],
)
def test_pots_refuse_negative_levels_and_levels_over_a_cap(levels: dict) -> None:
    with pytest.raises(PrizeError):
        Pots(**levels)


def test_pots_total_counts_every_level() -> None:
    assert Pots(1, 2, 3, 4, 5, 6, 7).total == 28
    assert Pots().replace(megabingo=5).megabingo == 5

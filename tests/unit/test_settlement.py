"""The settlement's own rules, and that the hall's game and the replay leave every money figure to it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.events import CardSold
from protocol.settlement import (
    FIRST_RULING,
    JACKPOT_CAP,
    LimitExceeded,
    OperatorJackpot,
    Pots,
    PotsInPlay,
    PrizeError,
    PrizeRules,
    bingo_pot_prizes,
    close_sale,
    game_sales,
    house_share,
    jackpot_recovery,
    operator_contribution,
    recovery_last_day,
    share_by_stake,
    split_prize,
    tax_base_after_refunds,
    tax_cents,
)
from protocol.settlement.refunds import contributions_returned, terminal_refund_postings

ROOT = Path(__file__).resolve().parents[2]
RULES = PrizeRules(line_bp=1500, bingo_bp=4100, superbingo_bp=300, megabingo=True, jackpot=True)


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "protocol" / "settlement").glob("*.py")), ids=lambda p: p.name)
def test_the_settlement_is_pure(path: Path) -> None:
    """No framework, no clock, no randomness, no operating system: the same inputs give the same cents."""
    bad = imported(path) & {"twisted", "sqlalchemy", "os", "time", "random", "datetime", "hall_server"}
    assert not bad, f"{path.name} imports {', '.join(sorted(bad))}"


@pytest.mark.parametrize(
    "path",
    [*sorted((ROOT / "hall_server" / "hall" / "games").glob("*.py")), ROOT / "protocol" / "replay.py",
     ROOT / "protocol" / "audit" / "hall_day.py"],
    ids=lambda p: p.name,
)
def test_the_hall_game_and_the_replay_compute_no_money_themselves(path: Path) -> None:
    """Every share, split and rounding is the settlement's: these modules neither multiply nor divide."""
    ops = [
        node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.Mod))
        and not isinstance(node.left, ast.Constant | ast.JoinedStr)  # text formatting
    ]
    assert not ops, f"{path.name} computes at lines {ops}; call protocol.settlement instead"


@pytest.mark.req("R88.4-5", "R89", "R90", "R91", "R98")
def test_the_close_of_a_sale_fixes_every_figure_from_the_sales_and_the_pots() -> None:
    pots = Pots(carry_line=7, carry_bingo=3, jackpot_accumulated=JACKPOT_CAP - 10)
    figures = close_sale(RULES, 10_001, pots)
    assert figures.line_cents == 1500 + 7 and figures.bingo_cents == 4100 + 3
    assert dict(figures.contributions) == {
        "superbingo": 300, "megabingo": 100, "jackpot_accumulated": 10, "jackpot_reserve": 990,  # the cap diverts
    }
    assert figures.tax_cents == 1000 and figures.house_cents == house_share(RULES, 10_001) == 10_001 - 1500 - 4100 - 1400
    after = figures.pots_after(pots)
    assert (after.carry_line, after.carry_bingo, after.jackpot_accumulated) == (0, 0, JACKPOT_CAP)


@given(st.integers(1, 10**7), st.lists(st.integers(1, 100), min_size=1, max_size=8))
def test_a_close_never_hands_out_more_than_it_collects(price: int, stakes: list[int]) -> None:
    sales = game_sales(price, stakes)
    figures = close_sale(RULES, sales, Pots())
    assert figures.line_cents + figures.bingo_cents + sum(figures.contributions.values()) + figures.house_cents == sales


@pytest.mark.req("R89.5", "R91.9", "R89")
def test_operator_contributions_go_to_their_pot_within_the_limits() -> None:
    pots = Pots(jackpot_accumulated=JACKPOT_CAP - 100, grand_superbingo=399_000)
    jackpot = operator_contribution("jackpot", 500, pots, 0, 1_499_000)
    assert dict(jackpot.credits) == {"jackpot_accumulated": 100, "jackpot_reserve": 400}
    assert jackpot.jackpot_this_month == 1_499_500
    with pytest.raises(LimitExceeded, match="R91.9"):
        operator_contribution("jackpot", 501, pots, 0, 1_499_500)
    with pytest.raises(LimitExceeded, match="R89.5"):
        operator_contribution("superbingo", 2, pots, 299_999, 0)
    with pytest.raises(LimitExceeded, match="cap"):
        operator_contribution("grand_superbingo", 1_001, pots, 0, 0)
    with pytest.raises(PrizeError, match="not 'megabingo'"):
        operator_contribution("megabingo", 1, pots, 0, 0)


@pytest.mark.req("R89", "R90", "R91", "R88.4-5")
def test_a_bingo_wins_its_pots_in_the_replay_order_and_unpaid_cents_stay() -> None:
    pots = Pots(superbingo=1001, megabingo=50, jackpot_accumulated=3001, jackpot_reserve=1000)
    won = bingo_pot_prizes(
        PotsInPlay(superbingo_limit=50, jackpot_threshold=41, megabingo_cents=40), 41, [100, 50], pots,
        last_game=True,
    )
    # The megabingo pays its whole fund, the announced 40 cents being its least (R90).
    assert [(p.prize, p.split.payments) for p in won.prizes] == [
        ("superbingo", (500, 250)), ("megabingo", (25, 12)), ("jackpot", (1500, 750)),
    ]
    # This game's superbingo was won: what its split left stays in the fund (R88.4-5), not a last-game prize.
    assert won.superbingo_won is True
    assert won.reserve_transfer_cents == 700
    assert won.pots == Pots(superbingo=251, megabingo=13, jackpot_accumulated=751 + 700, jackpot_reserve=300)


@pytest.mark.req("R89")
def test_the_last_game_takes_the_superbingo_fund_whatever_the_sessions_superbingo_games_did() -> None:
    pots = Pots(superbingo=900)
    for in_play, earlier in ((PotsInPlay(), False), (PotsInPlay(), True), (PotsInPlay(), None),
                             (PotsInPlay(superbingo_limit=45), True)):
        taken = bingo_pot_prizes(in_play, 60, [100, 100], pots, last_game=True, earlier_superbingo_won=earlier)
        assert [(p.prize, p.split.payments) for p in taken.prizes] == [("superbingo_last_game", (450, 450))]
        assert taken.pots.superbingo == 0
    assert not bingo_pot_prizes(PotsInPlay(), 60, [100], pots, last_game=False).prizes
    assert not bingo_pot_prizes(PotsInPlay(), 60, [100], Pots(), last_game=True).prizes  # an empty fund pays nothing


@pytest.mark.req("R89")
def test_under_the_first_ruling_the_last_game_took_only_an_unwon_superbingo() -> None:
    """``bingo-replay/1`` files replay as the days were paid then."""
    pots = Pots(superbingo=900)
    taken = bingo_pot_prizes(PotsInPlay(), 60, [100, 100], pots, last_game=True, earlier_superbingo_won=False,
                             ruling=FIRST_RULING)
    assert [(p.prize, p.split.payments) for p in taken.prizes] == [("superbingo_last_game", (450, 450))]
    for last_game, earlier in ((False, False), (True, True), (True, None)):
        assert not bingo_pot_prizes(PotsInPlay(), 60, [100], pots, last_game=last_game,
                                    earlier_superbingo_won=earlier, ruling=FIRST_RULING).prizes
    megabingo = bingo_pot_prizes(PotsInPlay(megabingo_cents=40), 60, [100], Pots(megabingo=50), last_game=False,
                                 ruling=FIRST_RULING)
    assert [(p.prize, p.split.amount) for p in megabingo.prizes] == [("megabingo", 40)]
    assert megabingo.pots.megabingo == 10


@pytest.mark.req("R90")
def test_a_megabingo_fund_below_its_announced_minimum_is_refused() -> None:
    with pytest.raises(LimitExceeded, match="exceed the megabingo fund's 39 cents"):
        bingo_pot_prizes(PotsInPlay(megabingo_cents=40), 30, [100], Pots(megabingo=39), last_game=False)


@pytest.mark.req("R91.9")
def test_the_operator_takes_back_only_unwon_contributions_within_their_year() -> None:
    operator = OperatorJackpot().contributed("2026-03-10", 10_000).contributed("2026-04-01", 5_000)
    pots = Pots(jackpot_accumulated=12_000, jackpot_reserve=4_000)
    # Not on the day of the contribution: the year runs from the day after it.
    assert operator.recoverable("2026-03-10") == 0
    assert operator.recoverable("2026-03-11") == 10_000
    assert operator.recoverable("2027-03-10") == 15_000 and operator.recoverable("2027-03-11") == 5_000
    assert operator.recoverable("2027-04-02") == 0
    # A jackpot won takes the oldest contribution first.
    after_win = operator.won(12_000)
    assert [(c.date, c.unwon_cents) for c in after_win.contributions] == [("2026-04-01", 3_000)]
    with pytest.raises(LimitExceeded, match=r"at most 3000 cents on 2026-05-01"):
        jackpot_recovery(after_win, pots, "2026-05-01", 3_001)
    taken = jackpot_recovery(operator, pots, "2026-05-01", 13_000)
    assert taken.taken == (("2026-03-10", 10_000), ("2026-04-01", 3_000))
    assert (taken.from_accumulated, taken.from_reserve) == (12_000, 1_000)
    assert [(c.date, c.unwon_cents) for c in taken.operator_jackpot.contributions] == [("2026-04-01", 2_000)]
    # Never more than the jackpot's funds hold.
    with pytest.raises(LimitExceeded, match="funds of 2000 cents"):
        jackpot_recovery(operator, Pots(jackpot_reserve=2_000), "2026-05-01", 2_001)
    assert recovery_last_day("2028-02-29") == "2029-02-28" and recovery_last_day("2026-12-31") == "2027-12-31"


@pytest.mark.req("R88.2", "R88.4-5")
def test_a_split_pays_each_card_its_stake_of_an_equal_share() -> None:
    split = split_prize(1001, [100, 100, 33])
    assert split.payments == (333, 333, 110) and split.carry == 225


@pytest.mark.req("R93.13")
def test_R93_13_the_network_sharing_pays_the_whole_prize_by_stake_cents_by_the_largest_remainder() -> None:
    # 1001 cents among stakes 100, 100 and 33: exact shares 429.61, 429.61 and 141.77; the floors
    # leave 2 cents, to the largest fractions: the third card, then the first (the earlier of two equal).
    assert share_by_stake(1001, [100, 100, 33]).payments == (430, 429, 142)
    assert share_by_stake(1000, [100, 100, 33]).payments == (429, 429, 142)
    # Equal fractions: the earlier card first.
    assert share_by_stake(2, [1, 1, 1]).payments == (1, 1, 0)
    split = share_by_stake(0, [50])
    assert split.payments == (0,) and split.carry == 0
    with pytest.raises(PrizeError, match="at least 1"):
        share_by_stake(100, [100, 0])
    with pytest.raises(PrizeError, match="at least one winning card"):
        share_by_stake(100, [])


@given(st.integers(0, 10**9), st.lists(st.integers(1, 10_000), min_size=1, max_size=40))
@pytest.mark.req("R93.13")
def test_R93_13_every_cent_of_a_network_prize_is_paid_each_card_within_a_cent_of_its_exact_share(
    amount: int, stakes: list[int]
) -> None:
    from fractions import Fraction

    split = share_by_stake(amount, stakes)
    assert split.paid == amount and split.carry == 0
    total = sum(stakes)
    exact = [Fraction(amount * stake, total) for stake in stakes]
    assert all(e - 1 < paid < e + 1 for e, paid in zip(exact, split.payments))
    # Largest remainder: a card rounded up never lost a smaller fraction than one rounded down.
    up = [e - int(e) for e, paid in zip(exact, split.payments) if paid > e]
    down = [e - int(e) for e, paid in zip(exact, split.payments) if paid < e]
    assert not up or not down or min(up) >= max(down)


@pytest.mark.req("R86.1-2", "R96.3")
def test_refund_postings_give_back_the_pots_share_and_a_failed_terminal_s_stakes() -> None:
    (back,) = contributions_returned("g1", {"pot:superbingo": 30, "pot:megabingo": 0}, 9)
    assert back.amount == 30 and back.reason == "pots:contribution returned"
    assert contributions_returned("g1", {}, 9) == ()
    sale = CardSold("g1", 9001, 4, 100, 60, "player:p1", "T1")
    (before,) = terminal_refund_postings([sale], "g1", 12, sale_closed=False)
    (after,) = terminal_refund_postings([sale], "g1", 12, sale_closed=True)
    assert before.signed() == {"stakes:g1": 60, "player:p1": -60}
    assert after.signed() == {"house": 60, "player:p1": -60}  # the prizes announced on the stakes stand


@pytest.mark.req("R98")
@given(sales=st.integers(0, 10**9), share=st.integers(0, 100))
def test_the_tax_base_is_the_collection_less_the_stakes_refunded_after_the_close(sales: int, share: int) -> None:
    """R98: what was refunded after the close was not staked; nothing else leaves the base."""
    refunded = sales * share // 100
    base = tax_base_after_refunds(sales, refunded)
    assert base == sales - refunded and tax_cents(base) <= tax_cents(sales)
    assert tax_base_after_refunds(sales, 0) == sales
    with pytest.raises(ValueError, match="cannot have refunded"):
        tax_base_after_refunds(sales, sales + 1)

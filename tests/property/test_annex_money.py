"""The hall-annex game's money (R3.5.b, R87, R88.2, R88.5, R98): both halls settle the same facts to the same cents."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import pytest

from protocol.annex import JointClaim, house_and_tax, joint_pool, owed_to_partner, prize_shares
from protocol.settlement import PrizeRules, close_sale, Pots

pytestmark = pytest.mark.req("R3.5.b", "R87.b", "R88.2", "R88.5")

MAIN, ANNEX = "hall-1", "hall-2"
RULES = st.builds(lambda line, bingo: PrizeRules(line_bp=line, bingo_bp=bingo),
                  st.integers(500, 3000), st.integers(4000, 7000))
CLAIMS = st.lists(st.builds(JointClaim, st.sampled_from((MAIN, ANNEX)), st.sampled_from(("line", "bingo")),
                            st.integers(1, 60).map(lambda n: f"1001-{n}"), st.integers(5, 70)), max_size=12)


@given(RULES, st.integers(1, 600), st.integers(0, 600), CLAIMS)
def test_R3_5_b_what_one_hall_owes_the_other_is_owed_and_every_cent_is_paid_carried_or_the_house_s(
        rules: PrizeRules, main_cards: int, annex_cards: int, claims: list[JointClaim]) -> None:
    pool = joint_pool(rules, (main_cards, main_cards * 100), (annex_cards, annex_cards * 100))
    figures = close_sale(rules, pool.sales_cents, Pots())
    assert (pool.line_cents, pool.bingo_cents) == (figures.line_cents, figures.bingo_cents)
    sides = {here: prize_shares(pool, claims, main=MAIN, here=here) for here in (MAIN, ANNEX)}
    assert [s.winners for s in sides[MAIN]] == [s.winners for s in sides[ANNEX]], "one set of winners"
    owed = {here: owed_to_partner(sides[here], main=MAIN, here=here) for here in (MAIN, ANNEX)}
    assert owed[MAIN] == -owed[ANNEX]
    for share in sides[MAIN]:
        balls = [c.ball_count for c in claims if c.pattern == share.pattern]
        if balls:  # every card on the earliest ball shares (the R87 ruling), each floor(P / W)
            sharing = {(c.hall_id, c.card) for c in claims if c.pattern == share.pattern and c.ball_count == min(balls)}
            assert {(h, c) for h, c, _ in share.winners} == sharing
            assert {cents for _, _, cents in share.winners} == {share.amount_cents // len(sharing)}
        paid = sum(cents for _, _, cents in share.winners)
        assert paid + share.carry_cents == share.amount_cents
    for here, own in ((MAIN, main_cards * 100), (ANNEX, annex_cards * 100)):
        house, tax = house_and_tax(rules, pool, here_is_main=here == MAIN)
        paid_here = sum(s.paid_here_cents for s in sides[here])
        carried = sum(s.carry_cents for s in sides[here]) if here == MAIN else 0
        assert own - paid_here - carried - owed[here] - house == 0, f"{here}: the game's stakes end at zero"
        assert tax == own // 10

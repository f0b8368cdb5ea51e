"""The hall-annex game's money (R3.5.b, R87, R88.2, R88.5, R98): both halls settle the same facts to the same cents.

The first property takes the settlement alone, on claims drawn at random; the second
plays whole joint games through both halls' modules (each on its own journal, the
central server's relay between them): paper cards and virtual cards at every stake in
both rooms, the main hall's draw, every paper card called at its ball, the virtual cards
found by their rooms, the close and each hall's payments.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.annex import JointClaim, house_and_tax, joint_pool, owed_to_partner, prize_shares
from protocol.settlement import PrizeRules, close_sale, Pots, split_prize
from protocol.wins import completion_balls
from tests.audit.conftest import fast_folder
from tests.audit.halls import SAFE, VIRTUAL_NUMBER, Purchase
from tests.network.joint_halls import JointHall, JointPlan, open_pair, play_joint_game


MAIN, ANNEX = "hall-1", "hall-2"
RULES = st.builds(lambda line, bingo: PrizeRules(line_bp=line, bingo_bp=bingo),
                  st.integers(500, 3000), st.integers(4000, 7000))
CLAIMS = st.lists(st.builds(JointClaim, st.sampled_from((MAIN, ANNEX)), st.sampled_from(("line", "bingo")),
                            st.integers(1, 60).map(lambda n: f"1001-{n}"), st.integers(5, 70)), max_size=12)


@pytest.mark.req("R88.2", "R88.4-5")
@given(RULES, st.integers(1, 600), st.integers(0, 600), CLAIMS)
def test_what_one_hall_owes_the_other_is_owed_and_every_cent_is_paid_carried_or_the_house_s(
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


# --- Whole joint games through both halls' modules ---------------------------------------------

#: Examples of whole games (``ANNEX_EXAMPLES`` in the environment runs more).
GAME_EXAMPLES = int(os.environ.get("ANNEX_EXAMPLES", "25"))
purchases = st.builds(Purchase, player=st.integers(0, 2), terminal=st.integers(0, 1), quantity=st.integers(1, 12),
                      stake_pct=st.one_of(st.just(100), st.integers(1, 100)))
plans = st.builds(JointPlan, main_paper=st.integers(1, 60), annex_paper=st.integers(1, 60),
                  main_purchases=st.lists(purchases, max_size=4), annex_purchases=st.lists(purchases, max_size=4),
                  seed=st.integers(0, 2**32))


def _room_sales(hall: JointHall, game_id: str) -> int:
    paper = sum(r.payload["amount_cents"] for r in hall.of("annex_cards_sold") if r.payload["game_id"] == game_id)
    virtual = sum(r.payload["amount_cents"] for r in hall.of("annex_virtual_cards_bought")
                  if r.payload["game_id"] == game_id)
    return paper + virtual


def _cards_in_play(hall: JointHall, game_id: str) -> dict[str, tuple[np.ndarray, int]]:
    """Every card the room sold in the game: its cells and its stake percentage."""
    cards = {}
    for r in hall.of("annex_cards_sold"):
        for number in range(r.payload["first"], r.payload["last"] + 1):
            cards[f"{r.payload['series']}-{number}"] = (hall.set_cells[number - 1], 100)
    for r in hall.of("annex_virtual_cards_bought"):
        for number in range(r.payload["first"], r.payload["last"] + 1):
            cards[f"{r.payload['series']}-{number}"] = (hall.library_cells[number - 1], r.payload["stake_pct"])
    return cards


@pytest.mark.req("R82.13-16", "R85.9", "R87.a", "R87.b", "R88.2", "R88.4-5", "R93.10", "R98")
@settings(max_examples=GAME_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans, st.sampled_from([PrizeRules(1500, 5500), PrizeRules(2000, 6000), PrizeRules(700, 6300)]))
def test_random_joint_games_with_paper_and_virtual_cards_in_both_rooms_add_up_to_the_cent(
        plan: JointPlan, rules: PrizeRules) -> None:
    folder = fast_folder()
    try:
        main, annex, relay = open_pair(folder, rules)
        game_id = play_joint_game(main, annex, relay, plan)
        halls = {MAIN: main, ANNEX: annex}
        pools = [{k: v for k, v in hall.of("annex_pool")[0].payload.items() if k != "actor"} for hall in (main, annex)]
        assert pools[0] == pools[1], "both halls journal one pool"
        pool = pools[0]
        own = {hall_id: _room_sales(hall, game_id) for hall_id, hall in halls.items()}
        assert (pool["main_sales_cents"], pool["annex_sales_cents"]) == (own[MAIN], own[ANNEX])
        assert pool["sales_cents"] == own[MAIN] + own[ANNEX], "the pool is the sum of both rooms' sales"
        figures = close_sale(rules, pool["sales_cents"], Pots())
        assert (pool["line_cents"], pool["bingo_cents"]) == (figures.line_cents, figures.bingo_cents)

        paid = {hall_id: hall.of("annex_prizes_paid")[0].payload for hall_id, hall in halls.items()}
        cards = {hall_id: _cards_in_play(hall, game_id) for hall_id, hall in halls.items()}
        balls = main.game().balls
        everyone = [(hall_id, card, cells, pct)
                    for hall_id, held in cards.items() for card, (cells, pct) in held.items()]
        done = completion_balls(np.array([cells for _, _, cells, _ in everyone], dtype=np.uint8), balls)
        total_paid = carried = 0
        for prize_main, prize_annex in zip(paid[MAIN]["prizes"], paid[ANNEX]["prizes"]):
            pattern = prize_main["pattern"]
            assert prize_main["winners"] == prize_annex["winners"], f"both halls know the same {pattern} winners"
            completed = done.line if pattern == "line" else done.bingo
            ball = int(completed.min())
            sharing = [everyone[i] for i in np.flatnonzero(completed == ball)]
            # Every card of either room complete on the earliest ball shares, paper (called at once) or
            # virtual (found by its room); each its share at its stake (R87, R88.2, R88.4).
            split = split_prize(pool[f"{pattern}_cents"], [pct for *_, pct in sharing])
            expected = sorted(([h, c, cents] for (h, c, _, _), cents in zip(sharing, split.payments)),
                              key=lambda w: (w[0] != MAIN, w[0], tuple(int(x) for x in w[1].split("-"))))
            assert prize_main["winners"] == expected and prize_main["ball_count"] == ball
            assert prize_main["carry_cents"] == split.carry
            total_paid += split.paid
            carried += split.carry
        for hall_id, hall in halls.items():
            books = hall.balances()
            assert books.get(f"stakes:{game_id}", 0) == 0, f"{hall_id}: the game's stakes are all accounted for"
            assert books.get("tax", 0) == own[hall_id] // 10, f"{hall_id}: the tax on its own sales (R98)"
            # Every winner of this room paid once: a paper card in cash, a virtual one to its player's account.
            postings = [r.payload for r in hall.of("posting") if r.payload["reason"].startswith("prize:")
                        and r.payload["reference"]["game_id"] == game_id]
            winners = [(p["pattern"], card, cents) for p in paid[hall_id]["prizes"]
                       for h, card, cents in p["winners"] if h == hall_id and cents]
            assert sorted((p["reason"].removeprefix("prize:"), p["reference"]["card"], p["credits"][0][1])
                          for p in postings) == sorted(winners)
            for p in postings:
                series, number = (int(x) for x in p["reference"]["card"].split("-"))
                to = p["credits"][0][0]
                if series == VIRTUAL_NUMBER:
                    (bought,) = [r.payload for r in hall.of("annex_virtual_cards_bought")
                                 if r.payload["first"] <= number <= r.payload["last"]]
                    assert to == bought["account"], "a virtual card's prize goes to its player's account (R85.9)"
                else:
                    assert to == f"cash:{SAFE}"
        owed = {hall_id: paid[hall_id]["owed_to_partner_cents"] for hall_id in halls}
        assert owed[MAIN] == -owed[ANNEX] == main.balances().get(f"interhall:{ANNEX}", 0) \
            == -annex.balances().get(f"interhall:{MAIN}", 0)
        main_carry = main.balances().get("carry:line", 0) + main.balances().get("carry:bingo", 0)
        assert carried == main_carry and total_paid + carried == pool["line_cents"] + pool["bingo_cents"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)

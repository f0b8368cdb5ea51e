"""Refunds: a game suspended for good, a server failure, a failed terminal (R86.2, R92.5e, R96.3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.events import CardSold
from protocol.ledger import Ledger, Posting
from protocol.settlement.refunds import (
    GAME_REFUND,
    TERMINAL_REFUND,
    RefundError,
    plan_game_refund,
    plan_terminal_refund,
    refund_game,
    refund_terminal,
    refunded_cards,
    stakes_account,
)


def sell(ledger: Ledger, sales: list[CardSold]) -> None:
    """Record the sales in the ledger as the hall would: stake into the game's collection."""
    for sale in sales:
        ledger.post(
            Posting.transfer(sale.stake_cents, debit=sale.account, credit=stakes_account(sale.game_id), reason="sale")
        )


def hall(credit: int = 10_000) -> Ledger:
    ledger = Ledger()
    for player in ("ana", "bo"):
        ledger.post(Posting.transfer(credit, debit="cash:desk1", credit=f"player:{player}", reason="load"))
    return ledger


SALES = [
    CardSold("g1", 1, 1, 200, 200, "player:ana", "t1"),
    CardSold("g1", 1, 2, 200, 100, "player:ana", "t1"),  # staked at 50% (R82.15)
    CardSold("g1", 1, 3, 200, 200, "player:bo", "t2"),
    CardSold("g1", 7, 1, 200, 200, "cash:desk2", None),  # a paper card paid in cash
    CardSold("g2", 1, 4, 200, 200, "player:bo", "t2"),  # another game
]


@pytest.mark.req("R86.1-2", "R92.5e")
def test_a_game_refund_returns_every_stake_to_where_it_came_from() -> None:
    ledger = hall()
    sell(ledger, SALES)
    postings = refund_game(ledger, SALES, "g1", event_seq=90)
    assert len(postings) == 4
    assert ledger.balance("player:ana") == 10_000
    assert ledger.balance("player:bo") == 10_000 - 200  # the g2 card stays sold
    assert ledger.balance("cash:desk2") == 0
    assert ledger.balance("stakes:g1") == 0
    assert ledger.balance("stakes:g2") == 200
    assert {p.reference.card for p in postings} == {"1-1", "1-2", "1-3", "7-1"}
    assert all(p.reason == GAME_REFUND and p.reference.event_seq == 90 for p in postings)
    assert ledger.total() == 0


@pytest.mark.req("R86.1-2")
def test_a_game_is_refunded_only_once() -> None:
    ledger = hall()
    sell(ledger, SALES)
    refund_game(ledger, SALES, "g1", event_seq=90)
    before = ledger.postings
    with pytest.raises(RefundError, match="game g1 has already been refunded"):
        refund_game(ledger, SALES, "g1", event_seq=91)
    assert ledger.postings == before


@pytest.mark.req("R96.3")
def test_a_failed_terminal_refunds_only_its_own_cards_for_that_game() -> None:
    ledger = hall()
    sell(ledger, SALES)
    postings = refund_terminal(ledger, SALES, "g1", "t2", event_seq=50)
    assert [(p.reference.card, p.amount) for p in postings] == [("1-3", 200)]
    assert postings[0].reason == TERMINAL_REFUND
    assert ledger.balance("player:bo") == 10_000 - 200  # refunded g1's card, not g2's
    assert ledger.balance("stakes:g1") == 700 - 200
    assert refunded_cards(ledger, "g1") == {"1-3"}


@pytest.mark.req("R96.3")
def test_a_terminal_is_refunded_only_once() -> None:
    ledger = hall()
    sell(ledger, SALES)
    refund_terminal(ledger, SALES, "g1", "t1", event_seq=50)
    with pytest.raises(RefundError, match="terminal t1 in game g1 have already been refunded"):
        refund_terminal(ledger, SALES, "g1", "t1", event_seq=51)
    assert ledger.balance("player:ana") == 10_000


@pytest.mark.req("R86.1-2", "R96.3")
def test_a_game_refund_after_a_terminal_refund_pays_the_others_only() -> None:
    ledger = hall()
    sell(ledger, SALES)
    refund_terminal(ledger, SALES, "g1", "t1", event_seq=50)
    postings = refund_game(ledger, SALES, "g1", event_seq=90)
    assert {p.reference.card for p in postings} == {"1-3", "7-1"}
    assert ledger.balance("player:ana") == 10_000
    assert ledger.balance("stakes:g1") == 0


@pytest.mark.req("R86.1-2", "R96.3")
def test_a_planned_refund_is_checked_but_not_recorded() -> None:
    """For a server that journals the postings before its ledger records them."""
    ledger = hall()
    sell(ledger, SALES)
    before = ledger.postings
    planned = plan_terminal_refund(ledger, SALES, "g1", "t1", event_seq=50)
    assert [p.reference.card for p in planned] == ["1-1", "1-2"]
    assert len(plan_game_refund(ledger, SALES, "g1", event_seq=90)) == 4
    assert ledger.postings == before
    ledger.post_all(planned)
    with pytest.raises(RefundError, match="already been refunded"):
        plan_terminal_refund(ledger, SALES, "g1", "t1", event_seq=51)


@pytest.mark.req("R96.3")
def test_a_refund_the_collection_cannot_cover_is_refused_whole() -> None:
    ledger = hall()
    sell(ledger, SALES)
    # A prize of 6.00 has already left the collection of 7.00.
    ledger.post(Posting.transfer(600, debit="stakes:g1", credit="player:bo", reason="prize:line"))
    before = ledger.balances()
    with pytest.raises(RefundError, match="stakes:g1 holds 1.00 EUR"):
        refund_terminal(ledger, SALES, "g1", "t1", event_seq=50)
    assert ledger.balances() == before
    assert refunded_cards(ledger, "g1") == frozenset()


sales_lists = st.lists(
    st.builds(
        CardSold,
        game_id=st.sampled_from(["g1", "g2"]),
        series=st.just(1),
        card_number=st.integers(1, 10_000),
        price_cents=st.just(500),
        stake_cents=st.integers(1, 500),
        account=st.sampled_from(["player:ana", "player:bo", "cash:desk1"]),
        terminal_id=st.sampled_from(["t1", "t2", None]),
    ),
    max_size=25,
    unique_by=lambda s: (s.game_id, s.card_number),
)


@settings(max_examples=100, deadline=None)
@given(sales_lists, st.lists(st.sampled_from(["t1", "t2", "game"]), max_size=4))
@pytest.mark.req("R86.1-2", "R96.3")
def test_refunds_return_each_stake_exactly_once(sales: list[CardSold], order: list[str]) -> None:
    """However terminal and game refunds interleave, each g1 stake comes back once."""
    ledger = hall(credit=100_000)
    sell(ledger, sales)
    for step, what in enumerate(order):
        try:
            if what == "game":
                refund_game(ledger, sales, "g1", event_seq=step)
            else:
                refund_terminal(ledger, sales, "g1", what, event_seq=step)
        except RefundError:
            pass  # a second refund: refused, and the totals below show nothing moved
        assert ledger.total() == 0
    refunds = [p for p in ledger.postings if p.reason in (GAME_REFUND, TERMINAL_REFUND)]
    cards = [p.reference.card for p in refunds]
    assert len(cards) == len(set(cards))
    g1 = {f"{s.series}-{s.card_number}": s.stake_cents for s in sales if s.game_id == "g1"}
    assert {c: next(p.amount for p in refunds if p.reference.card == c) for c in cards}.items() <= g1.items()
    assert ledger.balance("stakes:g1") == sum(g1.values()) - sum(p.amount for p in refunds)
    if "game" in order:
        assert ledger.balance("stakes:g1") == 0
    assert ledger.balance("stakes:g2") == sum(s.stake_cents for s in sales if s.game_id == "g2")

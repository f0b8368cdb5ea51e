"""The double-entry ledger: balanced postings in whole cents, append-only, no overdraft."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.ledger import (
    ACCOUNT_KINDS,
    Ledger,
    LedgerError,
    Leg,
    Overdraft,
    Posting,
    Reference,
    account_kind,
)

REF = Reference("g1", "3-17", 42)


def funded(**balances: int) -> Ledger:
    """A ledger where each named player account was loaded with cash at desk 1."""
    ledger = Ledger()
    for player, cents in balances.items():
        ledger.post(Posting.transfer(cents, debit="cash:desk1", credit=f"player:{player}", reason="load"))
    return ledger


@pytest.mark.req("R93.2-4")
def test_a_sale_moves_credit_from_the_player_to_the_games_collection() -> None:
    ledger = funded(ana=1000)
    ledger.post(Posting.transfer(150, debit="player:ana", credit="stakes:g1", reason="sale", reference=REF))
    assert ledger.balance("player:ana") == 850
    assert ledger.balance("stakes:g1") == 150
    assert ledger.balance("cash:desk1") == 1000  # assets on their debit side
    assert ledger.total() == 0


@pytest.mark.req("R93.2-4")
def test_a_posting_carries_its_reason_and_reference() -> None:
    ledger = funded(ana=500)
    posting = ledger.post(
        Posting.transfer(100, debit="player:ana", credit="stakes:g1", reason="sale", reference=REF)
    )
    assert ledger.postings[-1] is posting
    assert (posting.reason, posting.reference) == ("sale", REF)
    assert ledger.postings_for("g1") == (posting,)
    assert ledger.postings_for("g1", "refund:game") == ()


@pytest.mark.parametrize("amount", [0, -5, 1.5, True, "100", None])
def test_amounts_are_positive_whole_cents(amount: object) -> None:
    with pytest.raises(LedgerError, match="amounts"):
        Posting.transfer(amount, debit="player:a", credit="stakes:g", reason="sale")  # type: ignore[arg-type]


def test_debits_and_credits_must_balance() -> None:
    with pytest.raises(LedgerError, match="differ"):
        Posting((Leg("player:a", 100),), (Leg("stakes:g", 60), Leg("house", 30)), "split")


def test_a_split_over_several_accounts_balances() -> None:
    ledger = funded(a=100)
    ledger.post(Posting.transfer(100, debit="player:a", credit="stakes:g", reason="sale"))
    ledger.post(
        Posting(
            (Leg("stakes:g", 100),),
            (Leg("carry:line", 15), Leg("pot:jackpot_reserve", 3), Leg("tax", 10), Leg("house", 72)),
            "split",
        )
    )
    assert ledger.balance("stakes:g") == 0
    assert ledger.balance("house") == 72
    assert ledger.total() == 0


@pytest.mark.parametrize(
    "debits, credits, message",
    [
        ((), (Leg("house", 1),), "at least one debit"),
        ((Leg("house", 1),), (Leg("house", 1),), "appears twice"),
        ((Leg("tax", 1), Leg("tax", 1)), (Leg("house", 2),), "appears twice"),
    ],
)
def test_malformed_postings_are_refused(debits: tuple, credits: tuple, message: str) -> None:
    with pytest.raises(LedgerError, match=message):
        Posting(debits, credits, "test")


def test_every_posting_says_why() -> None:
    with pytest.raises(LedgerError, match="says why"):
        Posting.transfer(1, debit="house", credit="tax", reason=" ")


@pytest.mark.parametrize(
    "account",
    ["wallet:1", "player", "player:", "house:1", "pot:lottery", "tax:x", "player: a", "stakes:a:b", 7],
)
def test_accounts_outside_the_scheme_are_refused(account: object) -> None:
    with pytest.raises(LedgerError):
        account_kind(account)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "account",
    ["player:42", "cash:desk1", "bank:jackpot", "stakes:2026-12-01/7", "carry:line", "carry:bingo",
     "pot:superbingo", "pot:grand_superbingo", "pot:megabingo", "pot:jackpot_accumulated",
     "pot:jackpot_reserve", "house", "tax"],
)
def test_the_documented_accounts_exist(account: str) -> None:
    assert account_kind(account) is ACCOUNT_KINDS[account.partition(":")[0]]


@pytest.mark.req("R93.2-4")
def test_a_player_cannot_go_below_zero_and_nothing_changes() -> None:
    ledger = funded(ana=100)
    before = (ledger.postings, ledger.balances())
    with pytest.raises(Overdraft, match=r"player:ana holds 1\.00 EUR and cannot pay 1\.01 EUR"):
        ledger.post(Posting.transfer(101, debit="player:ana", credit="stakes:g1", reason="sale"))
    assert (ledger.postings, ledger.balances()) == before


def test_a_cash_desk_cannot_pay_out_more_than_it_holds() -> None:
    ledger = funded(ana=100)
    ledger.post(Posting.transfer(200, debit="house", credit="player:bo", reason="gift"))
    with pytest.raises(Overdraft, match="cash:desk1"):
        ledger.post(Posting.transfer(200, debit="player:bo", credit="cash:desk1", reason="cash out"))


@pytest.mark.req("R89.5")
def test_the_house_may_go_negative_for_operator_contributions() -> None:
    ledger = Ledger()
    ledger.post(Posting.transfer(5000, debit="house", credit="pot:grand_superbingo", reason="contribution"))
    assert ledger.balance("house") == -5000
    assert ledger.balance("pot:grand_superbingo") == 5000


def test_post_all_records_all_or_nothing() -> None:
    ledger = funded(a=100, b=10)
    good = Posting.transfer(100, debit="player:a", credit="stakes:g", reason="sale")
    bad = Posting.transfer(11, debit="player:b", credit="stakes:g", reason="sale")
    with pytest.raises(Overdraft):
        ledger.post_all([good, bad])
    assert ledger.balance("player:a") == 100
    assert len(ledger.postings) == 2


def test_overdraft_counts_every_posting_of_a_batch() -> None:
    ledger = funded(a=100)
    spend = [Posting.transfer(60, debit="player:a", credit="stakes:g", reason="sale")] * 2
    with pytest.raises(Overdraft):
        ledger.post_all(spend)
    assert ledger.balance("player:a") == 100


def test_check_refuses_as_posting_would_and_records_nothing() -> None:
    ledger = funded(a=100)
    fine = Posting.transfer(100, debit="player:a", credit="stakes:g", reason="sale")
    ledger.check([fine])
    assert ledger.balance("player:a") == 100 and len(ledger.postings) == 1
    with pytest.raises(Overdraft, match="player:a holds 0.00 EUR and cannot pay 1.00 EUR"):
        ledger.check([fine, fine])
    assert ledger.balance("player:a") == 100 and len(ledger.postings) == 1


def test_postings_are_immutable_and_the_list_is_a_copy() -> None:
    ledger = funded(a=100)
    posting = ledger.postings[0]
    with pytest.raises(AttributeError):
        posting.reason = "other"  # type: ignore[misc]
    assert isinstance(ledger.postings, tuple)
    assert not hasattr(ledger, "update") and not hasattr(ledger, "delete")


def test_a_posting_round_trips_through_json() -> None:
    posting = Posting(
        (Leg("stakes:g1", 300),), (Leg("player:a", 200), Leg("carry:line", 100)), "prize:line", REF
    )
    assert Posting.from_dict(json.loads(json.dumps(posting.to_dict()))) == posting


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.pop("reason"),
        lambda d: d.update(debits=[["stakes:g1", 300.0]]),
        lambda d: d.update(debits=[["stakes:g1", True]]),
        lambda d: d.update(reference={"game_id": "g1"}),
        lambda d: d.update(reference={"game_id": "g1", "card": None, "event_seq": "7"}),
        lambda d: d.update(extra=1),
    ],
)
def test_a_bad_journal_posting_is_refused(mutate) -> None:  # type: ignore[no-untyped-def]
    data = Posting.transfer(300, debit="stakes:g1", credit="player:a", reason="x", reference=REF).to_dict()
    mutate(data)
    with pytest.raises(LedgerError):
        Posting.from_dict(data)


ACCOUNTS = ["player:a", "player:b", "cash:desk1", "stakes:g1", "carry:line", "pot:megabingo", "house", "tax"]


@st.composite
def postings(draw: st.DrawFn) -> Posting:
    """A random balanced posting: one or two debits paying one to three credits."""
    accounts = draw(st.lists(st.sampled_from(ACCOUNTS), min_size=2, max_size=5, unique=True))
    debit_count = draw(st.integers(1, min(2, len(accounts) - 1)))
    credited = [draw(st.integers(1, 500)) for _ in accounts[debit_count:]]
    total = sum(credited)
    first = draw(st.integers(1, total - 1)) if debit_count == 2 and total > 1 else total
    debited = [first, total - first][:debit_count] if total - first else [total]
    debits = tuple(Leg(a, m) for a, m in zip(accounts, debited))
    credits = tuple(Leg(a, m) for a, m in zip(accounts[debit_count:], credited))
    return Posting(debits, credits, "random")


@settings(max_examples=150, deadline=None)
@given(st.lists(postings(), max_size=30))
def test_balances_are_derived_and_always_sum_to_zero(batch: list[Posting]) -> None:
    """Whatever is accepted or refused, the sum is zero and no guarded account is negative."""
    ledger = Ledger()
    ledger.post(Posting.transfer(1000, debit="cash:desk1", credit="player:a", reason="load"))
    for posting in batch:
        before = ledger.balances()
        try:
            ledger.post(posting)
        except Overdraft:
            assert ledger.balances() == before
        assert ledger.total() == 0
        for account, balance in ledger.balances().items():
            assert balance >= 0 or account_kind(account).may_go_negative
    # Balances are a projection: replaying the postings gives the same figures.
    assert Ledger(ledger.postings).balances() == ledger.balances()
    assert Ledger([Posting.from_dict(p.to_dict()) for p in ledger.postings]).balances() == ledger.balances()

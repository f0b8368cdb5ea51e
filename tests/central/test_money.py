"""Money is integer cents and every cent of a network game is accounted for (R93.7, R93.13, R96)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central_server.domain.errors import CentralError
from central_server.domain.game import Phase, TerminalFailure
from central_server.domain.money import MoneyError, check_conservation, money_of
from protocol.patterns import BINGO, FOUR_CORNERS, LINE, TWO_LINES
from protocol.records.central import CentralCardWon, CentralPurchaseConfirmed
from tests.central.conftest import HALLS, Played, config


PATTERN_SETS = [((LINE, 2000), (BINGO, 5000)), ((LINE, 1500), (TWO_LINES, 1000), (FOUR_CORNERS, 500), (BINGO, 4500))]


def random_game(rng: random.Random, patterns: tuple, carries: dict[str, int], game_id: str) -> Played:
    """One network game with random purchases, failures and, rarely, force majeure."""
    played = Played(config(game_id=game_id, patterns=patterns, carries=carries, price_cents=rng.choice([1, 3, 100, 137]))).open()
    stop = rng.random()
    for i in range(rng.randint(0, 60)):
        played.now = min(played.now + rng.randint(0, 2_000), played.game.closes_at_ms + 1_000)  # type: ignore[operator]
        try:
            played.buy(f"r{rng.randint(0, 80)}", hall=rng.choice(HALLS), terminal=f"t{rng.randint(1, 6)}",
                       player=f"p{rng.randint(1, 9)}", count=rng.randint(1, 12), pct=rng.choice([100, 100, 50, 33, 1]))  # fmt: skip
        except CentralError:
            pass  # a reused request id: refused, nothing changed
        if rng.random() < 0.05:
            hall = rng.choice(HALLS)
            failure = TerminalFailure(f"f{i}", hall, f"t{rng.randint(1, 6)}", "stopped", "chief")
            try:
                played.record(played.game.declare_terminal_failed(failure, from_hall=hall, now_ms=played.now))
            except CentralError:
                pass
    if stop < 0.1:
        played.record(played.game.declare_not_played("storm", "operator", played.now))
        return played
    played.close()
    while played.game.next_ball_due_ms is not None:
        played.now = played.game.next_ball_due_ms
        played.record(played.game.draw_next(FakeSource(rng, played.game.balls), played.now))
        if rng.random() < 0.02:
            hall = rng.choice(HALLS)
            failure = TerminalFailure(f"g{len(played.game.balls)}", hall, f"t{rng.randint(1, 6)}", "smoke", "chief")
            try:
                played.record(played.game.declare_terminal_failed(failure, from_hall=hall, now_ms=played.now))
            except CentralError:
                pass
        if stop < 0.15 and played.game.phase is Phase.DRAWING and rng.random() < 0.05:
            played.record(played.game.declare_not_played("flood", "operator", played.now))
    return played


class FakeSource:
    """A seeded ball source for the property tests (the product uses RandomBallGenerator)."""

    def __init__(self, rng: random.Random, drawn: list[int]) -> None:
        self._ball = rng.choice([b for b in range(1, 91) if b not in drawn])

    def draw(self) -> int:
        return self._ball


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.req("R93.7", "R93.13", "R88.4-5", "R96.2", "R96.3")
def test_money_is_conserved_in_every_game_and_across_the_games_it_carries_to(seed: int) -> None:
    rng = random.Random(seed)
    patterns = rng.choice(PATTERN_SETS)
    first = carries = {p.name: rng.randint(0, 300) for p, _ in patterns}
    kept = 0  # sales - refunds - prizes - house, over the games
    for n in range(3):
        played = random_game(rng, patterns, carries, f"net-{n}")
        money = money_of(played.events)
        check_conservation(money)
        t = money.totals
        for hall, totals in money.halls.items():
            staked = sum(e.amount_cents for e in played.events if isinstance(e, CentralPurchaseConfirmed) and e.hall_id == hall)
            won = sum(e.payment_cents for e in played.events if isinstance(e, CentralCardWon) and e.hall_id == hall)
            assert (totals.sales_cents, totals.prizes_cents) == (staked, won)
            assert 0 <= totals.refunds_cents <= totals.sales_cents
        assert sum(h.net_cents for h in money.halls.values()) == t.net_cents
        if money.not_played:
            assert t.refunds_cents == t.sales_cents
        kept += t.net_cents - money.house_cents
        assert money.carry_in_cents == carries
        carries = dict(played.game.carries or {})
    # What the games kept back from their players is exactly what they carry on (R88.5).
    assert kept == sum(carries.values()) - sum(first.values())


def test_a_journal_whose_money_was_tampered_with_is_refused() -> None:
    played = Played().open()
    for i in range(20):
        played.buy(f"r{i}", hall=HALLS[i % 3], count=5, pct=50)
    played.close().draw_all(seed=4)
    check_conservation(money_of(played.events))
    index = next(i for i, e in enumerate(played.events) if isinstance(e, CentralCardWon))
    tampered = list(played.events)
    tampered[index] = dataclasses.replace(tampered[index], payment_cents=tampered[index].payment_cents + 1)  # type: ignore[type-var]
    with pytest.raises(MoneyError, match="do not add up"):
        check_conservation(money_of(tampered))

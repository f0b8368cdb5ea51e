"""The state is the fold of the events, and the money adds up, after any sequence of commands.

A hypothesis rule-based machine drives one network game with random halls, terminals,
players, resent and reused request ids, clock jumps, failed terminals, force majeure
and restarts (the game rebuilt from its journal, through JSON), and checks after every
step that replaying the journal gives the same game (R96.4), that cards are assigned
in request order with none twice and none after the deadline (R93.6, R93.8), and that
every hall's money matches a model kept by the test (R93.7).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from central_server.domain.errors import CentralError
from central_server.domain.game import CentralGame, Phase, PurchaseRequest, TerminalFailure
from central_server.domain.money import check_conservation, money_of
from protocol.balls import FakeBallSource
from protocol.patterns import BINGO, FOUR_CORNERS, LINE, TWO_LINES
from protocol.records import build
from protocol.records.central import CentralPurchaseConfirmed, CentralStakeReturned
from tests.central.conftest import HALLS, LIBRARY, config

PATTERN_SETS = [
    ((LINE, 2000), (BINGO, 5000)),
    ((LINE, 1500), (TWO_LINES, 1000), (BINGO, 5000)),
    ((LINE, 1000), (FOUR_CORNERS, 1000), (TWO_LINES, 1000), (BINGO, 4500)),
]
halls = st.sampled_from(HALLS)
terminals = st.sampled_from(["t1", "t2", "t3"])
request_ids = st.sampled_from([f"r{i}" for i in range(12)])


class NetworkGameMachine(RuleBasedStateMachine):
    @initialize(
        patterns=st.sampled_from(PATTERN_SETS),
        carry=st.integers(0, 500),
        first_card=st.sampled_from([1, 1, 200, 280]),
        draw=st.permutations(range(1, 91)),
        opened=st.integers(0, 4),
    )
    def start(self, patterns: tuple, carry: int, first_card: int, draw: list[int], opened: int) -> None:
        self.game, self.events = CentralGame.schedule(
            config(patterns=patterns, carries={"bingo": carry}, first_card=first_card), LIBRARY
        )
        self.draw_order = draw
        self.source = FakeBallSource(draw)
        self.now = 0
        self.sales = {hall: 0 for hall in HALLS}  # the model: what each hall's players staked
        self.refunds = {hall: 0 for hall in HALLS}
        if opened:
            self.open_sale()

    def take(self, events: list | tuple) -> None:
        self.events += list(events)

    def refused(self, command) -> None:  # type: ignore[no-untyped-def]
        """Run ``command``; if the game refuses it, nothing may have changed."""
        before = self.game.snapshot()
        try:
            return command()
        except CentralError as error:
            assert str(error) and error.code
            assert self.game.snapshot() == before
            return None

    @rule(ms=st.sampled_from([0, 500, 5_000, 30_000]))
    def time_passes(self, ms: int) -> None:
        self.now += ms

    @precondition(lambda self: self.game.phase is Phase.SCHEDULED)
    @rule()
    def open_sale(self) -> None:
        self.take(self.game.open_sale(self.now))

    @rule(request_id=request_ids, hall=halls, other=st.booleans(), terminal=terminals,
          player=st.sampled_from(["a", "b"]), count=st.integers(1, 40), pct=st.sampled_from([100, 50, 1]))  # fmt: skip
    def buy(self, request_id: str, hall: str, other: bool, terminal: str, player: str, count: int, pct: int) -> None:
        speaker = HALLS[(HALLS.index(hall) + 1) % 3] if other and count % 5 == 0 else hall
        request = PurchaseRequest(request_id, hall, terminal, player, count, pct)
        outcome = self.refused(lambda: self.game.request_purchase(request, from_hall=speaker, now_ms=self.now))
        if outcome is None:
            return
        self.take(outcome.events)
        decision = outcome.decision
        if isinstance(decision, CentralPurchaseConfirmed) and not outcome.repeated:
            assert self.game.phase is Phase.SELLING and self.now < self.game.closes_at_ms
            self.sales[hall] += decision.amount_cents

    @rule(request_id=request_ids, hall=halls, terminal=terminals)
    def terminal_fails(self, request_id: str, hall: str, terminal: str) -> None:
        failure = TerminalFailure(request_id, hall, terminal, "stopped answering", "room chief")
        won = {w.card_number for w in self.game.winners}
        refunded = self.game.refunded_cards
        due = sum(
            p.stake_cents
            for p in self.game.purchases
            if (p.hall_id, p.terminal_id) == (hall, terminal)
            for n in range(p.first_card, p.first_card + p.card_count)
            if n not in won and n not in refunded
        )
        already = (hall, terminal) in self.game.failed_terminals
        outcome = self.refused(lambda: self.game.declare_terminal_failed(failure, from_hall=hall, now_ms=self.now))
        if outcome is not None and not outcome.repeated:
            assert not already
            self.take(outcome.events)
            assert outcome.decision.refunded_cents == due
            self.refunds[hall] += due

    @precondition(
        lambda self: self.game.phase is Phase.SELLING
        and (len(self.game.purchases) >= 3 or self.now >= self.game.closes_at_ms)
    )
    @rule()
    def close_sale(self) -> None:
        self.now = max(self.now, self.game.closes_at_ms)
        self.take(self.game.close_sale(self.now))

    @precondition(lambda self: self.game.phase in (Phase.SALE_CLOSED, Phase.DRAWING))
    @rule(balls=st.sampled_from([1, 10, 40, 90]))
    def draw(self, balls: int) -> None:
        for _ in range(balls):
            if self.game.next_ball_due_ms is None:
                break
            self.now = max(self.now, self.game.next_ball_due_ms)
            self.take(self.game.draw_next(self.source, self.now))

    @rule(chance=st.integers(0, 49))
    def force_majeure(self, chance: int) -> None:
        if chance != 37:
            return  # rare, so that most games go on to their bingo
        events = self.refused(lambda: self.game.declare_not_played("power cut in the central site", "operator", self.now))
        if events is not None:
            self.take(events)
            for e in events:
                if isinstance(e, CentralStakeReturned):
                    self.refunds[e.hall_id] += e.amount_cents
            assert self.refunds == self.sales  # every stake has come back

    @rule()
    def restart(self) -> None:
        """The server restarts: the game is rebuilt from its journal, read back from JSON."""
        journal = [build(e.type, json.loads(json.dumps(e.to_payload()))) for e in self.events]
        self.game = CentralGame.replay(journal, LIBRARY)
        self.source = FakeBallSource([b for b in self.draw_order if b not in self.game.balls])

    def teardown(self) -> None:
        """Play the game out to its end, then check everything once more."""
        if self.game.phase is Phase.SCHEDULED:
            self.open_sale()
        if self.game.phase is Phase.SELLING:
            for i in range(3):
                self.buy(f"end{i}", HALLS[i], False, "t1", "z", 10, 50)
            self.now = max(self.now, self.game.closes_at_ms)
            self.close_sale()
        while self.game.next_ball_due_ms is not None:
            self.draw(90)
        assert self.game.phase in (Phase.CLOSED, Phase.NOT_PLAYED)
        event(f"ended {self.game.phase} with {len(self.game.prizes)} prize(s) won")
        self.the_state_is_the_fold_of_the_events()
        self.cards_are_assigned_in_request_order_once_each()
        self.money_matches_the_model_and_is_conserved()

    @invariant()
    def the_state_is_the_fold_of_the_events(self) -> None:
        assert self.game.events == self.events
        assert CentralGame.replay(self.events, LIBRARY).snapshot() == self.game.snapshot()

    @invariant()
    def cards_are_assigned_in_request_order_once_each(self) -> None:
        purchases = self.game.purchases
        expected = self.game.config.first_card
        for p in purchases:
            assert p.first_card == expected
            expected += p.card_count
        assert expected - 1 <= self.game.config.series_cards
        decisions = [e.decision for e in self.events if hasattr(e, "decision") and hasattr(e, "stake_pct")]
        assert decisions == list(range(1, len(decisions) + 1))

    @invariant()
    def money_matches_the_model_and_is_conserved(self) -> None:
        money = money_of(self.events)
        check_conservation(money)
        for hall in HALLS:
            assert money.halls[hall].sales_cents == self.sales[hall]
            assert money.halls[hall].refunds_cents == self.refunds[hall]
            prizes = sum(w.payment_cents for w in self.game.winners if w.hall_id == hall)
            assert money.halls[hall].prizes_cents == prizes


NetworkGameMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=50, deadline=None)
TestNetworkGame = pytest.mark.req("R96.4", "R93.6", "R93.8", "R93.7", "R96.2", "R96.3")(NetworkGameMachine.TestCase)

"""The halls' deciding commands: stamped when received, decided in that order a few at a time (R93.6, R93.8).

The module and the queue on the in-memory journal and a test clock: the clock stamps,
a second test clock runs the queue's turns, so a burst can stand read and undecided
while the sale's deadline passes.
"""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet import defer, task

from central_server.admission import Admission
from central_server.module import CentralModule
from protocol.records.central import CentralPurchaseConfirmed, CentralPurchaseRefused, CentralSaleClosed
from server_kit.core import CommandCore
from server_kit.journal.fake import FakeJournal
from tests.central.conftest import LIBRARY, config
from tests.central_server.test_module import START_S, build, result
from tests.kit.test_core import Held


class FakeTurns:
    """The reactor's turns, one at a time: a call made during a turn runs at the next (as on the reactor)."""

    def __init__(self) -> None:
        self.due: list[task.DelayedCall] = []
        self.clock = task.Clock()

    def callLater(self, delay: float, f: Any, *args: Any) -> task.DelayedCall:
        call = self.clock.callLater(delay, f, *args)
        self.due.append(call)
        return call

    def advance(self, _: float = 0) -> None:
        """Run the calls due when the turn began, not those they make."""
        due, self.due = self.due, []
        for call in due:
            if call.active():
                call.func(*call.args)
                call.called = 1  # ran: no longer active


def queued(module: CentralModule, clock: task.Clock, per_turn: int = 4) -> tuple[Admission, FakeTurns]:
    turns = FakeTurns()
    admission = Admission(lambda name, arguments, hall, received_ms: module.hall_command(
        name, arguments, hall, received_ms=received_ms), clock, turns, per_turn)
    module.admission = admission
    return admission, turns


def purchase(request: str, terminal: str = "t1", count: int = 1) -> dict[str, Any]:
    return {"request_id": request, "game_id": "net-1", "hall_id": "hall-1", "terminal_id": terminal,
            "player_ref": f"p-{terminal}", "card_count": count, "stake_pct": 100}


def selling() -> tuple[CentralModule, task.Clock]:
    module, clock = build()
    module.start_timers()
    result(module.schedule(config()))
    result(module.open_sale("net-1"))
    return module, clock


def decisions(module: CentralModule) -> list[CentralPurchaseConfirmed | CentralPurchaseRefused]:
    return [e for e in module.games["net-1"].events if isinstance(e, (CentralPurchaseConfirmed, CentralPurchaseRefused))]


@pytest.mark.req("R93.6")
def test_commands_are_decided_in_the_order_received_a_few_each_turn() -> None:
    module, clock = selling()
    admission, turns = queued(module, clock, per_turn=4)
    answers = [admission.submit("buy_cards", purchase(f"r{n}", f"t{n}"), "hall-1") for n in range(10)]
    assert admission.waiting == 10 and not decisions(module)  # read, not yet decided
    turns.advance(0)
    assert admission.waiting == 6 and len(decisions(module)) == 4
    turns.advance(0)
    turns.advance(0)
    assert admission.waiting == 0 and admission.deepest == 10
    assert [d.request_id for d in decisions(module)] == [f"r{n}" for n in range(10)]
    assert [result(a)["first_card"] for a in answers] == list(range(1, 11))


@pytest.mark.req("R93.6", "R93.8")
def test_a_purchase_received_before_the_deadline_is_decided_on_the_open_sale_and_the_close_waits_for_it() -> None:
    module, clock = selling()
    admission, turns = queued(module, clock, per_turn=3)
    deadline = module.games["net-1"].closes_at_ms
    assert deadline is not None
    clock.advance((deadline - clock.seconds() * 1000 - 50) / 1000)  # 50 ms before the deadline
    early = [admission.submit("buy_cards", purchase(f"r{n}", f"t{n}"), "hall-1") for n in range(7)]
    clock.advance(0.1)  # the deadline passes while they wait; the close timer fires and waits for them
    late = admission.submit("buy_cards", purchase("late", "t9"), "hall-1")
    assert module.games["net-1"].phase == "selling"
    for _ in range(3):
        turns.advance(0)
    assert module.games["net-1"].phase == "sale_closed"
    assert [result(a)["status"] for a in early] == ["confirmed"] * 7
    refused = result(late)
    assert refused["status"] == "refused" and refused["refusal_code"] == "sale_over"
    made = decisions(module)
    assert all(d.received_ms is not None and d.received_ms < deadline for d in made[:7])
    assert made[7].received_ms is not None and made[7].received_ms >= deadline
    closed = module.games["net-1"].sale
    assert closed is not None and closed.cards_in_play == 7


@pytest.mark.req("R93.8")
def test_the_close_is_decided_once_the_purchases_decided_before_it_are_answered() -> None:
    """The close builds the winners' detector over every card: the halls' answers go out first."""
    runner = Held()  # each commit waits until the test lets it run
    clock = task.Clock()
    clock.advance(START_S)
    journal = FakeJournal()
    core = CommandCore(journal, clock, runner)
    module = CentralModule(core, {"V1": LIBRARY}, clock)
    core.recover()
    module.start_timers()
    for step in (lambda: module.schedule(config()), lambda: module.open_sale("net-1")):
        done = step()
        runner.run_one()
        result(done)
    admission, turns = queued(module, clock, per_turn=10)
    deadline = module.games["net-1"].closes_at_ms
    assert deadline is not None
    clock.advance((deadline - clock.seconds() * 1000 - 50) / 1000)
    bought = [admission.submit("buy_cards", purchase(f"r{n}", f"t{n}"), "hall-1") for n in range(3)]
    turns.advance(0)  # all three decided: the first one's commit in flight, the two others wait for the next
    clock.advance(0.1)  # the deadline passes: the close waits for their answers
    assert module.games["net-1"].phase == "selling" and len(runner.held) == 1
    runner.run_one()
    assert module.games["net-1"].phase == "selling"
    runner.run_one()  # the last purchases answered: now the close is decided, then committed
    assert module.games["net-1"].phase == "sale_closed"
    runner.run_one()
    assert [result(b)["status"] for b in bought] == ["confirmed"] * 3
    types = [r.type for r in journal.kept]
    assert types.index(CentralSaleClosed.type) > max(i for i, t in enumerate(types) if t == CentralPurchaseConfirmed.type)


def test_a_stopped_queue_drops_what_waits_as_a_crash_would() -> None:
    module, clock = selling()
    admission, turns = queued(module, clock)
    waiting = admission.submit("buy_cards", purchase("r1"), "hall-1")
    admission.stop()
    with pytest.raises(defer.CancelledError):
        result(waiting)
    turns.advance(0)
    assert not turns.due
    assert not decisions(module) and admission.waiting == 0


def test_a_queue_takes_at_least_one_command_a_turn() -> None:
    with pytest.raises(ValueError):
        Admission(lambda *a: defer.succeed(None), task.Clock(), task.Clock(), per_turn=0)
    assert START_S  # the module's clock starts where the module tests start it

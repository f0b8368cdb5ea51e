"""The central module on the command core, with the in-memory journal and a test clock.

What the endpoint tests cannot reach easily: a commit that fails after the domain
decided (the game goes back to its journal's state, so nothing unseen stands), the
fold of a journal into the same games, and the timers armed from journaled times.
"""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet import task

from central_server.domain.config import library_digest
from central_server.module import CentralModule
from server_kit.core import CommandCore, run_inline
from server_kit.journal.fake import FakeJournal
from tests.central.conftest import LIBRARY, config

START_S = 1_780_000_000.0


def build(journal: FakeJournal | None = None, clock: task.Clock | None = None, **kwargs: Any) -> tuple[CentralModule, task.Clock]:
    clock = clock or task.Clock()
    if not clock.seconds():
        clock.advance(START_S)
    core = CommandCore(journal or FakeJournal(), clock, run_inline)
    module = CentralModule(core, {"V1": LIBRARY}, clock, **kwargs)
    core.recover()
    return module, clock


def result(deferred: Any) -> Any:
    outcome: list[Any] = []
    deferred.addBoth(outcome.append)
    assert outcome, "the command did not finish"
    if hasattr(outcome[0], "raiseException"):
        outcome[0].raiseException()
    return outcome[0]


def buy(module: CentralModule, request: str, count: int = 2, terminal: str = "t1") -> dict[str, Any]:
    return result(module.hall_command("buy_cards", {
        "request_id": request, "game_id": "net-1", "hall_id": "hall-1", "terminal_id": terminal,
        "player_ref": "p1", "card_count": count, "stake_pct": 100,
    }, "hall-1"))


def test_a_failed_commit_leaves_the_game_as_its_journal_has_it() -> None:
    journal = FakeJournal()
    module, _ = build(journal)
    assert library_digest(LIBRARY) == config().library_digest
    result(module.schedule(config()))
    result(module.open_sale("net-1"))
    buy(module, "r1")
    game = module.games["net-1"]
    before = (len(game.events), game.decision_count, game.next_card)
    journal.fail_next = OSError("the disk is full")
    with pytest.raises(OSError):
        buy(module, "r2")
    game = module.games["net-1"]
    assert (len(game.events), game.decision_count, game.next_card) == before
    again = buy(module, "r2")
    assert (again["decision"], again["first_card"]) == (2, 3)


@pytest.mark.req("R92.3")
def test_the_journal_folds_into_the_same_games_and_the_timers_resume_from_its_times() -> None:
    journal = FakeJournal()
    module, clock = build(journal, opens_after={"net-1": 5_000})
    module.start_timers()
    result(module.schedule(config()))
    assert module.next_step("net-1") == (int(START_S * 1000) + 5_000, "open_sale")
    clock.advance(5.01)
    assert module.games["net-1"].phase == "selling"
    buy(module, "r1", count=6)
    clock.advance(30)
    # A new process on the same journal: the same game, its deadline from the journal.
    restarted, _ = build(journal, clock=clock, opens_after={"net-1": 5_000})
    assert restarted.games["net-1"].events == module.games["net-1"].events
    module.stop_timers()
    restarted.start_timers()
    assert restarted.armed("net-1")
    closes = restarted.games["net-1"].closes_at_ms
    assert restarted.next_step("net-1") == (closes, "close_sale")
    clock.advance((closes - int(clock.seconds() * 1000)) / 1000 + 0.002)
    assert restarted.games["net-1"].phase == "sale_closed"
    closed = restarted.games["net-1"].sale
    assert closed is not None and closed.closed_at_ms >= closes
    assert restarted.next_step("net-1") == (closed.closed_at_ms + 2_000, "draw")
    clock.advance(2.002)
    assert len(restarted.games["net-1"].balls) == 1


def test_a_game_without_an_opening_time_waits_for_the_operator() -> None:
    module, clock = build()
    module.start_timers()
    result(module.schedule(config()))
    clock.advance(3600)
    assert module.games["net-1"].phase == "scheduled" and not module.armed("net-1")
    result(module.open_sale("net-1"))
    assert module.armed("net-1")


class HeldCommits:
    """A database writer whose commits wait until the test lets them through, one at a time."""

    def __init__(self) -> None:
        self.held: list[tuple[Any, tuple[Any, ...], Any]] = []

    def __call__(self, function: Any, *args: Any) -> Any:
        from twisted.internet import defer

        done: Any = defer.Deferred()
        self.held.append((function, args, done))
        return done

    def release(self, fail: Exception | None = None) -> None:
        function, args, done = self.held.pop(0)
        if fail is not None:
            done.errback(fail)
            return
        try:
            outcome = function(*args)
        except Exception as error:
            done.errback(error)
        else:
            done.callback(outcome)


@pytest.mark.req("R93.6")
def test_purchases_that_arrive_while_a_commit_is_in_flight_are_decided_in_order_and_committed_together() -> None:
    """R93.6 and the group commit: a burst is decided in the order received, in two transactions, not one a purchase."""
    journal = FakeJournal()
    writer = HeldCommits()
    clock = task.Clock()
    clock.advance(START_S)
    core = CommandCore(journal, clock, writer)
    module = CentralModule(core, {"V1": LIBRARY}, clock)
    core.recover()
    module.schedule(config())
    writer.release()
    module.open_sale("net-1")
    writer.release()

    def ask(n: int) -> Any:
        return module.hall_command("buy_cards", {
            "request_id": f"r{n}", "game_id": "net-1", "hall_id": "hall-1", "terminal_id": f"t{n}",
            "player_ref": "p1", "card_count": 2, "stake_pct": 100,
        }, "hall-1")

    answers: list[Any] = []
    burst = [ask(n).addCallback(answers.append) for n in range(10)]
    assert len(writer.held) == 1 and answers == [], "the first purchase's commit is in flight; nothing is answered"
    commits = core.commits
    writer.release()  # the first purchase
    writer.release()  # the nine decided meanwhile, in one transaction
    assert not writer.held and core.commits == commits + 2
    assert [a["decision"] for a in answers] == list(range(1, 11))
    assert [a["first_card"] for a in answers] == list(range(1, 21, 2)), "cards assigned in the order received"
    assert all(b.called for b in burst)

    # A commit that fails takes every purchase decided on it along: the game is its journal's again.
    failed: list[Any] = []
    second = [ask(n).addErrback(failed.append) for n in range(10, 13)]
    writer.release(OSError("the disk is full"))  # the first of them; the two decided on it fail with it
    assert len(failed) == 3 and all(d.called for d in second) and not writer.held
    game = module.games["net-1"]
    assert (game.decision_count, game.next_card) == (10, 21)
    ask(13).addCallback(answers.append)
    writer.release()
    assert (answers[-1]["decision"], answers[-1]["first_card"]) == (11, 21)


def buy_at(module: CentralModule, request: str, hall: str, received_ms: int) -> dict[str, Any]:
    return result(module.hall_command("buy_cards", {
        "request_id": request, "game_id": "net-1", "hall_id": hall, "terminal_id": "t1", "player_ref": "p1",
        "card_count": 1, "stake_pct": 100,
    }, hall, received_ms=received_ms))


@pytest.mark.req("R93.6", "R93.8")
def test_a_sale_stays_open_past_its_deadline_for_what_a_halls_gate_let_through_until_that_gate_closes() -> None:
    """Protocol version 3: what a hall sent before its ``gate_closed`` it took before the deadline, however late
    the central server reads it; the sale closes once every gate-keeping hall's gate closed, and nothing is
    confirmed after it.  A hall of version 2 is decided as of when its purchase is received."""
    from protocol import central_messages as m
    from tests.central.conftest import HALLS

    module, clock = build()
    result(module.schedule(config()))
    result(module.open_sale("net-1"))
    module.start_timers()
    gated, other = HALLS[0], HALLS[1]
    module.gate_linked(gated)
    deadline = module.games["net-1"].closes_at_ms
    assert deadline is not None
    clock.advance((deadline - clock.seconds() * 1000) / 1000 + 0.5)  # the central server behind by half a second
    assert module.games["net-1"].phase == "selling" and module.gates_waiting("net-1") == [gated]
    late = deadline + 400
    confirmed = buy_at(module, "gated-1", gated, late)
    assert confirmed["status"] == "confirmed"
    assert module.games["net-1"].purchases[-1].at_gate is True and module.games["net-1"].purchases[-1].received_ms == late
    refused = buy_at(module, "v2-1", other, late)  # a hall of version 2: as of when it was received
    assert (refused["status"], refused["refusal_code"]) == ("refused", "sale_over")
    assert result(module.hall_command(m.GATE_CLOSED.name, {"game_id": "net-1", "hall_id": gated, "purchases": 1,
                                                            "closed_ms": deadline}, gated)) == {}
    clock.advance(0.001)
    assert module.games["net-1"].phase == "sale_closed" and module.games["net-1"].cards_in_play == 1
    after = buy_at(module, "gated-2", gated, late + 1)  # sent after its gate closed: refused, nothing charged
    assert (after["status"], after["refusal_code"]) == ("refused", "sale_over")


@pytest.mark.req("R93.8")
def test_a_gate_that_never_closes_holds_the_sale_no_longer_than_the_bound() -> None:
    from protocol import central_messages as m
    from tests.central.conftest import HALLS

    module, clock = build()
    result(module.schedule(config()))
    result(module.open_sale("net-1"))
    module.start_timers()
    module.gate_linked(HALLS[0])
    deadline = module.games["net-1"].closes_at_ms
    assert deadline is not None
    clock.advance((deadline - clock.seconds() * 1000) / 1000 + 0.001)
    assert module.games["net-1"].phase == "selling"
    clock.advance(m.GATE_BOUND_MS / 1000)
    assert module.games["net-1"].phase != "selling"  # closed (nothing sold: the game is over at once)
    late = buy_at(module, "gated-late", HALLS[0], deadline + m.GATE_BOUND_MS + 5)
    assert (late["status"], late["refusal_code"]) == ("refused", "sale_over")
    # A hall whose link is lost is not waited for.
    module.gate_unlinked(HALLS[0])
    assert module.gatekeepers == set()

"""The role of a replicated central server's process (R92.6): its transition table, its lease, its shell.

No process and no database: :class:`RoleMachine` is fed inputs with the time, and
:class:`ReplicaRole` runs on a ``task.Clock`` with a fake Patroni whose answer the test
sets, and records what it was asked to do.  The fence's lease is checked on a real
SQLite journal: once the lease lapsed, a commit is refused before the database is asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st
from twisted.internet import defer, task

from central_server import leadership, replica, store
from protocol.chain import ChainError
from central_server.module import SYSTEM
from central_server.replica import TABLE, Effect, Input, ReplicaRole, Role, RoleMachine, cause_of, render_table
from server_kit.journal import table
from server_kit.journal.sql import Journal

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.req("R92.6")
def test_r92_6_the_role_table_in_the_docs_is_the_code_s() -> None:
    assert render_table() in (DOCS / "replica.md").read_text(encoding="utf-8")


@pytest.mark.req("R92.6")
def test_r92_6_a_standby_takes_over_once_its_node_leads_and_serves_once_it_took() -> None:
    machine = RoleMachine()
    assert machine.handle(Input.LEADER_LOST, 0) is None and machine.role is Role.STANDBY
    assert machine.handle(Input.LEADER_SEEN, 500) is Effect.TAKE_OVER and machine.role is Role.TAKING
    assert not machine.acting(600) and machine.may_commit(600)  # its take is committed through the fence
    assert machine.handle(Input.TAKEN, 700) is Effect.SERVE and machine.acting(700)


@pytest.mark.req("R92.6")
def test_r92_6_a_take_that_fails_goes_back_to_standby_and_is_tried_again() -> None:
    machine = RoleMachine()
    machine.handle(Input.LEADER_SEEN, 0)
    assert machine.handle(Input.TAKE_FAILED, 100) is None and machine.role is Role.STANDBY
    assert machine.handle(Input.LEADER_SEEN, 600) is Effect.TAKE_OVER


@pytest.mark.req("R92.6")
@pytest.mark.parametrize("input", [Input.LEADER_LOST, Input.LEASE_LAPSED, Input.FENCED])
def test_r92_6_the_active_process_stops_when_its_node_no_longer_leads_its_lease_lapses_or_it_is_fenced(
    input: Input,
) -> None:
    machine = RoleMachine()
    machine.handle(Input.LEADER_SEEN, 0)
    machine.handle(Input.TAKEN, 0)
    assert machine.handle(input, 1000) is Effect.STOP and machine.role is Role.STOPPED
    assert not machine.acting(1000) and not machine.may_commit(1000)
    assert machine.handle(Input.LEADER_SEEN, 2000) is None and machine.role is Role.STOPPED  # never again


@pytest.mark.req("R92.6")
def test_r92_6_the_lease_lapses_lease_seconds_after_the_last_confirmation() -> None:
    machine = RoleMachine(lease_ms=8000)
    machine.handle(Input.LEADER_SEEN, 1000)
    machine.handle(Input.TAKEN, 1000)
    assert machine.acting(9000) and not machine.acting(9001)
    machine.handle(Input.LEADER_SEEN, 9500)  # a late confirmation renews it
    assert machine.acting(17_000)


@pytest.mark.req("R92.6")
@given(st.lists(st.sampled_from(list(Input)), max_size=40), st.lists(st.integers(0, 20_000), min_size=40, max_size=40))
def test_r92_6_a_process_acts_only_once_taken_and_never_after_it_stopped(inputs: list[Input], gaps: list[int]) -> None:
    """Whatever comes in, a process acts only after a take it committed, and not once it stopped."""
    machine = RoleMachine()
    now, taken, stopped = 0, False, False
    for input, gap in zip(inputs, gaps):
        now += gap
        before = machine.role
        effect = machine.handle(input, now)
        assert (before, input) in TABLE or (machine.role is before and effect is None)
        taken = taken or (before is Role.TAKING and input is Input.TAKEN)
        stopped = stopped or machine.role is Role.STOPPED
        if machine.acting(now):
            assert taken and not stopped


@pytest.mark.req("R92.6")
def test_r92_6_the_cause_is_a_failover_when_the_leadership_moves_to_another_node() -> None:
    assert cause_of("central-a beside node0 on host pid 12", "node1") == replica.FAILOVER
    assert cause_of("central-a beside node1 on host pid 12", "node1") == replica.START
    assert cause_of(None, "node0") == replica.START
    assert cause_of("central-a on host pid 12", "node0") == replica.START  # a single process before


class FakePatroni:
    """Answers whether the local node leads as the test sets it: True, False or None (no answer)."""

    def __init__(self) -> None:
        self.leads: bool | None = False
        self.asked = 0

    def leader(self) -> defer.Deferred[bool | None]:
        self.asked += 1
        return defer.succeed(self.leads)


class Shell:
    """A :class:`ReplicaRole` on a clock, recording what it did."""

    def __init__(self) -> None:
        self.clock = task.Clock()
        self.clock.advance(1_000)
        self.patroni = FakePatroni()
        self.done: list[str] = []
        self.take: defer.Deferred[Any] | None = None
        self.follows: list[defer.Deferred[Any]] = []
        self.role = ReplicaRole("node1", self.patroni, self.clock, take_over=self.take_over, follow=self.follow,  # type: ignore[arg-type]
                                serve=lambda: self.done.append("serve"), stop=lambda why: self.done.append(f"stop: {why}"))

    def take_over(self) -> defer.Deferred[Any]:
        self.done.append("take over")
        self.take = defer.Deferred()
        return self.take

    def follow(self) -> defer.Deferred[Any]:
        self.follows.append(defer.Deferred())
        return self.follows[-1]


@pytest.mark.req("R92.6")
def test_r92_6_the_standby_follows_every_second_and_takes_over_once_patroni_says_its_node_leads() -> None:
    shell = Shell()
    shell.role.startService()
    assert shell.patroni.asked == 1 and len(shell.follows) == 1
    shell.clock.advance(replica.POLL_S)
    assert len(shell.follows) == 1  # one following at a time
    shell.follows[0].callback(None)
    shell.clock.advance(replica.FOLLOW_S)
    assert len(shell.follows) == 2 and shell.done == []
    shell.patroni.leads = True
    shell.clock.advance(replica.POLL_S)
    assert shell.done == [] and shell.role.role is Role.TAKING  # the takeover waits for the following in flight
    shell.follows[1].callback(None)
    assert shell.done == ["take over"] and not shell.role.acting()
    assert shell.take is not None
    shell.take.callback(None)
    assert shell.done == ["take over", "serve"] and shell.role.acting() and shell.role.active.called
    shell.role.stopService()


def acting_shell() -> Shell:
    """A process whose node leads at once (nothing to follow first), its takeover done."""
    shell = Shell()
    shell.patroni.leads = True
    shell.role.startService()
    assert shell.take is not None and shell.follows == []
    shell.take.callback(None)
    return shell


@pytest.mark.req("R92.6")
def test_r92_6_the_active_process_stops_when_patroni_is_silent_for_the_lease() -> None:
    shell = acting_shell()
    shell.patroni.leads = None  # Patroni does not answer (its machine froze, or the process is cut off)
    shell.clock.pump([replica.POLL_S] * int(replica.LEASE_S / replica.POLL_S))
    assert shell.done == ["take over", "serve"] and shell.role.acting()  # exactly the lease: still held
    shell.clock.advance(replica.POLL_S)
    assert shell.done[-1].startswith("stop: its node node1's leadership was not confirmed")
    assert shell.role.role is Role.STOPPED and not shell.role.acting() and not shell.role.may_commit()
    shell.role.stopService()


@pytest.mark.req("R92.6")
def test_r92_6_the_active_process_stops_at_once_when_its_node_no_longer_leads() -> None:
    shell = acting_shell()
    shell.patroni.leads = False
    shell.clock.advance(replica.POLL_S)
    assert shell.done[-1] == "stop: node1 is no longer Patroni's leader"
    shell.role.stopService()


@pytest.mark.req("R92.6")
def test_r92_6_a_take_that_fails_is_tried_again_at_the_next_question() -> None:
    shell = Shell()
    shell.patroni.leads = True
    shell.role.startService()  # its node leads at once: nothing to follow first
    assert shell.take is not None and shell.follows == []
    shell.take.errback(RuntimeError("cannot execute UPDATE in a read-only transaction"))
    assert shell.role.role is Role.STANDBY
    shell.clock.advance(replica.POLL_S)
    assert shell.done == ["take over", "take over"]
    shell.role.stopService()


@pytest.mark.req("R92.6")
def test_r92_6_the_fence_refuses_every_commit_once_the_lease_lapsed_before_the_database_is_asked(tmp_path: Path) -> None:
    engine = store.open_database(f"sqlite:///{tmp_path / 'central.sqlite3'}")
    try:
        journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
        journal.initialise(1_000, {"central": "central-a", "actor": SYSTEM.to_dict()})
        lease = {"held": True}
        told: list[leadership.Fenced] = []
        fence = leadership.lead(journal, "central-a beside node0 on host pid 1", 2_000, SYSTEM, on_fenced=told.append,
                                acting=lambda: lease["held"])
        count = table.count(engine)
        lease["held"] = False
        entry = ("central_command_refused", {"peer": "hall-1", "command": "buy_cards", "code": "not_now",
                                             "message": "m", "actor": SYSTEM.to_dict(), "epoch": fence.epoch})
        with pytest.raises(leadership.Fenced, match=r"its lease on its node's leadership lapsed .*; this process's "
                                                    r"epoch 1 is fenced: nothing was written"):
            journal.append(3_000, [entry])
        lease["held"] = True  # an epoch is never given back: fenced once, fenced for good
        with pytest.raises(leadership.Fenced):
            journal.append(3_000, [entry])
        assert table.count(engine) == count and len(told) == 1
    finally:
        engine.dispose()


@pytest.mark.req("R92.6")
def test_r92_6_a_first_start_beside_a_cloned_node_verifies_the_whole_journal_and_keeps_its_end_as_head(
    tmp_path: Path,
) -> None:
    """The standby's own head: none at its first start; the replicated journal is checked whole, then followed."""
    url = f"sqlite:///{tmp_path / 'central.sqlite3'}"
    engine = store.open_database(url)
    key = Ed25519PrivateKey.generate()
    try:
        active = Journal(engine, key, head=tmp_path / "active.head")
        active.initialise(1_000, {"central": "central-a", "actor": SYSTEM.to_dict()})
        leadership.lead(active, "central-a beside node0 on host pid 1", 2_000, SYSTEM)
        standby = Journal(engine, key, head=tmp_path / "standby" / "journal.head")
        assert standby.last is not None and standby.last.seq == 2  # the table's end, not yet verified
        assert replica.follow_journal(standby) == 2 and standby.verify() == 2
        active.append(3_000, [("central_command_refused", {
            "peer": "hall-1", "command": "buy_cards", "code": "not_now", "message": "m", "actor": SYSTEM.to_dict(),
            "epoch": 1})])
        assert replica.follow_journal(standby) == 1 and standby.last is not None and standby.last.seq == 3
        assert (tmp_path / "standby" / "journal.head").exists() and standby.verify() == 3
        (tmp_path / "standby" / "journal.head").unlink()
        with engine.begin() as connection:  # a record altered on the way: the first start refuses it
            connection.exec_driver_sql("UPDATE journal SET payload = replace(payload, 'hall-1', 'hall-2') WHERE seq = 3")
        with pytest.raises(ChainError, match="record 3"):
            replica.follow_journal(Journal(engine, key, head=tmp_path / "standby" / "journal.head"))
    finally:
        engine.dispose()

"""The server kit's command loop on the in-memory journal: what every server relies on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

import pytest
from twisted.internet import task

from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import JournalRecord
from server_kit.core import Actor, CommandCore, NotAllowed, Repeated, run_inline
from server_kit.journal.fake import FakeJournal
from tests.support.records import declared

pytestmark = pytest.mark.req("R92.3", "R96.4", "R80")

CLERK = Actor("ana", "clerk")
GUEST = Actor("bea", "guest")


@dataclass(frozen=True, kw_only=True)
class Added(JournalRecord):
    """The test server's one record type: an amount added to the counter."""

    type: ClassVar[str] = "added"
    amount: int


@pytest.fixture(autouse=True)
def added_is_declared() -> Iterator[None]:
    with declared(Added):
        yield


class Counter:
    """A module that counts what it folded."""

    def __init__(self) -> None:
        self.total = 0

    def apply(self, record: Record) -> None:
        if record.type == "added":
            self.total += record.payload["amount"]


def outcome(deferred: Any) -> Any:
    results: list[Any] = []
    deferred.addBoth(results.append)
    assert results, "the command did not finish"
    return results[0]


def core_with(journal: FakeJournal) -> tuple[CommandCore, Counter]:
    core = CommandCore(journal, task.Clock(), run_inline, {"add": frozenset({"clerk"})})
    counter = Counter()
    core.add_module(counter)
    return core, counter


def add(core: CommandCore, actor: Actor, amount: int) -> Any:
    def decide(now_ms: int) -> list[tuple[str, dict[str, Any]]]:
        if amount <= 0:
            raise DomainError("an amount is a positive number of cents")
        return [("added", {"amount": amount})]

    return core.execute(actor, "add", decide)


def test_a_command_is_decided_committed_applied_and_announced_with_who_gave_it() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    heard: list[Record] = []
    core.observers.append(heard.append)
    (record,) = outcome(add(core, CLERK, 250))
    assert record.payload == {"amount": 250, "actor": {"name": "ana", "role": "clerk"}}
    assert counter.total == 250 and heard == [record] and core.seq == record.seq
    assert journal.verify() == 1


def test_a_role_the_server_did_not_allow_is_refused_and_nothing_is_written() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    failure = outcome(add(core, GUEST, 100))
    assert failure.check(NotAllowed)
    assert "bea (guest) may not add; that is for: clerk" in failure.getErrorMessage()
    assert journal.kept == [] and counter.total == 0


def test_a_refused_decision_and_a_failed_commit_change_nothing() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    assert outcome(add(core, CLERK, 0)).check(DomainError)
    journal.fail_next = OSError("disk full")
    assert outcome(add(core, CLERK, 100)).check(OSError)
    assert journal.kept == [] and counter.total == 0 and core.seq == 0
    outcome(add(core, CLERK, 100))
    assert counter.total == 100


def test_a_request_sent_twice_is_carried_out_once_and_recovery_remembers_it() -> None:
    journal = FakeJournal()
    core, counter = core_with(journal)
    first = outcome(core.once(CLERK, "r-1", lambda actor: add(core, actor, 40)))
    again = outcome(core.once(CLERK, "r-1", lambda actor: add(core, actor, 40)))
    assert isinstance(again, Repeated) and again.records == ((first[0].seq, "added"),)
    assert counter.total == 40
    restarted, folded = core_with(journal)
    assert restarted.recover() == 1 and folded.total == 40
    assert isinstance(outcome(restarted.once(CLERK, "r-1", lambda actor: add(restarted, actor, 40))), Repeated)
    assert folded.total == 40


def test_a_registered_command_needs_a_permission_entry() -> None:
    from server_kit.core import CommandSpec

    core, _ = core_with(FakeJournal())
    with pytest.raises(ValueError, match="has no permission entry"):
        core.register(CommandSpec("remove", lambda actor: None, {}, "remove"))  # type: ignore[arg-type,return-value]

"""Group commit: commands that arrive while a commit is in flight share the next transaction.

The core runs on the real SQL journal; its blocking runner is held by the test, so a
commit is "in flight" until the test lets it run (on this thread, for real), and the
transactions are counted at the database itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import event
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from hall_server.store.database import open_database
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import JournalRecord
from server_kit.core import Actor, CommandCore, NotAllowed, Repeated
from server_kit.db.faults import StorageUnavailable
from server_kit.journal import sql as sql_journal
from server_kit.journal.sql import Journal, read_head
from tests.support.records import declared

pytestmark = pytest.mark.integration



@dataclass(frozen=True, kw_only=True)
class Ticket(JournalRecord):
    """The toy server's one record type: a numbered ticket and its holder."""

    type: ClassVar[str] = "ticket"
    number: int
    holder: str


@pytest.fixture(autouse=True)
def ticket_is_declared() -> Iterator[None]:
    with declared(Ticket):
        yield


CLERK = Actor("ana", "clerk")
VISITOR = Actor("val", "visitor")


class HeldRunner:
    """A blocking runner whose calls wait until the test runs them (a commit in flight)."""

    def __init__(self) -> None:
        self.held: list[tuple[Callable[..., Any], tuple[Any, ...], defer.Deferred[Any]]] = []

    def __call__(self, function: Callable[..., Any], *args: Any) -> defer.Deferred[Any]:
        done: defer.Deferred[Any] = defer.Deferred()
        self.held.append((function, args, done))
        return done

    def run_one(self) -> None:
        function, args, done = self.held.pop(0)
        try:
            value = function(*args)
        except Exception:
            done.errback(Failure())
        else:
            done.callback(value)

    def run_all(self) -> None:
        while self.held:
            self.run_one()


class Tickets:
    """A toy module: numbered tickets, at most ``limit``; each decision reads the state."""

    def __init__(self, core: CommandCore, limit: int = 1000) -> None:
        self.core = core
        self.limit = limit
        self.issued: list[tuple[int, str]] = []
        core.add_module(self)
        core.allow({"take": {"clerk"}})

    def reset(self) -> None:
        self.issued = []

    def apply(self, record: Record) -> None:
        if record.type == "ticket":
            self.issued.append((record.payload["number"], record.payload["holder"]))

    def take(self, actor: Actor, holder: str) -> defer.Deferred[list[Record]]:
        def decide(now: int) -> list[Ticket]:
            if holder == "nobody":
                raise DomainError("a ticket needs a holder")
            number = len(self.issued) + 1
            if number > self.limit:
                raise DomainError(f"only {self.limit} tickets")
            return [Ticket(number=number, holder=holder)]

        return self.core.execute(actor, "take", decide)


class Hall:
    def __init__(self, tmp_path: Path, runner: Any) -> None:
        self.engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
        self.key = Ed25519PrivateKey.generate()
        self.head = tmp_path / "journal.head"
        self.journal = Journal(self.engine, self.key, head=self.head)
        self.clock = Clock()
        self.clock.advance(1_780_000_000)
        self.core = CommandCore(self.journal, self.clock, runner)
        self.tickets = Tickets(self.core)
        self.announced: list[int] = []
        self.core.observers.append(lambda record: self.announced.append(record.seq))
        self.transactions = 0
        event.listen(self.engine, "commit", self._committed)

    def _committed(self, connection: Any) -> None:
        self.transactions += 1

    def restarted(self) -> "Tickets":
        """The state a fresh core folds from the journal (a restart)."""
        journal = Journal(self.engine, self.key, head=self.head)
        journal.verify()
        core = CommandCore(journal, self.clock, lambda f, *a: defer.maybeDeferred(f, *a))
        tickets = Tickets(core)
        core.recover()
        return tickets


def outcomes(deferreds: list[defer.Deferred[Any]]) -> list[Any]:
    """What each Deferred has fired with so far (``"pending"`` if not yet); a failure is taken."""
    seen: list[Any] = []
    for deferred in deferreds:
        box: list[Any] = []

        def keep(value: Any, box: list[Any] = box) -> Any:
            box.append(value)
            return None if isinstance(value, Failure) else value

        deferred.addBoth(keep)
        seen.append(box[0] if box else "pending")
    return seen


def test_concurrent_commands_share_one_transaction_in_order_each_answered_with_its_own_records(
    tmp_path: Path,
) -> None:
    runner = HeldRunner()
    hall = Hall(tmp_path, runner)
    first = hall.tickets.take(CLERK, "h0")  # its commit is now in flight
    rest = [hall.tickets.take(CLERK, f"h{n}") for n in range(1, 50)]
    assert len(runner.held) == 1 and outcomes([first] + rest) == ["pending"] * 50
    before = hall.transactions
    runner.run_one()  # the first commit ends: the 49 that waited are decided and sent as one
    assert hall.transactions == before + 1
    assert outcomes(rest) == ["pending"] * 49 and hall.announced == [1]  # nothing told before its commit
    assert len(runner.held) == 1
    runner.run_one()
    assert hall.transactions == before + 2  # 50 commands, two transactions
    assert hall.core.commits == 2
    answers = outcomes([first] + rest)
    assert [[(r.payload["number"], r.payload["holder"]) for r in a] for a in answers] == [
        [(n + 1, f"h{n}")] for n in range(50)
    ]
    assert hall.announced == list(range(1, 51))
    assert hall.tickets.issued == [(n + 1, f"h{n}") for n in range(50)]
    assert hall.restarted().issued == hall.tickets.issued
    assert hall.journal.verify() == 50
    assert read_head(hall.head).seq == 50


def test_a_refusal_in_a_batch_touches_only_its_own_command(tmp_path: Path) -> None:
    runner = HeldRunner()
    hall = Hall(tmp_path, runner)
    hall.tickets.limit = 4
    first = hall.tickets.take(CLERK, "a")
    batch = [
        hall.tickets.take(CLERK, "b"),
        hall.tickets.take(CLERK, "nobody"),  # a DomainError
        hall.tickets.take(VISITOR, "c"),  # not allowed
        hall.tickets.take(CLERK, "d"),
        hall.tickets.take(CLERK, "e"),
        hall.tickets.take(CLERK, "f"),  # the fifth ticket: over the limit, on the state the batch left
    ]
    runner.run_all()
    answers = outcomes([first] + batch)
    assert [a[0].payload["number"] for a in (answers[0], answers[1], answers[4], answers[5])] == [1, 2, 3, 4]
    assert answers[2].check(DomainError) and "needs a holder" in answers[2].getErrorMessage()
    assert answers[3].check(NotAllowed)
    assert answers[6].check(DomainError) and "only 4 tickets" in answers[6].getErrorMessage()
    assert hall.tickets.issued == [(1, "a"), (2, "b"), (3, "d"), (4, "e")]
    assert hall.restarted().issued == hall.tickets.issued


def test_a_failed_batch_commit_fails_every_command_and_leaves_state_and_journal_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = HeldRunner()
    hall = Hall(tmp_path, runner)
    first = hall.tickets.take(CLERK, "a")
    batch = [hall.tickets.take(CLERK, f"b{n}") for n in range(10)]
    runner.run_one()
    assert hall.tickets.issued == [(1, "a")] + [(n + 2, f"b{n}") for n in range(10)]  # decided, in flight
    late = hall.tickets.take(CLERK, "late")  # decided on the batch in flight, for the next transaction
    real = sql_journal.table.append

    def full_disk(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sql_journal.table, "append", full_disk)
    runner.run_one()
    monkeypatch.setattr(sql_journal.table, "append", real)
    answers = outcomes(batch + [late])
    assert all(isinstance(a, Failure) and a.check(StorageUnavailable) for a in answers)
    assert "disk full" in answers[0].getErrorMessage()
    assert hall.tickets.issued == [(1, "a")] and not runner.held
    assert hall.core.seq == 1 and hall.announced == [1]
    assert [r.seq for r in hall.journal.records()] == [1]
    refused = hall.tickets.take(CLERK, "during")  # the storage is unavailable: refused at once
    assert outcomes([refused])[0].check(StorageUnavailable) and not runner.held
    hall.core.storage_back(hall.journal.probe(hall.core.unconfirmed))
    again = hall.tickets.take(CLERK, "c")
    runner.run_all()
    assert outcomes([first, again])[1][0].payload["number"] == 2
    assert hall.tickets.issued == [(1, "a"), (2, "c")] == hall.restarted().issued


def test_a_repeated_request_waits_for_the_commit_of_the_first(tmp_path: Path) -> None:
    runner = HeldRunner()
    hall = Hall(tmp_path, runner)
    hall.tickets.take(CLERK, "a")
    sent = hall.core.once(CLERK, "r1", lambda actor: hall.tickets.take(actor, "b"))
    runner.run_one()  # "b" is decided and folded; its commit is in flight
    repeat = hall.core.once(CLERK, "r1", lambda actor: hall.tickets.take(actor, "b again"))
    assert outcomes([sent, repeat]) == ["pending", "pending"]
    runner.run_one()
    (record,) = outcomes([sent])[0]
    assert outcomes([repeat]) == [Repeated("r1", ((record.seq, "ticket"),))]
    assert [holder for _, holder in hall.tickets.issued] == ["a", "b"]


def test_a_repeat_of_a_request_whose_batch_failed_fails_too_and_the_request_may_be_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = HeldRunner()
    hall = Hall(tmp_path, runner)
    hall.tickets.take(CLERK, "a")
    sent = hall.core.once(CLERK, "r1", lambda actor: hall.tickets.take(actor, "b"))
    runner.run_one()
    repeat = hall.core.once(CLERK, "r1", lambda actor: hall.tickets.take(actor, "b again"))
    real = sql_journal.table.append

    def io_error(*args: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(sql_journal.table, "append", io_error)
    runner.run_one()
    monkeypatch.setattr(sql_journal.table, "append", real)
    assert [o.check(StorageUnavailable) for o in outcomes([sent, repeat])] == [StorageUnavailable] * 2
    assert not hall.core.known_request(CLERK, "r1")
    hall.core.storage_back(hall.journal.probe(hall.core.unconfirmed))
    again = hall.core.once(CLERK, "r1", lambda actor: hall.tickets.take(actor, "b"))
    runner.run_all()
    assert outcomes([again])[0][0].payload["holder"] == "b"


def test_a_module_that_cannot_fold_a_command_fails_only_that_command(tmp_path: Path) -> None:
    runner = HeldRunner()
    hall = Hall(tmp_path, runner)
    hall.tickets.take(CLERK, "a")
    apply = hall.tickets.apply

    def faulty(record: Record) -> None:
        apply(record)
        if record.payload.get("holder") == "crash":
            raise KeyError("a fault in the module")

    hall.tickets.apply = faulty  # type: ignore[method-assign]
    batch = [hall.tickets.take(CLERK, holder) for holder in ("b", "crash", "c")]
    hall.tickets.apply = apply  # type: ignore[method-assign]
    runner.run_all()
    answers = outcomes(batch)
    assert answers[1].check(KeyError)
    assert [a[0].payload for a in (answers[0], answers[2])] == [
        {"number": 2, "holder": "b", "actor": CLERK.to_dict()},
        {"number": 3, "holder": "c", "actor": CLERK.to_dict()},
    ]
    assert hall.tickets.issued == [(1, "a"), (2, "b"), (3, "c")] == hall.restarted().issued


@pytest.mark.req("R92.3")
def test_a_head_file_that_cannot_be_written_after_a_commit_leaves_state_equal_to_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 6: the head is written after the commit; its failure must not leave the state behind."""
    hall = Hall(tmp_path, lambda f, *a: defer.maybeDeferred(f, *a))
    hall.tickets.take(CLERK, "a")
    write = sql_journal._write_head
    calls = []

    def fails_once(path: Path, head: Any) -> None:
        calls.append(head.seq)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        write(path, head)

    monkeypatch.setattr(sql_journal, "_write_head", fails_once)
    (answer,) = outcomes([hall.tickets.take(CLERK, "b")])
    assert [r.payload["holder"] for r in answer] == ["b"]  # committed, so carried out
    assert hall.announced == [1, 2]
    assert hall.tickets.issued == [(1, "a"), (2, "b")] == hall.restarted().issued
    assert read_head(hall.head).seq == 1  # lags the table; a restart still verifies
    restarted = Journal(hall.engine, hall.key, head=hall.head)
    assert restarted.verify() == 2
    assert restarted.repair_head() and read_head(hall.head).seq == 2  # a start writes it again
    assert not restarted.repair_head()
    hall.tickets.take(CLERK, "c")
    assert read_head(hall.head).seq == 3  # the next commit writes it again
    assert hall.restarted().issued == hall.tickets.issued

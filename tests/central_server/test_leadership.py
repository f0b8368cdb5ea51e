"""The central leadership: every record carries its epoch, and an overtaken process writes nothing (R92.6).

Two central servers are built in this process on the same configuration, so on the same
SQLite database and journal, as two processes beside one database would be; the
lower-level tests run the leadership and the fence on each database the system
supports (SQLite and PostgreSQL).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from alembic import command
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from twisted.internet import reactor, task

from central_server import leadership, store
from central_server.config import load_config
from central_server.leadership import LEADERSHIP, Fence, Fenced, lead, stop_fenced, take
from central_server.module import SYSTEM
from central_server.tap import build_central
from protocol.chain import Record
from protocol.records.leadership import CentralLeadershipTaken
from server_kit.db.database import alembic_config, create
from server_kit.core import Actor
from server_kit.journal import table
from server_kit.journal.sql import Journal
from tests.central_server.conftest import EPOCH_S, Running, start_central, stop_central

pytestmark = [pytest.mark.integration]

TAKEN = CentralLeadershipTaken.type


def config_path(running: Running) -> Path:
    config = running.server.config.source
    assert config is not None
    return config


def takes(records: list[Record]) -> list[tuple[int, int, str]]:
    """Each ``central_leadership_taken``: (epoch, previous epoch, cause)."""
    return [(r.payload["epoch"], r.payload["previous_epoch"], r.payload["cause"]) for r in records if r.type == TAKEN]


def assert_every_record_carries_its_epoch(records: list[Record]) -> None:
    """From the first take on, each record carries the epoch of the last take before it (or its own)."""
    held: int | None = None
    for record in records:
        if record.type == TAKEN:
            held = record.payload["epoch"]
        if held is None:
            assert "epoch" not in record.payload, record
        else:
            assert record.payload.get("epoch") == held, record


def leadership_row(engine: Any) -> tuple[int, str | None, int | None]:
    with engine.connect() as connection:
        (row,) = connection.execute(select(LEADERSHIP)).all()
    return row.epoch, row.holder, row.since_ms


@pytest.mark.req("R92.6")
@pytest_twisted.ensureDeferred
async def test_r92_6_a_second_central_server_takes_the_next_epoch_and_the_first_writes_nothing_more(
    tmp_path: Path,
) -> None:
    first = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}", opens_after_ms=None)
    fenced: list[Fenced] = []
    assert first.server.fence is not None and first.server.core.epoch == first.server.fence.epoch == 1
    first.server.fence.on_fenced = fenced.append  # the server would stop its reactor: the test's runs on
    second = None
    try:
        clock = task.Clock()
        clock.advance(EPOCH_S + 60)
        second = build_central(load_config(config_path(first)), reactor, clock)
        assert second.core.epoch == 2
        assert leadership_row(second.engine)[0] == 2
        length = first.journal_length()

        # The first process's next command is refused whole: nothing of it is in the journal,
        # and its game is as the journal has it.
        with pytest.raises(Fenced, match=r"central server central-a on .* holds epoch 2; this process's epoch 1 "
                                         r"is fenced: nothing was written"):
            await first.server.module.open_sale("net-1")
        assert [str(e) for e in fenced] == [str(fenced[0])] and fenced[0].epoch == 2 and fenced[0].own_epoch == 1
        assert first.journal_length() == length and not first.records("central_sale_opened")
        assert first.game.phase == "scheduled"
        # Fenced once, fenced for good: every later command is refused as well, and told once.
        with pytest.raises(Fenced):
            await first.server.module.open_sale("net-1")
        assert len(fenced) == 1 and first.journal_length() == length

        # The second one serves the same game, under its epoch, once the operator's verification passed:
        # it started over the run marker of a process that had not stopped (R92.5e).
        second.service.startService()
        await second.listener.listening
        assert second.gate is not None and second.gate.refusal() is not None
        assert (await second.gate.verify({}, Actor("olga", "operator")))["passed"] is True
        await second.module.open_sale("net-1")
        records = list(table.read(second.engine))
        assert records[-1].type == "central_sale_opened" and records[-1].payload["epoch"] == 2
        assert takes(records) == [(1, 0, "start"), (2, 1, "start")]
        assert_every_record_carries_its_epoch(records)
        assert second.journal.verify() == len(records)
    finally:
        if second is not None:
            await second.service.stopService()
            second.engine.dispose()
        await stop_central(first)


@pytest.mark.req("R92.6")
@pytest_twisted.ensureDeferred
async def test_r92_6_a_restart_takes_the_next_epoch_and_journals_it_with_the_one_before(tmp_path: Path) -> None:
    first = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}")
    path = config_path(first)
    records = list(table.read(first.server.engine))
    # A fresh journal: its opening (no epoch: written before the leadership), then the take.
    assert [r.type for r in records[:2]] == ["journal_opened", TAKEN] and "epoch" not in records[0].payload
    taken = records[1].payload
    assert taken["epoch"] == 1 and taken["previous_epoch"] == 0 and taken["holder"].startswith("central-a on ")
    assert taken["actor"] == SYSTEM.to_dict()
    await stop_central(first)

    clock = task.Clock()
    clock.advance(EPOCH_S + 60)
    again = build_central(load_config(path), reactor, clock)
    try:
        assert again.core.epoch == 2 and "net-1" in again.module.games
        records = list(table.read(again.engine))
        assert takes(records) == [(1, 0, "start"), (2, 1, "start")]
        assert records[-1].type == TAKEN and records[-1].time_ms == int((EPOCH_S + 60) * 1000)
        assert_every_record_carries_its_epoch(records)
        assert again.journal.verify() == len(records)
        assert leadership_row(again.engine)[1:] == (records[-1].payload["holder"], records[-1].time_ms)
    finally:
        again.engine.dispose()


def journal_on(engine: Any, key: Ed25519PrivateKey, head: Path) -> Journal:
    journal = Journal(engine, key, head=head)
    if journal.is_new:
        journal.initialise(1_000, {"central": "central-a", "actor": SYSTEM.to_dict()})
    journal.verify()
    return journal


def refused(journal: Journal, time_ms: int) -> list[Record]:
    return journal.append(time_ms, [("central_command_refused", {
        "peer": "hall-1", "command": "buy_cards", "code": "sale_closed", "message": "closed",
        "actor": SYSTEM.to_dict(), "epoch": journal.guard.epoch if isinstance(journal.guard, Fence) else None,
    })])


@pytest.mark.req("R92.6")
def test_r92_6_the_fence_refuses_an_overtaken_process_before_it_writes_on_each_database(
    database_url: str, tmp_path: Path
) -> None:
    key = Ed25519PrivateKey.generate()
    head = tmp_path / "journal.head"
    engines = [store.open_database(database_url), create(database_url)]
    try:
        first = journal_on(engines[0], key, head)
        lead(first, "process one", 2_000, SYSTEM)
        second = journal_on(engines[1], key, head)  # verified while the first one still writes
        refused(first, 3_000)
        # The take: what the first one wrote since the second verified is verified and followed.
        fence = lead(second, "process two", 4_000, SYSTEM)
        assert fence.epoch == 2 and leadership_row(engines[1]) == (2, "process two", 4_000)
        assert [r.type for r in table.read(engines[1])] == ["journal_opened", TAKEN, "central_command_refused", TAKEN]
        count = table.count(engines[0])

        # The first one's idea of the journal's end is behind: it is told it is fenced (not that
        # its record's seq is taken), and nothing of its commit is written.
        with pytest.raises(Fenced, match="central server process two holds epoch 2; this process's epoch 1 is fenced"):
            refused(first, 5_000)
        assert table.count(engines[0]) == count and first.last is not None and first.last.seq == 3
        refused(second, 6_000)
        records = list(table.read(engines[0]))
        assert [r.payload.get("epoch") for r in records] == [None, 1, 1, 2, 2]
        assert second.verify() == 5
    finally:
        for engine in engines:
            engine.dispose()


@pytest.mark.req("R92.6")
def test_r92_6_each_take_is_the_next_epoch_on_each_database(database_url: str) -> None:
    engine = store.open_database(database_url)
    try:
        assert leadership_row(engine) == (0, None, None)  # made by the migration: nobody has taken it yet
        assert [take(engine, "a", 10), take(engine, "b", 20), take(engine, "a", 30)] == [1, 2, 3]
        assert leadership_row(engine) == (3, "a", 30)
    finally:
        engine.dispose()


@pytest.mark.req("R92.6")
def test_r92_6_a_journal_of_before_the_epoch_is_unchanged_and_goes_on_under_the_first_epoch(tmp_path: Path) -> None:
    """A central database of migration 0001 (records without an epoch) upgraded: every record as it was."""
    url = f"sqlite:///{tmp_path / 'central.sqlite3'}"
    engine = create(url)
    config = alembic_config(store.MIGRATIONS)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    key = Ed25519PrivateKey.generate()
    head = tmp_path / "journal.head"
    old = journal_on(engine, key, head)
    old.append(2_000, [("central_command_refused", {"peer": "hall-1", "command": "hello", "code": "unknown_hall",
                                                    "message": "no", "actor": SYSTEM.to_dict()})])
    before = list(table.read(engine))
    engine.dispose()

    engine = store.open_database(url)  # migrated to the head: the leadership's row at epoch 0
    try:
        journal = journal_on(engine, key, head)
        assert list(table.read(engine)) == before
        lead(journal, "process one", 3_000, SYSTEM)
        records = list(table.read(engine))
        assert records[:2] == before and takes(records) == [(1, 0, "start")]
        assert journal.verify() == 3
    finally:
        engine.dispose()


@pytest.mark.req("R92.6")
def test_r92_6_a_take_of_a_database_whose_leadership_row_is_gone_is_refused(tmp_path: Path) -> None:
    engine = store.open_database(f"sqlite:///{tmp_path / 'central.sqlite3'}")
    try:
        with engine.begin() as connection:
            connection.execute(LEADERSHIP.delete())
        with pytest.raises(leadership.LeadershipError, match="central_leadership holds 0 rows, not one"):
            take(engine, "a", 10)
    finally:
        engine.dispose()


class StoppableReactor:
    def __init__(self, running: bool) -> None:
        self.running, self.stopped = running, 0

    def stop(self) -> None:
        self.stopped += 1


@pytest.mark.req("R92.6")
def test_r92_6_a_fenced_central_server_stops_its_reactor() -> None:
    error = Fenced("central-a on host-2 pid 7", 2, 1)
    running, stopping = StoppableReactor(True), StoppableReactor(False)
    stop_fenced(running, error)
    stop_fenced(stopping, error)  # a reactor already stopping is not stopped again
    assert (running.stopped, stopping.stopped) == (1, 0)

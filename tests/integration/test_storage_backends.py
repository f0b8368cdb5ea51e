"""The journal, the card store and recovery on every database the hall supports.

Each test runs twice through the ``database_url`` fixture: on the embedded SQLite
default and on a real PostgreSQL cluster the test session starts itself
(``tests/support/postgres.py``; under CI these may not skip).  The crash campaign
(``tests/crash``) kills real hall servers on both as well.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.store import cards as store
from hall_server.store.database import open_database
from hall_server.store.models import METADATA
from protocol.chain import ChainError
from protocol.records.game import BallDrawn, BallVoided
from protocol.strips import sample_strips
from server_kit.journal.sql import Journal
from tests.hall.conftest import clock, result  # noqa: F401 (clock is a fixture)
from tests.hall.test_games import CHIEF, SELLER, Hall, draw_and_pay, opened_hall, sell

pytestmark = [pytest.mark.integration]


def test_the_schema_is_the_models_after_the_migrations(database_url: str) -> None:
    engine = open_database(database_url)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), METADATA)
    assert differences == []
    assert engine.dialect.name in ("sqlite", "postgresql")


def test_a_plain_postgresql_url_uses_the_installed_driver(postgres_cluster) -> None:  # type: ignore[no-untyped-def]
    url = postgres_cluster.create_database().replace("postgresql+psycopg://", "postgresql://")
    engine = open_database(url)
    assert engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg"


@pytest.mark.req("R92.3")
def test_the_journal_appends_reads_and_verifies_and_names_a_tampered_record(database_url: str, tmp_path: Path) -> None:
    engine = open_database(database_url)
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    for n in range(1, 11):
        journal.append(1_700_000_000_000 + n, [BallDrawn("g1", n, n, entered_by="é€")])
    assert journal.verify() == 10
    again = Journal(engine, journal.key, head=tmp_path / "journal.head")
    assert again.last is not None and again.last.seq == 10 and again.last.hash == journal.last.hash
    assert [r.payload["entered_by"] for r in again.records(after=8)] == ["é€", "é€"]
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE journal SET payload = replace(payload, '\"ball\":4', '\"ball\":44') WHERE seq = 4"
        )
    with pytest.raises(ChainError, match="record 4: its content does not match its hash"):
        journal.verify()


def test_a_failed_transaction_appends_nothing(database_url: str, tmp_path: Path) -> None:
    engine = open_database(database_url)
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    journal.append(1, [BallDrawn("g1", 1, 1)])

    def fails(connection) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("the projection could not be written")

    with pytest.raises(RuntimeError):
        journal.append(2, [BallDrawn("g1", 2, 2), BallVoided("g1", 2, 2, "rosa", "room_chief", "misread")], extra=fails)
    assert [r.type for r in journal.records()] == ["ball_drawn"]
    assert journal.last is not None and journal.last.seq == 1


@pytest.mark.req("R82.1", "R82.9-12")
def test_card_sets_series_and_libraries_round_trip(database_url: str) -> None:
    engine = open_database(database_url)
    cells = sample_strips(4, random.Random(11).randbytes).reshape(-1, 27)
    store.add_card_set(engine, "classic", cells[:12], [str(k // 6 + 1) for k in range(12)], "generated")
    store.add_series(engine, "classic", 1001, 150, 12)
    ids = [store.library_card_id("V1", k) for k in range(1, 13)]
    store.add_library(engine, "terminals", "V1", cells[12:], [f"{k:016x}" for k in range(12)])
    with pytest.raises(store.CardStoreError, match="series 1001 already exists"):
        store.add_series(engine, "classic", 1001, 150, 12)
    (card_set,) = store.list_sets(engine)
    assert (card_set.name, card_set.size, [(s.number, s.face_value_cents) for s in card_set.series]) == (
        "classic", 12, [(1001, 150)])
    labels, layouts = store.set_cards(engine, "classic")
    assert labels[:6] == ["1"] * 6 and np.array_equal(layouts, cells[:12])
    library = store.library_cards(engine, "terminals")
    assert np.array_equal(library.cells, cells[12:]) and library.library.series == "V1" and len(ids) == 12
    assert len(store.registered_prints(engine)) == 24  # every card of the set and the library


@pytest.mark.req("R96.4")
def test_a_hall_rebuilt_from_its_journal_is_the_hall_that_wrote_it(database_url: str, tmp_path: Path, clock: Clock) -> None:
    engine = open_database(database_url)
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    result(hall.games.close_sale(CHIEF))
    draw_and_pay(hall)
    restarted = Hall(Journal(engine, journal.key, head=tmp_path / "journal.head"), clock).reopened()
    assert restarted.core.seq == hall.core.seq == len(hall.records())
    accounts = {a for r in hall.records() if r.type == "posting" for a, _ in r.payload["debits"] + r.payload["credits"]}
    assert accounts and {a: restarted.balance(a) for a in accounts} == {a: hall.balance(a) for a in accounts}
    assert restarted.game.machine.won.keys() == hall.game.machine.won.keys()
    assert restarted.game.machine.drawn == hall.game.machine.drawn

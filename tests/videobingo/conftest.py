"""The fixtures of the video bingo machine tests: a real SQLite journal and a task.Clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.store.database import open_database
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.videobingo.halls import CHIEF, Hall, build_hall, cash_device, config


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    return Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")


@pytest.fixture
def clock() -> Clock:
    c = Clock()
    c.advance(1_780_000_000)
    return c


@pytest.fixture
def hall(journal: Journal, clock: Clock) -> Hall:
    hall = build_hall(journal, clock, config())
    result(hall.vb.enrol_station(CHIEF, "vb-1", 1))
    result(hall.vb.enrol_station(CHIEF, "vb-1", 2))
    cash_device(hall, "vb-1")  # its bill validator, whose signed notes alone put cash in
    return hall

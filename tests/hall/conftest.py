"""A hall core on a real SQLite journal, run inline on a task.Clock (no reactor)."""

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.store.database import open_database
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal


@pytest.fixture
def clock() -> Clock:
    c = Clock()
    c.advance(1_780_000_000)  # a fixed, plausible time
    return c


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    return Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")


@pytest.fixture
def core(journal: Journal, clock: Clock) -> CommandCore:
    return CommandCore(journal, clock, run_inline)


def result(deferred):
    """The result of a Deferred that has already fired (inline runner), or its failure."""
    outcome = []
    deferred.addBoth(outcome.append)
    assert outcome, "the command did not complete inline"
    value = outcome[0]
    if hasattr(value, "raiseException"):
        value.raiseException()
    return value

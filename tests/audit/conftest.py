"""Halls played in process for the export tests, their journals on tmpfs where there is one.

The journal's head file is synced after every commit; on tmpfs that costs nothing, so
a day of games plays in a fraction of a second.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.store.database import open_database
from protocol.prizes import PrizeRules
from server_kit.journal.sql import Journal
from tests.audit.halls import AuditHall

POT_RULES = PrizeRules(line_bp=1500, bingo_bp=4100, superbingo_bp=300, megabingo=True, jackpot=True)
TMPFS = Path("/dev/shm")


def fast_folder() -> Path:
    """A new folder on tmpfs if the machine has one, else in the usual temporary place."""
    return Path(tempfile.mkdtemp(prefix="audit-", dir=TMPFS if TMPFS.is_dir() else None))


def new_clock() -> Clock:
    clock = Clock()
    clock.advance(1_780_000_000)  # 2026-05-28: a megabingo for December is announced in time
    return clock


def new_hall(folder: Path, rules: PrizeRules = POT_RULES) -> AuditHall:
    journal = Journal(open_database(f"sqlite:///{folder / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=folder / "journal.head")
    hall = AuditHall(journal, new_clock(), rules)
    hall.prepare()
    return hall


@pytest.fixture
def folder() -> Iterator[Path]:
    path = fast_folder()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def hall(folder: Path) -> AuditHall:
    return new_hall(folder)


@pytest.fixture(scope="module")
def module_folder() -> Iterator[Path]:
    path = fast_folder()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def first(records: list[Any], type: str, **payload: Any) -> Any:
    """The first record of ``type`` whose payload holds ``payload``."""
    return next(r for r in records if r.type == type and all(r.payload.get(k) == v for k, v in payload.items()))

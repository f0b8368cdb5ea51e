"""The hall's verification of the whole system before every session (R84.1, R92.5e).

Five checks, each giving ``None`` (passed) or the fault in words: the server kit's
``journal``, ``database``, ``clock`` and ``software`` (:mod:`server_kit.verification`),
and the hall's ``draw_device`` - the draw device's self-test: the software generator
must draw a permutation of 1..90 from the operating system's CSPRNG (the blower, when
it is the hall's draw device, answers with its own self-test).  The result is recorded
by the session module as one ``system_verified`` record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

from sqlalchemy import Engine

from hall_server.store.database import MIGRATIONS
from protocol.balls import RandomBallGenerator
from server_kit.journal.port import JournalPort
from server_kit.verification import check_clock, check_database, check_journal, check_software


def check_random_generator() -> str | None:
    source = RandomBallGenerator()
    balls = [source.draw() for _ in range(90)]
    if sorted(balls) != list(range(1, 91)):
        return "the random ball generator did not draw each of the 90 balls once"
    return None


def verify_system(
    journal: JournalPort,
    engine: Engine,
    now_ms: int,
    manifest: Path,
    draw_device: Callable[[], str | None] = check_random_generator,
) -> Mapping[str, str | None]:
    """Run every check (blocking: call it off the reactor thread)."""
    return {
        "journal": check_journal(journal),
        "database": check_database(engine, MIGRATIONS),
        "draw_device": draw_device(),
        "clock": check_clock(now_ms, journal),
        "software": check_software(manifest),
    }

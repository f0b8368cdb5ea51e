"""The hall's opening hours reported to the regulator (R74.2): journaled at the first start,
again only when ``[hall] opening_hours`` changes, a change applying three working days after
its notice; the hours in force until then are the previous ones."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.config import ConfigError, parse_config
from hall_server.hall.notices import OpeningHoursModule, working_days_after
from hall_server.store.database import open_database
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal

ZONE = ZoneInfo("Europe/Madrid")
FRIDAY_NOON_MS = 1_796_990_400_000  # 2026-12-11 12:00 in Madrid


def hall_at(tmp_path: Path, now_ms: int) -> tuple[CommandCore, OpeningHoursModule, Journal]:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    key_file = tmp_path / "key"
    if not key_file.exists():
        key_file.write_bytes(Ed25519PrivateKey.generate().private_bytes_raw())
    key = Ed25519PrivateKey.from_private_bytes(key_file.read_bytes())
    journal = Journal(engine, key, head=tmp_path / "journal.head")
    if journal.is_new:
        journal.initialise(now_ms, {"hall": "h1"})
    clock = Clock()
    clock.advance(now_ms / 1000)
    core = CommandCore(journal, clock, run_inline)
    module = OpeningHoursModule(core, ZONE)
    core.recover()
    return core, module, journal


def notices(journal: Journal) -> list[dict]:
    return [dict(r.payload) for r in journal.records() if r.type == "opening_hours_notified"]


@pytest.mark.req("R74.2")
def test_working_days_skip_the_weekend() -> None:
    assert working_days_after(date(2026, 12, 11), 3) == date(2026, 12, 16)  # Friday -> Wednesday
    assert working_days_after(date(2026, 12, 14), 3) == date(2026, 12, 17)  # Monday -> Thursday


@pytest.mark.req("R74.2")
def test_the_first_hours_are_reported_at_once_and_a_change_applies_three_working_days_later(tmp_path: Path) -> None:
    _, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS)
    module.notify("every day 16:00-02:00")
    assert notices(journal)[-1]["applies_from"] == "2026-12-11" and "previous" not in notices(journal)[-1]
    # Started again with the same hours: nothing more is reported.
    _, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS + 3_600_000)
    assert module.notify("every day 16:00-02:00") is None
    assert len(notices(journal)) == 1
    # Changed on a Friday: it applies on Wednesday; the old hours are in force until then.
    _, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS + 7_200_000)
    module.notify("Monday to Saturday 17:00-01:00")
    change = notices(journal)[-1]
    assert change == {"actor": {"name": "hall-server", "role": "system"}, "hours": "Monday to Saturday 17:00-01:00",
                      "applies_from": "2026-12-16", "previous": "every day 16:00-02:00"}
    assert module.state.in_force(date(2026, 12, 15)) == "every day 16:00-02:00"
    assert module.state.in_force(date(2026, 12, 16)) == "Monday to Saturday 17:00-01:00"
    assert journal.verify() == 3


@pytest.mark.parametrize("hours", ["", "x" * 201, "16:00\n02:00"])
def test_opening_hours_that_say_nothing_or_too_much_are_refused_at_the_start(hours: str) -> None:
    import tomllib

    from hall_server.config import DEFAULT_STAFF, default_config_text
    from tests.web.conftest import _HASH

    text = default_config_text("Hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF])
    data = tomllib.loads(text)
    data["hall"]["opening_hours"] = hours
    with pytest.raises(ConfigError, match="opening_hours: says the opening hours in 1-200 characters"):
        parse_config(data)



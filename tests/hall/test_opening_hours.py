"""The hall's opening hours reported to the regulator (R74.2): journaled at the first start,
again only when ``[hall] opening_hours`` changes, a change applying the day after three whole
working days from its notice (Monday to Friday less Andorra's holidays) unless the regulator
objects, or at once when it approves; the hours in force until then are the previous ones."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.config import ConfigError, parse_config
from hall_server.hall.hours import (
    HoursError,
    andorra_holidays,
    change_applies_from,
    is_working_day,
    parse_schedule,
    working_days_after,
)
from hall_server.hall.notices import HoursRefused, OpeningHoursModule
from hall_server.hall.roles import Role
from server_kit.core import Actor
from tests.hall.conftest import result
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


ADMIN = Actor("ines", Role.ADMINISTRATOR)


@pytest.mark.req("R74.2")
def test_working_days_skip_the_weekend() -> None:
    assert working_days_after(date(2026, 12, 11), 3) == date(2026, 12, 16)  # Friday -> Wednesday
    assert working_days_after(date(2026, 12, 14), 3) == date(2026, 12, 17)  # Monday -> Thursday


#: Western Easter Sunday, as published (the Gregorian computus).
EASTER = {2024: date(2024, 3, 31), 2025: date(2025, 4, 20), 2026: date(2026, 4, 5), 2027: date(2027, 3, 28),
          2028: date(2028, 4, 16), 2029: date(2029, 4, 1), 2030: date(2030, 4, 21), 2038: date(2038, 4, 25)}


@pytest.mark.req("R74.2")
@pytest.mark.parametrize("year", sorted(EASTER))
def test_R74_2_the_days_that_move_with_easter_are_not_working_days(year: int) -> None:
    """Carnival Monday, Holy Thursday (its afternoon: the ruling), Good Friday, Easter Monday and Whit Monday."""
    easter = EASTER[year]
    moving = {easter - timedelta(days=48), easter - timedelta(days=3), easter - timedelta(days=2),
              easter + timedelta(days=1), easter + timedelta(days=50)}
    assert moving <= set(andorra_holidays(year))
    assert not any(is_working_day(day) for day in moving)
    assert is_working_day(easter + timedelta(days=2))  # the Tuesday after Easter is worked


@pytest.mark.req("R74.2")
def test_R74_2_andorras_fixed_holidays_are_not_working_days() -> None:
    fixed = [(1, 1), (1, 6), (3, 14), (5, 1), (8, 15), (9, 8), (11, 1), (12, 8), (12, 25), (12, 26)]
    half_days = [(1, 5), (12, 24), (12, 31)]  # the government's afternoons off: not whole working days
    for year in (2026, 2027, 2028):
        for month, day in fixed + half_days:
            assert not is_working_day(date(year, month, day)), date(year, month, day)
    # 2026's list, as the government's calendar gives it (national holidays, not a parish's).
    assert sorted(andorra_holidays(2026)) == [
        date(2026, 1, 1), date(2026, 1, 5), date(2026, 1, 6), date(2026, 2, 16), date(2026, 3, 14),
        date(2026, 4, 2), date(2026, 4, 3), date(2026, 4, 6), date(2026, 5, 1), date(2026, 5, 25),
        date(2026, 8, 15), date(2026, 9, 8), date(2026, 11, 1), date(2026, 12, 8), date(2026, 12, 24),
        date(2026, 12, 25), date(2026, 12, 26), date(2026, 12, 31)]


@pytest.mark.req("R74.2")
def test_R74_2_a_change_noticed_before_easter_applies_after_three_whole_working_days() -> None:
    # Tuesday 31 March 2026: Wednesday is worked; Holy Thursday, Good Friday, the weekend and
    # Easter Monday are not; Tuesday 7 and Wednesday 8 April are: the change applies on Thursday 9.
    assert change_applies_from(date(2026, 3, 31)) == date(2026, 4, 9)
    # A Friday notice: Monday, Tuesday, Wednesday are worked; it applies on Thursday.
    assert change_applies_from(date(2026, 12, 11)) == date(2026, 12, 17)
    # Over Christmas: the 24th (afternoon off), 25th, 26th and 31st are not worked.
    assert change_applies_from(date(2026, 12, 22)) == date(2026, 12, 30)


@pytest.mark.parametrize(("text", "said"), [
    ("every day 25:00-02:00", "a day has the hours 00:00 to 24:00"), ("16:00-02:00", "names no day"),
    ("every day", "gives no hours"),
    ("funday 16:00-02:00", "'funday' in 'funday 16:00-02:00' is not a day"),
    ("mon 16:00-02:00 and later", "after the days come windows"),
    ("mon 10:00-14:00, 13:00-18:00", "two windows overlap on Monday at 13:00"),
    ("mon 16:00-04:00; tue 02:00-05:00", "two windows overlap on Tuesday at 02:00"),
])
def test_R74_1_hours_that_cannot_be_held_to_are_refused_with_what_to_write(text: str, said: str) -> None:
    with pytest.raises(HoursError, match=said):
        parse_schedule(text)


@pytest.mark.req("R74.2")
def test_the_first_hours_are_reported_at_once_and_a_change_applies_three_working_days_later(tmp_path: Path) -> None:
    _, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS)
    module.notify("every day 16:00-02:00")
    assert notices(journal)[-1]["applies_from"] == "2026-12-11" and "previous" not in notices(journal)[-1]
    # Started again with the same hours: nothing more is reported.
    _, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS + 3_600_000)
    assert module.notify("every day 16:00-02:00") is None
    assert len(notices(journal)) == 1
    # Changed on a Friday: it applies on Thursday, after three whole working days; the old hours
    # are in force until then.
    _, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS + 7_200_000)
    module.notify("Monday to Saturday 17:00-01:00")
    change = notices(journal)[-1]
    assert change == {"actor": {"name": "hall-server", "role": "system"}, "hours": "Monday to Saturday 17:00-01:00",
                      "applies_from": "2026-12-17", "previous": "every day 16:00-02:00"}
    assert module.state.in_force(date(2026, 12, 16)) == "every day 16:00-02:00"
    assert module.state.in_force(date(2026, 12, 17)) == "Monday to Saturday 17:00-01:00"
    assert journal.verify() == 3


@pytest.mark.req("R74.2")
def test_R74_2_a_change_noticed_before_easter_waits_for_andorras_working_days_in_the_hall(tmp_path: Path) -> None:
    tuesday_before_easter_ms = 1_774_951_200_000  # 2026-03-31 12:00 in Madrid
    core, module, journal = hall_at(tmp_path, tuesday_before_easter_ms)
    result(module.notify("every day 16:00-02:00"))
    result(module.notify("every day 12:00-02:00"))
    assert notices(journal)[-1]["applies_from"] == "2026-04-09"
    # Wednesday 1 is worked; Holy Thursday, Good Friday, the weekend and Easter Monday are not; Tuesday 7
    # and Wednesday 8 are: the old hours hold until Thursday 9.
    core.clock.advance(8 * 86400)  # Wednesday 8 April, noon
    assert module.hours_in_force(core.now_ms()) == "every day 16:00-02:00"
    assert module.closed_refusal(core.now_ms(), "opening the session") is not None
    core.clock.advance(86400)  # Thursday 9 April, noon
    assert module.hours_in_force(core.now_ms()) == "every day 12:00-02:00"
    assert module.closed_refusal(core.now_ms(), "opening the session") is None


@pytest.mark.req("R74.2")
def test_R74_2_the_regulators_approval_applies_a_change_at_once_and_its_objection_withdraws_it(
    tmp_path: Path,
) -> None:
    core, module, journal = hall_at(tmp_path, FRIDAY_NOON_MS)
    with pytest.raises(HoursRefused, match="no change of the opening hours awaits the regulator's answer"):
        result(module.record_decision(ADMIN, "approved", "CRAJ 2026/118"))
    result(module.notify("every day 16:00-02:00"))
    result(module.notify("mon-sat 17:00-01:00"))
    assert module.state.pending and module.hours_in_force(core.now_ms()) == "every day 16:00-02:00"
    with pytest.raises(HoursRefused, match="approved or objected, not 'maybe'"):
        result(module.record_decision(ADMIN, "maybe", "CRAJ 2026/118"))
    (approved,) = result(module.record_decision(ADMIN, "approved", "CRAJ 2026/118"))
    assert dict(approved.payload) == {"actor": {"name": "ines", "role": "administrator"}, "hours": "mon-sat 17:00-01:00",
                                      "notice": 3, "decision": "approved", "reference": "CRAJ 2026/118"}
    assert module.hours_in_force(core.now_ms()) == "mon-sat 17:00-01:00", "an approval applies the change at once"
    with pytest.raises(HoursRefused, match="is recorded already: approved"):
        result(module.record_decision(ADMIN, "objected", "CRAJ 2026/119"))
    # A later change, objected to: the hours approved before stay in force, past the delay too.
    result(module.notify("every day 12:00-04:00"))
    result(module.record_decision(ADMIN, "objected", "CRAJ 2026/131"))
    core.clock.advance(30 * 86400)
    assert module.hours_in_force(core.now_ms()) == "mon-sat 17:00-01:00"
    # Rebuilt from the journal, the hall holds the same hours.
    _, again, _ = hall_at(tmp_path, core.now_ms())
    assert again.state == module.state and journal.verify() == 6


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



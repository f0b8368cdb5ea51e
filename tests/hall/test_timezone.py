"""The hall's time zone is configuration (``[hall] timezone``): every date the hall writes
is its local day, not the UTC one.

The clock stands at 2026-05-28 20:26:40 UTC, which is already 2026-05-29 10:26:40 at
Kiritimati (UTC+14): a hall there dates its session, its games, its minutes and its
audit day the 29th.
"""

from __future__ import annotations

import random
import tomllib
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.audit.source import read_day
from hall_server.config import ConfigError, default_config_text, parse_config
from hall_server.hall.admission import DEFAULT_TIMEZONE, AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.catalog import FakeCardCatalog, StoreCardCatalog
from hall_server.hall.games import GameModuleError, GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.session import CHECKS, SessionError, SessionModule
from hall_server.reports.minutes import build as build_book
from hall_server.reports.publish import make_report
from hall_server.store import cards as card_store
from hall_server.store.database import open_database
from hall_server.web.demo_session import DemoSession
from hall_server.web.view import HallView
from protocol.audit.hall_day import AuditError
from protocol.balls import FakeBallSource
from protocol.settlement import PrizeRules
from protocol.strips import sample_strips
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.sql import Journal
from tests.hall.conftest import result

NOW_S = 1_780_000_000  # 2026-05-28T20:26:40Z
UTC_DAY, LOCAL_DAY = "2026-05-28", "2026-05-29"
ZONE = ZoneInfo("Pacific/Kiritimati")
RULES = PrizeRules(line_bp=1500, bingo_bp=5500)
LAYOUTS = sample_strips(10, random.Random(2026).randbytes).reshape(-1, 27)  # 60 cards
ADMIN = Actor("ada", Role.ADMINISTRATOR)
ROOM_CHIEF = Actor("rosa", Role.ROOM_CHIEF)


def test_the_time_zone_is_read_from_the_hall_table_and_defaults_to_the_halls() -> None:
    text = default_config_text("Sala", [])
    assert parse_config(tomllib.loads(text)).timezone == DEFAULT_TIMEZONE
    data = tomllib.loads(text)
    data["hall"]["timezone"] = "Europe/Madrid"
    assert parse_config(data).timezone == ZoneInfo("Europe/Madrid")
    del data["hall"]["timezone"]
    assert parse_config(data).timezone == ZoneInfo("Europe/Andorra")


@pytest.mark.parametrize("name", ["Mars/Olympus_Mons", "", "../../etc/passwd", "CET+1"])
def test_a_time_zone_that_is_not_one_is_a_clear_error_naming_the_key(name: str) -> None:
    data = tomllib.loads(default_config_text("Sala", []))
    data["hall"]["timezone"] = name
    with pytest.raises(ConfigError, match=r"hall\.timezone: .* is not a time zone; give its IANA name"):
        parse_config(data)


def _hall(tmp_path: Path, clock: Clock) -> tuple[CommandCore, HallView, Journal]:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    session = SessionModule(core, lambda now: dict.fromkeys(CHECKS), timezone=ZONE)
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, [], timezone=ZONE)
    cashier = CashierModule(core, ledger, admission, ["desk-1"], timezone=ZONE)
    order = random.Random(5)

    def balls(drawn):  # type: ignore[no-untyped-def]
        rest = [b for b in range(1, 91) if b not in set(drawn)]
        order.shuffle(rest)
        return FakeBallSource(rest)

    # In the store, which the audit export reads the paper cards' layouts from.
    card_store.add_card_set(engine, "classic", LAYOUTS, [str(k // 6 + 1) for k in range(len(LAYOUTS))], "generated")
    card_store.add_series(engine, "classic", 7, 100, 60)
    GamesModule(core, session, ledger, StoreCardCatalog(engine), balls, RULES, desks=cashier)
    view = HallView("Kiritimati hall")
    core.add_view(view)
    return core, view, journal


def test_a_hall_in_a_zone_ahead_of_utc_dates_its_session_games_minutes_and_audit_day_locally(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(NOW_S)
    core, view, journal = _hall(tmp_path, clock)
    demo = DemoSession(core, view, clock, [7], "desk-1", pace=1.0, cards_per_game=25, rng=random.Random(3),
                       timezone=ZONE)
    demo.startService()
    for _ in range(5_000):
        clock.advance(0.5)
        if view.games_played >= 1 and view.game is not None and view.game.state == "cards collected":
            break
    demo.stopService()
    records = list(journal.records())
    by_type = {r.type: r.payload for r in records}
    # The session record: the verification's date and the opening's.
    assert by_type["system_verified"]["date"] == LOCAL_DAY
    assert by_type["session_opened"]["date"] == LOCAL_DAY
    assert by_type["sale_opened"]["game_id"].startswith(f"{LOCAL_DAY}-s1-")
    # The minutes: the session's day, and its times in the hall's zone, which it names.
    book = build_book(records)
    report = make_report(book, "session", "1", "Kiritimati hall", ZONE)
    shown = repr(report)
    assert LOCAL_DAY in shown and "Pacific/Kiritimati" in shown
    assert f"{LOCAL_DAY} 10:2" in shown and f"{UTC_DAY} 20:2" not in shown
    assert book.month(LOCAL_DAY[:7]).sessions[0].date == LOCAL_DAY
    # The audit day is the local one; the UTC date holds no session of this hall.
    made = read_day(journal.engine, journal.key.public_key(), journal.head, LOCAL_DAY, RULES)
    assert made.games and made.day == LOCAL_DAY
    with pytest.raises(AuditError, match=f"no session of this hall is dated {UTC_DAY}"):
        read_day(journal.engine, journal.key.public_key(), journal.head, UTC_DAY, RULES)


def test_an_empty_session_date_is_today_in_the_halls_zone_and_a_malformed_one_is_refused(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(NOW_S)
    core, _, journal = _hall(tmp_path, clock)
    session = next(m for m in core.modules if isinstance(m, SessionModule))
    assert session.local_date(int(NOW_S * 1000)) == date.fromisoformat(LOCAL_DAY)
    with pytest.raises(SessionError, match="a session's date is YYYY-MM-DD .* not '29/05/2026'"):
        result(session.run_verification(ADMIN, "29/05/2026"))
    assert list(journal.records()) == []
    (verified,) = result(session.run_verification(ADMIN, ""))
    assert verified.payload["date"] == LOCAL_DAY


def test_the_megabingo_counts_its_notice_days_from_the_halls_day(tmp_path: Path) -> None:
    """Announced at 20:26 UTC on the 28th, which is the 29th in the hall: ten days' notice
    reaches the 8th of June, and the 7th is refused although it is ten UTC days away."""
    clock = Clock()
    clock.advance(NOW_S)
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    session = SessionModule(core, lambda now: dict.fromkeys(CHECKS), timezone=ZONE)
    ledger = LedgerModule(core)
    games = GamesModule(core, session, ledger, FakeCardCatalog([], {}), FakeBallSource,
                        PrizeRules(line_bp=1500, bingo_bp=5400, megabingo=True))
    with pytest.raises(GameModuleError, match=r"2026-06-07 is 9 day\(s\) after today \(2026-05-29\)"):
        result(games.announce_megabingo(ROOM_CHIEF, "2026-06-07", "21:00"))

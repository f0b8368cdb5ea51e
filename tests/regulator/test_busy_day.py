"""A busy hall's day reaches the regulator and is replayed card by card (R92.7, R95.3, R95.4).

Forty games of 2,000 paper cards each (80,000 cards in play) are played through the real hall
modules on a real SQLite journal, the cards of forty series of one printed set; at the session's
close the hall writes the day's audit export as a signed report, as the server does. Its
``scenario.json`` is several megabytes, more than one message of the feed: the real feed link
(AMP over mutual TLS on loopback) sends the records, then the report in parts, and a real receiver
(``ReceiverService``: its SQLite store, its own journal, stock ``openssl cms``) puts the parts
together, checks the signatures and replays the day card by card on the records it holds: every
game verified, no alert.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
import pytest_twisted
from cryptography.hazmat.primitives import serialization
from twisted.internet import defer, reactor, task

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.hall.catalog import StoreCardCatalog
from hall_server.reports.daily_files import DailyReporter
from hall_server.store import cards as card_store
from protocol.audit.report import report_name
from protocol.cards import fingerprints
from protocol.library import build_distinct_strips
from protocol.regulator_feed import PART_BYTES
from regulator.days import VERIFIED
from regulator.service import ReceiverService, ReceiverSettings
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedLinkService, ReceiverAddress
from server_kit.feed.reports import ReportOutbox
from server_kit.pki import init_authority, issue_certificate
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import (
    CHIEF,
    LIBRARY_CELLS,
    SET_CELLS as HALL_SET_CELLS,
    SELLERS,
    AuditHall,
    GamePlan,
    draw_to_the_end,
    store_cards,
    stored_journal,
)
from tests.hall.conftest import result
from tests.regulator.registration import register_in
from tests.reports.test_daily_report import issue_signer

pytestmark = [pytest.mark.integration]

HALL = "h1"
SENDER = f"hall:{HALL}"
DAY = "2026-12-01"
GAMES = 40
CARDS = 2_000
FACE_VALUE = 150
SERIES = tuple(range(2001, 2001 + GAMES))


def busy_hall(home: Path) -> AuditHall:
    """An :class:`AuditHall` under ``home`` whose card store also holds a printed set of 2,004 cards (334
    strips of six) and forty series printing 2,000 of them each."""
    engine = store_cards(home)
    cells = build_distinct_strips(334, fingerprints(np.concatenate([HALL_SET_CELLS, LIBRARY_CELLS])),
                                  random_bytes=random.Random(40).randbytes)
    card_store.add_card_set(engine, "busy", cells, [str(k // 6 + 1) for k in range(len(cells))], "test")
    for number in SERIES:
        card_store.add_series(engine, "busy", number, FACE_VALUE, CARDS)
    return AuditHall(stored_journal(home, engine, POT_RULES), new_clock(), POT_RULES, StoreCardCatalog(engine))


def play_busy_game(hall: AuditHall, series: int, seed: int, last: bool) -> str:
    """One game of ``series``: its 2,000 cards sold by two sellers in four ranges, drawn to the bingo."""
    result(hall.games.announce_sale(SELLERS[0], series))
    game = hall.games.current
    for k, first in enumerate(range(1, CARDS + 1, CARDS // 4)):
        result(hall.games.sell_cards(SELLERS[k % 2], series, first, first + CARDS // 4 - 1))
    if last:
        result(hall.games.announce_last_game(CHIEF))
    result(hall.games.close_sale(CHIEF))
    hall.balls.script = random.Random(seed).sample(range(1, 91), 90)
    draw_to_the_end(hall, GamePlan(seed=seed))
    return str(game.game_id)


@pytest.fixture(scope="module")
def busy_day() -> Iterator[tuple[Path, AuditHall, list[str]]]:
    home = fast_folder()
    pki_dir = home / "pki"
    init_authority(pki_dir, "Acme Bingo")
    issue_certificate(pki_dir, "server", HALL)
    issue_certificate(pki_dir, "regulator", "regulator")
    issue_signer(pki_dir, "h1-reports", home)
    hall = busy_hall(home)
    reporter = DailyReporter(hall.journal, home, "Busy hall", DEFAULT_TIMEZONE, defer.maybeDeferred, POT_RULES)
    hall.core.observers.append(reporter.record_committed)
    hall.prepare()
    hall.open_day(DAY)
    games = [play_busy_game(hall, series, seed, seed == GAMES) for seed, series in enumerate(SERIES, start=1)]
    hall.close_day()
    assert [folder.name for folder in reporter.audits] == [report_name(DAY)]
    yield home, hall, games
    shutil.rmtree(home, ignore_errors=True)


async def until(predicate: Any, what: str, seconds: float) -> None:
    for _ in range(int(seconds / 0.1)):
        if predicate():
            return
        await task.deferLater(reactor, 0.1, lambda: None)
    raise AssertionError(f"waited {seconds} s for {what}")


@pytest.mark.req("R92.7", "R95.3", "R95.4")
@pytest_twisted.ensureDeferred
async def test_a_day_of_40_games_of_2000_cards_reaches_the_receiver_in_parts_and_is_replayed_card_by_card(
    busy_day: tuple[Path, AuditHall, list[str]], tmp_path: Path
) -> None:
    home, hall, games = busy_day
    export = home / "reports" / report_name(DAY)
    scenario = json.loads((export / "scenario.json").read_bytes())
    (session,) = scenario["sessions"]
    assert [len(game["cards"]) for game in session["games"]] == [CARDS] * GAMES
    framed = sum(len(p.name) + len(str(p.stat().st_size)) + 2 + p.stat().st_size
                 for p in export.iterdir() if not p.name.startswith("."))
    assert framed > PART_BYTES, framed  # more than one message of the feed: it goes in parts

    pki_dir = home / "pki"
    regulator_home = tmp_path / "regulator"
    key = hall.journal.key
    register_in(regulator_home, SENDER, key, "h1-reports")
    service = ReceiverService(reactor, ReceiverSettings(regulator_home, pki_dir, "regulator", 0, "127.0.0.1"))
    service.startService()
    await service.listening
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    link = FeedLinkService(reactor, FeedCursor(hall.journal, SENDER, pem),
                           ReceiverAddress("127.0.0.1", service.port.getHost().port, pki_dir, HALL, "localhost"),
                           ReportOutbox(home / "reports", SENDER))
    link.startService()
    try:
        days = service.receiver.days
        await until(lambda: days.verdicts(), "the day's replay at the receiver", 240)
        (verdict,) = days.verdicts()
        assert (verdict.sender, verdict.day, verdict.verdict) == (SENDER, DAY, VERIFIED), verdict
        assert list(verdict.games) == games and len(games) == GAMES
        assert [r.seq for r in service.store.records(SENDER)] == [r.seq for r in hall.records()]
        assert service.store.alerts() == []
        received = {r.name: r.verified for r in service.inbox.received()}
        assert received[report_name(DAY)] is True, received
    finally:
        await link.stopService()
        await service.stopService()

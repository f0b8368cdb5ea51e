"""``bingo hall serve --demo``: the scripted session plays whole games through the
hall's commands, on a task.Clock, and the console's picture follows every record."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.catalog import FakeCardCatalog
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.session import CHECKS, SessionModule
from hall_server.store.database import open_database
from hall_server.web.demo_session import DemoSession
from hall_server.web.view import HallView
from protocol.balls import FakeBallSource
from protocol.settlement import PrizeRules
from protocol.sale import Series
from protocol.strips import sample_strips
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal

LAYOUTS = sample_strips(10, random.Random(2026).randbytes).reshape(-1, 27)  # 60 cards


def build(tmp_path: Path, clock: Clock) -> tuple[CommandCore, HallView, Journal, LedgerModule]:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    session = SessionModule(core, lambda now: dict.fromkeys(CHECKS))
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, [])
    cashier = CashierModule(core, ledger, admission, ["desk-1"])
    order = random.Random(5)

    def balls(drawn):  # a shuffled chamber without the balls already drawn
        rest = [b for b in range(1, 91) if b not in set(drawn)]
        order.shuffle(rest)
        return FakeBallSource(rest)

    catalog = FakeCardCatalog([Series(7, "classic", 100, 60), Series(8, "classic", 100, 60)], {"classic": LAYOUTS})
    GamesModule(core, session, ledger, catalog, balls, PrizeRules(line_bp=1500, bingo_bp=5500), desks=cashier)
    view = HallView("Demo")
    core.add_view(view)
    return core, view, journal, ledger


@pytest.mark.req("R84.2", "R77.1", "R85", "R85.11", "R78")
def test_the_demo_plays_whole_games_with_claims_and_payments(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_780_000_000)
    core, view, journal, ledger = build(tmp_path, clock)
    pushed = []
    core.observers.append(pushed.append)
    demo = DemoSession(core, view, clock, [7, 8], "desk-1", pace=1.0, cards_per_game=25, rng=random.Random(3))
    demo.startService()
    for _ in range(5_000):
        clock.advance(0.5)
        if view.games_played >= 3 and view.game is not None and view.game.state == "cards collected":
            break
    demo.stopService()
    assert view.session["open"] and view.games_played >= 3
    types = [record.type for record in journal.records()]
    for expected in ("system_verified", "balls_counted", "session_opened", "sale_opened", "paper_cards_sold",
                     "sale_closed", "ball_drawn", "prize_won", "prize_paid", "game_closed", "cards_collected"):
        assert expected in types, expected
    paid = [r.payload["prize"] for r in journal.records() if r.type == "prize_paid"]
    assert paid.count("bingo") >= 3 and paid.count("line") >= 3
    assert [r.seq for r in pushed] == list(range(1, len(types) + 1))  # every record announced, in order
    assert ledger.ledger.total() == 0
    assert journal.verify() == len(types)
    # The picture rebuilt from the journal is the live one.
    _, rebuilt, _, _ = build_again(tmp_path, clock, journal)
    assert rebuilt.console() == view.console()


def build_again(tmp_path: Path, clock: Clock, journal: Journal):
    core = CommandCore(journal, clock, run_inline)
    view = HallView("Demo")
    core.add_view(view)
    core.recover()
    return core, view, journal, None


def test_stopping_the_demo_stops_its_commands(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_780_000_000)
    core, view, journal, _ = build(tmp_path, clock)
    demo = DemoSession(core, view, clock, [7], "desk-1", pace=1.0, cards_per_game=25, rng=random.Random(3))
    demo.startService()
    clock.advance(3)
    demo.stopService()
    count = sum(1 for _ in journal.records())
    clock.advance(1_000)
    assert sum(1 for _ in journal.records()) == count and not clock.getDelayedCalls()


def test_the_demo_sells_a_series_to_its_last_card_and_moves_on_to_the_next(tmp_path: Path) -> None:
    """The demo stalled when a game opened on a series with fewer cards left than it
    tried to sell: every sale was refused, the empty sale could not close, and nothing
    happened again.  Now it sells card by card to the series' last card, calls off a
    game with nothing sold, and opens the next series."""
    clock = Clock()
    clock.advance(1_780_000_000)
    core, view, journal, ledger = build(tmp_path, clock)
    # 25 cards a game on 60-card series: game 3 finds 10 cards of series 7 left.
    demo = DemoSession(core, view, clock, [7, 8], "desk-1", pace=1.0, cards_per_game=25, rng=random.Random(3))
    demo.startService()
    for _ in range(20_000):
        clock.advance(0.5)
        sold = [r.payload for r in journal.records() if r.type == "paper_cards_sold"]
        if any(p["series"] == 8 for p in sold) and view.game is not None and view.game.state == "cards collected":
            break
    demo.stopService()
    sold = [r.payload for r in journal.records() if r.type == "paper_cards_sold"]
    assert max(p["last"] for p in sold if p["series"] == 7) == 60  # series 7 sold to its last card
    assert any(p["series"] == 8 for p in sold)  # then the demo went on with series 8
    assert ledger.ledger.total() == 0

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
from hall_server.hall.catalog import CardCatalog, FakeCardCatalog, StoreCardCatalog
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.session import CHECKS, SessionModule
from hall_server.store import cards as card_store
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


def build(tmp_path: Path, clock: Clock, on_store: bool = False) -> tuple[CommandCore, HallView, Journal, LedgerModule]:
    """The hall's modules on a test clock; ``on_store``: the series registered in the database (7, 60 cards)."""
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

    catalog: CardCatalog
    if on_store:
        card_store.add_card_set(engine, "classic", LAYOUTS, [str(k // 6 + 1) for k in range(len(LAYOUTS))], "test")
        card_store.add_series(engine, "classic", 7, 100, 60)
        catalog = StoreCardCatalog(engine)
    else:
        catalog = FakeCardCatalog([Series(7, "classic", 100, 60), Series(8, "classic", 100, 60)], {"classic": LAYOUTS})
    games = GamesModule(core, session, ledger, catalog, balls, PrizeRules(line_bp=1500, bingo_bp=5500), desks=cashier)
    view = HallView("Demo")
    core.add_view(view)
    view.cashier = cashier  # type: ignore[attr-defined]  # for the test of the top-up
    view.games = games  # type: ignore[attr-defined]  # for the test of the series registered
    return core, view, journal, ledger


@pytest.mark.req("R84.2", "R77.1", "R85", "R85.11", "R78", "R85.6")
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
    # Each line and bingo found waited for other cards, and the caller closed it (R85.6).
    closed = [r.payload for r in journal.records() if r.type == "prize_closed"]
    assert len(closed) >= 6 and {c["closed_by"] for c in closed} == {"demo-caller"}
    assert sum("bingo" in c["patterns"] for c in closed) >= 3
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


def play_until_sold(demo: DemoSession, clock: Clock, view: HallView, journal: Journal, *, series: int,
                    steps: int) -> list[dict]:
    """Run the demo until a game that sold cards of ``series`` has its cards collected (at most ``steps``
    half seconds); the payloads of every paper sale."""
    demo.startService()
    for _ in range(steps):
        clock.advance(0.5)
        sold = [r.payload for r in journal.records() if r.type == "paper_cards_sold"]
        if any(p["series"] == series for p in sold) and view.game is not None and view.game.state == "cards collected":
            break
    demo.stopService()
    return [r.payload for r in journal.records() if r.type == "paper_cards_sold"]


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
    sold = play_until_sold(demo, clock, view, journal, series=8, steps=20_000)
    assert max(p["last"] for p in sold if p["series"] == 7) == 60  # series 7 sold to its last card
    assert any(p["series"] == 8 for p in sold)  # then the demo went on with series 8
    assert ledger.ledger.total() == 0


@pytest.mark.req("R82.1", "R82.4")
def test_when_every_series_is_sold_out_the_demo_registers_the_next_and_plays_on(tmp_path: Path) -> None:
    """A demo hall left running stopped playing after its series were sold (two series of 600 cards, 120 a
    game: ten games): every sale was refused and nothing happened again.  Now the demo's staff register the
    next series, as ``bingo cards add-series`` does, and the games go on; the series is in the database."""
    clock = Clock()
    clock.advance(1_780_000_000)
    core, view, journal, ledger = build(tmp_path, clock, on_store=True)
    games = view.games  # type: ignore[attr-defined]
    catalog = games.catalog

    def new_series() -> int | None:
        added = catalog.register_next(games.last_sold)
        return None if added is None else added.number

    assert new_series() is None  # series 7 has cards left: nothing registered
    demo = DemoSession(core, view, clock, [7], "desk-1", pace=1.0, cards_per_game=25, rng=random.Random(3),
                       new_series=new_series)
    sold = play_until_sold(demo, clock, view, journal, series=9, steps=40_000)
    assert {p["series"] for p in sold} == {7, 8, 9}
    assert max(p["last"] for p in sold if p["series"] == 8) == 60  # each sold to its last card before the next
    registered = {s.number: s for s in card_store.list_sets(catalog.engine)[0].series}
    assert sorted(registered) == [7, 8, 9] and {(s.face_value_cents, s.card_count) for s in registered.values()} == {
        (100, 60)}
    assert ledger.ledger.total() == 0


def test_a_series_registered_while_the_hall_runs_is_read_when_a_game_asks_for_it(tmp_path: Path) -> None:
    """``bingo cards add-series`` writes to the database of a running hall: the sale on it opens without a
    restart (the catalog reads the series again when asked for one it does not hold)."""
    clock = Clock()
    clock.advance(1_780_000_000)
    _, _, _, _ = build(tmp_path, clock, on_store=True)
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    catalog = StoreCardCatalog(engine)
    card_store.add_series(engine, "classic", 12, 250, 30)
    assert catalog.series(12) == Series(12, "classic", 250, 30)
    with pytest.raises(Exception, match="there is no series 13; register it before selling it"):
        catalog.series(13)


def test_a_demo_player_running_low_loads_credit_again_at_the_desk_between_games(tmp_path: Path) -> None:
    """The demo's terminal players played for an hour and ran out of credit, so the terminals
    stopped buying: a demo player under 50 EUR loads 200 EUR at the desk, journaled, before a game."""
    from hall_server.web.demo_session import (ADMIN, CASHIER, DEMO_BANNED_LIST, DOOR, PLAYER_CREDIT_CENTS,
                                              TOP_UP_BELOW_CENTS)

    clock = Clock()
    clock.advance(1_780_000_000)
    core, view, journal, _ = build(tmp_path, clock)
    cashier = view.cashier  # type: ignore[attr-defined]
    demo = DemoSession(core, view, clock, [7], "desk-1", pace=1.0, rng=random.Random(3), balance=cashier.balance)
    done = demo.open_session()
    for _ in range(10):
        clock.advance(1)
    assert done.called
    run_inline_result(demo.command(ADMIN, "import_banned_list", content=DEMO_BANNED_LIST, source="demo.csv"))
    admitted = run_inline_result(demo.command(DOOR, "admit_visitor", name="Demo player 1", document="DEMO00000001", birth_date="1980-01-01"))
    opened = run_inline_result(demo.command(CASHIER, "open_player_account", visitor=admitted[0].payload["number"],
                                            medium="ticket", pin="2468"))
    account = opened[0].payload["account"]
    run_inline_result(demo.command(CASHIER, "load_credit", account=account, amount_cents=TOP_UP_BELOW_CENTS - 1,
                                   desk="desk-1"))
    demo.accounts.append(account)
    demo.top_up()
    assert cashier.balance(account) == TOP_UP_BELOW_CENTS - 1 + PLAYER_CREDIT_CENTS
    demo.top_up()  # enough now: nothing more
    loads = [r.payload["amount"] for r in journal.records() if r.type == "credit_loaded"]
    assert loads == [TOP_UP_BELOW_CENTS - 1, PLAYER_CREDIT_CENTS]
    assert journal.verify() == sum(1 for _ in journal.records())


def run_inline_result(deferred):  # type: ignore[no-untyped-def]
    """The result of a Deferred that has already fired (the core runs inline on the test's clock)."""
    results: list = []
    deferred.addBoth(results.append)
    assert results, "the command did not finish"
    if hasattr(results[0], "raiseException"):
        results[0].raiseException()
    return results[0]


def test_N2_the_demo_pauses_while_the_storage_is_unavailable_and_goes_on_where_it_was(tmp_path: Path) -> None:
    from server_kit.db.faults import StorageUnavailable
    from server_kit.storage import StorageWatch

    clock = Clock()
    clock.advance(1_780_000_000)
    core, view, journal, _ = build(tmp_path, clock)
    demo = DemoSession(core, view, clock, [7, 8], "desk-1", pace=1.0, cards_per_game=25, rng=random.Random(3))
    down = [True]
    real_probe = journal.probe

    def probe(unconfirmed):  # type: ignore[no-untyped-def]
        if down[0]:
            raise StorageUnavailable("disk full", "the database file x", "the disk holding it is full")
        return real_probe(unconfirmed)

    watch = StorageWatch(core, clock, run_inline, probe)
    watch.startService()
    demo.startService()
    while view.game is None or view.game.state != "selling":
        clock.advance(0.5)
    real_commit = journal.commit

    def full(records, extra=None):  # type: ignore[no-untyped-def]
        raise StorageUnavailable("disk full", "the database file x", "the disk holding it is full")

    journal.commit = full  # type: ignore[method-assign]
    for _ in range(20):
        clock.advance(0.5)
        if demo.paused:
            break
    assert demo.paused and core.storage_fault is not None
    held = journal.last
    for _ in range(60):  # a minute of the outage: the demo waits, nothing is written
        clock.advance(1.0)
    assert demo.paused and journal.last == held
    journal.commit = real_commit  # type: ignore[method-assign]
    down[0] = False
    for _ in range(400):
        clock.advance(0.5)
        if view.games_played >= 1 and view.game is not None and view.game.state == "cards collected":
            break
    demo.stopService()
    watch.stopService()
    assert not demo.paused and view.games_played >= 1
    assert journal.verify() == journal.last.seq

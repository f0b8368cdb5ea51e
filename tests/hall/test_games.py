"""The hall's traditional game on a real journal (R82.4-6, R85, R86, R87-R91, R93.15, R98)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

from hall_server.hall.admission import AdmissionModule, StaffIdentity
from hall_server.hall.cashier import CashierError, CashierModule
from hall_server.hall.catalog import CatalogError, FakeCardCatalog, StoreCardCatalog
from hall_server.hall.games import GameModuleError, GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.session import SessionModule
from hall_server.store.cards import add_card_set, add_series
from hall_server.store.database import open_database
from protocol.balls import FakeBallSource
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.ledger import Overdraft, Posting
from protocol.settlement import PayoutFloorError, PrizeRules
from protocol.sale import Series
from protocol.strips import sample_strips
from server_kit.core import Actor, CommandCore, NotAllowed, run_inline
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_session import ADMIN, ALL_BALLS, CHIEF, open_session, verify_passed

SELLER = Actor("ana", Role.SELLER_CALLER)
SELLER_2 = Actor("ben", Role.SELLER_CALLER)
TABLE = Actor("teo", Role.TABLE_CHIEF)
CASHIER = Actor("eva", Role.CASHIER)

CLASSIC = sample_strips(10, random.Random(2026).randbytes).reshape(-1, 27)  # 60 cards
OTHER = sample_strips(2, random.Random(7).randbytes).reshape(-1, 27)
CATALOG = FakeCardCatalog(
    [
        Series(7, "classic", 100, 60),
        Series(8, "classic", 100, 60),
        Series(9, "classic", 200, 60),
        Series(11, "other", 100, 12),
    ],
    {"classic": CLASSIC, "other": OTHER},
)
RULES = PrizeRules(line_bp=1500, bingo_bp=5500)
POT_RULES = PrizeRules(line_bp=1500, bingo_bp=4100, superbingo_bp=300, megabingo=True, jackpot=True)


class ScriptedBalls:
    """A ball-source factory over one script: the balls not drawn yet, in script order.

    ``reads_balls``: the balls stand for a blower's, read and announced, so a misread
    one may be corrected (R85.5); otherwise for the software generator's.
    """

    def __init__(self, script: Sequence[int] = (), reads_balls: bool = False) -> None:
        self.script = list(script) or random.Random(90).sample(range(1, 91), 90)
        self.reads_balls = reads_balls
        self.made: list[tuple[int, ...]] = []

    def __call__(self, drawn: Sequence[int]) -> FakeBallSource:
        self.made.append(tuple(drawn))
        taken = set(drawn)
        return FakeBallSource([b for b in self.script if b not in taken], reads_balls=self.reads_balls)

    def put_first(self, balls: Sequence[int]) -> None:
        """Draw ``balls`` first, then the rest in their order."""
        front = list(dict.fromkeys(balls))
        self.script = front + [b for b in self.script if b not in front]


class Hall:
    """A core on the journal with the session, ledger, cashier and game modules.

    The cashier's desks are ``desk1`` and ``safe`` (a desk funded by the operator for big prizes).
    """

    def __init__(
        self, journal: Journal, clock: Any, rules: PrizeRules = RULES, balls: ScriptedBalls | None = None,
        staff: Sequence[StaffIdentity] = (),
    ) -> None:
        self.journal = journal
        self.clock = clock
        self.rules = rules
        self.core = CommandCore(journal, clock, run_inline)
        self.session = SessionModule(self.core)
        self.ledger = LedgerModule(self.core)
        self.balls = balls or ScriptedBalls()
        self.staff = tuple(staff)
        self.admission = AdmissionModule(self.core, list(staff))
        self.cashier = CashierModule(self.core, self.ledger, self.admission, ["desk1", "safe"])
        self.games = GamesModule(self.core, self.session, self.ledger, CATALOG, self.balls, rules, desks=self.cashier)

    def reopened(self) -> "Hall":
        """A fresh core and modules over the same journal, as after a restart."""
        again = Hall(self.journal, self.clock, self.rules, ScriptedBalls(self.balls.script, self.balls.reads_balls),
                     self.staff)
        again.core.recover()
        return again

    def records(self) -> list[Record]:
        return list(self.journal.records())

    def balance(self, account: str) -> int:
        return self.ledger.balance(account)

    @property
    def game(self):  # type: ignore[no-untyped-def]
        return self.games.current

    def draw(self) -> Record:
        (record,) = result(self.games.draw_ball(SELLER))
        return record

    def claim(self, label: str) -> list[Record]:
        series, number = label.split("-")
        return result(self.games.verify_claim(TABLE, int(series), int(number)))

    def draw_until(self, pattern: str, close: bool = True) -> Record:
        """Draw until a ball completes ``pattern`` on some card; verify those cards, then
        the caller closes the prize (R85.6) unless ``close`` is false."""
        while True:
            record = self.draw()
            if record.payload[f"completed_{pattern}"]:
                for label in record.payload[f"completed_{pattern}"]:
                    self.claim(label)
                if close:
                    self.close_prize()
                return record

    def close_prize(self) -> list[Record]:
        return result(self.games.close_prize(SELLER))


def opened_hall(journal: Journal, clock: Any, **kwargs: Any) -> Hall:
    """A hall with its session open and cash desk ``desk1`` open without a float."""
    hall = Hall(journal, clock, **kwargs)
    open_session(hall.session)
    result(hall.cashier.open_desk(CASHIER, "desk1", 0))
    return hall


def hand_in(hall: Hall, desk: str = "desk1") -> None:
    """Every seller hands in the takings the drawer may give to ``desk``."""
    for seller in ("ana", "ben"):
        drawer = f"cash:{seller}"
        free = hall.balance(drawer) - hall.cashier.drawer_hold(drawer)[0]
        if free > 0:
            result(hall.cashier.hand_in_takings(CASHIER, seller, desk, free))


def pay(hall: Hall, desk: str = "desk1") -> list[Record]:
    """The sellers hand in their takings, then ``desk`` pays the settled prizes."""
    hand_in(hall, desk)
    return result(hall.games.pay_prizes(CASHIER, desk))


def sell(hall: Hall, series: int, first: int, last: int, seller: Actor = SELLER) -> list[Record]:
    return result(hall.games.sell_cards(seller, series, first, last))


def cells_of(label: str) -> np.ndarray:
    series, number = (int(x) for x in label.split("-"))
    card_set = CLASSIC if series in (7, 8, 9) else OTHER
    return card_set[number - 1]


def brute_completions(sold: Sequence[str], drawn: Sequence[int]) -> tuple[list[str], list[str]]:
    """The cards whose row / whole card the last ball of ``drawn`` completes, by hand."""
    before, now = set(drawn[:-1]), set(drawn)
    lines, bingos = [], []
    for label in sold:
        rows = cells_of(label).reshape(3, 9)
        numbers = [set(int(n) for n in row if n) for row in rows]
        if any(r <= now and not r <= before for r in numbers):
            lines.append(label)
        if set().union(*numbers) <= now and not set().union(*numbers) <= before:
            bingos.append(label)
    return lines, bingos


def unchanged(hall: Hall, command: Any, error: type[Exception], match: str) -> None:
    """``command()`` is refused with ``error`` whose message matches, and writes nothing."""
    before = len(hall.records())
    with pytest.raises(error, match=match):
        result(command())
    assert len(hall.records()) == before


def draw_and_pay(hall: Hall) -> None:
    """After the sale's close: draw to the line and pay it, draw to the bingo, close, pay."""
    hall.draw_until("line")
    hall.draw()
    pay(hall)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    pay(hall)


def play_whole_game(hall: Hall) -> None:
    """Sale of series 7 cards 1-20 by two sellers, draw to the bingo, pay, close, collect."""
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 15)
    sell(hall, 7, 16, 20, SELLER_2)
    result(hall.games.close_sale(CHIEF))
    draw_and_pay(hall)
    result(hall.games.collect_cards(CHIEF))


# --- Configuration -------------------------------------------------------------------------


@pytest.mark.req("R88.1")
def test_a_configuration_below_the_70_percent_floor_is_refused_at_construction(core: CommandCore) -> None:
    session, ledger = SessionModule(core), LedgerModule(core)
    with pytest.raises(PayoutFloorError, match="at least 7000"):
        GamesModule(core, session, ledger, CATALOG, ScriptedBalls(), PrizeRules(line_bp=1500, bingo_bp=5499))


def test_the_store_catalog_reads_the_registered_sets_and_series(tmp_path: Path) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'cards.sqlite3'}")
    add_card_set(engine, "classic", CLASSIC, [f"S{i // 6 + 1}" for i in range(len(CLASSIC))], "test")
    add_series(engine, "classic", 7, 150, 30)
    catalog = StoreCardCatalog(engine)
    assert catalog.series(7) == Series(7, "classic", 150, 30, 0)
    assert (catalog.layouts("classic") == CLASSIC).all()
    with pytest.raises(CatalogError, match="there is no series 8"):
        catalog.series(8)
    add_series(engine, "classic", 8, 150, None)
    catalog.reload()
    assert catalog.series(8).card_count == 60


# --- A whole game ----------------------------------------------------------------------------


@pytest.mark.req("R85", "R82.5", "R87.a", "R87.b", "R88.4-5", "R98", "R78")
def test_a_whole_game_sells_draws_verifies_pays_and_closes(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    assert opened.type == "sale_opened"
    assert (opened.payload["series"], opened.payload["first_card"], opened.payload["price_cents"]) == (7, 1, 100)
    game_id = opened.payload["game_id"]
    assert game_id == "2026-12-01-s1-g1"

    records = sell(hall, 7, 1, 15)
    assert [r.type for r in records] == ["paper_cards_sold", "posting"]  # one record for the range (R83.4)
    assert records[0].payload["seller"] == "ana" and records[0].payload["amount_cents"] == 1500
    assert (records[0].payload["first"], records[0].payload["last"], records[0].payload["price_cents"]) == (1, 15, 100)
    sell(hall, 7, 16, 20, SELLER_2)
    assert hall.balance("cash:ana") == 1500 and hall.balance("cash:ben") == 500
    assert hall.balance(f"stakes:{game_id}") == 2000

    (closed,) = result(hall.games.close_sale(CHIEF))
    p = closed.payload
    assert (p["cards_sold"], p["collection_cents"], p["line_cents"], p["bingo_cents"]) == (20, 2000, 300, 1100)
    assert (p["house_cents"], p["tax_cents"], p["contributions"]) == (600, 200, {})

    sold = [f"7-{n}" for n in range(1, 21)]
    line = hall.draw_until("line", close=False)
    drawn = list(hall.game.machine.drawn)
    assert (line.payload["completed_line"], line.payload["completed_bingo"]) == brute_completions(sold, drawn)
    winners = sorted(line.payload["completed_line"])
    assert sorted(r.label for r in hall.game.machine.won["line"].cards) == winners
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "desk1"), GameModuleError, "once its prize is closed")
    unchanged(hall, lambda: hall.games.draw_ball(SELLER), DomainError, "Line! Another card?")
    hall.close_prize()
    paid = pay(hall)
    assert paid[0].type == "prize_paid" and paid[0].payload["prize"] == "line"
    share = 300 // len(winners)
    assert paid[0].payload["payments"] == [[w, share] for w in sorted(winners, key=lambda l: int(l.split("-")[1]))]
    assert hall.balance("carry:line") == 300 - share * len(winners)

    hall.draw_until("bingo")
    bingo_winners = sorted(r.label for r in hall.game.machine.won["bingo"].cards)
    unchanged(hall, lambda: hall.games.draw_ball(SELLER), DomainError, "cannot draw a ball once the bingo is won")
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "desk1"), GameModuleError, "once the game is closed")
    ended = result(hall.games.close_game(CHIEF))
    assert ended[0].type == "game_closed" and ended[0].payload["tax_cents"] == 200
    assert hall.balance("tax") == 200, "R98: 10% of the stakes, posted per game"
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "ben"), CashierError, "'ben' is not a cash desk")
    pay(hall)
    bingo_share = 1100 // len(bingo_winners)
    assert hall.balance("carry:bingo") == 1100 - bingo_share * len(bingo_winners)
    assert hall.balance(f"stakes:{game_id}") == 0, "every cent of the collection has left"
    assert hall.balance("house") == 600 - 200
    assert hall.balance("cash:ana") == hall.balance("cash:ben") == 0, "the sellers handed their takings in"
    assert hall.balance("cash:desk1") == 2000 - share * len(winners) - bingo_share * len(bingo_winners)
    assert hall.ledger.ledger.total() == 0
    result(hall.games.collect_cards(CHIEF))
    assert hall.session.state.ball_set_games == 1


def as_written_before_range_records(records: Sequence[Record]) -> list[tuple[int, str, dict[str, Any]]]:
    """``records`` as journals were written before a range sale was one record: a
    ``paper_cards_sold`` without ``price_cents``, then one ``card_sold`` per card."""
    old: list[tuple[int, str, dict[str, Any]]] = []
    for record in records:
        p = dict(record.payload)
        if record.type != "paper_cards_sold":
            old.append((record.time_ms, record.type, p))
            continue
        price = p.pop("price_cents")
        old.append((record.time_ms, record.type, p))
        for number in range(p["first"], p["last"] + 1):
            card = {"type": "card_sold", "game_id": p["game_id"], "series": p["series"], "card_number": number, "price_cents": price,
                    "stake_cents": price, "account": p["account"], "terminal_id": None, "actor": p["actor"]}
            old.append((record.time_ms, "card_sold", card))
    return old


@pytest.mark.req("R83.3-4", "R82.5")
def test_a_range_of_paper_cards_is_one_record_and_journals_of_one_record_per_card_still_load(
    journal: Journal, clock, tmp_path: Path
) -> None:
    from hall_server.web.view import HallView

    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sale = sell(hall, 7, 1, 15)
    assert [r.type for r in sale] == ["paper_cards_sold", "posting"]
    sell(hall, 7, 16, 20, SELLER_2)
    result(hall.games.close_sale(CHIEF))
    hall.draw_until("line")
    assert sum(r.type == "card_sold" for r in hall.records()) == 0

    older = Journal(open_database(f"sqlite:///{tmp_path / 'older.sqlite3'}"), journal.key, head=tmp_path / "older.head")
    for time_ms, type, payload in as_written_before_range_records(hall.records()):
        older.append(time_ms, [(type, payload)])
    assert sum(r.type == "card_sold" for r in older.records()) == 20
    pictures = []
    for source in (journal, older):
        again = Hall(source, clock, hall.rules, ScriptedBalls(hall.balls.script))
        view = HallView("Sala")
        again.core.add_view(view)
        again.core.recover()
        game = again.game
        assert sorted(game.machine.in_play) == sorted(hall.game.machine.in_play)
        assert game.machine.sales == hall.game.machine.sales  # each card, its stake and account
        assert game.machine.won.keys() == hall.game.machine.won.keys()
        assert again.balance("cash:ana") == 1500 and again.balance("cash:ben") == 500
        pictures.append(view.console()["game"])
    assert pictures[0] == pictures[1] and pictures[0]["cards_sold"] == 20 and pictures[0]["collection_cents"] == 2000


@pytest.mark.req("R82.4", "R82.5")
def test_the_next_sale_waits_for_the_collection_and_starts_after_the_last_card(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    play_whole_game(hall)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    assert opened.payload["first_card"] == 21 and opened.payload["game_id"].endswith("-g2")
    sell(hall, 7, 21, 30)
    carry_line = hall.balance("carry:line")
    (closed,) = result(hall.games.close_sale(CHIEF))
    # The second game spends the first game's carries (R88.5): 10 cards, a line of 150 plus the carry.
    assert closed.payload["carry_line_cents"] == carry_line
    assert closed.payload["line_cents"] == 150 + carry_line
    hall.draw_until("line")
    unchanged(hall, lambda: hall.games.announce_sale(SELLER, 8), GameModuleError, "still under way")
    hall.draw()
    pay(hall)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    unchanged(hall, lambda: hall.games.announce_sale(SELLER, 8), GameModuleError, "not yet paid")
    unchanged(hall, lambda: hall.games.collect_cards(CHIEF), GameModuleError, "pay the bingo")
    pay(hall)
    unchanged(hall, lambda: hall.games.announce_sale(SELLER, 8), GameModuleError,
              r"previous game's cards have not been collected.*R82\.4")
    result(hall.games.collect_cards(SELLER))
    unchanged(hall, lambda: hall.games.collect_cards(CHIEF), GameModuleError, "no game is under way")
    (third,) = result(hall.games.announce_sale(SELLER, 7))
    assert third.payload["first_card"] == 31


@pytest.mark.req("R82.4", "R82.5")
def test_a_sold_out_series_says_so_and_names_the_series_left_not_the_collection(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 11))
    sell(hall, 11, 1, 12)  # every card of series 11
    result(hall.games.close_sale(CHIEF))
    draw_and_pay(hall)
    result(hall.games.collect_cards(SELLER))
    unchanged(
        hall, lambda: hall.games.announce_sale(SELLER, 11), GameModuleError,
        r"^series 11 is sold out \(12 cards\); open the sale on another series: "
        r"7 \(60 cards left\), 8 \(60 cards left\), 9 \(60 cards left\)$",
    )


@pytest.mark.req("R82.5")
def test_paper_sales_follow_the_numbering_and_refusals_write_nothing(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, 1, 5), GameModuleError, "announce a sale first")
    result(hall.games.announce_sale(SELLER, 7))
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, 2, 5), DomainError, "the next card of series 7 is 1, not 2")
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, 5, 1), DomainError, "not 5 to 1")
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, 1, 61), DomainError, "up to card 60 in this game, not 61")
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 8, 1, 2), DomainError, "series 8 is not on sale")
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, True, 2), GameModuleError, "whole number")
    sell(hall, 7, 1, 5)
    # The same command again (a replay) is out of order now.
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, 1, 5), DomainError, "next card of series 7 is 6")
    unchanged(hall, lambda: hall.games.open_second_series(SELLER, 8), DomainError, "still has 55 card")
    result(hall.games.close_sale(CHIEF))
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 7, 6, 6), DomainError, "cannot sell a card before the first ball")
    unchanged(hall, lambda: hall.games.close_sale(CHIEF), DomainError, "cannot close the sale before the first ball")


@pytest.mark.req("R82.6")
def test_a_second_series_runs_from_card_1_to_the_card_before_the_first_series_started(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 40)
    result(hall.games.close_sale(CHIEF))
    hall.draw_until("line")
    hall.draw()
    pay(hall)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    pay(hall)
    result(hall.games.collect_cards(CHIEF))

    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    assert opened.payload["first_card"] == 41
    sell(hall, 7, 41, 60)
    unchanged(hall, lambda: hall.games.open_second_series(SELLER, 9), DomainError, "same face value")
    unchanged(hall, lambda: hall.games.open_second_series(SELLER, 11), DomainError, "must print the same cards")
    (second,) = result(hall.games.open_second_series(SELLER, 8))
    assert (second.payload["first"], second.payload["last"]) == (1, 40)
    unchanged(hall, lambda: hall.games.sell_cards(SELLER, 8, 1, 41), DomainError, "up to card 40")
    sell(hall, 8, 1, 40)
    unchanged(hall, lambda: hall.games.open_second_series(SELLER, 8), DomainError, "third would repeat")
    (closed,) = result(hall.games.close_sale(CHIEF))
    assert closed.payload["cards_sold"] == 60 and closed.payload["series"] == [[7, 60], [8, 40]]
    # No two cards of the game hold the same numbers.
    layouts = {tuple(cells_of(r.label)) for r in hall.game.refs}
    assert len(layouts) == 60


@pytest.mark.req("R80")
def test_staff_give_only_the_game_commands_of_their_role(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    unchanged(hall, lambda: hall.games.announce_sale(CASHIER, 7), NotAllowed, r"eva \(cashier\) may not announce sale")
    result(hall.games.announce_sale(SELLER, 7))
    unchanged(hall, lambda: hall.games.sell_cards(CHIEF, 7, 1, 2), NotAllowed, "may not sell cards")
    sell(hall, 7, 1, 10)
    unchanged(hall, lambda: hall.games.close_sale(SELLER), NotAllowed, "may not close sale")
    unchanged(hall, lambda: hall.games.announce_pots(SELLER, jackpot_threshold=40), NotAllowed, "announce pots")
    result(hall.games.close_sale(CHIEF))
    unchanged(hall, lambda: hall.games.draw_ball(TABLE), NotAllowed, "may not draw ball")
    record = hall.draw()
    unchanged(hall, lambda: hall.games.correct_ball(SELLER, record.payload["ball"], 1, "misread"), NotAllowed,
              "correct ball")
    unchanged(hall, lambda: hall.games.verify_claim(CASHIER, 7, 1), NotAllowed, "may not verify claim")
    unchanged(hall, lambda: hall.games.refuse_card(SELLER, 7, 1, "torn"), NotAllowed, "may not refuse card")
    unchanged(hall, lambda: hall.games.close_prize(TABLE), NotAllowed, "may not close prize")
    unchanged(hall, lambda: hall.games.pay_prizes(SELLER, "desk1"), NotAllowed, "may not pay prizes")
    unchanged(hall, lambda: hall.games.suspend_game(TABLE, "blower"), NotAllowed, "may not suspend game")
    unchanged(hall, lambda: hall.games.enter_ball(TABLE, 5), NotAllowed, "may not enter ball")


# --- The draw and the claims ---------------------------------------------------------------


@pytest.mark.req("R85.5", "R92.11-12", "R92.10")
def test_every_ball_record_names_the_cards_it_completes_as_a_brute_force_finds(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 60)
    result(hall.games.close_sale(CHIEF))
    sold = [f"7-{n}" for n in range(1, 61)]
    drawn: list[int] = []
    while True:
        record = hall.draw()
        drawn.append(record.payload["ball"])
        assert record.payload["ball_count"] == len(drawn)
        lines, bingos = brute_completions(sold, drawn)
        assert sorted(record.payload["completed_line"]) == sorted(lines)
        assert sorted(record.payload["completed_bingo"]) == sorted(bingos)
        if bingos:
            break
    assert drawn == hall.balls.script[: len(drawn)]


@pytest.mark.req("R85.6", "R85.11")
def test_a_claim_is_verified_by_series_and_number_and_a_rejection_is_journaled_with_its_reason(
    journal: Journal, clock
) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    unchanged(hall, lambda: hall.games.verify_claim(TABLE, 7, 1), DomainError, "cannot verify a claim while the sale is open")
    result(hall.games.close_sale(CHIEF))
    hall.draw()
    (rejected,) = hall.claim("7-3")
    assert rejected.type == "claim_rejected"
    assert rejected.payload["reason"] == "card 7-3 has not completed a line" and rejected.payload["ball_count"] == 1
    (unsold,) = hall.claim("7-45")
    assert unsold.payload["reason"] == "card 7-45 was not sold in this game"
    line = hall.draw_until("line")
    (winner, *_) = line.payload["completed_line"]
    (again,) = hall.claim(winner)
    assert again.type == "claim_rejected" and "has already won the line" in again.payload["reason"]
    won = [r for r in hall.records() if r.type == "prize_won"]
    assert {(r.payload["pattern"], r.payload["ball_count"]) for r in won} == {("line", line.payload["ball_count"])}
    # After the line is paid, a late claim for it is journaled as rejected.
    hall.draw()
    pay(hall)
    late = [label for label in (f"7-{n}" for n in range(1, 21)) if label not in line.payload["completed_line"]]
    (refused,) = hall.claim(late[0])
    assert refused.type == "claim_rejected"


def shared_line_script() -> tuple[list[int], tuple[str, str]]:
    """Balls on which two of cards 1-7 of series 7 complete a row on the same ball and no
    card of 1-7 completes one before (cards 1-6 are one strip: the pair includes card 7)."""
    cards = {n: CLASSIC[n - 1].reshape(3, 9) for n in range(1, 8)}
    rows = [(n, set(int(x) for x in row if x)) for n, card in cards.items() for row in card]
    for (a, row_a) in rows:
        for (b, row_b) in rows:
            common = row_a & row_b
            if a >= b or not common:
                continue
            last = min(common)
            before = (row_a | row_b) - {last}
            if any(row <= before for _, row in rows):
                continue
            return sorted(before) + [last], (f"7-{a}", f"7-{b}")
    raise AssertionError("no two rows share a number")


@pytest.mark.req("R87.a", "R88.2", "R88.4-5")
def test_cards_completing_the_line_on_the_same_ball_share_it_and_the_cent_left_carries(journal: Journal, clock) -> None:
    script, pair = shared_line_script()
    balls = ScriptedBalls()
    balls.put_first(script)
    hall = opened_hall(journal, clock, balls=balls)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 7)  # 700 cents: the line is 105, two winners get 52 each
    with pytest.raises(DomainError):
        sell(hall, 7, 1, 1)
    result(hall.games.close_sale(CHIEF))
    record = hall.draw_until("line")
    assert record.payload["ball_count"] == len(script)
    assert set(pair) <= set(record.payload["completed_line"])
    hall.draw()
    (paid, *postings) = pay(hall)
    winners = record.payload["completed_line"]
    share = 105 // len(winners)
    assert paid.payload["amount_cents"] == 105 and paid.payload["carry_cents"] == 105 - share * len(winners)
    assert [p.payload["reason"] for p in postings].count("prize:line") == len(winners)
    assert hall.balance("carry:line") == 105 - share * len(winners) > 0


# --- Failures (R86) -----------------------------------------------------------------------


@pytest.mark.req("R86.1-2", "R96.2")
def test_a_game_suspended_for_good_before_any_prize_refunds_every_stake_and_pot_share(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    game_id = opened.payload["game_id"]
    sell(hall, 7, 1, 10)
    sell(hall, 7, 11, 15, SELLER_2)
    result(hall.games.close_sale(CHIEF))
    assert hall.balance("pot:jackpot_accumulated") == 105 and hall.balance("pot:jackpot_reserve") == 45
    hall.draw()
    unchanged(hall, lambda: hall.games.resume_game(CHIEF), DomainError, "cannot resume the game while balls")
    result(hall.games.suspend_game(CHIEF, "blower pump stopped"))
    unchanged(hall, lambda: hall.games.draw_ball(SELLER), DomainError, "while the game is suspended")
    result(hall.games.resume_game(CHIEF))
    assert hall.game.machine.state == "drawing"
    result(hall.games.suspend_game(CHIEF, "blower pump stopped again"))
    unchanged(hall, lambda: hall.games.suspend_game_for_good(CHIEF, ""), GameModuleError, "say why")
    records = result(hall.games.suspend_game_for_good(CHIEF, "no spare pump"))
    assert [r.type for r in records[:2]] == ["game_suspended_for_good", "game_refunded"]
    refunds = [r for r in records if r.type == "posting" and r.payload["reason"] == "refund:game"]
    assert len(refunds) == 15 and {r.payload["reference"]["event_seq"] for r in refunds} == {records[1].seq}
    assert hall.balance("cash:ana") == 0 and hall.balance("cash:ben") == 0
    assert hall.balance(f"stakes:{game_id}") == 0
    assert hall.balance("pot:jackpot_accumulated") == hall.balance("pot:superbingo") == 0
    assert hall.balance("tax") == 0, "a game deemed not played owes no tax"
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "desk1"), GameModuleError, "refunded")
    result(hall.games.collect_cards(CHIEF))
    assert hall.session.state.ball_set_games == 1
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    assert opened.payload["first_card"] == 16, "the refunded cards were handed out: the series goes on after them"


@pytest.mark.req("R86.1-2")
def test_a_game_suspended_for_good_after_the_line_is_finished_by_hand(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    result(hall.games.close_sale(CHIEF))
    hall.draw_until("line")
    result(hall.games.suspend_game(Actor("hall-server", Role.SYSTEM), "generator fault"))
    records = result(hall.games.suspend_game_for_good(CHIEF, "generator cannot be restarted"))
    assert [r.type for r in records] == ["game_suspended_for_good", "manual_finish_started"]
    assert records[1].payload["authorised_by"] == "rui"
    unchanged(hall, lambda: hall.games.draw_ball(SELLER), DomainError, "being finished by hand")
    drawn = set(hall.game.machine.drawn)
    unchanged(hall, lambda: hall.games.enter_ball(CHIEF, next(iter(drawn))), DomainError, "already been drawn")
    for ball in [b for b in hall.balls.script if b not in drawn]:
        (entered,) = result(hall.games.enter_ball(CHIEF, ball))
        assert entered.payload["entered_by"] == "rui"
        for label in entered.payload["completed_bingo"]:
            hall.claim(label)
        if "bingo" in hall.game.machine.won:
            break
    unchanged(hall, lambda: hall.games.close_game(CHIEF), DomainError, "cannot close the game")
    (closed, finished, *postings) = result(hall.games.finish_game(CHIEF))
    assert closed.type == "prize_closed" and closed.payload["patterns"] == ["bingo"], "finishing closes the bingo"
    assert finished.type == "game_finished" and finished.payload["finished_by"] == "rui"
    pay(hall)
    assert hall.balance(f"stakes:{opened.payload['game_id']}") == 0 and hall.balance("tax") == 200
    result(hall.games.collect_cards(CHIEF))


# --- Pots ------------------------------------------------------------------------------------


def pot_game(hall: Hall, series: int = 7, cards: tuple[int, int] = (1, 20), **pots: Any) -> Record:
    (opened,) = result(hall.games.announce_sale(SELLER, series))
    sell(hall, series, *cards)
    if pots:
        result(hall.games.announce_pots(CHIEF, **pots))
    (closed, *_) = result(hall.games.close_sale(CHIEF))
    return closed


def finish(hall: Hall, desk: str = "desk1", identify: Sequence[str] = ()) -> list[Record]:
    """Draw and pay the line, draw to the bingo, close, pay; ``identify``: the paper cards of a winner of
    15,000 EUR or more, whose identity the cashier records before paying them (R75.6)."""
    hall.draw_until("line")
    hall.draw()
    pay(hall, desk)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    if identify:
        result(hall.games.identify_paper_winner(CASHIER, list(identify), "X1234567", "Joana Puig"))
    paid = pay(hall, desk)
    result(hall.games.collect_cards(CHIEF))
    return [r for r in paid if r.type == "prize_paid"]


@pytest.mark.req("R89", "R89.6", "R91", "R91.10")
def test_pot_contributions_are_set_aside_at_the_close_of_the_sale(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    closed = pot_game(hall)
    # 2000 cents of sales: superbingo 3%, megabingo 1%, jackpot 10% (70% accumulated, 30% reserve).
    assert closed.payload["contributions"] == {
        "pot:superbingo": 60, "pot:megabingo": 20, "pot:jackpot_accumulated": 140, "pot:jackpot_reserve": 60,
    }
    assert closed.payload["house_cents"] == 2000 - 300 - 820 - 60 - 20 - 200
    assert hall.balance("pot:superbingo") == 60 and hall.balance("pot:megabingo") == 20
    assert hall.ledger.ledger.total() == 0


@pytest.mark.req("R89")
def test_the_superbingo_is_paid_to_a_bingo_within_its_ball_limit(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    result(hall.games.contribute_to_pot(ADMIN, "superbingo", 1_000))
    pot_game(hall, superbingo_limit=90)
    fund_drawer(hall, "safe", 5_000)
    paid = finish(hall, desk="safe")
    superbingo = [r for r in paid if r.payload["prize"] == "superbingo"]
    assert len(superbingo) == 1 and superbingo[0].payload["amount_cents"] == 1_060
    assert hall.balance("pot:superbingo") == superbingo[0].payload["carry_cents"]


@pytest.mark.req("R89", "R89.5")
def test_pot_announcements_refuse_what_the_rules_forbid(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    result(hall.games.announce_sale(SELLER, 7))
    for pots, match in (
        ({"superbingo_limit": 41}, r"42 to 90 \(R89\), not 41"),
        ({"grand_superbingo_limit": 91}, "not 91"),
        ({"superbingo_limit": 50, "grand_superbingo_limit": 50}, "never in play in the same game"),
        ({"jackpot_threshold": 43}, "40, 41 or 42"),
        ({"megabingo": True}, "none is announced"),
    ):
        unchanged(hall, lambda: hall.games.announce_pots(CHIEF, **pots), GameModuleError, match)
    unchanged(hall, lambda: hall.games.contribute_to_pot(ADMIN, "megabingo", 100), GameModuleError, "not 'megabingo'")
    result(hall.games.contribute_to_pot(ADMIN, "superbingo", 200_000))
    unchanged(hall, lambda: hall.games.contribute_to_pot(ADMIN, "grand_superbingo", 100_001), DomainError,
              r"300001 cents today, above the 300000 a day \(R89\.5\)")
    result(hall.games.contribute_to_pot(ADMIN, "grand_superbingo", 100_000))
    assert hall.balance("house") == -300_000
    sell(hall, 7, 1, 5)
    result(hall.games.close_sale(CHIEF))
    unchanged(hall, lambda: hall.games.announce_pots(CHIEF, jackpot_threshold=40), GameModuleError, "while its sale is open")


def fund_drawer(hall: Hall, desk: str, cents: int) -> None:
    """Put the operator's cash in a desk's drawer, as the cashier does before paying big prizes."""
    if hall.cashier.desk(desk).open:
        result(hall.cashier.top_up_float(CASHIER, desk, cents))
    else:
        result(hall.cashier.open_desk(CASHIER, desk, cents))


def card_first(balls: ScriptedBalls, label: str) -> None:
    """Draw the numbers of card ``label`` first, row by row: its bingo falls on ball 15."""
    balls.put_first([int(n) for n in cells_of(label).reshape(3, 9).ravel() if n])


@pytest.mark.req("R89")
def test_grand_superbingo_is_funded_by_the_operator_capped_and_paid_within_its_limit(journal: Journal, clock) -> None:
    balls = ScriptedBalls()
    card_first(balls, "7-1")
    hall = opened_hall(journal, clock, rules=POT_RULES, balls=balls)
    result(hall.games.contribute_to_pot(CHIEF, "grand_superbingo", 250_000))
    hall.session.state.sessions[-1].date = "2026-12-02"  # another day: a fresh daily allowance
    unchanged(hall, lambda: hall.games.contribute_to_pot(CHIEF, "grand_superbingo", 150_001), DomainError,
              "above its 400000 cap")
    pot_game(hall, grand_superbingo_limit=42)
    fund_drawer(hall, "safe", 300_000)
    paid = finish(hall, desk="safe")
    grand = [r for r in paid if r.payload["prize"] == "grand_superbingo"]
    assert grand[0].payload["amount_cents"] == 250_000 and grand[0].payload["payments"] == [["7-1", 250_000]]
    assert grand[0].payload["ball_count"] == 15
    assert hall.balance("pot:grand_superbingo") == 0 and hall.ledger.ledger.total() == 0


@pytest.mark.req("R91", "R91.10")
def test_a_won_jackpot_pays_the_accumulated_amount_then_70_percent_of_the_reserve_moves_up(
    journal: Journal, clock
) -> None:
    balls = ScriptedBalls()
    card_first(balls, "7-1")
    hall = opened_hall(journal, clock, rules=POT_RULES, balls=balls)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 1_499_900))
    assert hall.balance("pot:jackpot_accumulated") == 1_499_900
    closed = pot_game(hall, jackpot_threshold=40)
    # The 70% share only fills the cap; the rest of the 10% goes to the reserve (R91).
    assert closed.payload["contributions"]["pot:jackpot_accumulated"] == 100
    assert closed.payload["contributions"]["pot:jackpot_reserve"] == 100
    fund_drawer(hall, "safe", 1_600_000)
    unchanged(hall, lambda: hall.games.pay_prizes(CASHIER, "safe"), GameModuleError, "no prize has been won")
    paid = finish(hall, desk="safe", identify=["7-1"])  # 15,011.20 EUR to one paper card (R75.6)
    (jackpot,) = [r for r in paid if r.payload["prize"] == "jackpot"]
    assert jackpot.payload["amount_cents"] == 1_500_000 and jackpot.payload["payments"] == [["7-1", 1_500_000]]
    assert hall.balance("pot:jackpot_accumulated") == 100 * 70 // 100
    assert hall.balance("pot:jackpot_reserve") == 100 - 100 * 70 // 100


@pytest.mark.req("R91")
def test_a_bingo_beyond_the_threshold_leaves_the_jackpot(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    pot_game(hall, jackpot_threshold=40)
    paid = finish(hall)
    bingo = [r for r in paid if r.payload["prize"] == "bingo"][0]
    assert bingo.payload["ball_count"] > 40
    assert [r.payload["prize"] for r in paid] == ["bingo"]
    assert hall.balance("pot:jackpot_accumulated") == 140


@pytest.mark.req("R90")
def test_a_megabingo_is_announced_ten_days_ahead_and_pays_its_whole_fund_on_that_day(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    pot_game(hall, cards=(1, 60))
    finish(hall)
    fund = hall.balance("pot:megabingo")
    assert fund == 60
    # The clock's today is 2026-05-28.
    unchanged(hall, lambda: hall.games.announce_megabingo(CHIEF, "2026-06-06", "21:00"), GameModuleError,
              "at least 10 days ahead")
    unchanged(hall, lambda: hall.games.announce_megabingo(CHIEF, "1 December", "21:00"), GameModuleError, "YYYY-MM-DD")
    (announced,) = result(hall.games.announce_megabingo(CHIEF, "2026-12-01", "21:00"))
    assert announced.payload["announced_on"] == "2026-05-28"
    assert announced.payload["amount_cents"] == announced.payload["fund_cents"] == 60  # the least it pays
    pot_game(hall, series=8, cards=(1, 30), megabingo=True)
    paid = finish(hall)
    megabingo = [r for r in paid if r.payload["prize"] == "megabingo"]
    assert megabingo[0].payload["amount_cents"] == 60 + 30
    assert hall.balance("pot:megabingo") == megabingo[0].payload["carry_cents"]
    assert hall.games.state.megabingo is None


@pytest.mark.req("R93.15", "R89")
def test_the_sessions_last_game_is_announced_and_takes_an_unwon_superbingo(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES)
    # A superbingo with the tightest limit: a bingo within 42 balls of 20 cards is most unlikely here.
    pot_game(hall, superbingo_limit=42)
    paid = finish(hall)
    bingo_ball = [r for r in paid if r.payload["prize"] == "bingo"][0].payload["ball_count"]
    assert bingo_ball > 42 and not [r for r in paid if r.payload["prize"] == "superbingo"]
    fund = hall.balance("pot:superbingo")
    (opened,) = result(hall.games.announce_sale(SELLER, 8))
    sell(hall, 8, 1, 20)
    (announced,) = result(hall.games.announce_last_game(CHIEF))
    assert announced.payload["game_id"] == opened.payload["game_id"]
    unchanged(hall, lambda: hall.games.announce_last_game(CHIEF), GameModuleError, "already announced")
    result(hall.games.close_sale(CHIEF))
    paid = finish(hall)
    last = [r for r in paid if r.payload["prize"] == "superbingo_last_game"]
    assert last and last[0].payload["amount_cents"] == fund + 60
    unchanged(hall, lambda: hall.games.announce_sale(SELLER, 8), GameModuleError, r"session's last game \(R93\.15\)")


# --- Recovery ----------------------------------------------------------------------------------


@pytest.mark.req("R96.4", "R86")
def test_a_restarted_hall_rebuilds_the_same_game_state_after_every_command(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock, rules=POT_RULES, balls=ScriptedBalls(reads_balls=True))  # a blower's balls

    def same() -> None:
        again = hall.reopened()
        assert again.games.snapshot() == hall.games.snapshot()
        assert again.ledger.ledger.balances() == hall.ledger.ledger.balances()

    steps = [
        lambda: hall.games.contribute_to_pot(ADMIN, "superbingo", 500),
        lambda: hall.games.announce_sale(SELLER, 7),
        lambda: hall.games.sell_cards(SELLER, 7, 1, 12),
        lambda: hall.games.sell_cards(SELLER_2, 7, 13, 20),
        lambda: hall.games.announce_pots(CHIEF, superbingo_limit=60, jackpot_threshold=41),
        lambda: hall.games.close_sale(CHIEF),
    ]
    for step in steps:
        result(step())
        same()
    while "line" not in hall.game.machine.won:
        record = hall.draw()
        same()
        for label in record.payload["completed_line"]:
            hall.claim(label)
            same()
    hall.close_prize()
    same()
    misread = hall.draw().payload["ball"]
    read_again = next(b for b in range(1, 91) if b not in hall.game.machine.drawn)
    result(hall.games.correct_ball(CHIEF, misread, read_again, "the reader read 69 as 96"))
    same()
    result(hall.games.correct_ball(TABLE, misread, read_again, "the ball on the rack reads 69"))
    same()
    hall.draw()
    pay(hall)
    same()
    result(hall.games.suspend_game(CHIEF, "reader fault"))
    same()
    result(hall.games.resume_game(CHIEF))
    same()
    hall.draw_until("bingo")
    same()
    for step in (
        lambda: hall.games.close_game(CHIEF),
        lambda: hall.games.pay_prizes(CASHIER, "desk1"),
        lambda: hall.games.collect_cards(CHIEF),
    ):
        result(step())
        same()


@pytest.mark.req("R92.10", "R96.4")
def test_after_a_restart_the_generator_is_rebuilt_from_the_journals_balls(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    result(hall.games.close_sale(CHIEF))
    for _ in range(5):
        hall.draw()
    again = hall.reopened()
    record = again.draw()
    assert again.balls.made == [tuple(hall.game.machine.drawn)]
    assert record.payload["ball_count"] == 6 and record.payload["ball"] not in hall.game.machine.drawn


def test_a_ball_whose_record_was_not_committed_was_never_drawn(journal: Journal, clock) -> None:
    """A failed commit leaves the source ahead of the journal; the next draw starts from the journal."""
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 20)
    result(hall.games.close_sale(CHIEF))
    hall.draw()
    commit = hall.journal.commit

    def failing(*args: Any) -> Any:
        raise OSError("disk full")

    hall.journal.commit = failing  # type: ignore[method-assign]
    with pytest.raises(OSError):
        result(hall.games.draw_ball(SELLER))
    hall.journal.commit = commit  # type: ignore[method-assign]
    assert len(hall.game.machine.drawn) == 1
    record = hall.draw()
    assert record.payload["ball_count"] == 2
    assert hall.balls.made[-1] == tuple(hall.game.machine.drawn[:1])


@pytest.mark.req("R82.5", "R88.4-5", "R93.15")
def test_the_next_session_numbers_its_games_afresh_and_keeps_the_series_and_the_carries(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 15)
    sell(hall, 7, 16, 20, SELLER_2)
    result(hall.games.announce_last_game(CHIEF))
    result(hall.games.close_sale(CHIEF))
    hall.draw_until("line")
    hall.draw()
    pay(hall)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    pay(hall)
    result(hall.games.collect_cards(CHIEF))
    carries = hall.balance("carry:line"), hall.balance("carry:bingo")
    result(hall.session.count_balls(CHIEF, "closing", list(range(1, 91)), ["a player"]))
    result(hall.session.sign_closing(ADMIN))
    result(hall.session.sign_closing(CHIEF))
    unchanged(hall, lambda: hall.games.announce_sale(SELLER, 7), DomainError, "the session is not open")
    verify_passed(hall.session, "2026-12-02")
    result(hall.session.count_balls(CHIEF, "opening", list(range(1, 91)), ["a player"]))
    result(hall.session.sign_opening(ADMIN))
    result(hall.session.sign_opening(CHIEF))
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    assert opened.payload["game_id"] == "2026-12-02-s2-g1" and opened.payload["first_card"] == 21
    sell(hall, 7, 21, 30)
    (closed,) = result(hall.games.close_sale(CHIEF))
    assert (closed.payload["carry_line_cents"], closed.payload["carry_bingo_cents"]) == carries
    assert [g.game_id for g in hall.games.state.games] == ["2026-12-02-s2-g1"]
    assert hall.reopened().games.snapshot() == hall.games.snapshot()


@pytest.mark.req("R77.1", "R86.1-2")
def test_the_session_does_not_close_while_a_game_is_under_way(journal: Journal, clock) -> None:
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 7))
    sell(hall, 7, 1, 10)
    result(hall.games.close_sale(CHIEF))
    hall.draw()
    result(hall.session.count_balls(CHIEF, "closing", ALL_BALLS, ["Marta Soler (public)"]))
    unchanged(hall, lambda: hall.session.sign_closing(ADMIN), DomainError,
              r"game .* is under way \(.*\); finish it before the session closes")

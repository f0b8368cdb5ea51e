"""The pots as REGULATION.md now rules them, through the real hall modules and the command
channels of the staff who act: the superbingo fund paid by the session's last game every
session (R89, R88.1), the megabingo's whole fund (R90) announced on the boards and the kiosks
from its announcement to its game (R90.2), and the operator taking back what it contributed
to the jackpot and players have not won, within a year (R91.9).

The hall is the composition the server runs (session, ledger, admission, cashier, games,
virtual cards) on a real SQLite journal, with the console's site (command channel, live hub,
information board) and the terminal gateway on top, all run inline on a ``task.Clock``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any, Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import defer
from twisted.web.server import Site

from hall_server.config import StaffMember
from hall_server.hall.pins import PinGuard
from hall_server.store.database import open_database
from hall_server.terminal_gateway.gateway import TerminalGateway
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from protocol.chain import Record
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import CASHIER, CHIEF, SAFE, SELLERS, AuditHall, GamePlan, _claims, play_game
from tests.hall.conftest import result
from tests.hall.test_session import ALL_BALLS
from tests.terminals.test_gateway import Wire
from tests.web.conftest import _HASH, STAFF, FakeBrowser

TODAY = "2026-05-28"  # the clock's day in the hall (new_clock)
MEGABINGO_DAY = "2026-06-08"  # ten days' notice and one more
DAY_S = 24 * 3600


@dataclass
class PotHall:
    hall: AuditHall
    view: HallView
    site: Site
    gateway: TerminalGateway
    requests: int = 0

    def browser(self, name: str) -> FakeBrowser:
        """A console signed in as ``name`` (``admin``: the administrator, ``rosa``: the room chief)."""
        browser = FakeBrowser(self.site)
        assert browser.sign_in(name).status == 200
        return browser

    def command(self, browser: FakeBrowser, command: str, **args: Any) -> dict[str, Any]:
        """``command`` sent on the console's command channel; its answer."""
        self.requests += 1
        return browser.command(command, args, f"r{self.requests}").json()

    def records(self, kind: str) -> list[Record]:
        return [r for r in self.hall.records() if r.type == kind]

    def prizes(self, prize: str) -> list[dict[str, Any]]:
        return [r.payload for r in self.records("prize_paid") if r.payload["prize"] == prize]

    def board(self) -> dict[str, Any]:
        return FakeBrowser(self.site).request("GET", "/api/board").json()["view"]


@pytest.fixture
def pots() -> Iterator[PotHall]:
    folder = fast_folder()
    journal = Journal(open_database(f"sqlite:///{folder / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=folder / "journal.head")
    hall = AuditHall(journal, new_clock(), POT_RULES)
    games = hall.games
    view = HallView("Pots hall", desks=["desk1", "safe"], jackpot=lambda: games.jackpot_contributions_picture(
        hall.core.now_ms()))
    hall.core.add_view(view)
    sign_ins = SignIns(StaffDirectory(StaffMember(n, r, _HASH) for n, r in STAFF.items()), hall.clock)
    channel = CommandChannel(hall.core)
    hub = LiveHub(view, channel, sign_ins)
    hall.core.observers.append(hub.record_committed)
    site = build_site(hub=hub, sign_ins=sign_ins, channel=channel, authenticate=inline_authenticate(sign_ins),
                      secure_cookie=False)
    pins = PinGuard(hall.core, hall.cashier)
    gateway = TerminalGateway(hall.core, games, hall.virtual, hall.cashier, hall.clock,
                              lambda number, pin: defer.succeed(hall.cashier.verify_pin(number, pin)),
                              "Pots hall", pins=pins)
    hall.prepare()
    yield PotHall(hall, view, site, gateway)
    shutil.rmtree(folder, ignore_errors=True)


def count_closing_balls(hall: AuditHall) -> None:
    result(hall.session.count_balls(CHIEF, "closing", ALL_BALLS, ["Marta Soler (public)"]))


def contributed(record: Record, pot: str) -> int:
    """What a ``sale_closed`` record set aside for ``pot``."""
    return int(record.payload["contributions"].get(pot, 0))


def sale_closed(pots: PotHall, game_id: str) -> Record:
    (closed,) = [r for r in pots.records("sale_closed") if r.payload["game_id"] == game_id]
    return closed


# --- The superbingo fund never outlives the session (R89, R88.1) ---------------------------------


@pytest.mark.req("R88.1", "R89")
def test_R88_1_a_superbingo_fund_never_put_in_play_goes_to_the_sessions_last_game(pots: PotHall) -> None:
    """No superbingo game all session: the fund its shares built is paid by the last game's bingo, and
    the closing is refused until that game is played; nothing of it is left but a split's rest."""
    hall = pots.hall
    hall.open_day(TODAY)
    play_game(hall, GamePlan(paper=6, seed=1))
    play_game(hall, GamePlan(paper=6, seed=2))
    fund = hall.ledger.balance("pot:superbingo")
    assert fund > 0 and not pots.prizes("superbingo_last_game")
    hall.deposit_jackpot()
    count_closing_balls(hall)
    admin, chief = pots.browser("admin"), pots.browser("rosa")
    before = len(hall.records())
    refused = pots.command(chief, "sign_session_closing")
    assert refused["ok"] is False
    assert refused["error"]["message"] == (
        f"the superbingo fund holds {fund // 100}.{fund % 100:02d} EUR, which never outlives the session: it goes "
        "to the bingo of the session's last game (R89): announce a game as the last (R93.15) and play it before the "
        "session closes")
    assert len(hall.records()) == before
    last = play_game(hall, GamePlan(paper=6, seed=3, last=True))
    assert last is not None
    (paid,) = pots.prizes("superbingo_last_game")
    assert paid["game_id"] == last
    assert paid["amount_cents"] == fund + contributed(sale_closed(pots, last), "pot:superbingo")
    assert sum(cents for _, cents in paid["payments"]) == paid["amount_cents"] - paid["carry_cents"]
    assert hall.ledger.balance("pot:superbingo") == paid["carry_cents"]  # what a split cannot pay (R88.4-5)
    hall.deposit_jackpot()
    assert pots.command(admin, "sign_session_closing")["ok"] and pots.command(chief, "sign_session_closing")["ok"]
    assert hall.session.state.current is None


@pytest.mark.req("R89")
def test_R89_the_last_game_takes_what_the_fund_gathered_after_a_won_superbingo(pots: PotHall) -> None:
    """The session's superbingo was won in its first game; the shares of the games after it go to the
    bingo of its last game, not to a later session."""
    hall = pots.hall
    hall.open_day(TODAY)
    first = play_game(hall, GamePlan(paper=6, superbingo_limit=90, quick=True, seed=4))
    (won,) = pots.prizes("superbingo")
    assert won["game_id"] == first
    second = play_game(hall, GamePlan(paper=6, seed=5))
    third = play_game(hall, GamePlan(paper=6, seed=6, last=True))
    assert second is not None and third is not None
    (paid,) = pots.prizes("superbingo_last_game")
    assert paid["game_id"] == third
    assert paid["amount_cents"] == won["carry_cents"] + sum(
        contributed(sale_closed(pots, game), "pot:superbingo") for game in (second, third))
    assert hall.ledger.balance("pot:superbingo") == paid["carry_cents"]
    hall.close_day()


# --- The megabingo: its whole fund, announced on the boards and the kiosks (R90, R90.2) ---------------


def close_sale_of_a_game(hall: AuditHall, cards: int = 6) -> str:
    """A game's sale announced, paper cards sold and closed: the game under way, its shares set aside."""
    (opened,) = result(hall.games.announce_sale(SELLERS[0], 1001))
    result(hall.games.sell_cards(SELLERS[0], 1001, opened.payload["first_card"],
                                 opened.payload["first_card"] + cards - 1))
    result(hall.games.close_sale(CHIEF))
    return str(opened.payload["game_id"])


def draw_to_the_end(hall: AuditHall) -> None:
    """The game under way drawn to its bingo, claims verified, prizes paid, cards collected."""
    game = hall.games.current
    while "bingo" not in game.machine.won:
        (drawn, *_) = result(hall.games.draw_ball(SELLERS[0]))
        _claims(hall, drawn)
        if hall.games.due_prizes(game):
            result(hall.games.pay_prizes(CASHIER, SAFE))
    result(hall.games.close_game(CHIEF))
    if hall.games.due_prizes(game):
        result(hall.games.pay_prizes(CASHIER, SAFE))
    result(hall.games.collect_cards(CHIEF))


@pytest.mark.req("R90")
def test_R90_the_megabingo_pays_its_whole_fund_at_least_what_was_announced(pots: PotHall) -> None:
    """The room chief announces a megabingo ten days ahead: its date and time only, the fund standing
    then (less what the game under way set aside) being the least it pays; on its day it pays the
    whole fund as it stands, not an amount chosen below it."""
    hall = pots.hall
    hall.open_day(TODAY)
    play_game(hall, GamePlan(paper=10, seed=7))
    under_way = close_sale_of_a_game(hall)
    fund = hall.ledger.balance("pot:megabingo")
    at_stake = contributed(sale_closed(pots, under_way), "pot:megabingo")
    chief = pots.browser("rosa")
    # Announced at 1 cent of its fund, the rest would stay: there is no amount to choose any more.
    one_cent = pots.command(chief, "announce_megabingo", date=MEGABINGO_DAY, time="21:00", amount_cents=1)
    assert one_cent["ok"] is False and "amount_cents" in one_cent["error"]["message"]
    too_soon = pots.command(chief, "announce_megabingo", date="2026-06-06", time="21:00")
    assert too_soon["ok"] is False and "at least 10 days ahead" in too_soon["error"]["message"]
    assert pots.command(chief, "announce_megabingo", date=MEGABINGO_DAY, time="21:00")["ok"]
    (announced,) = pots.records("megabingo_announced")
    assert announced.payload["amount_cents"] == fund - at_stake and announced.payload["fund_cents"] == fund
    draw_to_the_end(hall)
    play_game(hall, GamePlan(paper=8, seed=8, last=True))
    hall.close_day()

    hall.open_day(MEGABINGO_DAY)
    before = hall.ledger.balance("pot:megabingo")
    game = play_game(hall, GamePlan(paper=6, megabingo=True, seed=9, last=True))
    assert game is not None
    (paid,) = pots.prizes("megabingo")
    assert paid["game_id"] == game
    assert paid["amount_cents"] == before + contributed(sale_closed(pots, game), "pot:megabingo")
    assert paid["amount_cents"] >= announced.payload["amount_cents"]
    assert hall.ledger.balance("pot:megabingo") == paid["carry_cents"]
    hall.close_day()


@pytest.mark.req("R90.2")
def test_R90_2_the_boards_and_the_kiosks_show_the_megabingo_from_its_announcement_to_its_game(pots: PotHall) -> None:
    """From the announcement to the megabingo game the information board and every kiosk show its date,
    time and amount (the least announced, and the whole fund as it grows); once it is played, neither does."""
    hall = pots.hall
    token = result(hall.virtual.enrol_terminal(CHIEF, "K1", "row B"))["token"]
    kiosk = Wire(pots.gateway, "K1", token)
    result(kiosk.client.hello())
    board = FakeBrowser(pots.site).socket("/board/ws")

    def on_board() -> dict[str, Any] | None:
        pictures = [m["view"] for m in board.received() if m.get("type") == "board"]
        assert pictures, "the board was sent no picture"
        return pictures[-1]["megabingo"]

    hall.open_day(TODAY)
    play_game(hall, GamePlan(paper=10, seed=10))
    assert pots.board()["megabingo"] is None and kiosk.client.megabingo is None
    chief = pots.browser("rosa")
    assert pots.command(chief, "announce_megabingo", date=MEGABINGO_DAY, time="21:30")["ok"]
    fund = hall.ledger.balance("pot:megabingo")
    shown = {"date": MEGABINGO_DAY, "time": "21:30", "minimum_cents": fund, "fund_cents": fund,
             "announced_on": TODAY}
    assert pots.board()["megabingo"] == shown and on_board() == shown
    assert kiosk.client.megabingo == shown
    # A later game's sale adds to the fund: the amount shown grows, the least announced stays.
    play_game(hall, GamePlan(paper=10, seed=11, last=True))
    grown = {**shown, "fund_cents": hall.ledger.balance("pot:megabingo")}
    assert grown["fund_cents"] > fund
    assert pots.board()["megabingo"] == grown and on_board() == grown and kiosk.client.megabingo == grown
    hall.close_day()
    # A kiosk that connects later is told it at once.
    late = Wire(pots.gateway, "K1", token)
    result(late.client.hello())
    assert late.client.megabingo == grown

    hall.open_day(MEGABINGO_DAY)
    play_game(hall, GamePlan(paper=6, megabingo=True, seed=12, last=True))
    assert pots.prizes("megabingo")
    assert pots.board()["megabingo"] is None and on_board() is None
    assert late.client.megabingo is None
    hall.close_day()


# --- The operator takes back its unwon jackpot contributions within the year (R91.9) -------------


def state(pots: PotHall, browser: FakeBrowser) -> dict[str, Any]:
    """The console's picture as ``browser``'s sign-in gets it."""
    return browser.request("GET", "/api/state").json()["view"]


@pytest.mark.req("R91.9", "R91.11")
def test_R91_9_the_administrator_takes_back_unwon_jackpot_contributions_within_their_year(pots: PotHall) -> None:
    """The administrator takes back, from the console, what the operator contributed to the jackpot and
    players have not won: from the day after the contribution for one calendar year, between sessions,
    never more than it put in; a jackpot won counts the operator's oldest contributions first."""
    hall, clock = pots.hall, pots.hall.clock
    admin = pots.browser("admin")

    def days_later(days: int) -> FakeBrowser:
        """The clock moves on; the administrator signs in again (a sign-in does not outlast a day)."""
        clock.advance(days * DAY_S)
        return pots.browser("admin")

    hall.open_day(TODAY)
    assert pots.command(admin, "contribute_to_pot", pot="jackpot", amount_cents=40_000)["ok"]
    game = play_game(hall, GamePlan(paper=6, jackpot_threshold=40, seed=13, last=True))
    assert game is not None and not pots.prizes("jackpot")  # not won: the contribution is all still there
    hall.close_day()

    def refused(amount: int, fragment: str) -> None:
        before = len(hall.records())
        answer = pots.command(admin, "recover_jackpot_contribution", amount_cents=amount)
        assert answer["ok"] is False and fragment in answer["error"]["message"], answer
        assert len(hall.records()) == before

    # Not on the day of the contribution: its year runs from the day after.
    refused(1, f"at most 0 cents on {TODAY}")
    admin = days_later(1)
    refused(40_001, "at most 40000 cents on 2026-05-29")
    funds = hall.ledger.balance("pot:jackpot_accumulated") + hall.ledger.balance("pot:jackpot_reserve")
    house = hall.ledger.balance("house")
    assert pots.command(admin, "recover_jackpot_contribution", amount_cents=30_000)["ok"]
    (taken,) = pots.records("jackpot_contribution_recovered")
    assert {k: taken.payload[k] for k in ("amount_cents", "date", "contributions", "recoverable_cents")} == {
        "amount_cents": 30_000, "date": "2026-05-29", "contributions": [[TODAY, 30_000]], "recoverable_cents": 40_000}
    assert taken.payload["accumulated_cents"] + taken.payload["reserve_cents"] == 30_000
    assert hall.ledger.balance("pot:jackpot_accumulated") + hall.ledger.balance("pot:jackpot_reserve") == funds - 30_000
    assert hall.ledger.balance("house") == house + 30_000
    # The jackpot's bank account now holds that much beyond its funds: the cashier takes it back (R91.11).
    assert hall.cashier.jackpot_bank_surplus() == 30_000
    picture = state(pots, admin)["jackpot_contributions"]
    assert picture["recoverable_cents"] == 10_000
    assert picture["contributions"] == [{"date": TODAY, "unwon_cents": 10_000, "until": "2027-05-28",
                                         "recoverable": True}]

    # Not while a session is being opened or is under way.
    hall.open_day("2026-05-29")
    refused(1, "between sessions")
    # A jackpot won takes the operator's money first: nothing of its contribution is left unwon.
    play_game(hall, GamePlan(paper=6, jackpot_threshold=42, quick=True, seed=14))
    (won,) = pots.prizes("jackpot")
    assert won["amount_cents"] - won["carry_cents"] >= 10_000
    assert pots.command(admin, "contribute_to_pot", pot="jackpot", amount_cents=5_000)["ok"]
    play_game(hall, GamePlan(paper=6, seed=15, last=True))
    hall.close_day()
    admin = days_later(1)
    assert [(c["date"], c["unwon_cents"]) for c in state(pots, admin)["jackpot_contributions"]["contributions"]] == [
        ("2026-05-29", 5_000)]
    refused(5_001, "at most 5000 cents on 2026-05-30")
    # The last day of the year counted from the day after the contribution, and the day after that.
    admin = days_later(364)  # 2027-05-29
    assert pots.command(admin, "recover_jackpot_contribution", amount_cents=1_000)["ok"]
    admin = days_later(1)  # 2027-05-30: its year is over, the rest stays in the jackpot for good
    refused(1, "at most 0 cents on 2027-05-30")
    # The room chief may too (as for contributions); a seller may not.
    assert "may not" in pots.command(pots.browser("sam"), "recover_jackpot_contribution", amount_cents=1)[
        "error"]["message"]

    # A hall restarted on the journal counts the same contributions.
    again = AuditHall(hall.journal, clock, POT_RULES)
    again.core.recover()
    assert again.games.snapshot() == hall.games.snapshot()
    assert again.games.state.jackpot_contributions == hall.games.state.jackpot_contributions

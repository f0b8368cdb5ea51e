"""The hall-annex game end to end (R3.5.b, R82.6, R85.9, R87, R88, R91, R93.10): a real central server, a main
hall and its annex, headless terminals and a kiosk in Chromium.

One operator authority issues the certificates; the central server (``bingo central
serve``) and both halls (``bingo hall serve``) run as child processes on loopback,
linked over AMP in mutual TLS; the central server is configured with the pair, each
hall with ``[annex]``.  Staff drive both halls over HTTPS as they would at their consoles.

The annex's card set is made from the main hall's: card k keeps the main hall's top and
middle rows and has one other number in its bottom row, so the two rooms sell different
cards whose first two lines complete on the same balls: a line won on one of those rows
is won in both rooms on the same ball.  Each hall's virtual library is its own, made at
its first start with cards no card of its own holds; as the halls start, each declares
its cards to the other, which finds none of its own among them (R82.6).

In one game: each room opens its terminals' sale; a headless terminal in each room
(``terminals/client.py``, in a process of its own: :mod:`tests.network.joint_terminal`)
buys virtual cards of the joint game at its stake, and a player on the annex's kiosk buys
some in Chromium; both rooms sell paper cards of their own series, close their sales,
and both journal the same joint pool, which counts every card of both rooms; the main
hall draws with its random ball generator and every ball reaches the annex; the annex is
killed with SIGKILL during the draw and started again, and catches up on the balls it
missed, its headless terminal reconnecting; the table chiefs verify the paper claims of
their rooms while each room finds its own virtual cards' wins at their ball; the main
hall closes the game; each hall pays its own winners, virtual ones to their accounts.
From the journals both processes left, to the cent: the pool is the settlement of the
sum of the sales; every winner of a prize in either room has its share of the split of
the prize among all of them at its stake (R87 ruling, R88.2, R88.4); no virtual card won
a prize without being found, nor completed one earlier; what each hall owes the other is
opposite on the two sides; each game's stakes are all accounted for; each terminal saw
the main hall's balls and was told what its winning cards were credited.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hall_server.store import cards as card_store
from hall_server.store.database import open_database
from protocol.chain import Record
from protocol.settlement import Pots, PrizeRules, close_sale, split_prize, tax_cents
from protocol.wins import completion_balls
from server_kit.db.database import create
from server_kit.pki import export_bundle, init_authority, issue_certificate
from server_kit.ports import reserve_port
from tests.central_server.support import CentralProcess, config_text
from tests.network.processes import hall_toml
from tests.network.test_network_browser import board_page, kiosk_page
from tests.network.test_network_end_to_end import Staff, journal_of
from tests.support.waiting import WAIT, wait_until
from tests.terminals.test_kiosk_browser import shown_cents
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_console_browser import browser, console_for, shot  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration]

MAIN, ANNEX = "hall-1", "hall-2"
SERIES = 1001
SOLD = 60  # every card of the series, in each room
RULES = PrizeRules(line_bp=1500, bingo_bp=5500)  # the halls' default [prizes]
ROOT = Path(__file__).resolve().parents[2]
PIN = "4821"
LOAD_CENTS = 10_000
#: What each room's headless terminal buys (cards, stake %), and the annex's kiosk player.
HEADLESS = {MAIN: (20, 100), ANNEX: (12, 50)}
KIOSK_CARDS = 6
VIRTUAL = 9001  # the series number the halls play their virtual library under
KIOSK = {"width": 1280, "height": 800}


def annex_cells(main_cells: np.ndarray) -> np.ndarray:
    """The annex's cards: each the main hall's card with one other number in its bottom row."""
    made = main_cells.copy().reshape(-1, 3, 9)
    for card in made:
        present = set(int(n) for n in card.ravel() if n)
        for column in range(9):
            number = int(card[2, column])
            if not number:
                continue
            low, high = (1, 9) if column == 0 else (column * 10, 90 if column == 8 else column * 10 + 9)
            above = max(int(card[row, column]) for row in (0, 1))
            choices = [n for n in range(max(low, above + 1), high + 1) if n not in present]
            if choices:
                card[2, column] = choices[-1] if choices[-1] != number else choices[0]
                break
    return made.reshape(-1, 27)


def records_of(home: Path, kind: str) -> list[Record]:
    return [r for r in journal_of(home / "hall.sqlite3") if r.type == kind]


def balances(home: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for record in records_of(home, "posting"):
        for account, cents in record.payload["debits"]:
            out[account] = out.get(account, 0) - cents
        for account, cents in record.payload["credits"]:
            out[account] = out.get(account, 0) + cents
    return out


def until(predicate: Any, what: str, timeout: float = 60.0) -> Any:
    return wait_until(predicate, timeout, what)


class HeadlessTerminal:
    """A headless terminal in a process of its own (:mod:`tests.network.joint_terminal`), asked one line at a time."""

    def __init__(self, url: str, bundle: Path, terminal: str, token: str, account: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.network.joint_terminal", url, str(bundle), terminal, token, account, PIN],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if "event" in message:
                self.events.append(message["event"])
            else:
                self.lines.put(message)

    def ask(self, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self.lines.get(timeout=WAIT)

    def picture(self) -> dict[str, Any]:
        answer = self.ask(do="picture")
        assert "error" not in answer, answer
        return answer

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.ask(do="quit")
            except (BrokenPipeError, queue.Empty):
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def open_session(staff: Staff) -> None:
    staff("admin", "run_verification", date="2026-11-29")
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)


def player(staff: Staff, home: Path, document: str) -> str:
    """A visitor admitted, an account opened with PIN 4821 and loaded: its number."""
    (admitted,) = staff("adam", "admit_visitor", name=f"Player {document}", document=document, birth_date="1980-01-01")["records"]
    visitor = _payload(home, admitted["seq"])["number"]
    (opened,) = staff("carla", "open_player_account", visitor=visitor, medium="ticket", pin=PIN)["records"]
    account = _payload(home, opened["seq"])["account"]
    staff("carla", "load_credit", account=account, amount_cents=LOAD_CENTS, desk="desk-1")
    return str(account)


@pytest.mark.req("R82.6", "R85.9", "R87.a", "R87.b", "R88.2", "R88.4-5", "R93.10")
def test_a_joint_game_main_draw_shown_in_the_annex_virtual_and_paper_cards_of_both_rooms_to_the_cent(
        tmp_path: Path, browser: Any) -> None:
    operator = tmp_path / "operator-pki"
    init_authority(operator, "Acme Bingo Network")
    issue_certificate(operator, "central", "central-a")
    central_home = tmp_path / "central"
    export_bundle(operator, "central-a", central_home / "pki")
    database = f"sqlite:///{central_home / 'central.sqlite3'}"
    (central_home / "central.toml").write_text(config_text(central_home, central_home / "pki", database, games=(),
                                                           halls=(MAIN, ANNEX), annex=((MAIN, ANNEX),),
                                                           port=reserve_port()))  # the same port after its restart
    central = CentralProcess(central_home / "central.toml").start()
    homes = {hall: tmp_path / hall for hall in (MAIN, ANNEX)}
    halls: dict[str, HallProcess] = {}
    terminals: dict[str, HeadlessTerminal] = {}
    try:
        for hall, role, partner in ((MAIN, "main", ANNEX), (ANNEX, "annex", MAIN)):
            issue_certificate(operator, "server", hall)
            export_bundle(operator, hall, homes[hall] / "pki")
            for name in (f"{hall}-K1", f"{hall}-K2"):
                issue_certificate(operator, "terminal", name)
                export_bundle(operator, name, tmp_path / "bundles" / name)
            # A port of its own for good: the terminals and the kiosk find the hall again after its restart.
            text = hall_toml(hall, central.port).replace("port = 0", f"port = {reserve_port()}", 1)
            (homes[hall] / "hall.toml").write_text(text + f'\n[annex]\nrole = "{role}"\npartner = "{partner}"\n')
        halls[MAIN] = HallProcess(homes[MAIN]).start()
        # The annex's own card set, registered before its first start (its cards are not the main hall's).
        main_engine = create(f"sqlite:///{homes[MAIN] / 'hall.sqlite3'}")
        strips, main_cells = card_store.set_cards(main_engine, "hall")
        main_engine.dispose()
        annex_engine = open_database(f"sqlite:///{homes[ANNEX] / 'hall.sqlite3'}")
        card_store.add_card_set(annex_engine, "hall", annex_cells(main_cells), strips, "imported")
        annex_engine.dispose()
        halls[ANNEX] = HallProcess(homes[ANNEX]).start()
        cells = {MAIN: main_cells, ANNEX: annex_cells(main_cells)}
        assert not (cells[MAIN] == cells[ANNEX]).all(axis=1).any(), "no card of the annex is a card of the main hall"

        def linked(hall: str) -> bool:
            return b"Linked to central server" in halls[hall].output

        until(lambda: linked(MAIN) and linked(ANNEX), "both halls to link to the central server", 120)
        # Each hall declared its cards (its card set's series, its library) and holds the other's (R82.6).
        def declared(hall: str) -> bool:
            """The hall holds both declarations, and the central server holds each part of its own."""
            parts = records_of(homes[hall], "annex_cards_declared")
            own = sum(1 for r in parts if r.payload["hall_id"] == hall)
            return {r.payload["hall_id"] for r in parts} == {MAIN, ANNEX} and \
                len(records_of(homes[hall], "annex_posted")) == own

        for hall in halls:
            until(lambda: declared(hall), f"{hall} to hold both halls' declarations of their cards")
        staff = {hall: Staff(process) for hall, process in halls.items()}
        accounts: dict[str, str] = {}
        tokens: dict[str, str] = {}
        for number, hall in enumerate(halls, start=1):
            open_session(staff[hall])
            for name in (f"{hall}-K1", f"{hall}-K2"):
                tokens[name] = staff[hall]("rosa", "enrol_terminal", terminal=name, place="row A")["result"]["token"]
            accounts[hall] = player(staff[hall], homes[hall], f"{number}1000000X")
            terminals[hall] = HeadlessTerminal(f"wss://localhost:{halls[hall].port}/kiosk/ws",
                                               tmp_path / "bundles" / f"{hall}-K2", f"{hall}-K2",
                                               tokens[f"{hall}-K2"], accounts[hall])
        kiosk_player = player(staff[ANNEX], homes[ANNEX], "23000000X")
        for hall in halls:
            until(lambda: "ready" in terminals[hall].events, f"{hall}'s headless terminal to sign in", WAIT)
        kiosk = kiosk_page(browser, halls[ANNEX], operator, KIOSK, f"{ANNEX}-K1", tokens[f"{ANNEX}-K1"])
        kiosk.fill("#account", kiosk_player)
        kiosk.fill("#pin", PIN)
        kiosk.press("#pin", "Enter")
        kiosk.wait_for_selector("#play:not([hidden])")

        # The main hall opens the game; the annex learns of it through the central server.
        (opened,) = [r for r in staff[MAIN]("rosa", "annex_open_game")["records"]]
        game_id = f"{MAIN}.j{opened['seq']}"
        until(lambda: records_of(homes[ANNEX], "annex_game_opened"), "the annex to learn of the game")
        with pytest.raises(AssertionError, match="only the main hall"):
            staff[ANNEX]("rosa", "annex_open_game")
        kiosk.wait_for_selector("#joint-panel:not([hidden])")
        assert "Game with hall-1" in kiosk.inner_text("#joint-title")

        # Each room's terminals buy virtual cards of the joint game (R82.13-16).
        for hall in halls:
            staff[hall]("sam", "annex_open_terminal_sale", seconds=900)
            quantity, stake = HEADLESS[hall]
            until(lambda: (terminals[hall].picture()["joint_game"] or {}).get("sale") is not None,
                  f"{hall}'s terminal to see the sale open")
            bought = terminals[hall].ask(do="buy", game_id=game_id, quantity=quantity, stake_pct=stake,
                                         request=f"{hall}-K2-1")
            assert [c["card"] for c in bought["bought"]] == [f"V1-{k}" for k in range(1, quantity + 1)], bought
            assert bought["credit_cents"] == LOAD_CENTS - quantity * 100 * stake // 100
            again = terminals[hall].ask(do="buy", game_id=game_id, quantity=quantity, stake_pct=stake,
                                        request=f"{hall}-K2-1")
            assert again["credit_cents"] == bought["credit_cents"], "the same request again is charged once"
        kiosk.wait_for_selector("#joint-countdown")
        kiosk.fill("#joint-quantity", str(KIOSK_CARDS))
        kiosk.click("#joint-buy")
        kiosk.wait_for_selector(f"#message.ok:has-text('{KIOSK_CARDS} cards bought for the game with the partner')")
        assert kiosk.locator("#joint-cards .card").count() == KIOSK_CARDS
        assert kiosk.locator("#joint-cards .cell:not(.blank)").count() == 15 * KIOSK_CARDS
        assert kiosk.inner_text("#credit") == f"€{(LOAD_CENTS - KIOSK_CARDS * 100) // 100}.00"
        shot(kiosk, "kiosk-annex-joint-sale")

        # Each room sells its own paper cards and closes its own sale; both journal one pool.
        for hall in halls:
            staff[hall]("sam", "annex_sell_cards", series=SERIES, first=1, last=SOLD // 2)
            staff[hall]("sam", "annex_sell_cards", series=SERIES, first=SOLD // 2 + 1, last=SOLD)
            staff[hall]("rosa", "annex_close_sale")
        until(lambda: all(records_of(homes[h], "annex_pool") for h in halls), "both halls to journal the pool")
        refused = terminals[ANNEX].ask(do="buy", game_id=game_id, quantity=1, stake_pct=100, request="late")
        assert "is closed in this room" in refused["refused"], refused
        pools = [{k: v for k, v in records_of(homes[h], "annex_pool")[0].payload.items() if k != "actor"}
                 for h in (MAIN, ANNEX)]
        assert pools[0] == pools[1], "both halls journal the same joint pool"
        pool = pools[0]
        sales = {MAIN: SOLD * 100 + 20 * 100, ANNEX: SOLD * 100 + 12 * 50 + KIOSK_CARDS * 100}
        figures = close_sale(RULES, sales[MAIN] + sales[ANNEX], Pots())  # the settlement of both rooms' sales
        assert (pool["main_sales_cents"], pool["annex_sales_cents"]) == (sales[MAIN], sales[ANNEX])
        assert (pool["sales_cents"], pool["line_cents"], pool["bingo_cents"]) == (
            15_200, figures.line_cents, figures.bingo_cents) == (15_200, 2_280, 8_360)
        assert pool["cards"] == 2 * SOLD + 20 + 12 + KIOSK_CARDS
        with pytest.raises(AssertionError, match="only the main hall"):
            staff[ANNEX]("sam", "annex_draw_ball")
        board = board_page(browser, halls[ANNEX])
        board.wait_for_selector("#net-heading:has-text('Hall-annex game')")
        facts = board.inner_text("#net-facts")
        assert "158" in facts and "22.80" in facts and "83.60" in facts, facts  # both rooms' cards, the joint prizes
        kiosk.wait_for_selector("#joint-prizes:has-text('€83.60')")

        # The draw: the main hall's balls, shown in the annex; paper claims verified in each room,
        # virtual cards found by their room.
        drawn: list[int] = []
        killed = False
        while True:
            (ball,) = [r for r in staff[MAIN]("sam", "annex_draw_ball")["records"]][:1]
            drawn.append(_ball_of(homes[MAIN], ball["seq"]))
            if len(drawn) == 3 and not killed:
                # The annex loses its link (killed) while the main hall draws on; it catches up.
                halls[ANNEX].kill()
                killed = True
                for _ in range(3):
                    (ball,) = [r for r in staff[MAIN]("sam", "annex_draw_ball")["records"]][:1]
                    drawn.append(_ball_of(homes[MAIN], ball["seq"]))
                halls[ANNEX].start()
                staff[ANNEX] = Staff(halls[ANNEX])
                until(lambda: linked(ANNEX), "the annex to link again", 120)
                until(lambda: terminals[ANNEX].events.count("reconnected") >= 1, "the annex's terminal to reconnect")
                kiosk.wait_for_selector("#sign-in-panel:not([hidden])")  # a new connection: its player signs in again
                kiosk.fill("#account", kiosk_player)
                kiosk.fill("#pin", PIN)
                kiosk.press("#pin", "Enter")
                kiosk.wait_for_selector("#joint-cards .card")
            if len(drawn) == 9:
                # The central server is killed: the annex shows the link as lost, the main hall draws on.
                links = {h: halls[h].output.count(b"Linked to central server") for h in halls}
                central.kill()
                board = board_page(browser, halls[ANNEX])  # the restarted annex's board
                board.wait_for_selector("#net-state:has-text('link to the partner hall lost')")
                shot(board, "board-annex-link-lost")
                console = console_for(browser, halls[ANNEX], "tomas")  # the annex's table chief
                console.wait_for_selector("#annex-state:has-text('the link to the partner hall is lost')")
                shot(console, "console-annex-link-lost")
                kiosk.wait_for_selector("#joint-link.lost")
                (ball,) = [r for r in staff[MAIN]("sam", "annex_draw_ball")["records"]][:1]
                drawn.append(_ball_of(homes[MAIN], ball["seq"]))
                central.start()
                until(lambda: all(halls[h].output.count(b"Linked to central server") > links[h] for h in halls),
                      "both halls to link again", 120)
            until(lambda: len(records_of(homes[ANNEX], "annex_ball_drawn")) == len(drawn),
                  f"ball {len(drawn)} to be shown in the annex", 60)
            # Both rooms know each other's wins on this ball before their players call.
            until(lambda: sorted(_verified(homes[MAIN], None)) == sorted(_verified(homes[ANNEX], None)),
                  f"both halls to hold the same claims after ball {len(drawn)}", 60)
            if len(drawn) >= 9:
                board.wait_for_selector(f"#net-last-ball:text-is('{drawn[-1]}')")
            now = len(drawn)
            won = {pattern: min((b for _, _, b in _verified(homes[MAIN], pattern)), default=None)
                   for pattern in ("line", "bingo")}
            completed = {h: completion_balls(cells[h][:SOLD], drawn) for h in halls}
            # The line is called for the paper cards k that complete it on this ball in both rooms (their
            # first two rows are the same), while it is not won on an earlier ball; a player who did not
            # call an earlier line does not win it.  The bingo is called for every paper card that
            # completes it on this ball, in either room.
            calls: dict[str, dict[str, Any]] = {}
            if won["line"] in (None, now):
                pairs = np.flatnonzero((completed[MAIN].line == now) & (completed[ANNEX].line == now))
                calls["line"] = {hall: pairs for hall in halls}
            if won["bingo"] in (None, now):
                calls["bingo"] = {hall: np.flatnonzero(completed[hall].bingo == now) for hall in halls}
            for pattern, cards in calls.items():
                for hall, indexes in cards.items():
                    for index in indexes:
                        answer = staff[hall]("tomas", "annex_verify_claim", series=SERIES, card_number=int(index) + 1)
                        assert [r["type"] for r in answer["records"]][:1] == ["annex_claim_verified"], answer
            until(lambda: sorted(_verified(homes[MAIN], None)) == sorted(_verified(homes[ANNEX], None)),
                  "this ball's claims to reach both halls", 60)
            if _verified(homes[MAIN], "bingo"):
                break  # the bingo is won: no ball after it, the game closes
        assert "lost" not in board.inner_text("#net-state")
        shot(board, "board-annex-draw")
        console.wait_for_selector(f"#annex-last-ball:text-is('{drawn[-1]}')")
        assert "lost" not in console.inner_text("#annex-state")
        line_ball = min(b for _, _, b in _verified(homes[MAIN], "line"))
        shown = console.locator("#annex-winners li").all_inner_texts()
        assert {f"LINE on ball {line_ball}: {card} ({hall})" for hall, card, b in _verified(homes[MAIN], "line")
                if b == line_ball and _is_paper(card)} <= set(shown), shown
        # The same line prize on the console ("22.80 €") and on the board, in CLDR's English ("€22.80").
        assert shown_cents(console.inner_text("#annex-line")) == shown_cents(board.locator("#net-facts dd").nth(2).inner_text())
        annex_balls = [r.payload["ball"] for r in records_of(homes[ANNEX], "annex_ball_drawn")]
        assert annex_balls == drawn, "the annex shows the main hall's balls, in order, after its restart too"
        kiosk.wait_for_selector(f"#joint-ball-count:has-text('Ball {len(drawn)}')")
        marked = {int(x) for x in kiosk.locator("#joint-cards .cell.marked").all_inner_texts()}
        shown_numbers = {int(x) for x in kiosk.locator("#joint-cards .cell:not(.blank)").all_inner_texts()}
        assert marked == shown_numbers & set(drawn), "the kiosk marks the main hall's balls on its joint cards"
        assert "to go" in kiosk.inner_text("#joint-cards .card >> nth=0")
        kiosk.wait_for_selector("#joint-winners li")
        shot(kiosk, "kiosk-annex-joint-drawing")

        # The main hall has every claim of the annex before it closes the game; each room pays its winners.
        staff[MAIN]("rosa", "annex_close_game")
        until(lambda: records_of(homes[ANNEX], "annex_game_closed"), "the annex to learn of the close")
        for hall in halls:
            if not records_of(homes[hall], "annex_prizes_paid"):  # a room of virtual winners only is paid already
                staff[hall]("carla", "annex_pay_prizes", desk="desk-1")
        kiosk.wait_for_selector("#joint-title:has-text('game over')")
        shot(kiosk, "kiosk-annex-joint-over")
        pictures = {hall: terminals[hall].picture() for hall in halls}
    finally:
        for terminal in terminals.values():
            terminal.stop()
        for process in halls.values():
            process.stop()
        central.stop()

    # --- The money, per hall, to the cent -----------------------------------------------
    library = {}
    for hall in (MAIN, ANNEX):
        engine = open_database(f"sqlite:///{homes[hall] / 'hall.sqlite3'}")
        library[hall] = card_store.library_cards(engine, "terminals").cells
        engine.dispose()
    paid = {h: records_of(homes[h], "annex_prizes_paid")[0].payload for h in (MAIN, ANNEX)}
    claims = {(r.payload["hall_id"], r.payload["card"], r.payload["pattern"]): r.payload
              for r in records_of(homes[MAIN], "annex_claim_verified")}
    virtual_in_play = {h: {(r.payload["first"], r.payload["last"]): r.payload for r in
                           records_of(homes[h], "annex_virtual_cards_bought")} for h in (MAIN, ANNEX)}
    winners_by_prize: dict[str, list[list[Any]]] = {}
    for pattern in ("line", "bingo"):
        main_prize, annex_prize = (next(p for p in paid[h]["prizes"] if p["pattern"] == pattern) for h in (MAIN, ANNEX))
        assert main_prize["winners"] == annex_prize["winners"], f"both halls know the same {pattern} winners"
        winners = main_prize["winners"]
        rows = _verified(homes[MAIN], pattern)
        assert sorted(rows) == sorted(_verified(homes[ANNEX], pattern)), f"both halls hold the same {pattern} claims"
        ball = min(c[2] for c in rows)
        sharing = sorted(((h, c) for h, c, b in rows if b == ball),
                         key=lambda x: (x[0] != MAIN, x[0], tuple(int(n) for n in x[1].split("-"))))
        amount = pool["line_cents"] if pattern == "line" else pool["bingo_cents"]
        stakes = [claims[(h, c, pattern)].get("stake_pct") or 100 for h, c in sharing]
        split = split_prize(amount, stakes)  # every card on the same ball shares, at its stake (R87, R88.2, R88.4)
        assert [[h, c, cents] for (h, c), cents in zip(sharing, split.payments)] == winners
        assert main_prize["carry_cents"] == split.carry
        winners_by_prize[pattern] = winners
        # Each room found every virtual card of its own that completed the prize on its ball, and none
        # completed it earlier (R93.10).
        for hall in (MAIN, ANNEX):
            numbers = [n for first, last in virtual_in_play[hall] for n in range(first, last + 1)]
            done = completion_balls(library[hall][np.array(numbers) - 1], drawn)
            at = done.line if pattern == "line" else done.bingo
            assert int(at.min()) >= ball
            assert {f"{VIRTUAL}-{numbers[i]}" for i in np.flatnonzero(at == ball)} == {
                c for h, c in sharing if h == hall and not _is_paper(c)}
    if all(_is_paper(c) for _, c, _ in winners_by_prize["line"]):
        assert {w[0] for w in winners_by_prize["line"]} == {MAIN, ANNEX}, "the line shared by both rooms on one ball"

    owed = {h: paid[h]["owed_to_partner_cents"] for h in (MAIN, ANNEX)}
    assert owed[MAIN] == -owed[ANNEX], "what one hall owes, the other is owed"
    books = {h: balances(homes[h]) for h in (MAIN, ANNEX)}
    assert books[MAIN].get(f"interhall:{ANNEX}", 0) == owed[MAIN]
    assert books[ANNEX].get(f"interhall:{MAIN}", 0) == owed[ANNEX]
    carried = 0
    for hall in (MAIN, ANNEX):
        mine = [(c, cents) for ws in winners_by_prize.values() for h, c, cents in ws if h == hall]
        paper_paid = sum(cents for c, cents in mine if _is_paper(c))
        assert books[hall].get(f"stakes:{game_id}", 0) == 0, f"{hall}: the game's stakes are all accounted for"
        # Cash drawers are debit accounts: what they hold is their debits less their credits.
        assert -books[hall]["cash:sam"] == SOLD * 100, f"{hall}: the seller's drawer holds the room's paper sales"
        loads = (1 if hall == MAIN else 2) * LOAD_CENTS  # the players' credit, paid in at the desk
        assert -books[hall]["cash:desk-1"] == 50_000 + loads - paper_paid, f"{hall}: its paper winners paid in cash"
        assert books[hall].get("tax", 0) == tax_cents(sales[hall]), f"{hall}: the tax on its own sales (R98)"
        # A virtual winner's share went to its player's account, and its terminal was told (R85.9).
        credited = sum(cents for c, cents in mine if not _is_paper(c) and _owner(homes[hall], c) == accounts[hall])
        quantity, stake = HEADLESS[hall]
        assert pictures[hall]["credit_cents"] == LOAD_CENTS - quantity * 100 * stake // 100 + credited
        assert sum(w["cents"] for w in pictures[hall]["joint_won"]) == credited
        assert pictures[hall]["joint_drawn"] == drawn and pictures[hall]["joint_game"]["over"]
        if hall == MAIN:
            carried = books[hall].get("carry:line", 0) + books[hall].get("carry:bingo", 0)
    total_paid = sum(cents for ws in winners_by_prize.values() for _, _, cents in ws)
    assert total_paid + carried == pool["line_cents"] + pool["bingo_cents"], "every cent of the pool paid or carried"
    assert owed[ANNEX] == (pool["line_cents"] - pool["main_line_cents"] + pool["bingo_cents"] - pool["main_bingo_cents"]
                           - sum(c for ws in winners_by_prize.values() for h, _, c in ws if h == ANNEX))


def _is_paper(card: str) -> bool:
    return not card.startswith(f"{VIRTUAL}-")


def _owner(home: Path, card: str) -> str:
    """The account number whose virtual card ``card`` (``9001-17``) is."""
    number = int(card.split("-")[1])
    (bought,) = [r.payload for r in records_of(home, "annex_virtual_cards_bought")
                 if r.payload["first"] <= number <= r.payload["last"]]
    return str(bought["account"]).removeprefix("player:")


def _payload(home: Path, seq: int) -> dict[str, Any]:
    for record in journal_of(home / "hall.sqlite3"):
        if record.seq == seq:
            return dict(record.payload)
    raise AssertionError(f"no record {seq}")


def _ball_of(home: Path, seq: int) -> int:
    return int(_payload(home, seq)["ball"])


def _verified(home: Path, pattern: str | None, hall: str | None = None) -> list[tuple[str, str, int]]:
    """The claims verified in either room that ``home``'s journal holds, of ``pattern`` (and of ``hall``)."""
    return [(r.payload["hall_id"], r.payload["card"], r.payload["ball_count"])
            for r in records_of(home, "annex_claim_verified")
            if pattern in (None, r.payload["pattern"]) and hall in (None, r.payload["hall_id"])]

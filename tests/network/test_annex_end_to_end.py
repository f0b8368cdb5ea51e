"""The hall-annex game end to end (R3.5.b, R87, R88, R91): a real central server, a main hall and its annex.

One operator authority issues the certificates; the central server (``bingo central
serve``) and both halls (``bingo hall serve``) run as child processes on loopback,
linked over AMP in mutual TLS; the central server is configured with the pair, each
hall with ``[annex]``.  Staff drive both halls over HTTPS as they would at their consoles.

The annex's card set is made from the main hall's: card k keeps the main hall's top and
middle rows and has one other number in its bottom row, so the two rooms sell different
cards whose first two lines complete on the same balls: a line won on one of those rows
is won in both rooms on the same ball.

In one game: both rooms sell paper cards of their own series, close their sales, and
both journal the same joint pool; the main hall draws with its random ball generator
and every ball reaches the annex; the annex is killed with SIGKILL during the draw and
started again, and catches up on the balls it missed; the table chiefs verify the
claims of their rooms; the main hall closes the game; each hall pays its own winners.
From the journals both processes left, to the cent: the pool is the settlement of the
sum of the sales; every winner of a prize in either room has the same share, the split
of the prize among all of them (R87 ruling, R88.2); what each hall owes the other is
opposite on the two sides; each game's stakes are all accounted for.
"""

from __future__ import annotations

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
from tests.central_server.support import CentralProcess, config_text
from tests.network.processes import hall_toml
from tests.network.test_network_browser import board_page, free_port
from tests.network.test_network_end_to_end import Staff, journal_of
from tests.support.waiting import wait_until
from tests.web.conftest import HallProcess
from tests.web.test_console_browser import browser, console_for, shot  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.req("R3.5.b", "R87.a", "R87.b", "R88.2", "R91")]

MAIN, ANNEX = "hall-1", "hall-2"
SERIES = 1001
SOLD = 60  # every card of the series, in each room
RULES = PrizeRules(line_bp=1500, bingo_bp=5500)  # the halls' default [prizes]


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


def test_R3_5_b_a_joint_game_main_draw_shown_in_the_annex_shared_prizes_and_money_per_hall_to_the_cent(
        tmp_path: Path, browser: Any) -> None:
    operator = tmp_path / "operator-pki"
    init_authority(operator, "Acme Bingo Network")
    issue_certificate(operator, "central", "central-a")
    central_home = tmp_path / "central"
    export_bundle(operator, "central-a", central_home / "pki")
    database = f"sqlite:///{central_home / 'central.sqlite3'}"
    (central_home / "central.toml").write_text(config_text(central_home, central_home / "pki", database, games=(),
                                                           halls=(MAIN, ANNEX), annex=((MAIN, ANNEX),),
                                                           port=free_port()))  # the same port after its restart
    central = CentralProcess(central_home / "central.toml").start()
    homes = {hall: tmp_path / hall for hall in (MAIN, ANNEX)}
    halls: dict[str, HallProcess] = {}
    try:
        for hall, role, partner in ((MAIN, "main", ANNEX), (ANNEX, "annex", MAIN)):
            issue_certificate(operator, "server", hall)
            export_bundle(operator, hall, homes[hall] / "pki")
            (homes[hall] / "hall.toml").write_text(
                hall_toml(hall, central.port) + f'\n[annex]\nrole = "{role}"\npartner = "{partner}"\n')
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
        staff = {hall: Staff(process) for hall, process in halls.items()}
        for hall in halls:
            staff[hall]("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)

        # The main hall opens the game; the annex learns of it through the central server.
        (opened,) = [r for r in staff[MAIN]("rosa", "annex_open_game")["records"]]
        game_id = f"{MAIN}.j{opened['seq']}"
        until(lambda: records_of(homes[ANNEX], "annex_game_opened"), "the annex to learn of the game")
        with pytest.raises(AssertionError, match="only the main hall"):
            staff[ANNEX]("rosa", "annex_open_game")

        # Each room sells its own cards and closes its own sale; both journal one pool.
        for hall in halls:
            staff[hall]("sam", "annex_sell_cards", series=SERIES, first=1, last=SOLD // 2)
            staff[hall]("sam", "annex_sell_cards", series=SERIES, first=SOLD // 2 + 1, last=SOLD)
            staff[hall]("rosa", "annex_close_sale")
        until(lambda: all(records_of(homes[h], "annex_pool") for h in halls), "both halls to journal the pool")
        pools = [{k: v for k, v in records_of(homes[h], "annex_pool")[0].payload.items() if k != "actor"}
                 for h in (MAIN, ANNEX)]
        assert pools[0] == pools[1], "both halls journal the same joint pool"
        pool = pools[0]
        figures = close_sale(RULES, 2 * SOLD * 100, Pots())  # the settlement of the sum of both rooms' sales
        assert (pool["sales_cents"], pool["line_cents"], pool["bingo_cents"]) == (
            12_000, figures.line_cents, figures.bingo_cents) == (12_000, 1_800, 6_600)
        assert pool["main_sales_cents"] == pool["annex_sales_cents"] == 6_000
        with pytest.raises(AssertionError, match="only the main hall"):
            staff[ANNEX]("sam", "annex_draw_ball")
        board = board_page(browser, halls[ANNEX])
        board.wait_for_selector("#net-heading:has-text('Hall-annex game')")
        facts = board.inner_text("#net-facts")
        assert "120" in facts and "18.00" in facts and "66.00" in facts, facts  # both rooms' cards, the joint prizes

        # The draw: the main hall's balls, shown in the annex; claims verified in each room.
        drawn: list[int] = []
        won: dict[str, int] = {}
        claimed: dict[str, list[tuple[str, str]]] = {"line": [], "bingo": []}
        killed = False
        while "bingo" not in won:
            (ball,) = [r for r in staff[MAIN]("sam", "annex_draw_ball")["records"]]
            drawn.append(_ball_of(homes[MAIN], ball["seq"]))
            if len(drawn) == 3 and not killed:
                # The annex loses its link (killed) while the main hall draws on; it catches up.
                halls[ANNEX].kill()
                killed = True
                for _ in range(3):
                    (ball,) = [r for r in staff[MAIN]("sam", "annex_draw_ball")["records"]]
                    drawn.append(_ball_of(homes[MAIN], ball["seq"]))
                halls[ANNEX].start()
                staff[ANNEX] = Staff(halls[ANNEX])
                until(lambda: linked(ANNEX), "the annex to link again", 120)
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
                (ball,) = [r for r in staff[MAIN]("sam", "annex_draw_ball")["records"]]
                drawn.append(_ball_of(homes[MAIN], ball["seq"]))
                central.start()
                until(lambda: all(halls[h].output.count(b"Linked to central server") > links[h] for h in halls),
                      "both halls to link again", 120)
            until(lambda: len(records_of(homes[ANNEX], "annex_ball_drawn")) == len(drawn),
                  f"ball {len(drawn)} to be shown in the annex", 60)
            if len(drawn) >= 9:
                board.wait_for_selector(f"#net-last-ball:text-is('{drawn[-1]}')")
            completed = {h: completion_balls(cells[h][:SOLD], drawn) for h in halls}
            now = len(drawn)
            # The line is called for the cards k that complete it on this ball in both rooms (their
            # first two rows are the same); a player who did not call an earlier line does not win it.
            # The bingo is called for every card that completes it on this ball, in either room.
            calls = {}
            if "line" not in won:
                pairs = np.flatnonzero((completed[MAIN].line == now) & (completed[ANNEX].line == now))
                calls["line"] = {hall: pairs for hall in halls}
            if "bingo" not in won:
                calls["bingo"] = {hall: np.flatnonzero(completed[hall].bingo == now) for hall in halls}
            for pattern, cards in calls.items():
                for hall, indexes in cards.items():
                    for index in indexes:
                        answer = staff[hall]("tomas", "annex_verify_claim", series=SERIES, card_number=int(index) + 1)
                        assert [r["type"] for r in answer["records"]][:1] == ["annex_claim_verified"], answer
                        claimed[pattern].append((hall, f"{SERIES}-{int(index) + 1}"))
                if claimed[pattern]:
                    won[pattern] = now
        assert "lost" not in board.inner_text("#net-state")
        shot(board, "board-annex-draw")
        console.wait_for_selector(f"#annex-last-ball:text-is('{drawn[-1]}')")
        assert "lost" not in console.inner_text("#annex-state")
        shown = console.locator("#annex-winners li").all_inner_texts()
        assert {f"LINE on ball {won['line']}: {card} ({hall})" for hall, card in claimed["line"]} <= set(shown), shown
        assert console.inner_text("#annex-line") == board.locator("#net-facts dd").nth(2).inner_text()
        annex_balls = [r.payload["ball"] for r in records_of(homes[ANNEX], "annex_ball_drawn")]
        assert annex_balls == drawn, "the annex shows the main hall's balls, in order, after its restart too"

        # The main hall has every claim of the annex before it closes the game.
        until(lambda: _verified(homes[MAIN], None, ANNEX) == _verified(homes[ANNEX], None, ANNEX),
                    "the annex's claims to reach the main hall", 60)
        staff[MAIN]("rosa", "annex_close_game")
        until(lambda: records_of(homes[ANNEX], "annex_game_closed"), "the annex to learn of the close")
        for hall in halls:
            staff[hall]("carla", "annex_pay_prizes", desk="desk-1")
    finally:
        for process in halls.values():
            process.stop()
        central.stop()

    # --- The money, per hall, to the cent -----------------------------------------------
    paid = {h: records_of(homes[h], "annex_prizes_paid")[0].payload for h in (MAIN, ANNEX)}
    winners_by_prize: dict[str, list[list[Any]]] = {}
    for pattern in ("line", "bingo"):
        main_prize, annex_prize = (next(p for p in paid[h]["prizes"] if p["pattern"] == pattern) for h in (MAIN, ANNEX))
        assert main_prize["winners"] == annex_prize["winners"], f"both halls know the same {pattern} winners"
        winners = main_prize["winners"]
        rows = _verified(homes[MAIN], pattern)
        assert sorted(rows) == sorted(_verified(homes[ANNEX], pattern)), f"both halls hold the same {pattern} claims"
        ball = min(c[2] for c in rows)
        sharing = sorted(((h, c) for h, c, b in rows if b == ball), key=lambda x: (x[0] != MAIN, x))
        amount = pool["line_cents"] if pattern == "line" else pool["bingo_cents"]
        split = split_prize(amount, [100] * len(sharing))  # every card on the same ball shares (R87, R88.2)
        assert [[h, c, cents] for (h, c), cents in zip(sharing, split.payments)] == [
            [h, c, cents] for h, c, cents in sorted(winners, key=lambda w: (w[0] != MAIN, w[0], w[1]))]
        assert main_prize["carry_cents"] == split.carry
        winners_by_prize[pattern] = winners
    assert {w[0] for w in winners_by_prize["line"]} == {MAIN, ANNEX}, "the line shared by both rooms on one ball"

    owed = {h: paid[h]["owed_to_partner_cents"] for h in (MAIN, ANNEX)}
    assert owed[MAIN] == -owed[ANNEX], "what one hall owes, the other is owed"
    books = {h: balances(homes[h]) for h in (MAIN, ANNEX)}
    assert books[MAIN].get(f"interhall:{ANNEX}", 0) == owed[MAIN]
    assert books[ANNEX].get(f"interhall:{MAIN}", 0) == owed[ANNEX]
    carried = 0
    for hall in (MAIN, ANNEX):
        own = 6_000
        paid_here = sum(cents for ws in winners_by_prize.values() for h, _, cents in ws if h == hall)
        assert books[hall].get(f"stakes:{game_id}", 0) == 0, f"{hall}: the game's stakes are all accounted for"
        # Cash drawers are debit accounts: what they hold is their debits less their credits.
        assert -books[hall]["cash:sam"] == own, f"{hall}: the seller's drawer holds the room's sales"
        assert -books[hall]["cash:desk-1"] == 50_000 - paid_here, f"{hall}: its own winners paid from its desk"
        assert books[hall].get("tax", 0) == tax_cents(own) == 600, f"{hall}: the tax on its own sales (R98)"
        if hall == MAIN:
            carried = books[hall].get("carry:line", 0) + books[hall].get("carry:bingo", 0)
    total_paid = sum(cents for ws in winners_by_prize.values() for _, _, cents in ws)
    assert total_paid + carried == pool["line_cents"] + pool["bingo_cents"], "every cent of the pool paid or carried"
    assert owed[ANNEX] == (pool["line_cents"] - pool["main_line_cents"] + pool["bingo_cents"] - pool["main_bingo_cents"]
                           - sum(c for ws in winners_by_prize.values() for h, _, c in ws if h == ANNEX))


def _ball_of(home: Path, seq: int) -> int:
    for record in journal_of(home / "hall.sqlite3"):
        if record.seq == seq:
            return int(record.payload["ball"])
    raise AssertionError(f"no record {seq}")


def _verified(home: Path, pattern: str | None, hall: str | None = None) -> list[tuple[str, str, int]]:
    """The claims verified in either room that ``home``'s journal holds, of ``pattern`` (and of ``hall``)."""
    return [(r.payload["hall_id"], r.payload["card"], r.payload["ball_count"])
            for r in records_of(home, "annex_claim_verified")
            if pattern in (None, r.payload["pattern"]) and hall in (None, r.payload["hall_id"])]

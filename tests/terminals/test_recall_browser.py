"""The last games on the console and on the kiosk, in a real headless browser (Debian's
chromium driven by Playwright) against the hall server process over TLS: after a game
with paper and virtual cards, a door attendant's console shows its cards sold, balls and
prizes with where each winning card was bought, and a kiosk shows its balls and winning
cards and nothing of who bought them (R83.4, R92.3)."""

from __future__ import annotations

from contextlib import closing
import sqlite3
from typing import Any

import pytest

from tests.terminals.test_kiosk_browser import KIOSK, Staff, kiosk_page, player, sign_in_and_buy
from tests.web.conftest import HallProcess
from tests.web.test_board_browser import draw_until, euros as english_euros
from tests.web.test_console_browser import browser, console_for, hall, shot  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

PAPER = 1001


def journal_of(hall: HallProcess, kind: str) -> list[dict[str, Any]]:
    import json

    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as database, database:
        rows = database.execute("SELECT payload FROM journal WHERE type = ? ORDER BY seq", (kind,)).fetchall()
    return [json.loads(text) for (text,) in rows]


def verified(staff: Staff, cards: list[str]) -> None:
    """The table chief verifies the paper cards; a virtual card wins without a claim."""
    for label in cards:
        series, number = (int(x) for x in label.split("-"))
        if series == PAPER:
            staff("tomas", "verify_claim", series=series, card_number=number)


def pay_if_due(staff: Staff) -> None:
    status, answer = staff.clients["carla"].call(
        "POST", "/api/command", {"id": f"pay{len(journal_of(staff.hall, 'prize_paid'))}-{staff.counter}",
                                 "command": "pay_prizes", "args": {"desk": "desk-1"}})
    # Nothing due is an answer too: a prize won only by virtual cards is credited to the accounts at once.
    nothing_due = ("no prize", "has been paid", "the line is paid;")
    paid = status == 200 and answer["ok"]
    assert paid or (status == 409 and any(n in answer["error"]["message"].lower() for n in nothing_due)), answer


@pytest.mark.req("R92.3", "R83.3-4")
def test_the_last_game_shows_on_the_console_for_every_role_and_on_the_kiosk_without_its_buyers(
    hall: HallProcess, browser: Any
) -> None:
    staff = Staff(hall)
    staff.open_the_session()
    anna = player(staff, "11111111A", 2_000)
    token = staff("rosa", "enrol_terminal", terminal="K1", place="hall row A")["result"]["token"]
    staff("sam", "announce_sale", series=PAPER)
    kiosk = kiosk_page(browser, hall, KIOSK, "K1", token)
    staff("sam", "open_terminal_sale", seconds=300)
    sign_in_and_buy(kiosk, anna, 4)
    staff("sam", "sell_cards", series=PAPER, first=1, last=30)
    staff("rosa", "close_sale")
    verified(staff, draw_until(staff, "line")[1])
    staff("sam", "close_prize")  # "Another card?" - none (R85.6)
    pay_if_due(staff)
    verified(staff, draw_until(staff, "bingo")[1])
    staff("sam", "close_prize")
    staff("rosa", "close_game")
    pay_if_due(staff)
    staff("rosa", "collect_cards")

    balls = [p["ball"] for p in journal_of(hall, "ball_drawn")]
    paid = journal_of(hall, "prize_paid")
    (closed,) = journal_of(hall, "sale_closed")
    adam = console_for(browser, hall, "adam")  # the door: the least of the roles
    adam.wait_for_selector("#last-games-list .last-game")
    game = adam.inner_text("#last-games-list .last-game")
    assert f"Balls ({len(balls)}): {' '.join(map(str, balls))}" in game
    assert f"series {PAPER} cards 1-30 (30 paper), 4 virtual" in game
    assert f"collected {english_euros(closed['collection_cents'])}" in game  # CLDR's English, as the console writes it
    rows = adam.locator("#last-games-list .last-game tbody tr")
    assert rows.count() == len(paid)
    for row, prize in zip(rows.all_inner_texts(), paid):
        assert prize["prize"] in row and english_euros(prize["amount_cents"]) in row
        for card, _ in prize["payments"]:
            assert ("paper, sold by sam" if card.startswith(f"{PAPER}-") else "terminal K1") in row
    assert adam.locator('#more-commands button[data-command="recall_games"]').count() == 0  # the panel stands for it
    shot(adam, "console-last-games")

    kiosk.click("#recall-open")
    kiosk.wait_for_selector("#recall:not([hidden]) #recall-games .recall-game")
    assert kiosk.locator("#recall-games .recall-game").count() == 1
    assert kiosk.locator(".recall-balls li").all_inner_texts() == [str(b) for b in balls]
    prizes = kiosk.locator(".recall-prizes li").all_inner_texts()
    assert len(prizes) == len(paid)
    shown = kiosk.inner_text("#recall")
    for prize, text in zip(paid, prizes):
        assert text.startswith(prize["prize"].capitalize()) and f"ball {prize['ball_count']}" in text
    assert "K1" not in shown and "sam" not in shown and anna not in shown.replace(" ", "")
    shot(kiosk, "kiosk-last-games")
    kiosk.click("#recall-close")
    kiosk.wait_for_selector("#play:not([hidden])")

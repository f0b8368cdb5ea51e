"""The megabingo announced from the room chief's desk and shown with its date, time and amount on the
information board and a kiosk, and the operator's jackpot contributions on the administrator's desk,
in a real headless browser against the hall server process over TLS (R90.2; the money of R90 and
R91.9 is proven in ``tests/hall/test_pots_rulings.py``)."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from protocol.settlement import recovery_last_day
from tests.support.waiting import WAIT
from tests.terminals.test_kiosk_browser import KIOSK, Staff, kiosk_page, payload
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_board_browser import board_page, claimed, draw_until, euros
from tests.web.test_console_browser import browser, console_for  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

#: The hall's prizes: the megabingo's 1% and the jackpot's 10% beside the line and the bingo (R88.1).
PRIZES = "line_bp = 1500\nbingo_bp = 4400\nmegabingo = true\njackpot = true"


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path)
    config = process.config.read_text()
    assert "line_bp = 1500\nbingo_bp = 5500" in config
    process.config.write_text(config.replace("line_bp = 1500\nbingo_bp = 5500", PRIZES))
    process.start()
    yield process
    process.stop()


def play_a_game(staff: Staff) -> None:
    """A whole game of 30 paper cards: its 1% goes to the megabingo's fund."""
    staff("sam", "announce_sale", series=1001)
    staff("sam", "sell_cards", series=1001, first=1, last=30)
    staff("rosa", "close_sale")
    for pattern in ("line", "bingo"):
        claimed(staff, draw_until(staff, pattern)[1])
        staff("sam", "close_prize")  # no other card: the caller closes the prize found (R85.6)
    staff("rosa", "close_game")
    staff("carla", "pay_prizes", desk="desk-1")
    staff("rosa", "collect_cards")


@pytest.mark.req("R90.2")
def test_the_megabingo_announced_at_the_desk_shows_on_the_board_and_the_kiosk(hall: HallProcess, browser: Any) -> None:
    staff = Staff(hall)
    # The session dated today in the hall (an empty date), as the console's verification dates it.
    (verified,) = staff("admin", "run_verification", date="")["records"]
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
    today = datetime.date.fromisoformat(payload(hall, verified["seq"])["date"])
    token = staff("rosa", "enrol_terminal", terminal="K1", place="hall row A")["result"]["token"]
    play_a_game(staff)
    board = board_page(browser, hall)
    kiosk = kiosk_page(browser, hall, KIOSK, "K1", token)
    assert board.locator("#megabingo").is_hidden() and kiosk.locator("#megabingo").is_hidden()

    # The room chief announces it on the desk: a date eleven days on, a time; no amount to choose (R90).
    rosa = console_for(browser, hall, "rosa")
    day = (today + datetime.timedelta(days=11)).isoformat()
    form = rosa.locator('form[data-command="announce_megabingo"]')
    form.locator('[data-param="date"]').fill(day)
    form.locator('[data-param="time"]').fill("21:30")
    form.locator("button[type=submit]").click()
    fund = 30  # 1% of 30 cards at 1.00 EUR
    # The day as English writes a date in full ("December 17, 2026"), not as the form took it (2026-12-17).
    written = datetime.date.fromisoformat(day)
    expected = (f"Megabingo on {written:%B} {written.day}, {written.year} at 21:30: {euros(fund)}, the whole fund, "
                f"at least {euros(fund)}")
    rosa.wait_for_selector(f"section.task:has(> h2:text-is('Megabingo')) > .state-line:text-is('{expected} · shown "
                           "on the boards and the kiosks')")

    # The board and the kiosk show its date, time and amount until it is played (R90.2).
    # The public screens and the console write the amounts by CLDR's English rules ("€0.30").
    on_screens = expected
    board.wait_for_selector("#megabingo:not([hidden])")
    assert board.inner_text("#megabingo") == on_screens
    kiosk.wait_for_selector("#megabingo:not([hidden])")
    assert kiosk.inner_text("#megabingo") == on_screens

    # The administrator's desk: the operator's jackpot contributions and what may be taken back (R91.9).
    admin = console_for(browser, hall, "admin")
    staff("admin", "contribute_to_pot", pot="jackpot", amount_cents=40_000)
    section = admin.locator("section.task:has(> h2:text-is(\"The operator's contributions to the pots\"))")
    section.locator("> .state-line:has-text('400.00')").wait_for(timeout=WAIT * 1000)
    # Paid in on the session's day, it may be taken back from the day after, for a year (the hall's day may
    # have turned meanwhile: the line says which it is).
    assert re.fullmatch(r"The jackpot holds €400\.00 of the operator's contributions that players have not won; "
                        r"€(0|400)\.00 may be taken back today \(\d{4}-\d\d-\d\d\), between sessions",
                        section.locator("> .state-line").inner_text())
    assert re.fullmatch(rf"Jackpot contribution of {today.isoformat()}: €400\.00 not won · may be taken back "
                        rf"(from the day after it )?until {recovery_last_day(today.isoformat())}",
                        section.locator("ul.rows").inner_text())
    assert section.locator('form[data-command="recover_jackpot_contribution"]').is_hidden()

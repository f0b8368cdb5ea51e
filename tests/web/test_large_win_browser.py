"""R75.6 on the cashier's console in a real headless browser against the hall server process over
TLS: the payment of a paper bingo of 15,000 EUR is refused on the desk, naming the card and what to
do; the cashier fills the winner's identity form (the winner's cards, the document, the name) and
the payment then goes through.  The rule's money and refusals are proven in
``tests/reports/test_large_wins.py``; this is the desk a cashier works."""

from __future__ import annotations

from contextlib import closing
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support.waiting import WAIT
from tests.terminals.test_kiosk_browser import Staff, payload
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_board_browser import claimed, draw_until
from tests.web.test_console_browser import browser, console_for  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

#: A bingo never below 15,000 EUR: the house tops up what one card's sale does not reach (R88.3).
BINGO_MINIMUM = 1_500_000
#: The desk's float holds the bingo and the line in cash.
FLOAT = 1_600_000


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path)
    config = process.config.read_text()
    assert "bingo_minimum_cents = 0" in config
    process.config.write_text(config.replace("bingo_minimum_cents = 0", f"bingo_minimum_cents = {BINGO_MINIMUM}"))
    process.start()
    yield process
    process.stop()


def outcome(form: Any, kind: str) -> str:
    """The form's outcome line once it says ``kind`` (``ok`` or ``error``)."""
    line = form.locator(f"p.outcome.{kind}")
    line.wait_for(timeout=WAIT * 1000)
    return str(line.inner_text())


@pytest.mark.req("R75.6")
def test_R75_6_the_cashiers_desk_records_a_paper_winners_identity_then_pays(hall: HallProcess, browser: Any) -> None:
    staff = Staff(hall)
    staff("admin", "run_verification", date="")
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=FLOAT)
    # One card sold: it alone wins the line and the bingo, so nothing is shared by chance.
    staff("sam", "announce_sale", series=1001)
    staff("sam", "sell_cards", series=1001, first=1, last=1)
    staff("rosa", "close_sale")
    claimed(staff, draw_until(staff, "line")[1])
    staff("sam", "close_prize")  # no other card (R85.6)
    (_, cards) = draw_until(staff, "bingo")
    assert cards == ["1001-1"]
    claimed(staff, cards)
    staff("sam", "close_prize")
    staff("rosa", "close_game")

    carla = console_for(browser, hall, "carla")
    pay = carla.locator('form[data-command="pay_prizes"]')
    pay.locator('[data-param="desk"]').select_option("desk-1")
    pay.locator("button[type=submit]").click()
    refused = outcome(pay, "error")
    assert refused.startswith("paper card 1001-1 wins 15000.15 EUR in game ")
    assert "(line 0.15 EUR, bingo 15000.00 EUR)" in refused and "paid only once identified (R75.6)" in refused
    assert carla.locator("section.task:has(> h2:text-is('Prizes')) li").count() == 0  # nothing paid

    form = carla.locator('form[data-command="identify_paper_winner"]')
    form.locator('[data-param="cards"]').fill("1001-1")
    form.locator('[data-param="document"]').fill("X1234567")
    form.locator('[data-param="name"]').fill("Joana Puig")
    form.locator("button[type=submit]").click()
    outcome(form, "ok")

    pay.locator('[data-param="desk"]').select_option("desk-1")
    pay.locator("button[type=submit]").click()
    outcome(pay, "ok")
    carla.locator("section.task:has(> h2:text-is('Prizes')) li:has-text('bingo: ')").wait_for(timeout=WAIT * 1000)

    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as database, database:
        seqs = [seq for (seq,) in database.execute("SELECT seq FROM journal WHERE type = 'prize_winner_identified'")]
    (seq,) = seqs
    identified = payload(hall, seq)
    assert (identified["cards"], identified["document"], identified["name"]) == (["1001-1"], "X1234567", "Joana Puig")
    assert identified["total_cents"] >= BINGO_MINIMUM

"""``bingo hall serve --demo`` plays virtual cards as well as paper: the demo enrols its
terminals, headless terminal clients (``terminals/demo_players.py``) sign in with demo
accounts over the hall's TLS port with their terminal certificates and buy cards in every
game's terminal sale, and a virtual card wins; a newcomer follows ``demo-kiosk.txt``
(the kiosk's address, its certificate as a PKCS#12 file, an account and PIN) and buys
cards on the kiosk in a real browser (R82.13-16, R85.9, R93.1, R93.10)."""

from __future__ import annotations

from contextlib import closing
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text
from tests.crash.wire import LiveSocket, sign_in_cookie
from tests.support.waiting import WAIT
from tests.terminals.test_kiosk_browser import KIOSK, shown_cents
from tests.web.conftest import _HASH, HallProcess
from tests.web.test_board_browser import SCREEN
from tests.web.test_console_browser import browser, shot  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

VIRTUAL_SERIES = 9001
#: The terminals hold about a third of the cards: a virtual card wins a line or a bingo in about
#: one demo game in two (and its players top their credit up between games); a game at this
#: pace takes some 15 s on an idle machine: the bound leaves room for bad luck and a loaded one.
VIRTUAL_WIN_BOUND = 600
NOTE = re.compile(
    r"Import its certificate (?P<p12>\S+\.p12) \(password: (?P<password>\S+)\).*"
    r"Open (?P<url>https://\S+/kiosk#terminal=(?P<terminal>[\w-]+)&token=\S+).*"
    r"account (?P<account>[\d ]+) and PIN (?P<pin>\d+)",
    re.S,
)


#: The kiosk shows the terminals' sale open with at least 3 s left ("Sale open, closes in 0:04").
SALE_WITH_TIME_LEFT = """() => {
  const left = document.querySelector('#sale-state #countdown');
  const [minutes, seconds] = left ? left.textContent.split(':').map(Number) : [0, 0];
  return minutes * 60 + seconds >= 3;
}"""


@pytest.fixture
def demo_hall(tmp_path: Path):
    # Series of 600 cards, as the embedded default has: the demo sells 120 paper cards a game.
    (tmp_path / "hall.toml").write_text(
        default_config_text("Demo hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0).replace('language = "ca"', 'language = "en"'))
    hall = HallProcess(tmp_path, demo=True, demo_pace=0.1).start()
    yield hall
    hall.stop()


def virtual(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r["payload"] for r in records if r["type"] == kind]


@pytest.mark.timeout(VIRTUAL_WIN_BOUND + 180)
@pytest.mark.req("R82.13-16", "R85.9", "R93.1", "R93.10")
def test_the_demo_plays_virtual_cards_on_its_terminals_a_newcomer_buys_on_the_kiosk_and_a_virtual_card_wins(
    demo_hall: HallProcess, browser: Any
) -> None:
    console = LiveSocket(demo_hall, "/ws", sign_in_cookie(demo_hall, "rosa"))
    try:
        note_file = demo_hall.folder / "demo-kiosk.txt"
        console.wait_for(note_file.exists, WAIT, "the demo's note for the newcomer")
        note = NOTE.search(note_file.read_text())
        assert note, note_file.read_text()

        # The newcomer: the certificate from the PKCS#12 file, the address, the account and PIN.
        certificates = [{"origin": demo_hall.base, "pfxPath": note["p12"], "passphrase": note["password"]}]
        kiosk = browser.new_context(ignore_https_errors=True, viewport=KIOSK, client_certificates=certificates).new_page()
        kiosk.set_default_timeout(WAIT * 1000)
        kiosk.goto(note["url"])
        kiosk.wait_for_selector("#link.online")
        kiosk.fill("#account", note["account"].replace(" ", ""))
        kiosk.fill("#pin", note["pin"])
        kiosk.press("#pin", "Enter")
        kiosk.wait_for_selector("#play:not([hidden])")
        credit = shown_cents(kiosk.inner_text("#credit"))
        assert credit > 0
        # Each game opens the terminals' sale for 5 s: buy in one with time left to click (a sale
        # seen in its last instant may close before the purchase reaches the hall, and it is then
        # refused as sent after the sale time: buy again in the next game's).
        kiosk.fill("#quantity", "3")
        for _ in range(3):
            kiosk.wait_for_function(SALE_WITH_TIME_LEFT, timeout=WAIT * 3 * 1000)
            kiosk.click("#buy")
            kiosk.locator("#message.ok:has-text('3 cards bought'), #message:not(.ok):has-text('sale time')").first.wait_for()
            if "3 cards bought" in kiosk.inner_text("#message"):
                break
            kiosk.wait_for_selector("#message", state="hidden")
        else:
            pytest.fail("three sales in a row closed before the kiosk's purchase reached the hall")
        assert kiosk.locator("#cards .card").count() == 3
        shot(kiosk, "demo-kiosk")

        def won_by_virtual() -> list[dict[str, Any]]:
            return [p for p in virtual(console.records(), "prize_won") if p["series"] == VIRTUAL_SERIES]

        console.wait_for(lambda: bool(won_by_virtual()), VIRTUAL_WIN_BOUND, "a virtual card to win a prize")
        # Every demo terminal buys cards (read from the journal: some before the console connected);
        # a terminal that started late under load buys in a later game's sale.
        def bought() -> set[str]:
            with closing(sqlite3.connect(demo_hall.folder / "hall.sqlite3")) as database, database:
                return {json.loads(text)["terminal"] for (text,) in database.execute(
                    "SELECT payload FROM journal WHERE type = 'virtual_cards_bought'")}

        expected = {"demo-1", "demo-2", "demo-3", note["terminal"]}
        console.wait_for(lambda: bought() >= expected, VIRTUAL_WIN_BOUND, f"every demo terminal to buy: {expected}")
        # Its prize reaches its player's account: at once when only virtual cards won it (R85.9).
        def paid_to_virtual() -> list[dict[str, Any]]:
            return [p for p in virtual(console.records(), "prize_paid")
                    if any(card.startswith(f"{VIRTUAL_SERIES}-") for card, _ in p["payments"])]

        console.wait_for(lambda: bool(paid_to_virtual()), WAIT, "the virtual card's prize paid")
        board = browser.new_context(ignore_https_errors=True, viewport=SCREEN).new_page()
        board.goto(f"{demo_hall.base}/board")
        board.wait_for_selector("#link:not(.offline)")
        shot(board, "demo-board")
    finally:
        console.close()

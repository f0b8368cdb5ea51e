"""The kiosk app end to end in a real headless browser (Debian's chromium driven by
Playwright) against the hall server process over TLS: staff enrol two terminals and open
the sale; on a 1280x800 kiosk and a 390x844 handheld a player signs in with the account
number and PIN, sees the credit, buys cards during the sale time, is refused after it,
watches the cards mark themselves as balls fall, and the line's winner sees the credit rise
(R82.13-16, R85.9, R92.8, R93.1, R93.8, R93.10)."""

from __future__ import annotations

from contextlib import closing
import json
import re
import sqlite3
from typing import Any

import pytest

from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import ALL_BALLS, HallProcess, HttpClient
from tests.web.test_console_browser import browser, hall  # noqa: F401 (fixtures)
from tests.web.test_server_process import signed_in

pytestmark = pytest.mark.integration

KIOSK = {"width": 1280, "height": 800}
HANDHELD = {"width": 390, "height": 844}
# Both players sign in and buy within the sale time, on the hall's real clock: long
# enough for two browsers on a loaded machine.
SALE_SECONDS = 20


class Staff:
    """Staff members signed in on the command channel."""

    def __init__(self, hall: HallProcess) -> None:
        self.clients: dict[str, HttpClient] = {}
        self.hall = hall
        self.counter = 0

    def __call__(self, who: str, command: str, **args: Any) -> dict[str, Any]:
        if who not in self.clients:
            self.clients[who] = signed_in(self.hall, who)
        self.counter += 1
        status, answer = self.clients[who].call(
            "POST", "/api/command", {"id": f"k{self.counter}", "command": command, "args": args}
        )
        assert status == 200 and answer["ok"], answer
        return answer

    def open_the_session(self) -> None:
        """Verified, counted and signed, the banned list loaded and desk-1 open with 500.00 EUR."""
        self("admin", "run_verification", date="2026-11-29")
        self("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
        self("rosa", "sign_session_opening")
        self("admin", "sign_session_opening")
        self("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
        self("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)


def payload(hall: HallProcess, seq: int) -> dict[str, Any]:
    """A record's payload, read from the hall's journal (the command answer names only its seq)."""
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as database, database:
        (text,) = database.execute("SELECT payload FROM journal WHERE seq = ?", (seq,)).fetchone()
    return json.loads(text)


def player(staff: Staff, document: str, credit: int) -> str:
    """A visitor admitted, an account opened with PIN 4821 and loaded: its number."""
    (admitted,) = staff("adam", "admit_visitor", name=f"Player {document}", document=document, birth_date="1980-01-01")["records"]
    visitor = payload(staff.hall, admitted["seq"])["number"]
    (opened,) = staff("carla", "open_player_account", visitor=visitor, medium="ticket", pin="4821")["records"]
    account = payload(staff.hall, opened["seq"])["account"]
    staff("carla", "load_credit", account=account, amount_cents=credit, desk="desk-1")
    return account


def shown_cents(text: str) -> int:
    """An amount in English as a player's screen writes it (CLDR: ``€14.00``, ``€1,234.56``) or
    as the staff console does (``14.00 €``), in integer cents."""
    found = re.fullmatch(r"€?(\d[\d,]*)\.(\d\d)(?: €| EUR)?", text.strip())
    assert found, f"not an amount: {text!r}"
    return int(found[1].replace(",", "")) * 100 + int(found[2])


def kiosk_page(browser: Any, hall: HallProcess, viewport: dict[str, int], terminal: str, token: str) -> Any:
    """The kiosk app on a device holding ``terminal``'s certificate, as the hall requires."""
    cert, key = hall.certificate("terminal", terminal)
    certificates = [{"origin": hall.base, "certPath": str(cert), "keyPath": str(key)}]
    page = browser.new_context(ignore_https_errors=True, viewport=viewport, client_certificates=certificates).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{hall.base}/kiosk#terminal={terminal}&token={token}")
    page.wait_for_selector("#link.online")
    return page


def sign_in_and_buy(page: Any, account: str, quantity: int) -> None:
    page.fill("#account", account)
    page.fill("#pin", "4821")
    page.press("#pin", "Enter")
    page.wait_for_selector("#play:not([hidden])")
    assert page.inner_text("#credit") == "€20.00"
    assert re.fullmatch(r"\d+:\d\d", page.inner_text("#countdown"))  # the time left (R93.1)
    page.fill("#quantity", str(quantity))
    page.click("#buy")
    page.wait_for_selector("#message.ok")
    assert f"{quantity} cards bought" in page.inner_text("#message")
    assert page.locator("#cards .card").count() == quantity
    assert page.inner_text("#credit") == f"€{20 - quantity}.00"


def marked_as_drawn(page: Any) -> None:
    """Every number drawn is marked on every card showing it, and nothing else is."""
    drawn = {int(x) for x in page.locator("#drawn li.called").all_inner_texts()}
    cells = page.locator("#cards .cell:not(.blank)")
    marked = {int(x) for x in page.locator("#cards .cell.marked").all_inner_texts()}
    shown = {int(x) for x in cells.all_inner_texts()}
    assert drawn and marked == shown & drawn


@pytest.mark.req("R82.13-16", "R85.9", "R92.8", "R93.1", "R93.8", "R93.10")
def test_players_buy_in_the_window_are_refused_after_it_and_the_line_winner_is_credited(hall: HallProcess, browser: Any) -> None:
    staff = Staff(hall)
    staff.open_the_session()
    anna, bea = player(staff, "11111111A", 2_000), player(staff, "22222222B", 2_000)
    kiosk_token = staff("rosa", "enrol_terminal", terminal="K1", place="hall row A")["result"]["token"]
    handheld_token = staff("rosa", "enrol_terminal", terminal="H1", place="handheld 1")["result"]["token"]
    staff("sam", "announce_sale", series=1001)
    kiosk = kiosk_page(browser, hall, KIOSK, "K1", kiosk_token)
    handheld = kiosk_page(browser, hall, HANDHELD, "H1", handheld_token)
    staff("sam", "open_terminal_sale", seconds=SALE_SECONDS)
    sign_in_and_buy(kiosk, anna, 6)
    sign_in_and_buy(handheld, bea, 4)
    assert handheld.evaluate("document.documentElement.scrollWidth") <= HANDHELD["width"]  # no sideways scrolling

    # After the sale time the button is off, and a purchase sent anyway is refused by the hall.
    kiosk.wait_for_selector("#sale-state:text('Sale closed for terminals')", timeout=(SALE_SECONDS + WAIT) * 1000)
    assert kiosk.is_disabled("#buy")
    kiosk.evaluate("buy('hall', 1, 100)")
    kiosk.wait_for_selector("#message:not(.ok)")
    assert "sale time for terminals is over" in kiosk.inner_text("#message")
    assert kiosk.locator("#cards .card").count() == 6 and kiosk.inner_text("#credit") == "€14.00"

    staff("rosa", "close_sale")
    kiosk.wait_for_selector("#prizes:has-text('10 cards in play')")
    draws = 0
    while True:
        records = staff("sam", "draw_ball")["records"]
        draws += 1
        if line_cards := sum(r["type"] == "prize_won" for r in records):
            break
    # "Line! Another card?" - nobody else calls: the caller closes it, and the line is credited at once (R85.6, R85.9).
    staff("sam", "close_prize")
    for page in (kiosk, handheld):
        # Waited for here, not in the page: its CSP forbids the eval a polled page function needs.
        wait_until(lambda: page.locator("#drawn li.called").count() >= draws, WAIT, f"{draws} balls on the page",
                   seen=lambda: page.locator("#drawn li.called").count())
        marked_as_drawn(page)
        lasts = page.locator("#last-balls .ball").all_inner_texts()
        assert lasts[0] == page.inner_text("#drawn li.latest")  # the latest ball first, ringed on the board
        assert page.locator("#drawn li").count() == 90
    from tests.web.test_console_browser import shot

    shot(kiosk, "kiosk-drawing")
    shot(handheld, "handheld-drawing")
    # Every card that won the line is on one of the two terminals: each is shown there.
    wait_until(lambda: sum(page.locator("#won li").count() for page in (kiosk, handheld)) == line_cards, WAIT,
               f"the terminals to show the {line_cards} card(s) that won the line",
               seen=lambda: [page.locator("#won li").all_inner_texts() for page in (kiosk, handheld)])
    winners = [page for page in (kiosk, handheld) if page.locator("#won li").count()]
    for page in winners:
        assert "You won the line" in page.inner_text("#message")
        assert page.locator("#cards .card.winner").count() >= 1
        before = 1400 if page is kiosk else 1600  # cents, as the page showed them before the draw
        wait_until(lambda: shown_cents(page.inner_text("#credit")) > before, WAIT, "the line's prize credited",
                   seen=lambda: page.inner_text("#credit"))


@pytest.mark.req("R97.2")
def test_a_player_reads_the_warnings_and_help_sets_a_limit_is_held_to_it_and_excludes_themselves(
    hall: HallProcess, browser: Any
) -> None:
    from tests.web.test_console_browser import shot

    staff = Staff(hall)
    staff.open_the_session()
    anna = player(staff, "11111111A", 2_000)
    token = staff("rosa", "enrol_terminal", terminal="K1", place="hall row A")["result"]["token"]
    staff("sam", "announce_sale", series=1001)
    staff("sam", "open_terminal_sale", seconds=600)
    kiosk = kiosk_page(browser, hall, KIOSK, "K1", token)
    # Before anyone signs in: the operator's warning, and the help page behind its button.
    assert "limit" in kiosk.inner_text("#warning").lower() or "gambling" in kiosk.inner_text("#warning").lower()
    kiosk.click("#care-open")
    assert "exclude yourself" in kiosk.inner_text("#care-help")
    assert kiosk.is_hidden("#care-account")
    assert kiosk.is_hidden("#sign-out"), "nobody is signed in: nothing to sign out of on the help page"
    kiosk.click("#care-close")
    sign_in_and_buy(kiosk, anna, 2)

    kiosk.click("#care-open")
    assert kiosk.is_visible("#sign-out")  # the player signed in may leave from the help page too
    kiosk.fill("#limit", "100000,01")  # above what a terminal may ask: said in the player's words, not sent
    kiosk.press("#limit", "Enter")
    kiosk.wait_for_selector("#message:has-text('A daily limit is at most €100,000.00')")
    kiosk.fill("#limit", "5")
    kiosk.press("#limit", "Enter")
    kiosk.wait_for_selector("#care-limit:has-text('Your limit today is €5.00; you have spent €2.00')")
    shot(kiosk, "kiosk-limits")
    kiosk.click("#care-close")
    kiosk.fill("#quantity", "4")
    kiosk.click("#buy")
    kiosk.wait_for_selector("#message:not(.ok)")
    assert kiosk.inner_text("#message") == "Your daily limit is €5.00; you have spent €2.00 today, so you may spend €3.00 more."
    assert kiosk.inner_text("#credit") == "€18.00"

    kiosk.click("#care-open")
    kiosk.fill("#exclude-days", "30")
    kiosk.check("#exclude-sure")
    kiosk.click("#exclude-form button")
    kiosk.wait_for_selector("#sign-in-panel:not([hidden])")
    assert kiosk.is_hidden("#play"), "nothing but the sign-in while nobody is signed in"
    kiosk.fill("#account", anna)
    kiosk.fill("#pin", "4821")
    kiosk.press("#pin", "Enter")
    kiosk.wait_for_selector("#message:has-text('You excluded yourself from play until')")
    assert kiosk.is_visible("#sign-in-panel")
    shot(kiosk, "kiosk-self-excluded")


@pytest.mark.req("R82.13-16", "R93.1", "R93.2-4", "R93.15")
def test_the_kiosk_shows_only_the_sign_in_then_the_sale_in_words_a_refusal_in_euros_that_goes_away_and_the_last_game(
    hall: HallProcess, browser: Any
) -> None:
    from tests.web.test_console_browser import shot

    staff = Staff(hall)
    staff.open_the_session()
    anna, bea = player(staff, "11111111A", 2_000), player(staff, "22222222B", 2_000)
    pages = {
        "kiosk": kiosk_page(browser, hall, KIOSK, "K1", staff("rosa", "enrol_terminal", terminal="K1", place="row A")
                            ["result"]["token"]),
        "handheld": kiosk_page(browser, hall, HANDHELD, "H1", staff("rosa", "enrol_terminal", terminal="H1",
                                                                      place="handheld 1")["result"]["token"]),
    }
    staff("sam", "announce_sale", series=1001)
    staff("rosa", "announce_last_game")
    for name, page in pages.items():
        # Nobody signed in: the sign-in and the operator's message, nothing of an account or a game.
        page.wait_for_selector("#sign-in-panel:not([hidden])")
        for hidden in ("#play", "#credit-box", "#last-game", "#sign-out"):
            assert page.is_hidden(hidden), hidden
        shot(page, f"{name}-sign-in")
    for page, account in ((pages["kiosk"], anna), (pages["handheld"], bea)):
        page.fill("#account", account)
        page.fill("#pin", "4821")
        page.press("#pin", "Enter")
        page.wait_for_selector("#play:not([hidden])")
        assert page.is_visible("#credit-box") and page.inner_text("#credit") == "€20.00"
        # The session's last game is announced to the player (R93.15).
        page.wait_for_selector("#last-game:not([hidden])")
        assert page.inner_text("#sale-state") == "Sale on terminals not open yet"

    staff("sam", "open_terminal_sale", seconds=600)
    for name, page in pages.items():
        page.wait_for_selector("#sale-state:has-text('Sale open, closes in')")
        assert re.fullmatch(r"Sale open, closes in (9|10):\d\d", page.inner_text("#sale-state")), page.inner_text("#sale-state")
        assert page.inner_text("#game-title") == "Game 1 · on sale"
        shot(page, f"{name}-sale")

    # A purchase beyond the credit: refused in euros, and the refusal goes away by itself.
    kiosk = pages["kiosk"]
    kiosk.fill("#quantity", "30")
    kiosk.click("#buy")
    kiosk.wait_for_selector("#message:not(.ok):not([hidden])")
    refusal = kiosk.inner_text("#message")
    assert refusal == "30 cards at €1.00 cost €30.00; your credit is €20.00." and "cents" not in refusal, refusal
    shot(kiosk, "kiosk-refused")
    kiosk.wait_for_selector("#message", state="hidden")
    assert kiosk.inner_text("#credit") == "€20.00" and kiosk.locator("#cards .card").count() == 0
    for page in pages.values():
        page.fill("#quantity", "4")
        page.click("#buy")
        page.wait_for_selector("#message.ok:has-text('4 cards bought')")

    staff("rosa", "close_sale")
    for page in pages.values():
        page.wait_for_selector("#sale-state:text('Sale closed · the draw begins soon')")
    staff("sam", "draw_ball")
    for name, page in pages.items():
        page.wait_for_selector("#sale-state:text('Sale closed · drawing')")
        assert page.inner_text("#game-title") == "Game 1 · drawing"
        assert page.locator("#drawn li").count() == 90 and page.locator("#drawn li.called").count() == 1
        assert page.is_visible("#last-game")
        shot(page, f"{name}-drawing-started")
    handheld = pages["handheld"]
    assert handheld.evaluate("document.documentElement.scrollWidth") <= HANDHELD["width"]  # no sideways scrolling

"""A whole session of a hall, end to end, in a real headless browser (Debian's chromium
driven by Playwright), through the console pages only, as the staff work: the session
opened with the ball count and both signatures; a game sold from two series (the first
to its last card, then the second from card 1, R82.6), drawn, its claims verified on the
cards the console shows as just completed, its prizes paid, closed and its cards
collected; and a game with the jackpot in play, played to its end; the session
closed with its count and signatures; then the session's minutes printed from the
console, their text read and their signature checked with stock openssl.

A second series sells the cards of the set below the first series' first card (R82.6),
so the game with two series is the session's second: the first game sells the first
series' cards 1-30, the second game its cards 31-60 (to the end) and the second series
from card 1, with the jackpot in play.

Screenshots of the key steps go to ``$BINGO_SCREENSHOTS`` when it is set."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hall_server.hall.admission import DEFAULT_TIMEZONE, local_date
from server_kit.keys import load_journal_key, public_pem
from tests.reports.conftest import pdf_strings
from tests.web.conftest import HallProcess
from tests.web.test_console_browser import browser, console_for, fill, open_command, shot  # noqa: F401 (browser: a fixture)

pytestmark = pytest.mark.integration

SERIES_1, SERIES_2 = 1001, 1002  # 60 cards each in the test hall
SPLIT = 30  # game 1 sells the first series' cards 1-30; game 2 its 31-60 and the second series' 1-30
WITNESSES = "Maria Public, Joan Witness"
JACKPOT_THRESHOLD = 40


@pytest.fixture
def hall(tmp_path: Path):
    process = HallProcess(tmp_path)
    # The jackpot game needs the hall's prize rules to fund the jackpot (R91).
    text = process.config.read_text()
    assert "[prizes]" in text
    process.config.write_text(text.replace("[prizes]", "[prizes]\njackpot = true", 1))
    process.start()
    yield process
    process.stop()


def give(page: Any, command: str, **fields: str | bool) -> str:
    """Open a command's form from the list, fill it, send it with Enter; the hall's answer."""
    open_command(page, command)
    for param, value in fields.items():
        if isinstance(value, bool):
            page.locator(f'#command-fields [data-param="{param}"]').set_checked(value)
        else:
            fill(page, param, value)
    page.locator("#command-form button[type=submit]").press("Enter")
    answer = answer_to(page)
    page.keyboard.press("Escape")
    return answer


def answer_to(page: Any) -> str:
    """The answer line once the hall has answered (it reads "...: sent" until then)."""
    page.wait_for_selector("#answer:not(:has-text('sent'))")
    text = page.inner_text("#answer")
    assert "ok" in (page.get_attribute("#answer", "class") or "").split(), f"refused: {text}"
    return text


def verify_claim(page: Any, series: int, card: int) -> str:
    """The table chief's claim check, with the keyboard: V, series, Tab, card, Enter."""
    page.keyboard.press("v")
    page.keyboard.type(str(series))
    page.keyboard.press("Tab")
    page.keyboard.type(str(card))
    page.keyboard.press("Enter")
    text = answer_to(page)
    page.keyboard.press("Escape")
    return text


def completed(page: Any) -> list[tuple[str, int, int]]:
    """The cards the last ball completed, as the console shows them: (ROW|BINGO, series, card)."""
    cards = []
    for text in page.locator("#completed li").all_inner_texts():
        what, _, label = text.partition(": series ")
        series, _, card = label.partition(" card ")
        cards.append((what, int(series), int(card)))
    return cards


def play_to_the_end(sam: Any, tomas: Any, carla: Any, rosa: Any, screens: str) -> dict[str, set[str]]:
    """Draw until the bingo; verify the line and bingo claims; pay; close; collect.

    Returns the winning cards (``series-card``) by prize, as verified on the console.
    """
    winners: dict[str, set[str]] = {"line": set(), "bingo": set()}
    for count in range(1, 91):
        sam.keyboard.press("d")  # the caller's shortcut
        sam.wait_for_selector(f"#ball-count:has-text('ball {count} of 90')")
        cards = completed(sam)
        if not winners["line"]:
            for what, series, card in cards:
                if what == "ROW":
                    assert "prize won" in verify_claim(tomas, series, card)
                    winners["line"].add(f"{series}-{card}")
            if winners["line"] and not any(what == "BINGO" for what, _, _ in cards):
                shot(tomas, f"{screens}-line-verified")
                # "Line! Another card?": the draw waits until the caller closes the prize (R85.6).
                sam.click("#tab-desk")  # the caller's desk: the banner and the draw held
                sam.wait_for_selector("#screen .pause-banner:not([hidden]):has-text('LINE! Another card?')")
                assert sam.is_disabled("#desk-draw")
                shot(sam, f"{screens}-line-another-card")
                assert "LINE closed by sam" in give(sam, "close_prize")
                assert "prize paid" in give(carla, "pay_prizes", desk="desk-1")
        bingos = [(series, card) for what, series, card in cards if what == "BINGO"]
        if bingos:
            shot(sam, f"{screens}-bingo-completed")
            # However long the list of completed cards, the facts stay one under the other.
            sold, collected = (sam.locator(f"#{name}").bounding_box() for name in ("cards-sold", "collected"))
            assert sold and collected and collected["y"] - sold["y"] < 30
            for series, card in bingos:
                assert "prize won" in verify_claim(tomas, series, card)
                winners["bingo"].add(f"{series}-{card}")
            rosa.click("#tab-desk")
            rosa.wait_for_selector("#screen .pause-banner:not([hidden]):has-text('BINGO! Another card?')")
            shot(rosa, f"{screens}-bingo-another-card")
            assert "closed by sam" in give(sam, "close_prize")
            break
    assert winners["bingo"], "no card completed in 90 balls"
    sam.wait_for_selector("#winners li:has-text('BINGO')")
    give(rosa, "close_game")  # a line won on the bingo's ball closed with it, and is settled at the close
    assert "prize paid" in give(carla, "pay_prizes", desk="desk-1")
    give(rosa, "collect_cards")
    rosa.wait_for_selector("#game-state:has-text('cards collected')")
    return winners


def fetch(page: Any, url: str) -> tuple[int, dict[str, str], bytes]:
    """GET with the page's sign-in (its browser context's cookies)."""
    response = page.context.request.get(url)
    return response.status, response.headers, response.body()


@pytest.mark.req("R85", "R82.6", "R85.6", "R85.11", "R91", "R91.11", "R77.1", "R83.3-4")
def test_a_whole_session_on_the_consoles_from_opening_to_the_printed_minutes(browser, hall: HallProcess,  # noqa: F811
                                                                            tmp_path: Path) -> None:
    admin = console_for(browser, hall, "admin")
    rosa = console_for(browser, hall, "rosa")
    sam = console_for(browser, hall, "sam")
    tomas = console_for(browser, hall, "tomas")
    carla = console_for(browser, hall, "carla")
    # The minutes are offered to the administrator and the room chief only.
    assert admin.locator("#minutes").is_visible() and rosa.locator("#minutes").is_visible()
    assert sam.locator("#minutes").is_hidden() and tomas.locator("#minutes").is_hidden()

    # --- Opening: verification, the count of the 90 balls, both signatures (R84, R77.1).
    today = local_date(int(time.time() * 1000), DEFAULT_TIMEZONE).isoformat()
    give(admin, "run_verification", date=today)
    give(rosa, "count_balls", stage="opening", balls_present="1-90", witnesses=WITNESSES)
    give(rosa, "sign_session_opening")
    give(admin, "sign_session_opening")
    rosa.wait_for_selector("#session-state:has-text('session 1 open')")
    give(carla, "open_cash_desk", desk="desk-1", float_cents="100000")
    shot(rosa, "full-01-session-open")

    # --- Game 1: one series, from its first card.
    give(sam, "announce_sale", series=str(SERIES_1))
    give(sam, "sell_cards", series=str(SERIES_1), first="1", last=str(SPLIT))
    give(rosa, "close_sale")
    sam.wait_for_selector(f"#cards-sold:has-text('{SPLIT}')")
    assert sam.inner_text("#pots") == "no pot in play"
    shot(sam, "full-02-game-1-sold")
    game_1 = play_to_the_end(sam, tomas, carla, rosa, "full-03-game-1")
    shot(rosa, "full-04-game-1-collected")

    # --- Game 2: the first series to its end, then the second series from card 1 (R82.6),
    # with the jackpot in play within 40 balls (R91).
    give(sam, "announce_sale", series=str(SERIES_1))
    give(sam, "sell_cards", series=str(SERIES_1), first=str(SPLIT + 1), last="60")
    give(sam, "open_second_series", series=str(SERIES_2))
    give(sam, "sell_cards", series=str(SERIES_2), first="1", last=str(SPLIT))
    give(rosa, "announce_pots", superbingo_limit="0", grand_superbingo_limit="0",
         jackpot_threshold=str(JACKPOT_THRESHOLD), megabingo=False)
    give(rosa, "close_sale")
    sam.wait_for_selector(f"#cards-sold:has-text('{60}')")
    # The pots in play are on the consoles, with the jackpot's accumulated value (R91).
    for page in (rosa, sam):
        page.wait_for_selector(f"#pots:has-text('jackpot within {JACKPOT_THRESHOLD} balls')")
    shot(rosa, "full-05-game-2-two-series-jackpot")
    game_2 = play_to_the_end(sam, tomas, carla, rosa, "full-06-game-2")

    # --- Closing: the day's jackpot deposit (R91.11), the count and both signatures.
    drawers = give(carla, "cash_drawers")
    due = re.search(r"jackpot deposit due: (\d+\.\d\d) EUR", drawers)
    assert due, drawers
    if due.group(1) != "0.00":
        assert "Jackpot money deposited" in give(carla, "deposit_jackpot", source="desk-1", amount_cents=due.group(1),
                                           reference="bank slip 0001")
    assert "jackpot deposit due: 0.00 EUR" in give(carla, "cash_drawers")
    give(rosa, "count_balls", stage="closing", balls_present="1-90", witnesses=WITNESSES)
    give(rosa, "sign_session_closing")
    give(admin, "sign_session_closing")
    admin.wait_for_selector("#session-state:has-text('session 1 closed')")

    # --- The minutes, printed from the console: the administrator's desk offers them.
    admin.click("#tab-desk")
    session_link = admin.locator('#minutes-list li[data-subject="1"] a[data-minutes="session-pdf"]')
    assert admin.locator("#minutes-list li").count() == 3  # the session and its two games
    shot(admin, "full-07-minutes")
    with admin.expect_popup() as opened:
        session_link.click()
    viewer = opened.value
    viewer.wait_for_load_state()
    assert viewer.url.endswith("/api/minutes/session/1.pdf")
    status, headers, pdf = fetch(admin, viewer.url)
    assert status == 200 and headers["content-type"] == "application/pdf" and pdf.startswith(b"%PDF")
    signature_url = admin.locator('#minutes-list li[data-subject="1"] a[data-minutes="session-pdf.sig"]')
    status, _, signature = fetch(admin, hall.base + signature_url.get_attribute("href"))
    assert status == 200 and len(signature) == 64

    shown = pdf_strings(pdf)
    text = " ".join(shown)
    game_ids = [li.get_attribute("data-subject") for li in admin.locator("#minutes-list li").all()][1:]
    for game_id in game_ids:
        assert game_id in text
    # The series and the card ranges sold in each game (R77.1, R83.3, R82.6).
    # (The hall speaks English: its money as CLDR writes it in English.)
    assert contains(shown, [str(SERIES_1), "hall", "€1.00", "first series", "1", str(SPLIT), str(SPLIT)])
    assert contains(shown, [str(SERIES_1), "hall", "€1.00", "first series", str(SPLIT + 1), "60", str(60 - SPLIT)])
    assert contains(shown, [str(SERIES_2), "hall", "€1.00", "second series", "1", str(SPLIT), str(SPLIT)])
    # The winning cards and the prizes paid, for both games; the jackpot in play.
    for winners in (game_1, game_2):
        for card in winners["line"] | winners["bingo"]:
            assert card in shown, card
    assert "Prizes paid" in text and "jackpot" in text
    assert WITNESSES.split(", ")[0] in text and "admin" in text and "rosa" in text

    # The signature, with stock openssl and the journal's public key.
    folder = tmp_path / "minutes"
    folder.mkdir()
    (folder / "minutes-session-1.pdf").write_bytes(pdf)
    (folder / "minutes-session-1.pdf.sig").write_bytes(signature)
    (folder / "hall-journal.pub.pem").write_bytes(
        public_pem(load_journal_key(hall.folder / "keys" / "journal-signing.pem")))
    assert openssl_verifies(folder, "minutes-session-1.pdf")
    altered = pdf.replace(b"1.00", b"9.00", 1)
    assert altered != pdf
    (folder / "altered.pdf").write_bytes(altered)
    (folder / "altered.pdf.sig").write_bytes(signature)
    assert not openssl_verifies(folder, "altered.pdf")


def contains(strings: list[str], run: list[str]) -> bool:
    """Whether ``run`` appears in ``strings`` as consecutive items (one table row's cells)."""
    return any(strings[i:i + len(run)] == run for i in range(len(strings) - len(run) + 1))


def openssl_verifies(folder: Path, name: str) -> bool:
    openssl = shutil.which("openssl")
    assert openssl, "the openssl command is missing: apt-get install -y openssl"
    done = subprocess.run(
        [openssl, "pkeyutl", "-verify", "-pubin", "-inkey", str(folder / "hall-journal.pub.pem"), "-rawin",
         "-in", str(folder / name), "-sigfile", str(folder / f"{name}.sig")],
        capture_output=True, text=True, check=False,
    )
    return done.returncode == 0 and "Signature Verified Successfully" in done.stdout

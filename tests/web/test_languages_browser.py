"""The player screens in the hall's language, in a real headless browser (Debian's chromium
driven by Playwright) against a hall process whose ``[hall] language`` is Catalan: the kiosk
(signed in, during a sale), the information board and the sign-in page show no English text
of the catalog, amounts are written "20,00 €", and ``<html lang>`` says the language; the
player's chooser turns the kiosk to Castilian, French and English, and the board follows its
``?lang=``.  Screenshots per screen and language go to ``$BINGO_SCREENSHOTS`` when it is set."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from hall_server import i18n
from tests.support.catalogs import english_texts
from tests.terminals.test_kiosk_browser import HANDHELD, KIOSK, Staff, kiosk_page, player
from tests.web.conftest import HallProcess
from tests.web.test_console_browser import browser, shot  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

BOARD = {"width": 1920, "height": 1080}
#: The hall's name: the hall's own words from hall.toml, not the catalog's.  (Its warnings and help
#: are the catalog's defaults here, said in each page's language.)
OPERATOR_TEXT = "#hall, #hall-name"
#: The text of the page a person sees: every visible text node, outside the operator's words.
VISIBLE_TEXT = """(skip) => {
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || !element.checkVisibility() || element.closest(skip)) continue;
    texts.push(node.textContent.trim());
  }
  // A placeholder, and what CSS writes into an empty list (content: attr(data-empty)).
  const shown = (name) => [...document.querySelectorAll(`[${name}]`)].filter((e) => e.checkVisibility()
    && (name !== "data-empty" || !e.children.length)).map((e) => e.getAttribute(name));
  return texts.concat(shown("placeholder"), shown("data-empty"));
}"""


def english_left(language: str) -> list[tuple[str, re.Pattern[str]]]:
    """For each catalog text ``language`` writes otherwise than English: the English msgid and a
    pattern finding it (placeholders match anything) in a text of the page."""
    return [(text.english, text.pattern) for text in english_texts(i18n.catalog(language))]


def english_on(page: Any, language: str) -> list[str]:
    """The catalog's English texts the page shows while it speaks ``language``."""
    texts = page.evaluate(VISIBLE_TEXT, OPERATOR_TEXT)
    return sorted({f"{english!r} in {text!r}" for text in texts for english, pattern in english_left(language)
                   if pattern.search(text)})


def said_warnings(language: str) -> set[str]:
    """The default warnings (R97.2) as a page speaking ``language`` says them."""
    from hall_server.config import DEFAULT_WARNINGS

    return {i18n.translate(language, warning) for warning in DEFAULT_WARNINGS}


@pytest.fixture(scope="module")
def catalan_hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HallProcess, str, str]]:
    """A hall speaking Catalan, its session open, a player with 20 € and a terminal during a sale."""
    hall = HallProcess(Path(tmp_path_factory.mktemp("catalan-hall")), language="ca").start()
    try:
        staff = Staff(hall)
        staff.open_the_session()
        account = player(staff, "33333333C", 2_000)
        token = staff("rosa", "enrol_terminal", terminal="K1", place="row A")["result"]["token"]
        staff("sam", "announce_sale", series=1001)
        staff("sam", "open_terminal_sale", seconds=600)
        yield hall, account, token
    finally:
        hall.stop()


def test_the_kiosk_speaks_the_halls_catalan_and_each_language_the_player_picks(
    catalan_hall: tuple[HallProcess, str, str], browser: Any
) -> None:
    hall, account, token = catalan_hall
    kiosk = kiosk_page(browser, hall, KIOSK, "K1", token)
    assert kiosk.evaluate("document.documentElement.lang") == "ca"
    assert english_on(kiosk, "ca") == []  # the sign-in panel
    kiosk.fill("#account", account)
    kiosk.fill("#pin", "4821")
    kiosk.press("#pin", "Enter")
    kiosk.wait_for_selector("#play:not([hidden])")
    kiosk.wait_for_selector("#sale-state:has-text('Venda oberta')")
    assert kiosk.inner_text("#credit") == "20,00\xa0€"
    assert kiosk.inner_text("#game-title") == "Partida 1 · a la venda"
    assert english_on(kiosk, "ca") == []
    shot(kiosk, "languages-kiosk-ca")
    for language, title in (("es", "Partida 1 · a la venta"), ("fr", "Partie 1 · en vente"), ("en", "Game 1 · on sale")):
        kiosk.click(f".language-chooser button[data-language={language}]")
        kiosk.wait_for_selector(f"html[lang={language}]", state="attached")
        assert kiosk.inner_text("#game-title") == title
        assert kiosk.inner_text("#link") == {"es": "conectado", "fr": "en ligne", "en": "online"}[language]
        if language != "en":
            assert english_on(kiosk, language) == [], language
        assert kiosk.inner_text("#warning") in said_warnings(language), language
        shot(kiosk, f"languages-kiosk-{language}")
    # The choice stays on this terminal: the page opened again (a new connection, signed out) speaks English.
    kiosk.reload()
    kiosk.wait_for_selector("#sign-in-panel:not([hidden])")
    assert kiosk.evaluate("document.documentElement.lang") == "en"
    assert kiosk.inner_text("#sign-in-panel h1") == "Sign in"


def test_the_handheld_speaks_each_language_and_fits_its_width(
    catalan_hall: tuple[HallProcess, str, str], browser: Any
) -> None:
    """A player's own handheld (390 x 844) during a sale, in each language: no English on it but the names,
    nothing wider than the screen, a screenshot of each."""
    hall, _, _ = catalan_hall
    staff = Staff(hall)
    account = player(staff, "44444444D", 2_000)
    token = staff("rosa", "enrol_terminal", terminal="H1", place="handheld 1")["result"]["token"]
    handheld = kiosk_page(browser, hall, HANDHELD, "H1", token)
    handheld.fill("#account", account)
    handheld.fill("#pin", "4821")
    handheld.press("#pin", "Enter")
    handheld.wait_for_selector("#play:not([hidden])")
    for language in ("ca", "es", "fr", "en"):
        if language != "ca":
            handheld.click(f".language-chooser button[data-language={language}]")
        handheld.wait_for_selector(f"html[lang={language}]", state="attached")
        if language != "en":
            assert english_on(handheld, language) == [], language
        assert handheld.evaluate("document.documentElement.scrollWidth") <= HANDHELD["width"], language
        shot(handheld, f"languages-handheld-{language}")
    handheld.context.close()


def test_the_board_and_the_sign_in_page_speak_the_halls_catalan(
    catalan_hall: tuple[HallProcess, str, str], browser: Any
) -> None:
    hall, _, _ = catalan_hall
    context = browser.new_context(ignore_https_errors=True, viewport=BOARD)
    board = context.new_page()
    for language in ("ca", "es", "fr", "en"):
        board.goto(hall.base + ("/board" if language == "ca" else f"/board?lang={language}"))
        board.wait_for_selector("#sale-screen:not([hidden])")
        board.wait_for_selector(f"html[lang={language}]", state="attached")
        board.wait_for_selector("#link:not(.offline)")
        if language != "en":
            assert english_on(board, language) == [], language
        board.wait_for_selector("#warning:not([hidden])")
        assert board.inner_text("#warning") in said_warnings(language), language
        shot(board, f"languages-board-{language}")
    board.goto(hall.base + "/board")
    board.wait_for_selector("#sale-screen:not([hidden])")
    assert board.inner_text("#sale-game") == "Partida 1"
    assert board.inner_text("#sale-price").startswith("1,00\xa0€ el cartró")
    login = context.new_page()
    login.goto(hall.base + "/login")
    login.wait_for_selector("html[lang=ca]", state="attached")
    assert login.inner_text("h1") == "Consola de la sala de bingo"
    assert english_on(login, "ca") == []
    shot(login, "languages-login-ca")

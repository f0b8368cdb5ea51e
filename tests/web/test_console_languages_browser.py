"""The staff console in each language, in a real headless browser (Debian's chromium driven by
Playwright) against one hall process whose ``[hall] language`` is Catalan: every role signs in
and its desk opens in the hall's Catalan; the console's chooser turns it to Castilian, French
and English, the choice kept on the device.  On a Catalan, Castilian or French desk no visible
text is an English text of the console's catalog, ``<html lang>`` says the language, amounts
are written by CLDR's rules ("500,00 €"), and no button, heading or label is cut off.  A screenshot of each desk at 1280x800 in each
language goes to the test's temporary folder (and to ``$BINGO_SCREENSHOTS`` when it is set)."""

from __future__ import annotations

import functools
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, Iterator

import pytest

from hall_server import i18n
from hall_server.statements import format_account_number
from tests.support.catalogs import English, english_texts
from tests.support.waiting import WAIT
from tests.terminals.test_kiosk_browser import Staff, payload, player
from tests.web.conftest import PASSWORD, HallProcess
from tests.web.test_board_browser import claimed
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, console_for, shot

pytestmark = pytest.mark.integration

#: What the console shows as the hall wrote it, not from the catalog: the hall's and the staff's
#: names, and the journal's records (their names and data as recorded: the regulator's words).
RECORDED_TEXT = "#hall-name, #me, #log"
#: The text a person reads on the page: every visible text node outside the recorded words, the
#: placeholders of the visible fields and the choice each visible list shows.
VISIBLE_TEXT = """(skip) => {
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || element.closest("option, script") || element.closest(skip)) continue;
    if (element.checkVisibility()) texts.push(node.textContent.trim());
  }
  // What CSS writes beside a heading or a state line ("← next", content: attr(data-next)).
  for (const element of document.querySelectorAll("h2, .state-line")) {
    if (!element.checkVisibility() || element.closest(skip)) continue;
    for (const where of ["::before", "::after"]) {
      const content = getComputedStyle(element, where).content;
      if (content && content !== "none" && content !== "normal") texts.push(content.replace(/^"|"$/g, "").trim());
    }
  }
  for (const field of document.querySelectorAll("[placeholder]")) {
    if (field.checkVisibility() && !field.closest(skip)) texts.push(field.getAttribute("placeholder"));
  }
  for (const select of document.querySelectorAll("select")) {
    const chosen = select.selectedOptions[0];
    if (chosen && select.checkVisibility() && !select.closest(skip)) texts.push(chosen.textContent.trim());
  }
  return texts;
}"""
#: What does not fit its box: the top bar itself, what wraps below it, and any visible button, heading
#: or field label whose text runs past its edge.
CUT_OFF = """() => {
  const bar = document.querySelector("header.bar");
  const cut = bar.scrollWidth > bar.clientWidth + 1 ? ["the top bar"] : [];
  const bottom = bar.getBoundingClientRect().bottom;
  for (const element of bar.querySelectorAll("button, span, h1")) {  // on the bar's one line, not wrapped under it
    if (element.checkVisibility() && element.getBoundingClientRect().bottom > bottom + 1) cut.push(element.textContent.trim());
  }
  for (const element of document.querySelectorAll("header.bar button, #screen button, #screen h2, #screen label, .tabs button")) {
    if (element.checkVisibility() && element.scrollWidth > element.clientWidth + 1) cut.push(element.textContent.trim());
  }
  return cut;
}"""
#: Each language's words for the desk's tab, as the catalog has them.
MY_DESK = {"ca": "El meu lloc", "es": "Mi puesto", "fr": "Mon poste", "en": "My desk"}
ROLES = ["admin", "rosa", "tomas", "sam", "carla", "adam"]


@functools.cache
def english_left(language: str) -> list[English]:
    """For each text of the console's catalog that ``language`` writes otherwise than English: the
    English msgid, its words between placeholders, and a pattern finding it in a text of the page (a
    placeholder matches anything)."""
    return english_texts(i18n.domain_catalog(language, "console"))


def english_on(page: Any, language: str) -> list[str]:
    """The console catalog's English texts the page shows while it speaks ``language``."""
    texts = set(page.evaluate(VISIBLE_TEXT, RECORDED_TEXT))
    assert texts, "no text on the page"
    return sorted({f"{english!r} in {text!r}" for text in texts for english, words, pattern in english_left(language)
                   if all(word in text for word in words) and pattern.search(text)})


@pytest.fixture(scope="module")
def catalan_hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HallProcess, str, Staff]]:
    """A hall speaking Catalan with something on every desk: the session open, a terminal, a visitor
    with an account of 20 €, a game on sale with 12 paper cards sold, a complaint waiting for the room
    chief; and the staff signed in on the command channel (a request id is never sent twice)."""
    hall = HallProcess(Path(tmp_path_factory.mktemp("console-languages")), language="ca").start()
    try:
        staff = Staff(hall)
        staff.open_the_session()
        account = player(staff, "33333333C", 2_000)
        staff("admin", "enrol_terminal", terminal="K1", place="row A")
        staff("sam", "announce_sale", series=1001)
        staff("sam", "sell_cards", series=1001, first=1, last=12)
        staff("adam", "record_complaint", complainant="Marta Soler", text="The caller read 61 as 16")
        yield hall, account, staff
    finally:
        hall.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One browser for the module's pages (each role signs in in its own context)."""
    from playwright import sync_api

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


def picture(page: Any, folder: Path, name: str, whole: bool = False) -> None:
    """The page as staff see it at 1280x800, and ``whole``, the desk down to its end."""
    page.screenshot(path=str(folder / f"{name}.png"))
    if whole:  # the desk scrolls inside the page: a taller window shows all of it
        page.set_viewport_size({"width": 1280, "height": 2400})
        page.screenshot(path=str(folder / f"{name}-whole.png"))
        page.set_viewport_size(VIEWPORT)
    shot(page, name)


#: The verification's record keeps a fault of several phrases as phrases within a phrase (``Phrase.said``).
NESTED_FAULT = """() => I18n.said({message: "{fault}; {more}", parts: {
  fault: {message: "the {blower} blower is not connected", parts: {blower: "main"}},
  more: {message: "record {seq}: {fault}", parts: {seq: "3", fault: {
    message: "its signature does not verify (altered or forged)", parts: {}}}}}}, "")"""


@pytest.mark.parametrize("name", ROLES)
def test_each_desk_speaks_the_halls_catalan_and_each_language_staff_pick(
    catalan_hall: tuple[HallProcess, str, Staff], chromium: Any, name: str, tmp_path: Path
) -> None:
    hall, account, _ = catalan_hall
    page = console_for(chromium, hall, name)
    page.wait_for_selector("#screen > section", state="attached")  # the desk, from the picture
    # The sign-in page and the console open in the hall's language.
    assert page.evaluate("document.documentElement.lang") == "ca"
    assert page.inner_text("#tab-desk") == MY_DESK["ca"]
    if name == "carla":
        page.fill("#account-number", account)
        page.press("#account-number", "Enter")
        page.wait_for_selector("#account .account-balance")
        assert page.inner_text("#account .account-balance") == "20,00\xa0€"
        assert page.locator("#screen ul.drawers li").first.inner_text() == "desk-1: oberta · 520,00\xa0€ · en mans de carla"
    if name == "sam":
        assert page.locator("#receipt tfoot th").all_inner_texts() == ["Import total", "", "12", "12,00\xa0€"]
    for language in ("ca", "es", "fr", "en"):
        if language != "ca":
            page.click(f"#language button[data-language={language}]")
            page.wait_for_selector(f"html[lang={language}]", state="attached")
        assert page.inner_text("#tab-desk") == MY_DESK[language]
        assert page.get_attribute(f"#language button[data-language={language}]", "aria-pressed") == "true"
        if language != "en":
            assert english_on(page, language) == [], language
        assert page.evaluate(CUT_OFF) == [], language
        picture(page, tmp_path, f"console-{name}-{language}", whole=language == "ca")
        if language == "ca" and name == ROLES[0]:
            # A fault made of faults (a check's several, the journal's "record N: ...") is said part by part.
            assert page.evaluate(NESTED_FAULT) == ("el bombo principal no està connectat; registre 3: la seva signatura "
                                                   "no es verifica (alterat o falsificat)")
        if language == "ca":
            # Every command the role may give, each with its summary, in Catalan too.
            page.click("#tab-commands")
            page.locator("#commands .command-row .hint").first.wait_for()
            assert english_on(page, language) == [], "All commands"
            picture(page, tmp_path, f"console-{name}-ca-all-commands")
            page.click("#tab-desk")
    assert page.inner_text("#price") == "€1.00"  # CLDR's English
    # The choice stays on this device: the console opened again speaks English.
    page.reload()
    page.wait_for_selector("#screen > section", state="attached")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.inner_text("#tab-desk") == "My desk"
    page.context.close()


def test_the_console_takes_the_language_picked_on_the_sign_in_page(
    catalan_hall: tuple[HallProcess, str, Staff], chromium: Any
) -> None:
    hall, _, _ = catalan_hall
    page = chromium.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 800}).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(hall.base + "/login")
    page.wait_for_selector("html[lang=ca]", state="attached")
    page.click(".language-chooser button[data-language=fr]")
    page.wait_for_selector("html[lang=fr]", state="attached")
    page.fill("#name", "rosa")
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_url("**/console")
    page.wait_for_selector("#screen > section", state="attached")
    assert page.evaluate("document.documentElement.lang") == "fr"
    assert page.inner_text("#tab-desk") == "Mon poste"
    assert page.inner_text("#session-state") == "séance 1 ouverte"
    page.context.close()


def test_the_draw_and_a_line_found_read_in_each_language(
    catalan_hall: tuple[HallProcess, str, Staff], chromium: Any, tmp_path: Path
) -> None:
    """The desks of the draw once a line is found and verified: the prize held open for another card
    (R85.6), the balls, the winners and the steps, in each language."""
    hall, _, staff = catalan_hall
    staff("rosa", "close_sale")
    for count in range(1, 91):
        (drawn,) = [r for r in staff("sam", "draw_ball")["records"] if r["type"] == "ball_drawn"]
        if cards := payload(hall, drawn["seq"])["completed_line"]:
            break
    else:
        raise AssertionError("no card completed a line in 90 balls")
    claimed(staff, cards[:1])
    for name in ("sam", "rosa", "tomas"):
        page = console_for(chromium, hall, name)
        page.wait_for_selector(".pause-banner:not([hidden])")
        assert page.inner_text("#ball-count") == f"bola {count} de 90"
        assert page.inner_text(".pause-title") == "LÍNIA! Algun altre cartró?"
        for language in ("ca", "es", "fr"):
            if language != "ca":
                page.click(f"#language button[data-language={language}]")
                page.wait_for_selector(f"html[lang={language}]", state="attached")
            assert english_on(page, language) == [], language
            assert page.evaluate(CUT_OFF) == [], language
            picture(page, tmp_path, f"console-{name}-line-{language}")
        page.click("#language button[data-language=ca]")  # the next role's page starts in the hall's language
        page.context.close()


def test_a_refusal_reads_in_the_language_of_the_cashiers_console_and_stays_english_in_the_journal(
    catalan_hall: tuple[HallProcess, str, Staff], chromium: Any
) -> None:
    """The server's refusal to staff in the console's language: the cashier's console, in Catalan, shows
    the account's movement in Catalan and asks to pay out more than the account holds; the hall's answer reads in Catalan (amounts by
    CLDR), then in French once the chooser turned the console to French.  The refusals wrote nothing
    in the journal, whose records stay in English, and a request that names no language (a script,
    the CLI) or one the hall does not speak is answered in English, as before."""
    hall, account, staff = catalan_hall

    def journal() -> list[str]:
        with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as database, database:
            return [text for (text,) in database.execute("SELECT payload FROM journal ORDER BY seq")]

    before = journal()
    number = format_account_number(account)
    page = console_for(chromium, hall, "carla")
    page.wait_for_selector("#screen > section", state="attached")
    page.fill("#account-number", account)
    page.press("#account-number", "Enter")
    page.wait_for_selector("#account .account-balance")
    # The account's movement reads in Catalan, as the statement prints it; the journal keeps its English reason.
    movements = page.locator("#account .receipt-table")
    movements.filter(has_text="crèdit carregat en efectiu a la caixa desk-1").wait_for()
    assert "credit loaded" not in movements.inner_text()
    wanted = {"ca": f"el compte {number} té 20,00\xa0€; no pot pagar 500,00\xa0€",
              "fr": f"le compte {number} contient 20,00\xa0€\xa0; il ne peut pas payer 500,00\xa0€"}
    for language in ("ca", "fr"):
        if language != "ca":
            page.click(f"#language button[data-language={language}]")
            page.wait_for_selector(f"html[lang={language}]", state="attached")
        box = page.locator('#screen form[data-command="cash_out"] >> visible=true').first
        box.locator('[data-param="amount_cents"]').fill("500")
        box.locator('[data-param="method"]').select_option("cash")
        box.locator("button[type=submit]").click()
        box.locator(".outcome.error", has_text=wanted[language]).wait_for()
    page.context.close()
    assert journal() == before  # refused: nothing written, in any language
    assert "credit loaded in cash at desk desk-1" in "".join(before)  # the journal's own words, English
    english = f"account {number} holds 20.00 EUR; it cannot pay out 500.00 EUR"
    request = {"command": "cash_out", "args": {"account": account, "amount_cents": 50_000, "desk": "desk-1",
                                               "method": "cash", "reference": ""}}
    for n, language in enumerate((None, "de", "en", "ca")):
        asked = {**request, "id": f"refused-{n}", **({} if language is None else {"language": language})}
        status, answer = staff.clients["carla"].call("POST", "/api/command", asked)
        assert status >= 400 and answer["error"]["code"] == "refused", answer
        assert answer["error"]["message"] == (wanted["ca"] if language == "ca" else english), answer

"""The hall's public screens in the hall's language, in a real headless browser (Debian's
chromium driven by Playwright, sound allowed without a click as on a hall screen) against one
hall process over TLS whose ``[hall] language`` is Castilian, shared by the module's tests:
the board's voice speaks Castilian, the kiosk reads at WCAG AA contrast, says plainly when its
certificate is missing, names every winning card, and shows a handheld player's cards first
during the draw.  Screenshots go to ``$BINGO_SCREENSHOTS`` (docs/testing.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from hall_server import i18n
from hall_server.voice.catalog import clip_text
from hall_server.voice.clips import clip_file, espeak_program
from tests.support.waiting import WAIT, wait_until
from tests.terminals.test_kiosk_browser import HANDHELD, KIOSK, Staff, kiosk_page, player
from tests.web.conftest import HallProcess
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS, shot

pytestmark = pytest.mark.integration

BOARD = {"width": 1920, "height": 1080}
#: Real-time speech: about a second a clip, so the page's queue is given longer than a page action.
SPEECH = 4 * WAIT


class Hall:
    """The Castilian hall, its session open, two players, two enrolled terminals and a game on sale."""

    def __init__(self, process: HallProcess) -> None:
        self.process = process
        self.staff = Staff(process)
        self.staff.open_the_session()
        self.accounts = [player(self.staff, document, 2_000) for document in ("44444444D", "55555555E")]
        self.tokens = {terminal: self.staff("rosa", "enrol_terminal", terminal=terminal, place=place)["result"]["token"]
                       for terminal, place in (("K1", "row A"), ("K2", "row B"), ("H1", "handheld 1"))}
        self.staff("sam", "announce_sale", series=1001)
        self.selling = False

    def terminal_sale(self) -> None:
        """The terminals' sale open, once, long enough for the module's purchases."""
        if not self.selling:
            self.staff("sam", "open_terminal_sale", seconds=900)
            self.selling = True


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hall]:
    if espeak_program() is None:
        pytest.fail("espeak-ng is missing: apt-get install espeak-ng (scripts/system-deps.sh)")
    process = HallProcess(Path(tmp_path_factory.mktemp("castilian-hall")), language="es").start()
    try:
        yield Hall(process)
    finally:
        process.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Chromium as a hall screen is set up: sound plays without a click."""
    from playwright import sync_api  # a missing Playwright fails the test: ./test.sh installs it

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        args = [*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"]
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        yield browser
        browser.close()


def voice(page: Any) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        "({played: boardVoice.played.slice(), skipped: boardVoice.skipped.slice(), lang: boardVoice.lang})")
    return state


@pytest.mark.req("R92.11-12", "R93.15")
def test_voice_the_board_of_a_castilian_hall_speaks_castilian(hall: Hall, chromium: Any) -> None:
    """No ?lang=: the board speaks the hall's language, its button too, and each clip it asks for is
    the Castilian text of the catalog, made by espeak-ng with the Castilian voice."""
    board = chromium.new_context(ignore_https_errors=True, viewport=BOARD).new_page()
    board.set_default_timeout(WAIT * 1000)
    board.goto(f"{hall.process.base}/board")
    board.wait_for_selector("#link:not(.offline)")
    board.wait_for_selector("html[lang=es]", state="attached")
    assert voice(board)["lang"] == "es"
    assert board.inner_text("#voice-toggle") == i18n.translate("es", "Sound: on") == "Sonido: activado"

    hall.staff("rosa", "announce_last_game")
    wait_until(lambda: "/voice/es/last-game.wav" in voice(board)["played"], SPEECH,
               "the board to speak the last game in Castilian", seen=lambda: voice(board))
    assert voice(board)["skipped"] == [] and all(u.startswith("/voice/es/") for u in voice(board)["played"])
    # What was spoken: the catalog's Castilian sentence, kept by the hall as the clip it made.
    said = clip_text("es", "last-game")
    assert said == i18n.translate("es", "Attention: the last game of the session is starting.")
    assert said == "Atención: empieza la última partida de la sesión."
    assert clip_file(hall.process.folder / "voice", "es", said).is_file()
    assert clip_text("es", "ball-42") == "el 42" and clip_text("fr", "ball-42") == "le 42"
    shot(board, "public-board-voice-es")
    board.context.close()


def kiosk(hall: Hall, browser: Any, viewport: dict[str, int], terminal: str) -> Any:
    page = kiosk_page(browser, hall.process, viewport, terminal, hall.tokens[terminal])
    page.wait_for_selector("html[lang=es]", state="attached")
    return page


def sign_in_and_buy(page: Any, account: str, quantity: int) -> None:
    page.fill("#account", account)
    page.fill("#pin", "4821")
    page.press("#pin", "Enter")
    page.wait_for_selector("#play:not([hidden])")
    page.wait_for_selector("#buy:not([disabled])")
    page.fill("#quantity", str(quantity))
    page.click("#buy")
    page.wait_for_selector("#message.ok")
    assert page.locator("#cards .card").count() == quantity


def contrasts(page: Any, selector: str) -> list[tuple[str, float]]:
    """Each shown element of ``selector``: its text and its contrast against what is behind it."""
    from tests.web.test_board_layout_browser import CONTRAST

    found: list[tuple[str, float]] = page.evaluate(
        "(selector) => { const ratio = " + CONTRAST + "; return [...document.querySelectorAll(selector)]"
        ".filter((el) => el.checkVisibility() && el.textContent.trim())"
        ".map((el) => [el.textContent.trim(), ratio(el)]); }", selector)
    return found


def test_kiosk_contrast_uncalled_numbers_and_buttons_reach_wcag_aa(hall: Hall, chromium: Any) -> None:
    """The 1-90 board's uncalled numbers and every button read at 4.5:1 or more (WCAG AA), computed in
    the browser from the page's styles, during the sale (every button shown) and signed in."""
    hall.terminal_sale()
    page = kiosk(hall, chromium, KIOSK, "K1")
    sign_in_and_buy(page, hall.accounts[0], 6)
    shot(page, "public-kiosk-contrast-es")
    uncalled = contrasts(page, "#drawn li:not(.called)")
    assert len(uncalled) == 90, uncalled
    buttons = contrasts(page, "button")
    assert {"Comprar", "Cerrar sesión"} <= {text for text, _ in buttons}, buttons
    low = [(text, round(ratio, 2)) for text, ratio in uncalled + buttons if ratio < 4.5]
    assert not low, f"below WCAG AA's 4.5:1: {low}"
    page.context.close()  # a terminal's page left open would take its connection back from the next one


def test_kiosk_without_its_certificate_says_so_plainly_and_to_call_staff(hall: Hall, chromium: Any) -> None:
    """A device holding the terminal's id and token but not its certificate: the hall refuses its
    WebSocket (403 at the handshake); the page says why and what to do, in the hall's Castilian,
    instead of a sign-in form that cannot work."""
    from tests.web.test_languages_browser import english_on

    context = chromium.new_context(ignore_https_errors=True, viewport=KIOSK)  # no client certificate
    page = context.new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{hall.process.base}/kiosk#terminal=K1&token={hall.tokens['K1']}")
    page.wait_for_selector("#no-certificate:not([hidden])")
    page.wait_for_selector("html[lang=es]", state="attached")
    assert page.is_hidden("#sign-in-panel") and page.is_hidden("#enrol")
    said = page.inner_text("#no-certificate")
    assert i18n.translate("es", "This terminal cannot play: its certificate is missing") in said
    assert i18n.translate("es", "Please call a member of staff.") in said
    assert english_on(page, "es") == []
    shot(page, "public-kiosk-no-certificate-es")
    # The same words in the player's language.
    page.click(".language-chooser button[data-language=fr]")
    page.wait_for_selector("html[lang=fr]", state="attached")
    assert i18n.translate("fr", "Please call a member of staff.") in page.inner_text("#no-certificate")
    context.close()


class Relay:
    """A kiosk's WebSocket passed through to the hall by Playwright, every message as the hall sent
    it; the test may add messages of the protocol between them (each numbered in turn)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.route: Any = None
        self.sent = 0  # messages the page has been given
        self.added = 0
        self.states: list[dict[str, Any]] = []
        page.route_web_socket("**/kiosk/ws", self._open)

    def _open(self, route: Any) -> None:
        self.route, self.sent, self.added = route, 0, 0
        route.connect_to_server().on_message(self._from_hall)

    def _from_hall(self, text: str | bytes) -> None:
        message = json.loads(text)
        if message["type"] == "state":
            self.states.append(message)
        self.add(message, seq=message["seq"] + self.added)

    def add(self, message: dict[str, Any], seq: int | None = None) -> None:
        if seq is None:  # a message of the test's: the hall's next ones are numbered after it
            self.added += 1
            seq = self.sent + 1
        self.sent = seq
        self.route.send(json.dumps({**message, "seq": seq}))


def test_kiosk_win_banner_names_every_winning_card_of_the_player(hall: Hall, chromium: Any) -> None:
    """The hall sends one "won" a card (``TerminalGateway._prizes_paid``): when two cards of the player
    share the line, both come one after the other, and the banner names both with their amounts and the
    whole credited, not only the last.  The kiosk plays against the hall through a relay that adds the
    two messages as the hall words them, for two of the player's real cards."""
    hall.terminal_sale()
    context = chromium.new_context(ignore_https_errors=True, viewport=KIOSK, client_certificates=[
        {"origin": hall.process.base, "certPath": str(path), "keyPath": str(key)}
        for path, key in [hall.process.certificate("terminal", "K2")]])
    page = context.new_page()
    page.set_default_timeout(WAIT * 1000)
    relay = Relay(page)
    page.goto(f"{hall.process.base}/kiosk#terminal=K2&token={hall.tokens['K2']}")
    page.wait_for_selector("#link.online")
    page.wait_for_selector("html[lang=es]", state="attached")
    page.fill("#account", hall.accounts[0])
    page.fill("#pin", "4821")
    page.press("#pin", "Enter")
    page.wait_for_selector("#play:not([hidden])")
    if page.locator("#cards .card").count() < 2:
        page.fill("#quantity", "2")
        page.click("#buy")
        page.wait_for_selector("#message.ok")
    first, second = page.locator("#cards .card").evaluate_all("(cards) => cards.slice(0, 2).map((c) => c.dataset.card)")
    game_id = relay.states[-1]["game"]["game_id"]
    for card, cents in ((first, 1_250), (second, 625)):
        relay.add({"v": 1, "type": "won", "game_id": game_id, "card": card, "prize": "line", "cents": cents})
    page.wait_for_selector(f"#message.ok:has-text('{second}')")
    banner = page.inner_text("#message")
    assert banner == i18n.translate(
        "es", "You won the {prize} with {n} cards, {cards}: {amount} in all, credited to your account",
        prize="línea", n=2, cards=f"{first} (12,50\xa0€), {second} (6,25\xa0€)", amount="18,75\xa0€"), banner
    assert page.locator("#won li").count() == 2 and page.locator("#cards .card.winner").count() == 2
    shot(page, "public-kiosk-two-cards-won-es")
    # A win of another prize afterwards is a banner of its own.
    relay.add({"v": 1, "type": "won", "game_id": game_id, "card": second, "prize": "bingo", "cents": 5_000})
    page.wait_for_selector("#message.ok:has-text('bingo')")
    assert first not in page.inner_text("#message") and second in page.inner_text("#message")
    context.close()


@pytest.mark.req("R97.2")
def test_responsible_play_default_messages_on_the_public_screens_are_in_the_halls_language(
        hall: Hall, chromium: Any) -> None:
    """hall.toml leaves [responsible_play] unset: the board's footer and the kiosk's warning and help
    show the default messages in the hall's Castilian (docs/languages.md)."""
    from hall_server.config import DEFAULT_HELP, DEFAULT_WARNINGS

    castilian = [i18n.translate("es", w) for w in DEFAULT_WARNINGS]
    assert not set(castilian) & set(DEFAULT_WARNINGS)
    board = chromium.new_context(ignore_https_errors=True, viewport=BOARD).new_page()
    board.set_default_timeout(WAIT * 1000)
    board.goto(f"{hall.process.base}/board")
    board.wait_for_selector("#warning:not([hidden])")
    assert board.inner_text("#warning") in castilian
    board.context.close()
    page = kiosk(hall, chromium, KIOSK, "K1")
    page.wait_for_selector("#warning:not(:empty)")
    assert page.inner_text("#warning") in castilian
    page.click("#care-open")
    page.wait_for_selector("#care:not([hidden])")
    assert page.inner_text("#care-help") == i18n.translate("es", DEFAULT_HELP)
    shot(page, "public-kiosk-help-es")
    page.context.close()


def test_kiosk_handheld_390x844_during_the_draw_the_players_cards_come_first(hall: Hall, chromium: Any) -> None:
    """On a handheld the sale panel sits above the cards while cards are bought; once the draw
    begins the cards come first, the first one whole within the screen without scrolling, and the
    sale panel, whose button is off, folds to its one line.
    (The module's last test: it closes the sale and draws.)"""
    hall.terminal_sale()
    page = kiosk(hall, chromium, HANDHELD, "H1")
    sign_in_and_buy(page, hall.accounts[1], 6)
    shot(page, "public-handheld-sale-es")
    hall.staff("rosa", "close_sale")
    hall.staff("sam", "draw_ball")
    page.wait_for_selector("#drawn li.called")
    assert page.evaluate("scrollY") == 0
    first = page.evaluate("document.querySelector('#cards .card').getBoundingClientRect().toJSON()")
    assert 0 <= first["top"] and first["bottom"] <= HANDHELD["height"], first
    assert page.is_hidden("#buy-form") and page.is_visible("#sale-state")  # the sale folded to its one line
    assert page.is_visible("#last-balls")  # the balls still shown, after the cards
    assert page.evaluate("document.documentElement.scrollWidth") <= HANDHELD["width"]  # no sideways scrolling
    shot(page, "public-handheld-draw-es")
    page.context.close()

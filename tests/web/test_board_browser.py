"""The information board on a 1920x1080 hall screen, in a real headless browser (Debian's
chromium driven by Playwright) against the hall server process over TLS, through a whole
game: the welcome before the session, the next game's sale with the terminals' countdown,
the draw, the LINE and BINGO banners with the winning cards and what each is paid, the
game's close and the next game's screen with the last result and the operator's
responsible-play messages (R85.5, R92.11, R93.1, R97.2)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.waiting import WAIT, wait_until
from tests.terminals.test_kiosk_browser import Staff, payload
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_console_browser import browser, hall, shot  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

SCREEN = {"width": 1920, "height": 1080}
COUNTDOWN = re.compile(r"Terminals' sale closes in (\d+):(\d\d)")


def euros(cents: int) -> str:
    """An amount as the board shows it in English (CLDR: ``€1,234.56``)."""
    return f"€{cents // 100:,}.{cents % 100:02d}"


def board_page(browser: Any, hall: HallProcess) -> Any:
    page = browser.new_context(ignore_https_errors=True, viewport=SCREEN).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{hall.base}/board")
    page.wait_for_selector("#link:not(.offline)")
    return page


def fits_the_screen(page: Any) -> None:
    """Nothing spills past the 1920x1080 screen: a hall screen cannot scroll."""
    width, height = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    assert (width, height) == (SCREEN["width"], SCREEN["height"]), (width, height)


def seconds_left(page: Any) -> int:
    match = COUNTDOWN.fullmatch(page.inner_text("#sale-countdown"))
    assert match, page.inner_text("#sale-countdown")
    return int(match[1]) * 60 + int(match[2])


def draw_until(staff: Staff, pattern: str) -> tuple[int, list[str]]:
    """Draw until a ball completes ``pattern`` on a card: (the ball's count, the cards)."""
    for count in range(1, 91):
        (drawn, *_) = staff("sam", "draw_ball")["records"]
        cards = payload(staff.hall, drawn["seq"])[f"completed_{pattern}"]
        if cards:
            return count, cards
    raise AssertionError(f"no card completed the {pattern} in 90 balls")


def claimed(staff: Staff, cards: list[str]) -> None:
    """The table chief verifies each card (R85.11)."""
    for label in cards:
        series, number = label.split("-")
        staff("tomas", "verify_claim", series=int(series), card_number=int(number))


def paid(hall: HallProcess, answer: dict[str, Any], prize: str) -> dict[str, int]:
    """What ``pay_prizes`` paid each card of ``prize``, read from its prize_paid record."""
    for record in answer["records"]:
        if record["type"] == "prize_paid" and (p := payload(hall, record["seq"]))["prize"] == prize:
            return {card: cents for card, cents in p["payments"]}
    raise AssertionError(f"no {prize} paid in {answer}")


def banner_cards(page: Any) -> dict[str, str]:
    """The banner's cards and the amount shown for each."""
    names = page.locator("#banner-cards li .card-name").all_inner_texts()
    amounts = page.locator("#banner-cards li .card-amount").all_inner_texts()
    return dict(zip(names, amounts))


@pytest.mark.req("R85.5", "R85.6", "R92.11-12", "R93.1", "R93.15", "R97.2")
def test_the_board_follows_a_game_from_its_sale_to_the_next_game_with_the_banners_and_amounts(
    hall: HallProcess, browser: Any
) -> None:
    board = board_page(browser, hall)
    # Before the session: a welcome and the operator's messages, nothing of a game.
    board.wait_for_selector("#next-screen:not([hidden]) #next-when:has-text('The session opens soon')")
    assert board.is_visible("#warning") and board.inner_text("#warning").strip()
    shot(board, "board-welcome")
    fits_the_screen(board)

    staff = Staff(hall)
    staff("admin", "run_verification", date="2026-11-29")
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
    staff("sam", "announce_sale", series=1001)
    staff("rosa", "announce_last_game")

    # The sale: price, cards sold as they are sold, the terminals' countdown on the hall's clock.
    board.wait_for_selector("#sale-screen:not([hidden])")
    board.wait_for_selector("#sale-countdown:has-text('not open yet')")
    staff("sam", "open_terminal_sale", seconds=300)
    board.wait_for_selector("#sale-countdown:has-text('closes in')")
    first = seconds_left(board)
    assert 240 < first <= 300
    wait_until(lambda: seconds_left(board) < first, WAIT, "the countdown to count down",
               seen=lambda: board.inner_text("#sale-countdown"))
    staff("sam", "sell_cards", series=1001, first=1, last=60)
    board.wait_for_selector("#sale-sold:has-text('60 cards sold')")
    assert "€1.00 a card" in board.inner_text("#sale-price")
    assert board.is_visible("#sale-last-game")  # the session's last game is announced (R93.15)
    assert board.is_visible("#warning")
    shot(board, "board-sale")
    fits_the_screen(board)

    staff("rosa", "close_sale")
    board.wait_for_selector("#draw-screen:not([hidden])")
    board.wait_for_selector("#game-state:has-text('drawing')")
    assert board.is_hidden("#warning"), "no message over the draw"
    line_prize = board.inner_text("#line-prize")
    assert line_prize.startswith("€") and line_prize != "€0.00"

    # The line: "Line! Another card?" while it is open (R85.6), then the winning cards until the next ball.
    count, cards = draw_until(staff, "line")
    board.wait_for_selector(f"#ball-count:has-text('Ball {count} of 90')")
    assert board.locator("#ball-grid .cell.drawn").count() == count
    assert board.locator("#recent-balls li").count() == min(5, count - 1)
    claimed(staff, cards)
    board.wait_for_selector("#banner.line.open:not([hidden])")
    assert board.inner_text("#banner-title") == "Line! Another card?"
    assert "call now" in board.inner_text("#banner-detail")
    shot(board, "board-line-open")
    fits_the_screen(board)
    staff("sam", "close_prize")
    board.wait_for_selector("#banner.line:not(.open):not([hidden])")
    assert board.inner_text("#banner-title") == "LINE"
    wait_until(lambda: sorted(banner_cards(board)) == sorted(cards), WAIT, "the line's cards on the banner",
               seen=lambda: banner_cards(board))
    assert board.inner_text("#banner-detail").startswith(f"after {count} balls · ")
    assert line_prize in board.inner_text("#banner-detail")
    shot(board, "board-line")
    fits_the_screen(board)
    staff("sam", "draw_ball")  # the draw goes on: the banner gives way to the numbers
    board.wait_for_selector("#banner", state="hidden")
    shot(board, "board-draw")
    fits_the_screen(board)
    line_paid = paid(hall, staff("carla", "pay_prizes", desk="desk-1"), "line")
    for card, cents in line_paid.items():
        board.wait_for_selector(f"#winners li:has-text('LINE after {count} balls: series 1001 card "
                                f"{card.split('-')[1]} · {euros(cents)}')")

    # The bingo: its banner stays through the close, and shows each card's amount once paid.
    count, cards = draw_until(staff, "bingo")
    claimed(staff, cards)
    board.wait_for_selector("#banner.bingo.open:not([hidden])")
    assert board.inner_text("#banner-title") == "Bingo! Another card?"
    shot(board, "board-bingo-open")
    fits_the_screen(board)
    staff("sam", "close_prize")
    board.wait_for_selector("#banner.bingo:not(.open):not([hidden])")
    assert board.inner_text("#banner-title") == "BINGO"
    wait_until(lambda: sorted(banner_cards(board)) == sorted(cards), WAIT, "the bingo's cards on the banner",
               seen=lambda: banner_cards(board))
    shot(board, "board-bingo")
    staff("rosa", "close_game")
    board.wait_for_selector("#game-state:has-text('game over')")
    bingo_paid = paid(hall, staff("carla", "pay_prizes", desk="desk-1"), "bingo")
    expected = {card: euros(cents) for card, cents in bingo_paid.items()}
    wait_until(lambda: banner_cards(board) == expected, WAIT, "each bingo card's amount on the banner",
               seen=lambda: banner_cards(board))
    assert board.is_visible("#banner.bingo")
    shot(board, "board-bingo-paid")
    fits_the_screen(board)

    # Cards collected: the next game's screen, the last game's result, the messages again.
    staff("rosa", "collect_cards")
    board.wait_for_selector("#next-screen:not([hidden])")
    assert board.inner_text("#next-when") == "That was the last game of the session"
    assert "cards collected" in board.inner_text("#previous-title").lower()
    results = board.inner_text("#previous-prizes")
    assert "LINE" in results and "BINGO" in results
    for card, cents in {**line_paid, **bingo_paid}.items():
        assert card in results and euros(cents) in results
    assert board.is_visible("#warning")
    shot(board, "board-next-game")
    fits_the_screen(board)

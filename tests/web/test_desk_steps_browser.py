"""The desks' steps lead to what the hall accepts, in a real headless browser (Debian's
chromium driven by Playwright) at 1280x800: a failed ball count is shown failed and the
opening is not offered, the room chief's next step is the game's during a draw, the
correction form names the last ball, and the caller sees a prize found at the top of the
desk without scrolling.

One hall server and one browser serve the module; the tests run in the order of a session.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS, give

pytestmark = pytest.mark.integration

CONSOLE = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path_factory.mktemp("hall")).start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright import sync_api  # a missing Playwright fails the test: ./test.sh installs it

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def staff(browser: Any, hall: HallProcess) -> Any:
    pages: dict[str, Any] = {}

    def page_of(name: str) -> Any:
        if name not in pages:
            page = browser.new_context(ignore_https_errors=True, viewport=CONSOLE).new_page()
            page.set_default_timeout(WAIT * 1000)
            page.goto(hall.base + "/console")
            page.fill("#name", name)
            page.fill("#password", PASSWORD)
            page.press("#password", "Enter")
            page.wait_for_url("**/console")
            page.wait_for_selector("#link:not(.offline)")
            page.wait_for_selector("#screen .task:not([hidden])")
            pages[name] = page
        return pages[name]

    return page_of


def task(page: Any, title: str) -> Any:
    """The desk's step titled ``title`` (its h2)."""
    return page.locator(f"xpath=//div[@id='screen']//section[contains(@class, 'task')][h2[normalize-space()='{title}']]")


def in_view_unscrolled(page: Any, selector: str) -> bool:
    """Whether the element is wholly inside the window with the page at its top."""
    return page.evaluate(
        """(selector) => {
            window.scrollTo(0, 0);
            const box = document.querySelector(selector).getBoundingClientRect();
            return window.scrollY === 0 && box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
        }""",
        selector,
    )


@pytest.mark.req("R84.2")
def test_desk_opening_count_with_a_missing_ball_is_shown_failed_and_keeps_the_witnesses(staff: Any) -> None:
    admin, rosa = staff("admin"), staff("rosa")
    give(admin, "run_verification", date="2026-11-29")
    count = task(rosa, "2. Count the balls (room chief, with witnesses)")
    form = count.locator('form[data-command="count_balls"]')
    form.locator('[data-param="balls_present"]').fill("1-89")
    form.locator('[data-param="witnesses"]').fill("Maria Public, Joan Witness")
    form.locator("button[type=submit]").click()
    form.locator(".outcome.error:has-text('missing 90')").wait_for()
    wait_until(lambda: "failed" in (count.get_attribute("class") or ""), what="the count step marked failed",
               seen=lambda: (count.get_attribute("class"), count.locator(".state-line").inner_text()))
    state = count.locator(".state-line").inner_text()
    assert "COUNT FAILED: missing 90" in state and "count again" in state, state
    assert "done" not in count.get_attribute("class"), "a failed count is no tick"
    assert "next" in count.get_attribute("class"), "counting again is the next step"
    sign = task(rosa, "3. Sign the opening (administrator and room chief)")
    assert "next" not in sign.get_attribute("class")
    assert sign.locator('form[data-command="sign_session_opening"]').is_hidden(), "no signature offered"
    assert form.locator('[data-param="witnesses"]').input_value() == "Maria Public, Joan Witness"

    form.locator('[data-param="balls_present"]').fill("1-90")
    form.locator("button[type=submit]").click()
    wait_until(lambda: "done" in (count.get_attribute("class") or ""), what="the count step done after a whole count")
    assert "all 90 present" in count.locator(".state-line").inner_text()
    sign.locator('form[data-command="sign_session_opening"] button[type=submit]').click()
    give(admin, "sign_session_opening")
    rosa.wait_for_selector("#session-state:has-text('session 1 open')")


def test_desk_during_a_draw_the_room_chief_is_not_sent_to_the_closing_count(staff: Any) -> None:
    sam, rosa = staff("sam"), staff("rosa")
    give(sam, "announce_sale", series="1001")
    give(sam, "sell_cards", series="1001", first="1", last="60")
    give(rosa, "close_sale")
    sam.keyboard.press("d")
    sam.wait_for_selector("#ball-count:has-text('ball 1 of 90')")
    rosa.wait_for_selector("#ball-count:has-text('ball 1 of 90')")
    rosa.click("#tab-desk")
    closing = task(rosa, "1. Count the balls")
    closing.wait_for()
    assert "next" not in (closing.get_attribute("class") or ""), "the closing count is not next during a draw"
    assert "a game is in play" in closing.locator(".state-line").inner_text()
    assert "next" not in (task(rosa, "Session closing").get_attribute("class") or "")


@pytest.mark.req("R85.5")
def test_desk_void_form_names_the_last_ball_drawn_never_a_previous_one(staff: Any) -> None:
    sam, tomas = staff("sam"), staff("tomas")
    sam.click("#tab-desk")
    form = tomas.locator('form[data-command="correct_ball"]')
    ball, corrected = form.locator('[data-param="ball"]'), form.locator('[data-param="corrected"]')
    wait_until(lambda: ball.input_value() == sam.inner_text("#last-ball"), what="the ball announced: the last ball")
    assert corrected.input_value() == "", "the ball read again starts empty"
    assert ball.evaluate("e => e.readOnly"), "the ball corrected is the last one, not typed"
    # A correction refused (this hall's balls come from the software generator) leaves no stale ball behind.
    corrected.fill("77")
    form.locator('[data-param="reason"]').fill("read 77 as 11")
    form.locator("button[type=submit]").click()
    form.locator(".outcome.error").wait_for()
    sam.keyboard.press("d")
    sam.wait_for_selector("#ball-count:has-text('ball 2 of 90')")
    last = sam.inner_text("#last-ball")
    wait_until(lambda: ball.input_value() == last, what=f"the ball announced to follow the new last ball {last}",
               seen=lambda: ball.input_value())


def test_desk_a_completed_prize_is_seen_without_scrolling_and_the_next_step_closes_it(staff: Any) -> None:
    sam, tomas = staff("sam"), staff("tomas")
    prize = sam.locator("#prize-found")
    draw = task(sam, "3. Draw")
    line_won = False
    for _ in range(90):
        if prize.is_visible():
            assert in_view_unscrolled(sam, "#prize-found"), "the prize found is seen at 1280x800 without scrolling"
            assert "next" in prize.get_attribute("class") and "next" not in draw.get_attribute("class")
            text = prize.locator(".state-line").inner_text()
            pattern = "BINGO" if "BINGO" in text else "LINE"
            assert "close the prize" in text, text
            found = re.search(r"series (\d+) card (\d+)", text)
            assert found, text
            series, card = found.groups()
            tomas.fill("#verify-series", series)
            tomas.fill("#verify-card", card)
            tomas.press("#verify-card", "Enter")
            tomas.wait_for_selector("#answer.ok:has-text('prize won')")
            close = prize.locator('form[data-command="close_prize"] button[type=submit]')
            close.wait_for()
            assert in_view_unscrolled(sam, "#prize-found")
            close.click()
            prize.wait_for(state="hidden")
            if pattern == "BINGO":
                break
            line_won = True
            continue
        count = sam.inner_text("#ball-count")
        sam.keyboard.press("d")
        sam.wait_for_function("(before) => document.querySelector('#ball-count').textContent !== before", arg=count)
        if line_won:
            # After the line is won the table chief is shown no row as a prize found (R87.a).
            tomas.wait_for_selector(f"#ball-count:has-text('{sam.inner_text('#ball-count')}')")
            chips = tomas.locator("#screen ul.cards.chips li").all_inner_texts()
            assert not [c for c in chips if c.startswith("ROW")], chips
    else:
        pytest.fail("no bingo in 90 balls")


@pytest.mark.req("R81.b")
def test_desk_admission_refuses_a_staff_document_once_in_words(staff: Any, tmp_path: Path) -> None:
    """The generated staff carry documents (sam: STAFF004): the door refuses it, saying so once."""
    admin, adam = staff("admin"), staff("adam")
    banned = tmp_path / "prohibidos.csv"
    banned.write_text("document,name,until\n12345678Z,Pere Roca,\n")
    admin.click("#tab-commands")
    admin.click('#commands button[data-command="import_banned_list"]')
    admin.set_input_files("#command-fields input[type=file]", str(banned))
    wait_until(lambda: admin.input_value('#command-fields [data-param="source"]') == "prohibidos.csv",
               what="the file's name in the source field")
    admin.locator("#command-form button[type=submit]").press("Enter")
    admin.wait_for_selector("#answer.ok:has-text('Banned list imported')")
    adam.click("#tab-desk")
    form = adam.locator('#screen form[data-command="admit_visitor"]')
    form.locator('[data-param="name"]').fill("Sam Seller")
    form.locator('[data-param="document"]').fill("staff004")
    form.locator('[data-param="birth_date"]').fill("1980-01-01")
    form.locator("button[type=submit]").click()
    answer = adam.locator("#answer.error")
    answer.wait_for()
    text = answer.inner_text()
    assert text == ("Entry refused to Sam Seller: document STAFF004 belongs to sam, a member of this hall's staff; "
                    "staff may not play (R81.b), so a member of staff is not admitted as a visitor"), text
    assert text.lower().count("refused") == 1, "the refusal is said once"

"""End to end in a real headless browser (Debian's chromium driven by Playwright): staff
sign in on their own consoles, open the session with the ball count, sell paper cards,
draw with the keyboard, verify a claim, and the hall screen shows the same ball."""

import os
from pathlib import Path

import pytest

from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture
def browser():
    from playwright import sync_api  # a missing Playwright fails the test: ./test.sh installs it

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def hall(tmp_path: Path):
    process = HallProcess(tmp_path).start()
    yield process
    process.stop()


def console_for(browser, hall: HallProcess, name: str):
    page = browser.new_context(ignore_https_errors=True, viewport=VIEWPORT).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(hall.base + "/console")
    assert page.url.endswith("/login")  # not signed in: sent to the sign-in page
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_url("**/console")
    page.wait_for_selector("#link:not(.offline)")
    return page


def fill(page, param: str, value: str) -> None:
    """Type into a field of the open command form, or pick the choice ``value``."""
    field = page.locator(f'#command-fields [data-param="{param}"]')
    if field.evaluate("e => e.tagName") == "SELECT":
        field.select_option(value)
    else:
        field.fill(value)


def open_command(page, command: str) -> None:
    """Open a command's form from the page of all commands."""
    page.click("#tab-commands")
    page.click(f'#commands button[data-command="{command}"]')


def give(page, command: str, **fields: str) -> None:
    """Open a command's form from the list, fill its fields, send it with Enter."""
    open_command(page, command)
    for param, value in fields.items():
        fill(page, param, value)
    page.locator("#command-form button[type=submit]").press("Enter")
    page.wait_for_selector("#answer.ok:has-text('Done')")
    page.click("#command-cancel")


def shot(page, name: str) -> None:
    folder = os.environ.get("BINGO_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.mark.req("R80", "R84.2", "R77.1", "R85.5", "R85.6", "R85.11", "R92.11-12")
def test_staff_open_the_session_sell_draw_and_verify_while_the_board_follows(browser, hall: HallProcess) -> None:
    admin = console_for(browser, hall, "admin")
    rosa = console_for(browser, hall, "rosa")
    # Each role is offered only its own commands (R80): the room chief counts, the admin does not.
    assert rosa.locator('#commands button[data-command="count_balls"]').count() == 1
    assert admin.locator('#commands button[data-command="count_balls"]').count() == 0
    assert rosa.locator("#draw").is_hidden()

    give(admin, "run_verification", date="2026-11-29")
    give(rosa, "count_balls", stage="opening", balls_present="1-90", witnesses="Maria Public")
    give(rosa, "sign_session_opening")
    give(admin, "sign_session_opening")
    rosa.wait_for_selector("#session-state:has-text('session 1 open')")

    sam = console_for(browser, hall, "sam")
    give(sam, "announce_sale", series="1001")
    give(sam, "sell_cards", series="1001", first="1", last="60")
    # A refused command shows the hall's reason and changes nothing.
    open_command(sam, "sell_cards")
    for param, value in (("series", "1001"), ("first", "1"), ("last", "5")):
        fill(sam, param, value)
    sam.press('#command-fields [data-param="last"]', "Enter")
    sam.wait_for_selector("#answer.error")
    sam.click("#command-cancel")
    give(rosa, "close_sale")
    sam.wait_for_selector("#cards-sold:has-text('60')")

    board = browser.new_context(ignore_https_errors=True, viewport=VIEWPORT).new_page()
    board.goto(hall.base + "/board")
    board.wait_for_selector("#link:not(.offline)")

    tomas = console_for(browser, hall, "tomas")
    bingo = None
    for count in range(1, 91):
        sam.keyboard.press("d")  # the caller's shortcut
        sam.wait_for_selector(f"#ball-count:has-text('ball {count} of 90')")
        completed = sam.locator("#completed li").all_inner_texts()
        bingo = next((text for text in completed if text.startswith("BINGO")), None)
        if bingo:
            break
    assert bingo, "no card completed in 90 balls"
    last_ball = sam.inner_text("#last-ball")
    board.wait_for_selector(f"#ball-count:has-text('ball {count} of 90')")
    assert board.inner_text("#last-ball") == last_ball
    assert board.locator(f"#ball-{last_ball}.last").count() == 1
    shot(sam, "console-caller")

    series, card = bingo.split("series ")[1].split(" card ")
    tomas.keyboard.press("v")
    tomas.keyboard.type(series)
    tomas.keyboard.press("Tab")
    tomas.keyboard.type(card)
    tomas.keyboard.press("Enter")
    tomas.wait_for_selector("#answer.ok:has-text('prize won')")
    board.wait_for_selector(f"#winners li:has-text('BINGO after {count} balls: series {series} card {card}')")
    shot(tomas, "console-table-chief")
    shot(board, "board")


@pytest.mark.req("R75.1-3", "R80", "R85.11", "R93.2-4")
def test_each_desk_sees_what_its_command_made_and_a_refused_claim_reads_red_and_whole(
    browser, hall: HallProcess, tmp_path: Path
) -> None:
    admin = console_for(browser, hall, "admin")
    adam = console_for(browser, hall, "adam")
    # Until the regulator's list is imported, the desk says nobody can be admitted.
    adam.wait_for_selector("#banned-state:has-text('No banned list loaded')")
    banned = tmp_path / "prohibidos.csv"
    banned.write_text("document,name,until\n12345678Z,Pere Roca,\n87654321X,\"Puig, Anna\",2027-01-31\n")
    open_command(admin, "import_banned_list")
    admin.set_input_files("#command-fields input[type=file]", str(banned))
    wait_until(lambda: admin.input_value('#command-fields [data-param="source"]') == "prohibidos.csv",
               what="the file's name in the source field")
    assert admin.input_value('#command-fields [data-param="content"]').count("\n") == 3  # line breaks kept
    admin.locator("#command-form button[type=submit]").press("Enter")
    admin.wait_for_selector("#answer.ok:has-text('Banned list imported: 2 entries from prohibidos.csv')")
    adam.wait_for_selector("#banned-state:has-text('Banned list: 2 entries from prohibidos.csv (imported by admin)')")

    give(adam, "admit_visitor", name="Marta Soler", document="11111111H", birth_date="1980-01-01")
    assert "Visitor number 1 admitted (Marta Soler)" in adam.inner_text("#answer")
    carla = console_for(browser, hall, "carla")
    open_command(carla, "open_player_account")
    assert carla.get_attribute('#command-fields [data-param="pin"]', "type") == "password"
    carla.click("#command-cancel")
    give(carla, "open_player_account", visitor="1", medium="ticket", pin="4821")
    assert "opened (ticket) for visitor 1" in carla.inner_text("#answer")
    shot(carla, "console-cashier")

    open_command(admin, "enrol_terminal")
    admin.fill('#command-fields [data-param="terminal"]', "terminal-7")
    admin.fill('#command-fields [data-param="place"]', "by the bar")
    admin.locator("#command-form button[type=submit]").press("Enter")
    admin.wait_for_selector("#answer.ok:has-text('Terminal terminal-7 enrolled')")
    token = admin.inner_text("#answer").rsplit(": ", 1)[1].strip()
    assert len(token) >= 16 and token not in admin.inner_text("#log")  # shown once, never in the journal view
    admin.click("#command-cancel")

    # A claim for a card that does not win is the hall's "no": red, with the whole reason.
    give(admin, "run_verification", date="2026-11-29")
    rosa = console_for(browser, hall, "rosa")
    give(rosa, "count_balls", stage="opening", balls_present="1-90", witnesses="Maria Public")
    give(rosa, "sign_session_opening")
    give(admin, "sign_session_opening")
    sam = console_for(browser, hall, "sam")
    give(sam, "announce_sale", series="1001")
    give(sam, "sell_cards", series="1001", first="1", last="6")
    give(rosa, "close_sale")
    sam.keyboard.press("d")
    sam.wait_for_selector("#ball-count:has-text('ball 1 of 90')")
    tomas = console_for(browser, hall, "tomas")
    tomas.keyboard.press("v")
    tomas.keyboard.type("1001")
    tomas.keyboard.press("Tab")
    tomas.keyboard.type("2")
    tomas.keyboard.press("Enter")
    tomas.wait_for_selector("#answer.error:has-text('Claim refused: card 2 of series 1001 does not win')")
    reason = tomas.inner_text("#answer")
    assert reason.split(" does not win - ", 1)[1].strip(), "the refusal gives its reason"
    refused = tomas.locator("#log li.fault", has_text="claim rejected")
    refused.wait_for()
    assert refused.evaluate("li => li.scrollWidth <= li.clientWidth"), "the refusal is not cut off"
    shot(tomas, "console-claim-refused")

"""Each role's desk in a real headless browser (Debian's chromium driven by Playwright): the
staff of one hall do their day's work on the screens of their roles, and the tests check
what each person sees - the token after an enrolment, the visitor's and the account's
numbers, the PDFs downloaded (read back with pypdf), the seller's receipt, the claimed card
with its marks and the ball that completed it, the room chief's overview.

One hall server serves the whole module and the tests run in the order of a day: the
administrator's opening, the admission desk, the cashier, the sale, the claim check, the
room chief's close.  Every screen is photographed at 1280x800 (a console) and 390x844 (a
handheld) into ``$BINGO_SCREENSHOTS`` (a temporary folder when it is not set).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.reports.conftest import pdf_strings
from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.integration

CONSOLE = {"width": 1280, "height": 800}
HANDHELD = {"width": 390, "height": 844}
WITNESSES = "Maria Public, Joan Witness"


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
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("BINGO_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screens")
    path.mkdir(parents=True, exist_ok=True)
    return path


class Staff:
    """The console pages of the module's staff, signed in once each."""

    def __init__(self, browser: Any, hall: HallProcess, screens: Path) -> None:
        self.browser, self.hall, self.screens = browser, hall, screens
        self.pages: dict[str, Any] = {}

    def __call__(self, name: str) -> Any:
        if name not in self.pages:
            page = self.browser.new_context(ignore_https_errors=True, viewport=CONSOLE, accept_downloads=True).new_page()
            page.set_default_timeout(WAIT * 1000)
            page.goto(self.hall.base + "/console")
            page.fill("#name", name)
            page.fill("#password", PASSWORD)
            page.press("#password", "Enter")
            page.wait_for_url("**/console")
            page.wait_for_selector("#link:not(.offline)")
            page.wait_for_selector("#screen .task:not([hidden])")
            self.pages[name] = page
        return self.pages[name]

    def shoot(self, page: Any, name: str) -> None:
        """The page as it is, on a console and on a handheld."""
        page.screenshot(path=str(self.screens / f"{name}-1280x800.png"))
        page.set_viewport_size(HANDHELD)
        page.screenshot(path=str(self.screens / f"{name}-390x844.png"), full_page=True)
        page.set_viewport_size(CONSOLE)


@pytest.fixture(scope="module")
def staff(browser: Any, hall: HallProcess, screens: Path) -> Staff:
    return Staff(browser, hall, screens)


def form(page: Any, command: str) -> Any:
    """The desk's form of ``command`` that is on screen (the closing's count, once the session is open)."""
    return page.locator(f'#screen form[data-command="{command}"] >> visible=true').first


def submit(page: Any, command: str, expect: str = "Done", **fields: str) -> str:
    """Fill a desk form (text, or a choice by its value) and send it; the form's own answer."""
    box = form(page, command)
    for param, value in fields.items():
        field = box.locator(f'[data-param="{param}"]')
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    box.locator("button[type=submit]").click()
    outcome = box.locator(".outcome")
    if expect:
        # A step done makes way for the next (its form hides): the answer line at the top has it too.
        outcome.locator(f"text={expect}").or_(page.locator("#answer", has_text=expect)).first.wait_for()
    return page.inner_text("#answer")


def step(page: Any, title: str, state: str = "") -> Any:
    """The desk's step headed ``title`` (``state``: ``.next`` or ``.done`` to wait for)."""
    return page.locator(f'#screen .task{state}:has(> h2:has-text("{title}"))')


def pdf_text(download: Any) -> str:
    return " ".join(pdf_strings(Path(download.path()).read_bytes()))


@pytest.mark.req("R84.1", "R84.2", "R77.1", "R80", "R75.1-3")
def test_the_administrator_opens_the_session_step_by_step_and_sees_the_token(staff: Staff) -> None:
    admin, rosa = staff("admin"), staff("rosa")
    # The next step is marked; what the role may not do is only a state line.
    step(admin, "1. Verify the system", ".next").wait_for()
    assert admin.input_value('form[data-command="run_verification"] [data-param="date"]'), "today is filled in"
    assert form(admin, "count_balls").count() == 0 and form(rosa, "count_balls").count() == 1
    staff.shoot(admin, "admin-1-opening")
    submit(admin, "run_verification", "Verification for")
    step(admin, "1. Verify the system", ".done").wait_for()
    step(rosa, "2. Count the balls", ".next").wait_for()
    assert form(rosa, "count_balls").locator('[data-param="stage"]').count() == 0  # the step is the stage
    submit(rosa, "count_balls", "Balls counted (opening): 90 of 90", witnesses=WITNESSES)
    step(admin, "3. Sign the opening", ".next").wait_for()
    submit(admin, "sign_session_opening")
    submit(rosa, "sign_session_opening")
    admin.wait_for_selector("#session-state:has-text('session 1 open')")
    step(admin, "Session closing").wait_for()

    submit(admin, "enrol_terminal", "enrolled", terminal="terminal-7", place="by the bar")
    token = admin.locator(".token-box")
    token.wait_for()
    shown = token.inner_text().rsplit(": ", 1)[1].strip()
    assert len(shown) >= 16 and shown not in admin.inner_text("#log")  # shown once, never in the journal
    admin.locator("#screen ul.rows li", has_text="terminal-7 · by the bar · in service").wait_for()

    banned = staff.screens.parent / "prohibidos.csv"
    banned.write_text("document,name,until\n12345678Z,Pere Roca,\n87654321X,\"Puig, Anna\",2027-01-31\n")
    box = form(admin, "import_banned_list")
    box.locator("input[type=file]").set_input_files(str(banned))
    content = box.locator('[data-param="content"]')
    # The page reads the file asynchronously: wait for its text, line breaks kept.
    wait_until(lambda: content.input_value().count("\n") == 3, what="the file's three lines in the content field",
               seen=content.input_value)
    box.locator("button[type=submit]").click()
    box.locator(".outcome", has_text="Banned list imported: 2 entries").wait_for()
    staff.shoot(admin, "admin-2-session-open")
    # The generic command list stays, as a page of its own.
    admin.click("#tab-commands")
    admin.locator('#commands button[data-command="replace_ball_set"]').wait_for()
    staff.shoot(admin, "admin-3-all-commands")
    admin.click("#tab-desk")


@pytest.mark.req("R75.1-3", "R77.2", "R79", "R80")
def test_the_admission_desk_admits_shows_the_number_and_refuses_the_banned(staff: Staff) -> None:
    adam = staff("adam")
    adam.wait_for_selector("#banned-state:has-text('Banned list: 2 entries from prohibidos.csv (imported by admin)')")
    submit(adam, "admit_visitor", "Visitor number 1 admitted", name="Marta Soler", document="11111111H", birth_date="1980-01-01")
    assert adam.inner_text(".visitor-number") == "Visitor number 1 - Marta Soler"
    outcome = submit(adam, "admit_visitor", "Entry refused", name="Pere Roca", document="12345678Z", birth_date="1980-01-01")
    assert "error" in form(adam, "admit_visitor").locator(".outcome").get_attribute("class")
    assert "12345678Z" in outcome and "banned list" in outcome
    submit(adam, "record_complaint", "Complaint number 1", complainant="Marta Soler", text="The room is cold")
    adam.locator("#screen ul.rows li", has_text="No. 1 · Marta Soler: The room is cold").wait_for()
    adam.locator("#screen ul.rows li", has_text="1 · Marta Soler").first.wait_for()
    staff.shoot(adam, "admission")


@pytest.mark.req("R92.5", "R93.2-4", "R93.7", "R93.14", "R78")
def test_the_cashier_finds_the_account_loads_cashes_out_and_downloads_its_pdfs(staff: Staff) -> None:
    carla = staff("carla")
    step(carla, "Cash drawers", ".next").wait_for()
    box = form(carla, "open_cash_desk")
    assert box.locator('[data-param="desk"]').evaluate("e => e.tagName") == "SELECT"
    submit(carla, "open_cash_desk", "Cash desk desk-1 opened with a float of €100.00", float_cents="100")
    carla.locator("#screen ul.drawers li", has_text="desk-1: open · €100.00").wait_for()

    opening = form(carla, "open_player_account")
    assert opening.locator('[data-param="pin"]').get_attribute("type") == "password"
    assert opening.locator('[data-param="visitor"] option').all_inner_texts() == ["1 · Marta Soler"]
    assert opening.locator('[data-param="medium"] option').all_inner_texts() == ["card", "ticket"]
    submit(carla, "open_player_account", "opened (ticket) for visitor 1", medium="ticket", pin="4821")
    carla.locator("#account .account-balance", has_text="€0.00").wait_for()
    number = carla.inner_text("#account .account-number")
    assert len(number.replace(" ", "")) == 12

    submit(carla, "load_credit", "Loaded €20.00", amount_cents="20")
    carla.locator("#account .account-balance", has_text="€20.00").wait_for()
    carla.locator("#screen ul.drawers li", has_text="desk-1: open · €120.00").wait_for()
    outcome = submit(carla, "cash_out", "", amount_cents="25.5", method="cash")
    carla.locator(f'form[data-command="cash_out"] .outcome.error').wait_for()
    assert "holds 20.00" in form(carla, "cash_out").locator(".outcome").inner_text(), outcome
    submit(carla, "cash_out", "Paid out €5.50", amount_cents="5.50", method="cash")
    carla.locator("#account .account-balance", has_text="€14.50").wait_for()

    # Found again by the number on the ticket, typed as printed.
    carla.fill("#account-number", number)
    carla.click("#find-account button[type=submit]")
    carla.locator("#find-account .outcome", has_text="€14.50").wait_for()

    with carla.expect_download() as ticket:
        form(carla, "print_player_ticket").locator("button[type=submit]").click()
    assert ticket.value.suggested_filename == f"player-ticket-{number.replace(' ', '')}.pdf"
    assert number in pdf_text(ticket.value)
    with carla.expect_download() as statement:
        form(carla, "print_account_statement").locator("button[type=submit]").click()
    text = pdf_text(statement.value)
    assert number in text and "20.00" in text and "14.50" in text
    carla.locator("#answer", has_text=f"account-statement-{number.replace(' ', '')}.pdf downloaded").wait_for()
    staff.shoot(carla, "cashier")


@pytest.mark.req("R82.5", "R85", "R85.5", "R80")
def test_the_seller_caller_sells_with_the_next_card_filled_in_gets_the_receipt_and_draws(staff: Staff) -> None:
    sam, rosa = staff("sam"), staff("rosa")
    step(sam, "1. Open the sale", ".next").wait_for()
    submit(sam, "announce_sale", "sale opened", series="1001")
    sell = form(sam, "sell_cards")
    sam.wait_for_function("() => document.querySelector('form[data-command=sell_cards] [data-param=first]').value === '1'")
    submit(sam, "sell_cards", "Sold series 1001 cards 1-12: 12 cards, €12.00", last="12")
    assert sell.locator('[data-param="first"]').input_value() == "13"
    submit(sam, "sell_cards", "Sold series 1001 cards 13-20: 8 cards, €8.00", last="20")
    receipt = sam.locator("#receipt table")
    assert receipt.locator("tbody tr").all_inner_texts() == ["1001\t1-12\t12\t€12.00", "1001\t13-20\t8\t€8.00"]
    assert receipt.locator("tfoot").inner_text().split() == ["Total", "20", "€20.00"]
    staff.shoot(sam, "seller-1-receipt")

    step(rosa, "Close the sale", ".next").wait_for()
    submit(rosa, "close_sale", "sale closed")
    step(sam, "3. Draw", ".next").wait_for()
    for count in range(1, 91):
        sam.click("#desk-draw")
        sam.wait_for_selector(f"#ball-count:has-text('ball {count} of 90')")
        if sam.locator("#completed li").count():
            break
    assert sam.locator("#completed li").count(), "no card completed in 90 balls"
    staff.shoot(sam, "seller-2-drawing")


@pytest.mark.req("R85.6", "R85.11", "R87.a", "R82.8")
def test_the_table_chief_sees_the_claimed_card_marked_with_its_completing_ball(staff: Staff) -> None:
    tomas, sam = staff("tomas"), staff("sam")
    label = tomas.locator("#screen ul.chips li").first.inner_text()  # "ROW: 1001-7"
    series, card = label.split(": ")[1].split("-")
    tomas.locator("#screen ul.chips li").first.click()
    tomas.click("#verify button[type=submit]")
    tomas.wait_for_selector("#answer.ok:has-text('prize won')")
    shown = tomas.locator(".claim-card")
    shown.locator(f"h3:has-text('Series {series} card {card}')").wait_for()
    balls = [int(b) for b in sam.locator("#ball-grid .cell.drawn").all_inner_texts()]
    cells = shown.locator(".card-grid span")
    assert cells.count() == 27
    marked = [int(n) for n in shown.locator(".card-grid .marked, .card-grid .completing").all_inner_texts()]
    assert marked and set(marked) <= set(balls)
    completing = shown.locator(".card-grid .completing").all_inner_texts()
    last_ball = sam.inner_text("#last-ball")
    assert completing == [last_ball]  # the ball just drawn completed the row
    assert f"completed on ball {len(balls)} (number {last_ball}) - won" in shown.inner_text()
    staff.shoot(tomas, "table-chief-1-claim")

    # A card that does not win: the hall's "no", red and whole, and the card as it stands.
    sold = [n for n in range(1, 21) if n != int(card)]
    tomas.keyboard.press("Escape")
    tomas.keyboard.press("v")
    tomas.keyboard.type("1001")
    tomas.keyboard.press("Tab")
    tomas.keyboard.type(f"1001-{sold[0]}")  # a scanner types the label
    tomas.keyboard.press("Enter")
    answer = tomas.locator("#answer.error")
    answer.wait_for()
    assert "does not win" in answer.inner_text() or "already won" in answer.inner_text()
    shown.locator(f"h3:has-text('Series 1001 card {sold[0]}')").wait_for()
    staff.shoot(tomas, "table-chief-2-refused")

    # The line is found: every desk that runs the draw says so, and nothing is drawn (R85.6).
    for page in (tomas, sam):
        page.locator("#screen .pause-banner:has-text('LINE! Another card?')").wait_for()
    assert tomas.inner_text("#screen .pause-banner .pause-title") == "LINE! Another card?"
    assert f"series {series} card {card}" in tomas.inner_text("#screen .pause-banner .pause-detail")
    assert sam.is_disabled("#desk-draw")
    # A card tampered with is refused instead of verified (R82.8): journaled with the reason.
    submit(tomas, "refuse_card", f"Card 1001-{sold[1]} refused as invalid by tomas", series="1001",
           card_number=str(sold[1]), reason="the numbers were scratched and written again")
    tomas.locator("#screen ul.refused li", has_text=f"1001-{sold[1]}").wait_for()
    staff.shoot(tomas, "table-chief-3-another-card-and-a-card-refused")
    staff.shoot(sam, "seller-3-line-another-card")
    submit(sam, "close_prize", "LINE closed by sam")
    sam.locator("#screen .pause-banner").wait_for(state="hidden")
    assert not sam.is_disabled("#desk-draw")


@pytest.mark.req("R80.4")
def test_R80_4_the_table_chiefs_desk_shows_the_cashiers_work_while_standing_in(staff: Staff) -> None:
    tomas, carla = staff("tomas"), staff("carla")
    stand_in = tomas.locator("#stand-in")
    stand_in.locator(".state-line", has_text="hands a cash desk over to you first").wait_for()
    assert not tomas.locator('#stand-in form[data-command="open_player_account"]').is_visible()
    submit(carla, "hand_over_cash_desk", "", to="tomas", to_role="table_chief", reason="carla's break")
    stand_in.locator(".state-line", has_text="you hold desk-1").wait_for()
    tomas.locator('#stand-in form[data-command="open_player_account"]').wait_for(state="visible")
    tomas.locator('#stand-in ul.drawers li', has_text="desk-1: open").wait_for()
    staff.shoot(tomas, "table-chief-4-standing-in")
    submit(tomas, "hand_over_cash_desk", "", to="carla", to_role="cashier", reason="carla is back")
    stand_in.locator(".state-line", has_text="hands a cash desk over to you first").wait_for()
    tomas.locator('#stand-in form[data-command="open_player_account"]').wait_for(state="hidden")


@pytest.mark.req("R85", "R86.1-2", "R96.3", "R77.1")
def test_the_room_chief_overview_shows_games_pots_terminals_and_faults(staff: Staff) -> None:
    rosa, sam, tomas, carla, admin = staff("rosa"), staff("sam"), staff("tomas"), staff("carla"), staff("admin")
    overview = rosa.locator("#overview")
    overview.locator("dd", has_text="20 (€20.00)").wait_for()
    prizes = f"line {rosa.inner_text('#line-prize')}, bingo {rosa.inner_text('#bingo-prize')}"
    overview.locator("dd", has_text=prizes).wait_for()
    rosa.locator("#screen ul.rows li", has_text="terminal-7").first.wait_for()
    # A card refused as invalid is on the overview's faults (R82.8).
    rosa.locator("#screen ul.faults li", has_text="refused as invalid by tomas").wait_for()
    # A drawn ball never goes back to the draw; the software generator's ball is not corrected
    # either (R85.5): the form holds the last ball already, and the hall says why it refuses.
    last = sam.inner_text("#last-ball")
    sam.click("#desk-draw")
    sam.wait_for_function(f"() => document.querySelector('#last-ball').textContent !== '{last}'")
    drawn = sam.inner_text("#last-ball")
    rosa.wait_for_function(
        f"() => document.querySelector('form[data-command=correct_ball] [data-param=ball]').value === '{drawn}'")
    box = form(rosa, "correct_ball")
    box.locator('[data-param="corrected"]').fill("1" if drawn != "1" else "2")
    box.locator('[data-param="reason"]').fill("the caller misread it")
    box.locator("button[type=submit]").click()
    box.locator(".outcome.error", has_text="the software generator").wait_for()
    staff.shoot(rosa, "room-chief-1-overview")

    # Draw to the bingo; the table chief verifies it, the room chief closes, the cashier pays.
    for _ in range(90):
        bingo = [t for t in sam.locator("#completed li").all_inner_texts() if t.startswith("BINGO")]
        if bingo:
            break
        count = sam.locator("#ball-grid .cell.drawn").count()
        sam.click("#desk-draw")
        sam.wait_for_selector(f"#ball-count:has-text('ball {count + 1} of 90')")
    series, card = bingo[0].split("series ")[1].split(" card ")
    tomas.fill("#verify-series", series)
    tomas.fill("#verify-card", card)
    tomas.click("#verify button[type=submit]")
    tomas.wait_for_selector("#answer.ok:has-text('BINGO')")
    # "Bingo! Another card?": the room chief's close waits for the caller's (R85.6).
    rosa.locator("#screen .pause-banner:has-text('BINGO! Another card?')").wait_for()
    assert rosa.locator('#screen form[data-command="close_game"]').is_hidden()
    staff.shoot(rosa, "room-chief-2-bingo-another-card")
    submit(sam, "close_prize", "closed by sam")
    step(rosa, "End of the game", ".next").wait_for()
    submit(rosa, "close_game", "game closed")
    submit(carla, "pay_prizes", "prize paid")
    step(carla, "Prizes", ".done").wait_for()
    staff.shoot(carla, "cashier-2-prizes-paid")
    submit(rosa, "collect_cards", "cards collected")
    rosa.locator("#overview dd", has_text="cards collected").wait_for()
    staff.shoot(rosa, "room-chief-3-game-over")

    # The complaint written at the door waits for the room chief (R75.5): confirmed, the session may close.
    complaints = rosa.locator("#complaints")
    complaints.locator(".state-line", has_text="1 complaint written at the door waits for your confirmation").wait_for()
    submit(rosa, "confirm_complaint", "", number="1")
    complaints.locator(".state-line", has_text="every complaint was written before the room chief").wait_for()
    complaints.locator("li", has_text="No. 1 · Marta Soler: The room is cold - written before rosa").wait_for()
    # The closing: the count and both signatures, from the desks.
    submit(rosa, "count_balls", "Balls counted (closing)", witnesses=WITNESSES)
    step(admin, "2. Sign the closing", ".next").wait_for()
    submit(rosa, "sign_session_closing")
    submit(admin, "sign_session_closing")
    admin.wait_for_selector("#session-state:has-text('session 1 closed')")
    staff.shoot(admin, "admin-4-session-closed")

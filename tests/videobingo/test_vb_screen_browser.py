"""The video bingo machine's screen (R3.5.d) in a real headless browser (Debian's chromium
driven by Playwright) against a real ``bingo hall serve`` process over TLS, at both screen
sizes: a 1920x1080 touch screen and a 1080x1920 portrait cabinet, each a station of one
machine presenting its terminal certificate.

On each, a player signs in with the account number and PIN, takes credit from the account
onto the station, chooses 2 cards and plays: the screen shows the committed play ball by
ball, the cards' paid patterns, the win and the credit after, all exactly as the journal's
``vb_play`` record and its postings have them, and nothing spills past the screen.  Reloaded
(a reconnect), the screen shows that same play again; the player cashes out to the account."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text
from tests.support.waiting import WAIT, wait_until
from tests.terminals.test_kiosk_browser import Staff, player, shown_cents
from tests.videobingo.paytables import EXAMPLES
from tests.videobingo.test_vb_power_loss import VIDEOBINGO, balances, journal_records
from tests.web.conftest import _HASH, HallProcess
from tests.web.test_console_browser import browser, console_for, shot  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

LANDSCAPE = {"width": 1920, "height": 1080}
PORTRAIT = {"width": 1080, "height": 1920}
MACHINE = "vb-1"
CREDIT_VALUE = 20  # cents, as VIDEOBINGO configures the machine


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path)
    with open(process.config, "a") as config:
        config.write(VIDEOBINGO.format(paytable=EXAMPLES / "vb-classic-3x5.json"))
    process.start()
    yield process
    process.stop()


def screen(browser: Any, hall: HallProcess, viewport: dict[str, int], station: int, token: str) -> Any:
    """The machine's screen on a cabinet holding the station's certificate, as the hall requires over TLS."""
    cert, key = hall.certificate("machine", f"{MACHINE}.{station}")
    certificates = [{"origin": hall.base, "certPath": str(cert), "keyPath": str(key)}]
    page = browser.new_context(ignore_https_errors=True, viewport=viewport, client_certificates=certificates,
                               has_touch=True).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{hall.base}/vb/#machine={MACHINE}&station={station}&token={token}")
    page.wait_for_selector("#link.online")
    return page


def fits(page: Any, viewport: dict[str, int]) -> None:
    """Nothing scrolls, and every part of the screen lies inside it."""
    size = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    assert size[0] <= viewport["width"] and size[1] <= viewport["height"], size
    for part in ("#board", "#side", "#controls", "#cards", "#play", "#cash-out", "#balls"):
        box = page.locator(part).bounding_box()
        assert box is not None and box["x"] >= 0 and box["y"] >= 0, part
        assert box["x"] + box["width"] <= viewport["width"] + 0.5, (part, box)
        assert box["y"] + box["height"] <= viewport["height"] + 0.5, (part, box)
    # The cards end above the win line, the board beside (or above) the paytable, both above the controls.
    cards = page.locator("#cards .card").evaluate_all("cs => Math.max(...cs.map(c => c.getBoundingClientRect().bottom))")
    assert cards <= page.locator("#win").bounding_box()["y"] + 0.5, "the cards spill over the win line"
    board, side, controls = (page.locator(p).bounding_box() for p in ("#board", "#side", "#controls"))
    assert max(board["y"] + board["height"], side["y"] + side["height"]) <= controls["y"] + 0.5
    small = page.evaluate(
        "[...document.querySelectorAll('#controls button:not([hidden])')].filter(b => b.offsetParent)"
        ".map(b => b.getBoundingClientRect()).filter(r => r.width < 48 || r.height < 48).length")
    assert small == 0, "every touch target is at least 48 px square"


def the_play(hall: HallProcess, station: int) -> tuple[dict[str, Any], int]:
    """The station's first ``vb_play`` record and the station's credit after it, by the postings."""
    records = journal_records(hall.folder)
    (index, play), *_ = [(i, r) for i, r in enumerate(records) if r["type"] == "vb_play" and r["payload"]["station"] == station]
    after = [r for r in records[index + 1:] if r["type"] != "posting"]
    upto = records[: records.index(after[0])] if after else records
    return play, balances(upto).get(f"vbcredit:{MACHINE}.{station}", 0)


def keep_the_cards_and_play_again(page: Any, hall: HallProcess, before: dict[str, Any], credit: int) -> int:
    """The same two cards again: shown before the play with their numbers, and played as they were."""
    page.tap("#keep")
    assert page.get_attribute("#keep", "aria-pressed") == "true"
    for i, numbers in enumerate(before["payload"]["cards"]):
        assert [int(n) for n in page.locator("#cards .card").nth(i).locator(".cell").all_inner_texts()] == numbers
    page.tap("#play")
    page.wait_for_selector(f"#cards[data-seq]:not([data-seq='{before['seq']}'])")
    page.wait_for_selector("#win.done")
    (*_, again) = [r for r in journal_records(hall.folder) if r["type"] == "vb_play" and r["payload"]["station"] == 1]
    p = again["payload"]
    assert again["seq"] != before["seq"] and p["kept"] and p["cards"] == before["payload"]["cards"]
    credit = credit - p["stake_cents"] + p["won_cents"] + sum(j["cents"] for j in p["jackpots"])
    check_shown(page, again, credit)
    return credit


def recall_on_the_screen(page: Any, hall: HallProcess, first: dict[str, Any], credit: int,
                         viewport: dict[str, int]) -> None:
    """GLI-11 game recall on the machine's screen: its plays latest first; one touched is shown whole."""
    page.tap("#recall")
    page.wait_for_selector("#recall-panel:not([hidden])")
    seqs = [r["seq"] for r in journal_records(hall.folder) if r["type"] == "vb_play"]
    listed = page.locator("#recall-list button").evaluate_all("bs => bs.map(b => Number(b.dataset.seq))")
    assert listed == list(reversed(seqs))
    shot(page, "vb-landscape-recall")
    page.tap(f"#recall-list button[data-seq='{first['seq']}']")
    page.wait_for_selector("#recalled:not([hidden])")
    assert "credit after it" in page.inner_text("#recalled-text") and page.is_disabled("#play")
    assert [int(b) for b in page.locator("#balls li.drawn").all_inner_texts()] == first["payload"]["balls"]
    assert (page.locator("#cards .card").first.get_attribute("data-paid") or None) == first["payload"]["results"][0]["pattern"]
    assert shown_cents(page.inner_text("#credit")) == credit  # the station's credit now, not the recalled play's
    fits(page, viewport)
    shot(page, "vb-landscape-recalled")
    page.tap("#recall-back")
    page.wait_for_selector("#recalled", state="hidden")
    assert page.is_enabled("#play")


def check_shown(page: Any, play: dict[str, Any], credit_after: int) -> None:
    p = play["payload"]
    assert [int(b) for b in page.locator("#balls li.drawn").all_inner_texts()] == p["balls"]
    cards = page.locator("#cards .card")
    assert cards.count() == 2 == len(p["cards"])
    for i, numbers in enumerate(p["cards"]):
        card = cards.nth(i)
        assert [int(n) for n in card.locator(".cell").all_inner_texts()] == numbers
        assert (card.get_attribute("data-paid") or None) == p["results"][i]["pattern"]
        # The pattern lit on the card is the one the hall paid.
        assert (card.get_attribute("data-pattern") or None) == p["results"][i]["pattern"]
        hit = {int(n) for n in card.locator(".cell.hit").all_inner_texts()}
        assert hit == set(numbers) & set(p["balls"])
    assert shown_cents(page.inner_text("#credit")) == credit_after
    whole = credit_after // CREDIT_VALUE
    assert page.inner_text("#credits") == f"{whole} credit{'' if whole == 1 else 's'}"
    won = sum(r["credits"] for r in p["results"])
    win = page.inner_text("#win")
    assert (f"Win {won} credit" in win) if p["won_cents"] else win.startswith("No win"), win
    lit = set(page.locator("#paytable tr.lit").evaluate_all("rows => rows.map(r => r.dataset.pattern)"))
    assert lit == {r["pattern"] for r in p["results"] if r["pattern"]}


@pytest.mark.req("R3.5.d")
def test_a_player_plays_two_cards_at_both_screen_sizes_and_the_screen_shows_the_committed_play(
    hall: HallProcess, browser: Any
) -> None:
    staff = Staff(hall)
    staff.open_the_session()
    accounts = {1: player(staff, "11111111A", 2_000), 2: player(staff, "22222222B", 2_000)}
    tokens = {s: staff("rosa", "enrol_vb_station", machine=MACHINE, station=s)["result"]["token"] for s in (1, 2)}
    sizes = {1: ("vb-landscape", LANDSCAPE), 2: ("vb-portrait", PORTRAIT)}
    pages = {s: screen(browser, hall, viewport, s, tokens[s]) for s, (_, viewport) in sizes.items()}
    for station, page in pages.items():
        name, viewport = sizes[station]
        assert page.inner_text("#credit") == "€0.00" and page.inner_text("#credits") == "0 credits"
        assert page.locator("#paytable tbody tr").count() == 11
        assert page.locator("#counts .count").count() == 4  # 1..cards_max
        fits(page, viewport)
        shot(page, f"{name}-welcome")
        page.click("#counts .count[data-count='4']")  # the most cards a play holds fit too
        assert page.locator("#cards .card").count() == 4
        fits(page, viewport)
        shot(page, f"{name}-four-cards")
        page.fill("#account", accounts[station])
        page.fill("#pin", "4821")
        page.press("#pin", "Enter")
        page.wait_for_selector("#account-credit:not([hidden])")
        # A play with no credit: the hall's refusal in one line, in the screen's language and euros, nothing played.
        page.click("#play")
        page.wait_for_selector("#message:not(.ok):not([hidden])")
        assert "4 cards cost €0.80 and the credit is €0.00." in page.inner_text("#message"), page.inner_text("#message")
        assert not [r for r in journal_records(hall.folder)
                    if r["type"] == "vb_play" and r["payload"]["station"] == station]
        page.wait_for_selector("#play:enabled")
        page.click("#account-credit .take[data-cents='1000']")
        page.wait_for_selector("#credit:text('€10.00')")
        assert page.inner_text("#credits") == "50 credits"
        page.tap("#counts .count[data-count='2']")
        assert page.locator("#cards .card").count() == 2 and page.inner_text("#play") == "Play 2 cards · €0.40"
        page.tap("#play")
    for station, page in pages.items():
        name, viewport = sizes[station]
        page.wait_for_selector("#win.done", timeout=WAIT * 1000)
        play, credit_after = the_play(hall, station)
        assert credit_after == 1_000 - play["payload"]["stake_cents"] + play["payload"]["won_cents"] + sum(
            j["cents"] for j in play["payload"]["jackpots"])
        check_shown(page, play, credit_after)
        fits(page, viewport)
        shot(page, f"{name}-played")

        # A reconnect shows the last committed play again, without playing anything.
        page.reload()
        page.wait_for_selector("#win.done")
        check_shown(page, play, credit_after)
        # Keep the cards for the next play: offered since the next play holds as many.
        assert page.is_enabled("#keep")
        if station == 1:
            credit_after = keep_the_cards_and_play_again(page, hall, play, credit_after)
            recall_on_the_screen(page, hall, play, credit_after, viewport)

        page.click("#cash-out")
        page.wait_for_selector("#credit:text('€0.00')")
        assert f"€{credit_after // 100}.{credit_after % 100:02d} paid into your account." in page.inner_text("#message")
    records = journal_records(hall.folder)
    plays = [r for r in records if r["type"] == "vb_play"]
    assert len(plays) == 3
    money = balances(records)
    assert all(money.get(f"vbcredit:{MACHINE}.{s}", 0) == 0 for s in (1, 2))
    # The machine's pending jackpot, as each screen was last told it, is the ledger's.
    assert money[f"vbjackpot:{MACHINE}"] > 0
    for page in pages.values():
        assert shown_cents(page.inner_text("#jackpot").removeprefix("Jackpot ")) == money[f"vbjackpot:{MACHINE}"]
    (*_, latest) = [r["payload"]["meters"] for r in records if r["type"].startswith("vb_") and "meters" in r["payload"]]
    staff_sees_the_meters_and_the_last_plays(browser, hall, plays, latest)


def staff_sees_the_meters_and_the_last_plays(browser: Any, hall: HallProcess, plays: list[dict[str, Any]],
                                             last: dict[str, int]) -> None:
    """The room chief's console: the machine's meters and its last plays, latest first (GLI-11)."""
    console = console_for(browser, hall, "rosa")
    meters = console.locator('form[data-command="vb_meters"]')
    meters.locator("button").click()
    row = console.locator(f'#machines .vb-meters tr[data-machine="{MACHINE}"]')
    row.wait_for()
    assert row.locator('td[data-meter="plays"]').inner_text() == "3" == str(last["plays"])
    assert last["credits_out"] > 0  # both cashed out
    for meter in ("stakes", "prizes", "credits_in", "credits_out", "jackpot_contributions"):
        assert shown_cents(row.locator(f'td[data-meter="{meter}"]').inner_text()) == last[meter], meter
    recall = console.locator('form[data-command="vb_recall"]')
    recall.locator('[data-param="machine"]').fill(MACHINE)
    recall.locator("button").click()
    console.wait_for_selector("#machines .vb-recall li[data-seq]")
    shown = [int(s) for s in console.locator("#machines .vb-recall li").evaluate_all("items => items.map(i => i.dataset.seq)")]
    assert shown == [p["seq"] for p in reversed(plays)]
    console.locator("#machines").scroll_into_view_if_needed()
    shot(console, "vb-console-machines")


DEMO_NOTE = re.compile(
    r"account (?P<account>[\d ]+) and PIN (?P<pin>\d+).*"
    r"Import its certificate (?P<p12>\S+vb-1\.1\.p12) \(password: (?P<password>\S+)\).*"
    r"Open (?P<url>https://\S+/vb/#machine=vb-1&station=1&token=\S+)",
    re.S,
)


@pytest.fixture
def demo_hall(tmp_path: Path) -> Iterator[HallProcess]:
    (tmp_path / "hall.toml").write_text(
        default_config_text("Demo hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0).replace('language = "ca"', 'language = "en"'))
    process = HallProcess(tmp_path, demo=True, demo_pace=0.1).start()
    yield process
    process.stop()


@pytest.mark.req("R3.5.d")
def test_a_newcomer_opens_the_demo_halls_machine_from_its_note_and_plays(demo_hall: HallProcess, browser: Any) -> None:
    """``bingo hall serve --demo`` comes with one machine: its note says how to open its screen, and a play works."""
    note = demo_hall.folder / "demo-kiosk.txt"
    wait_until(lambda: note.exists() and DEMO_NOTE.search(note.read_text()) is not None, 4 * WAIT,
               "the demo's note with the machine's screen", seen=lambda: note.exists() and note.read_text())
    told = DEMO_NOTE.search(note.read_text())
    assert told is not None
    url = told["url"]
    certificates = [{"origin": demo_hall.base, "pfxPath": told["p12"], "passphrase": told["password"]}]
    page = browser.new_context(ignore_https_errors=True, viewport=LANDSCAPE,
                               client_certificates=certificates).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(demo_hall.base + url[url.index("/vb/"):])
    page.wait_for_selector("#link.online")
    page.fill("#account", told["account"].replace(" ", ""))
    page.fill("#pin", told["pin"])
    page.press("#pin", "Enter")
    page.wait_for_selector("#account-credit:not([hidden])")
    page.click("#account-credit .take[data-cents='500']")
    page.wait_for_selector("#credit:text('€5.00')")
    page.click("#counts .count[data-count='1']")
    page.click("#play")
    page.wait_for_selector("#win.done")
    (play,) = [r for r in journal_records(demo_hall.folder) if r["type"] == "vb_play"]
    assert [int(b) for b in page.locator("#balls li.drawn").all_inner_texts()] == play["payload"]["balls"]
    expected = 500 - play["payload"]["stake_cents"] + play["payload"]["won_cents"] + sum(
        j["cents"] for j in play["payload"]["jackpots"])
    assert shown_cents(page.inner_text("#credit")) == expected
    account = told["account"].replace(" ", "")
    assert page.inner_text("#who") == f"Account •••• {account[-4:]}"  # never the whole number on a public machine
    shot(page, "vb-demo-played")
    video_bingo_keeps_the_players_money_after_sign_out(page, demo_hall, account, expected)


def video_bingo_keeps_the_players_money_after_sign_out(page: Any, hall: HallProcess, account: str, credit: int) -> None:
    """Signing out puts the station's credit back into the account, and the screen says so and shows 0."""
    page.click("#sign-out")
    page.wait_for_selector("#sign-in-form:not([hidden])")
    page.wait_for_selector("#credit:text('€0.00')")
    assert page.inner_text("#who") == ""
    if credit:
        shown = f"€{credit // 100}.{credit % 100:02d}"
        assert page.inner_text("#message") == f"You are signed out. Your credit of {shown} is back in your account."
    records = journal_records(hall.folder)
    (out,) = [r["payload"] for r in records if r["type"] == "vb_credit_out" and r["payload"]["station"] == 1]
    assert (out["destination"], out["account"], out["amount"]) == ("account", account, credit)
    assert balances(records).get(f"vbcredit:{MACHINE}.1", 0) == 0
    shot(page, "vb-demo-signed-out")

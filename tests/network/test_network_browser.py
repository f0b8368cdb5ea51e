"""A network game watched in real browsers across two real halls (R92.1, R92.11, R93.1, R93.10).

One operator authority issues every certificate; a real central server (``bingo central
serve``) and two real halls (``bingo hall serve``) run as child processes on loopback,
linked over AMP in mutual TLS.  In each hall a player signs in on a kiosk in a headless
chromium (hall-1's at 1280x800, hall-2's a 390x844 handheld) holding its terminal's
certificate, and the hall's information board is open at 1920x1080.  Hall-1 plays its own
game at the same time: its player buys hall cards too, and its board shows its draw.

* The sale's countdown runs on both kiosks; each player buys network cards, which show
  their 27 numbers (the central server's layouts, series N1: the halls' own virtual cards are V1) and are charged once.
* The boards show the network game's sale, then its balls; the kiosks mark the balls on
  the network cards and count what is to go, and hall-1's own cards keep their own balls.
* The first prize: both boards list the same winning cards with the hall and the terminal
  where each was bought (R92.11); the winner's kiosk lights the card and says so.
* The central server is killed: both kiosks say the link is lost; it comes back, the
  kiosks say so, and show the game declared not played with every stake returned
  (R92.5e: a stop of the single central server interrupts the game).

Screenshots of each step go to ``$BINGO_SCREENSHOTS`` (docs/testing.md).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

from server_kit.pki import PkiFolder, export_bundle, init_authority, issue_certificate
from server_kit.ports import reserve_port
from tests.central_server.support import CentralProcess, config_text
from tests.network.processes import hall_toml
from tests.support.waiting import START, WAIT, wait_until
from tests.terminals.test_kiosk_browser import Staff, payload
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_console_browser import browser, shot  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration]

HALLS = ("hall-1", "hall-2")
KIOSK = {"width": 1280, "height": 800}
HANDHELD = {"width": 390, "height": 844}
SCREEN = {"width": 1920, "height": 1080}
PIN = "4821"
LOAD_CENTS = 5_000
NET_CARDS = {"hall-1": 36, "hall-2": 30}
#: The sale opens this long after the central server's first start: time for both halls to start and link.
OPENS_AFTER_MS = 35_000
SALE_MS = 25_000
#: Hall-1's own terminal sale: open while its player buys hall cards, closed before its draw.
HALL_SALE_S = 30


def start_all(halls: list[HallProcess]) -> None:
    """Start the halls side by side: each takes a while to make its card set and its keys."""
    failures: list[BaseException] = []

    def start(hall: HallProcess) -> None:
        try:
            hall.start()
        except BaseException as error:  # re-raised below, on the test's thread
            failures.append(error)

    threads = [threading.Thread(target=start, args=(hall,)) for hall in halls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(START + 10)
    if failures:
        raise failures[0]


def shown_cents(text: str) -> int:
    euros, cents = text.split()[0].split(".")
    return int(euros) * 100 + int(cents)


def kiosk_page(browser: Any, hall: HallProcess, operator: Path, viewport: dict[str, int], terminal: str,
               token: str) -> Any:
    authority = PkiFolder(operator)
    certificates = [{"origin": hall.base, "certPath": str(authority.cert(terminal)),
                     "keyPath": str(authority.key(terminal))}]
    page = browser.new_context(ignore_https_errors=True, viewport=viewport, client_certificates=certificates).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{hall.base}/kiosk#terminal={terminal}&token={token}")
    page.wait_for_selector("#link.online")
    return page


def board_page(browser: Any, hall: HallProcess) -> Any:
    page = browser.new_context(ignore_https_errors=True, viewport=SCREEN).new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{hall.base}/board")
    page.wait_for_selector("#link:not(.offline)")
    return page


def fits(page: Any, viewport: dict[str, int], *, tall: bool = False) -> None:
    """Nothing spills sideways; a board (not ``tall``) does not scroll at all."""
    width, height = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    assert width == viewport["width"], (width, viewport)
    if not tall:
        assert height == viewport["height"], (height, viewport)


def ball_count(page: Any) -> int:
    match = re.search(r"\d+", page.inner_text("#net-ball-count"))
    return int(match[0]) if match else 0


def net_cells_marked_as_drawn(page: Any) -> set[int]:
    """The balls the kiosk shows for the network game are marked on its network cards, and nothing else."""
    drawn = {int(x) for x in page.locator("#net-last-balls .ball").all_inner_texts()}
    shown = {int(x) for x in page.locator("#net-cards .cell:not(.blank)").all_inner_texts()}
    marked = {int(x) for x in page.locator("#net-cards .cell.marked").all_inner_texts()}
    assert drawn & shown <= marked <= shown, (drawn, marked)
    return marked


@pytest.mark.req("R92.1", "R92.11-12", "R93.1", "R93.10")
def test_a_network_game_is_watched_on_the_kiosks_and_boards_of_two_halls_through_a_win_and_a_lost_link(
    tmp_path: Path, browser: Any
) -> None:
    operator = tmp_path / "operator-pki"
    init_authority(operator, "Acme Bingo Network")
    issue_certificate(operator, "central", "central-a")
    central_home = tmp_path / "central"
    export_bundle(operator, "central-a", central_home / "pki")
    port = reserve_port()
    database = f"sqlite:///{central_home / 'central.sqlite3'}"
    (central_home / "central.toml").write_text(config_text(central_home, central_home / "pki", database, sale_ms=SALE_MS,
                                                           opens_after_ms=OPENS_AFTER_MS, halls=HALLS, series="N1", cards=600, port=port))
    central = CentralProcess(central_home / "central.toml").start()
    halls: dict[str, HallProcess] = {}
    try:
        for hall_id in HALLS:
            home = tmp_path / hall_id
            issue_certificate(operator, "server", hall_id)
            export_bundle(operator, hall_id, home / "pki")
            issue_certificate(operator, "terminal", f"{hall_id}-K1")
            home.mkdir(exist_ok=True)
            (home / "hall.toml").write_text(hall_toml(hall_id, port))
            halls[hall_id] = HallProcess(home)
        start_all(list(halls.values()))
        wait_until(lambda: all(b"Linked to central server" in h.output for h in halls.values()), START,
                   "both halls to link to the central server")

        staff = {hall_id: Staff(hall) for hall_id, hall in halls.items()}
        one = staff["hall-1"]  # hall-1 plays its own game beside the network game
        one("admin", "run_verification", date="2026-11-29")
        one("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
        one("rosa", "sign_session_opening")
        one("admin", "sign_session_opening")
        accounts, tokens = {}, {}
        for number, (hall_id, desk) in enumerate(staff.items(), start=1):
            desk("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
            desk("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
            tokens[hall_id] = desk("rosa", "enrol_terminal", terminal=f"{hall_id}-K1", place="row A")["result"]["token"]
            (admitted,) = desk("adam", "admit_visitor", name=f"Player {number}", document=f"{number}1000000X", birth_date="1980-01-01")["records"]
            visitor = payload(halls[hall_id], admitted["seq"])["number"]
            (opened,) = desk("carla", "open_player_account", visitor=visitor, medium="ticket", pin=PIN)["records"]
            accounts[hall_id] = payload(halls[hall_id], opened["seq"])["account"]
            desk("carla", "load_credit", account=accounts[hall_id], amount_cents=LOAD_CENTS, desk="desk-1")
        one("sam", "announce_sale", series=1001)
        one("sam", "open_terminal_sale", seconds=HALL_SALE_S)

        kiosks = {"hall-1": kiosk_page(browser, halls["hall-1"], operator, KIOSK, "hall-1-K1", tokens["hall-1"]),
                  "hall-2": kiosk_page(browser, halls["hall-2"], operator, HANDHELD, "hall-2-K1", tokens["hall-2"])}
        boards = {hall_id: board_page(browser, hall) for hall_id, hall in halls.items()}
        for hall_id, page in kiosks.items():
            page.fill("#account", accounts[hall_id])
            page.fill("#pin", PIN)
            page.press("#pin", "Enter")
            page.wait_for_selector("#play:not([hidden])")
            page.wait_for_selector("#net-panel:not([hidden])")
        # The hall's own game works as it did: hall-1's player buys two hall cards.
        kiosk = kiosks["hall-1"]
        kiosk.fill("#quantity", "2")
        kiosk.click("#buy")
        kiosk.wait_for_selector("#message.ok:has-text('2 cards bought')")
        assert kiosk.locator("#cards .card").count() == 2 and kiosk.inner_text("#credit") == "€48.00"

        # The network sale opens in both halls; each player buys network cards, shown with their numbers.
        for hall_id, page in kiosks.items():
            page.wait_for_selector("#net-countdown", timeout=(OPENS_AFTER_MS / 1000 + WAIT) * 1000)
            assert re.fullmatch(r"\d+:\d\d", page.inner_text("#net-countdown"))  # R93.1
            page.fill("#net-quantity", str(NET_CARDS[hall_id]))
            page.click("#net-buy")
            page.wait_for_selector(f"#message.ok:has-text('{NET_CARDS[hall_id]} network cards bought')")
            assert page.locator("#net-cards .card").count() == NET_CARDS[hall_id]
            assert page.locator("#net-cards .cell").count() == 27 * NET_CARDS[hall_id]
            assert page.locator("#net-cards .cell:not(.blank)").count() == 15 * NET_CARDS[hall_id]
            assert "bingo: 15 to go" in page.inner_text("#net-cards .card >> nth=0")
        assert kiosks["hall-1"].inner_text("#credit") == f"€{(LOAD_CENTS - 200 - 100 * NET_CARDS['hall-1']) // 100}.00"
        assert kiosks["hall-2"].inner_text("#credit") == f"€{(LOAD_CENTS - 100 * NET_CARDS['hall-2']) // 100}.00"
        for page in boards.values():
            page.wait_for_selector("#net-strip:not([hidden])")
            assert "Sale closes in" in page.inner_text("#net-countdown")
            fits(page, SCREEN)
        shot(kiosks["hall-1"], "kiosk-net-sale")
        shot(kiosks["hall-2"], "handheld-net-sale")
        shot(boards["hall-1"], "board-net-sale")
        fits(kiosks["hall-2"], HANDHELD, tall=True)

        # Hall-1's own game draws too, its balls its own.
        kiosk.wait_for_selector("#sale-state:text('Sale closed for terminals')", timeout=(HALL_SALE_S + WAIT) * 1000)
        one("rosa", "close_sale")
        for _ in range(3):
            one("sam", "draw_ball")
        kiosk.wait_for_selector("#drawn li.called >> nth=2")
        boards["hall-1"].wait_for_selector("body[data-mode='draw']")

        # The network draw: balls on both boards and both kiosks, marked on the network cards.
        total = sum(NET_CARDS.values())
        for page in boards.values():
            page.wait_for_selector(f"#net-facts dd:text-is('{total}')", timeout=(SALE_MS / 1000 + WAIT) * 1000)
            page.wait_for_selector("#net-ball-count:has-text('Ball 3 of 90')")
        for page in kiosks.values():
            page.wait_for_selector("#net-ball-count:has-text('Ball 3')")
            assert net_cells_marked_as_drawn(page)
        assert kiosk.locator("#drawn li.called").count() == 3  # the hall's own draw is apart
        shot(boards["hall-1"], "board-net-draw")
        shot(kiosks["hall-1"], "kiosk-net-drawing")
        shot(kiosks["hall-2"], "handheld-net-drawing")

        # The first prize: the same winners on both boards, with hall and terminal (R92.11).
        for page in boards.values():
            page.wait_for_selector("#net-winners li:not(.none):not(.more)", timeout=120_000)
        winners = [page.locator("#net-winners li:not(.none):not(.more)").all_inner_texts() for page in boards.values()]
        wait_until(lambda: len({tuple(page.locator("#net-winners li:not(.none):not(.more)").all_inner_texts())
                                for page in boards.values()}) == 1, WAIT, "both boards to list the same winners",
                   seen=lambda: winners)
        listed = boards["hall-1"].locator("#net-winners li:not(.none):not(.more)").all_inner_texts()
        assert all(re.fullmatch(r"N1-\d+ ?LINE · after \d+ balls · €\d+\.\d\d\nhall-[12] · terminal hall-[12]-K1", w)
                   for w in listed), listed
        winning_hall = re.search(r"(hall-[12]) · terminal", listed[-1])[1]  # type: ignore[index]
        winner_kiosk = kiosks[winning_hall]
        winner_kiosk.wait_for_selector("#net-cards .card.winner")
        winner_kiosk.wait_for_selector("#net-winners li.mine")
        shot(boards["hall-1"], "board-net-won")
        shot(boards["hall-2"], "board-net-won-hall-2")
        shot(kiosks["hall-1"], "kiosk-net-won")
        shot(kiosks["hall-2"], "handheld-net-won")
        for page in boards.values():
            fits(page, SCREEN)
        fits(kiosks["hall-2"], HANDHELD, tall=True)

        # The link is lost: the kiosks say so.  The single central server killed during the draw is a stop
        # of normal play (R92.5e): started again, it declares the game not played, every stake returned,
        # and the kiosks say so with the link back.
        central.kill()
        for page in kiosks.values():
            page.wait_for_selector("#net-link-lost:not([hidden])")
            assert page.is_disabled("#net-buy")
        shot(kiosks["hall-2"], "handheld-net-link-lost")
        central.start()
        for page in kiosks.values():
            page.wait_for_selector("#net-link-lost", state="hidden", timeout=120_000)
            page.wait_for_selector("#net-prizes:has-text('Declared not played')", timeout=120_000)
            assert "every stake is returned" in page.inner_text("#net-prizes")
        shot(kiosks["hall-2"], "handheld-net-not-played")
        assert kiosks["hall-1"].inner_text("#net-link") == "linked to the network"
    finally:
        for hall in halls.values():
            hall.stop()
        central.stop()

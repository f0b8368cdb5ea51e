"""The information board readable from the back of the room, at 1920x1080 and 1280x720, in a
real headless browser (Debian's chromium driven by Playwright) against one hall server process
over TLS shared by the module's tests.

A real game is played through the staff's commands while two boards (one at each size)
follow it: before the session, the sale, a line won, a draw with many balls, the bingo, the
next game's screen and a megabingo announced (R90.2).  At each step nothing overflows its
box and every text reaches 4.5:1 against its background (WCAG AA), both computed in the
browser.  Then the board page the hall serves is fed pictures made from the hall's own
(the board socket routed to the test): every number drawn, prizes shared by cards staked
below their price, a network game alone and beside the hall's game.  Screenshots of each
state at both sizes go to ``$BINGO_SCREENSHOTS`` (docs/testing.md).
"""

from __future__ import annotations

import copy
import datetime
import json
import random
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support.waiting import WAIT, WaitTimeout
from tests.terminals.test_kiosk_browser import Staff, payload
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_board_browser import claimed, draw_until, euros, paid
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS, shot

pytestmark = pytest.mark.integration

SIZES = {"1920": {"width": 1920, "height": 1080}, "1280": {"width": 1280, "height": 720}}
#: The hall's prizes with the megabingo's fund (R90), so that one can be announced.
PRIZES = "line_bp = 1500\nbingo_bp = 5400\nmegabingo = true"

#: An element's text colour against what is painted behind it, every background down to the page's
#: (WCAG's contrast ratio, from the browser's computed styles).
CONTRAST = r"""(el) => {
  const layers = [];
  for (let up = el; up; up = up.parentElement) layers.push(getComputedStyle(up).backgroundColor);
  const rgba = (c) => { const v = c.match(/[\d.]+/g).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  let back = [0, 0, 0];
  for (const layer of layers.reverse()) {
    const [r, g, b, a] = rgba(layer);
    back = [r * a + back[0] * (1 - a), g * a + back[1] * (1 - a), b * a + back[2] * (1 - a)];
  }
  const [r, g, b, a] = rgba(getComputedStyle(el).color);
  const fore = [r * a + back[0] * (1 - a), g * a + back[1] * (1 - a), b * a + back[2] * (1 - a)];
  const lum = (c) => { const [x, y, z] = c.map((v) => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * x + 0.7152 * y + 0.0722 * z; };
  const [hi, lo] = [lum(fore), lum(back)].sort((p, q) => q - p);
  return (hi + 0.05) / (lo + 0.05);
}"""

#: The board's texts that are one line each: wrapped, they read as two things.
ONE_LINE = ", ".join(["#game-title", "#game-state", "#voice-toggle", "#link", "#sale-game", ".sale-heading", "#sale-price",
                      "#sale-countdown", "#sale-sold", "#next-heading", "#ball-count", ".ball-panel .label",
                      "#net-heading", "#net-countdown", "#banner-title"])

#: Every problem of the page as it stands: a box whose content overflows it, a text outside its
#: box or the screen, a one-line text wrapped, two numbers of the grid touching, a text below 4.5:1
#: against its background.
CHECK = r"""() => {
  const contrast = """ + CONTRAST + r""";
  const ONE_LINE = """ + repr(ONE_LINE) + r""";
  const problems = [];
  const name = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${[...el.classList].join(".")}` +
    ` "${(el.textContent || "").trim().slice(0, 40)}"`;
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const W = innerWidth, H = innerHeight;
  for (const el of document.body.querySelectorAll("*")) {
    if (!shown(el) || el.tagName === "SCRIPT") continue;
    if (el.clientWidth && el.scrollWidth > el.clientWidth + 1) problems.push(`wider than its box: ${name(el)}`);
    if (el.clientHeight && el.scrollHeight > el.clientHeight + 1) problems.push(`taller than its box: ${name(el)}`);
    const box = el.getBoundingClientRect();
    for (const node of el.childNodes) {
      if (node.nodeType !== Node.TEXT_NODE || !node.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const text = range.getBoundingClientRect();
      if (text.left < box.left - 1 || text.right > box.right + 1 || text.top < box.top - 1 || text.bottom > box.bottom + 1)
        problems.push(`text out of its box: ${name(el)}`);
      if (text.left < 0 || text.top < 0 || text.right > W + 1 || text.bottom > H + 1)
        problems.push(`text off the screen: ${name(el)}`);
      const ratio = contrast(el);
      if (ratio < 4.5) problems.push(`contrast ${ratio.toFixed(2)}:1: ${name(el)}`);
    }
  }
  // A one-line text (a countdown, a price, a title) never wraps onto a second line.
  for (const el of document.querySelectorAll(ONE_LINE)) {
    if (!shown(el) || !el.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.bottom)));
    if (tops.size > 1) problems.push(`wraps onto ${tops.size} lines: ${name(el)}`);
  }
  // Two numbers of a grid never run together: each number's digits keep clear of the next cell's.
  for (const grid of document.querySelectorAll(".ball-grid")) {
    if (!shown(grid)) continue;
    const cells = [...grid.children];
    const inked = cells.map((cell) => {
      const r = document.createRange(); r.selectNodeContents(cell); return r.getBoundingClientRect(); });
    for (let i = 0; i < cells.length; i++) {
      if (i % 10 !== 9 && inked[i + 1].left - inked[i].right < 4) problems.push(`numbers run together: ${name(cells[i])}`);
    }
  }
  return problems;
}"""


def problems(page: Any) -> list[str]:
    return page.evaluate(CHECK)


def checked(pages: dict[str, Any], name: str) -> None:
    """Each board fits and reads at its size; a screenshot of each."""
    for size, page in pages.items():
        shot(page, f"board-{name}-{size}")
        found = problems(page)
        assert not found, f"{name} at {size}: {found}"
        width, height = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        assert (width, height) == (SIZES[size]["width"], SIZES[size]["height"]), (name, size, width, height)


class Fed:
    """Boards of the hall's own page whose socket the test answers: they show the pictures it sends."""

    def __init__(self, browser: Any, hall: HallProcess, language: str | None = None) -> None:
        self.sockets: dict[str, Any] = {}
        self.pages: dict[str, Any] = {}
        for size, viewport in SIZES.items():
            page = browser.new_context(ignore_https_errors=True, viewport=viewport).new_page()
            page.set_default_timeout(WAIT * 1000)
            page.route_web_socket("**/board/ws", lambda ws, size=size: self.sockets.__setitem__(size, ws))
            page.goto(f"{hall.base}/board" + (f"?lang={language}" if language else ""))
            if language:
                page.wait_for_selector(f"html[lang={language}]", state="attached")
            self.pages[size] = page
        # A board opens its socket once its language's texts are loaded, after the page's load; the routes'
        # handlers run while Playwright is waited on, so the wait is the pages' (each in turn), not a sleep.
        # Two bounds: the hall may be busy making another language's voice clips for the boards before.
        deadline = time.monotonic() + 2 * WAIT
        while len(self.sockets) < len(SIZES):
            if time.monotonic() > deadline:
                raise WaitTimeout(f"waited {2 * WAIT} s for both boards to open their socket; seen {sorted(self.sockets)}")
            for size, page in self.pages.items():
                if size not in self.sockets:
                    page.wait_for_timeout(50)

    def show(self, view: dict[str, Any]) -> dict[str, Any]:
        for size, page in self.pages.items():
            self.sockets[size].send(json.dumps({"type": "board", "time_ms": int(time.time() * 1000), "view": view}))
        for page in self.pages.values():
            page.wait_for_function("(seq) => Board.view && Board.view.fed === seq", arg=view["fed"])
        return self.pages


class Walk:
    """The hall, its staff, the two live boards, and the pictures they showed along the way."""

    def __init__(self, hall: HallProcess, browser: Any) -> None:
        self.hall = hall
        self.staff = Staff(hall)
        self.live: dict[str, Any] = {}
        for size, viewport in SIZES.items():
            page = browser.new_context(ignore_https_errors=True, viewport=viewport).new_page()
            page.set_default_timeout(WAIT * 1000)
            page.goto(f"{hall.base}/board")
            page.wait_for_selector("#link:not(.offline)")
            self.live[size] = page
        self.views: dict[str, dict[str, Any]] = {}
        self.fed: Fed | None = None
        self.languages: dict[str, Fed] = {}
        self.browser = browser
        self.count = 0

    def wait(self, selector: str) -> None:
        for page in self.live.values():
            page.wait_for_selector(selector)

    def view(self) -> dict[str, Any]:
        return copy.deepcopy(self.live["1920"].evaluate("Board.view"))

    def feed(self, view: dict[str, Any]) -> dict[str, Any]:
        if self.fed is None:
            self.fed = Fed(self.browser, self.hall)
        self.count += 1
        return self.fed.show({**view, "fed": self.count})

    def feed_in(self, language: str, view: dict[str, Any]) -> dict[str, Any]:
        """``view`` on boards (both sizes) speaking ``language``."""
        if language not in self.languages:
            self.languages[language] = Fed(self.browser, self.hall, language)
        self.count += 1
        return self.languages[language].show({**view, "fed": self.count})


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path_factory.mktemp("board-layout"))
    config = process.config.read_text()
    assert "line_bp = 1500\nbingo_bp = 5500" in config
    process.config.write_text(config.replace("line_bp = 1500\nbingo_bp = 5500", PRIZES))
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    from playwright import sync_api  # a missing Playwright fails the test: ./test.sh installs it

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def walk(hall: HallProcess, chromium: Any) -> Walk:
    return Walk(hall, chromium)


def play_a_real_game(walk: Walk) -> None:
    """The real game, checked at every step; the pictures the boards showed are kept for the other tests."""
    staff = walk.staff
    walk.wait("#next-when:has-text('The session opens soon')")
    checked(walk.live, "welcome")

    (verified,) = staff("admin", "run_verification", date="")["records"]  # the session dated today in the hall
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
    staff("sam", "announce_sale", series=1001)
    staff("sam", "sell_cards", series=1001, first=1, last=60)
    walk.wait("#sale-sold:has-text('60 cards sold')")
    checked(walk.live, "sale")

    staff("rosa", "close_sale")
    count, cards = draw_until(staff, "line")
    claimed(staff, cards)
    staff("sam", "close_prize")
    walk.wait("#banner.line:not(.open):not([hidden])")
    # A prize is won at a count of balls, never "on ball 12", which reads as the ball numbered 12.
    for page in walk.live.values():
        assert page.inner_text("#banner-detail").startswith(f"after {count} balls · ")
    checked(walk.live, "line-won")
    walk.views["line"] = walk.view()

    more, cards = draw_until(staff, "bingo")  # the bingo's ball drawn, not yet claimed: many balls on the board
    count += more
    walk.wait(f"#ball-count:has-text('Ball {count} of 90')")
    checked(walk.live, "draw-many-balls")
    walk.views["draw"] = walk.view()
    claimed(staff, cards)
    staff("sam", "close_prize")
    staff("rosa", "close_game")
    walk.wait("#banner.bingo:not(.open):not([hidden])")
    bingo = paid(walk.hall, staff("carla", "pay_prizes", desk="desk-1"), "bingo")
    walk.wait(f"#banner-cards .card-amount:text-is('{euros(next(iter(bingo.values())))}')")
    checked(walk.live, "bingo-paid")
    staff("rosa", "collect_cards")
    walk.wait("#next-screen:not([hidden]) #previous:not([hidden])")
    for page in walk.live.values():
        assert f"BINGO\nafter {count} balls" in page.inner_text("#previous-prizes")
    checked(walk.live, "between-games")
    walk.views["between"] = walk.view()

    # The megabingo announced: on the board from its announcement to its game (R90.2), at both sizes.
    today = datetime.date.fromisoformat(payload(walk.hall, verified["seq"])["date"])
    day = (today + datetime.timedelta(days=11)).isoformat()
    staff("rosa", "announce_megabingo", date=day, time="21:30")
    walk.wait("#megabingo:not([hidden])")
    for page in walk.live.values():
        written = datetime.date.fromisoformat(day)  # as English writes a date in full
        assert page.inner_text("#megabingo").startswith(f"Megabingo on {written:%B} {written.day}, {written.year} at 21:30: ")
    checked(walk.live, "between-megabingo")
    staff("sam", "announce_sale", series=1002)
    staff("sam", "sell_cards", series=1002, first=1, last=40)
    walk.wait("#sale-sold:has-text('40 cards sold')")
    walk.wait("#megabingo:not([hidden])")
    checked(walk.live, "sale-megabingo")
    walk.views["sale"] = walk.view()
    staff("rosa", "close_sale")
    staff("sam", "draw_ball")
    walk.wait("body[data-mode='draw'] #megabingo:not([hidden])")
    checked(walk.live, "draw-megabingo")
    walk.views["megabingo"] = walk.view()


@pytest.fixture(scope="module")
def played(walk: Walk) -> Walk:
    play_a_real_game(walk)
    return walk


@pytest.mark.req("R90.2")
def test_board_1920x1080_a_real_game_fits_and_reads_at_both_sizes_with_the_megabingo_announced(played: Walk) -> None:
    # Welcome, sale, line won, many balls, bingo paid, between games, then the megabingo announced: on the
    # boards from its announcement through the next game's sale into its draw (each checked as it came).
    assert sorted(played.views) == ["between", "draw", "line", "megabingo", "sale"]
    for page in played.live.values():
        assert page.is_visible("body[data-mode='draw'] #megabingo")
    checked(played.live, "draw-megabingo")


def picture(walk: Walk, name: str) -> dict[str, Any]:
    view = copy.deepcopy(walk.views[name])
    view["megabingo"] = walk.views["megabingo"]["megabingo"]
    return view


def test_board_1920x1080_every_number_drawn_fits_its_cell_and_no_two_numbers_run_together(played: Walk) -> None:
    walk = played
    view = picture(walk, "draw")
    balls = list(range(1, 91))
    random.Random(7).shuffle(balls)
    balls.remove(88)
    view["game"]["balls"] = [*balls, 88]  # the widest number last: on the ball and in its cell
    view["game"]["last_ball"] = 88
    pages = walk.feed(view)
    for page in pages.values():
        assert page.locator("#ball-grid .cell.drawn").count() == 90 and page.inner_text("#last-ball") == "88"
    checked(pages, "every-number-drawn")
    # Undrawn numbers read too (the cell's colours are part of the check above).
    view["game"]["balls"], view["game"]["last_ball"] = [90], 90
    checked(walk.feed(view), "one-number-drawn")

    # A crowded draw: every pot a game can hold, the jackpot's reserve added, lines and a bingo shared by
    # terminals' cards staked below their price; alone and beside a network game.
    crowded = picture(walk, "draw")
    crowded["game"]["pots"] = {"jackpot_threshold": 45, "jackpot_cents": 1_234_567, "superbingo_limit": 42,
                               "superbingo_cents": 98_765, "grand_superbingo_limit": None,
                               "grand_superbingo_cents": 0, "megabingo_cents": 55_555}
    crowded["game"]["reserve_boost"] = {"line_cents": 12_345, "bingo_cents": 67_890}
    shared(crowded, "line", 33, 9597, [100, 50, 25])
    shared(crowded, "bingo", len(crowded["game"]["balls"]), 123_456, [100, 100, 50, 25, 10])
    for w in crowded["game"]["winners"]:
        w["card_number"] += 1000 if w["series"] == 9001 else 0
    for p in crowded["game"]["paid"]:
        for c in p["payments"]:
            c["card_number"] += 1000 if c["series"] == 9001 else 0
    checked(walk.feed(crowded), "crowded-draw")
    checked(walk.feed({**crowded, "network": network("drawing", 60, 9)}), "crowded-both")


def shared(view: dict[str, Any], pattern: str, ball_count: int, cents: int, stakes: list[int]) -> None:
    """``pattern`` won by cards staked ``stakes`` (% of the price), shared as the hall splits it (R88.4-5)."""
    game = view["game"]
    game["virtual_series"] = {"9001": "V1"}  # a terminal's card stakes part of its price; a paper card all of it
    cards = [(1001 if pct == 100 else 9001, 11 + i, pct) for i, pct in enumerate(stakes)]
    game["winners"] = [w for w in game["winners"] if w["pattern"] != pattern] + [
        {"series": series, "card_number": number, "pattern": pattern, "ball_count": ball_count, "stake_pct": pct}
        for series, number, pct in cards]
    payments = [cents * pct // (100 * len(stakes)) for pct in stakes]
    game["paid"] = [p for p in game["paid"] if p["prize"] != pattern] + [
        {"prize": pattern, "amount_cents": cents, "carry_cents": cents - sum(payments),
         "payments": [{"series": series, "card_number": number, "cents": c}
                      for (series, number, _), c in zip(cards, payments)]}]


def test_board_1920x1080_between_games_the_shares_show_their_stakes_add_up_and_stay_clear_of_the_cards(played: Walk) -> None:
    walk = played
    view = picture(walk, "between")
    shared(view, "line", 61, 9597, [100, 50])  # 47.98 + 23.99, and 24.00 carried to the next game's line
    shared(view, "bingo", 76, 35290, [100, 100, 25])
    pages = walk.feed(view)
    for page in pages.values():
        detail = page.locator(".result.line .result-detail").inner_text()
        assert detail == "after 61 balls · €95.97 shared by 2 cards · €24.00 to the next game's line"
        boxes = page.locator(".result.line .result-cards li").all_inner_texts()
        assert [b.split("\n")[-2:] for b in boxes] == [["STAKE 100%", "€47.98"], ["STAKE 50%", "€23.99"]], boxes
        assert 4798 + 2399 + 2400 == 9597
        # The line of a prize never lies over its cards' boxes.
        overlaps = page.evaluate("""() => [...document.querySelectorAll('.result')].flatMap((row) => {
            const text = row.querySelector('.result-detail').getBoundingClientRect();
            return [...row.querySelectorAll('.result-cards li')].filter((li) => { const b = li.getBoundingClientRect();
              return b.left < text.right && text.left < b.right && b.top < text.bottom && text.top < b.bottom; })
              .map((li) => li.innerText); })""")
        assert overlaps == []
    checked(pages, "between-shared")
    # The same shares on the banner and the draw screen's list, each with its stake.
    draw = picture(walk, "line")
    shared(draw, "line", len(draw["game"]["balls"]), 9597, [100, 50])
    draw["game"]["pause"] = None
    pages = walk.feed(draw)
    for page in pages.values():
        assert page.inner_text("#banner-detail").endswith("paid €95.97 shared by 2 cards · €24.00 to the next game's line")
        assert [li.split("\n")[-2:] for li in page.locator("#banner-cards li").all_inner_texts()] == [
            ["STAKE 100%", "€47.98"], ["STAKE 50%", "€23.99"]]
        assert page.locator("#winners li").all_inner_texts()[0].endswith("€23.99 · stake 50%")
    checked(pages, "line-shared")


def network(state: str, balls: int, winners: int) -> dict[str, Any]:
    """A network game as the hall's picture holds it (``HallView.network``)."""
    drawn = list(range(90, 90 - balls, -1))
    return {"game_id": "net-7", "kind": "network", "state": state, "series": "N1", "price_cents": 100,
            "closes_at_ms": int(time.time() * 1000) + 600_000 if state == "selling" else None,
            "balls": drawn, "last_ball": drawn[-1] if drawn else None, "patterns": ["line", "bingo"],
            "cards_sold": None if state == "selling" else 1234, "sales_cents": None if state == "selling" else 123_400,
            "prizes": {} if state == "selling" else {"line": 18_510, "bingo": 67_870},
            "winner_count": winners,
            "winners": [{"pattern": "line", "ball_count": 11, "card": f"N1-{100 + i}", "hall": f"hall-{i % 3 + 1}",
                         "terminal": f"hall-{i % 3 + 1}-K{i + 1}", "cents": 18_510 // winners} for i in range(winners)]}


@pytest.mark.req("R92.11-12")
def test_board_1920x1080_the_network_game_alone_has_the_screen_and_beside_the_halls_game_each_has_half(played: Walk) -> None:
    walk = played
    # Before the session, a network game drawing: its own screen, no "Welcome / The session opens soon".
    alone = {**picture(walk, "between"), "session_open": False, "games_played": 0, "game": None,
             "network": network("drawing", 48, 9)}
    pages = walk.feed(alone)
    for page in pages.values():
        assert page.is_hidden("#next-screen") and page.is_visible("#net-strip")
        assert page.locator("#net-grid .cell.drawn").count() == 48 and page.inner_text("#net-last-ball") == "43"
        # The latest winners listed (as many as the column holds), then how many more.
        listed = page.locator("#net-winners li.line").count()
        assert listed >= 2 and page.inner_text("#net-winners li.more") == f"and {9 - listed} more winning cards"
        width = page.evaluate("document.getElementById('net-strip').getBoundingClientRect().width")
        assert width == page.viewport_size["width"]
    checked(pages, "network-alone")
    checked(walk.feed({**alone, "network": network("selling", 0, 0)}), "network-sale-alone")

    # The hall's draw and the network's side by side, each with its own 90 numbers, halves of the screen.
    both = {**picture(walk, "draw"), "network": network("drawing", 30, 1)}
    pages = walk.feed(both)
    for page in pages.values():
        left, right = page.evaluate("['draw-screen', 'net-strip'].map((id) => "
                                    "document.getElementById(id).getBoundingClientRect().toJSON())")
        assert left["right"] <= right["left"] and abs(left["width"] - right["width"]) <= 2, (left, right)
        assert page.locator("#ball-grid .cell.drawn").count() == len(both["game"]["balls"])
        assert page.locator("#net-grid .cell.drawn").count() == 30
    checked(pages, "both-games")
    checked(walk.feed({**picture(walk, "sale"), "network": network("selling", 0, 0)}), "both-sales")
    line = picture(walk, "line")
    checked(walk.feed({**line, "network": network("drawing", 60, 9)}), "both-line-won")
    # The network game over stays beside the hall's next game's screen.
    checked(walk.feed({**picture(walk, "between"), "network": network("closed", 70, 9)}), "network-over-beside")


def test_board_1920x1080_reduced_motion_nothing_moves_and_the_kiosks_pulse_stops(walk: Walk) -> None:
    kiosk_css = (Path(__file__).parents[2] / "hall_server/terminal_gateway/static/kiosk.css").read_text()
    for motion, pulse in (("reduce", "none"), ("no-preference", "pulse")):
        context = walk.browser.new_context(ignore_https_errors=True, viewport=SIZES["1280"], reduced_motion=motion)
        page = context.new_page()
        page.set_default_timeout(WAIT * 1000)
        page.goto(f"{walk.hall.base}/board")
        page.wait_for_selector("#link:not(.offline)")
        assert page.evaluate("document.getAnimations().length") == 0  # the board moves for nobody
        # The kiosk's near-win card pulses only for a screen that has not asked for less motion (its
        # style sheet on a blank page: the hall's pages allow no inline style).
        page = context.new_page()
        page.set_content(f"<style>{kiosk_css}</style><div class='card near'>1</div>")
        assert page.evaluate("getComputedStyle(document.querySelector('.card.near')).animationName") == pulse
        context.close()


@pytest.mark.parametrize("language", ["ca", "es", "fr", "en"])
def test_board_1920x1080_in_each_language_no_text_overflows_or_wraps(played: Walk, language: str) -> None:
    """The game's pictures on boards speaking Catalan, Castilian, French and English, at both sizes: the
    longer words of a language overflow nothing and wrap no one-line text (the sale's countdown, its
    price, the titles), whether the terminals' sale is yet to open, open or over."""
    walk = played
    now = int(time.time() * 1000)
    sale = picture(walk, "sale")
    pictures = {"sale-paper-only": {**sale, "game": {**sale["game"], "terminal_sale": None}},
                "sale-terminals-soon": {**sale, "game": {**sale["game"], "terminal_sale": {
                    "opens_at_ms": now + 600_000, "closes_at_ms": now + 1_200_000}}},
                "sale-terminals-open": {**sale, "game": {**sale["game"], "terminal_sale": {
                    "opens_at_ms": now - 60_000, "closes_at_ms": now + 599_000}}},
                "sale-terminals-over": {**sale, "game": {**sale["game"], "terminal_sale": {
                    "opens_at_ms": now - 600_000, "closes_at_ms": now - 1_000}}},
                "line": picture(walk, "line"), "draw": picture(walk, "draw"), "between": picture(walk, "between"),
                "both-games": {**picture(walk, "draw"), "network": network("drawing", 30, 1)},
                "both-sales": {**picture(walk, "sale"), "network": network("selling", 0, 0)},
                "network-alone": {**picture(walk, "between"), "session_open": False, "games_played": 0, "game": None,
                                  "network": network("drawing", 48, 9)}}
    for name, view in pictures.items():
        checked(walk.feed_in(language, view), f"{language}-{name}")

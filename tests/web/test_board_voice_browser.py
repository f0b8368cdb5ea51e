"""The board's voice in a real headless browser (Debian's chromium, autoplay allowed as on a
hall screen) against the hall server process over TLS: the session's last game announced,
each of 20 balls drawn spoken in the order drawn, the sound switched off and on, and the
megabingo announced at the room chief's desk spoken (R92.11-12, R93.15, R90.2).  What the
page played is read from the page (``window.boardVoice``): a clip counts once it ended."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlencode

import pytest

from hall_server.voice.clips import espeak_program
from tests.support.waiting import WAIT, wait_until
from tests.terminals.test_kiosk_browser import Staff, payload
from tests.web.conftest import ALL_BALLS, HallProcess
from tests.web.test_board_browser import SCREEN, claimed, draw_until
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS
from tests.web.test_pots_browser import PRIZES

pytestmark = pytest.mark.integration

#: Real-time speech: about a second a ball, so the page's queue is given longer than a page action.
SPEECH = 4 * WAIT


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[HallProcess]:
    if espeak_program() is None:
        pytest.fail("espeak-ng is missing: apt-get install espeak-ng (scripts/system-deps.sh)")
    process = HallProcess(tmp_path)
    config = process.config.read_text()
    process.config.write_text(config.replace("line_bp = 1500\nbingo_bp = 5500", PRIZES))
    process.start()
    yield process
    process.stop()


@pytest.fixture
def speaking_browser() -> Iterator[Any]:
    """Chromium as a hall screen is set up: sound plays without a click."""
    from playwright import sync_api

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        args = [*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"]
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        yield chromium
        chromium.close()


def voice(page: Any) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        "({played: boardVoice.played.slice(), skipped: boardVoice.skipped.slice(), queued: boardVoice.queue.length,"
        " playing: boardVoice.playing && boardVoice.playing.url, lang: boardVoice.lang})")
    return state


def quiet(page: Any) -> bool:
    state = voice(page)
    return not state["queued"] and state["playing"] is None


@pytest.mark.req("R92.11-12", "R93.15", "R90.2")
def test_the_board_speaks_each_ball_in_order_the_last_game_and_the_megabingo(
    hall: HallProcess, speaking_browser: Any
) -> None:
    staff = Staff(hall)
    (verified,) = staff("admin", "run_verification", date="")["records"]  # dated today in the hall
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)

    board = speaking_browser.new_context(ignore_https_errors=True, viewport=SCREEN).new_page()
    board.set_default_timeout(WAIT * 1000)
    warnings: list[str] = []
    board.on("console", lambda message: warnings.append(message.text) if message.type == "warning" else None)
    board.goto(f"{hall.base}/board?lang=ca")  # the hall speaks English: this screen Catalan
    board.wait_for_selector("#link:not(.offline)")
    assert board.inner_text("#voice-toggle") == "So: activat"
    assert voice(board)["lang"] == "ca" and voice(board)["played"] == []  # nothing on the screen is spoken

    # The session's last game, announced as it opens (R93.15), then its 20 balls, each spoken in turn.
    staff("sam", "announce_sale", series=1001)
    staff("rosa", "announce_last_game")
    staff("sam", "sell_cards", series=1001, first=1, last=3)
    staff("rosa", "close_sale")
    drawn: list[int] = []
    line_won = False
    while len(drawn) < 20:
        (record, *_) = staff("sam", "draw_ball")["records"]
        found = payload(hall, record["seq"])
        drawn.append(found["ball"])
        if found["completed_line"] and not line_won:  # the draw waits for the line's close (R85.6)
            claimed(staff, found["completed_line"])
            staff("sam", "close_prize")
            line_won = True
    expected = ["/voice/ca/last-game.wav", *(f"/voice/ca/ball-{n}.wav" for n in drawn)]
    wait_until(lambda: len([u for u in voice(board)["played"] if "/ball-" in u]) >= 20 and quiet(board), SPEECH,
               "the board to speak the 20 balls", seen=lambda: voice(board))
    played = voice(board)["played"]
    assert [u for u in played if u != "/voice/ca/line.wav"] == expected, (played, drawn)
    assert ("/voice/ca/line.wav" in played) == line_won
    assert voice(board)["skipped"] == [] and not [w for w in warnings if "board voice" in w], warnings

    # Switched off, the board speaks none of the rest of the game; switched on, it speaks again.
    board.click("#voice-toggle")
    assert board.inner_text("#voice-toggle") == "So: desactivat"
    if not line_won:
        claimed(staff, draw_until(staff, "line")[1])
        staff("sam", "close_prize")
    claimed(staff, draw_until(staff, "bingo")[1])
    staff("sam", "close_prize")
    staff("rosa", "close_game")
    staff("carla", "pay_prizes", desk="desk-1")
    staff("rosa", "collect_cards")
    board.wait_for_selector("#next-screen:not([hidden])")
    assert voice(board)["played"] == played and quiet(board)
    board.click("#voice-toggle")
    assert board.inner_text("#voice-toggle") == "So: activat"

    # The megabingo announced at the desk: its date, time and amount spoken (R90.2).
    today = datetime.date.fromisoformat(payload(hall, verified["seq"])["date"])
    day = (today + datetime.timedelta(days=11)).isoformat()
    (announced,) = staff("rosa", "announce_megabingo", date=day, time="21:30")["records"]
    minimum = payload(hall, announced["seq"])["amount_cents"]
    megabingo = "/voice/ca/megabingo.wav?" + urlencode({"date": day, "time": "21:30", "minimum_cents": minimum})
    wait_until(lambda: megabingo in voice(board)["played"], SPEECH, "the board to speak the megabingo",
               seen=lambda: voice(board))
    assert voice(board)["played"] == [*played, megabingo] and voice(board)["skipped"] == []

    # The clips are the hall's: another language on ask; a megabingo other than the one announced is not spoken.
    french = board.request.get(f"{hall.base}/voice/fr/ball-7.wav")
    assert french.status == 200 and french.headers["content-type"] == "audio/wav" and french.body()[:4] == b"RIFF"
    stale = board.request.get(f"{hall.base}/voice/ca/megabingo.wav?" + urlencode(
        {"date": day, "time": "21:30", "minimum_cents": minimum + 1}))
    assert stale.status == 404 and "no megabingo is announced" in stale.json()["error"]["message"]
    assert board.request.get(f"{hall.base}/voice/ca/ball-91.wav").status == 404
    assert board.request.get(f"{hall.base}/voice/de/ball-7.wav").status == 404

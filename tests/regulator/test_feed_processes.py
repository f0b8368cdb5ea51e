"""The feed between real processes: a demo hall (``bingo hall serve --demo``) with a
``[regulator]`` section, and the reference receiver (``bingo regulator serve``), over mutual
TLS on loopback; each killed with SIGKILL while the hall plays (R92.7, R95.3).

After every outage of either side the receiver holds every record of the hall's journal
once, in order, as signed (the same hashes), and raised no alert; the console tells the
staff how far the feed stands, and says when it is behind."""

from __future__ import annotations

from contextlib import closing
import itertools
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text
from server_kit.keys import journal_key_path, load_journal_key
from server_kit.pki import PkiFolder, export_bundle, issue_certificate
from server_kit.ports import reserve_port
from tests.crash.wire import LiveSocket, sign_in_cookie
from tests.regulator.registration import register_in
from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import _HASH, PASSWORD, HallProcess, HttpClient
from tests.web.test_console_browser import browser  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration]
REPO = Path(__file__).resolve().parents[2]
LISTENING = re.compile(rb"listening for feeds on \S+:(\d+)")
SENDER = "hall:hall-server"  # the hall's server certificate is named hall-server
READER = "regulator-staff"


class ReceiverProcess:
    """``bingo regulator serve`` in a child process."""

    def __init__(self, home: Path, pki: Path, port: int, web_port: int | None = None) -> None:
        self.home, self.pki, self.port, self.web_port = home, pki, port, web_port
        self.process: subprocess.Popen[bytes] | None = None
        self.output = b""
        self.listening = False
        #: The umask the process starts with (None: the test's own).
        self.umask: int | None = None
        #: More options of ``bingo regulator serve``.
        self.extra: list[str] = []

    def start(self) -> "ReceiverProcess":
        command = [sys.executable, "-c", "from regulator.cli import regulator; regulator()", "serve",
                   "--dir", str(self.home), "--pki", str(self.pki), "--port", str(self.port),
                   "--interface", "127.0.0.1",
                   *(["--web-port", str(self.web_port)] if self.web_port is not None else ["--no-page"]), *self.extra]
        self.output, self.listening = b"", False
        umask = self.umask
        self.process = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(REPO)},
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        preexec_fn=None if umask is None else lambda: os.umask(umask) and None)
        threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True).start()
        process = self.process
        wait_until(lambda: self.listening or process.poll() is not None, WAIT, "the receiver to listen")
        assert self.listening, self.output.decode(errors="replace")
        return self

    def _drain(self, stream: Any) -> None:
        for line in iter(stream.readline, b""):
            self.output += line
            if LISTENING.search(line):
                self.listening = True

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self.process = None

    def held(self, sender: str = SENDER) -> list[tuple[int, str]]:
        with closing(sqlite3.connect(self.home / "regulator.sqlite3")) as db, db:
            return list(db.execute("SELECT seq, hash FROM feed_record WHERE sender = ? ORDER BY seq", (sender,)))

    def alerts(self) -> list[Any]:
        with closing(sqlite3.connect(self.home / "regulator.sqlite3")) as db, db:
            return list(db.execute("SELECT sender, kind, seq, detail FROM feed_alert"))


def journal_of(hall: HallProcess) -> list[tuple[int, str]]:
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as db, db:
        return list(db.execute("SELECT seq, hash FROM journal ORDER BY seq"))


@pytest.fixture
def hall_and_receiver(tmp_path: Path) -> Iterator[tuple[HallProcess, ReceiverProcess]]:
    port = reserve_port()
    config = default_config_text("Fed hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    # Open round the clock: the demo opens its sessions whatever the hour the test runs at.
    config = re.sub(r'(?m)^# opening_hours = "[^"]*"$', 'opening_hours = "every day 00:00-24:00"', config)
    assert 'opening_hours = "every day 00:00-24:00"' in config
    config += f'\n[regulator]\nhost = "localhost"\nport = {port}\nhall_id = "hall-server"\n'
    (tmp_path / "hall.toml").write_text(config)
    hall = HallProcess(tmp_path, demo=True, demo_pace=0.05).start()  # its first start makes the authority
    hall.certificate("regulator", "regulator")  # issued by the hall's local authority, for localhost
    hall.certificate("regulator", READER)  # the regulator's staff, reading the receiver's page
    bundle = tmp_path / "regulator-pki"
    export_bundle(hall.folder / "operator-ca", "regulator", bundle)
    # The regulator registers the hall: its journal key, its report-signing certificate (hall-server-reports).
    register_in(tmp_path / "regulator", SENDER, load_journal_key(journal_key_path(hall.folder)))
    receiver = ReceiverProcess(tmp_path / "regulator", bundle, port)
    try:
        yield hall, receiver
    finally:
        receiver.kill()
        hall.stop()


def feed_line(console: LiveSocket) -> str:
    """The feed's line in the last picture the console was sent ("" when it holds none)."""
    with console.changed:
        views = [m.message["view"] for m in console.messages if "view" in m.message]
    return ((views[-1].get("feed") or {}).get("line", "")) if views else ""


def caught_up(hall: HallProcess, receiver: ReceiverProcess, least: int) -> bool:
    held = receiver.held()
    return len(held) >= least and held == journal_of(hall)[:len(held)]


@pytest.mark.req("R92.7")
@pytest.mark.timeout(600)
def test_after_kills_of_the_receiver_and_of_the_hall_the_receiver_holds_every_record_once_in_order(
    hall_and_receiver: tuple[HallProcess, ReceiverProcess],
) -> None:
    hall, receiver = hall_and_receiver
    console = LiveSocket(hall, "/ws", sign_in_cookie(hall, "rosa"))
    try:
        # No receiver yet: the console says the feed has not reached it.
        console.wait_for(lambda: bool(feed_line(console)), WAIT, "the feed's line")
        assert "not connected yet" in feed_line(console), feed_line(console)
        receiver.start()
        for round_ in range(3):
            least = len(journal_of(hall))
            wait_until(lambda: caught_up(hall, receiver, least), WAIT * 2, f"round {round_}: the receiver to catch up")
            receiver.kill()  # mid-stream: the demo plays on
            away = len(receiver.held())
            wait_until(lambda: len(journal_of(hall)) > away + 20, WAIT, "the hall to commit while the receiver is away")
            receiver.start()
        least = len(journal_of(hall))
        wait_until(lambda: caught_up(hall, receiver, least), WAIT * 2, "the receiver to catch up again")
        hall.kill()
        assert caught_up(hall, receiver, 0)  # nothing the receiver holds is other than the hall's journal
        hall.start()
        console.close()
        console = LiveSocket(hall, "/ws", sign_in_cookie(hall, "rosa"))
        least = len(journal_of(hall))
        wait_until(lambda: caught_up(hall, receiver, least), WAIT * 2, "the receiver to catch up after the hall's kill")
        console.wait_for(lambda: "acknowledged" in feed_line(console) or "behind" in feed_line(console), WAIT,
                         "the feed's line once connected")
        # Records committed while the hall stops are sent at its next start.
        hall.stop()
        stopped_at = len(journal_of(hall))
        hall.start()
        wait_until(lambda: caught_up(hall, receiver, stopped_at), WAIT * 2, "the records of the stop, after the start")
        hall.kill()
        receiver.kill()  # nothing in flight any more
        everything, held = journal_of(hall), receiver.held()
        assert held == everything[:len(held)] and len(held) >= stopped_at  # once, in order, the hall's own hashes
        assert receiver.alerts() == []
        assert len(held) > 200  # more than one batch, across every outage
        status = subprocess.run([sys.executable, "-c", "from regulator.cli import regulator; regulator()", "status",
                                 "--dir", str(receiver.home), "--json"], capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
        assert status.returncode == 0, status.stderr
        said = json.loads(status.stdout)
        assert said["senders"] == [{"sender": SENDER, "seq": len(held), "time_ms": said["senders"][0]["time_ms"]}]
        assert said["alerts"] == []
        # Every game the demo played to its end was replayed from its records, and verified.
        with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as db, db:
            collected = [json.loads(p)["game_id"] for (s, p) in db.execute(
                "SELECT seq, payload FROM journal WHERE type = 'cards_collected' ORDER BY seq") if s <= len(held)]
        games = said["games"][SENDER]
        assert collected and [g["game_id"] for g in reversed(games)] == collected[-10:]
        assert all(g["verified"] and g["balls"] > 0 and g["prizes"] for g in games), games
        lines = subprocess.run([sys.executable, "-c", "from regulator.cli import regulator; regulator()", "status",
                                "--dir", str(receiver.home)], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60).stdout.splitlines()
        assert lines[0].startswith(f"{SENDER}: {len(held)} records held, the last at ")
        assert any(line.startswith(f"{SENDER} game {collected[-1]}: ") and line.endswith("; verified") for line in lines)
        assert lines[-1] == "0 alert(s)"
    finally:
        console.close()


@pytest.mark.req("R92.7")
@pytest.mark.timeout(300)
def test_the_central_server_feeds_as_central_and_resumes_after_its_kill(tmp_path: Path) -> None:
    from tests.central_server.support import CentralProcess, config_text, make_pki

    pki = make_pki(tmp_path / "pki")
    issue_certificate(pki, "regulator", "regulator")
    export_bundle(pki, "regulator", tmp_path / "regulator-pki")
    port = reserve_port()
    home = tmp_path / "central"
    home.mkdir()
    database = home / "central.sqlite3"
    text = config_text(home, pki, f"sqlite:///{database}", sale_ms=10_000, ball_ms=1_000, opens_after_ms=500,
                       games=("net-1", "net-2"))
    (home / "central.toml").write_text(text + f'\n[regulator]\nhost = "localhost"\nport = {port}\n')
    # The central server's journal key, made before its first start so the regulator can register it.
    register_in(tmp_path / "regulator", "central", load_journal_key(journal_key_path(home), create=True))
    receiver = ReceiverProcess(tmp_path / "regulator", tmp_path / "regulator-pki", port)
    central = CentralProcess(home / "central.toml")
    try:
        receiver.start()
        central.start()
        def journal() -> list[tuple[int, str]]:
            with closing(sqlite3.connect(database)) as db, db:
                return list(db.execute("SELECT seq, hash FROM journal ORDER BY seq"))

        wait_until(lambda: len(receiver.held("central")) >= 3 and receiver.held("central") == journal(), WAIT,
                   "the central server's records at the receiver")
        central.kill()
        before = len(journal())  # the start after the kill journals that play stopped (R92.5e), at least
        receiver.kill()
        receiver.start()
        central.start()
        wait_until(lambda: len(receiver.held("central")) > before and receiver.held("central") == journal()[
            :len(receiver.held("central"))], WAIT, "the records after both kills")
        central.kill()
        receiver.kill()
        held = receiver.held("central")
        assert held == journal()[:len(held)]  # once, in order, the central server's own hashes
        assert receiver.alerts() == []
    finally:
        central.kill()
        receiver.kill()


@pytest.mark.req("R92.7", "R95.4", "R88.2", "R88.4-5", "R74.2")
def test_the_console_shows_the_feed_behind_in_red_and_then_up_to_date(
    hall_and_receiver: tuple[HallProcess, ReceiverProcess], browser: Any
) -> None:
    """The administrator sees at a glance whether the regulator receives the hall's journal.  Once the session
    closes, the day's audit export reaches the receiver, which replays every game of the day card by card on the
    hall's records it holds: each is marked so on its page and in /api/status, and no alert is raised."""
    from tests.web.test_console_browser import console_for, shot

    hall, receiver = hall_and_receiver
    page = console_for(browser, hall, "admin")
    # The hall speaks Catalan: so does its console's feed line ("Regulator's feed (...): not connected yet, ...").
    page.wait_for_selector("#feed-state.behind:has-text('encara sense connexió')")
    shot(page, "console-feed-behind")
    receiver.web_port = reserve_port()
    receiver.start()
    page.wait_for_selector("#feed-state:not(.behind):has-text('al dia')", timeout=WAIT * 2 * 1000)
    # The top bar may cut the line short at 1280 px: the whole of it is the tooltip.
    assert page.evaluate("() => { const line = document.getElementById('feed-state'); "
                         "return line.title !== '' && line.title === line.textContent; }")
    shot(page, "console-feed-up-to-date")
    assert page.locator("#feed-state").is_visible()
    # The regulator watches the records and the games arrive, and each game verify, on the receiver's page.
    authority = PkiFolder(hall.folder / "operator-ca")
    watching = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 800},
                                   client_certificates=[{"origin": f"https://localhost:{receiver.web_port}",
                                                         "certPath": authority.cert(READER),
                                                         "keyPath": authority.key(READER)}]).new_page()
    watching.goto(f"https://localhost:{receiver.web_port}/?lang=en")  # the page speaks Catalan unless asked
    watching.wait_for_selector(f"#senders td:has-text('{SENDER}')")
    watching.wait_for_selector("#games td.ok:has-text('verified')", timeout=WAIT * 3 * 1000)  # refreshed every 5 s
    # The hall's opening hours, reported at its first start, are among the notices (R74.2).
    watching.wait_for_selector("#notices td:has-text('opening hours: every day 00:00-24:00 (first report)')")
    shot(watching, "regulator-receiver-games")
    assert "no alert" in watching.inner_text("header")
    assert watching.locator("#games td.alert").count() == 0

    # The room chief announces a game on sale as the session's last; once its cards are collected, the session
    # closes: the hall writes the day's report and its audit export, and sends them (R83.5, R92.7).
    rosa, admin = signed_in(hall, "rosa"), signed_in(hall, "admin")
    announced = wait_until(lambda: command(rosa, "announce_last_game"), WAIT * 4,
                           "a game on sale to announce as the session's last", interval=0.25,
                           seen=lambda: (ANSWERS.get("announce_last_game"), last_records(hall, 4), demo_said(hall, 4)))
    last_game = payload_of(hall, announced["records"][0]["seq"])["game_id"]
    wait_until(lambda: last_game in collected_games(hall), WAIT * 4, f"game {last_game}'s cards collected",
               interval=0.25)
    assert command(rosa, "count_balls", stage="closing", balls_present=list(range(1, 91)), witnesses=["A player"])
    assert command(rosa, "sign_session_closing") and command(admin, "sign_session_closing")
    day = last_game[:10]  # a game id starts with its session date
    watching.wait_for_selector(f"#days td:has-text('{day}') ~ td.ok:has-text('replayed card by card')",
                               timeout=WAIT * 3 * 1000)
    shot(watching, "regulator-receiver-day-replayed")
    said = watching.context.request.get(f"https://localhost:{receiver.web_port}/api/status").json()
    (verdict,) = said["days"]
    played = collected_games(hall)
    assert (verdict["sender"], verdict["day"], verdict["verdict"]) == (SENDER, day, "verified"), verdict
    assert verdict["games"] == [g for g in played if g.startswith(day)] and last_game in verdict["games"]
    assert all(g["replayed_card_by_card"] == f"audit-{day}" for g in said["games"][SENDER]), said["games"]
    assert said["alerts"] == [] and said["days_awaiting_records"] == []


def signed_in(hall: HallProcess, name: str) -> HttpClient:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": PASSWORD})
    assert status == 200, answer
    return client


def command(client: HttpClient, name: str, **args: Any) -> Any:
    """The command's answer, or None when the hall refused it (the demo has the game in another state)."""
    # A sign-in uses each request id once (a repeat is refused "replayed", even after a refusal): one per try.
    request = f"{name}-{next(TRIES)}"
    status, answer = client.call("POST", "/api/command", {"id": request, "command": name, "args": args})
    ANSWERS[name] = (status, answer)
    return answer if status == 200 and answer.get("ok") else None


#: Each command's last answer (status, body), for what a wait saw instead.
ANSWERS: dict[str, Any] = {}
TRIES = itertools.count(1)


def last_records(hall: HallProcess, count: int = 12) -> list[str]:
    """The hall's last records, as ``seq type payload`` lines (what a wait saw instead)."""
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as db, db:
        rows = list(db.execute("SELECT seq, type, payload FROM journal ORDER BY seq DESC LIMIT ?", (count,)))
    return [f"{seq} {kind} {payload[:200]}" for seq, kind, payload in reversed(rows)]


def demo_said(hall: HallProcess, count: int = 12) -> list[str]:
    """The demo's last refusals and failures in the hall's log."""
    lines = hall.output.decode(errors="replace").splitlines()
    return [line for line in lines if "Demo" in line or "demo" in line or "Traceback" in line][-count:]


def payload_of(hall: HallProcess, seq: int) -> Any:
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as db, db:
        ((payload,),) = db.execute("SELECT payload FROM journal WHERE seq = ?", (seq,))
    return json.loads(payload)


def collected_games(hall: HallProcess) -> list[str]:
    """The hall's games whose cards were collected, played to their end (not refunded), in order."""
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as db, db:
        rows = [(t, json.loads(p)["game_id"]) for t, p in db.execute(
            "SELECT type, payload FROM journal WHERE type IN ('cards_collected', 'game_refunded') ORDER BY seq")]
    refunded = {game for kind, game in rows if kind == "game_refunded"}
    return [game for kind, game in rows if kind == "cards_collected" and game not in refunded]


def test_the_newcomers_commands_refuse_what_cannot_work_with_a_reason(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", *args],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                              cwd=tmp_path, timeout=60)

    bad = run("hall", "serve", "--regulator", "localhost")
    assert bad.returncode == 2 and "HOST:PORT of the regulator's receiver (localhost:8700), not 'localhost'" in bad.stderr
    demo = subprocess.run([sys.executable, "-c", "from regulator.cli import regulator; regulator()", "demo",
                           "--hall", str(tmp_path / "var")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert demo.returncode == 1
    assert "no local authority in" in demo.stderr and "start the demo hall once first (./run.sh --demo)" in demo.stderr

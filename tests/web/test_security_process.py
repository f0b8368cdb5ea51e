"""Pentest findings against a real hall server process on loopback, over TLS: what a
browser or a script on the network sees (views, pushes, headers, WebSocket limits)
and what the server writes to its log."""

from __future__ import annotations

from contextlib import closing
import json
import socket
import sqlite3
import ssl
import struct
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from twisted.internet.testing import MemoryReactorClock

from hall_server.config import DEFAULT_STAFF, default_config_text
from hall_server.web.redaction import SECRET_FIELDS
from server_kit.web.bounded_websocket import CONSOLE_MESSAGE_BYTES, TERMINAL_MESSAGE_BYTES
from tests.web.conftest import _HASH, ALL_BALLS, PASSWORD, FakeBrowser, HallProcess, HttpClient, WireSocket

pytestmark = pytest.mark.integration

PIN = "4821"


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path_factory.mktemp("hall")).start()
    yield process
    process.stop()


def signed_in(hall: HallProcess, name: str) -> HttpClient:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": PASSWORD})
    assert status == 200, answer
    return client


class Staff:
    """Every staff member signed in over HTTPS; ``staff(name, command, **args)`` gives a command."""

    def __init__(self, hall: HallProcess) -> None:
        self.clients = {name: signed_in(hall, name) for name, _ in DEFAULT_STAFF}
        self.counter = 0

    def __call__(self, who: str, command: str, **args: Any) -> dict[str, Any]:
        self.counter += 1
        status, answer = self.clients[who].call(
            "POST", "/api/command", {"id": f"p{self.counter}", "command": command, "args": args})
        assert status == 200 and answer["ok"], (command, answer)
        return answer


def latest(client: HttpClient, record_type: str) -> dict[str, Any]:
    """The payload of the latest record of ``record_type`` on the console's journal list."""
    state = client.call("GET", "/api/state")[1]
    return next(r["payload"] for r in state["view"]["recent"] if r["type"] == record_type)


def journal_secrets(folder: Path) -> set[str]:
    """Every secret value the journal keeps (hashes of PINs and tokens), read from the database."""
    found = set()
    with closing(sqlite3.connect(folder / "hall.sqlite3")) as db, db:
        for (payload,) in db.execute("SELECT payload FROM journal"):
            for name, value in json.loads(payload).items():
                if name in SECRET_FIELDS and isinstance(value, str):
                    found.add(value)
    return found


@pytest.mark.req("R80")
def test_pentest_2_no_secret_in_any_view_push_or_log_line_of_a_real_hall(hall: HallProcess) -> None:
    """GET /api/state and the /ws pushes carried players' pin_hash; now no view of any role,
    no push (snapshots, records, the board's) and no line of the server's log holds a
    secret's field name or value, after a session with accounts, PINs, terminals and staff."""
    staff = Staff(hall)
    consoles = {name: WireSocket(hall, "/ws", cookie=client.cookie) for name, client in staff.clients.items()}
    board = WireSocket(hall, "/board/ws")
    assert all(c.accepted for c in consoles.values()) and board.accepted

    staff("admin", "run_verification", date="2026-11-29")
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
    staff("adam", "admit_visitor", name="Pau Player", document="P1234567", birth_date="1980-01-01")
    visitor = latest(staff.clients["adam"], "visitor_admitted")["number"]
    staff("carla", "open_player_account", visitor=visitor, medium="ticket", pin=PIN)
    account = latest(staff.clients["carla"], "player_account_opened")["account"]
    staff("carla", "load_credit", account=account, amount_cents=2_000, desk="desk-1")
    token = staff("rosa", "enrol_terminal", terminal="K1", place="row A")["result"]["token"]

    terminal = WireSocket(hall, "/kiosk/ws", certificate=("terminal", "K1"))
    assert terminal.accepted, terminal.rejected_status
    terminal.send({"v": 1, "seq": 1, "type": "hello", "terminal": "K1", "token": token})
    terminal.until(lambda m: m["type"] == "welcome")
    terminal.send({"v": 1, "seq": 2, "type": "sign_in", "account": account, "pin": PIN})
    terminal.until(lambda m: m["type"] == "signed_in")
    staff("carla", "load_credit", account=account, amount_cents=500, desk="desk-1")

    last_seq = staff.clients["admin"].call("GET", "/api/state")[1]["view"]["seq"]
    for console in [*consoles.values(), board]:
        console.until(lambda m: m.get("view", {}).get("seq") == last_seq)
    views = [json.dumps(client.call("GET", "/api/state")[1]) for client in staff.clients.values()]
    views.append(json.dumps(HttpClient(hall).call("GET", "/api/board")[1]))
    pushes = [text for socket_ in [*consoles.values(), board] for text in socket_.texts]
    for socket_ in [*consoles.values(), board, terminal]:
        socket_.close()
    log = hall.output.decode(errors="replace")

    secrets = journal_secrets(hall.folder)
    assert len(secrets) >= 2  # a PIN hash and a token hash, at least: the walk below has something to find
    secrets |= {_HASH, token, PASSWORD}
    assert "player_account_opened" in " ".join(views) and "terminal_enrolled" in " ".join(views)
    for where, texts in (("a view", views), ("a push", pushes), ("the log", [log])):
        for text in texts:
            for name in SECRET_FIELDS:
                assert f'"{name}":' not in text and f"{name}=" not in text, f"{name} in {where}"
            for value in secrets:
                assert value not in text, f"a secret value in {where}"


def _raw_socket(hall: HallProcess, path: str) -> ssl.SSLSocket:
    """A TLS connection on which a WebSocket handshake to ``path`` was accepted."""
    raw = socket.create_connection(("127.0.0.1", hall.port), timeout=20)
    certificate = ("terminal", "K9") if path.startswith("/kiosk") else None  # the kiosk socket takes terminals only
    tls = hall.tls_context(certificate).wrap_socket(raw, server_hostname="localhost")
    tls.sendall(
        f"GET {path} HTTP/1.1\r\nHost: localhost:{hall.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = tls.recv(4096)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return tls


def _read_until_closed(tls: ssl.SSLSocket) -> tuple[int | None, bool]:
    """The close code of the server's Close frame, and whether the server then ended the
    connection (TLS close_notify or TCP close), read until it did."""
    data, ended = b"", False
    while not ended:
        try:
            chunk = tls.recv(4096)
        except (ConnectionError, ssl.SSLError):
            chunk = b""
        ended = not chunk
        data += chunk
    code = None
    while len(data) >= 2 and code is None:
        opcode, length = data[0] & 0x0F, data[1] & 0x7F
        if opcode == 0x8 and length >= 2:
            code = int(struct.unpack("!H", data[2:4])[0])
        data = data[2 + length:]
    return code, ended


@pytest.mark.parametrize("path, limit", [("/kiosk/ws", TERMINAL_MESSAGE_BYTES), ("/board/ws", 4096)])
def test_pentest_7_a_frame_announcing_64_mb_is_refused_on_its_header_over_a_real_socket(
    hall: HallProcess, path: str, limit: int
) -> None:
    """A 64 MB frame cost 44 s of CPU and 256 MB hung the server: now its header alone is
    refused with 1009 and the server goes on answering; the frame's payload is never read."""
    tls = _raw_socket(hall, path)
    header = bytes([0x81, 0x80 | 127]) + struct.pack("!Q", 64 * 1024 * 1024) + b"mask"
    tls.sendall(header + b"x" * 1024)  # the first KiB of the 64 MB
    assert _read_until_closed(tls) == (1009, True)  # within the socket's 20 s timeout, else it raises
    tls.close()
    # The hall is still there for everybody else.
    status, board = HttpClient(hall).call("GET", "/api/board")
    assert status == 200 and board["type"] == "board"
    assert limit <= CONSOLE_MESSAGE_BYTES


def test_pentest_15_https_answers_carry_hsts_and_no_server_banner(hall: HallProcess) -> None:
    """Twisted answered ``Server: TwistedWeb/<version>`` and no HSTS."""
    import urllib.request

    for path in ("/login", "/api/board", "/static/hall.css", "/kiosk", "/nope"):
        request = urllib.request.Request(hall.base + path)
        try:
            with urllib.request.urlopen(request, context=hall.tls_context(), timeout=20) as response:
                headers = response.headers
        except urllib.error.HTTPError as error:
            headers = error.headers
        assert headers.get("strict-transport-security", "").startswith("max-age="), path
        assert headers.get("server") is None, path


def test_pentest_15_a_page_of_the_same_host_over_http_is_another_origin(hall: HallProcess) -> None:
    """The Origin check compared host and port only; ``http://`` to an HTTPS hall is another site."""
    client = signed_in(hall, "rosa")
    origin = f"localhost:{hall.port}"
    assert WireSocket(hall, "/ws", cookie=client.cookie, origin=f"https://{origin}").accepted
    for other in (f"http://{origin}", f"https://{origin}.evil.example", "https://localhost", "null"):
        refused = WireSocket(hall, "/ws", cookie=client.cookie, origin=other)
        assert not refused.accepted and refused.rejected_status == 403, other


class _RecordingPool:
    """Stands for a thread pool: what was given to it to run, not run."""

    def __init__(self) -> None:
        self.work: list[Any] = []

    def callInThreadWithCallback(self, on_result: Any, function: Any, *args: Any, **kwargs: Any) -> None:
        self.work.append(function)


class _Reactor(MemoryReactorClock):
    def __init__(self) -> None:
        super().__init__()
        self.pool = _RecordingPool()

    def getThreadPool(self) -> _RecordingPool:  # the reactor's pool, where players' PIN checks run
        return self.pool


def test_pentest_9_staff_password_checks_never_queue_ahead_of_players_pin_checks(tmp_path: Path) -> None:
    """64 concurrent bad staff sign-ins slowed players' sign-ins to 1.1 s: both queued on one
    scrypt pool.  Now staff checks run on a pool of their own, bounded by the throttle, and
    a player's PIN check goes to the reactor's pool with nothing of the staff's ahead of it."""
    from types import SimpleNamespace

    from hall_server.config import load_config
    from hall_server.tap import build_hall
    from server_kit.web.throttle import MAX_CHECKS

    text = default_config_text("Pool hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    (tmp_path / "hall.toml").write_text(text.replace("enabled = true", "enabled = false"))
    reactor = _Reactor()
    hall = build_hall(load_config(tmp_path / "hall.toml"), reactor)
    assert hall.sign_in_pool is not None and hall.sign_in_pool is not reactor.pool
    staff_work = _RecordingPool()
    hall.sign_in_pool.callInThreadWithCallback = staff_work.callInThreadWithCallback  # type: ignore[method-assign]
    body = json.dumps({"name": "admin", "password": "a wrong guess"})
    for k in range(64):
        FakeBrowser(hall.site, address=f"10.9.0.{k}").try_request("POST", "/login", body)
    assert len(staff_work.work) == MAX_CHECKS and reactor.pool.work == []
    hall.cashier.usable_account = lambda number: SimpleNamespace(pin_hash="scrypt-of-the-pin")  # type: ignore
    assert hall.gateway is not None
    hall.gateway.check_pin("123456789012", PIN)
    assert len(reactor.pool.work) == 1  # the player's check, first in its queue

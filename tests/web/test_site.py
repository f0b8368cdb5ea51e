"""The console's HTTP and WebSocket endpoints, driven byte for byte by a fake browser."""

import pytest

from hall_server.web.auth import IDLE_LIMIT_S
from tests.web.conftest import ALL_BALLS, FakeBrowser, WebHall, journal_length


def open_session(browser_for: dict[str, FakeBrowser]) -> None:
    """Verification, the opening count and both signatures, through the HTTP channel."""
    admin, rosa = browser_for["admin"], browser_for["rosa"]
    assert admin.command("run_verification", {"date": "2026-11-29"}, "v1").status == 200
    count = {"stage": "opening", "balls_present": ALL_BALLS, "witnesses": ["Maria Public"]}
    assert rosa.command("count_balls", count, "c1").status == 200
    assert rosa.command("sign_session_opening", {}, "s1").status == 200
    assert admin.command("sign_session_opening", {}, "s2").status == 200


@pytest.fixture
def staff(web_hall: WebHall) -> dict[str, FakeBrowser]:
    browsers = {}
    for name in ("admin", "rosa", "carla"):
        browser = FakeBrowser(web_hall.site)
        assert browser.sign_in(name).status == 200
        browsers[name] = browser
    return browsers


def test_sign_in_sets_an_httponly_strict_cookie_and_a_wrong_password_reveals_nothing(browser: FakeBrowser) -> None:
    refused_name = browser.sign_in("nobody", "x")
    refused_password = browser.sign_in("rosa", "wrong")
    assert refused_name.status == refused_password.status == 401
    assert refused_name.body == refused_password.body
    assert refused_name.json()["error"]["message"] == "name or password not recognised"
    assert browser.cookie is None and "set-cookie" not in refused_password.headers
    accepted = browser.sign_in("rosa")
    assert accepted.status == 200 and accepted.json()["me"] == {"name": "rosa", "role": "room_chief"}
    cookie = accepted.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and browser.cookie


def test_pages_and_the_api_need_a_sign_in_and_sign_out_ends_it(browser: FakeBrowser) -> None:
    page = browser.request("GET", "/console")
    assert page.status == 302 and page.headers["location"].endswith("/login")
    assert browser.request("GET", "/api/state").status == 401
    assert browser.command("sign_session_opening", {}).status == 401
    browser.sign_in("rosa")
    console = browser.request("GET", "/console")
    assert console.status == 200 and b"Caller console" in console.body
    assert "default-src 'self'" in console.headers["content-security-policy"]
    state = browser.request("GET", "/api/state").json()
    assert state["me"]["role"] == "room_chief" and "count_balls" in {c["name"] for c in state["commands"]}
    assert browser.request("POST", "/logout", "").status == 200
    assert browser.request("GET", "/api/state").status == 401


def test_a_sign_in_lapses_after_a_working_day_idle(web_hall: WebHall, browser: FakeBrowser) -> None:
    browser.sign_in("rosa")
    web_hall.clock.advance(IDLE_LIMIT_S - 1)
    assert browser.request("GET", "/api/state").status == 200
    web_hall.clock.advance(IDLE_LIMIT_S + 1)
    assert browser.request("GET", "/api/state").status == 401


def test_a_forged_cookie_is_no_sign_in(browser: FakeBrowser) -> None:
    browser.cookie = "made-up-session-id"
    assert browser.request("GET", "/api/state").status == 401


@pytest.mark.parametrize(
    "body, content_type, status, code",
    [
        ("{oops", "application/json", 400, "malformed"),
        ('{"id": "r1", "command": "count_balls", "args": {}}', "text/plain", 400, "malformed"),
        ('{"id": "r1", "command": "nope", "args": {}}', "application/json", 400, "unknown_command"),
        # The administrator counts no balls: the room chief does (R84.2).
        ('{"id": "r1", "command": "count_balls", "args": {"stage": "opening"}, "as": "admin"}',
         "application/json", 403, "not_allowed"),
        ('{"id": "r1", "command": "count_balls", "args": {"stage": "opening"}}', "application/json", 400,
         "bad_arguments"),
        ('{"id": "r1", "command": "sign_session_opening", "args": {}}', "application/json", 409, "refused"),
    ],
)
@pytest.mark.req("R80")
def test_bad_http_commands_get_a_clear_error_and_change_nothing(
    web_hall: WebHall, browser: FakeBrowser, body: str, content_type: str, status: int, code: str
) -> None:
    signer = "admin" if '"as": "admin"' in body else "rosa"
    browser.sign_in(signer)
    body = body.replace(', "as": "admin"', "")
    response = browser.request("POST", "/api/command", body, content_type=content_type)
    assert response.status == status
    assert response.json()["ok"] is False and response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert journal_length(web_hall) == 0


@pytest.mark.req("R84.2", "R77.1")
def test_a_session_opens_through_the_http_channel_and_a_replay_gets_the_first_answer(
    web_hall: WebHall, staff: dict[str, FakeBrowser]
) -> None:
    open_session(staff)
    assert web_hall.view.console()["session"]["open"] is True
    before = journal_length(web_hall)
    replay = staff["admin"].command("sign_session_opening", {}, "s2")
    assert replay.status == 200 and replay.json()["ok"] and replay.json()["repeated"]
    assert journal_length(web_hall) == before


@pytest.mark.req("R80", "R85.5")
def test_every_console_gets_a_snapshot_then_each_committed_record(web_hall: WebHall, staff: dict[str, FakeBrowser]) -> None:
    rosa_socket = staff["rosa"].socket()
    cashier_socket = staff["carla"].socket()
    assert rosa_socket.accepted and cashier_socket.accepted
    (snapshot,) = rosa_socket.received()
    assert snapshot["type"] == "snapshot" and snapshot["me"]["name"] == "rosa" and snapshot["view"]["seq"] == 0
    assert "count_balls" in {c["name"] for c in snapshot["commands"]}
    (cashier_snapshot,) = cashier_socket.received()
    assert "count_balls" not in {c["name"] for c in cashier_snapshot["commands"]}
    open_session(staff)
    pushed = rosa_socket.received()
    assert [m["record"]["type"] for m in pushed] == [
        "system_verified", "balls_counted", "session_opening_signed", "session_opening_signed", "session_opened"
    ]
    assert pushed[-1]["view"]["session"]["open"] is True
    assert [m["record"]["seq"] for m in cashier_socket.received()] == [1, 2, 3, 4, 5]
    # A console that connects later starts from the whole picture.
    late = staff["admin"].socket()
    (late_snapshot,) = late.received()
    assert late_snapshot["view"]["seq"] == 5 and late_snapshot["view"]["session"]["open"] is True


@pytest.mark.req("R80")
def test_commands_over_the_socket_are_answered_and_bad_ones_change_nothing(
    web_hall: WebHall, staff: dict[str, FakeBrowser]
) -> None:
    socket = staff["carla"].socket()
    socket.received()
    socket.send_text("{broken")
    socket.send({"id": "a1", "command": "count_balls", "args": {}})
    socket.send({"id": "a2", "command": "no_such_thing", "args": {}})
    answers = socket.received()
    assert [(a["type"], a["error"]["code"]) for a in answers] == [
        ("answer", "malformed"), ("answer", "not_allowed"), ("answer", "unknown_command")
    ]
    admin = staff["admin"].socket()
    admin.received()
    admin.send({"id": "v1", "command": "run_verification", "args": {"date": "2026-11-29"}})
    messages = admin.received()
    assert [m["type"] for m in messages] == ["record", "answer"]  # announced after commit, then answered
    assert messages[1]["ok"] and messages[1]["records"][0]["type"] == "system_verified"
    admin.send({"id": "v1", "command": "run_verification", "args": {"date": "2026-11-29"}})
    repeated = admin.received()[0]
    assert repeated["repeated"] and repeated["records"] == messages[1]["records"]  # the first answer again
    assert journal_length(web_hall) == 1


def test_the_console_socket_refuses_strangers_and_other_origins(staff: dict[str, FakeBrowser], browser: FakeBrowser) -> None:
    stranger = browser.socket()
    assert not stranger.accepted and stranger.rejected_status == 401
    foreign = staff["rosa"].socket(origin="https://evil.example")
    assert not foreign.accepted and foreign.rejected_status == 403
    same = staff["rosa"].socket(origin="http://localhost")  # the fake browser's connection is plain HTTP
    assert same.accepted


def test_a_socket_left_open_after_sign_out_takes_no_more_commands(
    web_hall: WebHall, staff: dict[str, FakeBrowser]
) -> None:
    socket = staff["admin"].socket()
    socket.received()
    staff["admin"].request("POST", "/logout", "")
    socket.send({"id": "v1", "command": "run_verification", "args": {"date": "2026-11-29"}})
    (answer,) = socket.received()
    assert answer["error"]["code"] == "signed_out"
    assert journal_length(web_hall) == 0


@pytest.mark.req("R85.5", "R92.11-12")
def test_the_board_is_public_read_only_and_shows_no_staff_data(web_hall: WebHall, staff: dict[str, FakeBrowser], browser: FakeBrowser) -> None:
    page = browser.request("GET", "/board")
    assert page.status == 200 and b"Information board" in page.body
    board = browser.socket("/board/ws")
    assert board.accepted
    (first,) = board.received()
    assert first["type"] == "board" and first["view"]["hall"] == "Test hall"
    open_session(staff)
    updates = board.received()
    assert len(updates) == 5 and updates[-1]["view"]["session_open"] is True
    assert "rosa" not in str(updates) and "Maria Public" not in str(updates)
    board.send({"id": "x", "command": "sign_session_closing", "args": {}})
    (refusal,) = board.received()
    assert refusal["error"]["code"] == "read_only"
    assert browser.request("GET", "/api/board").json()["view"]["seq"] == journal_length(web_hall)


def test_static_files_are_served_from_the_package(browser: FakeBrowser) -> None:
    for path, marker in (("/static/console.js", b"Console"), ("/static/hall.css", b".ball-grid"),
                         ("/login", b"Sign in"), ("/", b"")):
        response = browser.request("GET", path)
        assert response.status in (200, 302), path
        assert marker in response.body


def test_nothing_outside_the_static_files_is_served(browser: FakeBrowser) -> None:
    for path in ("/static/", "/static/../site.py", "/static/%2e%2e%2fsite.py", "/static/nope.js", "/static/.hidden.js"):
        assert browser.request("GET", path).status == 404, path

"""Pentest findings on the console's web edge, reproduced byte for byte on fakes: the
attack as the pentest made it, then what the hall does now (findings 2, 3, 7, 9, 10,
13 and the HTTP part of 15; the real-process versions are in test_security_process.py)."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet import defer
from twisted.logger import LogLevel, globalLogPublisher
from twisted.web.resource import Resource
from wsproto.events import CloseConnection

from hall_server.config import StaffMember, hash_password
from hall_server.hall.roles import Role
from hall_server.web.auth import IDLE_LIMIT_S, SignIns, StaffDirectory
from hall_server.web.redaction import SECRET_FIELDS, redacted
from hall_server.web.site import build_site, same_origin
from protocol.records import Json, JournalRecord, build
from server_kit.core import Actor
from server_kit.web.bounded_websocket import (
    BOARD_MESSAGE_BYTES,
    CLOSE_GRACE_S,
    CONSOLE_MESSAGE_BYTES,
    FrameMeter,
)
from server_kit.web.channel import MAX_DEPTH
from server_kit.web.throttle import (
    FREE_FAILURES_PER_ADDRESS,
    FREE_FAILURES_PER_NAME,
    MAX_CHECKS,
    MAX_CHECKS_PER_ADDRESS,
    MAX_LOCK_S,
)
from tests.support.records import declared
from tests.web.conftest import PASSWORD, STAFF, FakeBrowser, FakeSocket, WebHall, journal_length

ADMIN = Actor("admin", Role.ADMINISTRATOR)
PIN_HASH = "scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA==$UElOIGhhc2ggb2YgNDgyMSwgc2VhcmNoYWJsZSBpbiA0MXM="
TOKEN_HASH = "5f1d3a9e0c7b8a6d4e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d"


@dataclass(frozen=True, kw_only=True)
class DevicePaired(JournalRecord):
    """A record a later module might write: free-form detail with secrets nested in it."""

    type: ClassVar[str] = "device_paired"
    device: Json


def signed_in(hall: WebHall, name: str, **browser: Any) -> FakeBrowser:
    client = FakeBrowser(hall.site, **browser)
    assert client.sign_in(name).status == 200
    return client


def commit(hall: WebHall, *entries: tuple[str, dict[str, Any]]) -> None:
    """Journal ``entries`` as a command would, through the core (announce after commit)."""
    hall.core.allow({"test_entries": {Role.ADMINISTRATOR}})
    out: list[Any] = []
    hall.core.execute(ADMIN, "test_entries", lambda now: [build(*entry) for entry in entries]).addBoth(out.append)
    assert out and isinstance(out[0], list), out


def a_verification(browser: FakeBrowser, request_id: str = "v1") -> None:
    answer = browser.command("run_verification", {"date": "2026-11-29"}, request_id)
    assert answer.status == 200, answer.body


# --- Finding 2: no secret in any view or push ---------------------------------------------


@pytest.mark.req("R80")
def test_pentest_2_no_secret_in_any_view_or_push_of_any_role(web_hall: WebHall) -> None:
    """/api/state and the /ws pushes carried account records with pin_hash; every picture of
    every role, every push (snapshot, record, board) is now a redacted copy, while the
    journal keeps what it keeps."""
    consoles = {name: signed_in(web_hall, name) for name in STAFF}
    sockets = {name: browser.socket() for name, browser in consoles.items()}
    public = FakeBrowser(web_hall.site)
    board = public.socket("/board/ws")
    with declared(DevicePaired):
        commit(
            web_hall,
            ("player_account_opened", {"account": "123456789012", "medium": "ticket", "visitor": 1, "pin_hash": PIN_HASH}),
            ("terminal_enrolled", {"terminal": "K1", "token_hash": TOKEN_HASH, "place": "row A"}),
            # A record a later module might write, with secrets nested in it.
            ("device_paired", {"device": {"name": "D1", "device_token": "tok-1", "keys": [{"private_key": "k"}]}}),
        )
    late = {name: browser.socket() for name, browser in consoles.items()}  # snapshots with the records in them
    texts = [json.dumps(m) for s in [*sockets.values(), *late.values(), board] for m in s.received()]
    texts += [browser.request("GET", "/api/state").body.decode() for browser in consoles.values()]
    texts.append(public.request("GET", "/api/board").body.decode())
    assert sum("player_account_opened" in t for t in texts) >= 2 * len(STAFF)  # the walk had records to look at
    for text in texts:
        # A field named as a secret holds none anywhere (a command's argument may be
        # *called* "pin": the console asks for it; no value comes with the name).
        for secret in (PIN_HASH, TOKEN_HASH, "tok-1", '"k"', *(f'"{name}":' for name in SECRET_FIELDS)):
            assert secret not in text
        assert "device_token" not in text and '"D1"' in text or "device_paired" not in text
    kept = {r.type: r.payload for r in web_hall.journal.records()}
    assert kept["player_account_opened"]["pin_hash"] == PIN_HASH  # the journal is not redacted
    assert kept["terminal_enrolled"]["token_hash"] == TOKEN_HASH


def test_pentest_2_redaction_drops_every_declared_secret_at_any_depth() -> None:
    value = {"a": 1, "pin": "4821", "nested": [{"old_pin_hash": "h", "keep": [1, {"password": "p", "x": None}]}]}
    assert redacted(value) == {"a": 1, "nested": [{"keep": [1, {"x": None}]}]}
    assert redacted(("token", "not a field name")) == ["token", "not a field name"]  # values are never judged


# --- Finding 3: one dead socket does not stop the fan-out ------------------------------------


class _BrokenTransport:
    """Stands for a connection whose every write fails (a reset the reactor has not seen yet)."""

    def __init__(self, socket: FakeSocket) -> None:
        socket.transport.write = self.write  # type: ignore[method-assign]

    def write(self, data: bytes) -> None:
        raise ConnectionResetError("connection reset by peer")


@pytest.mark.parametrize("failure", ["close_frame_then_silence", "write_raises"])
@pytest.mark.parametrize("path", ["/board/ws", "/ws"])
@pytest.mark.req("R85.5")
def test_pentest_3_one_half_closed_socket_does_not_stop_the_fan_out(
    web_hall: WebHall, failure: str, path: str
) -> None:
    """A client that sent a Close frame and kept its TCP connection open made the announce
    loop raise, and 4 of 10 boards got the record; now the other 9 all get it and the dead
    one is dropped."""
    browser = signed_in(web_hall, "admin")
    sockets = [browser.socket(path) for _ in range(10)]
    for socket in sockets:
        socket.received()
    dead = sockets[3]
    if failure == "close_frame_then_silence":
        dead.send_raw(dead.ws.send(CloseConnection(code=1000)))  # and then never reads, never closes
    else:
        _BrokenTransport(dead)
    a_verification(browser)
    for socket in sockets:
        if socket is not dead:
            (pushed,) = socket.received()
            assert pushed["view"]["seq"] == 1
    hub = web_hall.hub
    assert dead.transport.disconnecting
    assert len(hub.boards if path == "/board/ws" else hub.consoles) == 9
    commit(web_hall, ("complaint_recorded", {"number": 1, "complainant": "Marta Soler",
                                             "text": "the next record reaches the nine too"}))
    assert all(len(s.received()) == 1 for s in sockets if s is not dead)


# --- Finding 7: WebSocket messages bounded while they are read -------------------------------


def _frame_header(length: int, *, opcode: int = 0x1, fin: bool = True) -> bytes:
    """A client frame's header announcing ``length`` bytes (masked, as clients must)."""
    first = (0x80 if fin else 0) | opcode
    if length < 126:
        return bytes([first, 0x80 | length]) + b"mask"
    if length < 2**16:
        return bytes([first, 0x80 | 126]) + struct.pack("!H", length) + b"mask"
    return bytes([first, 0x80 | 127]) + struct.pack("!Q", length) + b"mask"


def _meter_of(hall: WebHall, socket: FakeSocket) -> FrameMeter:
    """The meter the server put in front of ``socket``'s parser."""
    endpoints = [hall.site.resource.children[b"ws"], hall.site.resource.children[b"board"].children[b"ws"]]
    (wire,) = [w for e in endpoints for w in e.connections if w.transport is socket.transport]
    return wire.meter


@pytest.mark.parametrize("path, limit", [("/ws", CONSOLE_MESSAGE_BYTES), ("/board/ws", BOARD_MESSAGE_BYTES)])
def test_pentest_7_a_64_mb_frame_is_refused_on_its_header_and_none_of_it_is_buffered(
    web_hall: WebHall, path: str, limit: int
) -> None:
    """A 64 MB frame was read whole (44 s of CPU) before the size check; now the frame is
    refused on its header with 1009 and not one byte of its payload reaches the parser."""
    browser = signed_in(web_hall, "admin")
    socket = browser.socket(path)
    socket.received()
    before = _meter_of(web_hall, socket).passed
    socket.send_raw(_frame_header(64 * 1024 * 1024))
    for _ in range(64):  # the first 4 MiB of the 64 MB: dropped unread
        socket.protocol.dataReceived(b"\0" * 65536)
    assert socket.close_code == 1009 and socket.transport.disconnecting
    assert _meter_of(web_hall, socket).passed == before  # nothing of the frame, not even its header, was parsed
    assert journal_length(web_hall) == 0
    assert limit >= 4096


def test_pentest_7_a_message_in_many_small_frames_is_bounded_as_a_whole(web_hall: WebHall) -> None:
    """Fragments each under the limit add up: the fragment that takes the message past it is refused."""
    browser = signed_in(web_hall, "admin")
    socket = browser.socket("/ws")
    socket.received()
    fragment = 60 * 1024
    sent = 0
    socket.send_raw(_frame_header(fragment, fin=False) + b"\0" * fragment)
    sent += fragment
    while socket.close_code is None:
        socket.send_raw(_frame_header(fragment, opcode=0x0, fin=False) + b"\0" * fragment)
        sent += fragment
        assert sent <= CONSOLE_MESSAGE_BYTES + fragment
    assert socket.close_code == 1009
    assert _meter_of(web_hall, socket).passed <= CONSOLE_MESSAGE_BYTES + 2 * 14 * (sent // fragment)
    assert journal_length(web_hall) == 0


def test_pentest_7_a_refused_peer_that_keeps_the_connection_open_is_aborted(web_hall: WebHall) -> None:
    browser = FakeBrowser(web_hall.site)
    socket = browser.socket("/board/ws")
    socket.send_raw(_frame_header(BOARD_MESSAGE_BYTES + 1))
    assert socket.close_code == 1009 and not socket.transport.disconnected
    web_hall.site.reactor.advance(CLOSE_GRACE_S)
    assert socket.transport.disconnected  # aborted: the peer never let it close


def test_pentest_7_a_message_just_within_the_limit_is_read(web_hall: WebHall) -> None:
    browser = signed_in(web_hall, "carla")
    socket = browser.socket("/ws")
    socket.received()
    padding = " " * (CONSOLE_MESSAGE_BYTES - 100)
    socket.send_text('{"id": "r1", "command": "count_balls", "args": {}}' + padding)
    (answer,) = socket.received()
    assert answer["error"]["code"] == "not_allowed" and socket.close_code is None


_frames = st.lists(
    st.tuples(st.sampled_from([0x1, 0x2, 0x9, 0xA]), st.integers(0, 300)), min_size=1, max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(frames=_frames, cuts=st.lists(st.integers(0, 5000), max_size=8), limit=st.integers(1, 400))
def test_pentest_7_the_meter_reads_any_chunk_split_alike(frames: list[tuple[int, int]], cuts: list[int],
                                                        limit: int) -> None:
    """Whatever the split, the meter passes exactly the frames before the first one too big."""
    stream, expected_pass, refused = b"", None, False
    for opcode, length in frames:
        length = min(length, 125) if opcode >= 0x8 else length
        if opcode < 0x8 and length > limit and expected_pass is None:
            expected_pass, refused = len(stream), True
        stream += _frame_header(length, opcode=opcode) + b"x" * length
    meter = FrameMeter(limit)
    passed = b""
    bounds = sorted({0, len(stream), *(c for c in cuts if c < len(stream))})
    for start, end in zip(bounds, bounds[1:]):
        passed += meter.feed(stream[start:end])
        assert len(meter._header) <= 14
    assert passed == (stream[:expected_pass] if refused else stream)
    assert (meter.refusal is not None) == refused and meter.passed == len(passed)


# --- Finding 9: staff sign-in lockout, policy, bounded checks ----------------------------


def _sign_in(browser: FakeBrowser, name: str, password: str) -> tuple[int, str]:
    response = browser.sign_in(name, password)
    return response.status, response.json()["error"]["code"] if response.status != 200 else "ok"


@pytest.mark.req("R80")
def test_pentest_9_failed_sign_ins_back_off_per_name_and_a_lock_holds_the_right_password_too(
    web_hall: WebHall
) -> None:
    """No rate limit and no lockout: now a name's failures beyond the free ones lock it, for
    twice as long each time, on the injected clock."""
    browser = FakeBrowser(web_hall.site)
    for _ in range(FREE_FAILURES_PER_NAME):
        assert _sign_in(browser, "rosa", "wrong password") == (401, "sign_in_refused")
    assert _sign_in(browser, "rosa", "wrong password") == (401, "sign_in_refused")  # starts a 1 s lock
    locked = browser.sign_in("rosa", PASSWORD)
    assert locked.status == 429 and locked.json()["error"]["code"] == "locked" and locked.headers["retry-after"] == "1"
    assert _sign_in(FakeBrowser(web_hall.site), "rosa", PASSWORD) == (429, "locked")  # the name, not the browser
    assert _sign_in(browser, "carla", PASSWORD) == (200, "ok")  # other names are not affected
    web_hall.clock.advance(1)
    assert _sign_in(browser, "rosa", "wrong again") == (401, "sign_in_refused")  # now a 2 s lock
    web_hall.clock.advance(1.5)
    assert _sign_in(browser, "rosa", PASSWORD) == (429, "locked")
    web_hall.clock.advance(0.5)
    assert _sign_in(browser, "rosa", PASSWORD) == (200, "ok")
    for _ in range(FREE_FAILURES_PER_NAME):  # the good sign-in cleared the name's count
        assert _sign_in(browser, "rosa", "wrong password") == (401, "sign_in_refused")


def test_pentest_9_an_unknown_name_locks_alike_so_a_lock_tells_nothing(web_hall: WebHall) -> None:
    browser = FakeBrowser(web_hall.site)
    answers = {}
    for name in ("rosa", "nobody"):
        for _ in range(FREE_FAILURES_PER_NAME + 1):
            browser.sign_in(name, "wrong password")
        answers[name] = browser.sign_in(name, "wrong password")
    assert answers["rosa"].status == answers["nobody"].status == 429
    assert answers["rosa"].body == answers["nobody"].body


def test_pentest_9_the_back_off_is_capped_and_is_also_kept_per_address(web_hall: WebHall) -> None:
    attacker = FakeBrowser(web_hall.site, address="10.0.0.66")
    for k in range(FREE_FAILURES_PER_ADDRESS):
        assert _sign_in(attacker, f"guess-{k}", "wrong password") == (401, "sign_in_refused")
    assert _sign_in(attacker, "guess-x", "wrong password") == (401, "sign_in_refused")
    assert _sign_in(attacker, "sam", PASSWORD) == (429, "locked")  # the address is locked
    assert _sign_in(FakeBrowser(web_hall.site, address="10.0.0.7"), "sam", PASSWORD) == (200, "ok")
    for _ in range(40):  # a patient attacker: the lock doubles up to the cap, never beyond
        web_hall.clock.advance(MAX_LOCK_S)
        attacker.sign_in("guess-y", "wrong password")
    assert web_hall.site.resource.children[b"login"].throttle.addresses.wait_s("10.0.0.66") == MAX_LOCK_S


def test_pentest_9_password_checks_in_flight_are_bounded_per_address_and_in_all(web_hall: WebHall) -> None:
    """64 concurrent bad sign-ins queued 64 scrypt runs; now at most two per address and
    eight in all are checked at once, and the rest are answered at once, unchecked."""
    pending: list[defer.Deferred[Actor]] = []

    def authenticate(name: str, password: str) -> defer.Deferred[Actor]:
        pending.append(defer.Deferred())
        return pending[-1]

    site = build_site(hub=web_hall.hub, sign_ins=web_hall.sign_ins, channel=web_hall.hub.channel,
                      authenticate=authenticate, secure_cookie=False)
    def statuses(addresses: list[str], name: str = "rosa") -> list[int | None]:
        body = json.dumps({"name": name, "password": "wrong password"})
        answers = [FakeBrowser(site, address=a).try_request("POST", "/login", body) for a in addresses]
        return [None if answer is None else answer.status for answer in answers]

    one_address = statuses(["10.0.0.1"] * 32)
    many_addresses = statuses([f"10.0.1.{k}" for k in range(32)])
    assert len(pending) == MAX_CHECKS
    assert one_address.count(None) == MAX_CHECKS_PER_ADDRESS and one_address.count(429) == 32 - MAX_CHECKS_PER_ADDRESS
    assert many_addresses.count(None) == MAX_CHECKS - MAX_CHECKS_PER_ADDRESS
    assert many_addresses.count(429) == 32 - (MAX_CHECKS - MAX_CHECKS_PER_ADDRESS)
    from hall_server.web.auth import SignInRefused

    for deferred in pending:
        deferred.errback(SignInRefused("name or password not recognised"))
    # The places came back (rosa's name is locked now: eight failures).
    assert statuses(["10.0.0.1"], "carla") == [None] and len(pending) == MAX_CHECKS + 1


def _warnings_while(action: Any) -> list[str]:
    seen: list[str] = []

    def observer(event: dict[str, Any]) -> None:
        if event.get("log_level") == LogLevel.warn:
            from twisted.logger import formatEvent

            seen.append(formatEvent(event))

    globalLogPublisher.addObserver(observer)
    try:
        action()
    finally:
        globalLogPublisher.removeObserver(observer)
    return seen


def test_pentest_9_weak_hashes_and_weak_passwords_still_sign_in_and_are_named_in_the_log_once(
    web_hall: WebHall
) -> None:
    import base64
    import hashlib

    salt = b"s" * 16
    cheap = base64.b64encode(hashlib.scrypt(b"1", salt=salt, n=2**10, r=8, p=1, dklen=32)).decode()
    weak = f"scrypt$1024$8$1${base64.b64encode(salt).decode()}${cheap}"
    directory: list[StaffDirectory] = []
    warnings = _warnings_while(lambda: directory.append(StaffDirectory(
        [StaffMember("old", Role.CASHIER, weak), StaffMember("fresh", Role.CASHIER, hash_password(PASSWORD))])))
    assert len(warnings) == 1 and "old (scrypt cost n=1024" in warnings[0] and "fresh" not in warnings[0]
    sign_ins = SignIns(directory[0], web_hall.clock)
    logged = _warnings_while(lambda: [sign_ins.sign_in("old", "1") for _ in range(3)])
    assert len(logged) == 1 and "old does not follow the password policy" in logged[0] and "'1'" not in logged[0]


# --- Finding 10: signing out and lapsing close the sign-in's sockets --------------------


def test_pentest_10_signing_out_closes_every_socket_of_that_sign_in(web_hall: WebHall) -> None:
    """After sign-out the console's WebSocket stayed open and kept receiving every record."""
    admin = signed_in(web_hall, "admin")
    rosa = signed_in(web_hall, "rosa")
    tabs = [admin.socket(), admin.socket()]
    other = rosa.socket()
    for socket in (*tabs, other):
        socket.received()
    assert admin.request("POST", "/logout", "").status == 200
    for socket in tabs:
        (told,) = socket.received()
        assert told["error"]["code"] == "signed_out" and socket.close_code == 4001
    a_verification(signed_in(web_hall, "admin"))
    assert all(socket.received() == [] for socket in tabs)  # nothing more reaches them
    assert [m["type"] for m in other.received()] == ["record"]
    assert other.close_code is None and len(web_hall.hub.consoles) == 1


def test_pentest_10_a_lapsed_sign_in_closes_its_sockets_on_the_clock(web_hall: WebHall) -> None:
    idle = signed_in(web_hall, "admin")
    busy = signed_in(web_hall, "rosa")
    idle_socket, busy_socket = idle.socket(), busy.socket()
    for _ in range(3):
        web_hall.clock.advance(IDLE_LIMIT_S / 2)
        busy.request("GET", "/api/state")  # rosa keeps working; admin has walked away
    assert idle_socket.closed and idle_socket.close_code == 4001
    assert not busy_socket.closed and busy.request("GET", "/api/state").status == 200
    assert idle.request("GET", "/api/state").status == 401


# --- Finding 13: malformed JSON is a JSON error on every endpoint ----------------------------


NESTED = "[" * 100_000 + "]" * 100_000
BAD_BODIES = {
    "nested": NESTED,
    "nested_object": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "just_too_deep": "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "surrogate_in_name": '{"name": "\\ud800", "password": "x"}',
    "surrogate_in_password": '{"name": "rosa", "password": "\\udfff"}',
    "surrogate_in_args": '{"id": "r1", "command": "count_balls", "args": {"stage": "\\ud83d"}}',
    "surrogate_key": '{"id": "r1", "command": "count_balls", "args": {"\\ud800": 1}}',
    "not_utf8": b'{"name": "\xff\xfe"}',
}


@pytest.mark.parametrize("kind", sorted(BAD_BODIES))
@pytest.mark.parametrize("path", ["/login", "/api/command"])
def test_pentest_13_deep_nesting_and_lone_surrogates_are_malformed_not_500(
    web_hall: WebHall, path: str, kind: str
) -> None:
    """A deeply nested body was a 500 HTML page (RecursionError), a lone surrogate a 500."""
    browser = signed_in(web_hall, "rosa")
    response = browser.request("POST", path, BAD_BODIES[kind])
    assert response.status == 400 and response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == "malformed"
    assert journal_length(web_hall) == 0


@pytest.mark.parametrize("kind", sorted(set(BAD_BODIES) - {"not_utf8"}))
def test_pentest_13_the_same_over_the_console_socket(web_hall: WebHall, kind: str) -> None:
    socket = signed_in(web_hall, "rosa").socket()
    socket.received()
    socket.send_text(str(BAD_BODIES[kind]))
    (answer,) = socket.received()
    assert answer["type"] == "answer" and answer["error"]["code"] == "malformed"
    assert socket.close_code is None and journal_length(web_hall) == 0


class _Failing(Resource):
    isLeaf = True

    def render_GET(self, request: Any) -> bytes:
        raise RuntimeError("a fault nobody foresaw")


def test_pentest_13_an_unforeseen_fault_is_a_json_500_never_an_html_page(web_hall: WebHall) -> None:
    web_hall.site.resource.children[b"api"].putChild(b"failing", _Failing())
    response = FakeBrowser(web_hall.site).request("GET", "/api/failing")
    assert response.status == 500 and response.json()["error"]["code"] == "internal"
    assert b"<html" not in response.body.lower() and b"fault nobody foresaw" not in response.body


# --- Finding 15 (HTTP): HSTS, no banner, exact origins ----------------------------------------


@pytest.mark.parametrize("path", ["/login", "/console", "/board", "/api/board", "/api/state", "/static/hall.css",
                                  "/static/nope.js", "/api/nope", "/"])
def test_pentest_15_every_https_answer_has_hsts_and_none_has_a_server_banner(web_hall: WebHall, path: str) -> None:
    over_tls = FakeBrowser(web_hall.site, tls=True).request("GET", path)
    plain = FakeBrowser(web_hall.site).request("GET", path)
    assert over_tls.headers["strict-transport-security"] == "max-age=31536000"
    assert "strict-transport-security" not in plain.headers  # meaningless over HTTP (RFC 6797)
    assert "server" not in over_tls.headers and "server" not in plain.headers


@pytest.mark.parametrize(
    "origin, host, tls, same",
    [
        (None, "localhost", False, True),
        ("http://localhost", "localhost", False, True),
        ("https://localhost", "localhost", True, True),
        ("https://LOCALHOST:443", "localhost", True, True),
        ("https://localhost:8443", "localhost:8443", True, True),
        ("https://localhost", "localhost", False, False),  # the scheme counts
        ("http://localhost:8443", "localhost:8443", True, False),
        ("https://localhost:8444", "localhost:8443", True, False),
        ("https://localhost", "localhost:8443", True, False),
        ("https://evil.example", "localhost", True, False),
        ("https://localhost.evil.example", "localhost", True, False),
        ("https://user@localhost", "localhost", True, False),
        ("null", "localhost", True, False),
        ("https://localhost/path", "localhost", True, False),
        ("ftp://localhost", "localhost", True, False),
        ("https://[::1]:8443", "[::1]:8443", True, True),
    ],
)
def test_pentest_15_the_origin_must_be_exactly_this_site(origin: str | None, host: str, tls: bool, same: bool) -> None:
    class _Request:
        def getHeader(self, name: bytes) -> bytes | None:
            value = {b"origin": origin, b"host": host}[name]
            return value.encode() if value is not None else None

        def isSecure(self) -> bool:
            return tls

    assert same_origin(_Request()) is same  # type: ignore[arg-type]


@pytest.mark.parametrize("origin", ["https://localhost", "http://evil.example", "null"])
def test_pentest_15_posts_from_another_origin_are_refused_and_change_nothing(web_hall: WebHall, origin: str) -> None:
    browser = signed_in(web_hall, "admin")
    foreign = {"origin": origin}
    body = json.dumps({"id": "v1", "command": "run_verification", "args": {"date": "2026-11-29"}})
    assert browser.request("POST", "/api/command", body, headers=foreign).status == 403
    assert browser.request("POST", "/logout", "", headers=foreign).status == 403
    login = browser.request("POST", "/login", json.dumps({"name": "rosa", "password": PASSWORD}), headers=foreign)
    assert login.status == 403 and "set-cookie" not in login.headers
    assert journal_length(web_hall) == 0 and browser.request("GET", "/api/state").status == 200
    assert browser.request("POST", "/api/command", body, headers={"origin": "http://localhost"}).status == 200

"""The role matrix: every command the hall core registers, for every role and every kind
of credential, is allowed exactly as the permission table says and refused otherwise,
with the reason, and a refusal writes nothing to the journal (R80; pentest finding 11).

Credentials:

* **staff password**, one sign-in per role, over the console's HTTP channel and its
  WebSocket (in process, on the fake browser);
* **terminal token**: a terminal's id and token offered as a staff login, and every
  command name sent on the terminal protocol after a good hello (in process);
* **client certificate** of each role, over real TLS to a hall server process: who may
  sign in, which connections the staff resources serve, and who may open the
  terminals' WebSocket.

``PERMISSIONS`` below is the permission table as reviewed: a change to who may give a
command is a change to this table too.
"""

from __future__ import annotations

from contextlib import closing
import http.client
import json
import secrets
from pathlib import Path
from typing import Any, Iterator

import h11
import pytest
from twisted.internet import defer

from hall_server.blower import ApprovedFirmware, BlowerDriver
from hall_server.blower.hall import HallBlowers
from hall_server.config import StaffMember, hash_password
from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.hall.notices import OpeningHoursModule
from hall_server.hall.roles import Role
from hall_server.terminal_gateway.gateway import TerminalGateway, TerminalSession
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.pki import Role as CertificateRole
from server_kit.web.channel import CommandChannel
from terminals.client import TerminalClient
from tests.hall.conftest import clock, journal, result  # noqa: F401 (fixtures)
from tests.terminals.conftest import VirtualHall, hall  # noqa: F401 (fixture)
from tests.web.conftest import PASSWORD, STAFF, FakeBrowser, HallProcess


A, RC, TC, SC, C, AD, SYS = (
    "administrator", "room_chief", "table_chief", "seller_caller", "cashier", "admission", "system",
)
#: Who may give each command (the core's table, as reviewed).
PERMISSIONS: dict[str, set[str]] = {
    "admit_visitor": {AD},
    "announce_last_game": {RC},
    "announce_megabingo": {RC},
    "announce_pots": {RC},
    "announce_sale": {RC, SC},
    "cash_out": {C, TC},
    "clear_pin_lockout": {C, SYS},
    "announce_reserve_boost": {RC},
    "cash_drawers": {A, C, RC, TC},
    "clear_blower_fault": {RC},
    "close_game": {RC},
    "close_prize": {SC, SYS},
    "cancel_ball_correction": {RC, TC},
    "correct_ball": {RC, TC},
    "close_player_account": {C, TC},
    "close_sale": {RC},
    "collect_cards": {RC, SC},
    "contribute_to_pot": {A, RC},
    "count_balls": {RC},
    "declare_terminal_failed": {RC},
    "deposit_jackpot": {C},
    "draw_ball": {SC},
    "enrol_terminal": {A, RC},
    "enter_ball": {RC},
    "finish_game": {RC},
    "find_player_account": {A, C, TC},
    "hand_in_takings": {C, TC},
    "hand_over_cash_desk": {C, RC, TC},
    "identify_paper_winner": {C, RC},
    "import_banned_list": {A},
    "load_credit": {C, TC},
    "move_cash": {C, TC},
    "open_cash_desk": {C},
    "open_player_account": {C, TC},
    "open_second_series": {RC, SC},
    "open_terminal_sale": {RC, SC},
    "pay_prizes": {C, RC},
    "print_account_statement": {A, C, TC},
    "print_player_ticket": {C, TC},
    "reconcile_cash_desk": {C, TC},
    "recall_games": {A, RC, TC, SC, C, AD},
    "record_complaint": {AD, RC},
    "record_hours_decision": {A},
    "confirm_complaint": {RC},
    "record_visitor_left": {AD},
    "record_incident": {AD, RC},
    "record_self_exclusion": {AD, C, SYS},
    "recover_jackpot_contribution": {A, RC},
    "replace_ball_set": {A, RC},
    "request_extra_check": {RC, TC},
    "resume_game": {RC},
    "retire_reserve_blower": {RC},
    "return_terminal_to_service": {A, RC},
    "revoke_terminal": {A, RC},
    "run_verification": {A, RC},
    "sell_cards": {SC},
    "set_spending_limit": {C, SYS, TC},
    "sign_session_closing": {A, RC},
    "sign_session_opening": {A, RC},
    "show_card": {RC, TC},
    "suspend_game": {RC, SYS},
    "suspend_game_for_good": {RC},
    "switch_to_reserve_blower": {RC},
    "top_up_float": {C, TC},
    "verify_claim": {TC},
    "refuse_card": {TC},
    "withdraw_jackpot_surplus": {C},
}
#: What only the server itself does, with no command an edge can call (a terminal's
#: purchase is decided on the terminal protocol, then committed by the server).
SERVER_ONLY = {
    "buy_virtual_cards", "record_pin_lockout", "record_terminal_refusal", "report_blower_fault", "report_blower_link",
    "notify_opening_hours",
}
STAFF_ROLES = [A, RC, TC, SC, C, AD]
NAME_OF = {str(role): name for name, role in STAFF.items()}
#: A well-typed value of each argument type: the permission is checked before the rules.
SAMPLE = {int: 1, str: "x", bool: False, dict: {}, list[int]: [1], list[str]: ["x"]}


def human(text: str) -> str:
    return text.replace("_", " ")


def refusal(name: str, role: str, command: str) -> str:
    allowed = ", ".join(sorted(human(r) for r in PERMISSIONS[command]))
    return f"{name} ({human(role)}) may not {human(command)}; that is for: {allowed}"


# --- The hall with every module, on the fake browser -----------------------------------------


class MatrixHall:
    """Every command module of the server (the blowers included) behind the console's site."""

    def __init__(self, hall: VirtualHall) -> None:
        self.hall = hall
        blowers = HallBlowers(hall.core, BlowerDriver(hall.clock, ApprovedFirmware(), name="main"),
                              BlowerDriver(hall.clock, ApprovedFirmware(), name="reserve"))
        blowers.install(hall.games, hall.session)
        OpeningHoursModule(hall.core, DEFAULT_TIMEZONE)  # the regulator's answer on the hours (R74.2)
        self.view = HallView("Matrix hall")
        hall.core.add_view(self.view)
        digest = hash_password(PASSWORD)
        self.sign_ins = SignIns(StaffDirectory(StaffMember(n, r, digest) for n, r in STAFF.items()), hall.clock)
        channel = CommandChannel(hall.core)
        hub = LiveHub(self.view, channel, self.sign_ins)
        hall.core.observers.append(hub.record_committed)
        self.site = build_site(hub=hub, sign_ins=self.sign_ins, channel=channel,
                               authenticate=inline_authenticate(self.sign_ins), secure_cookie=False)

    def length(self) -> int:
        return sum(1 for _ in self.hall.journal.records())

    def requests(self, role: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for command, spec in sorted(self.hall.core.commands.items()):
            yield command, {"id": f"{role}-{command}"[:64], "command": command,
                            "args": {param: SAMPLE[kind] for param, kind in spec.params.items()}}


@pytest.fixture
def matrix(hall: VirtualHall) -> MatrixHall:
    return MatrixHall(hall)


@pytest.mark.req("R80")
def test_the_permission_table_is_the_reviewed_one_and_every_command_is_in_it(matrix: MatrixHall) -> None:
    core = matrix.hall.core
    assert {name: {str(r) for r in core.permissions[name]} for name in core.commands} == PERMISSIONS
    # What has no registered edge is the server's own, and no staff role is the server.
    assert set(core.permissions) - set(core.commands) == SERVER_ONLY
    assert all(core.permissions[name] == {Role.SYSTEM} for name in SERVER_ONLY)
    assert str(Role.SYSTEM) not in NAME_OF


#: A command waits this long at most for a device (the blower) before it fails.
DEVICE_WAIT_S = 61


def post(matrix: MatrixHall, browser: FakeBrowser, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST ``body`` to ``/api/command`` and read the answer, letting a command that waits
    for a device (a blower with no board attached) time out on the hall's clock."""
    data = json.dumps(body).encode()
    client = h11.Connection(h11.CLIENT)
    head = [("Host", "localhost"), ("Content-Length", str(len(data))), ("Content-Type", "application/json"),
            ("Cookie", f"bingo_session={browser.cookie}")]
    protocol, transport = browser._connect()
    protocol.dataReceived(client.send(h11.Request(method="POST", target="/api/command", headers=head))
                          + client.send(h11.Data(data)) + client.send(h11.EndOfMessage()))
    if not transport.value():
        matrix.hall.clock.advance(DEVICE_WAIT_S)
    client.receive_data(transport.value())
    response = client.next_event()
    assert isinstance(response, h11.Response), body["command"]
    parts = []
    while isinstance(event := client.next_event(), h11.Data):
        parts.append(event.data)
    return response.status_code, json.loads(b"".join(parts))


def _check(matrix: MatrixHall, role: str, command: str, answer: dict[str, Any], before: int) -> None:
    if role in PERMISSIONS[command]:
        assert answer.get("error", {}).get("code") != "not_allowed", (role, command, answer)
    else:
        assert answer["error"] == {"code": "not_allowed", "message": refusal(NAME_OF[role], role, command)}
    if not answer["ok"]:
        assert matrix.length() == before, f"{role} {command}: a refusal was journaled"


@pytest.mark.req("R80")
@pytest.mark.parametrize("role", STAFF_ROLES)
def test_every_command_over_http_for_a_staff_password_of_each_role(matrix: MatrixHall, role: str) -> None:
    browser = FakeBrowser(matrix.site)
    assert browser.sign_in(NAME_OF[role]).status == 200
    for command, request in matrix.requests(role):
        before = matrix.length()
        status, answer = post(matrix, browser, request)
        if role not in PERMISSIONS[command]:
            assert status == 403
        _check(matrix, role, command, answer, before)


@pytest.mark.req("R80")
@pytest.mark.parametrize("role", STAFF_ROLES)
def test_every_command_over_the_console_socket_for_a_staff_password_of_each_role(matrix: MatrixHall, role: str) -> None:
    browser = FakeBrowser(matrix.site)
    assert browser.sign_in(NAME_OF[role]).status == 200
    socket = browser.socket()
    socket.received()  # the snapshot
    for command, request in matrix.requests(role):
        before = matrix.length()
        socket.send(request)
        answers = [m for m in socket.received() if m["type"] == "answer"]
        if not answers:  # waiting for a device
            matrix.hall.clock.advance(DEVICE_WAIT_S)
            answers = [m for m in socket.received() if m["type"] == "answer"]
        (answer,) = answers
        _check(matrix, role, command, answer, before)


# --- Terminal tokens ----------------------------------------------------------------------------


@pytest.mark.req("R80")
def test_a_terminal_token_is_no_staff_login_and_no_session(matrix: MatrixHall) -> None:
    token = matrix.hall.terminal("T1")
    before = matrix.length()
    browser = FakeBrowser(matrix.site)
    refused = browser.sign_in("T1", token)
    assert refused.status == 401 and refused.json()["error"]["message"] == "name or password not recognised"
    browser.cookie = token
    for command, request in matrix.requests("terminal"):
        response = browser.post_json("/api/command", request)
        assert response.status == 401 and response.json()["error"]["code"] == "signed_out", command
    assert matrix.length() == before


@pytest.mark.req("R80")
def test_no_staff_command_is_reachable_with_a_terminal_token_on_the_terminal_protocol(matrix: MatrixHall) -> None:
    hall = matrix.hall
    gateway = TerminalGateway(hall.core, hall.games, hall.virtual, hall.cashier, hall.clock,
                              lambda number, pin: defer.succeed(False), "Matrix hall", pins=hall.pins)
    client = TerminalClient("T1", hall.terminal("T1"))
    session = TerminalSession(gateway, client.message_received, lambda: None)
    client.send = session.message_received
    result(client.hello())
    for command in sorted(hall.core.commands):
        before, errors = matrix.length(), len(client.errors)
        client.outbound += 1
        client.send_raw(json.dumps({"v": 1, "seq": client.outbound, "type": command}))
        assert [e["code"] for e in client.errors[errors:]] == ["schema"], command
        # The design journals a terminal's refused message, and nothing else.
        assert [r.type for r in list(hall.journal.records())[before:]] == ["terminal_request_refused"]
        if session.closed:  # a terminal that keeps erring is hung up on: start again
            client = TerminalClient("T1", client.token)
            session = TerminalSession(gateway, client.message_received, lambda: None)
            client.send = session.message_received
            result(client.hello())


# --- Client certificates, over real TLS --------------------------------------------------------

CERTIFICATE_KINDS = [None, *(str(role) for role in CertificateRole)]
#: A report-signing certificate is for signing reports only (no TLS purpose in its extended
#: key usage): the hall's TLS refuses it in the handshake, before any request is read.
NOT_TLS_PEERS = {"report-signing"}


def _refused_in_the_handshake(hall: "HallProcess", kind: str | None, name: str) -> bool:
    """True when ``kind`` is not a TLS peer and the handshake with it fails, journaling nothing."""
    if kind not in NOT_TLS_PEERS:
        return False
    import ssl

    before = _journal_length(hall)
    with pytest.raises(ssl.SSLError):
        Connection(hall, _certificate(kind, name)).call("GET", "/api/state")
    assert _journal_length(hall) == before
    return True


@pytest.fixture(scope="module")
def tls_hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path_factory.mktemp("tls-hall")).start()
    yield process
    process.stop()


class Connection:
    """One HTTPS connection presenting ``certificate`` (kind, name), or none."""

    def __init__(self, hall: HallProcess, certificate: tuple[str, str] | None) -> None:
        self.hall = hall
        self.certificate = certificate

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
             ) -> tuple[int, bytes, http.client.HTTPResponse]:
        connection = http.client.HTTPSConnection("localhost", self.hall.port, timeout=20,
                                                 context=self.hall.tls_context(self.certificate))
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if data is not None else {}
        connection.request(method, path, body=data, headers={**sent, **(headers or {})})
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        return response.status, payload, response

    def upgrade(self, path: str) -> int:
        """The status a WebSocket handshake on ``path`` gets (101: accepted)."""
        key = secrets.token_bytes(16).hex()[:22] + "=="
        status, _, _ = self.call("GET", path, headers={
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key,
        })
        return status


def _certificate(kind: str | None, name: str) -> tuple[str, str] | None:
    return None if kind is None else (kind, f"{kind}-{name}" if kind != "staff" else name)


def _sign_in(hall: HallProcess, certificate: tuple[str, str] | None, name: str) -> tuple[int, dict[str, Any], str]:
    status, body, response = Connection(hall, certificate).call("POST", "/login", {"name": name, "password": PASSWORD})
    cookie = (response.getheader("set-cookie") or "").split(";")[0]
    return status, json.loads(body), cookie


def _journal_length(hall: HallProcess) -> int:
    import sqlite3

    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as database, database:
        return database.execute("SELECT count(*) FROM journal").fetchone()[0]


@pytest.mark.integration
@pytest.mark.req("R92.7", "R95.3", "R80")
@pytest.mark.parametrize("kind", CERTIFICATE_KINDS)
def test_pentest_11_only_a_staff_certificate_or_none_signs_in_and_a_staff_certificate_only_as_itself(
    tls_hall: HallProcess, kind: str | None
) -> None:
    """The attack: a terminal's certificate signed in as the administrator."""
    if _refused_in_the_handshake(tls_hall, kind, "admin"):
        return
    status, answer, cookie = _sign_in(tls_hall, _certificate(kind, "admin"), "admin")
    if kind in (None, "staff"):
        assert status == 200 and answer["me"] == {"name": "admin", "role": "administrator"} and cookie
    else:
        assert status == 401 and answer["error"] == {
            "code": "sign_in_refused",
            "message": f"this device presents a {kind} certificate; staff sign in from a staff console"}
        assert not cookie


@pytest.mark.req("R80")
@pytest.mark.integration
def test_pentest_11_a_staff_certificate_signs_in_its_own_name_only(tls_hall: HallProcess) -> None:
    status, answer, cookie = _sign_in(tls_hall, ("staff", "rosa"), "admin")
    assert status == 401 and not cookie
    assert answer["error"]["message"] == "this console's staff certificate is rosa's; sign in as rosa"
    assert _sign_in(tls_hall, ("staff", "rosa"), "rosa")[0] == 200


@pytest.mark.req("R80")
@pytest.mark.integration
@pytest.mark.parametrize("kind", CERTIFICATE_KINDS)
def test_every_command_on_a_connection_with_each_certificate_kind_carrying_a_staff_sign_in(
    tls_hall: HallProcess, kind: str | None
) -> None:
    """An administrator's sign-in (made without a certificate) carried over a connection
    presenting each kind of certificate: served only where no certificate or the
    administrator's own staff certificate is presented; nothing journaled otherwise."""
    if _refused_in_the_handshake(tls_hall, kind, "admin"):
        return
    cookie = _sign_in(tls_hall, None, "admin")[2]
    connection = Connection(tls_hall, _certificate(kind, "admin"))
    served = kind is None or kind == "staff"
    assert connection.call("GET", "/api/state", headers={"Cookie": cookie})[0] == (200 if served else 401)
    before = _journal_length(tls_hall)
    for command in sorted(PERMISSIONS):
        status, body, _ = connection.call("POST", "/api/command", {"id": f"m-{command}", "command": command, "args": {}},
                                          headers={"Cookie": cookie})
        answer = json.loads(body)
        # Served, the request reaches the channel (which refuses empty arguments, the rules the rest).
        assert (status, answer["error"]["code"]) == (401, "signed_out") if not served else status != 401, command
    assert _journal_length(tls_hall) == before


@pytest.mark.integration
@pytest.mark.req("R92.7", "R95.3", "R80")
@pytest.mark.parametrize("kind", CERTIFICATE_KINDS)
def test_pentest_11_the_terminals_socket_admits_terminal_certificates_only(tls_hall: HallProcess, kind: str | None) -> None:
    if _refused_in_the_handshake(tls_hall, kind, "k1"):
        return
    status = Connection(tls_hall, _certificate(kind, "k1")).upgrade("/kiosk/ws")
    assert status == (101 if kind == "terminal" else 403)
    # The information board is for every screen of the hall, with or without a certificate.
    assert Connection(tls_hall, _certificate(kind, "k1")).upgrade("/board/ws") == 101


@pytest.mark.integration
@pytest.mark.req("R92.7", "R95.3", "R80")
def test_pentest_11_a_certificate_from_another_authority_fails_the_handshake(tls_hall: HallProcess, tmp_path: Path) -> None:
    import ssl

    from server_kit.pki import PkiFolder, init_authority, issue_certificate

    init_authority(tmp_path / "other", "Someone Else")
    issue_certificate(tmp_path / "other", "terminal", "k1")
    context = tls_hall.tls_context()
    folder = PkiFolder(tmp_path / "other")
    context.load_cert_chain(str(folder.cert("k1")), str(folder.key("k1")))
    connection = http.client.HTTPSConnection("localhost", tls_hall.port, timeout=20, context=context)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        connection.request("GET", "/board")
        connection.getresponse()

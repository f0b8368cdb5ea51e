"""No peer can exhaust a server, and a revoked certificate is out within seconds (docs/security.md,
"Connections"): the attacks of the second penetration test, against real processes over real TLS.

One central server (``bingo central serve``, its descriptors capped at 256 as a small
machine's would be), one regulator's receiver (``bingo regulator serve``) and one hall
(``bingo hall serve``) are started for the module, each with a 5-second handshake
deadline.  The attacks come from other loopback addresses than the legitimate peers
(127.0.0.2 and up: Linux routes all of 127/8 to the loopback), as they would from
another machine of the hall's network.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
import pytest_twisted
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import reactor
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
from twisted.internet.error import ConnectionDone, ConnectionLost
from twisted.protocols import amp
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Ping, RejectConnection
from wsproto.events import Request as WsRequest

from protocol.regulator_feed import Hello, Position, decode, encode
from hall_server.serve_demo import DEMO_PAYTABLE
from hall_server.terminal_gateway.gateway import PRE_HELLO_BURST
from server_kit.feed.link import FeedHello, FeedRefusedError
from server_kit.keys import public_pem
from server_kit.pki import PkiFolder, client_tls_options, issue_certificate, revoke_certificate
from server_kit.ports import reserve_port
from tests.central_server.support import REPO, CentralProcess, config_text, connect, make_pki, until
from tests.support.waiting import START, WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess, HttpClient, WireSocket

pytestmark = [pytest.mark.integration]

#: The deadline every server of the module is given for a TLS handshake.
HANDSHAKE_S = 5
#: Connections without a certificate each server admits from one address.
PER_ADDRESS = 40
#: The central server's file-descriptor limit, and what it keeps for itself.
CENTRAL_DESCRIPTORS = 256
CENTRAL_RESERVED = 96
LIMITS = f"""
[connections]
handshake_timeout_s = {HANDSHAKE_S}
per_address = {PER_ADDRESS}
reserved_descriptors = {CENTRAL_RESERVED}
"""


# --- The attacker's sockets -------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def descriptors() -> None:
    """This process opens hundreds of sockets: its own soft limit up to its hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def client_hello() -> bytes:
    """The first bytes a TLS client sends: a real ClientHello."""
    context = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def accept_queue(port: int) -> int:
    """Connections the kernel holds for the listening ``port`` that the server has not accepted yet."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:
            return int(fields[4].split(":")[1], 16)
    return 0


def attack(port: int, source: str, *, bare: int, half: int) -> list[socket.socket]:
    """``bare`` TCP connections that send nothing and ``half`` that send half a ClientHello,
    from ``source``; opened 20 at a time, each batch taken off the kernel's queue by the
    server before the next (a full queue would drop connections before the server sees them)."""
    hello = client_hello()
    opened = []
    for index in range(bare + half):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.bind((source, 0))
        raw.connect(("127.0.0.1", port))
        if index >= bare:
            try:
                raw.sendall(hello[: len(hello) // 2])
            except OSError:
                pass  # refused at once: closed before this was sent
        opened.append(raw)
        if index % 20 == 19:
            wait_until(lambda: accept_queue(port) == 0, WAIT, f"the server on {port} to accept what was queued",
                       seen=lambda: accept_queue(port))
    return opened


def is_closed(raw: socket.socket) -> bool:
    """Whether the server has closed (or reset) this connection."""
    try:
        return raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def tls_closed(tls: ssl.SSLSocket) -> bool:
    """Whether the server has closed this TLS connection (waiting a moment for it)."""
    tls.settimeout(0.2)
    try:
        return tls.recv(1) == b""
    except (TimeoutError, socket.timeout):
        return False
    except OSError:
        return True


def open_count(sockets: list[socket.socket]) -> int:
    return sum(not is_closed(raw) for raw in sockets)


def close_all(sockets: list[socket.socket]) -> None:
    for raw in sockets:
        raw.close()


# --- The central server -------------------------------------------------------------------


class Central:
    def __init__(self, process: CentralProcess, pki_dir: Path, consultation: int) -> None:
        self.process, self.pki_dir, self.consultation = process, pki_dir, consultation

    @property
    def port(self) -> int:
        return self.process.port


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Central]:
    folder = tmp_path_factory.mktemp("central")
    pki_dir = make_pki(folder / "pki")
    issue_certificate(pki_dir, "regulator", "inspector")
    home = folder / "central"
    home.mkdir()
    consultation = reserve_port()
    text = config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", opens_after_ms=0,
                       sale_ms=3_600_000, halls=("hall-1", "hall-2", "hall-3"))
    text += LIMITS + f'\n[consultation]\ninterface = "127.0.0.1"\nport = {consultation}\n'
    (home / "central.toml").write_text(text)
    for hall in ("hall-3",):
        issue_certificate(pki_dir, "server", hall)
    capped = (f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({CENTRAL_DESCRIPTORS}, "
              f"{CENTRAL_DESCRIPTORS})); from central_server.cli import central; central()")
    process = CentralProcess(home / "central.toml", [sys.executable, "-c", capped, "serve", "--config",
                                                      str(home / "central.toml")]).start()
    try:
        yield Central(process, pki_dir, consultation)
    finally:
        process.stop()


@pytest_twisted.ensureDeferred
async def test_N3_bare_and_half_handshake_connections_to_the_central_server_are_cut_and_a_hall_still_connects(
    central: Central,
) -> None:
    """300 connections from one address that never finish a TLS handshake: all but 40 refused
    as they come, the 40 cut after the handshake deadline; a hall at another address says hello meanwhile."""
    sockets = attack(central.port, "127.0.0.2", bare=200, half=100)
    try:
        hall = await connect(central.port, central.pki_dir, "hall-1")
        answer = await hall.hello("hall-1")
        assert answer["version"] == 2
        await until(lambda: open_count(sockets) == 0, f"all 300 connections of the attack to be cut "
                                                      f"({HANDSHAKE_S} s handshake deadline)", timeout=WAIT)
        # The hall's link, past its handshake with a certificate, is somebody's: no deadline cuts it.
        assert (await hall.get_game("hall-1"))["series"] == "V1"
        hall.transport.loseConnection()
    finally:
        close_all(sockets)


@pytest_twisted.ensureDeferred
async def test_N3_a_flood_from_many_addresses_is_refused_before_the_central_server_runs_out_of_descriptors(
    central: Central,
) -> None:
    """400 connections from ten addresses against 256 descriptors: the server admits what its
    descriptors allow beside what it keeps, refuses the rest as they come, and a connected
    hall's purchase is committed (journal, head file) during the flood."""
    hall = await connect(central.port, central.pki_dir, "hall-2")
    await hall.hello("hall-2")
    await until(lambda: hall.pushed("sale_opened"), "the sale of net-1 to be open")
    sockets: list[socket.socket] = []
    try:
        for last in range(3, 13):
            sockets += attack(central.port, f"127.0.0.{last}", bare=40, half=0)
        bought = await hall.buy("flood-1", hall="hall-2", terminal="K1", count=1)
        assert bought["status"] == "confirmed"
        await until(lambda: open_count(sockets) == 0, "every connection of the flood to be cut", timeout=WAIT)
        again = await hall.buy("flood-2", hall="hall-2", terminal="K1", count=1)
        assert again["status"] == "confirmed"
        assert b"Too many open files" not in central.process.output
        assert b"Refused" in central.process.output and b"as many as the file descriptors allow" in central.process.output
    finally:
        close_all(sockets)
        hall.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_N8_a_revoked_halls_open_link_is_cut_within_seconds(central: Central) -> None:
    """hall-3's certificate revoked while its link is open: the central server cuts the link, and the
    hall cannot buy any more (it could, 30 s later, before)."""
    hall = await connect(central.port, central.pki_dir, "hall-3")
    await hall.hello("hall-3")
    revoke_certificate(central.pki_dir, "hall-3", reason="key-compromise")
    await until(lambda: hall.lost.called, "the revoked hall's link to be cut", timeout=WAIT)
    with pytest.raises((ConnectionDone, ConnectionLost)):
        await hall.buy("after-revocation", hall="hall-3", terminal="K1", count=1)


def test_N4_the_consultation_refuses_a_huge_body_on_its_declared_length(central: Central) -> None:
    """A POST declaring 1.5 GB to the central server's consultation: a JSON 413 before any of it is sent."""
    folder = PkiFolder(central.pki_dir)
    context = ssl.create_default_context(cafile=str(folder.ca_cert))
    context.load_cert_chain(str(folder.cert("inspector")), str(folder.key("inspector")))
    status, headers, body = declared_body(central.consultation, context, "/regulator/api/records", 1_500_000_000)
    assert status == 413 and headers["content-type"].startswith("application/json"), (status, headers, body)
    assert json.loads(body)["error"]["code"] == "too_large"


# --- The regulator's receiver -----------------------------------------------------------------


class Receiver:
    """``bingo regulator serve`` with its page, each port behind the guard."""

    def __init__(self, folder: Path) -> None:
        self.pki_dir = folder / "pki"
        make_pki(self.pki_dir)
        issue_certificate(self.pki_dir, "regulator", "regulator")
        self.port, self.web_port = reserve_port(), reserve_port()
        command = [sys.executable, "-c", "from regulator.cli import regulator; regulator()", "serve",
                   "--dir", str(folder / "home"), "--pki", str(self.pki_dir), "--port", str(self.port),
                   "--interface", "127.0.0.1", "--web-port", str(self.web_port),
                   "--handshake-timeout", str(HANDSHAKE_S), "--per-address", str(PER_ADDRESS)]
        self.process = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(REPO)},
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.output = b""
        threading.Thread(target=self._drain, daemon=True).start()
        wait_until(lambda: b"receiver page at" in self.output or self.process.poll() is not None, START,
                   "the receiver and its page to listen")
        assert self.process.poll() is None, self.output.decode(errors="replace")

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.output += line

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    started = Receiver(tmp_path_factory.mktemp("receiver"))
    try:
        yield started
    finally:
        started.stop()


@pytest_twisted.ensureDeferred
async def test_N3_bare_and_half_handshake_connections_to_the_receivers_feed_port_are_cut_and_a_hall_still_feeds(
    receiver: Receiver,
) -> None:
    """150 connections that never finish a handshake: all cut; a hall's feed is answered meanwhile."""
    sockets = attack(receiver.port, "127.0.0.2", bare=100, half=50)
    try:
        options = client_tls_options(receiver.pki_dir, "hall-1", "localhost")
        sender = await connectProtocol(SSL4ClientEndpoint(reactor, "127.0.0.1", receiver.port, options), amp.AMP())
        key = Ed25519PrivateKey.generate()
        try:
            answer = await sender.callRemote(FeedHello, message=encode(Hello("hall:hall-1", public_pem(key).decode())))
            assert isinstance(decode(answer["message"]), Position)
        except FeedRefusedError:
            pass  # a receiver that keeps its senders' keys may refuse this one's: it answered all the same
        await until(lambda: open_count(sockets) == 0, "all 150 connections of the attack to be cut", timeout=WAIT)
        assert sender.transport is not None and sender.transport.connected
        sender.transport.loseConnection()
    finally:
        close_all(sockets)


def test_N4_the_receivers_page_refuses_a_huge_body_on_its_declared_length(receiver: Receiver) -> None:
    """A POST declaring 1.5 GB to the receiver's page: a JSON 413 before any of it is sent."""
    folder = PkiFolder(receiver.pki_dir)
    context = ssl.create_default_context(cafile=str(folder.ca_cert))
    context.load_cert_chain(str(folder.cert("regulator")), str(folder.key("regulator")))
    status, headers, body = declared_body(receiver.web_port, context, "/", 1_500_000_000)
    assert status == 413 and headers["content-type"].startswith("application/json"), (status, headers, body)


# --- The hall ------------------------------------------------------------------------------------

#: The hall's idle deadline for a connection without a certificate, in seconds (its sockets are pinged
#: every third of it).
HALL_IDLE_S = 6
VIDEOBINGO = """
[videobingo]
seats = 20
room_zone = "bingo room"

[[videobingo.machine]]
id = "vb-1"
model = "classic"
paytable = "{paytable}"
credit_cents = 20
stations = 2
zone = "machines"
"""


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    folder = tmp_path_factory.mktemp("hall")
    process = HallProcess(folder)
    text = process.config.read_text().replace("handshake_timeout_s = 10", f"handshake_timeout_s = {HANDSHAKE_S}")
    text = text.replace("idle_timeout_s = 120", f"idle_timeout_s = {HALL_IDLE_S}")
    text = text.replace("per_address = 64", f"per_address = {PER_ADDRESS}")
    process.config.write_text(text + VIDEOBINGO.format(paytable=DEMO_PAYTABLE))
    process.start()
    try:
        yield process
    finally:
        process.stop()


def test_N3_the_halls_port_cuts_unfinished_handshakes_and_silent_connections_but_keeps_a_board_that_answers(
    hall: HallProcess,
) -> None:
    """The hall's one port: 60 connections that never finish a handshake all cut; one that finishes
    it without a certificate and says nothing cut after the idle deadline; a board's socket, which
    only listens, pinged and kept past it."""
    sockets = attack(hall.port, "127.0.0.2", bare=40, half=20)
    try:
        silent = https(hall.port, hall.tls_context())
        board = PingingSocket(hall, "/board/ws")
        assert board.accepted
        board.read_until(lambda: board.pings >= 4, "four pings on the board's socket, one every 2 s")
        wait_until(lambda: tls_closed(silent), WAIT, "the silent connection to be cut after the idle deadline",
                   interval=0)
        wait_until(lambda: open_count(sockets) == 0, WAIT, "all 60 connections of the attack to be cut")
        assert not board.closed
        status, board_picture = HttpClient(hall).call("GET", "/api/board")
        assert status == 200 and "board" in json.dumps(board_picture)
    finally:
        close_all(sockets)


def test_N4_the_hall_refuses_a_huge_body_on_its_declared_length_and_a_chunked_one_as_it_comes(
    hall: HallProcess,
) -> None:
    """POST /login declaring 1.5 GB: a JSON 413 before any of it is sent; POST /api/command with a
    chunked body that never ends: a JSON 413 once 1 MiB has come; the hall serves on."""
    status, headers, body = declared_body(hall.port, hall.tls_context(), "/login", 1_500_000_000)
    assert status == 413 and headers["content-type"].startswith("application/json"), (status, headers, body)
    assert json.loads(body)["error"]["code"] == "too_large"
    status, headers, body = chunked_body(hall.port, hall.tls_context(), "/api/command", 20)
    assert status == 413 and json.loads(body)["error"]["code"] == "too_large", (status, headers, body)
    client = HttpClient(hall)
    assert client.call("POST", "/login", {"name": "rosa", "password": PASSWORD})[0] == 200


def test_N8_a_revoked_certificates_open_socket_on_the_hall_is_cut_within_seconds(hall: HallProcess) -> None:
    """A socket opened with a terminal certificate that is then revoked (and the list copied to the
    hall, as docs/pki.md says): the hall cuts it."""
    socket_of_revoked = PingingSocket(hall, "/board/ws", certificate=("terminal", "board-kiosk"))
    assert socket_of_revoked.accepted
    authority = hall.folder / "operator-ca"
    revoke_certificate(authority, "board-kiosk", reason="key-compromise")
    shutil.copy(authority / "crl.pem", hall.folder / "pki" / "crl.pem")
    socket_of_revoked.read_until(lambda: socket_of_revoked.closed, "the revoked terminal's socket to be cut")


def test_N15_the_video_bingo_stations_socket_takes_machine_certificates_not_terminal_ones(hall: HallProcess) -> None:
    """``/vb/ws`` over TLS: a station with its machine certificate (``bingo pki issue machine vb-1.1``) is
    let in; a player terminal's certificate is refused."""
    station = WireSocket(hall, "/vb/ws", certificate=("machine", "vb-1.1"))
    assert station.accepted, station.rejected_status
    station.close()
    terminal = WireSocket(hall, "/vb/ws", certificate=("terminal", "vb-1.2"))
    assert terminal.rejected_status == 403
    terminal.close()


def test_N18_one_terminals_garbage_blocks_that_terminal_not_the_others_at_its_address(hall: HallProcess) -> None:
    """A terminal that sends garbage before hello, again and again, has its own certificate refused for a
    while; another terminal at the same address connects meanwhile."""
    # The bucket refills a little while this goes on: garbage until the certificate is blocked.
    for attempt in range(3 * PRE_HELLO_BURST):
        noisy = WireSocket(hall, "/kiosk/ws", certificate=("terminal", "noisy-1"))
        if noisy.rejected_status == 429:
            noisy.close()
            break
        assert noisy.accepted, (attempt, noisy.rejected_status)
        noisy.send({"garbage": attempt})
        noisy.until(lambda message: message.get("type") == "error")
        noisy.close()
    else:
        raise AssertionError(f"{3 * PRE_HELLO_BURST} connections of garbage and the terminal is still let in")
    assert attempt >= PRE_HELLO_BURST
    quiet = WireSocket(hall, "/kiosk/ws", certificate=("terminal", "quiet-1"))
    assert quiet.accepted, quiet.rejected_status
    quiet.close()


def test_N19_an_api_asked_with_a_method_it_does_not_answer_answers_json(hall: HallProcess) -> None:
    """``GET /api/document`` (a POST resource) and ``DELETE /api/state``: a JSON 405 naming the methods."""
    for method, path in (("GET", "/api/document"), ("DELETE", "/api/state")):
        with https(hall.port, hall.tls_context()) as tls:
            tls.sendall(f"{method} {path} HTTP/1.1\r\nHost: localhost:{hall.port}\r\n\r\n".encode())
            status, headers, body = read_answer(tls)
        assert status == 405 and headers["content-type"].startswith("application/json"), (path, headers, body)
        assert json.loads(body)["error"]["code"] == "method_not_allowed" and headers["allow"], (path, body)


class PingingSocket:
    """A WebSocket (wsproto over TLS) that answers the hall's pings and counts them."""

    def __init__(self, hall: HallProcess, path: str, certificate: tuple[str, str] | None = None) -> None:
        raw = socket.create_connection(("127.0.0.1", hall.port), timeout=1)
        self.tls = hall.tls_context(certificate).wrap_socket(raw, server_hostname="localhost")
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.tls.sendall(self.ws.send(WsRequest(host=f"localhost:{hall.port}", target=path)))
        self.accepted = self.closed = False
        self.pings = 0
        self.read_until(lambda: self.accepted or self.closed, f"the hall to answer the handshake of {path}")

    def _read(self) -> bool:
        try:
            data = self.tls.recv(65536)
        except (TimeoutError, socket.timeout):
            return False
        except OSError:
            data = b""
        self.ws.receive_data(data or None)
        if not data:
            self.closed = True
        for event in self.ws.events():
            if isinstance(event, AcceptConnection):
                self.accepted = True
            elif isinstance(event, Ping):
                self.pings += 1
                self.tls.sendall(self.ws.send(event.response()))
            elif isinstance(event, (RejectConnection, CloseConnection)):
                self.closed = True
        return True

    def read_until(self, done: Any, what: str) -> None:
        wait_until(lambda: done() or (self._read() and done()), WAIT, what, interval=0)


# --- HTTP by hand -----------------------------------------------------------------------------


def read_answer(tls: ssl.SSLSocket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP answer off ``tls``: status, headers (lower-case names), body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = tls.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed before an answer; got {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers.get("content-length", "0")):
        chunk = tls.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body


def https(port: int, context: ssl.SSLContext) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    return context.wrap_socket(raw, server_hostname="localhost")


def declared_body(port: int, context: ssl.SSLContext, path: str, length: int) -> tuple[int, dict[str, str], bytes]:
    """POST ``path`` declaring a body of ``length`` bytes and sending none of it: the answer."""
    with https(port, context) as tls:
        tls.sendall(f"POST {path} HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n".encode())
        return read_answer(tls)


def chunked_body(port: int, context: ssl.SSLContext, path: str, chunks: int) -> tuple[int, dict[str, str], bytes]:
    """POST ``path`` with a chunked body of ``chunks`` chunks of 64 KiB, never ended: the answer."""
    with https(port, context) as tls:
        tls.sendall(f"POST {path} HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n".encode())
        piece = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
        try:
            for _ in range(chunks):
                tls.sendall(piece)
        except OSError:
            pass  # the server answered and stopped reading: the answer is waiting
        return read_answer(tls)

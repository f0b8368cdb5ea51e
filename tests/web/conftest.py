"""A hall with its web edge on fakes: a real SQLite journal, commands run inline on a
task.Clock, and a fake browser that speaks HTTP and WebSocket bytes to the Site over
a StringTransport (no reactor, no sockets)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h11
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.address import IPv4Address
from twisted.internet.interfaces import ISSLTransport
from twisted.internet.task import Clock
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.web.server import Site
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, RejectConnection, RejectData, Request, TextMessage
from zope.interface import implementer

from hall_server.config import StaffMember, hash_password
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.session import CHECKS, SessionModule
from hall_server.store.database import open_database
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel

PASSWORD = "correct horse"
STAFF = {
    "admin": Role.ADMINISTRATOR,
    "rosa": Role.ROOM_CHIEF,
    "tomas": Role.TABLE_CHIEF,
    "sam": Role.SELLER_CALLER,
    "carla": Role.CASHIER,
    "adam": Role.ADMISSION,
}
_HASH = hash_password(PASSWORD)


@dataclass
class WebHall:
    core: CommandCore
    journal: Journal
    view: HallView
    hub: LiveHub
    sign_ins: SignIns
    site: Site
    clock: Clock


@pytest.fixture
def web_hall(tmp_path: Path) -> WebHall:
    clock = Clock()
    clock.advance(1_780_000_000)
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    SessionModule(core, lambda now: dict.fromkeys(CHECKS))
    LedgerModule(core)
    view = HallView("Test hall")
    core.add_view(view)
    sign_ins = SignIns(StaffDirectory(StaffMember(n, r, _HASH) for n, r in STAFF.items()), clock)
    channel = CommandChannel(core)
    hub = LiveHub(view, channel, sign_ins)
    core.observers.append(hub.record_committed)
    site = build_site(
        hub=hub, sign_ins=sign_ins, channel=channel, authenticate=inline_authenticate(sign_ins), secure_cookie=False
    )
    return WebHall(core, journal, view, hub, sign_ins, site, clock)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@implementer(ISSLTransport)
class TlsStringTransport(StringTransport):
    """A :class:`StringTransport` that says it is TLS, as the hall's HTTPS endpoint is."""

    def setTcpNoDelay(self, enabled: bool) -> None:
        pass  # an ISSLTransport is an ITCPTransport; there is no socket to tune


class FakeBrowser:
    """Speaks HTTP/1.1 and WebSocket bytes to a Site; keeps its cookie like a browser.

    ``address``: the client's address as the server sees it; ``tls``: whether the
    connection says it is TLS (``https``).
    """

    def __init__(self, site: Site, *, address: str = "127.0.0.1", tls: bool = False) -> None:
        self.site = site
        site.reactor = MemoryReactorClock()  # the channel's idle timers, never run
        self.cookie: str | None = None
        self.address = address
        self.tls = tls

    def _connect(self) -> tuple[Any, StringTransport]:
        peer = IPv4Address("TCP", self.address, 40000)
        protocol = self.site.buildProtocol(peer)
        transport = TlsStringTransport(peerAddress=peer) if self.tls else StringTransport(peerAddress=peer)
        protocol.makeConnection(transport)
        return protocol, transport

    def request(self, method: str, path: str, body: bytes | str | None = None, *,
                content_type: str | None = "application/json", headers: dict[str, str] | None = None) -> Response:
        response = self.try_request(method, path, body, content_type=content_type, headers=headers)
        assert response is not None, f"no answer to {method} {path}"
        return response

    def try_request(self, method: str, path: str, body: bytes | str | None = None, *,
                    content_type: str | None = "application/json",
                    headers: dict[str, str] | None = None) -> Response | None:
        """The answer, or ``None`` while the server has not answered yet."""
        data = body.encode() if isinstance(body, str) else (body or b"")
        head = [("Host", "localhost"), ("Content-Length", str(len(data)))]
        if body is not None and content_type:
            head.append(("Content-Type", content_type))
        if self.cookie:
            head.append(("Cookie", f"bingo_session={self.cookie}"))
        head += list((headers or {}).items())
        client = h11.Connection(h11.CLIENT)
        raw = client.send(h11.Request(method=method, target=path, headers=head)) + client.send(h11.Data(data)) + client.send(h11.EndOfMessage())
        protocol, transport = self._connect()
        protocol.dataReceived(raw)
        while transport.producer is not None and not transport.streaming:
            transport.producer.resumeProducing()  # static files are pulled by the transport
        answer = transport.value()
        if not answer:
            return None  # nothing yet (an empty read would tell h11 the connection closed)
        client.receive_data(answer)
        response = client.next_event()
        if response is h11.NEED_DATA:
            return None
        assert isinstance(response, h11.Response), f"no complete response: {transport.value()!r}"
        parts = []
        while isinstance(event := client.next_event(), h11.Data):
            parts.append(event.data)
        headers_out = {k.decode().lower(): v.decode() for k, v in response.headers}
        for k, v in response.headers:
            if k.lower() == b"set-cookie" and v.startswith(b"bingo_session="):
                value = v.split(b";")[0].split(b"=", 1)[1].decode()
                self.cookie = value or None
        return Response(response.status_code, headers_out, b"".join(parts))

    def post_json(self, path: str, value: Any) -> Response:
        return self.request("POST", path, json.dumps(value))

    def sign_in(self, name: str, password: str = PASSWORD) -> Response:
        return self.post_json("/login", {"name": name, "password": password})

    def command(self, command: str, args: dict[str, Any], request_id: str = "r1") -> Response:
        return self.post_json("/api/command", {"id": request_id, "command": command, "args": args})

    def socket(self, path: str = "/ws", origin: str | None = None) -> "FakeSocket":
        return FakeSocket(self, path, origin)


class FakeSocket:
    """A WebSocket client (wsproto) over the fake browser's transport."""

    def __init__(self, browser: FakeBrowser, path: str, origin: str | None) -> None:
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.protocol, self.transport = browser._connect()
        extra = []
        if browser.cookie:
            extra.append((b"cookie", f"bingo_session={browser.cookie}".encode()))
        if origin:
            extra.append((b"origin", origin.encode()))
        self.protocol.dataReceived(self.ws.send(Request(host="localhost", target=path, extra_headers=extra)))
        self.accepted = False
        self.rejected_status: int | None = None
        self.close_code: int | None = None
        self.inbox: list[Any] = []
        self._pump()

    def _pump(self) -> None:
        data = self.transport.value()
        self.transport.clear()
        if data and self.close_code is None:
            self.ws.receive_data(data)
        for event in self.ws.events():
            if isinstance(event, AcceptConnection):
                self.accepted = True
            elif isinstance(event, RejectConnection):
                self.rejected_status = event.status_code
            elif isinstance(event, TextMessage):
                self.inbox.append(json.loads(event.data))
            elif isinstance(event, CloseConnection):
                self.close_code = event.code
            elif isinstance(event, RejectData):
                pass

    @property
    def closed(self) -> bool:
        """Whether the server closed the connection (its Close frame, or the TCP connection)."""
        self._pump()
        return self.close_code is not None or self.transport.disconnecting

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are, past the WebSocket library: frames it would never make."""
        self.protocol.dataReceived(data)
        self._pump()

    def send_text(self, text: str) -> None:
        self.protocol.dataReceived(self.ws.send(TextMessage(data=text)))
        self._pump()

    def send(self, value: Any) -> None:
        self.send_text(json.dumps(value))

    def received(self) -> list[Any]:
        self._pump()
        messages, self.inbox = self.inbox, []
        return messages


@pytest.fixture
def browser(web_hall: WebHall) -> FakeBrowser:
    return FakeBrowser(web_hall.site)


def journal_length(hall: WebHall) -> int:
    return sum(1 for _ in hall.journal.records())


ALL_BALLS = list(range(1, 91))


# --- A real hall server process on loopback (integration and end-to-end tests) --------

import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from http.cookiejar import CookieJar

from hall_server.config import DEFAULT_STAFF, default_config_text
from tests.support.waiting import START, WAIT, WaitTimeout, wait_until

REPO = Path(__file__).resolve().parents[2]
URL_LINE = re.compile(rb"Caller console at (https?://[^/\s]+)/console")


class HallProcess:
    """``bingo hall serve`` in a child process, on a free loopback port, with TLS."""

    def __init__(self, folder: Path, *, demo: bool = False, demo_pace: float = 0.2,
                 env: dict[str, str] | None = None, args: tuple[str, ...] = (), language: str = "en") -> None:
        self.folder = folder
        self.env = dict(env or {})  # added to the process's environment (libfaketime's, say)
        self.args = args  # more options of `bingo hall serve`
        self.config = folder / "hall.toml"
        if not self.config.exists():
            text = default_config_text("Loopback hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
            # A small card set keeps the first start quick: 10 strips, 60 cards a series.
            text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
            # The staff of these tests act at a browser's pace on a loaded machine: a prize found is closed
            # by the caller, never by the wait racing them (the wait is tested on a clock, tests/hall).
            assert "[draw]" not in text
            text += "\n[draw]\nclaim_wait_s = 120\n"
            # The screens speak the hall's language; these tests read them in ``language`` (English by default).
            text = text.replace('language = "ca"', f'language = "{language}"')
            self.config.write_text(text)
        self.demo = demo
        self.demo_pace = demo_pace
        #: What runs the hall (its options follow): ``bingo hall serve`` of this tree by default.
        self.command = [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve"]
        self.process: subprocess.Popen[bytes] | None = None
        self.base = ""
        self.output = b""

    def start(self, timeout: float = START) -> "HallProcess":
        command = [*self.command, "--config", str(self.config)]
        if self.demo:
            command += ["--demo", "--pace" if self.command[-1] == "serve" else "--demo_pace", str(self.demo_pace)]
        command += self.args
        env = {**os.environ, "BINGO_HOME": str(self.folder), **self.env}
        self.base = ""
        self.process = subprocess.Popen(command, cwd=self.folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # The output is read on a thread from the start, so that the bound holds even if
        # the server hangs silently; and the server logs every HTTP request: a pipe nobody
        # reads would fill up and block the server in the middle of a long test.
        drain = threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True)
        drain.start()
        process = self.process
        try:
            wait_until(lambda: self.base or process.poll() is not None, timeout,
                       "the hall server to print its console address", interval=0.05)
        except WaitTimeout as timed_out:
            self.stop()
            raise WaitTimeout(f"{timed_out}:\n{self.output.decode(errors='replace')}") from None
        if not self.base:
            drain.join(5)  # the rest of what the dead server said
            self.stop()
            raise AssertionError(f"the hall server did not start:\n{self.output.decode(errors='replace')}")
        return self

    def _drain(self, stream: Any) -> None:
        for line in iter(stream.readline, b""):
            self.output += line
            if not self.base and (match := URL_LINE.search(line)):
                self.base = match.group(1).decode()

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def kill(self) -> None:
        """``kill -9``: the process gets no chance to finish anything."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def certificate(self, kind: str, name: str) -> tuple[Path, Path]:
        """The (certificate, key) files of ``name``, issued by the hall's local authority on first use."""
        from server_kit.pki import PkiFolder, issue_certificate

        authority = PkiFolder(self.folder / "operator-ca")
        if not authority.cert(name).exists():
            issue_certificate(authority.root, kind, name)
        return authority.cert(name), authority.key(name)

    def tls_context(self, certificate: tuple[str, str] | None = None) -> ssl.SSLContext:
        """A client trusting the hall's authority, presenting ``(kind, name)``'s certificate if given."""
        context = ssl.create_default_context(cafile=str(self.folder / "pki" / "ca.pem"))
        if certificate is not None:
            context.load_cert_chain(*map(str, self.certificate(*certificate)))
        return context


class HttpClient:
    """A urllib client that trusts the hall's own certificate authority, with cookies."""

    def __init__(self, hall: HallProcess) -> None:
        self.hall = hall
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPSHandler(context=hall.tls_context()),
            urllib.request.HTTPCookieProcessor(self.jar),
        )

    @property
    def cookie(self) -> str | None:
        """The sign-in's session id, as the browser would send it."""
        return next((c.value for c in self.jar if c.name == "bingo_session"), None)

    def call(self, method: str, path: str, value: Any = None) -> tuple[int, Any]:
        data = None if value is None else json.dumps(value).encode()
        request = urllib.request.Request(self.hall.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with self.opener.open(request, timeout=WAIT) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


class WireSocket:
    """A WebSocket client (wsproto) over a real TLS connection to a :class:`HallProcess`."""

    def __init__(self, hall: HallProcess, path: str, *, cookie: str | None = None, origin: str | None = None,
                 timeout: float = 20, certificate: tuple[str, str] | None = None) -> None:
        import socket as sockets

        raw = sockets.create_connection(("127.0.0.1", hall.port), timeout=timeout)
        self.sock = hall.tls_context(certificate).wrap_socket(raw, server_hostname="localhost")
        self.ws = WSConnection(ConnectionType.CLIENT)
        extra = [(b"cookie", f"bingo_session={cookie}".encode())] if cookie else []
        if origin:
            extra.append((b"origin", origin.encode()))
        self.sock.sendall(self.ws.send(Request(host=f"localhost:{hall.port}", target=path, extra_headers=extra)))
        self.accepted = False
        self.rejected_status: int | None = None
        self.close_code: int | None = None
        self.texts: list[str] = []  # every text message received, kept
        self._part = ""
        self._cursor = 0
        while not self.accepted and self.rejected_status is None and self._read():
            pass

    def _read(self) -> bool:
        """Read once and handle what came; ``False`` once the connection is closed."""
        try:
            data = self.sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            data = b""
        if not data:
            self.ws.receive_data(None)
        else:
            self.ws.receive_data(data)
        for event in self.ws.events():
            if isinstance(event, AcceptConnection):
                self.accepted = True
            elif isinstance(event, RejectConnection):
                self.rejected_status = event.status_code
            elif isinstance(event, TextMessage):  # a long message comes in parts: kept whole
                self._part += event.data
                if event.message_finished:
                    self.texts.append(self._part)
                    self._part = ""
            elif isinstance(event, CloseConnection):
                self.close_code = event.code if self.close_code is None else self.close_code
        return bool(data)

    def send(self, value: Any) -> None:
        self.sock.sendall(self.ws.send(TextMessage(data=json.dumps(value))))

    def until(self, wanted: Any, timeout: float = 20) -> Any:
        """Read until the next message for which ``wanted(message)`` is true; that message."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while self._cursor < len(self.texts):
                message = json.loads(self.texts[self._cursor])
                self._cursor += 1
                if wanted(message):
                    return message
            if not self._read():
                break
        raise AssertionError(f"no such message within {timeout} s; got {self.texts[-3:]}")

    def close(self) -> None:
        self.sock.close()

"""No peer can exhaust a server, and a revoked certificate is out within seconds (docs/security.md,
"Connections"): the attacks of the second penetration test, against real processes over real TLS.

One central server (``bingo central serve``, its descriptors capped at 256 as a small
machine's would be), one regulator's receiver (``bingo regulator serve``) and one hall
(``bingo hall serve``) are started for the module, each with a 2-second handshake
deadline.  The attacks come from other loopback addresses than the legitimate peers
(127.0.0.2 and up: Linux routes all of 127/8 to the loopback), as they would from
another machine of the hall's network.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
import pytest_twisted
from twisted.internet.error import ConnectionDone, ConnectionLost

from server_kit.pki import PkiFolder, issue_certificate, revoke_certificate
from server_kit.ports import reserve_port
from tests.central_server.support import CentralProcess, config_text, connect, make_pki, until
from tests.support.waiting import WAIT, wait_until

pytestmark = [pytest.mark.integration]

#: The deadline every server of the module is given for a TLS handshake.
HANDSHAKE_S = 2
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
        Path("/tmp/central-out.txt").write_bytes(process.output)


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

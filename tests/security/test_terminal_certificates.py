"""A terminal proves itself with its certificate as well as its token (pentest finding
11): the bundle a first start writes is what the headless terminal connects with, and a
terminal's certificate is bound to the terminal it names."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import pytest_twisted
from twisted.internet import reactor

from terminals.client import TerminalCertificate, TerminalClient, TerminalError, connect
from tests.web.conftest import HallProcess
from tests.web.test_server_process import Staff

pytestmark = [pytest.mark.integration]


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[HallProcess]:
    process = HallProcess(tmp_path).start()
    yield process
    process.stop()


def first_terminal(hall: HallProcess) -> TerminalCertificate:
    """The certificate bundle of terminal-1, as the hall's first start wrote it."""
    return TerminalCertificate(hall.folder / "terminal-certs" / "terminal-1", "terminal-1")


@pytest.mark.req("R82.13-16")
@pytest_twisted.ensureDeferred
async def test_the_first_start_bundle_connects_the_headless_terminal_enrolled_under_its_name(hall: HallProcess) -> None:
    token = Staff(hall)("rosa", "enrol_terminal", terminal="terminal-1", place="row A")["result"]["token"]
    client = TerminalClient("terminal-1", token)
    socket = await connect(reactor, f"wss://localhost:{hall.port}/kiosk/ws", client, tls=first_terminal(hall))
    state = await client.hello()
    assert state["type"] == "state" and client.errors == []
    socket.close()
    await socket.closed


@pytest.mark.req("R82.13-16")
@pytest_twisted.ensureDeferred
async def test_pentest_11_a_terminal_certificate_says_hello_only_as_its_own_terminal(hall: HallProcess) -> None:
    """With terminal-1's certificate, even K2's right token does not make the connection K2."""
    staff = Staff(hall)
    staff("rosa", "enrol_terminal", terminal="terminal-1", place="row A")
    k2_token = staff("rosa", "enrol_terminal", terminal="K2", place="row B")["result"]["token"]
    client = TerminalClient("K2", k2_token)
    socket = await connect(reactor, f"wss://localhost:{hall.port}/kiosk/ws", client, tls=first_terminal(hall))
    with pytest.raises(TerminalError) as refused:
        await client.hello()
    assert refused.value.code == "not_enrolled"
    assert str(refused.value) == "this connection's certificate is for terminal terminal-1, not K2"
    await socket.closed  # the hall hung up

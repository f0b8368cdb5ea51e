"""A hall linked to a replicated central server (R92.6): both endpoints, the switch, the heartbeat.

``[central] endpoints`` lists the central server's processes; the link's
:class:`EndpointRing` sends each connection attempt to the next one, :func:`ring_policy`
tries the next endpoint at once and waits only between rounds, and the connection's
heartbeat (``hello`` again every two seconds) cuts a link whose central server process
stopped answering (its machine frozen), so that the other endpoint is tried.  The
whole switch, with real processes, is the failover campaign (``tests/replica/``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from twisted.internet import defer, task
from twisted.internet.testing import StringTransport
from twisted.protocols import amp

from hall_server.config import ConfigError, parse_config
from hall_server.network import link
from hall_server.network.link import CentralAddress, CentralConnection, Endpoint, EndpointRing, ring_policy
from server_kit.journal.rollback import RolledBack

BASE = {"hall": {"name": "Sala"}}


@pytest.mark.req("R92.6")
def test_r92_6_central_lists_both_processes_of_a_replicated_central_server() -> None:
    config = parse_config({**BASE, "central": {"endpoints": ["central-a.acme.net:7310", "central-b.acme.net:7311"],
                                               "hall_id": "hall-1"}}, base=Path("/srv/hall"))
    central = config.central
    assert central is not None
    assert central.endpoints == (("central-a.acme.net", 7310), ("central-b.acme.net", 7311))
    assert (central.host, central.port, central.server_name) == ("central-a.acme.net", 7310, "")  # each its own host
    address = CentralAddress(central.host, central.port, "hall-1", central.pki_dir, central.host,
                             tuple(Endpoint(h, p, h) for h, p in central.endpoints))
    assert [str(e) for e in address.each()] == ["central-a.acme.net:7310", "central-b.acme.net:7311"]
    one = CentralAddress("central.acme.net", 7310, "hall-1", central.pki_dir, "central.acme.net")
    assert one.each() == (Endpoint("central.acme.net", 7310, "central.acme.net"),)


@pytest.mark.req("R92.6")
def test_r92_6_one_server_name_for_every_endpoint_when_given() -> None:
    config = parse_config({**BASE, "central": {"endpoints": ["10.0.0.1:7310", "10.0.0.2:7310"], "hall_id": "hall-1",
                                               "server_name": "central.acme.net"}})
    assert config.central is not None and config.central.server_name == "central.acme.net"


@pytest.mark.req("R92.6")
@pytest.mark.parametrize("table, message", [
    ({"endpoints": ["a:1"], "host": "a", "hall_id": "hall-1"}, r"central.host: is not a setting with endpoints "
                                                              r"\(endpoints replace host and port\)"),
    ({"endpoints": [], "hall_id": "hall-1"}, "central.endpoints: lists the central server's processes"),
    ({"endpoints": "a:1", "hall_id": "hall-1"}, "central.endpoints: lists the central server's processes"),
    ({"endpoints": ["a:1", "b"], "hall_id": "hall-1"}, r'central.endpoints\[1\]: is "HOST:PORT" with a port 1-65535'),
    ({"endpoints": ["a:0"], "hall_id": "hall-1"}, r'central.endpoints\[0\]: is "HOST:PORT"'),
    ({"endpoints": ["a:1", "a:1"], "hall_id": "hall-1"}, "central.endpoints: names an endpoint twice"),
    ({"endpoints": ["a:1"]}, "central.hall_id: is required"),
])
def test_r92_6_bad_endpoints_stop_the_start_naming_the_key(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**BASE, "central": table})


class FakeEndpoint:
    """A client endpoint that records each attempt and fails it (no process listens there)."""

    def __init__(self, name: str, attempts: list[str]) -> None:
        self.name, self.attempts = name, attempts

    def connect(self, factory: Any) -> defer.Deferred[Any]:
        self.attempts.append(self.name)
        return defer.fail(ConnectionRefusedError(self.name))


@pytest.mark.req("R92.6")
def test_r92_6_each_attempt_goes_to_the_next_endpoint() -> None:
    attempts: list[str] = []
    a, b = Endpoint("a", 1, "a"), Endpoint("b", 2, "b")
    ring = EndpointRing([(a, FakeEndpoint("a", attempts)), (b, FakeEndpoint("b", attempts))])
    for _ in range(5):
        ring.connect(None).addErrback(lambda _: None)
    assert attempts == ["a", "b", "a", "b", "a"] and ring.current == a
    assert str(ring) == "a:1, b:2"


@pytest.mark.req("R92.6")
def test_r92_6_the_next_endpoint_is_tried_at_once_and_rounds_back_off_to_a_second_and_a_half() -> None:
    policy = ring_policy(2, jitter=lambda: 0.0)
    assert [policy(n) for n in range(1, 11)] == [link.SWITCH_S, 0.5, link.SWITCH_S, 0.75, link.SWITCH_S, 1.125,
                                                 link.SWITCH_S, 1.5, link.SWITCH_S, 1.5]
    assert max(policy(n) for n in range(1, 200)) == link.ROUND_MAX_S
    single = ring_policy(1, jitter=lambda: 0.0)
    assert single(1) == pytest.approx(1.5) and single(50) == link.RETRY_MAX_S  # one endpoint: as before


class FakeRelay:
    hall_id = "hall-1"
    software = "bingo-hall test"
    behind: str | None = None  # what check_journal raises with (None: the journal has what the answer says)

    def disconnected(self, port: Any) -> None:
        pass

    def hello_arguments(self) -> dict[str, Any]:
        return {"hall_id": self.hall_id, "versions": [2], "software": self.software, "journal_seq": 7,
                "journal_hash": "a" * 64}

    def check_journal(self, answer: Any) -> None:
        if self.behind is not None:
            raise RolledBack(self.behind)


def linked() -> tuple[CentralConnection, StringTransport, task.Clock]:
    clock = task.Clock()
    connection = CentralConnection(FakeRelay(), clock)  # type: ignore[arg-type]
    transport = StringTransport()
    connection.makeConnection(transport)
    connection.beat()
    return connection, transport, clock


def answer_last_box(connection: CentralConnection, transport: StringTransport, **fields: bytes) -> None:
    """The central server answers the last command the hall sent."""
    boxes = amp.parse(io.BytesIO(transport.value()))
    transport.clear()
    asked = boxes[-1]
    assert asked[b"_command"] == b"hello"
    answer = amp.AmpBox(_answer=asked[b"_ask"], **fields)
    connection.dataReceived(answer.serialize())


@pytest.mark.req("R92.6")
def test_r92_6_the_link_says_hello_every_two_seconds_and_stays_up_while_answered() -> None:
    connection, transport, clock = linked()
    for _ in range(10):
        clock.advance(link.HEARTBEAT_S)
        answer_last_box(connection, transport, version=b"1", central_id=b"central-a")
    assert not transport.disconnecting


def test_N7_a_heartbeat_answer_that_holds_more_of_the_journal_closes_the_link() -> None:
    """Two copies of a hall at once, or a journal cut while linked: the answer says more than the journal has."""
    connection, transport, clock = linked()
    clock.advance(link.HEARTBEAT_S)
    assert b"journal_seq" in transport.value()
    connection.relay.behind = "the central server central-a holds 9 records of this journal"  # type: ignore[attr-defined]
    answer_last_box(connection, transport, version=b"2", central_id=b"central-a", hall_journal_seq=b"9",
                    hall_journal_hash=b"b" * 64)
    assert transport.disconnecting


@pytest.mark.req("R92.6")
def test_r92_6_a_central_server_process_silent_for_ten_seconds_is_cut_off() -> None:
    connection, transport, clock = linked()
    clock.advance(link.HEARTBEAT_S)
    assert b"hello" in transport.value()
    clock.pump([link.HEARTBEAT_S] * int(link.SILENCE_S / link.HEARTBEAT_S - 1))
    assert not transport.disconnecting
    clock.advance(link.HEARTBEAT_S)
    assert transport.disconnecting and transport.disconnected  # aborted: a frozen peer reads nothing


@pytest.mark.req("R92.6")
def test_r92_6_a_heartbeat_refused_with_standby_closes_the_link() -> None:
    connection, transport, clock = linked()
    clock.advance(link.HEARTBEAT_S)
    boxes = amp.parse(io.BytesIO(transport.value()))
    refusal = amp.AmpBox(_error=boxes[-1][b"_ask"], _error_code=b"standby",
                         _error_description=b"central-a here is the standby process")
    connection.dataReceived(refusal.serialize())
    assert transport.disconnecting


@pytest.mark.req("R92.6")
def test_r92_6_the_administrators_console_says_which_process_the_hall_is_linked_to() -> None:
    from hall_server.web.view import HallView

    ring = EndpointRing([(Endpoint("a", 1, "a"), FakeEndpoint("a", [])), (Endpoint("b", 2, "b"), FakeEndpoint("b", []))])
    service = link.CentralLinkService(FakeRelay(), ring, None, clock=task.Clock())  # type: ignore[arg-type]
    told: list[str] = []
    service.listeners.append(lambda: told.append(service.console_status()["line"]))
    assert service.console_status() == {"up": False, "line": "Central server (a:1, b:2): not linked yet", "said": {
        "message": "Central server ({ring}): not linked yet", "parts": {"ring": "a:1, b:2"}}}
    service.linked(Endpoint("b", 2, "b"), {"version": 1, "central_id": "central-a", "node": "node1", "epoch": 4})
    service.link_changed(False)
    service.linked(Endpoint("a", 1, "a"), {"version": 1, "central_id": "central-a", "node": "node0", "epoch": 5})
    assert told == [
        "Central server central-a: linked at b:2, the process beside node1, epoch 4",
        "Central server central-a: link lost (last at b:2, the process beside node1, epoch 4); trying again",
        "Central server central-a: linked at a:1, the process beside node0, epoch 5",
    ]
    view = HallView("Sala")
    view.central_source = service.console_status
    assert view.console()["central"]["line"] == told[-1] and view.console()["central"]["up"] is True
    assert "central" not in view.board()  # the players' board does not show it

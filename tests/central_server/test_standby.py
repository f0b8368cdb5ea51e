"""A replicated central server's standby at the endpoint (R92.6): every command refused with ``standby``.

The endpoint of a real central server (mutual TLS, AMP) with its process set to the
standby's role, as :mod:`central_server.replica` sets it: a hall's ``hello`` and an
operator's command are refused with ``standby``, the connection closes, and nothing
reaches the journal (a standby writes none).  The active process's ``hello`` answer
names its node and its epoch.
"""

from __future__ import annotations

import pytest
import pytest_twisted
from twisted.internet import reactor

from central_server.operator import CentralAddress, OperatorRefused, send
from protocol import central_messages as m
from server_kit.amp.commands import error_class
from tests.central_server.conftest import Running
from tests.central_server.support import OPERATOR

pytestmark = [pytest.mark.integration]


@pytest.mark.req("R92.6")
@pytest_twisted.ensureDeferred
async def test_r92_6_a_standby_refuses_hello_with_standby_closes_and_journals_nothing(central: Running) -> None:
    """The hall is told to try the other endpoint; the refusal is not put on file (a standby writes nothing)."""
    central.server.endpoint.acting = lambda: False
    before = central.journal_length()
    client = await central.hall("hall-1", hello=False)
    with pytest.raises(error_class("standby"), match="standby process of a replicated central server"):
        await client.hello("hall-1")
    await client.lost
    assert central.journal_length() == before
    assert m.ERRORS["standby"].fatal and "standby" in m.HELLO.errors
    assert all("standby" in message.errors for message in m.MESSAGES.values() if message.sender == "hall")


@pytest.mark.req("R92.6")
@pytest_twisted.ensureDeferred
async def test_r92_6_a_process_that_stops_acting_refuses_the_next_command_with_standby(central: Running) -> None:
    """A hall linked to the active process that then loses its lease is refused (and cut) at its next command."""
    client = await central.hall("hall-1")
    await central.open_sale()
    central.server.endpoint.acting = lambda: False
    before = central.journal_length()
    with pytest.raises(error_class("standby")):
        await client.buy("r1")
    await client.lost
    assert central.journal_length() == before and central.game.decision_count == 0


@pytest.mark.req("R92.6")
@pytest_twisted.ensureDeferred
async def test_r92_6_the_operator_is_refused_standby_by_the_standby(central: Running) -> None:
    central.server.endpoint.acting = lambda: False
    before = central.journal_length()
    with pytest.raises(OperatorRefused) as refused:
        await send(reactor, CentralAddress("localhost", central.port), central.pki_dir, OPERATOR, "operator_games",
                   {"after": 0})
    assert refused.value.code == "standby" and central.journal_length() == before


@pytest.mark.req("R92.6")
@pytest_twisted.ensureDeferred
async def test_r92_6_the_active_process_names_its_node_and_epoch_in_hello(central: Running) -> None:
    central.server.endpoint.identity = lambda: {"node": "node1", "epoch": central.server.core.epoch}
    client = await central.hall("hall-1", hello=False)
    assert await client.hello("hall-1") == {"version": 2, "central_id": "central-a", "node": "node1", "epoch": 1}

"""The server kit's AMP helpers over a real loopback TCP connection (R92.5c)."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet import defer, reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint, connectProtocol
from twisted.internet.error import ConnectionDone
from twisted.protocols import amp

from protocol import central_messages as m
from server_kit.amp.chunks import PIECE_BYTES, Chunked, ChunkError
from server_kit.amp.commands import CommandFailed, amp_command, amp_commands, error_class

pytestmark = [pytest.mark.integration]


class Echo(amp.Command):
    commandName = b"echo"
    arguments = [(b"blob", Chunked(1_000_000)), (b"note", Chunked(200_000, text=True, optional=True))]
    response = [(b"blob", Chunked(1_000_000)), (b"length", amp.Integer())]


class Small(amp.Command):
    """The receiver takes at most 100 kB; the sender's declaration allows more."""

    commandName = b"small"
    arguments = [(b"blob", Chunked(100_000))]
    response = [(b"length", amp.Integer())]


class SenderSmall(amp.Command):
    commandName = b"small"
    arguments = [(b"blob", Chunked(10_000_000))]
    response = [(b"length", amp.Integer())]


GET_GAME = amp_command(m.GET_GAME)


class Peer(amp.AMP):
    def __init__(self) -> None:
        super().__init__()
        self.small_calls = 0

    @Echo.responder
    def echo(self, blob: bytes, note: str | None) -> dict[str, Any]:
        return {"blob": blob[::-1], "length": len(blob) + len(note or "")}

    @Small.responder
    def small(self, blob: bytes) -> dict[str, Any]:
        self.small_calls += 1
        return {"length": len(blob)}

    @GET_GAME.responder
    def get_game(self, **arguments: Any) -> dict[str, Any]:
        raise error_class("unknown_game")(f"there is no network game {arguments['game_id']}")


@pytest_twisted.async_yield_fixture
async def link():  # type: ignore[no-untyped-def]
    server = Peer()
    port = await TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(_Factory(server))
    client = await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port), amp.AMP())
    yield server, client
    client.transport.loseConnection()
    await defer.maybeDeferred(port.stopListening)


class _Factory:
    """One server protocol for the one test connection."""

    def __init__(self, protocol: amp.AMP) -> None:
        self.protocol = protocol

    def doStart(self) -> None: ...

    def doStop(self) -> None: ...

    def buildProtocol(self, address: Any) -> amp.AMP:
        return self.protocol


@pytest_twisted.ensureDeferred
async def test_a_value_of_several_times_the_amp_cap_crosses_whole(link) -> None:  # type: ignore[no-untyped-def]
    server, client = link
    blob = bytes(range(256)) * 3000  # 768,000 bytes: twelve pieces
    answer = await client.callRemote(Echo, blob=blob, note="é" * 70_000)
    assert answer["blob"] == blob[::-1]
    assert answer["length"] == len(blob) + 70_000
    assert len(blob) > 11 * PIECE_BYTES


@pytest_twisted.ensureDeferred
async def test_an_empty_value_and_a_value_of_exactly_one_piece_cross(link) -> None:  # type: ignore[no-untyped-def]
    _, client = link
    for blob in (b"", b"x" * PIECE_BYTES, b"y" * (PIECE_BYTES + 1)):
        assert (await client.callRemote(Echo, blob=blob, note=None))["blob"] == blob[::-1]


def test_the_sender_refuses_a_value_over_its_bound_before_sending() -> None:
    box: dict[bytes, bytes] = {}
    with pytest.raises(ChunkError, match="at most 100000 may be sent"):
        Chunked(100_000).toBox(b"blob", box, {"blob": b"z" * 100_001}, None)
    assert box == {}


@pytest_twisted.ensureDeferred
async def test_the_receiver_refuses_more_pieces_than_its_bound_runs_nothing_and_drops_the_peer(link) -> None:  # type: ignore[no-untyped-def]
    """A peer that sends more than the command allows breaks the protocol: refused, then dropped."""
    server, client = link
    assert (await client.callRemote(Small, blob=b"ok"))["length"] == 2
    with pytest.raises(amp.UnknownRemoteError):
        await client.callRemote(SenderSmall, blob=b"q" * 300_000)
    assert server.small_calls == 1
    with pytest.raises(ConnectionDone):
        await client.callRemote(Small, blob=b"again")
    assert server.small_calls == 1


@pytest.mark.parametrize(
    "box, reason",
    [
        ({b"blob": b"two", b"blob.0": b"a"}, "not a number"),
        ({b"blob": b"2", b"blob.0": b"a"}, "piece 1 of 2 is missing"),
        ({b"blob": b"0"}, "comes in 0 pieces"),
        ({}, "is missing"),
    ],
)
def test_a_malformed_chunked_value_is_refused_with_the_reason(box: dict[bytes, bytes], reason: str) -> None:
    objects: dict[str, Any] = {}
    with pytest.raises(ChunkError, match=reason):
        Chunked(100_000).fromBox(b"blob", box, objects, None)
    assert objects == {}


def test_every_declared_message_becomes_an_amp_command_with_its_errors() -> None:
    commands = amp_commands(m.MESSAGES)
    assert set(commands) == set(m.MESSAGES)
    for name, command in commands.items():
        message = m.MESSAGES[name]
        assert command.commandName == name.encode()
        assert [a for a, _ in command.arguments] == [f.name.encode() for f in message.arguments]
        assert [a for a, _ in command.response] == [f.name.encode() for f in message.answer]
        codes = {**command.errors, **command.fatalErrors}
        assert sorted(c.decode() for c in codes.values()) == sorted(message.errors)
        for error, code in codes.items():
            assert error.code == code.decode() and issubclass(error, CommandFailed)


@pytest_twisted.ensureDeferred
async def test_an_error_code_travels_as_its_own_class_with_the_message(link) -> None:  # type: ignore[no-untyped-def]
    _, client = link
    arguments = {f.name: _sample(f) for f in m.GET_GAME.arguments if not f.optional}
    with pytest.raises(error_class("unknown_game"), match="there is no network game G-1") as raised:
        await client.callRemote(GET_GAME, **arguments)
    assert raised.value.code == "unknown_game"


def _sample(field: m.Field) -> Any:
    if isinstance(field.type, m.Whole):
        return field.type.low
    if isinstance(field.type, m.Choice):
        return field.type.values[0]
    if isinstance(field.type, m.Flag):
        return False
    if isinstance(field.type, (m.WholeList, m.Items)):
        return []
    return "G-1"

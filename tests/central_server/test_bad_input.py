"""Bad input on the communications endpoint (R92.5c, R92.7): refused with a code, nothing changed.

Each case runs against a central server with an open sale and one purchase decided.
"Nothing changed" is checked on the game (its events, decisions, phase) and on the
journal: a peer refused at the TLS handshake or for its certificate's role adds
nothing; a refused command of an authenticated hall adds exactly one
``central_command_refused`` record naming the peer, the command and the code.
"""

from __future__ import annotations

from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
import pytest_twisted
from OpenSSL.SSL import Error as SSLError
from twisted.internet import defer, reactor
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
from twisted.internet.error import ConnectionDone, ConnectionLost
from twisted.internet.ssl import Certificate, optionsForClientTLS
from twisted.protocols import amp

from central_server.edge import MAX_BOX_BYTES
from central_server.module import REFUSED
from server_kit.amp.commands import error_class
from server_kit.pki import PkiFolder, init_authority, issue_certificate
from tests.central_server.conftest import Running
from tests.central_server.support import HallClient, connect, until

pytestmark = [pytest.mark.integration]
CLOSED = (ConnectionDone, ConnectionLost)


@pytest_twisted.async_yield_fixture
async def selling(central: Running) -> Any:
    """The sale open and one purchase decided: the state every case must leave as it is."""
    client = await central.hall("hall-1")
    await central.open_sale()
    first = await client.buy("r1", count=2)
    assert first["status"] == "confirmed"
    yield central


def snapshot(central: Running) -> tuple[Any, ...]:
    game = central.game
    return (len(game.events), game.decision_count, str(game.phase), game.next_card, central.journal_length())


def refusals(central: Running) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.payload.items() if k != "actor"} for r in central.records(REFUSED)]


def unchanged_but_one_refusal(central: Running, before: tuple[Any, ...], peer: str, command: str, code: str) -> None:
    after = snapshot(central)
    assert after[:-1] == before[:-1], "the game changed"
    assert after[-1] == before[-1] + 1, "the refusal is the only new record"
    last = refusals(central)[-1]
    assert (last["peer"], last["command"], last["code"]) == (peer, command, code)


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_a_terminal_certificate_is_refused_at_connect_and_nothing_is_journaled(selling: Running) -> None:
    """A certificate of the operator's authority for another role is cut off before any command."""
    before = snapshot(selling)
    client = await connect(selling.port, selling.pki_dir, "term-1")
    with pytest.raises(CLOSED):
        await client.hello("hall-1")
    assert snapshot(selling) == before and refusals(selling) == []


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_a_certificate_of_another_authority_fails_the_handshake(selling: Running, tmp_path: Any) -> None:
    other = PkiFolder(tmp_path / "other-ca")
    init_authority(other.root, "Someone Else")
    issue_certificate(other.root, "server", "hall-1")
    own = {"certificate": x509.load_pem_x509_certificate(other.cert("hall-1").read_bytes()),
           "privateKey": serialization.load_pem_private_key(other.key("hall-1").read_bytes(), password=None)}
    ours = Certificate.loadPEM(PkiFolder(selling.pki_dir).ca_cert.read_bytes())  # it trusts our central server
    options = optionsForClientTLS("localhost", trustRoot=ours, extraCertificateOptions=own)
    before = snapshot(selling)
    client = await connectProtocol(SSL4ClientEndpoint(reactor, "127.0.0.1", selling.port, options), HallClient())
    with pytest.raises((*CLOSED, SSLError)):
        await client.hello("hall-1")
    assert snapshot(selling) == before


@pytest_twisted.ensureDeferred
async def test_hello_agrees_the_version_and_a_hall_sharing_none_is_refused_and_closed(selling: Running) -> None:
    client = await selling.hall("hall-1", hello=False)
    assert await client.hello("hall-1") == {"version": 2, "central_id": "central-a"}
    before = snapshot(selling)
    older = await selling.hall("hall-2", hello=False)
    with pytest.raises(error_class("version_unsupported")):
        await older.call("hello", hall_id="hall-2", versions=[1], software="bingo-hall 0.1.0")
    await older.lost
    unchanged_but_one_refusal(selling, before, "hall-2", "hello", "version_unsupported")


@pytest_twisted.ensureDeferred
async def test_a_command_before_hello_is_refused_not_negotiated_and_closes(selling: Running) -> None:
    before = snapshot(selling)
    client = await selling.hall("hall-1", hello=False)
    with pytest.raises(error_class("not_negotiated")):
        await client.buy("r2", count=1)
    await client.lost
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards", "not_negotiated")


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_a_hall_that_is_not_a_member_is_refused_at_hello(selling: Running) -> None:
    before = snapshot(selling)
    client = await selling.hall("hall-9", hello=False)
    with pytest.raises(error_class("unknown_hall"), match="not a member"):
        await client.hello("hall-9")
    await client.lost
    unchanged_but_one_refusal(selling, before, "hall-9", "hello", "unknown_hall")


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_a_hall_saying_hello_as_another_hall_is_refused(selling: Running) -> None:
    before = snapshot(selling)
    client = await selling.hall("hall-1", hello=False)
    with pytest.raises(error_class("hall_mismatch")):
        await client.hello("hall-2")
    unchanged_but_one_refusal(selling, before, "hall-1", "hello", "hall_mismatch")


@pytest.mark.req("R93.6")
@pytest_twisted.ensureDeferred
async def test_a_hall_speaking_for_another_halls_terminal_is_refused_and_cut_off(selling: Running) -> None:
    before = snapshot(selling)
    client = await selling.hall("hall-1")
    with pytest.raises(error_class("hall_mismatch"), match="hall-1"):
        await client.buy("r9", hall="hall-2", terminal="K3", count=1)
    await client.lost
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards", "hall_mismatch")


@pytest_twisted.ensureDeferred
async def test_an_unknown_command_is_unhandled_and_changes_nothing(selling: Running) -> None:
    class StealCards(amp.Command):
        commandName = b"steal_cards"
        arguments = [(b"game_id", amp.Unicode())]
        response: list[Any] = []

    before = snapshot(selling)
    client = await selling.hall("hall-1")
    with pytest.raises(amp.UnhandledCommand):
        await client.callRemote(StealCards, game_id="net-1")
    # The link stays usable: AMP refused the command itself.
    assert (await client.get_game())["phase"] == "selling"
    assert snapshot(selling) == before


@pytest.mark.req("R93.6")
@pytest_twisted.ensureDeferred
async def test_a_request_id_replayed_with_other_arguments_is_refused_and_the_first_stands(selling: Running) -> None:
    client = await selling.hall("hall-1")
    first = await client.buy("r1", count=2)  # the fixture's purchase, resent: its first answer
    before = snapshot(selling)
    with pytest.raises(error_class("request_id_reused"), match="the first one stands"):
        await client.buy("r1", count=5)
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards", "request_id_reused")
    assert await client.buy("r1", count=2) == first  # not fatal: the link goes on


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"player": "p" * 65}, "player_ref"),
        ({"player": "x" * 60_000}, "player_ref"),
        ({"terminal": "T/1"}, "terminal_id"),
        ({"count": 97}, "card_count"),
        ({"pct": 0}, "stake_pct"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_value_out_of_its_bounds_is_refused_bad_argument_naming_the_field(
    selling: Running, changes: dict[str, Any], field: str
) -> None:
    client = await selling.hall("hall-1")
    before = snapshot(selling)
    with pytest.raises(error_class("bad_argument"), match=field):
        await client.buy("r3", **changes)
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards", "bad_argument")


@pytest_twisted.ensureDeferred
async def test_a_reason_longer_than_its_bound_is_refused_and_the_terminal_is_not_failed(selling: Running) -> None:
    client = await selling.hall("hall-1")
    before = snapshot(selling)
    with pytest.raises(error_class("bad_argument"), match="reason"):
        await client.call("terminal_failed", request_id="f1", game_id="net-1", hall_id="hall-1", terminal_id="T1",
                          reason="r" * 201, declared_by="room chief")
    unchanged_but_one_refusal(selling, before, "hall-1", "terminal_failed", "bad_argument")
    assert selling.game.failed_terminals == {}


@pytest_twisted.ensureDeferred
async def test_a_box_over_its_bound_cuts_the_connection_while_it_is_read(selling: Running) -> None:
    """Bounded while read: the box is dropped before it is put together, and nothing reaches the journal."""

    class Flood(amp.Command):
        commandName = b"buy_cards"
        arguments = [(f"pad{k}".encode(), amp.Unicode()) for k in range(MAX_BOX_BYTES // 60_000 + 2)]
        response: list[Any] = []

    client = await selling.hall("hall-1")
    before = snapshot(selling)
    with pytest.raises(CLOSED):
        await client.callRemote(Flood, **{f"pad{k}": "z" * 60_000 for k in range(MAX_BOX_BYTES // 60_000 + 2)})
    assert snapshot(selling) == before


@pytest_twisted.ensureDeferred
async def test_an_unknown_game_is_refused_with_its_code(selling: Running) -> None:
    client = await selling.hall("hall-1")
    before = snapshot(selling)
    with pytest.raises(error_class("unknown_game")):
        await client.buy("r4", game="net-404")
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards", "unknown_game")


@pytest_twisted.ensureDeferred
async def test_one_hall_failing_to_take_a_push_does_not_stop_the_others(selling: Running) -> None:
    """Each send is isolated: a hall whose link breaks mid-push costs the other halls nothing."""
    one = await selling.hall("hall-1")
    two = await selling.hall("hall-2")
    broken = selling.server.endpoint.links["hall-1"]

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the link broke")

    broken.callRemote = fails  # type: ignore[method-assign]
    await selling.close_sale()
    await until(lambda: two.pushed("sale_closed"), "sale_closed at hall-2")
    assert one.pushed("sale_closed") == []


def _purchase(request: str, **changes: Any) -> dict[str, Any]:
    return {"request_id": request, "game_id": "net-1", "hall_id": "hall-1", "terminal_id": "T2", "player_ref": "p2",
            "card_count": 1, "stake_pct": 100, **changes}


@pytest.mark.req("R93.6")
@pytest_twisted.ensureDeferred
async def test_a_batch_is_decided_purchase_by_purchase_in_its_order_and_a_bad_one_fails_alone(selling: Running) -> None:
    """buy_cards_batch: each purchase decided on its own; one a hall may not make is refused with its code, on file."""
    client = await selling.hall("hall-1")
    resend_of_r1 = _purchase("r1", card_count=2, terminal_id="T1", player_ref="p1")
    answer = await client.call("buy_cards_batch", purchases=[
        _purchase("b1"), _purchase("b2", hall_id="hall-2"), _purchase("b3", card_count=2), resend_of_r1,
    ])
    first, mismatch, third, resent = answer["answers"]
    assert (first["status"], first["first_card"], third["status"], third["first_card"]) == ("confirmed", 3, "confirmed", 4)
    assert len(first["cells"]) == 27 and len(third["cells"]) == 54
    assert (mismatch["request_id"], mismatch["error_code"]) == ("b2", "hall_mismatch") and mismatch["status"] is None
    assert resent["decision"] == 1 and resent["first_card"] == 1  # r1 was decided before: its first answer again
    last = refusals(selling)[-1]
    assert (last["peer"], last["command"], last["code"]) == ("hall-1", "buy_cards", "hall_mismatch")
    assert [d.request_id for d in selling.game.purchases] == ["r1", "b1", "b3"]


@pytest.mark.req("R93.6")
@pytest.mark.parametrize("purchases", [[], [_purchase(f"x{n}") for n in range(13)], [_purchase("y1", card_count=0)]],
                         ids=["empty", "thirteen", "no-cards"])
@pytest_twisted.ensureDeferred
async def test_a_batch_that_breaks_the_schema_is_refused_whole_and_nothing_is_decided(
    selling: Running, purchases: list[dict[str, Any]],
) -> None:
    client = await selling.hall("hall-1")
    before = snapshot(selling)
    with pytest.raises(error_class("bad_argument")):
        await client.call("buy_cards_batch", purchases=purchases)
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards_batch", "bad_argument")


@pytest_twisted.ensureDeferred
async def test_N14_an_over_size_batch_is_refused_before_its_purchases_are_read(selling: Running) -> None:
    """A batch of 100 purchases (the most is 12) is counted on its bytes and refused unread: nothing decided."""
    client = await selling.hall("hall-1")
    before = snapshot(selling)
    with pytest.raises(error_class("bad_argument")) as refused:
        await client.call("buy_cards_batch", purchases=[_purchase(f"z{n}") for n in range(100)])
    assert "a batch holds 1 to 12 purchases; this one holds more, and none of them was read" in str(refused.value)
    unchanged_but_one_refusal(selling, before, "hall-1", "buy_cards_batch", "bad_argument")


@pytest_twisted.ensureDeferred
async def test_N14_a_hall_refused_300_times_costs_the_journal_20_records_and_one_count(selling: Running) -> None:
    """Past the first 20 refusals of a hall in a minute, refusals are counted, not journaled one by one;
    the count is journaled once when the minute ends, saying how many of what."""
    from central_server.domain.refusals import IN_FULL, INTERVAL_MS
    from protocol.records.central import CentralRefusalsCounted

    client = await selling.hall("hall-2")
    before = selling.journal_length()
    answers = await defer.DeferredList(
        [client.call("get_game", game_id="net-404", hall_id="hall-2") for _ in range(300)], consumeErrors=True)
    assert all(not ok and failure.check(error_class("unknown_game")) for ok, failure in answers)
    assert selling.journal_length() - before == IN_FULL
    assert selling.records(CentralRefusalsCounted.type) == []
    selling.clock.advance(INTERVAL_MS / 1000 + 1)
    await until(lambda: selling.records(CentralRefusalsCounted.type), "the count of the refusals to be journaled")
    (counted,) = selling.records(CentralRefusalsCounted.type)
    assert {k: v for k, v in counted.payload.items() if k not in ("actor", "epoch")} == {
        "peer": "hall-2", "role": "hall", "from_ms": counted.payload["from_ms"], "to_ms": counted.payload["to_ms"],
        "refused": 300 - IN_FULL, "by_code": {"get_game: unknown_game": 300 - IN_FULL},
        "shown": "there is no network game net-404"}
    # A fresh minute: the hall's next refusal is journaled in full again.
    with pytest.raises(error_class("unknown_game")):
        await client.call("get_game", game_id="net-405", hall_id="hall-2")
    assert refusals(selling)[-1]["message"] == "there is no network game net-405"

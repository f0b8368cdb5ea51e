"""The terminal gateway on fakes (no sockets, no reactor): a headless client wired to a
session; every bad message answered with an error, journaled, and nothing else changed
(R82.13-16, R83.7, R85.9, R92.8, R93.1, R93.8, R93.10, R96.3)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from twisted.internet import defer

from hall_server.hall.cashier import player_account
from hall_server.terminal_gateway.gateway import TerminalGateway, TerminalSession
from protocol.terminal_messages import GAMES, TERMINAL_MESSAGES, MessageError, OneOf, SequenceCheck, decode, encode
from terminals.client import TerminalClient, TerminalError, to_go
from tests.hall.conftest import result
from tests.terminals.conftest import CASHIER as CASHIER_ACTOR
from tests.terminals.conftest import CHIEF, SELLER, VirtualHall, layout

PIN = "4821"


class Wire:
    """A client and a session joined back to back, as a socket would join them."""

    def __init__(self, gateway: TerminalGateway, terminal: str, token: str) -> None:
        self.client = TerminalClient(terminal, token)
        self.closed = False
        self.session = TerminalSession(gateway, self.client.message_received, self._close)
        self.client.send = self.session.message_received

    def _close(self) -> None:
        self.closed = True

    def drop(self) -> None:
        self.session.connection_lost()


@pytest.fixture
def gateway(hall: VirtualHall) -> TerminalGateway:
    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        return defer.succeed(hall.cashier.verify_pin(number, pin))

    return TerminalGateway(hall.core, hall.games, hall.virtual, hall.cashier, hall.clock, check_pin, "Sala Test",
                           pins=hall.pins, responsible=hall.responsible, recall=hall.lookups.recall,
                           notices=(("Play for fun.", "Set a limit."), "Ask staff for help."))


def signed_in(hall: VirtualHall, gateway: TerminalGateway, terminal: str = "T1", credit: int = 1_000,
              document: str = "11111111A") -> tuple[Wire, str]:
    number = hall.player(document, credit, PIN)
    wire = Wire(gateway, terminal, hall.terminal(terminal))
    result(wire.client.hello())
    result(wire.client.sign_in(number, PIN))
    return wire, number


def journaled_refusal(hall: VirtualHall, before: int, match: str) -> None:
    """Exactly one record was written since ``before``: the refusal, naming the reason."""
    records = hall.records()[before:]
    assert [r.type for r in records] == ["terminal_request_refused"], [r.type for r in records]
    assert match in records[0].payload["reason"]


# --- The wire format ---------------------------------------------------------------------------


LEFT_OUT = object()


def buy_frame(**fields: Any) -> str:
    """A ``buy`` in the hall's own game, with ``fields`` changed (:data:`LEFT_OUT`: left out)."""
    message = {"v": 1, "seq": 1, "type": "buy", "game": "hall", "game_id": "", "account": "x", "quantity": 1,
               "stake_pct": 100, "request": "r"}
    message.update(fields)
    return json.dumps({name: value for name, value in message.items() if value is not LEFT_OUT})


@pytest.mark.parametrize("text, code", [
    ("not json", "malformed"),
    ("[1, 2]", "malformed"),
    ('{"v": 2, "seq": 1, "type": "sync"}', "version"),
    ('{"v": true, "seq": 1, "type": "sync"}', "version"),
    ('{"v": 1, "seq": 0, "type": "sync"}', "schema"),
    ('{"v": 1, "seq": 1, "type": "dance"}', "schema"),
    (buy_frame(stake_pct=LEFT_OUT), "schema"),
    (buy_frame(request=LEFT_OUT), "schema"),
    (buy_frame(game=LEFT_OUT), "schema"),
    (buy_frame(price=1), "schema"),
    (buy_frame(quantity=True), "schema"),
    (buy_frame(quantity=2.0), "schema"),
    (buy_frame(quantity=97), "schema"),
    (buy_frame(request="a b"), "schema"),
    (buy_frame(game_id="g" * 65, game="network"), "schema"),
    ('{"v": 1, "seq": 1, "type": "hello", "terminal": "", "token": "t"}', "schema"),
    ('{"v": 1, "seq": 1, "type": "net_buy", "game_id": "net-1", "account": "x", "quantity": 1, "stake_pct": 100, '
     '"request": "r"}', "schema"),  # one "buy" serves every game
])
def test_the_schema_refuses_what_it_does_not_describe(text: str, code: str) -> None:
    with pytest.raises(MessageError) as refused:
        decode(text)
    assert refused.value.code == code


@pytest.mark.parametrize("game", ["lottery", "Hall", "", 1, True, None, ["hall"]])
def test_a_purchase_names_its_game_with_one_of_the_words_the_protocol_knows(game: object) -> None:
    with pytest.raises(MessageError, match="game is one of hall, network, joint, not ") as refused:
        decode(buy_frame(game=game))
    assert refused.value.code == "schema"
    assert OneOf(GAMES).check("game", "joint") is None


@pytest.mark.parametrize("game, game_id, refusal", [
    ("hall", "g-7", "a purchase in the hall's own game names no game_id: its cards are of the game on sale"),
    ("network", "", "a purchase in a network game names its game_id"),
    ("joint", "", "a purchase in a joint game names its game_id"),
])
def test_a_purchase_names_a_game_id_for_a_network_or_joint_game_and_none_for_the_hall_s_own(
    game: str, game_id: str, refusal: str
) -> None:
    with pytest.raises(MessageError, match=re.escape(refusal)) as refused:
        decode(buy_frame(game=game, game_id=game_id))
    assert refused.value.code == "schema"
    with pytest.raises(MessageError, match=re.escape(refusal)):  # the headless client cannot send it either
        TerminalClient("T1", "token").buy(1, account="x", game=game, game_id=game_id)
    assert decode(buy_frame(game=game, game_id="" if game == "hall" else "g-7"))["game"] == game


def test_messages_round_trip_and_sequences_refuse_replays_and_gaps() -> None:
    text = encode(3, "buy", TERMINAL_MESSAGES, game="network", game_id="net-1", account="1234", quantity=6,
                  stake_pct=50, request="K1-7")
    assert json.loads(text) == {"v": 1, "seq": 3, "type": "buy", "game": "network", "game_id": "net-1",
                                "account": "1234", "quantity": 6, "stake_pct": 50, "request": "K1-7"}
    assert decode(text)["quantity"] == 6
    check = SequenceCheck()
    check.accept(1)
    for seq, code in ((1, "replayed"), (3, "gap")):
        with pytest.raises(MessageError) as refused:
            check.accept(seq)
        assert refused.value.code == code
    check.accept(2)
    with pytest.raises(MessageError, match="credit_cents is a whole number"):
        encode(1, "credit", credit_cents=1.5, reason="")


# --- Sessions -------------------------------------------------------------------------------------


@pytest.mark.req("R92.8", "R93.1")
def test_a_terminal_says_hello_signs_in_and_sees_its_credit_and_the_sale_time(hall: VirtualHall, gateway: TerminalGateway) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 120))
    wire, number = signed_in(hall, gateway)
    client = wire.client
    assert client.credit_cents == 1_000 and client.player["credit_cents"] == 1_000
    assert client.game["sale"]["closes_at_ms"] == hall.core.now_ms() + 120_000
    assert client.game["price_cents"] == 100 and client.game["series"] == "V1"


@pytest.mark.req("R83.7", "R92.8")
def test_one_account_plays_at_one_terminal_a_new_sign_in_signs_out_the_other(
    hall: VirtualHall, gateway: TerminalGateway
) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    first, number = signed_in(hall, gateway, "T1")
    second = Wire(gateway, "T2", hall.terminal("T2"))
    result(second.client.hello())
    result(second.client.sign_in(number, PIN))
    assert first.client.player is None and first.client.errors[-1]["code"] == "signed_in_elsewhere"
    assert "signed in on terminal T2" in first.client.errors[-1]["message"]
    assert [s.terminal_id for s in gateway._signed_in(player_account(number))] == ["T2"]
    with pytest.raises(Exception, match="sign in"):
        result(first.client.buy(1, account=number))
    assert result(second.client.buy(1))["credit_cents"] == 900


@pytest.mark.req("R82.13-16", "R93.6", "R93.10", "R85.9", "R92.8")
def test_a_player_buys_watches_the_cards_mark_themselves_wins_the_line_and_sees_the_credit_rise(
    hall: VirtualHall, gateway: TerminalGateway
) -> None:
    row = [int(n) for n in layout(1).reshape(3, 9)[0] if n]
    hall.balls.put_first(row)
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    wire, number = signed_in(hall, gateway)
    watcher = Wire(gateway, "T2", hall.terminal("T2"))
    result(watcher.client.hello())
    bought = result(wire.client.buy(2))
    assert [c["card"] for c in bought["cards"]] == ["V1-1", "V1-2"] and bought["credit_cents"] == 800
    assert wire.client.cards[0]["code"] and wire.client.cards[0]["price_cents"] == 100
    result(hall.games.close_sale(CHIEF))
    assert wire.client.game["prizes"]["line"] > 0 and wire.client.game["cards_sold"] == 2
    for _ in range(5):
        result(hall.games.draw_ball(SELLER))
    assert wire.client.drawn == row == watcher.client.drawn
    assert to_go(wire.client.cards[0]["cells"], set(row)) == (0, 10)
    assert wire.client.progress()[0][0] == "V1-1"
    assert wire.client.game["won"] == {"line": 5}
    assert wire.client.game["state"] == "line_found"  # "Line! Another card?" (R85.6)
    result(hall.games.close_prize(SELLER))  # no other card: the line is settled and credited
    (won,) = wire.client.won
    assert won["card"] == "V1-1" and won["prize"] == "line" and won["cents"] > 0
    assert wire.client.credit_cents == 800 + won["cents"] == hall.balance(number)
    assert watcher.client.won == []


@pytest.mark.req("R86.3")
def test_R86_3_a_player_who_leaves_is_not_refunded_and_the_cards_play_on_to_their_prize(
    hall: VirtualHall, gateway: TerminalGateway
) -> None:
    """The player buys two cards and leaves before the draw: no refund is written and the
    account keeps what it held after the purchase; the cards stay in the game, and the line the
    first one wins is credited to the account the player left."""
    row = [int(n) for n in layout(1).reshape(3, 9)[0] if n]
    hall.balls.put_first(row)
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    wire, number = signed_in(hall, gateway)
    assert result(wire.client.buy(2))["credit_cents"] == 800
    wire.drop()  # the player walks away from the terminal: its connection ends, signing them out
    assert not gateway._signed_in(player_account(number))
    result(hall.games.close_sale(CHIEF))
    assert hall.balance(number) == 800
    assert len(hall.games.current.machine.in_play) == 2
    for _ in range(5):
        result(hall.games.draw_ball(SELLER))
    result(hall.games.close_prize(SELLER))
    types = [r.type for r in hall.records()]
    assert not any("refund" in t for t in types), types
    (won,) = [r.payload for r in hall.records() if r.type == "prize_paid" and r.payload["prize"] == "line"]
    ((card, line),) = won["payments"]
    assert card.endswith("-1") and line > 0 and hall.balance(number) == 800 + line


@pytest.mark.req("R82.13-16", "R82.3")
def test_unenrolled_and_revoked_terminals_are_refused_and_hung_up_on_and_nothing_is_journaled(
    hall: VirtualHall, gateway: TerminalGateway
) -> None:
    before = len(hall.records())
    stranger = Wire(gateway, "T9", "guessed")
    with pytest.raises(TerminalError, match="not enrolled"):
        result(stranger.client.hello())
    assert stranger.closed and "T9" not in gateway.sessions
    token = hall.terminal("T1")
    result(hall.virtual.revoke_terminal(CHIEF, "T1", "stolen"))
    before = len(hall.records())
    revoked = Wire(gateway, "T1", token)
    with pytest.raises(TerminalError, match="revoked"):
        result(revoked.client.hello())
    assert revoked.closed and len(hall.records()) == before  # nobody yet: counted, not journaled


def test_revoking_a_connected_terminal_ends_its_connection(hall: VirtualHall, gateway: TerminalGateway) -> None:
    wire, _ = signed_in(hall, gateway)
    result(hall.virtual.revoke_terminal(CHIEF, "T1", "stolen"))
    assert wire.closed and wire.client.errors[-1]["code"] == "not_enrolled"


@pytest.mark.parametrize("frame, code", [
    ('{"v": 1, "seq": 3, "type": "buy", "game": "hall", "game_id": "", "account": "x", "quantity": "six", '
     '"stake_pct": 100, "request": "r"}', "schema"),
    ('{"v": 1, "seq": 3, "type": "buy", "game": "bingo", "game_id": "", "account": "x", "quantity": 1, '
     '"stake_pct": 100, "request": "r"}', "schema"),
    ('{"v": 1, "seq": 2, "type": "sync"}', "replayed"),
    ('{"v": 1, "seq": 9, "type": "sync"}', "gap"),
    ("{", "malformed"),
])
def test_bad_frames_get_an_error_a_journal_entry_and_change_nothing(
    hall: VirtualHall, gateway: TerminalGateway, frame: str, code: str
) -> None:
    wire, number = signed_in(hall, gateway)
    before = len(hall.records())
    wire.client.send_raw(frame)
    assert wire.client.errors[-1]["code"] == code
    journaled_refusal(hall, before, code)
    assert hall.balance(number) == 1_000
    assert wire.session.inbound.last == 2  # the refused frame did not move the count


def test_nothing_but_hello_is_heard_before_hello(hall: VirtualHall, gateway: TerminalGateway) -> None:
    wire = Wire(gateway, "T1", hall.terminal("T1"))
    before = len(hall.records())
    with pytest.raises(TerminalError, match="hello"):
        result(wire.client.sync())
    assert wire.closed and len(hall.records()) == before


def test_a_wrong_pin_is_refused_and_journaled_and_five_end_the_connection(hall: VirtualHall, gateway: TerminalGateway) -> None:
    number = hall.player("11111111A", 500, PIN)
    wire = Wire(gateway, "T1", hall.terminal("T1"))
    result(wire.client.hello())
    for attempt in range(4):
        before = len(hall.records())
        with pytest.raises(TerminalError, match="account number or the PIN is wrong"):
            result(wire.client.sign_in(number, "0000"))
        journaled_refusal(hall, before, "sign_in_refused")
    with pytest.raises(TerminalError, match="account number or the PIN is wrong"):
        result(wire.client.sign_in(number, "0000"))
    assert wire.closed and wire.client.player is None
    assert [r.type for r in hall.records()[-2:]] == ["pin_lockout", "terminal_request_refused"]


@pytest.mark.req("R93.8", "R93.2-4", "R83.7", "R82.13-16")
@pytest.mark.parametrize("case", ["after the window", "beyond credit", "beyond 96", "another account", "signed out"])
def test_refused_purchases_say_why_on_the_terminal_are_journaled_and_change_nothing(
    hall: VirtualHall, gateway: TerminalGateway, case: str
) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    wire, number = signed_in(hall, gateway, credit=50_000)
    other = hall.player("22222222B", 1_000, PIN)
    result(wire.client.buy(90))
    kwargs: dict[str, Any] = {"quantity": 1}
    expected = ""
    reason: tuple[str, dict[str, int]] = ("", {})  # what the kiosk says in the player's language
    if case == "after the window":
        hall.clock.advance(61)
        expected = "sale time for terminals is over"
        reason = ("sale_time", {})
    elif case == "beyond credit":
        kwargs = {"quantity": 6}
        result(hall.cashier.cash_out(CASHIER_ACTOR, number, hall.balance(number) - 300, "desk1", "cash", ""))
        expected = "your credit is 3.00 EUR"
        reason = ("credit_short", {"quantity": 6, "stake_cents": 100, "amount_cents": 600, "credit_cents": 300})
    elif case == "beyond 96":
        kwargs = {"quantity": 7}
        expected = "at most 96 cards"
        reason = ("cards_max", {"max": 96, "held": 90, "left": 6})
    elif case == "another account":
        kwargs = {"quantity": 1, "account": other}
        expected = "only for the account signed in"
    else:
        wire.client.send_raw(encode(wire.client.outbound + 1, "sign_out", TERMINAL_MESSAGES))
        wire.client.outbound += 1
        wire.client.player = {"account": number}
        expected = "sign in"
    credit, sold = hall.balance(number), dict(hall.games.current.machine.sales)
    before = len(hall.records())
    with pytest.raises(TerminalError, match=expected) as refused:
        result(wire.client.buy(**kwargs))
    assert (refused.value.reason, refused.value.params) == reason
    journaled_refusal(hall, before, expected)
    assert hall.balance(number) == credit and dict(hall.games.current.machine.sales) == sold


@pytest.mark.parametrize("game, refusal", [
    ("network", "this hall takes part in no network game"),
    ("joint", "this hall plays no hall-annex game"),
])
def test_a_purchase_in_a_kind_of_game_the_hall_does_not_play_is_refused_and_journaled(
    hall: VirtualHall, gateway: TerminalGateway, game: str, refusal: str
) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    wire, number = signed_in(hall, gateway)
    before = len(hall.records())
    with pytest.raises(TerminalError, match=refusal) as refused:
        result(wire.client.buy(1, game=game, game_id="g-1"))
    assert refused.value.code == "refused"
    journaled_refusal(hall, before, refusal)
    assert hall.balance(number) == 1_000


@pytest.mark.req("R92.8", "R96.3")
def test_a_terminal_that_reconnects_resyncs_its_whole_picture(hall: VirtualHall, gateway: TerminalGateway) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    wire, number = signed_in(hall, gateway)
    result(wire.client.buy(3))
    result(hall.games.close_sale(CHIEF))
    wire.drop()
    result(hall.games.draw_ball(SELLER))
    hall.clock.advance(10)
    back = Wire(gateway, "T1", "token-0")
    result(back.client.hello())
    result(back.client.sign_in(number, PIN))
    hall.clock.advance(60)
    assert [c["card"] for c in back.client.cards] == ["V1-1", "V1-2", "V1-3"]
    assert back.client.drawn == list(hall.games.current.machine.drawn) and len(back.client.drawn) == 1
    assert hall.balance(number) == 700  # a dropped connection is no refund


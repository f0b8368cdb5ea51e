"""The machine's protocol (bingo-vb-machine/1): the headless machine client against the hall's
machine session, wired message to message (no socket), on a real SQLite journal."""

from __future__ import annotations

import json
from typing import Any

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from hall_server.hall.pins import PinGuard
from hall_server.terminal_gateway.machines import MachineGateway, MachineSession
from server_kit.journal.sql import Journal
from terminals.vb_machine import MachineClient, MachineRefused
from tests.hall.conftest import result
from tests.videobingo.halls import CHIEF, Hall, build_hall, cash_device, config, player


@pytest.fixture
def hall(journal: Journal, clock: Clock) -> Hall:
    return build_hall(journal, clock, config())


@pytest.fixture
def gateway(hall: Hall) -> MachineGateway:
    pins = PinGuard(hall.core, hall.cashier)
    return MachineGateway(hall.vb, pins, lambda number, pin: defer.maybeDeferred(hall.cashier.verify_pin, number, pin),
                          Clock())


def wired(gateway: MachineGateway, token: str, station: int = 1) -> tuple[MachineClient, MachineSession]:
    client = MachineClient("vb-1", station, token)
    closed: list[bool] = []
    session = MachineSession(gateway, client.message_received, lambda: closed.append(True))
    client.send = session.message_received
    return client, session


def enrol(hall: Hall, station: int = 1) -> str:
    return str(result(hall.vb.enrol_station(CHIEF, "vb-1", station))["token"])


def test_a_station_says_hello_plays_and_is_shown_its_last_play_when_it_comes_back(hall: Hall, gateway: MachineGateway) -> None:
    token = enrol(hall)
    client, _ = wired(gateway, token)
    welcome = result(client.hello())
    assert welcome["state"] == "playing" and welcome["credit_cents"] == 0 and welcome["last_play"] is None
    assert welcome["paytable"]["cards_max"] == 4 and welcome["paytable"]["rtp_percent"] == "83.55"
    result(client.insert_cash(cash_device(hall, "vb-1").insert(1, 500)))
    shown = result(client.play(4))
    assert client.credit_cents == shown["credit_after_cents"] == hall.vb.credit("vb-1", 1)
    again, _ = wired(gateway, token)
    assert result(again.hello())["last_play"]["seq"] == shown["seq"]
    repeat = result(again.play(4, request=shown["request"]))
    assert repeat["repeated"] and repeat["seq"] == shown["seq"] and hall.vb.meters("vb-1").plays == 1
    assert [p["seq"] for p in result(again.recall())["plays"]] == [shown["seq"]]


@pytest.mark.req("R97.2")
def test_a_station_is_given_the_operators_warnings_and_help_page(hall: Hall) -> None:
    """R97.2: machines show the operator's warnings and a help page, as the kiosk does; a gateway
    given none (a test's) says none."""
    from hall_server.config import DEFAULT_HELP, DEFAULT_WARNINGS

    token = enrol(hall)
    pins = PinGuard(hall.core, hall.cashier)
    gateway = MachineGateway(hall.vb, pins, lambda number, pin: defer.succeed(False), Clock(),
                             notices=(DEFAULT_WARNINGS, DEFAULT_HELP))
    client, _ = wired(gateway, token)
    welcome = result(client.hello())
    assert welcome["warnings"] == list(DEFAULT_WARNINGS) and welcome["help"] == DEFAULT_HELP
    bare = MachineGateway(hall.vb, pins, lambda number, pin: defer.succeed(False), Clock())
    assert result(wired(bare, token)[0].hello())["warnings"] == []


def test_a_station_with_a_wrong_token_is_refused_and_closed(hall: Hall, gateway: MachineGateway) -> None:
    enrol(hall)
    client, session = wired(gateway, "not-the-token")
    with pytest.raises(MachineRefused, match="this station is not enrolled, or its token is wrong") as refused:
        result(client.hello())
    assert refused.value.code == "not_enrolled" and session.station is None


def test_refusals_carry_their_code_and_leave_the_connection_open(hall: Hall, gateway: MachineGateway) -> None:
    client, session = wired(gateway, enrol(hall))
    result(client.hello())
    with pytest.raises(MachineRefused) as refused:
        result(client.play(1))
    assert refused.value.code == "no_credit"
    with pytest.raises(MachineRefused, match="a play holds 1 to 4 cards on this machine, not 9"):
        result(client.insert_cash(cash_device(hall, "vb-1").insert(1, 500)).addCallback(lambda _: client.play(9)))
    answers: list[Any] = []
    client.send = lambda text: session.message_received(text)
    session._send = answers.append  # type: ignore[assignment]
    session.message_received("{not json")
    assert json.loads(answers[-1])["code"] == "message" and session.station is not None
    session.message_received('{"type": "play", "cards": 1, "cards": 4}')  # which one would be played?
    refusal = json.loads(answers[-1])
    assert refusal["code"] == "message" and "'cards' twice" in refusal["message"] and session.station is not None


def test_a_player_signs_in_with_the_pin_and_takes_credit_from_the_account(hall: Hall, gateway: MachineGateway) -> None:
    number = player(hall, credit=2_000)
    client, _ = wired(gateway, enrol(hall))
    result(client.hello())
    with pytest.raises(MachineRefused, match="wrong"):
        result(client.sign_in(number, "0000"))
    assert result(client.sign_in(number, "4821"))["account"] == number
    result(client.credit_in(1_500, source="account"))
    assert hall.cashier.balance(number) == 500
    out = result(client.credit_out("account"))
    assert out["amount_cents"] == 1_500 and hall.cashier.balance(number) == 2_000


def test_video_bingo_keeps_the_players_money_after_sign_out_no_more(hall: Hall, gateway: MachineGateway) -> None:
    """At sign-out the station's whole credit goes back to the player's account (journaled, the ledger
    exact); the station shows 0 and the next player sees none of it."""
    first, second = player(hall, "11111111A", credit=2_000), player(hall, "22222222B", credit=300)
    client, _ = wired(gateway, enrol(hall))
    result(client.hello())
    result(client.sign_in(first, "4821"))
    result(client.credit_in(1_500, source="account"))
    shown = result(client.play(4))
    on_station = shown["credit_after_cents"]
    assert on_station > 0 and hall.cashier.balance(first) == 500
    signed_out = result(client.sign_out())
    assert signed_out == {"type": "signed_out", "returned_cents": on_station, "credit_cents": 0}
    assert hall.vb.credit("vb-1", 1) == 0 == client.credit_cents and hall.cashier.balance(first) == 500 + on_station
    kinds = [r.type for r in hall.journal.records()][-3:]
    assert kinds == ["vb_credit_out", "posting", "vb_player_signed_out"]
    out = [r for r in hall.journal.records() if r.type == "vb_credit_out"][-1].payload
    assert (out["destination"], out["account"], out["amount"]) == ("account", first, on_station)
    assert hall.ledger.ledger.total() == 0 and hall.vb.reconcile() == []
    # The next player at the station, as a reconnecting machine would show it: nothing to play with.
    again, _ = wired(gateway, client.token)
    welcome = result(again.hello())
    assert welcome["credit_cents"] == 0 and welcome["signed_in"] is None
    result(again.sign_in(second, "4821"))
    with pytest.raises(MachineRefused) as refused:
        result(again.play(1))
    assert refused.value.code == "no_credit"
    with pytest.raises(MachineRefused, match="no credit on this station"):
        result(again.credit_out("account"))
    assert hall.cashier.balance(second) == 300 and hall.cashier.balance(first) == 500 + on_station
    # Signing out with nothing on the station returns nothing and moves no money.
    assert result(again.sign_out()) == {"type": "signed_out", "returned_cents": 0, "credit_cents": 0}


def test_anonymous_cash_credit_keeps_the_cash_out_rules(hall: Hall, gateway: MachineGateway) -> None:
    """Cash put in with nobody signed in is paid out in cash from the machine's cash box, as before."""
    client, _ = wired(gateway, enrol(hall))
    result(client.hello())
    result(client.insert_cash(cash_device(hall, "vb-1").insert(1, 500)))
    assert result(client.sign_out()) == {"type": "signed_out", "returned_cents": 0, "credit_cents": 500}
    out = result(client.credit_out("cash"))
    assert out["amount_cents"] == 500 and hall.vb.credit("vb-1", 1) == 0


def test_a_refusal_a_player_reads_carries_its_reason_and_params_beside_the_english_message(
    hall: Hall, gateway: MachineGateway
) -> None:
    """The screen says a refusal in the player's language from its stable ``reason`` and ``params`` (amounts
    in cents); the ``message`` stays the English one the journal and the headless clients read."""
    number = player(hall, credit=300)
    client, session = wired(gateway, enrol(hall))
    result(client.hello())
    answers: list[dict[str, Any]] = []
    session._send = lambda text: answers.append(json.loads(text))  # type: ignore[assignment]

    def answer(message: dict[str, Any]) -> dict[str, Any]:
        session.message_received(json.dumps(message))
        return answers[-1]

    short = answer({"type": "play", "cards": 2, "keep": False, "request": "r1"})
    assert (short["type"], short["code"], short["reason"]) == ("error", "no_credit", "credit_short")
    assert short["params"] == {"cards": 2, "stake_cents": 40, "credit_cents": 0}
    assert short["message"] == ("Not enough credit: 2 cards cost 0.40 EUR and the credit is 0.00 EUR. Add credit, "
                                "or play fewer cards.")
    wrong_pin = answer({"type": "sign_in", "account": number, "pin": "0000"})
    assert (wrong_pin["code"], wrong_pin["reason"], wrong_pin["params"]) == ("refused", "sign_in_refused", {})
    assert answer({"type": "sign_in", "account": number, "pin": "4821"})["type"] == "signed_in"
    too_much = answer({"type": "credit_in", "source": "account", "amount_cents": 500, "request": "r2"})
    assert (too_much["reason"], too_much["params"]) == ("account_short", {"held_cents": 300, "amount_cents": 500})
    assert too_much["message"] == "your account holds 3.00 EUR; it cannot put 5.00 EUR on the machine"
    keep = answer({"type": "play", "cards": 1, "keep": True, "request": "r3"})
    assert (keep["code"], keep["reason"], keep["params"]) == ("keep", "keep_none", {})
    nothing = answer({"type": "credit_out", "destination": "account", "request": "r4"})
    assert (nothing["reason"], nothing["params"]) == ("nothing_to_pay", {})
    assert hall.cashier.balance(number) == 300 and hall.vb.credit("vb-1", 1) == 0  # nothing changed
    # A machine that may not play says why in its welcome, by reason too.
    result(hall.vb.retire(CHIEF, "vb-1", "worn out"))
    welcome = result(wired(gateway, client.token)[0].hello())
    assert (welcome["state"], welcome["why_reason"], welcome["why_params"]) == ("retired", "retired", {})
    assert welcome["why"] == "machine vb-1 is retired (worn out)"

"""Cash into a video bingo machine: only on its cash device's signed note (or at the cash desk), and
counted against the cash box.

The station is the machine's side of ``bingo-vb-machine/1`` through the hall's real machine
session (no socket); staff act through the console's command channel, as their roles.  On a
hall that believed the station's "cash came in", 2 x 10,000 EUR were credited with nothing
inserted and ``vb_reconcile`` said they agreed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from hall_server.hall.cashier import over_short_account
from hall_server.hall.pins import PinGuard
from hall_server.hall.roles import Role
from hall_server.hall.videobingo import cash_box
from hall_server.terminal_gateway.machines import MachineGateway, MachineSession
from protocol.videobingo.cash import sign_note
from server_kit.core import Actor
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel, SeenRequests, parse_request
from terminals.vb_cash_device import CashDevice
from terminals.vb_machine import MachineClient, MachineRefused
from tests.hall.conftest import result
from tests.videobingo.halls import CHIEF, Hall, build_hall, config, count

CASHIER = Actor("eva", Role.CASHIER)
SECOND_CASHIER = Actor("marc", Role.CASHIER)
ROOM_CHIEF = Actor("rosa", Role.ROOM_CHIEF)


@pytest.fixture
def station(journal: Journal, clock: Clock) -> tuple[Hall, MachineClient, MachineSession]:
    hall = build_hall(journal, clock, config(cash_box_counters=2))
    token = str(result(hall.vb.enrol_station(CHIEF, "vb-1", 1))["token"])
    pins = PinGuard(hall.core, hall.cashier)
    gateway = MachineGateway(hall.vb, pins, lambda n, p: defer.succeed(False), Clock())
    client = MachineClient("vb-1", 1, token)
    session = MachineSession(gateway, client.message_received, lambda: None)
    client.send = session.message_received
    result(client.hello())
    return hall, client, session


def staff(hall: Hall, actor: Actor, command: str, **args: Any) -> dict[str, Any]:
    """One request on the console's command channel, as ``actor``; its answer."""
    answers: list[Any] = []
    text = json.dumps({"id": f"{actor.name}-{count(hall.journal)}", "command": command, "args": args})
    CommandChannel(hall.core).submit(actor, parse_request(text), SeenRequests()).addBoth(answers.append)
    (answer,) = answers
    return answer


def refused(deferred: defer.Deferred[Any], code: str) -> str:
    with pytest.raises(MachineRefused) as caught:
        result(deferred)
    assert caught.value.code == code, caught.value
    return str(caught.value)


@pytest.mark.req("R3.5.d")
def test_N5_a_station_saying_cash_came_in_credits_nothing_without_the_devices_signed_note(station) -> None:
    hall, client, session = station
    before = count(hall.journal)
    # The station's word alone: 10,000 EUR "inserted" (the attack).
    said = client._request({"type": "credit_in", "source": "cash", "amount_cents": 1_000_000})
    assert "cash put into the machine is credited only on its cash device's signed note" in refused(said, "cash_device")
    device = CashDevice("vb-1")
    assert "has no cash device enrolled" in refused(client.insert_cash(device.insert(1, 5_000)), "cash_device")
    assert count(hall.journal) == before

    enrolled = staff(hall, ROOM_CHIEF, "enrol_vb_cash_device", machine="vb-1", public_key=device.public_key)
    assert enrolled["ok"] and enrolled["result"]["fingerprint"] == device.fingerprint
    before = count(hall.journal)
    # A key the station (or anyone) made up signs nothing the hall takes.
    forger = CashDevice("vb-1", counters={1: 100})
    assert "is not signed by machine vb-1's cash device" in refused(client.insert_cash(forger.insert(1, 50_000)),
                                                                      "cash_signature")
    # A note for another amount than the station claims, or for another station.
    note = device.insert(1, 2_000)
    lie = client._request({"type": "credit_in", "source": "cash", "amount_cents": 50_000, "note": note.to_json()})
    assert "the cash note is for 20.00 EUR on vb-1.1, not 500.00 EUR on vb-1.1" in refused(lie, "cash_note")
    assert count(hall.journal) == before and hall.vb.credit("vb-1", 1) == 0

    # The device's own note is credited, once.
    taken = result(client.insert_cash(note))
    assert taken["credit_after_cents"] == 2_000 == hall.vb.credit("vb-1", 1)
    assert "already credited: a note is credited once" in refused(client.insert_cash(note), "cash_replay")
    older = sign_note(device.key, "vb-1", 1, note.counter - 1, 2_000, "0" * 32)
    refused(client.insert_cash(older), "cash_replay")
    record = [r for r in hall.journal.records() if r.type == "vb_credit_in"][-1].payload
    assert record["note"] == {"key": device.fingerprint, "counter": note.counter, "nonce": note.nonce,
                              "signature": note.signature}
    meters = hall.vb.meters("vb-1")
    assert (meters.cash_in, meters.credits_in) == (2_000, 2_000)
    assert hall.ledger.balance(cash_box("vb-1")) == 2_000 and hall.ledger.ledger.total() == 0


@pytest.mark.req("R3.5.d", "R92.5")
def test_N5_the_cash_box_is_counted_by_two_people_and_vb_reconcile_reports_the_difference(station) -> None:
    hall, client, _ = station
    device = CashDevice("vb-1")
    staff(hall, ROOM_CHIEF, "enrol_vb_cash_device", machine="vb-1", public_key=device.public_key)
    for amount in (20_000, 5_000):
        result(client.insert_cash(device.insert(1, amount)))
    assert staff(hall, CASHIER, "vb_reconcile")["result"]["cash_boxes"]["vb-1"]["counted_cents"] is None

    # The box holds 20.00 EUR less than the notes said: a first count waits for a second person's.
    first = staff(hall, CASHIER, "vb_count_cash_box", machine="vb-1", counted_cents=23_000)
    assert first["ok"] and first["result"]["stands"] is False
    again = staff(hall, CASHIER, "vb_count_cash_box", machine="vb-1", counted_cents=23_000)
    assert not again["ok"] and "a second person counts it too" in again["error"]["message"]
    other = staff(hall, SECOND_CASHIER, "vb_count_cash_box", machine="vb-1", counted_cents=25_000)
    assert not other["ok"] and "eva counted 230.00 EUR in machine vb-1's cash box, you 250.00 EUR" in \
        other["error"]["message"]
    stands = staff(hall, ROOM_CHIEF, "vb_count_cash_box", machine="vb-1", counted_cents=23_000)["result"]
    assert stands == {"machine": "vb-1", "counted_cents": 23_000, "expected_cents": 25_000, "meters_cents": 25_000,
                      "difference_cents": -2_000, "counted_by": ["eva", "rosa"], "stands": True}
    reconciled = staff(hall, CASHIER, "vb_reconcile")["result"]
    assert reconciled["agree"] is False
    assert reconciled["differences"] == [
        "machine vb-1: its cash box was counted at 230.00 EUR by eva and rosa (record "
        f"{reconciled['cash_boxes']['vb-1']['counted_in_record']}), where the ledger held 250.00 EUR and the "
        "meters made it 250.00 EUR: 20.00 EUR short"]
    # The shortage is posted where it stays visible; the ledger's box is what was counted.
    assert hall.ledger.balance(over_short_account("vb-vb-1")) == 2_000
    assert hall.ledger.balance(cash_box("vb-1")) == 23_000 and hall.ledger.ledger.total() == 0
    assert hall.vb.reconcile() == []  # the meters and the ledger still agree: the session may close

    # The next count finds the box as the ledger has it: the machine agrees again.
    staff(hall, CASHIER, "vb_count_cash_box", machine="vb-1", counted_cents=23_000)
    staff(hall, SECOND_CASHIER, "vb_count_cash_box", machine="vb-1", counted_cents=23_000)
    assert staff(hall, ROOM_CHIEF, "vb_reconcile")["result"]["agree"] is True


@pytest.mark.req("R92.5")
def test_N5_cash_handed_over_at_the_desk_is_put_on_a_station_from_the_cashiers_own_drawer(station) -> None:
    hall, client, _ = station
    assert staff(hall, CASHIER, "open_cash_desk", desk="desk1", float_cents=0)["ok"]
    given = staff(hall, CASHIER, "vb_desk_credit", machine="vb-1", station=1, amount_cents=4_000, desk="desk1")
    assert given["ok"] and given["result"]["credit_after_cents"] == 4_000 == hall.vb.credit("vb-1", 1)
    other = staff(hall, SECOND_CASHIER, "vb_desk_credit", machine="vb-1", station=1, amount_cents=4_000, desk="desk1")
    assert not other["ok"] and "cash desk desk1 is in the hands of eva" in other["error"]["message"]
    meters = hall.vb.meters("vb-1")
    assert (meters.credits_in, meters.cash_in) == (4_000, 0)  # the cash is in the desk's drawer, not the box
    assert hall.ledger.balance("cash:desk1") == 4_000 and hall.ledger.ledger.total() == 0
    shown = result(client.play(2))
    assert shown["credit_after_cents"] == hall.vb.credit("vb-1", 1)
    assert staff(hall, CASHIER, "vb_reconcile")["result"]["agree"] is True

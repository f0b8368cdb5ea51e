"""Responsible play (R97.2 and its ruling): a daily spending limit and self-exclusion,
enforced by the admission desk, the cashier and every terminal, and journaled."""

from __future__ import annotations

from datetime import date

import pytest

from hall_server.hall.admission import AdmissionError, person_key
from hall_server.hall.responsible import ResponsiblePlayError
from hall_server.terminal_gateway.gateway import TerminalGateway
from terminals.client import TerminalError
from tests.hall.conftest import result
from tests.terminals.conftest import CASHIER, DOOR, SELLER, VirtualHall
from tests.terminals.test_gateway import PIN, Wire, gateway, signed_in  # noqa: F401 (gateway is a fixture)

DAY_S = 24 * 3600


def on_sale(hall: VirtualHall) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 3600))


@pytest.mark.req("R97.2")
def test_a_lower_limit_applies_at_once_and_a_purchase_past_it_is_refused_whole_and_journaled(
    hall: VirtualHall, gateway: TerminalGateway
) -> None:
    on_sale(hall)
    wire, number = signed_in(hall, gateway, credit=5_000)
    state = result(wire.client.set_limit(350))
    assert state["player"]["limits"] == {"daily_limit_cents": 350, "spent_today_cents": 0, "next_limit": None}
    assert result(wire.client.buy(3))["credit_cents"] == 4_700
    before = len(hall.records())
    with pytest.raises(TerminalError, match=r"daily limit is 3.50 EUR; you have spent 3.00 EUR today, so you may spend 0.50 EUR") as refused:
        result(wire.client.buy(1))
    # The kiosk says it in the player's language from its reason and figures (docs/languages.md).
    assert (refused.value.reason, refused.value.params) == (
        "daily_limit", {"limit_cents": 350, "spent_cents": 300, "left_cents": 50})
    refusal = hall.records()[before:]
    assert [r.type for r in refusal] == ["terminal_request_refused"] and "R97.2" in refusal[0].payload["reason"]
    assert hall.balance(number) == 4_700
    limit = next(r for r in hall.records() if r.type == "spending_limit_set")
    assert limit.payload["terminal"] == "T1" and limit.payload["limit_cents"] == 350


@pytest.mark.req("R97.2")
def test_a_self_exclusion_asked_for_an_account_with_no_visitor_record_has_its_reason_for_the_kiosk(
    hall: VirtualHall,
) -> None:
    from hall_server.hall.responsible import NoVisitorRecord

    with pytest.raises(NoVisitorRecord, match="no visitor record; ask at the cashier's desk") as refused:
        result(hall.responsible.exclude_from_terminal("T1", "999999999999", 30))
    assert refused.value.reason == "no_visitor_record" and refused.value.figures() == {}


@pytest.mark.req("R97.2")
def test_a_higher_limit_or_none_waits_for_the_next_day(hall: VirtualHall, gateway: TerminalGateway) -> None:
    on_sale(hall)
    wire, number = signed_in(hall, gateway, credit=5_000)
    result(wire.client.set_limit(200))
    raised = result(wire.client.set_limit(0))["player"]["limits"]
    assert raised["daily_limit_cents"] == 200 and raised["next_limit"]["limit_cents"] is None
    result(wire.client.buy(2))
    with pytest.raises(TerminalError, match="daily limit is 2.00 EUR"):
        result(wire.client.buy(1))
    hall.clock.advance(DAY_S)
    assert hall.responsible.purchase_refusal(f"player:{number}", 10_000, hall.core.now_ms()) is None


@pytest.mark.req("R97.2")
def test_the_cashier_sets_a_limit_for_a_player_and_a_batch_counts_every_purchase_in_it(hall: VirtualHall) -> None:
    number = hall.player("22222222B", 5_000)
    result(hall.responsible.set_limit(CASHIER, number, 100))
    with pytest.raises(ResponsiblePlayError, match="from 0 to"):
        result(hall.responsible.set_limit(CASHIER, number, -5))
    assert hall.responsible.purchase_refusal(f"player:{number}", 101, hall.core.now_ms()) is not None
    assert hall.responsible.purchase_refusal(f"player:{number}", 100, hall.core.now_ms()) is None


@pytest.mark.req("R97.2")
def test_a_self_excluded_player_is_signed_out_refused_at_every_terminal_the_door_and_the_cashier(
    hall: VirtualHall, gateway: TerminalGateway
) -> None:
    on_sale(hall)
    wire, number = signed_in(hall, gateway, credit=1_000, document="33333333C")
    state = result(wire.client.exclude(30))
    assert state["player"] is None
    (excluded,) = [r for r in hall.records() if r.type == "self_excluded"]
    assert excluded.payload["document"] == "33333333C" and excluded.payload["days"] == 30
    with pytest.raises(TerminalError, match="excluded yourself from play until") as refused:
        result(wire.client.sign_in(number, PIN))
    assert refused.value.code == "self_excluded" and refused.value.reason == "self_excluded"
    assert refused.value.params == {"until": excluded.payload["until"]}
    other = Wire(gateway, "T2", hall.terminal("T2"))
    result(other.client.hello())
    with pytest.raises(TerminalError, match="excluded yourself"):
        result(other.client.sign_in(number, PIN))
    # The door journals the refusal; the cashier opens no new account for the person.
    (refusal,) = result(hall.admission.admit_visitor(DOOR, "Same Person", "33333333-c", "1980-01-01"))
    assert refusal.type == "entry_refused" and "excluded themselves from play until" in refusal.payload["reason"]
    visitors = len(hall.admission.state.visitors)
    assert visitors == 1
    with pytest.raises(AdmissionError, match="excluded themselves"):
        result(hall.cashier.open_account(CASHIER, 1, "ticket", "4821"))
    # It cannot be shortened, only lengthened, and it ends by itself.
    with pytest.raises(ResponsiblePlayError, match="never shortened"):
        result(hall.responsible.exclude_document(DOOR, "Carla Puig", "passport", "33333333C", "1975-06-30", 5))
    result(hall.responsible.exclude_document(DOOR, "Carla Puig", "passport", "33333333C", "1975-06-30", 60))
    hall.clock.advance(61 * DAY_S)
    assert hall.responsible.account_refusal(number, hall.core.now_ms()) is None


@pytest.mark.req("R97.2")
def test_limits_and_exclusions_survive_a_restart(hall: VirtualHall, gateway: TerminalGateway) -> None:
    on_sale(hall)
    wire, number = signed_in(hall, gateway, credit=5_000, document="44444444D")
    result(wire.client.set_limit(300))
    result(wire.client.buy(2))
    again = hall.reopened()
    assert again.responsible.purchase_refusal(f"player:{number}", 101, again.core.now_ms()) is not None
    assert again.responsible.purchase_refusal(f"player:{number}", 100, again.core.now_ms()) is None
    result(again.responsible.exclude_document(DOOR, "Dani Roca", "identity card", "44444444D", "1990-02-28", 7))
    assert again.reopened().responsible.account_refusal(number, again.core.now_ms())


@pytest.mark.req("R97.2")
def test_the_terminal_is_given_the_operators_warnings_and_help(hall: VirtualHall, gateway: TerminalGateway) -> None:
    wire, _ = signed_in(hall, gateway)
    assert wire.client.warnings == ["Play for fun.", "Set a limit."] and wire.client.help == "Ask staff for help."


@pytest.mark.req("R97.2")
def test_a_limit_from_a_signed_out_terminal_is_refused(hall: VirtualHall, gateway: TerminalGateway) -> None:
    wire = Wire(gateway, "T3", hall.terminal("T3"))
    result(wire.client.hello())
    with pytest.raises(TerminalError, match="sign in") as refused:
        result(wire.client.set_limit(100))
    assert refused.value.code == "signed_out"


@pytest.mark.req("R97.2")
def test_desk_self_exclusion_asks_who_the_person_is_not_a_number_alone(hall: VirtualHall) -> None:
    """The desk records the name, the document's kind and number and the birth date on it; each
    is required and checked, and the exclusion keeps them to identify the person."""
    for args, error in (
        (("", "passport", "55555555E", "1980-01-01"), "name"),
        (("Eva Soler", "library card", "55555555E", "1980-01-01"), "identity card, passport, residence permit"),
        (("Eva Soler", "passport", "55555555E", "01/01/1980"), "YYYY-MM-DD"),
        (("Eva Soler", "passport", "", "1980-01-01"), "identity document"),
    ):
        with pytest.raises((ResponsiblePlayError, AdmissionError), match=error):
            result(hall.responsible.exclude_document(DOOR, *args, 30))
    assert not [r for r in hall.records() if r.type == "self_excluded"], "a refused form records nothing"
    result(hall.responsible.exclude_document(DOOR, "Eva Soler", "passport", "55555555-e", "1980-01-01", 30))
    (excluded,) = [r for r in hall.records() if r.type == "self_excluded"]
    assert {k: excluded.payload[k] for k in ("name", "document_type", "document", "birth_date", "days")} == {
        "name": "Eva Soler", "document_type": "passport", "document": "55555555E", "birth_date": "1980-01-01", "days": 30}
    (refusal,) = result(hall.admission.admit_visitor(DOOR, "Eva Soler", "55555555E", "1980-01-01"))
    assert refusal.type == "entry_refused" and refusal.payload["ground"] == "self_excluded"


@pytest.mark.req("R97.2")
def test_a_person_excluded_at_a_desk_is_refused_at_the_door_with_another_document_of_the_same_name_and_birth_date(
    hall: VirtualHall,
) -> None:
    """The desk records the exclusion from the document shown: the name, the document and the birth date
    on it.  The same person showing another document (a passport after the identity card) is the same
    name and birth date: refused at the door, the refusal journaled with its ground, until the exclusion
    ends.  A person of the same name born on another day is someone else, and comes in."""
    result(hall.responsible.exclude_document(DOOR, "Josep Martí Vila", "identity card", "44444444D", "1971-03-09", 30))
    (refusal,) = result(hall.admission.admit_visitor(DOOR, "JOSEP  MARTI vila", "PA1234567", "1971-03-09"))
    assert refusal.type == "entry_refused" and refusal.payload["ground"] == "self_excluded", refusal
    assert "excluded themselves from play until" in refusal.payload["reason"]
    assert "44444444D" not in refusal.payload["reason"] and "1971" not in refusal.payload["reason"]
    (namesake,) = result(hall.admission.admit_visitor(DOOR, "Josep Martí Vila", "55555555E", "1984-11-02"))
    assert namesake.type == "visitor_admitted"
    hall.clock.advance(31 * DAY_S)
    (back,) = result(hall.admission.admit_visitor(DOOR, "Josep Martí Vila", "PA1234567", "1971-03-09"))
    assert back.type == "visitor_admitted"  # the exclusion ended by itself



@pytest.mark.req("R97.2")
def test_after_a_restart_and_from_a_checkpoint_the_door_still_knows_the_person_excluded(hall: VirtualHall) -> None:
    """The person's name and birth date are folded from the journal: a hall started again on it, and a
    module restored from a checkpoint of its state, refuse the other document as before."""
    result(hall.responsible.exclude_document(DOOR, "Josep Martí Vila", "passport", "PA7654321", "1971-03-09", 30))
    again = hall.reopened()
    (refusal,) = result(again.admission.admit_visitor(DOOR, "josep marti vila", "44444444D", "1971-03-09"))
    assert refusal.type == "entry_refused" and refusal.payload["ground"] == "self_excluded", refusal
    saved = again.responsible.checkpoint()
    again.responsible.reset()
    again.responsible.restore(saved)
    today = again.responsible.today(again.core.now_ms())
    refused = again.responsible.person_exclusion_refusal("Josep Marti Vila", date(1971, 3, 9), today, "entry")
    assert refused is not None and "excluded themselves from play until" in refused
    assert person_key("  Josep  MARTÍ ", date(1971, 3, 9)) == ("josep marti", "1971-03-09")

"""The hall's people through the console's command channel: the door checks age and capacity
(R75.1, R97.1, R73.5), every incident reaches the minutes and the daily report (R75.4, R77.2),
complaints are written before the room chief (R75.5), staff work under a valid class I licence
(R79), the table chief stands in for the cashier (R80.4), and sessions open only inside the
opening hours in force (R74.1).

The hall is the real modules on a real SQLite journal, run inline on a task.Clock; staff
sign in and give commands over the console's HTTP channel (the fake browser).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.config import StaffLicence, StaffMember
from hall_server.hall.admission import local_date
from hall_server.hall.notices import OpeningHoursModule
from hall_server.hall.roles import Role
from hall_server.hall.session import CHECKS, SessionError
from hall_server.reports.daily import hall_day
from hall_server.reports.layout import session_report
from hall_server.reports.minutes import build
from hall_server.store.database import open_database
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.core import Actor
from server_kit.journal.sql import Journal
from server_kit.reports.daily import daily_report
from server_kit.web.channel import CommandChannel
from tests.hall.conftest import result
from tests.terminals.conftest import VirtualHall, build_hall
from tests.web.conftest import _HASH, FakeBrowser

ANDORRA = ZoneInfo("Europe/Andorra")
#: The hours the hall reported: closed in the mornings.
HOURS = "mon-fri 16:00-02:00; sat, sun 12:00-02:00"
#: Wednesday 3 June 2026, 17:00 in Andorra: the hall is open.
WEDNESDAY_5PM = datetime(2026, 6, 3, 17, 0, tzinfo=ANDORRA)
TODAY = WEDNESDAY_5PM.date()
VALID = StaffLicence("I-AD-0001", date(2027, 12, 31))
ADULT = "1980-01-01"
BANNED = "document,name,until\nB1000001,Joan Banned,\n"
STAFF = {
    "admin": (Role.ADMINISTRATOR, VALID),
    "rosa": (Role.ROOM_CHIEF, StaffLicence("I-AD-0002", date(2027, 12, 31))),
    "tomas": (Role.TABLE_CHIEF, StaffLicence("I-AD-0003", date(2027, 12, 31))),
    "carla": (Role.CASHIER, StaffLicence("I-AD-0004", date(2027, 12, 31))),
    "adam": (Role.ADMISSION, StaffLicence("I-AD-0005", date(2027, 12, 31))),
    # An administrator whose licence ended yesterday, one whose licence is suspended, and one
    # whose licence ends tonight.
    "vera": (Role.ADMINISTRATOR, StaffLicence("I-AD-0006", TODAY - timedelta(days=1))),
    "sus": (Role.ADMINISTRATOR, StaffLicence("I-AD-0007", date(2027, 12, 31), suspended=True)),
    "ines": (Role.ADMINISTRATOR, StaffLicence("I-AD-0008", TODAY)),
}


@dataclass
class People:
    hall: VirtualHall
    hours: OpeningHoursModule
    view: HallView
    site: Any
    clock: Clock
    browsers: dict[str, FakeBrowser]
    requests: int = 0

    def sign_in(self, name: str) -> FakeBrowser:
        browser = FakeBrowser(self.site)
        answer = browser.sign_in(name)
        assert answer.status == 200, answer.json()
        self.browsers[name] = browser
        return browser

    def command(self, who: str, command: str, **args: Any) -> dict[str, Any]:
        browser = self.browsers.get(who) or self.sign_in(who)
        self.requests += 1
        answer: dict[str, Any] = browser.command(command, args, f"{who}-{self.requests}").json()
        return answer

    def ok(self, who: str, command: str, **args: Any) -> list[dict[str, Any]]:
        answer = self.command(who, command, **args)
        assert answer["ok"], answer
        return [self.payload(r["seq"]) for r in answer["records"]]

    def payload(self, seq: int) -> dict[str, Any]:
        return next(dict(r.payload, type=r.type) for r in self.hall.records() if r.seq == seq)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [dict(r.payload) for r in self.hall.records() if r.type == kind]

    def at(self, moment: datetime, *, sign_in_again: bool = False) -> None:
        """The clock moves to ``moment``; ``sign_in_again``: every desk signs in anew (a new working day)."""
        self.clock.advance(moment.timestamp() - self.clock.seconds())
        if sign_in_again:
            self.browsers.clear()

    def open_session(self) -> None:
        self.ok("admin", "run_verification", date="")
        self.ok("rosa", "count_balls", stage="opening", balls_present=list(range(1, 91)), witnesses=["A player"])
        self.ok("rosa", "sign_session_opening")
        self.ok("admin", "sign_session_opening")


@pytest.fixture
def people(tmp_path: Path) -> People:
    clock = Clock()
    clock.advance(WEDNESDAY_5PM.timestamp())
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    hall = build_hall(journal, clock)
    core = hall.core
    hall.session.verifier = lambda now_ms: dict.fromkeys(CHECKS)
    # The composition root's wiring (hall_server/tap.py), on the test's modules.
    hours = OpeningHoursModule(core, ANDORRA)
    hours.enforce(hall.session)
    hall.admission.capacity = 2
    hall.admission.counted_since = hours.counted_since_ms
    hall.session.closing_checks.append(hall.admission.closing_refusal)
    directory = StaffDirectory((StaffMember(name, role, _HASH, licence=licence) for name, (role, licence) in STAFF.items()),
                               today=lambda: local_date(core.now_ms(), ANDORRA))
    directory.sign_sessions(hall.session, ANDORRA)
    view = HallView("People hall", desks=["desk1"])
    view.presence_source = lambda: hall.admission.presence(core.now_ms())
    view.hours_source = lambda: hours.picture(core.now_ms())
    core.add_view(view)
    sign_ins = SignIns(directory, clock)
    channel = CommandChannel(core)
    hub = LiveHub(view, channel, sign_ins)
    core.observers.append(hub.record_committed)
    site = build_site(hub=hub, sign_ins=sign_ins, channel=channel, authenticate=inline_authenticate(sign_ins),
                      secure_cookie=False)
    result(hours.notify(HOURS))
    people = People(hall, hours, view, site, clock, {})
    people.ok("admin", "import_banned_list", content=BANNED, source="craj.csv")
    return people


@pytest.mark.req("R75.1", "R97.1")
def test_R75_1_R97_1_a_minor_is_refused_at_the_door_and_the_birth_date_is_never_kept(people: People) -> None:
    # Seventeen until tomorrow: refused, and the refusal is a record with its ground.
    (refused,) = people.ok("adam", "admit_visitor", name="Nil Petit", document="M1234567", birth_date="2008-06-04")
    assert (refused["type"], refused["ground"]) == ("entry_refused", "minor")
    assert "the visitor is 17, under 18" in refused["reason"] and "(R75.1, R97.1)" in refused["reason"]
    # Eighteen today: admitted; the record keeps that the check passed, not the date.
    (admitted,) = people.ok("adam", "admit_visitor", name="Nil Gran", document="M7654321", birth_date="2008-06-03")
    assert (admitted["type"], admitted["number"], admitted["age_checked"]) == ("visitor_admitted", 1, True)
    # A date that cannot be read, or is in the future, is a mistake to correct: nothing is written.
    before = len(people.hall.records())
    for typed in ("03/06/2008", "2008-02-30", "2030-01-01"):
        answer = people.command("adam", "admit_visitor", name="Pau", document="P1", birth_date=typed)
        assert not answer["ok"] and "birth date" in answer["error"]["message"], answer
    assert len(people.hall.records()) == before
    assert not any("2008-06" in str(r.payload) for r in people.hall.records()), "a birth date was kept (R75.3)"
    # A minor holds no visitor record, so the cashier has nobody to open an account for.
    assert [v.number for v in people.hall.admission.state.visitors] == [1]


@pytest.mark.req("R73.5")
def test_R73_5_the_door_refuses_a_visitor_while_the_people_present_reach_the_capacity(people: People) -> None:
    for number, document in enumerate(("A0000001", "A0000002"), start=1):
        (admitted,) = people.ok("adam", "admit_visitor", name=f"Visitor {number}", document=document, birth_date=ADULT)
        assert admitted["number"] == number
    assert people.view.console()["presence"] == {"present": 2, "capacity": 2, "visitors": [1, 2]}
    (refused,) = people.ok("adam", "admit_visitor", name="Third", document="A0000003", birth_date=ADULT)
    assert (refused["type"], refused["ground"]) == ("entry_refused", "capacity")
    assert "2 people are present and the hall's authorised capacity is 2 (R73.5)" in refused["reason"]
    (left,) = people.ok("adam", "record_visitor_left", visitor=1)
    assert (left["type"], left["number"], left["actor"]["name"]) == ("visitor_left", 1, "adam")
    again = people.command("adam", "record_visitor_left", visitor=1)
    assert not again["ok"] and "has already left" in again["error"]["message"]
    (admitted,) = people.ok("adam", "admit_visitor", name="Third", document="A0000003", birth_date=ADULT)
    assert admitted["type"] == "visitor_admitted" and admitted["number"] == 3
    assert people.view.console()["presence"] == {"present": 2, "capacity": 2, "visitors": [2, 3]}
    # The hall closes at 02:00: everyone admitted before is counted out; the next evening's door starts at 0.
    people.at(datetime(2026, 6, 4, 16, 30, tzinfo=ANDORRA), sign_in_again=True)
    assert people.view.console()["presence"]["present"] == 0
    late = people.command("adam", "record_visitor_left", visitor=2)
    assert not late["ok"] and "admitted before the hall last closed" in late["error"]["message"]
    (admitted,) = people.ok("adam", "admit_visitor", name="Visitor 2", document="A0000002", birth_date=ADULT)
    assert admitted["type"] == "visitor_admitted"


@pytest.mark.req("R75.5")
def test_R75_5_a_complaint_is_written_before_the_room_chief_numbered_and_in_the_minutes_and_daily_report(
    people: People,
) -> None:
    people.open_session()
    (door,) = people.ok("adam", "record_complaint", complainant="Marta Soler", text="The caller skipped ball 17.")
    assert (door["number"], door["witnessed"]) == (1, False) and "room_chief" not in door
    (chief,) = people.ok("rosa", "record_complaint", complainant="Pere Roca", text="Too cold in row C.")
    assert (chief["number"], chief["witnessed"], chief["room_chief"]) == (2, True, "rosa")
    assert [c["room_chief"] for c in people.view.console()["complaints"]] == ["rosa", None]
    # The session does not close while a complaint waits for the room chief.
    people.ok("rosa", "count_balls", stage="closing", balls_present=list(range(1, 91)), witnesses=["A player"])
    refused = people.command("rosa", "sign_session_closing")
    assert not refused["ok"] and "complaint(s) 1 of the complaints book wait for the room chief" in \
        refused["error"]["message"]
    assert not people.command("adam", "confirm_complaint", number=1)["ok"], "the door confirms nothing"
    (confirmed,) = people.ok("rosa", "confirm_complaint", number=1)
    assert (confirmed["type"], confirmed["number"], confirmed["actor"]["role"]) == ("complaint_confirmed", 1,
                                                                                    "room_chief")
    assert not people.command("rosa", "confirm_complaint", number=1)["ok"]
    people.ok("rosa", "sign_session_closing")
    people.ok("admin", "sign_session_closing")
    book = build(people.hall.records())
    complaints = [e for e in book.session(1).book if e.kind == "complaint"]
    assert [(e.number, e.people, e.text, e.witness) for e in complaints] == [
        (1, ("Marta Soler",), "The caller skipped ball 17.", "rosa"),
        (2, ("Pere Roca",), "Too cold in row C.", "rosa"),
    ]
    day = hall_day(people.hall.records(), TODAY.isoformat(), "People hall", ANDORRA)
    rows = {t.key: t for t in daily_report(day).tables}["incidents"].rows
    assert [(r[2], r[3], r[5], r[7]) for r in rows if r[2] == "complaint"] == [
        ("complaint", 1, "Marta Soler", "rosa"), ("complaint", 2, "Pere Roca", "rosa")]


@pytest.mark.req("R75.4", "R77.2")
def test_R75_4_R77_2_the_minutes_list_every_incident_never_none_after_refusals_an_exclusion_and_a_failed_terminal(
    people: People,
) -> None:
    people.ok("adam", "admit_visitor", name="Joan Banned", document="B1000001", birth_date=ADULT)
    people.ok("adam", "admit_visitor", name="Nil Petit", document="M1234567", birth_date="2012-01-01")
    people.ok("adam", "record_self_exclusion", name="Xavi Mas", document_type="identity card", document="X9999999",
              birth_date="1970-03-01", days=30)
    people.ok("adam", "admit_visitor", name="Ex Cluded", document="X9999999", birth_date=ADULT)
    people.ok("adam", "admit_visitor", name="One", document="A0000001", birth_date=ADULT)
    people.ok("adam", "admit_visitor", name="Two", document="A0000002", birth_date=ADULT)
    people.ok("adam", "admit_visitor", name="Three", document="A0000003", birth_date=ADULT)
    people.open_session()
    assert people.command("admin", "enrol_terminal", terminal="T7", place="row B")["ok"]
    people.ok("rosa", "declare_terminal_failed", terminal="T7", reason="screen dark")
    session = build(people.hall.records()).session(1)
    kinds = [(e.kind, e.text.split(":")[0]) for e in session.book]
    assert kinds == [
        ("entry refused", "on the regulator's banned list (R75.2)"),
        ("entry refused", "under 18 (R75.1, R97.1)"),
        ("self-exclusion", "excluded from play for 30 days, until 2026-07-03"),
        ("entry refused", "self-excluded (R97.2)"),
        ("entry refused", "the hall at its authorised capacity (R73.5)"),
        ("terminal out of service", "terminal T7"),
    ]
    assert [e.people for e in session.book if e.kind == "entry refused"] == [
        ("Joan Banned",), ("Nil Petit",), ("Ex Cluded",), ("Three",)]
    report = session_report(session, hall_name="People hall", timezone=ANDORRA)
    incidents = {t.key: t for t in report.tables}["incidents"]
    assert len(incidents.rows) == 6, "the minutes say 'Incidents: None' after incidents"
    day = hall_day(people.hall.records(), TODAY.isoformat(), "People hall", ANDORRA)
    assert [i.kind for i in day.incidents] == [e.kind for e in session.book]


@pytest.mark.req("R79")
def test_R79_an_expired_or_suspended_licence_cannot_sign_in_nor_open_a_session(people: People) -> None:
    for name, said in (("vera", f"expired on {TODAY - timedelta(days=1)}"), ("sus", "is suspended")):
        answer = FakeBrowser(people.site).sign_in(name)
        assert answer.status == 401, (name, answer.json())
        message = answer.json()["error"]["message"]
        assert said in message and "(R79)" in message and "class I licence" in message
    # A sign-in ends when its licence lapses: ines's ends tonight.
    people.sign_in("ines")
    people.ok("ines", "run_verification", date="")
    people.ok("rosa", "count_balls", stage="opening", balls_present=list(range(1, 91)), witnesses=["A player"])
    people.at(datetime(2026, 6, 4, 0, 30, tzinfo=ANDORRA))  # after midnight, still open hours
    lapsed = people.command("ines", "sign_session_opening")
    assert not lapsed["ok"] and lapsed["error"]["code"] == "signed_out", lapsed
    # The session refuses an expired licence's signature even off the console (R79), and names each
    # signer's licence in the signature's record.
    with pytest.raises(SessionError, match=r"licence I-AD-0006 of vera expired on 2026-06-02 \(R79\)"):
        result(people.hall.session.sign_opening(Actor("vera", Role.ADMINISTRATOR)))
    people.ok("rosa", "sign_session_opening")
    people.ok("admin", "sign_session_opening")
    signed = people.of_type("session_opening_signed")
    assert [(s["signer"], s["licence"]) for s in signed] == [("rosa", "I-AD-0002"), ("admin", "I-AD-0001")]
    assert people.of_type("session_opened")


@pytest.mark.req("R80.4")
def test_R80_4_the_table_chief_works_the_cashiers_desk_only_while_standing_in(people: People) -> None:
    (visitor,) = people.ok("adam", "admit_visitor", name="Anna Vidal", document="12345678A", birth_date=ADULT)
    # Before any hand-over the table chief does none of the cashier's work.
    for command, args in (("open_player_account", {"visitor": 1, "medium": "ticket", "pin": "4821"}),
                          ("find_player_account", {"account": "000000000000"})):
        refused = people.command("tomas", command, **args)
        assert not refused["ok"] and "only while standing in for the cashier (R80.4)" in refused["error"]["message"]
    people.ok("carla", "open_cash_desk", desk="desk1", float_cents=10_000)
    people.ok("carla", "hand_over_cash_desk", desk="desk1", to="tomas", to_role="table_chief", reason="carla's break")
    (opened,) = people.ok("tomas", "open_player_account", visitor=visitor["number"], medium="ticket", pin="4821")
    account = opened["account"]
    assert opened["actor"] == {"name": "tomas", "role": "table_chief", "request": opened["actor"]["request"]}
    found = people.command("tomas", "find_player_account", account=account)
    assert found["ok"] and found["result"]["balance_cents"] == 0
    (loaded, _) = people.ok("tomas", "load_credit", account=account, amount_cents=2_000, desk="desk1")
    assert (loaded["type"], loaded["amount"], loaded["actor"]["name"]) == ("credit_loaded", 2_000, "tomas")
    (limit,) = people.ok("tomas", "set_spending_limit", account=account, limit_cents=5_000)
    assert limit["actor"]["role"] == "table_chief"
    # The table chief's console offers the cashier's commands (its desk shows them while standing in).
    socket = people.browsers["tomas"].socket()
    snapshot = next(m for m in socket.received() if m["type"] == "snapshot")
    offered = {c["name"] for c in snapshot["commands"]}
    assert {"open_player_account", "find_player_account", "load_credit", "cash_out", "set_spending_limit",
            "print_player_ticket", "hand_over_cash_desk"} <= offered
    assert [d["held_by"] for d in snapshot["view"]["desks"] if d["desk"] == "desk1"] == ["tomas"]
    # Handed back, the table chief is a table chief again.
    people.ok("tomas", "hand_over_cash_desk", desk="desk1", to="carla", to_role="cashier", reason="carla is back")
    again = people.command("tomas", "find_player_account", account=account)
    assert not again["ok"] and "(R80.4)" in again["error"]["message"]
    handed = people.of_type("cash_desk_handed_over")
    assert [(h["from_holder"], h["to_holder"], h["to_role"]) for h in handed] == [
        ("carla", "tomas", "table_chief"), ("tomas", "carla", "cashier")]


@pytest.mark.req("R74.1")
def test_R74_1_no_session_opens_outside_the_opening_hours_in_force(people: People) -> None:
    people.at(datetime(2026, 6, 4, 10, 0, tzinfo=ANDORRA), sign_in_again=True)  # Thursday morning: closed
    people.ok("admin", "run_verification", date="")
    people.ok("rosa", "count_balls", stage="opening", balls_present=list(range(1, 91)), witnesses=["A player"])
    people.ok("rosa", "sign_session_opening")
    refused = people.command("admin", "sign_session_opening")
    assert not refused["ok"]
    assert refused["error"]["message"] == (
        f"opening the session refused: the hall is closed at 10:00 by the opening hours in force, {HOURS!r} "
        "(R74.1); it opens next at 2026-06-04 16:00")
    assert not people.of_type("session_opened")
    assert people.view.console()["opening_hours"]["open_now"] is False
    people.at(datetime(2026, 6, 4, 16, 1, tzinfo=ANDORRA))
    people.ok("admin", "sign_session_opening")
    (opened,) = people.of_type("session_opened")
    assert opened["date"] == "2026-06-04"


@pytest.mark.req("R74.2")
def test_R74_2_the_administrator_records_the_regulators_approval_and_the_change_is_in_force_at_once(
    people: People,
) -> None:
    # Noticed on Wednesday 3 June: three whole working days (Thursday, Friday, Monday), in force on Tuesday 9.
    (notice,) = result(people.hours.notify("every day 10:00-02:00"))
    assert (notice.payload["applies_from"], notice.payload["previous"]) == ("2026-06-09", HOURS)
    people.at(datetime(2026, 6, 4, 10, 30, tzinfo=ANDORRA), sign_in_again=True)  # Thursday morning
    shown = people.view.console()["opening_hours"]
    assert (shown["pending"], shown["in_force"], shown["open_now"]) == (True, HOURS, False)
    people.ok("admin", "run_verification", date="")
    people.ok("rosa", "count_balls", stage="opening", balls_present=list(range(1, 91)), witnesses=["A player"])
    people.ok("rosa", "sign_session_opening")
    refused = people.command("admin", "sign_session_opening")
    assert not refused["ok"] and "(R74.1)" in refused["error"]["message"], refused
    # The regulator's letter reaches the administrator, and only the administrator records it.
    assert not people.command("rosa", "record_hours_decision", decision="approved", reference="CRAJ 2026/77")["ok"]
    (decided,) = people.ok("admin", "record_hours_decision", decision="approved", reference="CRAJ 2026/77")
    assert (decided["type"], decided["decision"], decided["reference"], decided["hours"]) == (
        "opening_hours_decided", "approved", "CRAJ 2026/77", "every day 10:00-02:00")
    shown = people.view.console()["opening_hours"]
    assert (shown["pending"], shown["in_force"], shown["open_now"]) == (False, "every day 10:00-02:00", True)
    again = people.command("admin", "record_hours_decision", decision="objected", reference="CRAJ 2026/78")
    assert not again["ok"] and "is recorded already: approved" in again["error"]["message"]
    people.ok("admin", "sign_session_opening")
    (opened,) = people.of_type("session_opened")
    assert opened["date"] == "2026-06-04"

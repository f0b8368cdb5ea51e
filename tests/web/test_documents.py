"""The console's downloads and the desks' picture, on fakes: a ticket's and a statement's PDF
from ``POST /api/document`` (permission-checked like the command, journaling nothing), the
choices the forms offer, and the drawers, visitors and terminals the desks show."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pypdf import PdfReader
from twisted.internet.task import Clock

from hall_server.config import StaffMember
from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.ledger import LedgerModule
from hall_server.statements import format_account_number
from hall_server.store.database import open_database
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.forms import document_name
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel
from tests.web.conftest import _HASH, STAFF, FakeBrowser


@pytest.fixture
def desk(tmp_path: Path) -> tuple[FakeBrowser, FakeBrowser, Journal, HallView]:
    """A hall with admission and the cashier on the web edge; the cashier and a seller signed in."""
    clock = Clock()
    clock.advance(1_780_000_000)
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, [])
    CashierModule(core, ledger, admission, ["desk-1", "desk-2"], hall_name="Test hall")
    view = HallView("Test hall", desks=["desk-1", "desk-2"])
    core.add_view(view)
    sign_ins = SignIns(StaffDirectory(StaffMember(n, r, _HASH) for n, r in STAFF.items()), clock)
    channel = CommandChannel(core)
    hub = LiveHub(view, channel, sign_ins)
    core.observers.append(hub.record_committed)
    site = build_site(hub=hub, sign_ins=sign_ins, channel=channel, authenticate=inline_authenticate(sign_ins),
                      secure_cookie=False)
    cashier, seller, admin, door = (FakeBrowser(site) for _ in range(4))
    for browser, name in ((cashier, "carla"), (seller, "sam"), (admin, "admin"), (door, "adam")):
        assert browser.sign_in(name).status == 200
    assert admin.command("import_banned_list", {"content": "document,name,until\nB1,Joan Banned,\n",
                                                "source": "craj.csv"}).status == 200
    assert door.command("admit_visitor", {"name": "Anna Vidal", "document": "12345678A", "birth_date": "1980-01-01"}).status == 200
    assert cashier.command("open_cash_desk", {"desk": "desk-1", "float_cents": 10_000}, "c1").status == 200
    return cashier, seller, journal, view


def document(browser: FakeBrowser, command: str, args: dict[str, object], request_id: str = "d1"):
    return browser.post_json("/api/document", {"id": request_id, "command": command, "args": args})


def pdf_text(data: bytes) -> str:
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


@pytest.mark.req("R92.5", "R93.7", "R80")
def test_the_ticket_and_the_statement_are_pdf_downloads_checked_like_their_commands(desk) -> None:
    cashier, seller, journal, view = desk
    opened = cashier.command("open_player_account", {"visitor": 1, "medium": "ticket", "pin": "4821"}, "c2").json()
    number = next(r for r in view.recent if r["type"] == "player_account_opened")["payload"]["account"]
    assert opened["ok"] and cashier.command("load_credit", {"account": number, "amount_cents": 2_050,
                                                           "desk": "desk-1"}, "c3").status == 200
    records = sum(1 for _ in journal.records())

    ticket = document(cashier, "print_player_ticket", {"account": format_account_number(number)})
    assert ticket.status == 200 and ticket.headers["content-type"] == "application/pdf"
    assert ticket.headers["content-disposition"] == f'attachment; filename="player-ticket-{number}.pdf"'
    assert ticket.headers["cache-control"] == "no-store" and ticket.body.startswith(b"%PDF")
    assert format_account_number(number) in pdf_text(ticket.body)
    statement = document(cashier, "print_account_statement", {"account": number}, "d1")  # a reprint is no repeat
    assert statement.status == 200 and "20.50" in pdf_text(statement.body)

    refused = document(seller, "print_account_statement", {"account": number})
    assert refused.status == 403 and refused.json()["error"]["code"] == "not_allowed"
    unknown = document(cashier, "print_player_ticket", {"account": "1234"})
    assert unknown.status == 409 and "12 digits" in unknown.json()["error"]["message"]
    missing = document(cashier, "print_player_ticket", {})
    assert missing.status == 400 and missing.json()["error"]["code"] == "bad_arguments"
    # Only a command that makes a file is served here: a load is not given through this door.
    load = document(cashier, "load_credit", {"account": number, "amount_cents": 100, "desk": "desk-1"})
    assert load.status == 400 and load.json()["error"]["code"] == "unknown_command"
    foreign = cashier.request("POST", "/api/document", json.dumps({"id": "d9", "command": "print_player_ticket",
                                                                    "args": {"account": number}}),
                              headers={"Origin": "https://evil.example"})
    assert foreign.status == 403
    assert FakeBrowser(cashier.site).post_json("/api/document", {"id": "d1", "command": "print_player_ticket",
                                                                 "args": {"account": number}}).status == 401
    assert sum(1 for _ in journal.records()) == records  # printing journals nothing
    assert document_name("print_account_statement", {"account": "6072 0102-0601"}) == \
        "account-statement-607201020601.pdf"


@pytest.mark.req("R92.5", "R78", "R80")
def test_the_snapshot_offers_choices_and_the_picture_holds_the_drawers_and_visitors(desk) -> None:
    cashier, _, _, view = desk
    snapshot = cashier.request("GET", "/api/state").json()
    assert snapshot["choices"]["method"] == ["cash", "transfer", "cheque"]
    assert snapshot["choices"]["medium"] == ["card", "ticket"]
    commands = {c["name"]: c for c in snapshot["commands"]}
    assert commands["print_player_ticket"]["document"] and not commands["load_credit"]["document"]
    picture = snapshot["view"]
    assert picture["desks"] == [
        {"desk": "desk-1", "open": True, "float_cents": 10_000, "opened_by": "carla", "held_by": "carla",
         "cents": 10_000},
        {"desk": "desk-2", "open": False, "cents": 0},
    ]
    assert picture["visitors"] == [{"number": 1, "name": "Anna Vidal", "account": False, "left": False}]
    cashier.command("open_player_account", {"visitor": 1, "medium": "card", "pin": "4821"}, "c2")
    assert view.console()["visitors"][0]["account"] is True
    cashier.command("reconcile_cash_desk", {"desk": "desk-1", "counted_cents": 9_990}, "c3")
    closed = view.console()["desks"][0]
    assert closed["open"] is False and closed["difference_cents"] == -10 and closed["cents"] == 9_990

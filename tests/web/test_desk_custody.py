"""Desk custody through the console's command channel: an open cash desk is worked by the
cashier who opened it alone, and changes hands only by a journaled hand-over (R80.4: the
table chief standing in for the cashier)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.config import StaffMember
from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule, cash_account
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.store.database import open_database
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel
from tests.web.conftest import _HASH, STAFF, FakeBrowser

#: The hall's staff: two cashiers besides the usual ones.
CUSTODY_STAFF = {**STAFF, "cris": Role.CASHIER}


@dataclass
class Desks:
    journal: Journal
    ledger: LedgerModule
    view: HallView
    people: dict[str, FakeBrowser]
    account: str

    def records(self) -> int:
        return sum(1 for _ in self.journal.records())

    def command(self, who: str, command: str, args: dict[str, Any], request: str) -> dict[str, Any]:
        return self.people[who].command(command, args, request).json()


@pytest.fixture
def desks(tmp_path: Path) -> Desks:
    clock = Clock()
    clock.advance(1_780_000_000)
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, [])
    CashierModule(core, ledger, admission, ["desk-1", "desk-2"], hall_name="Test hall",
                  staff={name: str(role) for name, role in CUSTODY_STAFF.items()})
    view = HallView("Test hall", desks=["desk-1", "desk-2"])
    core.add_view(view)
    sign_ins = SignIns(StaffDirectory(StaffMember(n, r, _HASH) for n, r in CUSTODY_STAFF.items()), clock)
    channel = CommandChannel(core)
    hub = LiveHub(view, channel, sign_ins)
    core.observers.append(hub.record_committed)
    site = build_site(hub=hub, sign_ins=sign_ins, channel=channel, authenticate=inline_authenticate(sign_ins),
                      secure_cookie=False)
    people = {name: FakeBrowser(site) for name in ("carla", "cris", "tomas", "rosa", "admin", "adam")}
    for name, browser in people.items():
        assert browser.sign_in(name).status == 200
    assert people["admin"].command("import_banned_list", {"content": "document,name,until\nB1,Joan Banned,\n",
                                                          "source": "craj.csv"}).status == 200
    assert people["adam"].command("admit_visitor", {"name": "Anna Vidal", "document": "12345678A", "birth_date": "1980-01-01"}).status == 200
    carla = people["carla"]
    assert carla.command("open_cash_desk", {"desk": "desk-1", "float_cents": 10_000}, "c1").json()["ok"]
    assert carla.command("open_player_account", {"visitor": 1, "medium": "ticket", "pin": "4821"}, "c2").json()["ok"]
    account = next(r for r in view.recent if r["type"] == "player_account_opened")["payload"]["account"]
    assert carla.command("load_credit", {"account": account, "amount_cents": 5_000, "desk": "desk-1"}, "c3").json()["ok"]
    return Desks(journal, ledger, view, people, account)


def test_N12_a_second_cashier_cannot_load_pay_or_close_another_cashiers_open_desk(desks: Desks) -> None:
    """cris opens no desk of his own and tries carla's: every move of its cash is refused, naming carla,
    and nothing is written; carla's desk still counts to the cent."""
    cris_opens = desks.command("cris", "open_cash_desk", {"desk": "desk-2", "float_cents": 0}, "k0")
    assert cris_opens["ok"]
    before, drawer = desks.records(), desks.ledger.balance(cash_account("desk-1"))
    attempts = [
        ("load_credit", {"account": desks.account, "amount_cents": 1_000, "desk": "desk-1"}),
        ("cash_out", {"account": desks.account, "amount_cents": 5_000, "desk": "desk-1", "method": "cash",
                      "reference": ""}),
        ("reconcile_cash_desk", {"desk": "desk-1", "counted_cents": 0}),
        ("move_cash", {"from_desk": "desk-1", "to_desk": "desk-2", "amount_cents": 1_000}),
        ("hand_over_cash_desk", {"desk": "desk-1", "to": "cris", "to_role": "cashier", "reason": "mine now"}),
    ]
    for number, (command, args) in enumerate(attempts):
        answer = desks.command("cris", command, args, f"k{number + 1}")
        assert not answer["ok"], command
        assert answer["error"]["message"].startswith("cash desk desk-1 is in the hands of carla; only carla works it"), \
            answer
    assert desks.records() == before, "a refusal was journaled"
    assert desks.ledger.balance(cash_account("desk-1")) == drawer == 15_000
    assert desks.ledger.ledger.balances()[f"player:{desks.account}"] == 5_000


@pytest.mark.req("R80.4")
def test_N12_the_table_chief_works_a_desk_only_once_it_is_handed_over_and_journaled(desks: Desks) -> None:
    refused = desks.command("tomas", "load_credit", {"account": desks.account, "amount_cents": 500, "desk": "desk-1"},
                            "t1")
    assert not refused["ok"] and "in the hands of carla" in refused["error"]["message"]
    wrong = desks.command("carla", "hand_over_cash_desk",
                          {"desk": "desk-1", "to": "sam", "to_role": "table_chief", "reason": "break"}, "h0")
    assert not wrong["ok"] and wrong["error"]["message"] == "sam is the hall's seller caller, not its table chief"
    handed = desks.command("carla", "hand_over_cash_desk",
                           {"desk": "desk-1", "to": "tomas", "to_role": "table_chief", "reason": "carla's break"}, "h1")
    assert handed["ok"]
    record = next(r for r in reversed(desks.view.recent) if r["type"] == "cash_desk_handed_over")["payload"]
    assert (record["desk"], record["from_holder"], record["to_holder"], record["to_role"], record["reason"]) == (
        "desk-1", "carla", "tomas", "table_chief", "carla's break")
    assert desks.command("tomas", "load_credit", {"account": desks.account, "amount_cents": 500, "desk": "desk-1"},
                         "t2")["ok"]
    back = desks.command("carla", "load_credit", {"account": desks.account, "amount_cents": 500, "desk": "desk-1"},
                         "c9")
    assert not back["ok"] and "in the hands of tomas" in back["error"]["message"]
    # carla is away longer: the room chief hands the desk over to cris, who counts it at the close.
    assert desks.command("rosa", "hand_over_cash_desk",
                         {"desk": "desk-1", "to": "cris", "to_role": "cashier", "reason": "carla went home"}, "r1")["ok"]
    closed = desks.command("cris", "reconcile_cash_desk", {"desk": "desk-1", "counted_cents": 15_500}, "k1")
    assert closed["ok"]
    reconciled = next(r for r in reversed(desks.view.recent) if r["type"] == "cash_desk_reconciled")["payload"]
    assert (reconciled["expected"], reconciled["counted"], reconciled["difference"]) == (15_500, 15_500, 0)
    assert desks.ledger.ledger.total() == 0

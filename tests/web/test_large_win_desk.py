"""R75.6 at the cashier's desk, through the console's command channel: a paper winner's payment that
reaches 15,000 EUR in the game is refused until the cashier records the identity document the winner
shows, and paid once it is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.config import StaffMember
from hall_server.hall.roles import Role
from hall_server.store.database import open_database
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel
from tests.audit.halls import SAFE, AuditHall
from tests.reports.large_win_games import DAY, PAPER_RULES, WINNER, paid_to, paper_jackpot_game
from tests.web.conftest import _HASH, FakeBrowser


@pytest.mark.req("R75.6")
def test_R75_6_the_cashier_pays_a_paper_winner_of_15000_euros_only_with_the_identity_recorded(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_793_000_000)
    journal = Journal(open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=tmp_path / "journal.head")
    hall = AuditHall(journal, clock, PAPER_RULES)
    view = HallView("Test hall", desks=["desk1", SAFE])
    hall.core.add_view(view)
    sign_ins = SignIns(StaffDirectory([StaffMember("eva", Role.CASHIER, _HASH)]), clock)
    channel = CommandChannel(hall.core)
    hub = LiveHub(view, channel, sign_ins)
    hall.core.observers.append(hub.record_committed)
    cashier = FakeBrowser(build_site(hub=hub, sign_ins=sign_ins, channel=channel,
                                     authenticate=inline_authenticate(sign_ins), secure_cookie=False))
    assert cashier.sign_in("eva").status == 200
    hall.prepare()  # eva opened the desks: the safe is in her hands
    hall.open_day(DAY)
    game_id = paper_jackpot_game(hall)

    before = len(hall.records())
    refused = cashier.command("pay_prizes", {"desk": SAFE}, "pay-1").json()
    assert refused["ok"] is False and refused["error"]["code"] == "refused"
    assert f"paper card {WINNER} wins" in refused["error"]["message"]
    assert "identify_paper_winner" in refused["error"]["message"] and "(R75.6)" in refused["error"]["message"]
    assert len(hall.records()) == before

    identified = cashier.command("identify_paper_winner", {"cards": [WINNER], "document": "X1234567",
                                                           "name": "Joana Puig"}, "id-1").json()
    assert identified["ok"] is True and [r["type"] for r in identified["records"]] == ["prize_winner_identified"]
    paid = cashier.command("pay_prizes", {"desk": SAFE}, "pay-2").json()
    assert paid["ok"] is True and "prize_paid" in {r["type"] for r in paid["records"]}
    records = hall.records()
    (record,) = [r for r in records if r.type == "prize_winner_identified"]
    assert (record.payload["actor"]["name"], record.payload["actor"]["role"]) == ("eva", "cashier")
    assert record.payload["total_cents"] == paid_to(records, game_id, {WINNER}) >= 1_700_000
    # The desk sees the record it made (the console's recent records).
    shown = [r for r in view.recent if r["type"] == "prize_winner_identified"]
    assert shown and shown[0]["payload"]["cards"] == [WINNER]

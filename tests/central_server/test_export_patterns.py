"""A network game with other winning patterns than the line and the bingo (R93.11) exports, verifies and is
replayed card by card at the regulator's receiver (R92.3, R92.7, R93.13).

A central server built in this process (real TLS, real SQLite, the game on a test clock) plays a game of the
line, the bingo, two lines and the four corners, with cards bought by two halls and one hall's terminal
declared failed after the close (the house refunds its cards, R96.3).  Its day is exported as ``bingo
audit export`` writes it (``bingo-replay/4``: ``rules.patterns``, the tax net of the refund), ``bingo audit
verify``'s check passes on it, and a receiver fed the central server's records and the day's signed audit
report replays it card by card: verified, no alert.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from central_server.audit import export_day
from central_server.config import load_config
from protocol.audit import central_rebuild
from protocol.audit.report import AuditReport
from protocol.chain import sealed_form
from protocol.regulator_feed import MAX_BATCH, Batch, Hello, Report
from protocol.replay import render, replay, parse_scenario
from protocol.settlement import tax_cents
from regulator import store as regulator_store
from regulator.days import VERIFIED
from regulator.receiver import Receiver
from regulator.reports import ReportInbox
from server_kit.audit_verify import verify_export
from server_kit.journal.sql import Journal
from server_kit.pki import PkiFolder, issue_certificate
from server_kit.pki.folder import load_report_signing
from server_kit.reports.cms import ReportSigner
from tests.central_server.conftest import start_central, stop_central
from tests.central_server.support import until
from tests.regulator.registration import register

pytestmark = [pytest.mark.integration]

OTHER_PATTERNS = """
[[games.prizes]]
pattern = { name = "two_lines", rows = 2 }
basis_points = 500
[[games.prizes]]
pattern = { name = "four_corners", positions = [[0, 0], [0, 4], [2, 0], [2, 4]] }
basis_points = 1000
"""


def receiver_at(folder: Path, ca: Path, central_key: Any, signer: str) -> tuple[Receiver, ReportInbox]:
    """A receiver in ``folder``, the central server registered with its journal key and report signer."""
    engine = regulator_store.open_database(f"sqlite:///{folder / 'regulator.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head")
    journal.initialise(1_000, {"receiver": "regulator"})
    receiver = Receiver(regulator_store.Store(engine), clock=lambda: 9_000, journal=journal, home=folder)
    inbox = ReportInbox(folder, ca, journal, lambda: 9_000, receiver.alert, receiver.days)
    register(receiver, "central", central_key, signer)
    register(inbox, "central", central_key, signer)
    return receiver, inbox


@pytest.mark.req("R93.11", "R93.13", "R92.3", "R92.7", "R96.3", "R98")
@pytest_twisted.ensureDeferred
async def test_a_game_of_other_patterns_with_a_refund_after_the_close_exports_verifies_and_is_replayed_at_the_receiver(
        tmp_path: Path) -> None:
    central = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}", extra_prizes=OTHER_PATTERNS)
    try:
        one, two = await central.hall("hall-1"), await central.hall("hall-2")
        await central.open_sale()
        await one.buy("b1", terminal="T1", count=10)
        await one.buy("b2", terminal="T2", count=8, pct=50)
        await two.buy("b3", hall="hall-2", terminal="T9", player="q", count=12)
        await central.close_sale()
        failed = await one.call("terminal_failed", request_id="fail-T1", game_id="net-1", hall_id="hall-1",
                                terminal_id="T1", reason="the screen went dark", declared_by="room chief M. Puig")
        assert (failed["refunded_cents"], failed["paid_by"]) == (1_000, "house")
        while central.game.phase.value != "closed":
            await central.next_ball()
        await until(lambda: central.records("central_game_closed"), "the game's close to be committed")
        closed = central.records("central_game_closed")[-1]
        day = datetime.datetime.fromtimestamp(closed.time_ms / 1000, datetime.timezone.utc).date().isoformat()
        config = load_config(central.server.config.home / "central.toml")
        key = central.server.journal.key
        records = list(central.server.journal.records())
    finally:
        await stop_central(central)

    # `bingo audit export` and `bingo audit verify`.
    out = tmp_path / "audit"
    made = export_day(config, day, out)
    scenario, result = made.scenario, made.result
    assert scenario["format"] == "bingo-replay/4" and result["format"] == "bingo-replay-result/4"
    assert [p["name"] for p in scenario["rules"]["patterns"]] == ["two_lines", "four_corners"]
    (game,) = result["games"]
    assert list(game["prizes"]) == ["line", "bingo", "two_lines", "four_corners"]
    assert game["sales_cents"] == 1_000 + 400 + 1_200 and game["refunded_after_close_cents"] == 1_000
    assert game["tax_cents"] == tax_cents(1_600)  # on the amounts staked, net of the house's refund (R98)
    assert render(replay(parse_scenario(scenario))) == (out / "result.json").read_text()
    verified = verify_export(out, {"central": central_rebuild.rebuild})
    assert verified.games == 1 and verified.sales_cents == 2_600

    # The regulator's receiver: the central server's records, then the day's signed audit report.
    pki_dir = central.pki_dir
    issue_certificate(pki_dir, "report-signing", "central-reports")
    folder = PkiFolder(pki_dir)
    signer = ReportSigner(*load_report_signing(folder.cert("central-reports"), folder.key("central-reports")))
    (tmp_path / "regulator").mkdir()
    receiver, inbox = receiver_at(tmp_path / "regulator", pki_dir / "ca.pem", key, "central-reports")
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    receiver.hello(Hello("central", pem), "central")
    sealed = [sealed_form(r) for r in records]
    for at in range(0, len(sealed), MAX_BATCH):
        receiver.batch(Batch("central", tuple(sealed[at:at + MAX_BATCH])), "central")
    report = AuditReport.of_export(day, scenario, result, made.records)
    files = dict(report.files())
    files.update({f"{name}.p7s": signer.sign(data) for name, data in list(files.items())})
    inbox.take(Report("central", report.name, files), "central")
    (verdict,) = receiver.days.verdicts()
    assert (verdict.day, verdict.verdict, list(verdict.games)) == (day, VERIFIED, ["net-1"]), verdict.detail
    assert receiver.store.alerts() == []
    assert json.loads(files["result.json"]) == result

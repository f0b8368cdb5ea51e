"""A terminal declared failed by its hall's staff (R96.3 and its ruling), over the communications
endpoint of a central server built in this process (real TLS, real SQLite, the games on a test clock).

The ruling: the refund covers that game's cards that have won nothing, once, from the house once
the sale has closed, the prizes announced standing.  A declaration received once a ball is known
refunds nothing (the cards play on, held by the central server); one received before the first
ball is refunded by the house and the game stays in the day's audit export, which verifies.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import pytest_twisted

from central_server.audit import export_day
from central_server.config import load_config
from protocol.audit import central_rebuild
from protocol.records.central import CentralStakeReturned, CentralTerminalFailed
from protocol.settlement import tax_cents
from server_kit.amp.commands import error_class
from server_kit.audit_verify import verify_export
from tests.central_server.conftest import Running
from tests.central_server.support import until

pytestmark = [pytest.mark.integration]


def declare(terminal: str = "T1") -> dict[str, str]:
    return {"request_id": f"fail-{terminal}", "game_id": "net-1", "hall_id": "hall-1", "terminal_id": terminal,
            "reason": "the screen went dark", "declared_by": "room chief M. Puig"}


@pytest.mark.req("R96.3")
@pytest_twisted.ensureDeferred
async def test_N6_a_failure_declared_once_balls_are_known_refunds_nothing_and_the_cards_play_on(
        central: Running) -> None:
    """10 cards, 2 balls, then declared failed: refused, where a refund would give 10.00 EUR back from
    the house while the 7.00 EUR of prizes carried on."""
    hall = await central.hall("hall-1")
    await central.open_sale()
    bought = await hall.buy("b1", terminal="T1", count=10)
    assert bought["amount_cents"] == 1_000
    await central.close_sale()
    await central.next_ball()
    await central.next_ball()
    events = len(central.game.events)
    with pytest.raises(error_class("not_now")) as refused:
        await hall.call("terminal_failed", **declare())
    assert "its draw had started when the failure was declared" in str(refused.value)
    assert len(central.game.events) == events and central.game.cards_in_play == 10
    assert central.records(CentralTerminalFailed.type) == [] and central.records(CentralStakeReturned.type) == []
    while central.game.phase.value != "closed":
        await central.next_ball()
    assert "bingo" in central.game.prizes and not central.game.refunded_cards


@pytest.mark.req("R96.3", "R98")
@pytest_twisted.ensureDeferred
async def test_N6_a_failure_declared_before_the_first_ball_is_refunded_by_the_house_and_stays_in_the_export(
        central: Running, tmp_path: Path) -> None:
    one, two = await central.hall("hall-1"), await central.hall("hall-2")
    await central.open_sale()
    await one.buy("b1", terminal="T1", count=10)
    await two.buy("b2", hall="hall-2", terminal="T9", player="q", count=6, pct=50)
    await central.close_sale()
    failed = await one.call("terminal_failed", **declare())
    assert (failed["refunded_cards"], failed["refunded_cents"], failed["paid_by"]) == (10, 1_000, "house")
    again = await one.call("terminal_failed", **declare())
    assert again == failed  # once: the same declaration is answered again, nothing more is refunded
    assert central.game.sale.sales_cents == 1_300  # type: ignore[union-attr]  # the prizes announced stand
    while central.game.phase.value != "closed":
        await central.next_ball()
    assert {w.hall_id for w in central.game.winners} == {"hall-2"}

    await until(lambda: central.records("central_game_closed"), "the game's close to be committed")
    closed = central.records("central_game_closed")[-1]
    day = datetime.datetime.fromtimestamp(closed.time_ms / 1000, datetime.timezone.utc).date().isoformat()
    out = tmp_path / "audit"
    made = export_day(load_config(central.server.config.home / "central.toml"), day, out)
    assert made.games == ("net-1",) and made.left_out == ()
    (game,) = made.scenario["sessions"][0]["games"]
    assert [c["id"] for c in game["refunded_after_close"]] == [f"hall-1/V1-{n}" for n in range(1, 11)]
    assert all(not c["id"].startswith("hall-1/") for c in game["cards"])
    (recorded,) = made.result["games"]
    assert recorded["sales_cents"] == 1_300 and recorded["refunded_after_close_cents"] == 1_000
    # Taxed on the amounts staked, net of the house's refund, as the daily and yearly reports take it (R98):
    # bingo-replay/3, the day's one session numbered 1.
    assert made.result["format"] == "bingo-replay-result/3" and recorded["session"] == 1
    assert recorded["tax_cents"] == tax_cents(300)
    verified = verify_export(out, {"central": central_rebuild.rebuild})
    assert verified.games == 1 and verified.sales_cents == 1_300

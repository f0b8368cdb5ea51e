"""A real hall paused (``SIGSTOP``) across its terminals' sale close (R93.1, R93.8; docs/terminals.md,
"A hall that was paused").

Terminal K1 sends twelve purchases in the sale time to a hall that is stopped; the hall is let
go on once the sale time is over, reads them late, and decides each as of its arrival (the
kernel's receive time, server_kit/received.py): all twelve are bought, and their records say
when they were received.  Terminal K2 sends its purchase during the same pause but after the
close: refused.  A purchase sent once the hall runs again is refused as well.
"""

from __future__ import annotations

from contextlib import closing
import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support.waiting import WAIT, wait_until
from tests.terminals.test_kiosk_browser import Staff, payload, player
from tests.web.conftest import HallProcess, WireSocket

pytestmark = [pytest.mark.integration]

PIN = "4821"
PURCHASES = 12
#: The terminals' sale time: room for the purchases to be sent in it on a loaded machine.
SALE_S = 20


def terminal(hall: HallProcess, staff: Staff, name: str, account: str) -> WireSocket:
    """Terminal ``name`` enrolled, connected with its certificate, and ``account`` signed in on it."""
    token = staff("rosa", "enrol_terminal", terminal=name, place=f"row {name}")["result"]["token"]
    socket = WireSocket(hall, "/kiosk/ws", certificate=("terminal", name))
    assert socket.accepted, socket.rejected_status
    socket.send({"v": 1, "seq": 1, "type": "hello", "terminal": name, "token": token})
    socket.until(lambda m: m["type"] == "welcome")
    socket.send({"v": 1, "seq": 2, "type": "sign_in", "account": account, "pin": PIN})
    socket.until(lambda m: m["type"] == "signed_in")
    return socket


def buy(socket: WireSocket, account: str, seq: int, request: str) -> None:
    socket.send({"v": 1, "seq": seq, "type": "buy", "game": "hall", "game_id": "", "account": account, "quantity": 1,
                 "stake_pct": 100, "request": request})


def answer(socket: WireSocket, seq: int) -> dict[str, Any]:
    return socket.until(lambda m: m["type"] in ("bought", "error") and m.get("in_reply_to") == seq, timeout=WAIT)


def bought_records(folder: Path) -> list[tuple[int, dict[str, Any]]]:
    with closing(sqlite3.connect(f"file:{folder / 'hall.sqlite3'}?mode=ro", uri=True)) as database, database:
        rows = database.execute("SELECT time_ms, payload FROM journal WHERE type = 'virtual_cards_bought' ORDER BY seq")
        return [(time_ms, json.loads(text)) for time_ms, text in rows]


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    hall = HallProcess(tmp_path_factory.mktemp("paused-hall")).start()
    seen: dict[str, Any] = {"folder": hall.folder}
    try:
        staff = Staff(hall)
        staff.open_the_session()
        first, second = player(staff, "X2000001", 5_000), player(staff, "X2000002", 5_000)
        staff("sam", "announce_sale", series=1001)
        k1, k2 = terminal(hall, staff, "K1", first), terminal(hall, staff, "K2", second)
        (opened,) = staff("sam", "open_terminal_sale", seconds=SALE_S)["records"]
        closes_at_ms = seen["closes_at_ms"] = payload(hall, opened["seq"])["closes_at_ms"]
        assert hall.process is not None
        hall.process.send_signal(signal.SIGSTOP)
        try:
            for n in range(PURCHASES):
                buy(k1, first, 3 + n, f"K1-paused-{n}")
            sent_ms = now_ms()
            assert sent_ms < closes_at_ms, (
                f"the purchases were sent {sent_ms - closes_at_ms} ms after the sale time: the machine was too slow "
                f"for a {SALE_S} s sale"
            )
            wait_until(lambda: now_ms() > closes_at_ms + 1000, SALE_S + WAIT, "the sale time to end")
            buy(k2, second, 3, "K2-after-the-close")
        finally:
            hall.process.send_signal(signal.SIGCONT)
        seen["k1"] = [answer(k1, 3 + n) for n in range(PURCHASES)]
        seen["k2"] = answer(k2, 3)
        buy(k1, first, 3 + PURCHASES, "K1-after-the-pause")
        seen["after"] = answer(k1, 3 + PURCHASES)
        seen["records"] = bought_records(hall.folder)
        k1.close()
        k2.close()
    finally:
        hall.stop()
    yield seen


@pytest.mark.req("R93.1")
def test_F6_purchases_sent_in_the_sale_time_to_a_paused_hall_are_bought_as_of_their_arrival(
    paused: dict[str, Any],
) -> None:
    assert [m["type"] for m in paused["k1"]] == ["bought"] * PURCHASES, [m.get("message") for m in paused["k1"]]
    closes_at_ms = paused["closes_at_ms"]
    records = [(time_ms, p) for time_ms, p in paused["records"] if p["request"].startswith("K1-paused-")]
    assert len(records) == PURCHASES
    for time_ms, p in records:
        # Decided after the close (the hall read them late), as of their arrival before it.
        assert time_ms >= closes_at_ms and p["received_ms"] < closes_at_ms, (time_ms, p)


@pytest.mark.req("R93.1", "R93.8")
def test_F6_a_purchase_that_reached_the_paused_hall_after_the_close_is_refused(paused: dict[str, Any]) -> None:
    assert paused["k2"]["type"] == "error" and "sale time for terminals is over" in paused["k2"]["message"]
    assert paused["after"]["type"] == "error" and "sale time for terminals is over" in paused["after"]["message"]
    assert not [p for _, p in paused["records"] if not p["request"].startswith("K1-paused-")]

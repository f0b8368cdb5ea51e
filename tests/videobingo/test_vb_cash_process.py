"""Cash into a video bingo machine of a real ``bingo hall serve`` over TLS: the station's word is not cash.

The room chief enrols the machine's station and its cash device on the console; the device is
``bingo vb cash-device`` (a key in a folder of its own, as in the demo), which signs each bill
and relays the note through the station's own certified connection.  The station that says
"cash came in" with no note (the attack: 10,000 EUR credited with nothing inserted) is refused.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from tests.crash.wire import LiveSocket, console
from tests.videobingo.paytables import EXAMPLES
from tests.videobingo.test_vb_power_loss import MACHINE, VIDEOBINGO, _Certified
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration]
BINGO = [sys.executable, "-c", "from hall_server.cli import main; main()"]


def bingo(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BINGO, *arguments], capture_output=True, text=True, timeout=120)


@pytest.mark.req("R3.5.d")
def test_N5_over_tls_only_the_cash_devices_signed_note_puts_cash_on_a_station(tmp_path: Path) -> None:
    folder = tmp_path / "hall"
    folder.mkdir()
    hall = HallProcess(folder)
    with open(hall.config, "a") as config:
        config.write(VIDEOBINGO.format(paytable=EXAMPLES / "vb-classic-3x5.json"))
    hall.start()
    try:
        made = bingo("vb", "cash-device", "new", str(tmp_path / "cabinet"), "--machine", MACHINE)
        assert made.returncode == 0, made.stderr
        key = re.search(r"public_key=([0-9a-f]{64})", made.stdout)
        assert key is not None, made.stdout
        chief = console(hall, "rosa")
        chief.send({"id": "s1", "command": "enrol_vb_station", "args": {"machine": MACHINE, "station": 1}})
        token = chief.answer("s1")["result"]["token"]
        chief.send({"id": "d1", "command": "enrol_vb_cash_device",
                    "args": {"machine": MACHINE, "public_key": key.group(1)}})
        assert chief.answer("d1")["ok"]

        station = LiveSocket(cast(HallProcess, _Certified(hall, f"{MACHINE}.1")), "/vb/ws")
        station.send({"type": "hello", "protocol": "bingo-vb-machine/1", "machine": MACHINE, "station": 1,
                      "token": token})
        station.send({"type": "credit_in", "source": "cash", "amount_cents": 1_000_000, "request": "lie"})
        seen: list[dict[str, Any]] = []

        def answered(request: str) -> bool:
            seen[:] = [r.message for r in station.messages if r.message.get("request") == request]
            return bool(seen)

        station.wait_for(lambda: answered("lie"), 30, "the hall's answer to the station's word")
        assert seen[0]["type"] == "error" and seen[0]["code"] == "cash_device", seen[0]
        station.close()

        # The cabinet: its device signs the bill, the note goes through the station's certified connection.
        bundle = tmp_path / "station-bundle"
        (bundle / "certs").mkdir(parents=True)
        (bundle / "keys").mkdir()
        certificate, private = hall.certificate("terminal", f"{MACHINE}.1")
        shutil.copy(folder / "pki" / "ca.pem", bundle / "ca.pem")
        shutil.copy(certificate, bundle / "certs" / f"{MACHINE}.1.pem")
        shutil.copy(private, bundle / "keys" / f"{MACHINE}.1.key")
        url = f"wss://localhost:{hall.port}/vb/ws"
        inserted = bingo("vb", "cash-device", "insert", str(tmp_path / "cabinet"), "--machine", MACHINE,
                         "--station", "1", "--amount-cents", "2000", "--url", url, "--token", token,
                         "--bundle", str(bundle))
        assert inserted.returncode == 0, inserted.stderr
        assert "note 1: 2000 cents taken in on vb-1.1; its credit is 2000 cents" in inserted.stdout

        chief.send({"id": "r1", "command": "vb_reconcile", "args": {}})
        reconciled = chief.answer("r1")["result"]
        assert reconciled["agree"] is True
        assert reconciled["cash_boxes"][MACHINE]["meters_cents"] == 2_000
        chief.close()
    finally:
        hall.stop()

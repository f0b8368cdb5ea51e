"""The pots in a default hall: the generated ``hall.toml`` and ``docs/examples/hall.toml`` offer the
superbingo, the megabingo and the jackpot commented out (R89-R91); uncommented, a real hall plays
with them, and commented, it plays without (line + bingo meet the 70% floor alone, R88.1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text, load_config
from tests.support.waiting import WAIT, wait_until
from tests.videobingo.test_vb_power_loss import balances, journal_records
from tests.web.conftest import _HASH, HallProcess

POTS = {"superbingo_bp": "200", "megabingo": "true", "jackpot": "true"}
EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "hall.toml"


def uncommented(text: str) -> str:
    """``text`` with the pots' lines uncommented, each of them present exactly once."""
    for key, value in POTS.items():
        line = f"# {key} = {value}\n"
        assert text.count(line) == 1, f"the pots' line {line.strip()!r} is missing"
        text = text.replace(line, f"{key} = {value}\n")
    return text


@pytest.mark.parametrize("source", ["generated", "example"])
def test_pots_are_offered_off_and_read_when_uncommented(tmp_path: Path, source: str) -> None:
    text = (default_config_text("Hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF]) if source == "generated"
            else EXAMPLE.read_text())
    assert re.search(r"R89.*R90.*R91", text, re.S) and "200 to 500 basis points" in text and "40, 41 or 42" in text
    (tmp_path / "off.toml").write_text(text)
    off = load_config(tmp_path / "off.toml").prize_rules
    assert (off.superbingo_bp, off.megabingo, off.jackpot) == (0, False, False)
    (tmp_path / "on.toml").write_text(uncommented(text))
    on = load_config(tmp_path / "on.toml").prize_rules
    assert (on.superbingo_bp, on.megabingo, on.jackpot) == (200, True, True)
    assert on.payout_bp == 1500 + 5500 + 200 + 100 + 1000  # within 70%-100%, as check() found


@pytest.mark.integration
@pytest.mark.req("R89", "R90", "R91")
def test_pots_cannot_be_used_in_a_default_hall_no_more(tmp_path: Path) -> None:
    """The generated file, its pots uncommented: the demo's room chief puts them in play, each game's sale
    funds all three, and the superbingo and the jackpot are announced for the game."""
    hall = HallProcess(tmp_path, demo=True, demo_pace=0.05)
    hall.config.write_text(uncommented(hall.config.read_text()))
    hall.start()
    seen: dict[str, Any] = {}

    def funded() -> bool:
        records = journal_records(tmp_path)
        money = balances(records)
        announced = [r["payload"] for r in records if r["type"] == "pots_announced"]
        seen.update(pots={k: v for k, v in money.items() if k.startswith("pot:")}, announced=announced)
        return bool(announced) and all(money.get(f"pot:{pot}", 0) > 0
                                       for pot in ("superbingo", "megabingo", "jackpot_accumulated", "jackpot_reserve"))

    try:
        wait_until(funded, 4 * WAIT, "a game's sale closed with the three pots funded", seen=lambda: seen, interval=0.5)
    finally:
        hall.stop()
    first = seen["announced"][0]
    assert first["superbingo_limit"] is not None and first["jackpot_threshold"] in (40, 41, 42), first

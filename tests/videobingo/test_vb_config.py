"""``[videobingo]`` in hall.toml: the machines, the hall's seats and zone, the jackpots; each mistake one line."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.task import Clock

from hall_server.config import ConfigError, default_config_text, parse_config
from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.videobingo import JackpotRule
from hall_server.modules import build_videobingo
from server_kit.boot import StartRefused
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal
from tests.videobingo.paytables import EXAMPLES

MACHINE = {"id": "vb-1", "model": "classic", "paytable": "classic.json", "credit_cents": 20, "stations": 4,
           "zone": "machines", "linked": True, "jackpot_share_bp": 150, "jackpot_pattern": "bingo",
           "jackpot_balls": 30}


def data(**videobingo: Any) -> dict[str, Any]:
    document = tomllib.loads(default_config_text("Sala", []))
    document["videobingo"] = {"seats": 40, "machine": [dict(MACHINE)], **videobingo}
    return document


def test_the_machines_are_read_with_their_paytable_under_the_configuration_folder() -> None:
    config = parse_config(data(superjackpot={"share_bp": 50, "pattern": "top line", "balls": 12}), base=Path("/etc/hall"))
    vb = config.videobingo
    assert vb is not None and vb.seats == 40 and vb.room_zone == "bingo room" and vb.one_station_per_player
    (machine,) = vb.machines
    assert machine.paytable == Path("/etc/hall/classic.json") and machine.stations == 4 and machine.linked
    assert machine.jackpot == JackpotRule(150, "bingo", 30)
    assert vb.superjackpot == JackpotRule(50, "top line", 12) and vb.min_rtp_bp == 8000


def test_a_hall_without_the_table_has_no_machines() -> None:
    assert parse_config(tomllib.loads(default_config_text("Sala", []))).videobingo is None


@pytest.mark.parametrize("change, why", [
    ({"seats": -1}, r"videobingo\.seats: counts the seats of traditional bingo, not -1"),
    ({"min_rtp_bp": 7999}, r"videobingo\.min_rtp_bp: is 8000 \(80%\) to 10000, not 7999"),
    ({"colour": "red"}, r"videobingo\.colour: is not a setting"),
    ({"machine": [{**MACHINE, "id": "vb 1"}]}, r"videobingo\.machine\[0\]\.id: is 1-32 letters"),
    ({"machine": [{**MACHINE, "credit_cents": 0}]}, r"credit_cents: a credit is worth 1 to 10000 cents, not 0"),
    ({"machine": [{**MACHINE, "credit_cents": 0.2}]}, r"credit_cents: is int, not 0.2"),
    ({"machine": [{**MACHINE, "stations": 0}]}, r"stations: a machine has at least one station, not 0"),
    ({"machine": [{**MACHINE, "jackpot_share_bp": 5000}]}, r"jackpot\.share_bp: is the share of the stakes"),
    ({"machine": [MACHINE, MACHINE]}, r"videobingo\.machine: two machines have the same id"),
    ({"machine": [{**MACHINE, "seats": 3}]}, r"videobingo\.machine\[0\]\.seats: is not a setting"),
])
def test_a_mistake_in_the_machines_configuration_is_one_line_naming_the_key(change: dict[str, Any], why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        parse_config(data(**change))


@pytest.mark.parametrize("text, why", [
    (None, r"video bingo machine vb-1: .*classic\.json: cannot be read: No such file or directory"),
    ('{"format": "bingo-vb-paytable/1"}', r"video bingo machine vb-1: .*classic\.json: name: is missing"),
])
def test_a_paytable_that_cannot_be_read_stops_the_start_with_one_line(
        tmp_path: Path, journal: Journal, clock: Clock, text: str | None, why: str) -> None:
    if text is not None:
        (tmp_path / "classic.json").write_text(text)
    config = parse_config(data(), base=tmp_path)
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    cashier = CashierModule(core, ledger, AdmissionModule(core, []), ["desk1"])
    with pytest.raises(StartRefused, match=why):
        build_videobingo(config, core, ledger, cashier)


def test_the_start_certifies_each_paytable_and_refuses_a_jackpot_pattern_it_lacks(
        tmp_path: Path, journal: Journal, clock: Clock) -> None:
    (tmp_path / "classic.json").write_bytes((EXAMPLES / "vb-classic-3x5.json").read_bytes())
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    cashier = CashierModule(core, ledger, AdmissionModule(core, []), ["desk1"])
    module = build_videobingo(parse_config(data(), base=tmp_path), core, ledger, cashier)
    assert module.machines["vb-1"].rtp.rtp_percent == "83.55" and module.machines["vb-1"].refused is None
    wrong = data(machine=[{**MACHINE, "jackpot_pattern": "full house"}])
    with pytest.raises(StartRefused, match="machine vb-1: the jackpot's pattern 'full house' is not in its paytable"):
        build_videobingo(parse_config(wrong, base=tmp_path), CommandCore(journal, clock, run_inline), ledger, cashier)

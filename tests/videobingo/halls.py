"""A hall core with video bingo machines for the tests: real SQLite journal, inline, on a task.Clock."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Iterator

from twisted.internet.task import Clock

from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.videobingo import MachineConfig, VideoBingoConfig, VideoBingoModule, load_machines
from protocol.videobingo.paytable import Paytable
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.sql import Journal
from terminals.vb_cash_device import CashDevice
from tests.hall.conftest import result
from tests.videobingo.paytables import EXAMPLES, example

CHIEF = Actor("rosa", Role.ROOM_CHIEF)
CASHIER = Actor("eva", Role.CASHIER)
DOOR = Actor("lluis", Role.ADMISSION)
ADMIN = Actor("ines", Role.ADMINISTRATOR)
CLASSIC = example("vb-classic-3x5")


def machine(machine_id: str, **changes: object) -> MachineConfig:
    base = MachineConfig(machine_id, "classic", EXAMPLES / "vb-classic-3x5.json", 20, 2, "machines")
    return replace(base, **changes)  # type: ignore[arg-type]


def config(*machines: MachineConfig, **changes: object) -> VideoBingoConfig:
    base = VideoBingoConfig(seats=40, room_zone="bingo room", machines=machines or (machine("vb-1"),))
    return replace(base, **changes)  # type: ignore[arg-type]


@dataclass
class Hall:
    core: CommandCore
    ledger: LedgerModule
    cashier: CashierModule
    vb: VideoBingoModule
    journal: Journal
    #: Each machine's simulated cash device, enrolled on first use (:func:`insert_cash`).
    devices: dict[str, CashDevice] = field(default_factory=dict)


def build_hall(journal: Journal, clock: Clock, vb_config: VideoBingoConfig, paytables: dict[str, Paytable] | None = None,
               seed: int = 7, recover: bool = True) -> Hall:
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, [])
    cashier = CashierModule(core, ledger, admission, ["desk1"])
    tables = {m.machine_id: (paytables or {}).get(m.machine_id, CLASSIC) for m in vb_config.machines}
    vb = VideoBingoModule(core, ledger, cashier, vb_config, load_machines(vb_config, tables), rng=random.Random(seed))
    if recover:
        core.recover()
    return Hall(core, ledger, cashier, vb, journal)


def requests() -> Iterator[str]:
    return (f"r{n}" for n in range(1, 10_000))


def count(journal: Journal) -> int:
    return len(list(journal.records()))


def player(hall: Hall, document: str = "12345678A", credit: int = 0) -> str:
    if hall.cashier.admission.state.banned_list is None:
        result(hall.cashier.admission.import_banned_list(ADMIN, "document,name,until\nB1000001,Joan Banned,\n", "craj.csv"))
    (visitor,) = result(hall.cashier.admission.admit_visitor(DOOR, "Anna Vidal", document, "1980-01-01"))
    (opened,) = result(hall.cashier.open_account(CASHIER, visitor.payload["number"], "ticket", "4821"))
    number = opened.payload["account"]
    if credit:
        if not hall.cashier.state.desks["desk1"].open:
            result(hall.cashier.open_desk(CASHIER, "desk1", 0))
        result(hall.cashier.load_credit(CASHIER, number, credit, "desk1"))
    return number




def cash_device(hall: Hall, machine_id: str) -> CashDevice:
    """Machine ``machine_id``'s cash device, enrolled by the room chief the first time it is asked for."""
    device = hall.devices.get(machine_id)
    if device is None:
        device = hall.devices[machine_id] = CashDevice(machine_id)
        result(hall.vb.enrol_cash_device(CHIEF, machine_id, device.public_key))
    return device


def insert_cash(hall: Hall, machine_id: str, station: int, amount_cents: int, request: str) -> dict:
    """Cash put into the machine: its cash device signs the note, the station relays it."""
    note = cash_device(hall, machine_id).insert(station, amount_cents)
    return result(hall.vb.credit_in(machine_id, station, "cash", amount_cents, request, note.to_json()))

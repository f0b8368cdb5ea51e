"""A hall core with the game, the cashier and the virtual cards, on a real journal and a task.Clock."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.lookups import LookupModule
from hall_server.hall.responsible import ResponsiblePlayModule
from hall_server.hall.pins import PinGuard
from hall_server.hall.roles import Role
from hall_server.hall.session import SessionModule
from hall_server.hall.virtual import VirtualLibrary, VirtualModule
from protocol.cardfile import card_codes
from protocol.strips import sample_strips
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.sql import Journal
from tests.hall.conftest import clock, journal, result  # noqa: F401  (fixtures shared with the hall tests)
from tests.hall.test_games import CATALOG, RULES, ScriptedBalls
from tests.hall.test_session import open_session

SELLER = Actor("ana", Role.SELLER_CALLER)
CHIEF = Actor("rui", Role.ROOM_CHIEF)
CASHIER = Actor("eva", Role.CASHIER)
DOOR = Actor("lluis", Role.ADMISSION)
TABLE = Actor("teo", Role.TABLE_CHIEF)
ADMIN = Actor("ines", Role.ADMINISTRATOR)
CARD_KEY = b"k" * 32
VIRTUAL_NUMBER = 900  # the virtual series' number in the game; no paper series has it
LIBRARY_CELLS = sample_strips(40, random.Random(4242).randbytes).reshape(-1, 27)  # 240 cards


def library() -> VirtualLibrary:
    ids = [f"V1-{k}" for k in range(1, len(LIBRARY_CELLS) + 1)]
    return VirtualLibrary("V1", VIRTUAL_NUMBER, LIBRARY_CELLS, card_codes(CARD_KEY, ids, LIBRARY_CELLS))


@dataclass
class VirtualHall:
    journal: Journal
    clock: Any
    balls: ScriptedBalls
    core: CommandCore
    session: SessionModule
    ledger: LedgerModule
    admission: AdmissionModule
    cashier: CashierModule
    games: GamesModule
    virtual: VirtualModule
    pins: PinGuard
    responsible: ResponsiblePlayModule
    lookups: LookupModule

    def records(self) -> list:
        return list(self.journal.records())

    def reopened(self) -> "VirtualHall":
        again = build_hall(self.journal, self.clock, ScriptedBalls(self.balls.script))
        again.core.recover()
        return again

    def player(self, document: str, credit: int, pin: str = "4821") -> str:
        (admitted,) = result(self.admission.admit_visitor(DOOR, f"Player {document}", document, "1980-01-01"))
        (opened,) = result(self.cashier.open_account(CASHIER, admitted.payload["number"], "ticket", pin))
        number = opened.payload["account"]
        if credit:
            result(self.cashier.load_credit(CASHIER, number, credit, "desk1"))
        return number

    def terminal(self, name: str) -> str:
        return result(self.virtual.enrol_terminal(CHIEF, name, "row A"))["token"]

    def balance(self, number: str) -> int:
        return self.cashier.balance(number)


def build_hall(journal: Journal, clock: Any, balls: ScriptedBalls | None = None) -> VirtualHall:
    core = CommandCore(journal, clock, run_inline)
    session = SessionModule(core)
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, [])
    cashier = CashierModule(core, ledger, admission, ["desk1"])
    balls = balls or ScriptedBalls()
    games = GamesModule(core, session, ledger, CATALOG, balls, RULES, desks=cashier)
    virtual = VirtualModule(core, games, ledger, cashier, library(), new_token=iter(f"token-{i}" for i in range(10**6)).__next__)
    pins = PinGuard(core, cashier)
    responsible = ResponsiblePlayModule(core, cashier, admission, virtual)
    lookups = LookupModule(core, games, cashier)  # the desks' look-ups, as the server has them
    return VirtualHall(journal, clock, balls, core, session, ledger, admission, cashier, games, virtual, pins,
                       responsible, lookups)


@pytest.fixture
def hall(journal: Journal, clock: Any) -> VirtualHall:
    hall = build_hall(journal, clock)
    prepare(hall)
    return hall


def prepare(hall: VirtualHall) -> None:
    """An open session, the banned list imported, a cash desk open."""
    open_session(hall.session)
    result(hall.admission.import_banned_list(ADMIN, "document,name,until\nB1000001,Joan Banned,\n", "craj.csv"))
    result(hall.cashier.open_desk(CASHIER, "desk1", 10_000))


def draw(hall: VirtualHall) -> list[Any]:
    """The caller draws the next ball; a prize found on the ball before is closed first (R85.6)."""
    if hall.games.current is not None and hall.games.current.machine.open_prizes:
        result(hall.games.close_prize(SELLER))
    return result(hall.games.draw_ball(SELLER))


def layout(number: int) -> np.ndarray:
    return LIBRARY_CELLS[number - 1]

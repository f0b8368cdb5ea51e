"""Hall games whose winners take 15,000 EUR or more (R75.6), played through the real hall modules.

:func:`paper_jackpot_game` plays a game of paper cards only, with the jackpot in play
(the operator's 14,000 EUR contribution) and a bingo of at least 3,000 EUR: card
1001-1's numbers are drawn first, so it wins the bingo and the jackpot on ball 15.  The
line is paid as soon as it is due; the game is left closed with the bingo and its pots
due, for the cashier to pay.  :func:`virtual_game` plays a game of one account's virtual
cards: card V1-1's first row is drawn first (the line) and then V1-2's numbers (the
bingo); the prizes are credited to the account by themselves (R85.9).
:func:`steered_vb_hall` is a hall with one video bingo machine whose plays hit or miss
as the test says (:class:`Steered`).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.videobingo import VideoBingoModule, load_machines
from hall_server.hall.virtual import PurchaseRequest
from hall_server.store.database import open_database
from protocol.chain import Record
from protocol.settlement import PrizeRules
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal
from tests.audit.halls import (
    ADMIN, CASHIER, CHIEF, SAFE, SELLERS, SET_CELLS, TABLE, TERMINALS, VIRTUAL_NUMBER, AuditHall,
)
from tests.hall.conftest import result
from tests.videobingo.halls import CHIEF as VB_CHIEF
from tests.videobingo.halls import Hall as VbHall
from tests.videobingo.halls import config, machine
from tests.videobingo.paytables import paytable

DAY = "2026-11-02"
#: A bingo of at least 3,000 EUR, and the jackpot in play.
PAPER_RULES = PrizeRules(line_bp=1500, bingo_bp=4500, jackpot=True, bingo_minimum_cents=300_000)
OPERATOR_JACKPOT = 1_400_000
WINNER = "1001-1"


def new_hall(folder: Path, rules: PrizeRules) -> AuditHall:
    """An :class:`AuditHall` on a new journal in ``folder``, prepared (players, terminals, desks), its day open."""
    clock = Clock()
    clock.advance(1_793_000_000)  # 2026-10-27
    engine = open_database(f"sqlite:///{folder / 'hall.sqlite3'}")
    hall = AuditHall(Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head"), clock, rules)
    hall.prepare()
    hall.open_day(DAY)
    return hall


def numbers(cells: object) -> list[int]:
    return [int(n) for n in cells if n]  # type: ignore[attr-defined]


def draw_to_bingo(hall: AuditHall) -> None:
    """Draw, verify every paper card a ball completes, close each prize found, pay what falls due, until the
    bingo; close the game."""
    game = hall.games.current
    while "bingo" not in game.machine.won:
        (drawn, *_) = result(hall.games.draw_ball(SELLERS[0]))
        line = game.machine.won.get("line")
        labels = list(drawn.payload["completed_bingo"])
        if line is None or line.ball_count == drawn.payload["ball_count"]:
            labels = [*drawn.payload["completed_line"], *labels]
        for label in dict.fromkeys(labels):
            series, number = (int(part) for part in label.split("-"))
            if series != VIRTUAL_NUMBER:
                result(hall.games.verify_claim(TABLE, series, number))
        if game.machine.open_prizes:  # "Another card?" - none: the caller closes the prize (R85.6)
            result(hall.games.close_prize(SELLERS[0]))
        if "bingo" not in game.machine.won and hall.games.due_prizes(game):
            result(hall.games.pay_prizes(CASHIER, SAFE))
    result(hall.games.close_game(CHIEF))


def paper_jackpot_game(hall: AuditHall, line_card: int | None = None) -> str:
    """The paper game: its id, closed, with the bingo and the jackpot of card 1001-1 due; with ``line_card``,
    that card's top row is drawn first and it wins the line (paid), card 1001-1 the bingo on ball 20."""
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", OPERATOR_JACKPOT))
    (opened,) = result(hall.games.announce_sale(SELLERS[0], 1001))
    result(hall.games.sell_cards(SELLERS[0], 1001, 1, 6))
    result(hall.games.sell_cards(SELLERS[1], 1001, 7, 12))
    result(hall.games.announce_pots(CHIEF, 0, 0, 40, False))
    result(hall.games.close_sale(CHIEF))
    first = numbers(SET_CELLS[0])
    if line_card is not None:  # the set's first six cards are one strip: they share no number
        first = numbers(SET_CELLS[line_card - 1].reshape(3, 9)[0]) + first
    hall.balls.script = first + [b for b in random.Random(5).sample(range(1, 91), 90) if b not in first]
    draw_to_bingo(hall)
    return str(opened.payload["game_id"])


def virtual_game(hall: AuditHall, player: int) -> str:
    """A game of two virtual cards bought by ``player``'s account: the line on the first, the bingo on the second."""
    (opened,) = result(hall.games.announce_sale(SELLERS[0], 1001))
    result(hall.virtual.open_sale(SELLERS[0], 60))
    account = hall.accounts[player]
    request = PurchaseRequest(TERMINALS[0], account, account, 2, 100, f"buy-{hall.core.seq}")
    bought = result(hall.virtual.request_purchase(request))
    result(hall.games.close_sale(CHIEF))
    line_card, bingo_card = (np.asarray(card.cells).reshape(3, 9) for card in bought)
    row = numbers(line_card[0])
    second = numbers(bingo_card.reshape(-1))
    front = row + second
    hall.balls.script = front + [b for b in random.Random(9).sample(range(1, 91), 90) if b not in front]
    draw_to_bingo(hall)
    result(hall.games.collect_cards(CHIEF))
    return str(opened.payload["game_id"])


def paid_to(records: list[Record], game_id: str, cards: set[str]) -> int:
    """What the journal's ``prize_paid`` records paid ``cards`` in ``game_id``."""
    return sum(cents for r in records if r.type == "prize_paid" and r.payload["game_id"] == game_id
               for card, cents in r.payload["payments"] if card in cards)


# --- Video bingo: a machine whose plays the test steers ------------------------------------------

#: A one-cell card, ten balls of twenty: the cell is drawn half the time and pays twice the stake.
COIN = paytable([("hit", [(0, 0)], 2)], rows=1, columns=1, pool=20, balls=10, cards_max=1)


class Steered:
    """The plays' randomness, steered: a new card is number 1, and the draw hits it unless :meth:`miss` is asked.

    A play deals one card (one ``randrange(20)``: 0 is number 1) and draws ten balls
    (ten swaps): all zero draws 1..10; a first swap with place 10 puts ball 1 out of them.
    """

    def __init__(self) -> None:
        self.queue: list[int] = []

    def miss(self) -> None:
        """The next play (new cards) misses: card 1 is dealt and ball 1 is left out of the draw."""
        self.queue = [0, 10]

    def randrange(self, stop: int, /) -> int:
        return self.queue.pop(0) if self.queue else 0


def steered_vb_hall(folder: Path, clock: Clock, credit_cents: int, stations: int = 2) -> tuple[VbHall, Steered]:
    """A hall with one video bingo machine ``vb-1`` of :data:`COIN` at ``credit_cents`` a credit, its plays steered."""
    journal = Journal(open_database(f"sqlite:///{folder / 'vb.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=folder / "vb.head")
    vb_config = config(machine("vb-1", credit_cents=credit_cents, stations=stations))
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    cashier = CashierModule(core, ledger, AdmissionModule(core, []), ["desk1"])
    steered = Steered()
    vb = VideoBingoModule(core, ledger, cashier, vb_config, load_machines(vb_config, {"vb-1": COIN}), rng=steered)
    core.recover()
    hall = VbHall(core, ledger, cashier, vb, journal)
    for station in range(1, stations + 1):
        result(vb.enrol_station(VB_CHIEF, "vb-1", station))
    return hall, steered

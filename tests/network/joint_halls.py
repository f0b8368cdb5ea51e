"""Two halls playing the hall-annex game in process, each on its own journal, the central server's relay between them.

:class:`JointHall` is the composition a hall server runs (:class:`~tests.audit.halls.AuditHall`:
session, ledger, admission, cashier, games, virtual cards) with the hall-annex game and its
virtual cards on the room's terminals.  The main hall prints card set ``MAIN_SET`` and
sells library ``MAIN_LIBRARY``; the annex prints and sells cards of its own
(``ANNEX_SET``, ``ANNEX_LIBRARY``), none of which is one of the main hall's (R82.6).
:class:`Relay` stands for the central server: it numbers what each hall posts for the
other, hands it to the partner (``annex_take``) and answers the poster (``annex_posted``).
:func:`play_joint_game` plays one game of a :class:`JointPlan` to its end: paper cards and
virtual cards sold in both rooms, the main hall's draw, every paper card called in its
room at the ball it completes a prize (virtual cards win by themselves), the close and
each hall's payments.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from hall_server.annex.module import AnnexModule
from hall_server.annex.terminals import JointTerminalSales
from hall_server.hall.catalog import FakeCardCatalog, StoreCardCatalog
from hall_server.hall.virtual import PurchaseRequest
from hall_server.store.database import open_database
from protocol.annex import JointGame
from protocol.cards import fingerprints
from protocol.chain import Record
from protocol.library import build_distinct_strips
from protocol.sale import Series
from protocol.settlement import PrizeRules
from protocol.wins import completion_balls
from server_kit.journal.sql import Journal
from tests.audit.conftest import new_clock
from tests.audit.halls import (
    CARD_SET,
    CASHIER,
    CHIEF,
    FACE_VALUE,
    LIBRARY_CELLS,
    SAFE,
    SELLERS,
    SERIES,
    SERIES_CARDS,
    SET_CELLS,
    TABLE,
    TERMINALS,
    VIRTUAL_NUMBER,
    AuditHall,
    Purchase,
    store_cards,
    stored_journal,
)
from tests.hall.conftest import result

MAIN, ANNEX = "hall-1", "hall-2"
MAIN_SET, MAIN_LIBRARY = SET_CELLS, LIBRARY_CELLS
ANNEX_SET = build_distinct_strips(10, fingerprints(np.concatenate([MAIN_SET, MAIN_LIBRARY])),
                                  random_bytes=random.Random(77).randbytes)  # 60 cards
ANNEX_LIBRARY = build_distinct_strips(20, fingerprints(np.concatenate([MAIN_SET, MAIN_LIBRARY, ANNEX_SET])),
                                      random_bytes=random.Random(78).randbytes)  # 120 cards
DAY = "2026-12-01"


def catalog(set_cells: np.ndarray) -> FakeCardCatalog:
    return FakeCardCatalog([Series(number, CARD_SET, FACE_VALUE, SERIES_CARDS) for number in SERIES],
                           {CARD_SET: set_cells})


class JointHall(AuditHall):
    """A hall of a hall-annex pair: its own game and the joint one, on one journal."""

    def __init__(self, journal: Journal, clock: Any, rules: PrizeRules, *, hall_id: str, role: str, partner: str,
                 set_cells: np.ndarray, library_cells: np.ndarray, card_catalog: Any = None) -> None:
        card_catalog = card_catalog if card_catalog is not None else catalog(set_cells)
        super().__init__(journal, clock, rules, card_catalog, library_cells=library_cells)
        self.hall_id = hall_id
        self.set_cells = set_cells
        self.library_cells = library_cells
        cards = self.virtual.library
        self.annex = AnnexModule(
            self.core, self.ledger, card_catalog, self.balls, rules, hall_id=hall_id, role=role, partner=partner,
            desks=self.cashier, library=cards,
            own_game=lambda: self.games.current.game_id if self.games.current is not None else None,
            session_open=self.session.require_open,
        )
        self.games.sale_checks.append(self.annex.own_game_refusal)
        self.session.closing_checks.append(self.annex.closing_refusal)
        self.joint = JointTerminalSales(self.core, self.annex, self.virtual, self.ledger, cards)

    def game(self) -> JointGame:
        game = self.annex.current()
        assert game is not None
        return game

    def cells(self, card: str) -> np.ndarray:
        series, number = (int(part) for part in card.split("-"))
        return (self.library_cells if series == VIRTUAL_NUMBER else self.set_cells)[number - 1]

    def balance(self, number: str) -> int:
        return self.cashier.balance(number)

    def of(self, kind: str) -> list[Record]:
        return [r for r in self.records() if r.type == kind]

    def balances(self) -> dict[str, int]:
        """Every account's balance as the journal's postings leave it (credits minus debits)."""
        out: dict[str, int] = {}
        for record in self.of("posting"):
            for account, cents in record.payload["debits"]:
                out[account] = out.get(account, 0) - cents
            for account, cents in record.payload["credits"]:
                out[account] = out.get(account, 0) + cents
        return out


def joint_hall(home: Path, rules: PrizeRules, hall_id: str, *, clock: Any = None, stored: bool = False,
               cards: tuple[np.ndarray, np.ndarray] | None = None) -> JointHall:
    """Hall ``hall_id`` of the pair under ``home`` (its card store and configuration too with ``stored``),
    printing and selling ``cards`` (its set, its library) if given, else its own."""
    role, partner = ("main", ANNEX) if hall_id == MAIN else ("annex", MAIN)
    set_cells, library_cells = cards or ((MAIN_SET, MAIN_LIBRARY) if hall_id == MAIN else (ANNEX_SET, ANNEX_LIBRARY))
    home.mkdir(parents=True, exist_ok=True)
    engine = store_cards(home, set_cells, library_cells) if stored else None
    if engine is None:
        journal = Journal(open_database(f"sqlite:///{home / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                          head=home / "journal.head")
        card_catalog = None
    else:
        journal = stored_journal(home, engine, rules)
        card_catalog = StoreCardCatalog(engine)
    return JointHall(journal, clock or new_clock(), rules, hall_id=hall_id, role=role, partner=partner,
                     set_cells=set_cells, library_cells=library_cells, card_catalog=card_catalog)


class Relay:
    """The central server between the two halls: each hall's posts numbered and handed to its partner."""

    def __init__(self, *halls: JointHall) -> None:
        self.halls = {hall.hall_id: hall for hall in halls}
        self.streams: dict[str, list[dict[str, Any]]] = {hall.hall_id: [] for hall in halls}  # by receiving hall

    def post(self, hall: JointHall, record_seq: int, item: dict[str, Any]) -> dict[str, Any]:
        """What the central server does with ``annex_post``: keep the item for the partner, answer its number."""
        partner = next(h for h in self.halls if h != hall.hall_id)
        stream = self.streams[partner]
        delivered = {"seq": len(stream) + 1, "from_hall": hall.hall_id, **item}
        stream.append(delivered)
        result(hall.annex.posted(record_seq, f"{hall.hall_id}.{record_seq}", delivered["seq"]))
        return delivered

    def pump(self) -> None:
        """Relay everything either hall has to post, and deliver it, until nothing is left."""
        moved = True
        while moved:
            moved = False
            for hall in self.halls.values():
                for record_seq, item in hall.annex.pending():
                    delivered = self.post(hall, record_seq, item)
                    partner = next(h for h in self.halls.values() if h is not hall)
                    result(partner.annex.take(delivered))
                    moved = True


def open_pair(folder: Path, rules: PrizeRules, *, stored: bool = False,
              annex_cards: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[JointHall, JointHall, Relay]:
    """Both halls under ``folder``, each with players, terminals, desks and an open session, their cards declared."""
    clock = new_clock()
    main = joint_hall(folder / MAIN, rules, MAIN, clock=clock, stored=stored)
    annex = joint_hall(folder / ANNEX, rules, ANNEX, clock=clock, stored=stored, cards=annex_cards)
    relay = Relay(main, annex)
    for hall in (main, annex):
        hall.prepare()
        hall.open_day(DAY)
        result(hall.annex.declare_cards())
    relay.pump()
    return main, annex, relay


@dataclass
class JointPlan:
    """One joint game: the paper cards each room sells, the purchases on each room's terminals."""

    main_paper: int = 10
    annex_paper: int = 10
    main_purchases: list[Purchase] = field(default_factory=list)
    annex_purchases: list[Purchase] = field(default_factory=list)
    seed: int = 0


def sell(hall: JointHall, paper: int, purchases: Sequence[Purchase], rng: random.Random) -> None:
    """The room's paper cards (by two sellers, of series 1001: its other series print the same cards,
    which one game never sells twice, R82.6) and its terminals' purchases."""
    game, turn = hall.game(), 0
    paper = min(paper, SERIES_CARDS)
    while paper > 0:
        following = game.last_sold(SERIES[0]) + 1
        count = min(paper, rng.randint(1, 6))
        result(hall.annex.sell_cards(SELLERS[turn % 2], SERIES[0], following, following + count - 1))
        paper -= count
        turn += 1
    if purchases:
        result(hall.joint.open_sale(SELLERS[0], 60))
        for purchase in purchases:
            account = hall.accounts[purchase.player]
            request = PurchaseRequest(TERMINALS[purchase.terminal], account, account, purchase.quantity,
                                      purchase.stake_pct, f"r{rng.random()}")
            hall.attempt(hall.joint.request_purchase(request, game.game_id))


def paper_calls(hall: JointHall) -> list[tuple[int, int]]:
    """The room's paper cards that complete a prize still open on the last ball: their players call."""
    game = hall.game()
    sold = [(series, number) for series, ranges in sorted(game.sold.items())
            for first, last in ranges for number in range(first, last + 1)]
    if not sold or not game.balls:
        return []
    cells = np.array([hall.set_cells[number - 1] for _, number in sold], dtype=np.uint8)
    done = completion_balls(cells, game.balls)
    now = len(game.balls)
    line = game.won("line")
    calls = (done.bingo == now) | ((done.line == now) & (line is None or line == now))
    return [sold[i] for i in np.flatnonzero(calls)]


def play_joint_game(main: JointHall, annex: JointHall, relay: Relay, plan: JointPlan) -> str:
    """Play one joint game of ``plan`` to its end: both halls paid; its id."""
    rng = random.Random(plan.seed)
    (opened,) = result(main.annex.open_game(CHIEF))
    game_id = opened.payload["game_id"]
    relay.pump()
    sell(main, plan.main_paper, plan.main_purchases, rng)
    sell(annex, plan.annex_paper, plan.annex_purchases, rng)
    finish_joint_game(main, annex, relay, rng)
    return game_id


def finish_joint_game(main: JointHall, annex: JointHall, relay: Relay, rng: random.Random) -> None:
    """Close both rooms' sales of the joint game under way, draw to its bingo, close it, pay both rooms."""
    for hall in (main, annex):
        result(hall.annex.close_sale(CHIEF))
        relay.pump()
    main.balls.script = rng.sample(range(1, 91), 90)
    while not main.game().bingo_won:
        result(main.annex.draw_ball(SELLERS[0]))
        relay.pump()
        for hall in (main, annex):
            for series, number in paper_calls(hall):
                result(hall.annex.verify_claim(TABLE, series, number))
        relay.pump()
    result(main.annex.close_game(CHIEF))
    relay.pump()
    for hall in (main, annex):
        if not hall.game().paid:
            result(hall.annex.pay_prizes(CASHIER, SAFE))

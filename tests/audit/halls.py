"""Hall days played through the real hall modules, in process, for the export to read.

:class:`AuditHall` is a core on a real SQLite journal with the session, ledger,
admission, cashier, game and virtual-card modules: paper cards of three series of one
card set (1001, 1002, 1003) and the virtual library of series ``V1``, whose cards the
export names ``1001-17`` and ``V1-13``.  :func:`play_game` plays one game from a
:class:`GamePlan`: paper cards sold by two sellers (a second series once the first
runs out, R82.6), virtual cards bought on terminals at their stakes, pots in play,
operator contributions before, during the sale and during the draw, completed paper
cards called at once (or late, or never, as the plan says; one may be refused as
tampered), each prize found closed by the caller or by the wait (R85.6), prizes paid,
the game closed and its cards collected.

With ``home`` the hall keeps its journal key, database, card store and configuration
where the ``bingo`` command looks for them (``BINGO_HOME``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password
from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.catalog import FakeCardCatalog, StoreCardCatalog
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.session import SessionModule
from hall_server.hall.virtual import PurchaseRequest, VirtualLibrary, VirtualModule
from hall_server.store import cards as card_store
from hall_server.store.database import open_database
from protocol.cardfile import card_codes
from protocol.cards import fingerprints
from protocol.chain import Record
from protocol.claims import CardRef
from protocol.daily import LARGE_WIN_CENTS
from protocol.errors import DomainError
from protocol.game import State
from protocol.library import build_distinct_strips
from protocol.settlement import PrizeRules
from protocol.sale import Series
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from tests.hall.conftest import result
from tests.hall.test_games import ScriptedBalls
from tests.hall.test_session import ALL_BALLS, verify_passed

ADMIN = Actor("ines", Role.ADMINISTRATOR)
CHIEF = Actor("rui", Role.ROOM_CHIEF)
SELLERS = (Actor("ana", Role.SELLER_CALLER), Actor("ben", Role.SELLER_CALLER))
TABLE = Actor("teo", Role.TABLE_CHIEF)
CASHIER = Actor("eva", Role.CASHIER)
DOOR = Actor("lluis", Role.ADMISSION)
SAFE = "safe"  # the cash desk the paper prizes are paid from, opened with the operator's float

CARD_SET = "hall"
SERIES = (1001, 1002, 1003)
FACE_VALUE = 150
SERIES_CARDS = 30
VIRTUAL_SERIES, VIRTUAL_NUMBER = "V1", 9001
SET_CELLS = build_distinct_strips(10, random_bytes=random.Random(2026).randbytes)  # 60 cards
LIBRARY_CELLS = build_distinct_strips(
    20, fingerprints(SET_CELLS), random_bytes=random.Random(4242).randbytes
)  # 120 cards
CARD_KEY = b"k" * 32
CODES = card_codes(CARD_KEY, [f"{VIRTUAL_SERIES}-{k}" for k in range(1, len(LIBRARY_CELLS) + 1)], LIBRARY_CELLS)
PLAYERS = ("11111111A", "22222222B", "33333333C")
TERMINALS = ("T1", "T2")
CATALOG = FakeCardCatalog(
    [Series(number, CARD_SET, FACE_VALUE, SERIES_CARDS) for number in SERIES], {CARD_SET: SET_CELLS}
)


class Layouts:
    """The export's card layouts, from the cells this module plays with."""

    def paper(self, card_set: str, number: int) -> Sequence[int]:
        assert card_set == CARD_SET
        return [int(n) for n in SET_CELLS[number - 1]]

    def virtual(self, series: str, number: int) -> Sequence[int]:
        assert series == VIRTUAL_SERIES
        return [int(n) for n in LIBRARY_CELLS[number - 1]]


def cells_of(ref: CardRef) -> np.ndarray:
    return LIBRARY_CELLS[ref.number - 1] if ref.series == VIRTUAL_NUMBER else SET_CELLS[ref.number - 1]


@dataclass
class Purchase:
    player: int
    terminal: int
    quantity: int
    stake_pct: int


@dataclass
class Contribution:
    pot: str
    amount_cents: int
    when: str  # "before" the sale, "selling", "drawing"


@dataclass
class GamePlan:
    paper: int = 10
    purchases: list[Purchase] = field(default_factory=list)
    superbingo_limit: int = 0
    grand_superbingo_limit: int = 0
    jackpot_threshold: int = 0
    megabingo: bool = False
    contributions: list[Contribution] = field(default_factory=list)
    quick: bool = False  # a sold card's numbers are drawn first: its bingo falls on ball 15
    seed: int = 0
    fail_terminal: bool = False  # terminal T1 is declared failed before the close (R96.3)
    fail_terminal_after_close: bool = False  # ... or after it
    refund: bool = False  # suspended for good after the close, before any prize (R86.2)
    last: bool = False  # announced as the session's last game (R93.15)
    boost: tuple[int, int] = (0, 0)  # the line's and the bingo's boost from the jackpot's reserve (R91.7)
    missed_calls: int = 0  # in quarters: the chance a paper card's player misses the ball it completes on;
    # one who missed calls after the next ball instead, or never (R85.6)
    refuse_first_call: bool = False  # the first paper card called is refused as tampered (R82.8)
    close_by_wait: bool = False  # each prize found closes by the wait, not the caller (R85.6)


class AuditHall:
    """The hall's modules on one journal, run inline on ``clock``."""

    def __init__(self, journal: Journal, clock: Any, rules: PrizeRules, catalog: Any = CATALOG,
                 library_cells: np.ndarray = LIBRARY_CELLS) -> None:
        self.journal = journal
        self.clock = clock
        self.rules = rules
        self.balls = ScriptedBalls()
        self.core = CommandCore(journal, clock, run_inline)
        self.session = SessionModule(self.core)
        self.ledger = LedgerModule(self.core)
        self.admission = AdmissionModule(self.core, [])
        self.cashier = CashierModule(self.core, self.ledger, self.admission, ["desk1", SAFE])
        self.games = GamesModule(self.core, self.session, self.ledger, catalog, self.balls, rules,
                                 desks=self.cashier)
        codes = CODES if library_cells is LIBRARY_CELLS else card_codes(
            CARD_KEY, [f"{VIRTUAL_SERIES}-{k}" for k in range(1, len(library_cells) + 1)], library_cells)
        library = VirtualLibrary(VIRTUAL_SERIES, VIRTUAL_NUMBER, library_cells, codes)
        tokens = iter(f"token-{i}" for i in range(10**6))
        self.virtual = VirtualModule(self.core, self.games, self.ledger, self.cashier, library, new_token=tokens.__next__)
        self.accounts: list[str] = []

    def records(self) -> list[Record]:
        return list(self.journal.records())

    def prepare(self) -> None:
        """Players with credit, terminals, a cash desk and the operator's safe (once)."""
        result(self.admission.import_banned_list(ADMIN, "document,name,until\nB1000001,Joan Banned,\n", "craj.csv"))
        result(self.cashier.open_desk(CASHIER, "desk1", 10_000))
        for document in PLAYERS:
            (admitted,) = result(self.admission.admit_visitor(DOOR, f"Player {document}", document, "1980-01-01"))
            (opened,) = result(self.cashier.open_account(CASHIER, admitted.payload["number"], "ticket", "4821"))
            self.accounts.append(opened.payload["account"])
            result(self.cashier.load_credit(CASHIER, opened.payload["account"], 1_000_000, "desk1"))
        for terminal in TERMINALS:
            result(self.virtual.enrol_terminal(CHIEF, terminal, "row A"))
        result(self.cashier.open_desk(CASHIER, SAFE, 20_000_000))

    def open_day(self, date: str) -> None:
        verify_passed(self.session, date)
        result(self.session.count_balls(CHIEF, "opening", ALL_BALLS, ["Marta Soler (public)"]))
        result(self.session.sign_opening(ADMIN))
        result(self.session.sign_opening(CHIEF))

    def deposit_jackpot(self) -> None:
        """The day's jackpot money goes to its bank account before the closing (R91.11)."""
        due = self.cashier.jackpot_deposit_due()
        if due:
            result(self.cashier.deposit_jackpot(CASHIER, SAFE, due, f"slip-{self.core.seq}"))

    def close_day(self) -> None:
        self.deposit_jackpot()
        result(self.session.count_balls(CHIEF, "closing", ALL_BALLS, ["Marta Soler (public)"]))
        result(self.session.sign_closing(ADMIN))
        result(self.session.sign_closing(CHIEF))

    def attempt(self, deferred: Any) -> Any:
        """A command the hall may refuse (a limit, an empty series): its records, or None."""
        try:
            return result(deferred)
        except DomainError:
            return None

    def contribute(self, plan: GamePlan, when: str) -> None:
        for contribution in plan.contributions:
            if contribution.when == when:
                self.attempt(self.games.contribute_to_pot(ADMIN, contribution.pot, contribution.amount_cents))


def _announce(hall: AuditHall) -> bool:
    for series in SERIES:
        if hall.attempt(hall.games.announce_sale(SELLERS[0], series)) is not None:
            return True
    return False


def _sell_paper(hall: AuditHall, wanted: int, rng: random.Random) -> None:
    turn = 0
    while wanted > 0:
        sale = hall.games.current.sale
        window = sale.windows[-1]
        sold = [r.last for r in sale.sold if r.series == window.series.number]
        following = sold[-1] + 1 if sold else window.first
        if following > window.last:
            if len(sale.windows) > 1 or not any(
                hall.attempt(hall.games.open_second_series(SELLERS[0], other))
                for other in SERIES if other != window.series.number
            ):
                return  # every card the game may sell is sold
            continue
        count = min(wanted, window.last - following + 1, rng.randint(1, 6))
        result(hall.games.sell_cards(SELLERS[turn % 2], window.series.number, following, following + count - 1))
        wanted -= count
        turn += 1


class _Calls:
    """The players of paper cards calling "Line!" or "Bingo!", as ``plan`` has them: at once, late, or never."""

    def __init__(self, plan: GamePlan, rng: random.Random, cards_in_play: int) -> None:
        self.plan = plan
        self.rng = rng
        self.late: list[str] = []  # cards whose players missed the last ball and call now
        # A card is refused only when another can still win the game.
        self.refused = not plan.refuse_first_call or cards_in_play < 2

    def after(self, hall: AuditHall, record: Record) -> None:
        """The ball of ``record`` was drawn: the cards it completed are called, and the late ones."""
        game = hall.games.current
        line = game.machine.won.get("line")
        labels = list(record.payload["completed_bingo"])
        if line is None or line.ball_count == record.payload["ball_count"]:
            labels = [*record.payload["completed_line"], *labels]
        late, self.late = self.late, []
        if len(game.machine.drawn) == 90:  # every ball is out: whoever holds a card complete calls now
            labels = [*labels, *(ref.label for ref in sorted(game.machine.in_play))]
        for label in dict.fromkeys(labels):
            if label.startswith(f"{VIRTUAL_NUMBER}-"):
                continue  # virtual cards win on their own (R93.10)
            if self.rng.randrange(4) < self.plan.missed_calls and len(game.machine.drawn) < 90:
                if self.rng.randrange(2):
                    self.late.append(label)  # missed: calls after the next ball, or never
                continue
            self.call(hall, label)
        for label in late:
            self.call(hall, label)

    def call(self, hall: AuditHall, label: str) -> None:
        series, number = (int(part) for part in label.split("-"))
        if not self.refused:
            self.refused = True
            result(hall.games.refuse_card(TABLE, series, number, "the numbers were scratched"))
            return
        hall.attempt(hall.games.verify_claim(TABLE, series, number))  # a late call may be refused: journaled


def _fail_terminal(hall: AuditHall, game_id: str) -> None:
    """Terminal T1 fails (R96.3) and is put back in service once checked."""
    if hall.virtual.has_cards(game_id, TERMINALS[0]):
        result(hall.virtual.declare_failed(CHIEF, TERMINALS[0], "screen dead"))
        result(hall.virtual.return_to_service(CHIEF, TERMINALS[0]))


def play_game(hall: AuditHall, plan: GamePlan) -> str | None:
    """Play one game of ``plan``; its id, or None if no series had a card left to sell."""
    rng = random.Random(plan.seed)
    hall.contribute(plan, "before")
    if not _announce(hall):
        return None
    game = hall.games.current
    _sell_paper(hall, plan.paper, rng)
    if plan.purchases:
        result(hall.virtual.open_sale(SELLERS[0], 60))
        for purchase in plan.purchases:
            request = PurchaseRequest(
                TERMINALS[purchase.terminal], hall.accounts[purchase.player], hall.accounts[purchase.player],
                purchase.quantity, purchase.stake_pct, f"r{rng.random()}",
            )
            hall.attempt(hall.virtual.request_purchase(request))
    if plan.fail_terminal:
        _fail_terminal(hall, game.game_id)
    hall.attempt(hall.games.announce_pots(
        CHIEF, plan.superbingo_limit, plan.grand_superbingo_limit, plan.jackpot_threshold, plan.megabingo,
    ))
    if any(plan.boost):
        hall.attempt(hall.games.announce_reserve_boost(CHIEF, *plan.boost))
    if plan.last:
        result(hall.games.announce_last_game(CHIEF))
    hall.contribute(plan, "selling")
    if hall.attempt(hall.games.close_sale(CHIEF)) is None:  # nothing sold: the game is called off
        result(hall.games.suspend_game(CHIEF, "no card sold"))
        result(hall.games.suspend_game_for_good(CHIEF, "no card sold"))
        result(hall.games.collect_cards(CHIEF))
        return game.game_id
    order = rng.sample(range(1, 91), 90)
    if plan.quick:
        first = [int(n) for n in cells_of(rng.choice(sorted(game.machine.in_play))) if n]
        order = first + [b for b in order if b not in first]
    hall.balls.script = order
    if plan.fail_terminal_after_close:
        _fail_terminal(hall, game.game_id)
    if plan.refund:
        result(hall.games.suspend_game(CHIEF, "blower pump stopped"))
        result(hall.games.suspend_game_for_good(CHIEF, "no spare pump"))
        result(hall.games.collect_cards(CHIEF))
        return game.game_id
    draw_to_the_end(hall, plan, rng)
    return game.game_id


def draw_to_the_end(hall: AuditHall, plan: GamePlan = GamePlan(), rng: random.Random | None = None) -> None:
    """The game under way drawn to its bingo as ``plan`` has its players call, each prize closed,
    prizes paid, the game closed and its cards collected."""
    game = hall.games.current
    rng = rng if rng is not None else random.Random(plan.seed)
    contributed = False
    calls = _Calls(plan, rng, len(game.machine.in_play))
    while game.machine.state != State.BINGO_WON:
        if game.machine.state in (State.LINE_FOUND, State.BINGO_FOUND):
            # "Another card?" - then the caller closes the prize, or the wait does (R85.6).
            if plan.close_by_wait:
                hall.clock.advance(hall.games.prize_wait_s)
            else:
                result(hall.games.close_prize(SELLERS[0]))
        else:
            (drawn, *_) = result(hall.games.draw_ball(SELLERS[0]))
            calls.after(hall, drawn)
        if hall.games.due_prizes(game):
            _pay(hall, game)
        if not contributed:
            hall.contribute(plan, "drawing")
            contributed = True
    result(hall.games.close_game(CHIEF))
    if hall.games.due_prizes(game):
        _pay(hall, game)
    result(hall.games.collect_cards(CHIEF))


def _pay(hall: AuditHall, game: Any) -> None:
    """The cashier pays what is due, first identifying the holder of a paper card that wins 15,000 EUR or more
    in the game (R75.6), as the desk asks."""
    wins = hall.games.paper_wins(game, hall.games.payments_due(game))
    for number, (card, won) in enumerate(sorted(wins.items()), start=1):
        if card not in game.identified and sum(cents for _, cents in won) >= LARGE_WIN_CENTS:
            result(hall.games.identify_paper_winner(CASHIER, [card], f"X{number:07d}", f"Winner {number}"))
    result(hall.games.pay_prizes(CASHIER, SAFE))


# --- A hall where the `bingo` command finds it -------------------------------------------

PASSWORD_HASH = hash_password("correct horse")


def store_cards(home: Path, set_cells: np.ndarray = SET_CELLS, library_cells: np.ndarray = LIBRARY_CELLS) -> Any:
    """The card store under ``home``: the card set with its series, and the virtual library."""
    engine = open_database(f"sqlite:///{home / 'hall.sqlite3'}")
    card_store.add_card_set(engine, CARD_SET, set_cells, [str(k // 6 + 1) for k in range(len(set_cells))], "test")
    for number in SERIES:
        card_store.add_series(engine, CARD_SET, number, FACE_VALUE, SERIES_CARDS)
    codes = card_codes(CARD_KEY, [f"{VIRTUAL_SERIES}-{k}" for k in range(1, len(library_cells) + 1)], library_cells)
    card_store.add_library(engine, "terminals", VIRTUAL_SERIES, library_cells, codes)
    return engine


def stored_journal(home: Path, engine: Any, rules: PrizeRules) -> Journal:
    """The journal under ``home`` with its key, and the configuration with ``rules``."""
    key = load_journal_key(home / "keys" / "journal-signing.pem", create=True)
    (home / "hall.toml").write_text(config_text(rules))
    return Journal(engine, key, head=home / "journal.head")


def stored_hall(home: Path, clock: Any, rules: PrizeRules) -> AuditHall:
    """An :class:`AuditHall` under ``home``: journal key, database, card store, configuration."""
    engine = store_cards(home)
    return AuditHall(stored_journal(home, engine, rules), clock, rules, StoreCardCatalog(engine))


def config_text(rules: PrizeRules) -> str:
    """The embedded default configuration with ``rules`` as its [prizes]."""
    text = default_config_text("Audit hall", [(name, role, PASSWORD_HASH) for name, role in DEFAULT_STAFF])
    head, _, tail = text.partition("[prizes]")
    _, _, rest = tail.partition("\n\n")
    values = {
        "line_bp": rules.line_bp, "bingo_bp": rules.bingo_bp, "superbingo_bp": rules.superbingo_bp,
        "megabingo": str(rules.megabingo).lower(), "jackpot": str(rules.jackpot).lower(),
        "line_minimum_cents": rules.line_minimum_cents, "bingo_minimum_cents": rules.bingo_minimum_cents,
    }
    prizes = "\n".join(["[prizes]", *(f"{name} = {value}" for name, value in values.items())])
    return f"{head}{prizes}\n\n{rest}"

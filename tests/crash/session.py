"""A whole hall session driven by its staff through the real server's command channel.

The staff are programs: each signs in over TLS and gives its commands on its own
console WebSocket, as the console page does.  What they do next is decided by
:func:`next_commands` from :class:`HallModel`, a small fold of the committed records
(the journal's records as the consoles were shown them, or read from the database
after a crash), never from the driver's memory of what it sent: after a ``kill -9``
nobody knows whether the command that was in flight was committed, so the staff look
at the hall, as people at a console would, and carry on from what it holds.

The balls come from the server's own random generator (R92.10): there is no way to
script them.  The staff react to whatever ball falls: they verify the cards each ball
record names as having completed a row or the card (R85.5-6), pay the line once the
draw has moved on, close, pay and collect once the bingo is verified.  What must not
depend on the balls (cards sold, collections, the prize funds, house share and tax,
loads, cash-outs) is compared with an uninterrupted session; what does (the balls,
the winners, the splits) is checked against the run's own journal.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.crash.wire import LiveSocket, SocketClosed, console
from tests.web.conftest import ALL_BALLS, HallProcess

STAFF = ("admin", "rosa", "tomas", "sam", "carla", "adam")
DATE = "2026-11-29"
DESK = "desk-1"
FLOAT_CENTS = 100_000
BANNED_LIST = "document,name,until\nB1000001,Joan Example,\n"
VISITORS = (("Ada Player", "X1000001"), ("Bo Player", "X1000002"), ("Cy Player", "X1000003"))
#: (visitor index, cents): amounts differ, so each load is told apart in the journal.
LOADS = ((0, 2_000), (1, 3_500), (2, 5_000), (0, 1_100))
CASH_OUTS = ((1, 1_500), (2, 5_000))
#: Each game's sale: (series, cards to sell).  The second game sells the rest of the
#: first series and then, once it has run out, a fresh second series on the cards of
#: the set the first left out of play (R82.6): 1001 1-36, then 1001 37-60 + 1002 1-36.
GAMES = (((1001, 36),), ((1001, 24), (1002, 36)))
RANGE = 6  # cards per sale record: a seller's bundle


class ServerKilled(Exception):
    """The server died while the staff were waiting for it."""


@dataclass
class GameModel:
    game_id: str
    number: int
    first: dict[int, int] = field(default_factory=dict)  # series -> first card of this game
    sold: dict[int, int] = field(default_factory=dict)  # series -> last card sold in this game
    last_game: bool = False
    sale_closed: bool = False
    balls: list[int] = field(default_factory=list)
    won: dict[str, int] = field(default_factory=dict)  # pattern -> ball count
    open: set[str] = field(default_factory=set)  # patterns found and not yet closed (R85.6)
    pending: dict[tuple[str, str], int] = field(default_factory=dict)  # (card, pattern) -> ball count
    paid: set[str] = field(default_factory=set)
    closed: bool = False
    collected: bool = False
    suspended: bool = False  # by the server's start after a crash (R92.5e, R86.1)

    def cards_sold(self, series: int) -> int:
        return self.sold[series] - self.first[series] + 1 if series in self.sold else 0


@dataclass
class HallModel:
    """What the staff know of the hall: a fold of committed records (JSON form)."""

    seq: int = 0
    verified: bool = False
    #: The server started after a crash: the room chief verifies before anything sells (R92.5e).
    restart: bool = False
    counts: list[str] = field(default_factory=list)  # stages counted whole
    opening: set[str] = field(default_factory=set)
    closing: set[str] = field(default_factory=set)
    open: bool = False
    closed: bool = False
    banned_list: bool = False
    desk_open: bool = False
    reconciled: bool = False
    visitors: list[int] = field(default_factory=list)
    accounts: dict[int, str] = field(default_factory=dict)  # visitor -> account number
    loads: list[tuple[str, int]] = field(default_factory=list)
    cash_outs: list[tuple[str, int]] = field(default_factory=list)
    games: list[GameModel] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)  # debit minus credit, per account

    def fold(self, record: dict[str, Any]) -> None:
        if record["seq"] <= self.seq:
            return  # seen already (the same record on another console)
        assert record["seq"] == self.seq + 1, f"record {record['seq']} after {self.seq}: one is missing"
        self.seq = record["seq"]
        kind, p = record["type"], record["payload"]
        game = self.games[-1] if self.games else None
        if kind == "system_verified":
            self.verified = bool(p["passed"])
            self.restart = self.restart and not p["passed"]
        elif kind == "restarted_after_crash":
            self.restart = True
        elif kind == "balls_counted" and not p["missing"] and not p["repeated"]:
            self.counts.append(p["stage"])
        elif kind == "session_opening_signed":
            self.opening.add(p["role"])
        elif kind == "session_opened":
            self.open = True
        elif kind == "session_closing_signed":
            self.closing.add(p["role"])
        elif kind == "session_closed":
            self.closed = True
        elif kind == "banned_list_imported":
            self.banned_list = True
        elif kind == "cash_desk_opened":
            self.desk_open = True
        elif kind == "cash_desk_reconciled":
            self.reconciled = True
        elif kind == "visitor_admitted":
            self.visitors.append(p["number"])
        elif kind == "player_account_opened":
            self.accounts[p["visitor"]] = p["account"]
        elif kind == "credit_loaded":
            self.loads.append((p["account"], p["amount"]))
        elif kind == "credit_cashed_out":
            self.cash_outs.append((p["account"], p["amount"]))
        elif kind == "posting":
            for account, cents in p["debits"]:
                self.balances[account] = self.balances.get(account, 0) + cents
            for account, cents in p["credits"]:
                self.balances[account] = self.balances.get(account, 0) - cents
        elif kind == "sale_opened":
            self.games.append(GameModel(p["game_id"], len(self.games) + 1, {p["series"]: p["first_card"]}))
        elif game is None or p.get("game_id") != game.game_id:
            return
        elif kind == "second_series_opened":
            game.first[p["series"]] = p["first"]
        elif kind == "paper_cards_sold":
            game.sold[p["series"]] = p["last"]
        elif kind == "last_game_announced":
            game.last_game = True
        elif kind == "sale_closed":
            game.sale_closed = True
        elif kind == "ball_drawn":
            game.balls.append(p["ball"])
            count = p["ball_count"]
            for card in p["completed_bingo"]:
                game.pending.setdefault((card, "bingo"), count)
            if "line" not in game.won:
                for card in p["completed_line"]:
                    game.pending.setdefault((card, "line"), count)
        elif kind == "prize_won":
            card = f"{p['series']}-{p['card_number']}"
            game.won.setdefault(p["pattern"], p["ball_count"])
            game.open.add(p["pattern"])
            game.pending.pop((card, p["pattern"]), None)
            # Only cards completing the pattern on the winning ball share it (R87).
            game.pending = {k: v for k, v in game.pending.items() if k[1] != p["pattern"] or v <= p["ball_count"]}
        elif kind == "claim_rejected":
            card = f"{p['series']}-{p['card_number']}"
            game.pending = {k: v for k, v in game.pending.items() if k[0] != card}
        elif kind == "prize_closed":
            game.open -= set(p["patterns"])
            game.pending = {k: v for k, v in game.pending.items() if k[1] not in p["patterns"]}
        elif kind == "prize_paid":
            game.paid.add(p["prize"])
        elif kind == "game_closed":
            game.closed = True
        elif kind == "cards_collected":
            game.collected = True
        elif kind == "game_suspended":
            game.suspended = True
        elif kind == "game_resumed":
            game.suspended = False


Command = tuple[str, str, dict[str, Any]]  # staff member, command, arguments


def next_commands(model: HallModel, rng: random.Random) -> list[Command]:
    """What the staff do next, as one burst given together; [] once the session is over."""
    if model.closed:
        return []
    if model.restart:  # after a crash: the room chief's verification, during the session or before it
        return [("rosa", "run_verification", {"date": DATE})]
    if not model.open:
        if not model.verified:
            return [("admin", "run_verification", {"date": DATE})]
        if "opening" not in model.counts:
            return [("rosa", "count_balls", {"stage": "opening", "balls_present": ALL_BALLS,
                                             "witnesses": ["Maria Public", "Joan Public"]})]
        return signature("sign_session_opening", model.opening)
    if not model.banned_list:
        return [("admin", "import_banned_list", {"content": BANNED_LIST, "source": "regulator.csv"})]
    if not model.desk_open and not model.reconciled:
        return [("carla", "open_cash_desk", {"desk": DESK, "float_cents": FLOAT_CENTS})]
    if len(model.visitors) < len(VISITORS):
        return [("adam", "admit_visitor", {"name": name, "document": document, "birth_date": "1980-01-01"})
                for name, document in VISITORS[len(model.visitors):]]
    if len(model.accounts) < len(VISITORS):
        return [("carla", "open_player_account", {"visitor": visitor, "medium": "card", "pin": "2468"})
                for visitor in model.visitors if visitor not in model.accounts]
    if loads := missing(model.loads, model, LOADS):
        return [("carla", "load_credit", {"account": account, "amount_cents": cents, "desk": DESK})
                for account, cents in loads]
    game = model.games[-1] if model.games else None
    if game is None or (game.collected and len(model.games) < len(GAMES)):
        plan = GAMES[len(model.games)]
        return [("sam", "announce_sale", {"series": plan[0][0]})]
    if not game.collected:
        return game_commands(game, GAMES[game.number - 1], rng)
    if outs := missing(model.cash_outs, model, CASH_OUTS):
        return [("carla", "cash_out", {"account": account, "amount_cents": cents, "desk": DESK,
                                       "method": "cash", "reference": ""}) for account, cents in outs]
    if not model.reconciled:
        return [("carla", "reconcile_cash_desk", {"desk": DESK, "counted_cents": model.balances[f"cash:{DESK}"]})]
    if "closing" not in model.counts:
        return [("rosa", "count_balls", {"stage": "closing", "balls_present": ALL_BALLS,
                                         "witnesses": ["Maria Public"]})]
    return signature("sign_session_closing", model.closing)


def signature(command: str, signed: set[str]) -> list[Command]:
    """The next of the two signatures (R77.1): one at a time, so that every burst is one
    staff member's and the journal keeps the order the commands were given in."""
    name, _ = next((name, role) for name, role in (("rosa", "room_chief"), ("admin", "administrator"))
                   if role not in signed)
    return [(name, command, {})]


def missing(done: list[tuple[str, int]], model: HallModel, plan: tuple[tuple[int, int], ...]) -> list[tuple[str, int]]:
    """The planned (account, cents) movements the journal does not hold yet."""
    left = list(done)
    todo = []
    for visitor_index, cents in plan:
        movement = (model.accounts[model.visitors[visitor_index]], cents)
        if movement in left:
            left.remove(movement)
        else:
            todo.append(movement)
    return todo


def game_commands(game: GameModel, plan: tuple[tuple[int, int], ...], rng: random.Random) -> list[Command]:
    """The next burst of one game: sell, close the sale, draw, verify, pay, close, collect."""
    if game.suspended:  # by the restart after a crash, once the verification passed (R86.1)
        return [("rosa", "resume_game", {})]
    if not game.sale_closed:
        if game.number == len(GAMES) and not game.last_game:
            return [("rosa", "announce_last_game", {})]
        for series, count in plan:
            if series not in game.first:
                return [("sam", "open_second_series", {"series": series})]
            if game.cards_sold(series) < count:
                first = game.sold.get(series, game.first[series] - 1) + 1
                last = game.first[series] + count - 1
                return [("sam", "sell_cards", {"series": series, "first": n, "last": min(n + RANGE - 1, last)})
                        for n in range(first, last + 1, RANGE)]
        return [("rosa", "close_sale", {})]
    if game.pending:
        cards = dict.fromkeys(card for card, _ in sorted(game.pending, key=lambda k: game.pending[k]))
        return [("tomas", "verify_claim", {"series": int(card.split("-")[0]), "card_number": int(card.split("-")[1])})
                for card in cards]
    if game.open:
        # "Line! Another card?": the claims are checked; nobody else calls, the caller closes it (R85.6).
        return [("sam", "close_prize", {})]
    line_due = "line" in game.won and "line" not in game.paid
    if line_due or (game.closed and not {"line", "bingo"} <= game.paid):
        return [("carla", "pay_prizes", {"desk": DESK})]
    if "bingo" in game.won and not game.closed:
        return [("rosa", "close_game", {})]
    if game.closed:
        return [("rosa", "collect_cards", {})]
    # The caller presses D once, or a few times in a row before the hall reacts.
    return [("sam", "draw_ball", {})] * rng.choice((1, 1, 2, 3))


@dataclass
class Sent:
    """A command given: its request id, and its answer once it came."""

    index: int
    request_id: str
    staff: str
    command: str
    args: dict[str, Any]
    life: int  # which process of the run it was sent to (0: before the first kill)
    answer: dict[str, Any] | None = None


@dataclass
class Kill:
    """Where a run kills its server: once command ``index`` is handed over, ``delay`` s later,
    or, ``on_shown``, the instant the watching console shows a record after that: the
    moment a screen has a ball, a sale or a payment whose commit must already be durable.
    """

    index: int
    delay: float = 0.0
    on_shown: bool = False


class Staff:
    """The hall's staff at their consoles, plus a watching console; one server life."""

    def __init__(self, hall: HallProcess, model: HallModel, sent: list[Sent], life: int,
                 kill: Kill | None = None) -> None:
        self.hall = hall
        self.model = model
        self.sent = sent
        self.life = life
        self.kill = kill
        self.killer: threading.Timer | None = None
        self.consoles = {name: console(hall, name) for name in STAFF}
        # The hall's screen of record: what it shows is what the tests hold the journal to.
        self.watcher = console(hall, "rosa")
        self.ids = itertools.count(1)

    def all_sockets(self) -> list[LiveSocket]:
        return [*self.consoles.values(), self.watcher]

    def give(self, commands: list[Command]) -> list[Sent]:
        """Hand a burst over, then wait for every answer and for the records to show."""
        batch = []
        for staff, command, args in commands:
            item = Sent(len(self.sent), f"l{self.life}-{next(self.ids)}", staff, command, args, self.life)
            self.sent.append(item)
            batch.append(item)
            try:
                self.consoles[staff].send({"id": item.request_id, "command": command, "args": args})
            except SocketClosed:
                raise ServerKilled() from None
            if self.kill is not None and item.index == self.kill.index:
                self.arm(self.kill)
        try:
            for item in batch:
                item.answer = self.consoles[item.staff].answer(item.request_id)
            last = max((r["seq"] for item in batch if item.answer and item.answer["ok"]
                        for r in item.answer["records"]), default=0)
            self.watcher.wait_for(lambda: self.watcher.records() and self.watcher.records()[-1]["seq"] >= last
                                  if last else True, what=f"record {last} on the watching console")
        except SocketClosed:
            raise ServerKilled() from None
        for record in self.watcher.records():
            self.model.fold(record)
        # The staff act on what the hall shows, so the hall never has cause to refuse them.
        refused = [item.answer for item in batch if not item.answer or not item.answer["ok"]]
        assert not refused, refused
        return batch

    def arm(self, kill: Kill) -> None:
        """Send SIGKILL after ``kill.delay``, or on the watcher's next record (its own thread)."""
        assert self.hall.process is not None
        pid = self.hall.process.pid
        if not kill.on_shown:
            self.killer = threading.Timer(kill.delay, os.kill, (pid, signal.SIGKILL))
            self.killer.start()
            return
        fired = threading.Event()

        def on_message(message: dict[str, Any]) -> None:
            if message.get("type") == "record" and not fired.is_set():
                fired.set()
                os.kill(pid, signal.SIGKILL)

        self.watcher.on_message = on_message

    def play(self, rng: random.Random) -> None:
        """Carry the session on to its end; :class:`ServerKilled` if the server dies first."""
        while commands := next_commands(self.model, rng):
            self.give(commands)

    def close(self) -> None:
        for socket in self.all_sockets():
            socket.close()

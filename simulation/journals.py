"""What the journals of a simulation say about the network games, read while the servers run or after.

:class:`JournalTail` reads a server's journal table (SQLite, read-only use) from the
last record it saw on; :class:`CentralFacts` and :class:`HallFacts` fold the records
of the network games into plain dictionaries: the central server's decisions, balls,
prizes and credits, and each hall's holds, captures, releases, balls, credits paid and
ledger balances.  Reading the records, not importing the servers, keeps the
simulation a client of what the servers put on file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.exc import OperationalError

from protocol.chain import Record
from server_kit.db.database import create
from server_kit.journal import table


class JournalTail:
    """The records of one server's journal, read incrementally."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.last = 0

    def new_records(self) -> list[Record]:
        if not self.database.exists():
            return []
        engine = create(f"sqlite:///{self.database}", create_folder=False)
        try:
            records = list(table.read(engine, after=self.last))
        except OperationalError as error:
            if "no such table" in str(error):
                return []  # the table is not there yet (the server is still migrating its database)
            raise
        finally:
            engine.dispose()
        if records:
            self.last = records[-1].seq
        return records


@dataclass
class CentralGameFacts:
    game_id: str
    config: dict[str, Any]
    phase: str = "scheduled"
    closes_at_ms: int | None = None
    cards_in_play: int | None = None
    sales_cents: int | None = None
    prizes: dict[str, int] = field(default_factory=dict)
    balls: list[int] = field(default_factory=list)
    ball_times_ms: list[int] = field(default_factory=list)  # when each ball was committed
    confirmed: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (hall, request id) ->
    refused: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    won: list[dict[str, Any]] = field(default_factory=list)  # every card won
    returned: list[dict[str, Any]] = field(default_factory=list)  # every stake returned
    carries: dict[str, int] = field(default_factory=dict)  # what the game carried to the next (pattern -> cents)

    @property
    def over(self) -> bool:
        return self.phase in ("closed", "not_played")

    def credits_of(self, hall: str) -> list[tuple[int, int]]:
        """(credit seq, cents) of every credit the hall is to pay its players, in order."""
        items = [(w["credit_seq"], w["payment_cents"]) for w in self.won if w["hall_id"] == hall]
        items += [(r["credit_seq"], r["amount_cents"]) for r in self.returned if r["hall_id"] == hall]
        return sorted(items)


class CentralFacts:
    """The network games as the central server's journal has them."""

    def __init__(self, database: Path) -> None:
        self.tail = JournalTail(database)
        self.games: dict[str, CentralGameFacts] = {}

    def refresh(self) -> "CentralFacts":
        for record in self.tail.new_records():
            self._apply(record)
        return self

    def _apply(self, record: Record) -> None:
        p, kind = record.payload, record.type
        if kind == "central_game_scheduled":
            self.games[p["game_id"]] = CentralGameFacts(p["game_id"], dict(p["config"]))
            return
        if not kind.startswith("central_") or "game_id" not in p or p["game_id"] not in self.games:
            return
        game = self.games[p["game_id"]]
        if kind == "central_sale_opened":
            game.phase, game.closes_at_ms = "selling", p["closes_at_ms"]
        elif kind == "central_purchase_confirmed":
            game.confirmed[(p["hall_id"], p["request_id"])] = dict(p)
        elif kind == "central_purchase_refused":
            game.refused[(p["hall_id"], p["request_id"])] = dict(p)
        elif kind == "central_sale_closed":
            game.phase, game.cards_in_play, game.sales_cents = "sale_closed", p["cards_in_play"], p["sales_cents"]
            game.prizes = dict(p["prize_amounts"])
        elif kind == "central_ball_drawn":
            game.phase = "drawing"
            game.balls.append(p["ball"])
            game.ball_times_ms.append(record.time_ms)
        elif kind == "central_card_won":
            game.won.append(dict(p))
        elif kind == "central_stake_returned":
            game.returned.append(dict(p))
        elif kind == "central_game_closed":
            game.phase, game.carries = "closed", dict(p["carries"])
        elif kind == "central_game_not_played":
            game.phase, game.carries = "not_played", dict(p["carries"])


@dataclass
class HallGameFacts:
    game_id: str
    closes_here_ms: int | None = None
    phase: str = "selling"
    balls: list[int] = field(default_factory=list)
    ball_times_ms: list[int] = field(default_factory=list)  # when the hall committed each ball
    credits: list[dict[str, Any]] = field(default_factory=list)

    @property
    def over(self) -> bool:
        return self.phase in ("closed", "not_played")


class HallFacts:
    """One hall's network games, holds and balances as its journal has them."""

    def __init__(self, hall_id: str, database: Path) -> None:
        self.hall_id = hall_id
        self.tail = JournalTail(database)
        self.games: dict[str, HallGameFacts] = {}
        self.holds: dict[str, dict[str, Any]] = {}  # request id -> the hold, with "status" and "captured"
        self.by_terminal_request: dict[tuple[str, str], list[str]] = {}
        self.balances: dict[str, int] = {}
        self.payloads: dict[int, dict[str, Any]] = {}  # seq -> payload of the records set-up asks for
        self.refused_requests: list[dict[str, Any]] = []

    def refresh(self) -> "HallFacts":
        for record in self.tail.new_records():
            self._apply(record)
        return self

    def _apply(self, record: Record) -> None:
        p, kind = record.payload, record.type
        if kind in ("visitor_admitted", "player_account_opened", "system_verified"):
            self.payloads[record.seq] = dict(p)
        elif kind == "posting":
            for account, cents in p["debits"]:
                self.balances[account] = self.balances.get(account, 0) - cents
            for account, cents in p["credits"]:
                self.balances[account] = self.balances.get(account, 0) + cents
        elif kind == "network_sale_opened":
            self.games[p["game_id"]] = HallGameFacts(p["game_id"], p["closes_here_ms"])
        elif kind == "network_credit_held":
            self.holds[p["request_id"]] = {**p, "status": "held", "captured": 0, "time_ms": record.time_ms}
            self.by_terminal_request.setdefault((p["terminal"], p["terminal_request"]), []).append(p["request_id"])
        elif kind == "network_cards_bought":
            hold = self.holds[p["request_id"]]
            if hold["status"] != "held":
                hold["status"] = "settled twice"
            else:
                hold.update(status="bought", captured=p["amount_cents"], first_card=p["first_card"],
                            settled_ms=record.time_ms)
        elif kind == "network_credit_released":
            hold = self.holds[p["request_id"]]
            hold.update(status="released" if hold["status"] == "held" else "settled twice", code=p["refusal_code"],
                        settled_ms=record.time_ms)
        elif kind == "network_sale_closed":
            self.games[p["game_id"]].phase = "sale_closed"
        elif kind == "network_ball_drawn":
            game = self.games[p["game_id"]]
            game.phase = "drawing"
            game.balls.append(p["ball"])
            game.ball_times_ms.append(record.time_ms)
        elif kind == "network_credit_paid":
            self.games[p["game_id"]].credits.append(dict(p))
        elif kind == "network_game_closed":
            self.games[p["game_id"]].phase = "closed"
        elif kind == "network_game_not_played":
            self.games[p["game_id"]].phase = "not_played"
        elif kind == "terminal_request_refused" and p.get("what") == "net_buy":
            self.refused_requests.append(dict(p))

    def pending_holds(self, game_id: str | None = None) -> list[dict[str, Any]]:
        return [h for h in self.holds.values() if h["status"] == "held" and game_id in (None, h["game_id"])]

    def credits_of(self, game_id: str) -> list[tuple[int, int]]:
        game = self.games.get(game_id)
        return sorted((c["seq"], c["amount_cents"]) for c in game.credits) if game else []

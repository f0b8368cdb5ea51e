"""What the consoles and the information boards show: a read model of the journal.

:class:`HallView` is a module of the hall core like any other: it folds every
committed record into a small, JSON-able picture of the hall (the session, the game
in play, its balls, cards sold, prizes and winning cards, the latest records), and the
core rebuilds it from the journal at start like every other projection.  It decides
nothing: it only copies what the records say, so what a screen shows is exactly what
was committed (announce after commit, R85.5).

:meth:`HallView.console` is the staff picture; :meth:`HallView.board` is the public
one for the hall's screens (R92.11-12): balls, cards sold, prizes and winning cards,
the megabingo announced with its date, time and amount from its announcement to its
game (R90.2: what the boards show and the hall's audio announces), no staff names, no
accounts.  The records it keeps for the journal list are redacted
copies (:mod:`hall_server.web.redaction`): no PIN, password or token hash is held for
a screen.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from hall_server.web.redaction import record_json, redacted
from server_kit.journal.projection import decode, encode
from protocol.chain import Record

RECENT_RECORDS = 40
#: The latest winners of the network game a board lists (R92.11).
NETWORK_WINNERS = 50
#: How many of the latest faults, visitors and complaints the staff picture keeps.
RECENT_FAULTS = 12
RECENT_VISITORS = 60
RECENT_COMPLAINTS = 12
#: The records the room chief's overview lists as faults: the game stopped, a device failed, the clock stepped.
FAULT_RECORDS = frozenset({
    "blower_fault", "blower_link", "blower_switched", "game_suspended", "game_suspended_for_good",
    "terminal_failed", "terminal_out_of_service", "ball_voided", "ball_corrected", "card_refused", "system_verified",
    "clock_stepped",
})


def _is_fault(record: Record) -> bool:
    """Whether ``record`` is one the room chief's overview lists (a failed check, a link down...)."""
    if record.type == "system_verified":
        return not record.payload.get("passed")
    if record.type == "blower_link":
        return not record.payload.get("up")
    return record.type in FAULT_RECORDS


def _completed(game: GamePicture, p: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cards a ball's record completed a prize on, as the caller and the table chief watch
    for them (R85.6, R92.11): a row once the line is won on an earlier ball is no prize (R87.a), so
    only the bingo's cards are listed then."""
    won = {w.get("pattern") for w in game.winners}
    patterns = ("bingo",) if won & {"line", "bingo"} else ("bingo", "line")
    return [
        {**_labelled(label), "pattern": pattern, "ball_count": p.get("ball_count")}
        for pattern in patterns
        for label in p.get(f"completed_{pattern}") or ()
    ]


def _network_public(game: dict[str, Any] | None) -> dict[str, Any] | None:
    if game is None:
        return None
    return {**game, "balls": list(game["balls"]), "last_ball": game["balls"][-1] if game["balls"] else None,
            "prizes": dict(game["prizes"]), "winners": list(game["winners"])}


@dataclass
class GamePicture:
    game_id: str
    number: int | None = None
    state: str = "selling"
    series: list[dict[str, Any]] = field(default_factory=list)
    price_cents: int | None = None
    cards_sold: int = 0
    collection_cents: int = 0
    sale_closed: bool = False
    balls: list[int] = field(default_factory=list)
    prizes: dict[str, int] = field(default_factory=dict)
    winners: list[dict[str, Any]] = field(default_factory=list)
    completed: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    pots: dict[str, Any] = field(default_factory=dict)
    paid: list[dict[str, Any]] = field(default_factory=list)
    last_game: bool = False
    #: What the jackpot's reserve adds to the line and the bingo, as announced (R91.7).
    reserve_boost: dict[str, int] | None = None
    #: The paper ranges sold, each with its seller: the sale desk's next card and receipt (staff only).
    sales: list[dict[str, Any]] = field(default_factory=list)
    #: The terminals' sale time (R93.1), as its record gives it: ``opens_at_ms``, ``closes_at_ms``.
    terminal_sale: dict[str, int] | None = None
    #: The label of each virtual series sold in the game, by series number (``{"9001": "V1"}``).
    virtual_series: dict[str, str] = field(default_factory=dict)
    #: The terminals' cards staked below their whole price, as bought: ``(series, first, last, stake_pct)``.
    #: A winning card's share is scaled by its stake (R88.4-5): the board shows it beside the share.
    stakes: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: A line or bingo found and still open to other cards: "Line! Another card?" (R85.6):
    #: ``patterns``, ``ball_count``, ``since_ms`` (the last claim, from which the wait runs).
    pause: dict[str, Any] | None = None
    #: A correction of the last ball one chief signed, waiting for the other's (R85.5; staff only).
    correction: dict[str, Any] | None = None
    #: Balls corrected (R85.5) and cards refused as invalid (R82.8): staff only.
    corrections: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "number": self.number,
            "state": self.state,
            "series": self.series,
            "price_cents": self.price_cents,
            "cards_sold": self.cards_sold,
            "collection_cents": self.collection_cents,
            "sale_closed": self.sale_closed,
            "balls": list(self.balls),
            "last_ball": self.balls[-1] if self.balls else None,
            "prizes": dict(self.prizes),
            "winners": list(self.winners),
            "completed": list(self.completed),
            "pots": dict(self.pots),
            "reserve_boost": self.reserve_boost,
            "paid": list(self.paid),
            "last_game": self.last_game,
            "terminal_sale": dict(self.terminal_sale) if self.terminal_sale is not None else None,
            "virtual_series": dict(self.virtual_series),
            "pause": dict(self.pause) if self.pause is not None else None,
        }


def _card(payload: Mapping[str, Any]) -> dict[str, Any]:
    return {"series": payload.get("series"), "card_number": payload.get("card_number")}


def _stake_pct(game: GamePicture, series: Any, number: Any) -> int:
    """The percentage of its price a card staked: a paper card its whole price, a terminal's as bought."""
    for sold_series, first, last, pct in game.stakes:
        if series == sold_series and isinstance(number, int) and first <= number <= last:
            return pct
    return 100


def _labelled(label: str) -> dict[str, Any]:
    """A card named ``series-number`` (as the game's records name cards)."""
    series, _, number = str(label).partition("-")
    return {"series": int(series), "card_number": int(number)} if series.isdigit() and number.isdigit() else {
        "series": None, "card_number": None, "label": label}


class HallView:
    """The consoles' and boards' picture of the hall, folded from committed records."""

    def __init__(self, hall_name: str, warnings: Sequence[str] = (), *, desks: Sequence[str] = (),
                 series: Callable[[], list[dict[str, Any]]] = list,
                 feed: Callable[[], dict[str, Any] | None] = lambda: None,
                 jackpot: Callable[[], dict[str, Any] | None] = lambda: None, claim_wait_s: int = 10) -> None:
        self.hall_name = hall_name
        #: The operator's jackpot contributions players have not won and what may be taken back today (R91.9),
        #: as the games module counts them now; or None.
        self.jackpot_source = jackpot
        #: The wait with no new claim after which a prize found closes by itself (R85.6; configuration).
        self.claim_wait_s = claim_wait_s
        #: The regulator's feed as its link sees it now (live, not a journal fact), or None.
        self.feed_source = feed
        #: The link to the central server as it is now (which process, its epoch), or None.
        self.central_source: Callable[[], dict[str, Any] | None] = lambda: None
        #: The storage's alarm while commits cannot be made (the fault, where, since when), or None.
        self.storage_source: Callable[[], dict[str, Any] | None] = lambda: None
        #: The people present now against the authorised capacity (R73.5), as the admission module counts them.
        self.presence_source: Callable[[], dict[str, Any] | None] = lambda: None
        #: The opening hours reported, in force now and pending (R74), as the hours module reads them.
        self.hours_source: Callable[[], dict[str, Any] | None] = lambda: None
        self.warnings = tuple(warnings)  # the operator's responsible-play messages (R97.2)
        #: The configured cash desks, and the registered series (not journal facts: configuration).
        self.desk_names = tuple(desks)
        self.series_source = series
        self.desks: dict[str, dict[str, Any]] = {}
        #: Every cash drawer's cents (``cash:<name>``: a desk's or a seller's), from the postings.
        self.drawers: dict[str, int] = {}
        self.terminals: dict[str, dict[str, Any]] = {}
        self.visitors: deque[dict[str, Any]] = deque(maxlen=RECENT_VISITORS)
        self.complaints: deque[dict[str, Any]] = deque(maxlen=RECENT_COMPLAINTS)
        self.faults: deque[dict[str, Any]] = deque(maxlen=RECENT_FAULTS)
        self.seq = 0
        self.session: dict[str, Any] = {"number": 0, "open": False, "closed": False, "opening": {}, "closing": {},
                                        "games": []}
        self.verification: dict[str, Any] | None = None
        self.ball_set: dict[str, Any] = {"name": "set-1", "games": 0}
        self.game: GamePicture | None = None
        self.games_played = 0
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_RECORDS)
        #: Each series' last card sold by a committed record (the games module's count runs ahead, by the
        #: commands decided and not yet committed).
        self.series_sold: dict[int, int] = {}
        self.banned_list: dict[str, Any] | None = None
        #: The opening hours last reported to the regulator (R74.2), and the previous ones.
        self.opening_hours: dict[str, Any] | None = None
        #: The latest network game (R92.11-12): balls, sales, prizes, winners with hall and terminal.
        self.network: dict[str, Any] | None = None
        #: The latest hall-annex game (R3.5.b): the main hall's balls, the joint pool, both rooms' winners.
        self.annex: dict[str, Any] | None = None
        #: The megabingo announced and not yet played: date, time, the least it pays (R90, R90.2).
        self.megabingo: dict[str, Any] | None = None
        #: What the megabingo's fund holds, from the postings: the amount it pays as it stands (R90).
        self.megabingo_fund = 0

    # --- Pictures -----------------------------------------------------------------

    def board(self) -> dict[str, Any]:
        """The public picture for information boards (R85.5, R92.11-12)."""
        return {
            "hall": self.hall_name,
            "seq": self.seq,
            "session_open": bool(self.session["open"] and not self.session["closed"]),
            "game": self.game.public() if self.game else None,
            "games_played": self.games_played,
            "warnings": list(self.warnings),
            "network": _network_public(self.network),
            "annex": _network_public(self.annex),
            "megabingo": None if self.megabingo is None else {**self.megabingo, "fund_cents": self.megabingo_fund},
        }

    def console(self) -> dict[str, Any]:
        """The staff picture: the board's, plus the session, rejected claims and the log."""
        picture = self.board()
        picture["session"] = {**self.session, "verification": self.verification}
        picture["ball_set"] = dict(self.ball_set)
        picture["claim_wait_s"] = self.claim_wait_s
        if self.game is not None:
            picture["game"]["rejected"] = list(self.game.rejected)
            picture["game"]["refused"] = list(self.game.refused)
            picture["game"]["corrections"] = list(self.game.corrections)
            picture["game"]["correction"] = dict(self.game.correction) if self.game.correction else None
        picture["recent"] = list(self.recent)
        picture["banned_list"] = dict(self.banned_list) if self.banned_list is not None else None
        if self.game is not None:
            picture["game"]["sales"] = list(self.game.sales)
        picture["desks"] = [
            {"desk": name, **self.desks.get(name, {"open": False}), "cents": self.drawers.get(name, 0)}
            for name in (*self.desk_names, *sorted(set(self.desks) - set(self.desk_names)))
        ]
        picture["drawers"] = dict(self.drawers)
        picture["series"] = [{**one, "last_sold": max(one["last_sold"], self.series_sold.get(one["series"], 0))}
                             for one in self.series_source()]
        picture["terminals"] = [{"terminal": name, **facts} for name, facts in sorted(self.terminals.items())]
        picture["visitors"] = list(self.visitors)
        picture["complaints"] = list(self.complaints)
        picture["faults"] = list(self.faults)
        picture["feed"] = self.feed_source()
        picture["central"] = self.central_source()
        picture["storage"] = self.storage_source()
        hours = self.hours_source()
        picture["opening_hours"] = hours if hours is not None else (
            dict(self.opening_hours) if self.opening_hours is not None else None)
        picture["presence"] = self.presence_source()
        picture["jackpot_contributions"] = self.jackpot_source()
        return picture

    # --- Projection -----------------------------------------------------------------

    #: The view's configuration; every other attribute is folded from the journal.
    CONFIGURED = ("hall_name", "desk_names", "series_source", "feed_source", "central_source", "storage_source",
                  "presence_source", "hours_source", "jackpot_source", "claim_wait_s")

    def checkpoint(self) -> Any:
        return encode({name: value for name, value in vars(self).items() if name not in self.CONFIGURED})

    def restore(self, data: Any) -> None:
        values = decode(data)
        if not isinstance(values, dict) or sorted(values) != sorted(set(vars(self)) - set(self.CONFIGURED)):
            raise TypeError("the view's checkpoint holds other fields than the view's")
        for name, value in values.items():
            setattr(self, name, value)

    def apply(self, record: Record) -> None:
        self.seq = record.seq
        self.recent.appendleft(record_json(record))  # a redacted copy: no secret is kept for a screen
        if _is_fault(record):
            self.faults.appendleft(record_json(record))
        handler = getattr(self, "_on_" + record.type, None)
        if handler is not None:
            handler(record.payload)
        if record.type in ("prize_won", "claim_rejected", "card_refused") and self.game is not None \
                and self.game.pause is not None and self._current(record.payload):
            self.game.pause["since_ms"] = record.time_ms  # the wait runs again from the last claim (R85.6)

    # --- The network game (what the central server told this hall) ----------------------

    def _network_of(self, p: Mapping[str, Any]) -> dict[str, Any] | None:
        game = self.network
        return game if game is not None and game["game_id"] == p["game_id"] else None

    def _on_network_sale_opened(self, p: Mapping[str, Any]) -> None:
        self.network = {"game_id": p["game_id"], "state": "selling", "series": p["series"],
                        "price_cents": p["price_cents"], "closes_at_ms": p["closes_here_ms"], "balls": [],
                        "patterns": [x["pattern"] for x in p["prizes"]],
                        "cards_sold": None, "sales_cents": None, "prizes": {}, "winners": [], "winner_count": 0}

    def _on_network_sale_closed(self, p: Mapping[str, Any]) -> None:
        if (game := self._network_of(p)) is not None:
            game.update(state="sale_closed", cards_sold=p["cards_sold"], sales_cents=p["sales_cents"],
                        prizes={x["pattern"]: x["amount_cents"] for x in p["prizes"]})

    def _on_network_ball_drawn(self, p: Mapping[str, Any]) -> None:
        if (game := self._network_of(p)) is not None:
            game["balls"].append(p["ball"])
            game["state"] = "drawing"

    def _on_network_winners(self, p: Mapping[str, Any]) -> None:
        if (game := self._network_of(p)) is not None:
            game["winner_count"] += len(p["winners"])
            game["winners"] = (game["winners"] + [
                {"pattern": w["pattern"], "ball_count": w["ball_count"], "card": f"{w['series']}-{w['card_number']}",
                 "hall": w["hall_id"], "terminal": w["terminal_id"], "cents": w["payment_cents"]}
                for w in p["winners"]
            ])[-NETWORK_WINNERS:]

    def _on_network_game_closed(self, p: Mapping[str, Any]) -> None:
        if (game := self._network_of(p)) is not None:
            game["state"] = "closed"

    def _on_network_game_not_played(self, p: Mapping[str, Any]) -> None:
        if (game := self._network_of(p)) is not None:
            game["state"] = "not_played"

    # --- The hall-annex game (the main hall's draw, both rooms' claims) -------------------

    def _annex_of(self, p: Mapping[str, Any]) -> dict[str, Any] | None:
        game = self.annex
        return game if game is not None and game["game_id"] == p["game_id"] else None

    def _on_annex_game_opened(self, p: Mapping[str, Any]) -> None:
        self.annex = {"kind": "annex", "game_id": p["game_id"], "main": p["main"], "annex": p["annex"],
                      "state": "selling", "series": "paper", "price_cents": p["price_cents"], "closes_at_ms": None,
                      "balls": [], "patterns": ["line", "bingo"], "cards_sold": None, "sales_cents": None,
                      "prizes": {}, "winners": [], "winner_count": 0, "link_up": True}

    def _on_annex_pool(self, p: Mapping[str, Any]) -> None:
        if (game := self._annex_of(p)) is not None:
            game.update(state="sale_closed", cards_sold=p["cards"], sales_cents=p["sales_cents"],
                        prizes={"line": p["line_cents"], "bingo": p["bingo_cents"]})

    def _on_annex_ball_drawn(self, p: Mapping[str, Any]) -> None:
        if (game := self._annex_of(p)) is not None:
            game["balls"].append(p["ball"])
            game["state"] = "drawing"

    def _on_annex_claim_verified(self, p: Mapping[str, Any]) -> None:
        if (game := self._annex_of(p)) is not None:
            game["winner_count"] += 1
            # A virtual card as its player's screen names it, with the terminal it was bought on (R92.11).
            game["winners"] = (game["winners"] + [
                {"pattern": p["pattern"], "ball_count": p["ball_count"], "card": p.get("label") or p["card"],
                 "hall": p["hall_id"], "terminal": p.get("terminal"), "cents": None}])[-NETWORK_WINNERS:]

    def _on_annex_game_closed(self, p: Mapping[str, Any]) -> None:
        if (game := self._annex_of(p)) is not None:
            game["state"] = "closed"

    def _on_annex_link(self, p: Mapping[str, Any]) -> None:
        if (game := self._annex_of(p)) is not None:
            game["link_up"] = bool(p["up"])

    def _on_system_verified(self, p: Mapping[str, Any]) -> None:
        self.verification = {"date": p.get("date"), "passed": p.get("passed"), "results": redacted(p.get("results")),
                             "said": redacted(p.get("said") or {})}

    def _on_opening_hours_notified(self, p: Mapping[str, Any]) -> None:
        self.opening_hours = {"hours": p["hours"], "applies_from": p["applies_from"], "previous": p.get("previous")}

    def _on_banned_list_imported(self, p: Mapping[str, Any]) -> None:
        actor = p.get("actor")
        self.banned_list = {"rows": p.get("rows"), "source": p.get("source"),
                            "imported_by": actor.get("name") if isinstance(actor, Mapping) else None}

    def _on_posting(self, p: Mapping[str, Any]) -> None:
        for sign, legs in ((1, p.get("debits") or ()), (-1, p.get("credits") or ())):
            for account, cents in legs:
                kind, _, name = str(account).partition(":")
                if kind == "cash":
                    self.drawers[name] = self.drawers.get(name, 0) + sign * int(cents)
                elif account == "pot:megabingo":  # a pot holds its credits less its debits
                    self.megabingo_fund -= sign * int(cents)

    def _on_megabingo_announced(self, p: Mapping[str, Any]) -> None:
        self.megabingo = {"date": p["date"], "time": p["time"], "minimum_cents": int(p["amount_cents"]),
                          "announced_on": p["announced_on"]}

    def _on_cash_desk_opened(self, p: Mapping[str, Any]) -> None:
        actor = p.get("actor")
        opener = actor.get("name") if isinstance(actor, Mapping) else None
        self.desks[str(p.get("desk"))] = {"open": True, "float_cents": p.get("float"), "opened_by": opener,
                                          "held_by": opener}

    def _on_cash_desk_handed_over(self, p: Mapping[str, Any]) -> None:
        if (desk := self.desks.get(str(p.get("desk")))) is not None:
            desk["held_by"] = p.get("to_holder")

    def _on_cash_desk_reconciled(self, p: Mapping[str, Any]) -> None:
        self.desks[str(p.get("desk"))] = {"open": False, "counted_cents": p.get("counted"),
                                          "difference_cents": p.get("difference")}

    def _on_terminal_enrolled(self, p: Mapping[str, Any]) -> None:
        self.terminals[str(p.get("terminal"))] = {"place": p.get("place"), "state": "in service"}

    def _terminal_state(self, p: Mapping[str, Any], state: str) -> None:
        if (terminal := self.terminals.get(str(p.get("terminal")))) is not None:
            terminal["state"] = state
            terminal["reason"] = p.get("reason")

    def _on_terminal_revoked(self, p: Mapping[str, Any]) -> None:
        self._terminal_state(p, "revoked")

    def _on_terminal_out_of_service(self, p: Mapping[str, Any]) -> None:
        self._terminal_state(p, "out of service")

    def _on_terminal_returned_to_service(self, p: Mapping[str, Any]) -> None:
        self._terminal_state(p, "in service")

    def _on_visitor_admitted(self, p: Mapping[str, Any]) -> None:
        self.visitors.appendleft({"number": p.get("number"), "name": p.get("name"), "account": False, "left": False})

    def _on_visitor_left(self, p: Mapping[str, Any]) -> None:
        for visitor in self.visitors:
            if visitor["number"] == p.get("number"):
                visitor["left"] = True

    def _on_player_account_opened(self, p: Mapping[str, Any]) -> None:
        for visitor in self.visitors:
            if visitor["number"] == p.get("visitor"):
                visitor["account"] = True

    def _on_complaint_recorded(self, p: Mapping[str, Any]) -> None:
        # Journaled before the room chief's confirmation existed (no ``witnessed``): stands as written.
        witness = p.get("room_chief") if p.get("witnessed") is not None else (p.get("actor") or {}).get("name")
        self.complaints.appendleft({"number": p.get("number"), "complainant": p.get("complainant"),
                                    "text": p.get("text"), "room_chief": witness})

    def _on_complaint_confirmed(self, p: Mapping[str, Any]) -> None:
        for complaint in self.complaints:
            if complaint["number"] == p.get("number"):
                complaint["room_chief"] = (p.get("actor") or {}).get("name")

    def _on_balls_counted(self, p: Mapping[str, Any]) -> None:
        if p.get("stage") == "opening" and (self.session["closed"] or self.session["number"] == 0):
            self.session = {"number": self.session["number"] + 1, "open": False, "closed": False,
                            "opening": {}, "closing": {}, "games": []}
        self.session["last_count"] = {
            "stage": p.get("stage"), "missing": p.get("missing"), "repeated": p.get("repeated"),
        }

    def _on_session_opening_signed(self, p: Mapping[str, Any]) -> None:
        self.session["opening"][str(p.get("role"))] = p.get("signer")

    def _on_session_opened(self, p: Mapping[str, Any]) -> None:
        self.session["open"] = True
        self.session["date"] = p.get("date")
        self.verification = None

    def _on_session_closing_signed(self, p: Mapping[str, Any]) -> None:
        self.session["closing"][str(p.get("role"))] = p.get("signer")

    def _on_session_closed(self, p: Mapping[str, Any]) -> None:
        self.session["closed"] = True
        self.session["open"] = False
        # The overview lists the faults since the last session closed: those of a closed
        # session are in its minutes, not on the desk of the next one.
        self.faults.clear()

    def _on_ball_set_replaced(self, p: Mapping[str, Any]) -> None:
        self.ball_set = {"name": p.get("new"), "games": 0}

    # The game: the record types of protocol.events, journaled by the games module.

    def _on_sale_opened(self, p: Mapping[str, Any]) -> None:
        self.game = GamePicture(
            game_id=str(p.get("game_id")),
            series=[{"series": p.get("series"), "first_card": p.get("first_card")}],
            price_cents=p.get("price_cents"),
            number=p.get("game_number"),
        )
        # The session's games, for the console's minutes links.
        self.session.setdefault("games", []).append({"game_id": str(p.get("game_id")), "number": p.get("game_number")})

    def _current(self, p: Mapping[str, Any]) -> GamePicture | None:
        if self.game is not None and self.game.game_id == str(p.get("game_id")):
            return self.game
        return None

    def _on_card_sold(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.cards_sold += 1
            game.collection_cents += int(p.get("stake_cents") or 0)

    def _on_paper_cards_sold(self, p: Mapping[str, Any]) -> None:
        # One record for a range of paper cards; in older journals a card_sold per card followed it.
        self.series_sold[p["series"]] = max(self.series_sold.get(p["series"], 0), p["last"])
        if "price_cents" in p and (game := self._current(p)):
            game.cards_sold += int(p.get("count") or 0)
            game.collection_cents += int(p.get("amount_cents") or 0)
        if game := self._current(p):
            game.sales.append({key: p.get(key) for key in ("series", "first", "last", "count", "seller",
                                                           "amount_cents")})

    def _on_terminal_sale_opened(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.terminal_sale = {"opens_at_ms": int(p["opens_at_ms"]), "closes_at_ms": int(p["closes_at_ms"])}

    def _on_virtual_cards_bought(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.virtual_series[str(p.get("series"))] = str(p.get("series_label"))
            if int(p.get("stake_pct") or 100) < 100:
                game.stakes.append((int(p["series"]), int(p["first"]), int(p["last"]), int(p["stake_pct"])))
            # One record for a terminal's purchase; in older journals a card_sold per card followed it.
            if p.get("price_cents") is not None:
                game.cards_sold += int(p.get("quantity") or 0)
                game.collection_cents += int(p.get("amount_cents") or 0)

    def _on_second_series_opened(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.series.append({"series": p.get("series"), "first_card": p.get("first")})

    def _on_pots_announced(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.pots = redacted({k: v for k, v in p.items() if k not in ("actor", "game_id")})

    def _on_reserve_boost_announced(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):  # a later announcement replaces the earlier one
            game.reserve_boost = {"line_cents": int(p["line_cents"]), "bingo_cents": int(p["bingo_cents"])}

    def _on_last_game_announced(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.last_game = True

    def _on_sale_closed(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.sale_closed = True
            game.state = "drawing"
            game.cards_sold = int(p.get("cards_sold", game.cards_sold))
            game.collection_cents = int(p.get("collection_cents", game.collection_cents))
            game.prizes = {name: p[f"{name}_cents"] for name in ("line", "bingo") if f"{name}_cents" in p}

    def _on_ball_drawn(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.pause = None  # a journal written before the claim pause drew on with its prize open
            game.balls.append(int(p["ball"]))
            # The record names the cards this ball completed a row or the whole card of:
            # what the caller watches for before a claim (R85.6, R92.11).
            game.completed = _completed(game, p)

    def _on_ball_voided(self, p: Mapping[str, Any]) -> None:  # journals written before the ruling of R85.5
        if (game := self._current(p)) and game.balls and game.balls[-1] == p.get("ball"):
            game.balls.pop()
            game.completed = []

    def _on_ball_correction_signed(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.correction = {key: p.get(key) for key in ("ball_count", "misread", "corrected", "reason", "signer",
                                                           "role")}

    def _on_ball_correction_cancelled(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.correction = None

    def _on_ball_corrected(self, p: Mapping[str, Any]) -> None:
        # The ball read again replaces the one announced, with the cards it completes (R85.5).
        if (game := self._current(p)) and game.balls and game.balls[-1] == p.get("misread"):
            game.balls[-1] = int(p["ball"])
            game.correction = None
            game.corrections.append({key: p.get(key) for key in ("ball_count", "misread", "ball", "reason",
                                                                 "signed_by")})
            game.completed = _completed(game, p)

    def _on_card_refused(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.correction = None  # a card claimed on the ball: the announced number stands
            game.refused.append({**_card(p), "reason": p.get("reason"), "refused_by": p.get("refused_by")})

    def _on_prize_closed(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.pause = None

    def _on_prize_paid(self, p: Mapping[str, Any]) -> None:
        if p.get("prize") == "megabingo":
            self.megabingo = None  # played: the boards stop announcing it
        if game := self._current(p):
            game.paid.append(
                {
                    "prize": p.get("prize"),
                    "amount_cents": p.get("amount_cents"),
                    #: What the split left unpaid (stakes below 100%), added to the next game's prize (R88.5).
                    "carry_cents": int(p.get("carry_cents") or 0),
                    "payments": [{**_labelled(label), "cents": cents} for label, cents in p.get("payments") or ()],
                }
            )

    def _on_cards_collected(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.state = "cards collected"

    def _on_prize_won(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.winners.append({**_card(p), "pattern": p.get("pattern"), "ball_count": p.get("ball_count"),
                                 "stake_pct": _stake_pct(game, p.get("series"), p.get("card_number"))})
            game.correction = None
            # The prize is found: the draw stops while the caller asks for another card (R85.6).
            pause = game.pause or {"patterns": [], "ball_count": p.get("ball_count"), "balls_drawn": len(game.balls)}
            if p.get("pattern") not in pause["patterns"]:
                pause["patterns"] = [n for n in ("line", "bingo") if n in (*pause["patterns"], p.get("pattern"))]
            game.pause = pause

    def _on_claim_rejected(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.correction = None
            game.rejected.append({**_card(p), "reason": p.get("reason")})

    def _on_game_suspended(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.state = "suspended"

    def _on_game_resumed(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.state = "drawing" if game.sale_closed else "selling"

    def _on_game_suspended_for_good(self, p: Mapping[str, Any]) -> None:
        if game := self._current(p):
            game.state = "suspended for good"

    def _end(self, p: Mapping[str, Any], state: str) -> None:
        if game := self._current(p):
            game.state = state
        self.games_played += 1
        self.ball_set["games"] += 1

    def _on_game_closed(self, p: Mapping[str, Any]) -> None:
        self._end(p, "closed")

    def _on_game_finished(self, p: Mapping[str, Any]) -> None:
        self._end(p, "finished by hand")

    def _on_game_refunded(self, p: Mapping[str, Any]) -> None:
        self._end(p, "refunded")

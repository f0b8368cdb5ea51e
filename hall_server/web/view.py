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
from typing import Any, Callable, Sequence

from hall_server.web.redaction import record_json, redacted
from server_kit.journal.projection import decode, encode
from protocol.chain import Record
from protocol.records import JournalRecord, declared
from protocol.records.admission import (
    BannedListImported,
    ComplaintConfirmed,
    ComplaintRecorded,
    VisitorAdmitted,
    VisitorLeft,
)
from protocol.records.annex import (
    AnnexBallDrawn,
    AnnexClaimVerified,
    AnnexGameClosed,
    AnnexGameOpened,
    AnnexLink,
    AnnexPool,
)
from protocol.records.blower import BlowerFault, BlowerLink, BlowerSwitched
from protocol.records.cashier import (
    CashDeskHandedOver,
    CashDeskOpened,
    CashDeskReconciled,
    PlayerAccountOpened,
    Posting,
)
from protocol.records.clock import ClockStepped
from protocol.records.game import (
    BallCorrected,
    BallCorrectionCancelled,
    BallCorrectionSigned,
    BallDrawn,
    BallVoided,
    CardsCollected,
    GameClosed,
    GameFinished,
    GameRefunded,
    GameResumed,
    GameSuspended,
    GameSuspendedForGood,
    LastGameAnnounced,
)
from protocol.records.network import (
    NetworkBallDrawn,
    NetworkGameClosed,
    NetworkGameNotPlayed,
    NetworkSaleClosed,
    NetworkSaleOpened,
    NetworkWinners,
)
from protocol.records.notices import OpeningHoursNotified
from protocol.records.prizes import (
    CardRefused,
    ClaimRejected,
    MegabingoAnnounced,
    PotsAnnounced,
    PrizeClosed,
    PrizePaid,
    PrizeWon,
    ReserveBoostAnnounced,
)
from protocol.records.sale import CardSold, PaperCardsSold, SaleClosed, SaleOpened, SecondSeriesOpened
from protocol.records.session import (
    BallSetReplaced,
    BallsCounted,
    SessionClosed,
    SessionClosingSigned,
    SessionOpened,
    SessionOpeningSigned,
    SystemVerified,
)
from protocol.records.terminals import (
    TerminalEnrolled,
    TerminalFailed,
    TerminalOutOfService,
    TerminalReturnedToService,
    TerminalRevoked,
    TerminalSaleOpened,
    VirtualCardsBought,
)

RECENT_RECORDS = 40
#: The latest winners of the network game a board lists (R92.11).
NETWORK_WINNERS = 50
#: How many of the latest faults, visitors and complaints the staff picture keeps.
RECENT_FAULTS = 12
RECENT_VISITORS = 60
RECENT_COMPLAINTS = 12
#: The records the room chief's overview lists as faults: the game stopped, a device failed, the clock stepped.
FAULT_RECORDS = (
    BlowerFault, BlowerLink, BlowerSwitched, GameSuspended, GameSuspendedForGood,
    TerminalFailed, TerminalOutOfService, BallVoided, BallCorrected, CardRefused, SystemVerified,
    ClockStepped,
)


def _is_fault(event: JournalRecord) -> bool:
    """Whether ``event`` is one the room chief's overview lists (a failed check, a link down...)."""
    match event:
        case SystemVerified():
            return not event.passed
        case BlowerLink():
            return not event.up
    return isinstance(event, FAULT_RECORDS)


def _completed(game: GamePicture, ball: BallDrawn | BallCorrected) -> list[dict[str, Any]]:
    """The cards a ball's record completed a prize on, as the caller and the table chief watch
    for them (R85.6, R92.11): a row once the line is won on an earlier ball is no prize (R87.a), so
    only the bingo's cards are listed then."""
    won = {w.get("pattern") for w in game.winners}
    completed = {"bingo": ball.completed_bingo, "line": ball.completed_line}
    patterns = ("bingo",) if won & {"line", "bingo"} else ("bingo", "line")
    return [
        {**_labelled(label), "pattern": pattern, "ball_count": ball.ball_count}
        for pattern in patterns
        for label in completed[pattern]
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


def _card(event: PrizeWon | ClaimRejected | CardRefused) -> dict[str, Any]:
    return {"series": event.series, "card_number": event.card_number}


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
        event = declared(record)
        if _is_fault(event):
            self.faults.appendleft(record_json(record))
        fold = _FOLDS.get(type(event))
        if fold is None:
            return
        fold(self, event)
        if isinstance(event, (PrizeWon, ClaimRejected, CardRefused)) and self.game is not None \
                and self.game.pause is not None and self._current(event.game_id):
            self.game.pause["since_ms"] = record.time_ms  # the wait runs again from the last claim (R85.6)

    # --- The network game (what the central server told this hall) ----------------------

    def _network_of(self, game_id: str) -> dict[str, Any] | None:
        game = self.network
        return game if game is not None and game["game_id"] == game_id else None

    def _on_network_sale_opened(self, event: NetworkSaleOpened) -> None:
        self.network = {"game_id": event.game_id, "state": "selling", "series": event.series,
                        "price_cents": event.price_cents, "closes_at_ms": event.closes_here_ms, "balls": [],
                        "patterns": [share.pattern for share in event.prizes],
                        "cards_sold": None, "sales_cents": None, "prizes": {}, "winners": [], "winner_count": 0}

    def _on_network_sale_closed(self, event: NetworkSaleClosed) -> None:
        if (game := self._network_of(event.game_id)) is not None:
            game.update(state="sale_closed", cards_sold=event.cards_sold, sales_cents=event.sales_cents,
                        prizes={prize.pattern: prize.amount_cents for prize in event.prizes})

    def _on_network_ball_drawn(self, event: NetworkBallDrawn) -> None:
        if (game := self._network_of(event.game_id)) is not None:
            game["balls"].append(event.ball)
            game["state"] = "drawing"

    def _on_network_winners(self, event: NetworkWinners) -> None:
        if (game := self._network_of(event.game_id)) is not None:
            game["winner_count"] += len(event.winners)
            game["winners"] = (game["winners"] + [
                {"pattern": w.pattern, "ball_count": w.ball_count, "card": f"{w.series}-{w.card_number}",
                 "hall": w.hall_id, "terminal": w.terminal_id, "cents": w.payment_cents}
                for w in event.winners
            ])[-NETWORK_WINNERS:]

    def _on_network_game_closed(self, event: NetworkGameClosed) -> None:
        if (game := self._network_of(event.game_id)) is not None:
            game["state"] = "closed"

    def _on_network_game_not_played(self, event: NetworkGameNotPlayed) -> None:
        if (game := self._network_of(event.game_id)) is not None:
            game["state"] = "not_played"

    # --- The hall-annex game (the main hall's draw, both rooms' claims) -------------------

    def _annex_of(self, game_id: str) -> dict[str, Any] | None:
        game = self.annex
        return game if game is not None and game["game_id"] == game_id else None

    def _on_annex_game_opened(self, event: AnnexGameOpened) -> None:
        self.annex = {"kind": "annex", "game_id": event.game_id, "main": event.main, "annex": event.annex,
                      "state": "selling", "series": "paper", "price_cents": event.price_cents, "closes_at_ms": None,
                      "balls": [], "patterns": ["line", "bingo"], "cards_sold": None, "sales_cents": None,
                      "prizes": {}, "winners": [], "winner_count": 0, "link_up": True}

    def _on_annex_pool(self, event: AnnexPool) -> None:
        if (game := self._annex_of(event.game_id)) is not None:
            game.update(state="sale_closed", cards_sold=event.cards, sales_cents=event.sales_cents,
                        prizes={"line": event.line_cents, "bingo": event.bingo_cents})

    def _on_annex_ball_drawn(self, event: AnnexBallDrawn) -> None:
        if (game := self._annex_of(event.game_id)) is not None:
            game["balls"].append(event.ball)
            game["state"] = "drawing"

    def _on_annex_claim_verified(self, event: AnnexClaimVerified) -> None:
        if (game := self._annex_of(event.game_id)) is not None:
            game["winner_count"] += 1
            # A virtual card as its player's screen names it, with the terminal it was bought on (R92.11).
            game["winners"] = (game["winners"] + [
                {"pattern": event.pattern, "ball_count": event.ball_count, "card": event.label or event.card,
                 "hall": event.hall_id, "terminal": event.terminal, "cents": None}])[-NETWORK_WINNERS:]

    def _on_annex_game_closed(self, event: AnnexGameClosed) -> None:
        if (game := self._annex_of(event.game_id)) is not None:
            game["state"] = "closed"

    def _on_annex_link(self, event: AnnexLink) -> None:
        if (game := self._annex_of(event.game_id)) is not None:
            game["link_up"] = event.up

    def _on_system_verified(self, event: SystemVerified) -> None:
        self.verification = {"date": event.date, "passed": event.passed, "results": redacted(event.results),
                             "said": redacted(event.said or {})}

    def _on_opening_hours_notified(self, event: OpeningHoursNotified) -> None:
        self.opening_hours = {"hours": event.hours, "applies_from": event.applies_from, "previous": event.previous}

    def _on_banned_list_imported(self, event: BannedListImported) -> None:
        self.banned_list = {"rows": event.rows, "source": event.source, "imported_by": _actor_name(event)}

    def _on_posting(self, event: Posting) -> None:
        for sign, legs in ((1, event.debits), (-1, event.credits)):
            for account, cents in legs:
                kind, _, name = account.partition(":")
                if kind == "cash":
                    self.drawers[name] = self.drawers.get(name, 0) + sign * cents
                elif account == "pot:megabingo":  # a pot holds its credits less its debits
                    self.megabingo_fund -= sign * cents

    def _on_megabingo_announced(self, event: MegabingoAnnounced) -> None:
        self.megabingo = {"date": event.date, "time": event.time, "minimum_cents": event.amount_cents,
                          "announced_on": event.announced_on}

    def _on_cash_desk_opened(self, event: CashDeskOpened) -> None:
        opener = _actor_name(event)
        self.desks[event.desk] = {"open": True, "float_cents": event.float, "opened_by": opener, "held_by": opener}

    def _on_cash_desk_handed_over(self, event: CashDeskHandedOver) -> None:
        if (desk := self.desks.get(event.desk)) is not None:
            desk["held_by"] = event.to_holder

    def _on_cash_desk_reconciled(self, event: CashDeskReconciled) -> None:
        self.desks[event.desk] = {"open": False, "counted_cents": event.counted, "difference_cents": event.difference}

    def _on_terminal_enrolled(self, event: TerminalEnrolled) -> None:
        self.terminals[event.terminal] = {"place": event.place, "state": "in service"}

    def _terminal_state(self, terminal_id: str, state: str, reason: str | None) -> None:
        if (terminal := self.terminals.get(terminal_id)) is not None:
            terminal["state"] = state
            terminal["reason"] = reason

    def _on_terminal_revoked(self, event: TerminalRevoked) -> None:
        self._terminal_state(event.terminal, "revoked", event.reason)

    def _on_terminal_out_of_service(self, event: TerminalOutOfService) -> None:
        self._terminal_state(event.terminal, "out of service", event.reason)

    def _on_terminal_returned_to_service(self, event: TerminalReturnedToService) -> None:
        self._terminal_state(event.terminal, "in service", None)

    def _on_visitor_admitted(self, event: VisitorAdmitted) -> None:
        self.visitors.appendleft({"number": event.number, "name": event.name, "account": False, "left": False})

    def _on_visitor_left(self, event: VisitorLeft) -> None:
        for visitor in self.visitors:
            if visitor["number"] == event.number:
                visitor["left"] = True

    def _on_player_account_opened(self, event: PlayerAccountOpened) -> None:
        for visitor in self.visitors:
            if visitor["number"] == event.visitor:
                visitor["account"] = True

    def _on_complaint_recorded(self, event: ComplaintRecorded) -> None:
        # Journaled before the room chief's confirmation existed (no ``witnessed``): stands as written.
        witness = event.room_chief if event.witnessed is not None else _actor_name(event)
        self.complaints.appendleft({"number": event.number, "complainant": event.complainant,
                                    "text": event.text, "room_chief": witness})

    def _on_complaint_confirmed(self, event: ComplaintConfirmed) -> None:
        for complaint in self.complaints:
            if complaint["number"] == event.number:
                complaint["room_chief"] = _actor_name(event)

    def _on_balls_counted(self, event: BallsCounted) -> None:
        if event.stage == "opening" and (self.session["closed"] or self.session["number"] == 0):
            self.session = {"number": self.session["number"] + 1, "open": False, "closed": False,
                            "opening": {}, "closing": {}, "games": []}
        self.session["last_count"] = {
            "stage": event.stage, "missing": list(event.missing), "repeated": list(event.repeated),
        }

    def _on_session_opening_signed(self, event: SessionOpeningSigned) -> None:
        self.session["opening"][event.role] = event.signer

    def _on_session_opened(self, event: SessionOpened) -> None:
        self.session["open"] = True
        self.session["date"] = event.date
        self.verification = None

    def _on_session_closing_signed(self, event: SessionClosingSigned) -> None:
        self.session["closing"][event.role] = event.signer

    def _on_session_closed(self, event: SessionClosed) -> None:
        self.session["closed"] = True
        self.session["open"] = False
        # The overview lists the faults since the last session closed: those of a closed
        # session are in its minutes, not on the desk of the next one.
        self.faults.clear()

    def _on_ball_set_replaced(self, event: BallSetReplaced) -> None:
        self.ball_set = {"name": event.new, "games": 0}

    # The game: the record types of protocol.events, journaled by the games module.

    def _on_sale_opened(self, event: SaleOpened) -> None:
        self.game = GamePicture(
            game_id=event.game_id,
            series=[{"series": event.series, "first_card": event.first_card}],
            price_cents=event.price_cents,
            number=event.game_number,
        )
        # The session's games, for the console's minutes links.
        self.session.setdefault("games", []).append({"game_id": event.game_id, "number": event.game_number})

    def _current(self, game_id: str) -> GamePicture | None:
        if self.game is not None and self.game.game_id == game_id:
            return self.game
        return None

    def _on_card_sold(self, event: CardSold) -> None:
        if game := self._current(event.game_id):
            game.cards_sold += 1
            game.collection_cents += event.stake_cents

    def _on_paper_cards_sold(self, event: PaperCardsSold) -> None:
        # One record for a range of paper cards; in older journals a card_sold per card followed it.
        self.series_sold[event.series] = max(self.series_sold.get(event.series, 0), event.last)
        if game := self._current(event.game_id):
            if event.price_cents is not None:
                game.cards_sold += event.count
                game.collection_cents += event.amount_cents
            game.sales.append({"series": event.series, "first": event.first, "last": event.last,
                               "count": event.count, "seller": event.seller, "amount_cents": event.amount_cents})

    def _on_terminal_sale_opened(self, event: TerminalSaleOpened) -> None:
        if game := self._current(event.game_id):
            game.terminal_sale = {"opens_at_ms": event.opens_at_ms, "closes_at_ms": event.closes_at_ms}

    def _on_virtual_cards_bought(self, event: VirtualCardsBought) -> None:
        if game := self._current(event.game_id):
            game.virtual_series[str(event.series)] = event.series_label
            if event.stake_pct < 100:
                game.stakes.append((event.series, event.first, event.last, event.stake_pct))
            # One record for a terminal's purchase; in older journals a card_sold per card followed it.
            if event.price_cents is not None:
                game.cards_sold += event.quantity
                game.collection_cents += event.amount_cents

    def _on_second_series_opened(self, event: SecondSeriesOpened) -> None:
        if game := self._current(event.game_id):
            game.series.append({"series": event.series, "first_card": event.first})

    def _on_pots_announced(self, event: PotsAnnounced) -> None:
        if game := self._current(event.game_id):
            game.pots = {
                "superbingo_limit": event.superbingo_limit,
                "grand_superbingo_limit": event.grand_superbingo_limit,
                "jackpot_threshold": event.jackpot_threshold,
                "megabingo_cents": event.megabingo_cents,
                "superbingo_cents": event.superbingo_cents,
                "grand_superbingo_cents": event.grand_superbingo_cents,
                "jackpot_cents": event.jackpot_cents,
            }

    def _on_reserve_boost_announced(self, event: ReserveBoostAnnounced) -> None:
        if game := self._current(event.game_id):  # a later announcement replaces the earlier one
            game.reserve_boost = {"line_cents": event.line_cents, "bingo_cents": event.bingo_cents}

    def _on_last_game_announced(self, event: LastGameAnnounced) -> None:
        if game := self._current(event.game_id):
            game.last_game = True

    def _on_sale_closed(self, event: SaleClosed) -> None:
        if game := self._current(event.game_id):
            game.sale_closed = True
            game.state = "drawing"
            game.cards_sold = event.cards_sold
            game.collection_cents = event.collection_cents
            game.prizes = {"line": event.line_cents, "bingo": event.bingo_cents}

    def _on_ball_drawn(self, event: BallDrawn) -> None:
        if game := self._current(event.game_id):
            game.pause = None  # a journal written before the claim pause drew on with its prize open
            game.balls.append(event.ball)
            # The record names the cards this ball completed a row or the whole card of:
            # what the caller watches for before a claim (R85.6, R92.11).
            game.completed = _completed(game, event)

    def _on_ball_voided(self, event: BallVoided) -> None:  # journals written before the ruling of R85.5
        if (game := self._current(event.game_id)) and game.balls and game.balls[-1] == event.ball:
            game.balls.pop()
            game.completed = []

    def _on_ball_correction_signed(self, event: BallCorrectionSigned) -> None:
        if game := self._current(event.game_id):
            game.correction = {"ball_count": event.ball_count, "misread": event.misread,
                               "corrected": event.corrected, "reason": event.reason, "signer": event.signer,
                               "role": event.role}

    def _on_ball_correction_cancelled(self, event: BallCorrectionCancelled) -> None:
        if game := self._current(event.game_id):
            game.correction = None

    def _on_ball_corrected(self, event: BallCorrected) -> None:
        # The ball read again replaces the one announced, with the cards it completes (R85.5).
        if (game := self._current(event.game_id)) and game.balls and game.balls[-1] == event.misread:
            game.balls[-1] = event.ball
            game.correction = None
            game.corrections.append({"ball_count": event.ball_count, "misread": event.misread, "ball": event.ball,
                                     "reason": event.reason, "signed_by": list(event.signed_by)})
            game.completed = _completed(game, event)

    def _on_card_refused(self, event: CardRefused) -> None:
        if game := self._current(event.game_id):
            game.correction = None  # a card claimed on the ball: the announced number stands
            game.refused.append({**_card(event), "reason": event.reason, "refused_by": event.refused_by})

    def _on_prize_closed(self, event: PrizeClosed) -> None:
        if game := self._current(event.game_id):
            game.pause = None

    def _on_prize_paid(self, event: PrizePaid) -> None:
        if event.prize == "megabingo":
            self.megabingo = None  # played: the boards stop announcing it
        if game := self._current(event.game_id):
            game.paid.append(
                {
                    "prize": event.prize,
                    "amount_cents": event.amount_cents,
                    #: What the split left unpaid (stakes below 100%), added to the next game's prize (R88.5).
                    "carry_cents": event.carry_cents,
                    "payments": [{**_labelled(label), "cents": cents} for label, cents in event.payments],
                }
            )

    def _on_cards_collected(self, event: CardsCollected) -> None:
        if game := self._current(event.game_id):
            game.state = "cards collected"

    def _on_prize_won(self, event: PrizeWon) -> None:
        if game := self._current(event.game_id):
            game.winners.append({**_card(event), "pattern": event.pattern, "ball_count": event.ball_count,
                                 "stake_pct": _stake_pct(game, event.series, event.card_number)})
            game.correction = None
            # The prize is found: the draw stops while the caller asks for another card (R85.6).
            pause = game.pause or {"patterns": [], "ball_count": event.ball_count, "balls_drawn": len(game.balls)}
            if event.pattern not in pause["patterns"]:
                pause["patterns"] = [n for n in ("line", "bingo") if n in (*pause["patterns"], event.pattern)]
            game.pause = pause

    def _on_claim_rejected(self, event: ClaimRejected) -> None:
        if game := self._current(event.game_id):
            game.correction = None
            game.rejected.append({**_card(event), "reason": event.reason})

    def _on_game_suspended(self, event: GameSuspended) -> None:
        if game := self._current(event.game_id):
            game.state = "suspended"

    def _on_game_resumed(self, event: GameResumed) -> None:
        if game := self._current(event.game_id):
            game.state = "drawing" if game.sale_closed else "selling"

    def _on_game_suspended_for_good(self, event: GameSuspendedForGood) -> None:
        if game := self._current(event.game_id):
            game.state = "suspended for good"

    def _end(self, game_id: str, state: str) -> None:
        if game := self._current(game_id):
            game.state = state
        self.games_played += 1
        self.ball_set["games"] += 1

    def _on_game_closed(self, event: GameClosed) -> None:
        self._end(event.game_id, "closed")

    def _on_game_finished(self, event: GameFinished) -> None:
        self._end(event.game_id, "finished by hand")

    def _on_game_refunded(self, event: GameRefunded) -> None:
        self._end(event.game_id, "refunded")


def _actor_name(event: JournalRecord) -> str | None:
    """Who caused ``event``, by name (None for a record written without its actor stamp)."""
    return event.actor.name if event.actor is not None else None


#: The method folding each record type into the picture; the view folds no other type.
_FOLDS: dict[type[JournalRecord], Callable[[HallView, Any], None]] = {
    NetworkSaleOpened: HallView._on_network_sale_opened,
    NetworkSaleClosed: HallView._on_network_sale_closed,
    NetworkBallDrawn: HallView._on_network_ball_drawn,
    NetworkWinners: HallView._on_network_winners,
    NetworkGameClosed: HallView._on_network_game_closed,
    NetworkGameNotPlayed: HallView._on_network_game_not_played,
    AnnexGameOpened: HallView._on_annex_game_opened,
    AnnexPool: HallView._on_annex_pool,
    AnnexBallDrawn: HallView._on_annex_ball_drawn,
    AnnexClaimVerified: HallView._on_annex_claim_verified,
    AnnexGameClosed: HallView._on_annex_game_closed,
    AnnexLink: HallView._on_annex_link,
    SystemVerified: HallView._on_system_verified,
    OpeningHoursNotified: HallView._on_opening_hours_notified,
    BannedListImported: HallView._on_banned_list_imported,
    Posting: HallView._on_posting,
    MegabingoAnnounced: HallView._on_megabingo_announced,
    CashDeskOpened: HallView._on_cash_desk_opened,
    CashDeskHandedOver: HallView._on_cash_desk_handed_over,
    CashDeskReconciled: HallView._on_cash_desk_reconciled,
    TerminalEnrolled: HallView._on_terminal_enrolled,
    TerminalRevoked: HallView._on_terminal_revoked,
    TerminalOutOfService: HallView._on_terminal_out_of_service,
    TerminalReturnedToService: HallView._on_terminal_returned_to_service,
    VisitorAdmitted: HallView._on_visitor_admitted,
    VisitorLeft: HallView._on_visitor_left,
    PlayerAccountOpened: HallView._on_player_account_opened,
    ComplaintRecorded: HallView._on_complaint_recorded,
    ComplaintConfirmed: HallView._on_complaint_confirmed,
    BallsCounted: HallView._on_balls_counted,
    SessionOpeningSigned: HallView._on_session_opening_signed,
    SessionOpened: HallView._on_session_opened,
    SessionClosingSigned: HallView._on_session_closing_signed,
    SessionClosed: HallView._on_session_closed,
    BallSetReplaced: HallView._on_ball_set_replaced,
    SaleOpened: HallView._on_sale_opened,
    CardSold: HallView._on_card_sold,
    PaperCardsSold: HallView._on_paper_cards_sold,
    TerminalSaleOpened: HallView._on_terminal_sale_opened,
    VirtualCardsBought: HallView._on_virtual_cards_bought,
    SecondSeriesOpened: HallView._on_second_series_opened,
    PotsAnnounced: HallView._on_pots_announced,
    ReserveBoostAnnounced: HallView._on_reserve_boost_announced,
    LastGameAnnounced: HallView._on_last_game_announced,
    SaleClosed: HallView._on_sale_closed,
    BallDrawn: HallView._on_ball_drawn,
    BallVoided: HallView._on_ball_voided,
    BallCorrectionSigned: HallView._on_ball_correction_signed,
    BallCorrectionCancelled: HallView._on_ball_correction_cancelled,
    BallCorrected: HallView._on_ball_corrected,
    CardRefused: HallView._on_card_refused,
    PrizeClosed: HallView._on_prize_closed,
    PrizePaid: HallView._on_prize_paid,
    CardsCollected: HallView._on_cards_collected,
    PrizeWon: HallView._on_prize_won,
    ClaimRejected: HallView._on_claim_rejected,
    GameSuspended: HallView._on_game_suspended,
    GameResumed: HallView._on_game_resumed,
    GameSuspendedForGood: HallView._on_game_suspended_for_good,
    GameClosed: HallView._on_game_closed,
    GameFinished: HallView._on_game_finished,
    GameRefunded: HallView._on_game_refunded,
}

"""A hall day as the audit replay's scenario and result, from journal records only.

:class:`DayFold` reads the journal in order - every record, so that the pot levels
before the day are known - and keeps the facts of one day's games; :meth:`DayFold.export`
writes them as the two documents of FORMATS.md section 2:

* the **scenario** (``bingo-replay/2``, or ``/3`` for a date of several sessions or with
  cards refunded after a close): the prize rules in force, the carry and pot
  levels before the day's first game, and per game its price, the pots in play, the
  operator's contributions, whether it was announced as the session's last (R93.15),
  every card in play with its stake percentage (a paper card marked ``paper``), the
  paper cards verified winning before their prize closed (``claims``, R85.6: the
  ``prize_won`` records of paper cards), the balls in the order drawn as corrected and
  the misread ones (``corrections``, R85.5).  These are raw facts: nothing in it is
  computed from them.
* the **result** (``bingo-replay-result/2``): what the hall itself recorded - the
  collection of the ``sale_closed`` record, the tax posted, the balls drawn, each
  ``prize_paid`` record (the ball, the amount shared, the carry) with the cents each
  winning card was actually paid by its ``prize:*`` postings, and the carry and pot
  accounts as the ledger's postings left them after the game's last posting.  The
  replay's computation is never run here, so ``bingo replay scenario.json`` agreeing
  with this result is a real check of the money the hall moved.

**The day** is a session date: the date the pre-session verification was recorded
for (``system_verified.date``), which the session carries (``session_opened.date``) and
every game id starts with (``2026-12-01-s1-g2``), whatever the clock said when the
records were written.  The day's journal segment runs from the verification its
session was opened on to the session's ``session_closed`` record, or to the
journal's end while the session is still open.

The hall and the replay format do not say everything alike; this module decides as
``docs/audit.md`` records:

* a game refunded as a whole (R86.2) moved no prize and no pot: it is left out of both
  documents, and the operator money paid in during it counts for the next game;
* a game whose bingo is not yet paid (a game under way) is left out;
* an operator contribution counts for the game under way until that game's bingo
  is paid, then for the next game (the replay adds it at the game's step 1);
* several sessions on one date are one day: the segment runs unbroken from the first
  one's verification to the last one's close, and the documents are written in
  ``bingo-replay/3``, one numbered session each;
* cards refunded with a failed terminal after the sale closed (R96.3: the prizes stand
  on the whole collection) are the game's ``refunded_after_close``, out of the draw and
  in the sales, and the result's ``refunded_after_close_cents`` is what the house paid
  back (``bingo-replay/3``, whose tax is net of them as the hall posts it);
* a prize raised to its fixed sum (R88.3) is written with the rules' fixed sums
  (``bingo-replay/3``), the house's top-up held to them;
* a day the format cannot express is refused with :class:`AuditError`, one line
  naming the game and why: a pattern other than the line and the bingo, a carry or pot moved between two sessions of the date,
  or prize rules that are not the ones the games were recorded under;
* a **joint game** played with the partner hall (R3.5.b, the ``annex_*`` records) is a
  ``joint_games`` entry of its session, after the hall's own game it followed: this
  room's cards, the partner's sales and winning cards (their numbers from the partner's
  claim records), the main hall's draw; its result is this hall's settlement record
  (``annex_prizes_paid``) with what its postings paid this room's winners.  One not yet
  paid here, or declared not played (R96.2, its stakes returned), is left out; a failed
  terminal's cards refunded while the room's sale was open are out of its cards and
  sales, and a refund after the room's sale closed is a day the format cannot express.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol, Sequence

from protocol.cards import CardError, card_of_cells
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.replay import (
    FIRST_INPUT_FORMAT,
    INPUT_FORMAT,
    SESSIONS_INPUT_FORMAT,
    VERSIONS,
    ReplayError,
    parse_scenario,
)
from protocol.settlement import OPERATOR_POTS, POT_ACCOUNTS, POT_PRIZES, Pots, PrizeRules, close_sale

#: The ledger accounts of the carries and pots, and the replay's name for each.
LEVEL_OF_ACCOUNT = {account: name for name, account in POT_ACCOUNTS.items()}
POT_NAMES = tuple(f.name for f in dataclasses.fields(Pots))
PATTERNS = ("line", "bingo")
PRIZES = (*PATTERNS, *POT_PRIZES)
#: Posting reasons the export reads (hall_server/hall/games/ writes them).
TAX_REASON = "tax:bingo"
PRIZE_REASON = "prize:"
FIXED_SUM_REASON = "prizes:fixed sum top-up"
#: A failed terminal's card paid back (R96.3): after the sale's close the house pays it.
TERMINAL_REFUND_REASON = "refund:terminal"
FORMAT_LIMIT = f"the replay format ({INPUT_FORMAT}) cannot express it"
CONFIGURED_RULES = "the configuration's [prizes]"


class AuditError(DomainError):
    """An export refused; the one-line message names the day or the game and why."""


class CardLayouts(Protocol):
    """The cells of the cards the journal names by number (the journal holds no layouts)."""

    def paper(self, card_set: str, number: int) -> Sequence[int]:
        """The 27 cells of card ``number`` of the physical ``card_set`` (every series prints them alike)."""
        ...

    def virtual(self, series: str, number: int) -> Sequence[int]:
        """The 27 cells of card ``number`` of the virtual library of series ``series`` (``V1``)."""
        ...


@dataclass(frozen=True)
class DayExport:
    """One day's export: the two documents and the journal records they come from."""

    day: str
    scenario: dict[str, Any]
    result: dict[str, Any]
    records: tuple[Record, ...]
    games: tuple[str, ...]  # the game ids in the documents
    left_out: tuple[str, ...]  # refunded games and games still under way
    session_closed: bool
    joint_games: tuple[str, ...] = ()  # the joint games (R3.5.b) in the documents


# --- What the journal says of one game ----------------------------------------------------


@dataclass
class _Card:
    series: int
    number: int
    stake_pct: int
    terminal: str | None


@dataclass
class _Game:
    game_id: str
    number: int
    price_cents: int
    card_sets: dict[int, str]  # series -> card set
    operator: dict[str, int]
    session: int = 1  # the session's number (several sessions may share a date)
    cards: dict[tuple[int, int], _Card] = field(default_factory=dict)
    virtual_labels: dict[int, str] = field(default_factory=dict)  # series number -> label (V1)
    closed: Mapping[str, Any] | None = None  # the sale_closed payload
    jackpot_at_close: int = 0
    superbingo_limit: int | None = None
    grand_superbingo_limit: int | None = None
    jackpot_threshold: int | None = None
    megabingo_cents: int | None = None
    megabingo_announced: str | None = None
    last_game: bool = False  # announced as the session's last (R93.15)
    draw: list[int] = field(default_factory=list)
    corrections: list[tuple[int, int]] = field(default_factory=list)  # (ball count, number misread), R85.5
    claims: list[tuple[str, str]] = field(default_factory=list)  # (paper card label, pattern) found winning, R85.6
    prizes: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # prize -> prize_paid payload
    paid: dict[tuple[str, str], int] = field(default_factory=dict)  # (prize, card label) -> cents posted
    tax_cents: int = 0
    top_up_cents: int = 0
    #: A failed terminal's cards refunded after the sale closed (R96.3), ``(card id, stake_pct)`` in the order
    #: refunded, and what the house paid back for them: counted in the sales, out of the draw.
    refunded_after_close: list[tuple[str, int]] = field(default_factory=list)
    refunded_after_close_cents: int = 0
    pots_after: dict[str, int] | None = None
    refunded: bool = False
    unexpressible: str | None = None

    @property
    def settled(self) -> bool:
        """The bingo and the pots it won are paid: nothing of the game moves any more."""
        return not self.refunded and "bingo" in self.prizes

    def cannot_express(self, reason: str) -> None:
        if self.unexpressible is None:
            self.unexpressible = reason

    def card_id(self, series: int, number: int) -> str:
        """``1001-17`` for a paper card, ``V1-13`` for a virtual one (FORMATS.md section 3)."""
        return f"{self.virtual_labels.get(series, series)}-{number}"

    def card_id_of_label(self, label: str) -> str:
        series, _, number = label.partition("-")
        return self.card_id(int(series), int(number))

    def is_paper(self, card: _Card) -> bool:
        """A card sold at a seller's desk: found winning only by its player's claim (R85.6)."""
        return card.series not in self.virtual_labels and card.terminal is None


@dataclass
class _Joint:
    """A joint game (R3.5.b) as this hall's journal tells it."""

    game_id: str
    main: bool  # this hall is the main hall (its draw emits)
    partner: str
    after_game: int  # the number of this hall's own game it came after in the session (0: none)
    price_cents: int
    line_bp: int
    bingo_bp: int
    session: int = 1  # the session's number it was played in
    cards: dict[tuple[int, int], _Card] = field(default_factory=dict)
    card_sets: dict[int, str] = field(default_factory=dict)
    virtual_labels: dict[int, str] = field(default_factory=dict)
    sales_cents: int = 0
    partner_sales: tuple[int, int] | None = None  # (cards, cents)
    pool: Mapping[str, Any] | None = None
    draw: list[int] = field(default_factory=list)
    claims: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)  # (card, pattern) -> the partner's
    settled: Mapping[str, Any] | None = None  # the annex_prizes_paid payload
    paid: dict[tuple[str, str], int] = field(default_factory=dict)  # (prize, card label) -> cents posted
    tax_cents: int = 0
    pots_after: dict[str, int] | None = None
    unexpressible: str | None = None

    def cannot_express(self, reason: str) -> None:
        if self.unexpressible is None:
            self.unexpressible = reason

    def card_id(self, label: str) -> str:
        """This room's card ``series-number`` as the scenario names it: ``1001-17``, ``V1-13``."""
        series, _, number = label.partition("-")
        return f"{self.virtual_labels.get(int(series), series)}-{number}"

    def partner_id(self, label: str, pattern: str) -> str:
        """The partner's card as the scenario names it: ``hall-2/1001-17``, ``hall-2/V1-13``."""
        claim = self.claims.get((label, pattern)) or {}
        return f"{self.partner}/{claim.get('label') or label}"


#: Posting reasons of a joint game's settlement (hall_server/annex/module.py writes them).
JOINT_TAX_REASON = "tax"


# --- The fold ----------------------------------------------------------------------------


class DayFold:
    """Folds journal records, in order, into the facts of the games of ``day``."""

    def __init__(
        self, day: str, opening: Mapping[str, int] | None = None, megabingo_announced: str | None = None
    ) -> None:
        """``opening`` and ``megabingo_announced`` stand for the records before the first one fed.

        A fold over the whole journal needs neither.  A fold over a day's segment alone
        (``bingo audit verify``) starts from the levels the scenario says the day opened
        with and the date of the megabingo announcement made before the day, if any.
        """
        self.day = day
        self._balances = dict.fromkeys(LEVEL_OF_ACCOUNT, 0)
        for name, cents in (opening or {}).items():
            self._balances[POT_ACCOUNTS[name]] = cents
        self._sessions = 0  # sessions opened so far, numbered as the session module does
        self._in_session = False
        self._verified: tuple[str, dict[str, int]] | None = None  # the last verification's date, pots then
        self._pending: list[Record] | None = None  # records since a verification for the day
        self._recording = False
        self._day_sessions: list[int] = []
        self._left_day = False  # a session of another date was verified after one of the day's
        self._day_fault: str | None = None  # why the day's sessions make no one segment the format plays
        self._session_closed = False
        self._opening: dict[str, int] | None = None
        self._segment: list[Record] = []
        self._games: list[_Game] = []
        self._by_id: dict[str, _Game] = {}
        self._joints: list[_Joint] = []
        self._joint_by_id: dict[str, _Joint] = {}
        self._operator_pending = dict.fromkeys(OPERATOR_POTS, 0)
        # The announced megabingo not yet played.
        self._megabingo: Mapping[str, Any] | None = (
            None if megabingo_announced is None else {"announced_on": megabingo_announced}
        )

    def _pots(self) -> dict[str, int]:
        # Carries and pots are credit accounts: what they hold is credits minus debits.
        return {LEVEL_OF_ACCOUNT[account]: cents for account, cents in self._balances.items()}

    def feed(self, record: Record) -> None:
        """Take the next journal record."""
        try:
            self._feed(record)
        except (KeyError, TypeError, ValueError) as error:
            raise AuditError(f"record {record.seq} ({record.type}) does not hold what the hall writes: {error!r}") from None

    def _feed(self, record: Record) -> None:
        self._session(record)
        if self._recording:
            self._segment.append(record)
        elif self._pending is not None:
            self._pending.append(record)
        if record.type == "session_closed" and self._recording:
            self._recording = False
            # What follows is in the segment if another session of the day opens after it.
            self._pending = []
        self._money(record)
        self._game(record)

    def feed_all(self, records: Iterable[Record]) -> "DayFold":
        for record in records:
            self.feed(record)
        return self

    # --- Sessions and the segment ------------------------------------------------------

    def _session(self, record: Record) -> None:
        p = record.payload
        if record.type == "system_verified" and not self._in_session:
            self._verified = (str(p["date"]), self._pots())
            if p["date"] != self.day:
                self._pending = None
                self._left_day = bool(self._day_sessions)
            elif self._pending is None or not self._day_sessions:
                self._pending = []  # the day's segment starts at the verification its session opens on
        elif record.type == "balls_counted" and p.get("stage") == "opening" and not self._in_session:
            if self._verified is None:
                raise AuditError(f"record {record.seq}: a session opens without a verification before it")
            self._sessions += 1
            self._in_session = True
            date, pots = self._verified
            if date == self.day:
                if self._day_sessions:
                    self._between_sessions(record)
                self._day_sessions.append(self._sessions)
                if self._opening is None:
                    self._opening = pots
                self._segment.extend(self._pending or ())
                self._recording = True
                self._session_closed = False
            self._pending = None
        elif record.type == "session_opened" and self._in_day_session:
            # The session module's own number (a fold over a segment has not counted those before it).
            self._sessions = self._day_sessions[-1] = int(p["session"])
        elif record.type == "session_closed" and self._in_session:
            self._in_session = False
            if self._recording:
                self._session_closed = True

    def _between_sessions(self, opened: Record) -> None:
        """Another session of the day opens: the records since the last one closed join the segment,
        which the replay plays as one run of sessions only if nothing moved the carries and pots between them."""
        if self._left_day:
            self._fault_of_day(f"record {opened.seq}: a session of {self.day} opens after a session of another date; "
                               "the day's sessions are not one segment of the journal")
        for between in self._pending or ():
            if between.type == "posting" and any(
                account in LEVEL_OF_ACCOUNT for account, _ in (*between.payload["debits"], *between.payload["credits"])
            ):
                self._fault_of_day(
                    f"record {between.seq} ({between.payload['reason']}) moves the carries or pots between two sessions "
                    f"of {self.day}; the replay format ({SESSIONS_INPUT_FORMAT}) cannot express it"
                )

    def _fault_of_day(self, reason: str) -> None:
        if self._day_fault is None:
            self._day_fault = reason

    @property
    def _in_day_session(self) -> bool:
        return self._in_session and bool(self._day_sessions) and self._day_sessions[-1] == self._sessions

    # --- Money --------------------------------------------------------------------------

    def _money(self, record: Record) -> None:
        p = record.payload
        if record.type == "posting":
            for account, cents in p["debits"]:
                if account in self._balances:
                    self._balances[account] -= cents
            for account, cents in p["credits"]:
                if account in self._balances:
                    self._balances[account] += cents
            game = self._by_id.get(p["reference"]["game_id"] or "")
            if game is not None:
                self._game_posting(game, p)
            joint = self._joint_by_id.get(p["reference"]["game_id"] or "")
            if joint is not None:
                self._joint_posting(joint, p)
        elif record.type == "operator_contribution" and self._in_day_session:
            under_way = self._games[-1] if self._games and not (self._games[-1].settled or self._games[-1].refunded) else None
            target = under_way.operator if under_way is not None else self._operator_pending
            target[p["pot"]] = target.get(p["pot"], 0) + p["amount_cents"]
        elif record.type == "megabingo_announced":
            self._megabingo = p
        elif record.type == "prize_paid" and p["prize"] == "megabingo":
            self._megabingo = None  # played, on whatever day

    def _game_posting(self, game: _Game, p: Mapping[str, Any]) -> None:
        reason = p["reason"]
        amount = sum(cents for _, cents in p["credits"])
        if reason == TAX_REASON:
            game.tax_cents += amount
        elif reason == FIXED_SUM_REASON:
            game.top_up_cents += amount
        elif reason == TERMINAL_REFUND_REASON and game.closed is not None:
            game.refunded_after_close_cents += amount
        elif reason.startswith(PRIZE_REASON):
            key = (reason.removeprefix(PRIZE_REASON), p["reference"]["card"])
            game.paid[key] = game.paid.get(key, 0) + amount
        game.pots_after = self._pots()

    def _joint_posting(self, joint: _Joint, p: Mapping[str, Any]) -> None:
        reason = p["reason"]
        amount = sum(cents for _, cents in p["credits"])
        if reason == JOINT_TAX_REASON:
            joint.tax_cents += amount
        elif reason.startswith(PRIZE_REASON):
            key = (reason.removeprefix(PRIZE_REASON), p["reference"]["card"])
            joint.paid[key] = joint.paid.get(key, 0) + amount
        joint.pots_after = self._pots()

    # --- Joint games (R3.5.b) -------------------------------------------------------------

    def _joint(self, record: Record) -> None:
        p = record.payload
        kind = record.type
        if kind == "annex_game_opened":
            if self._in_day_session:
                main = p.get("relay_seq") is None  # the main hall opened it; the annex took it from the stream
                session_games = [g for g in self._games if g.game_id.startswith(f"{self.day}-s{self._sessions}-")]
                opened = _Joint(p["game_id"], main, p["annex"] if main else p["main"],
                                session_games[-1].number if session_games else 0, p["price_cents"], p["line_bp"],
                                p["bingo_bp"], self._sessions)
                if p.get("clash"):
                    opened.cannot_express(f"its cards clashed with the partner's ({p['clash']})")
                self._joints.append(opened)
                self._joint_by_id[opened.game_id] = opened
            return
        joint = self._joint_by_id.get(p.get("game_id") or "")
        if joint is None:
            return
        if kind == "annex_cards_sold":
            if p.get("card_set") is None:
                joint.cannot_express(f"its cards {p['series']}-{p['first']}..{p['last']} name no card set "
                                     "(recorded before the card set was kept)")
            else:
                joint.card_sets[p["series"]] = p["card_set"]
            for number in range(p["first"], p["last"] + 1):
                joint.cards[(p["series"], number)] = _Card(p["series"], number, 100, None)
            joint.sales_cents += p["amount_cents"]
        elif kind == "annex_virtual_cards_bought":
            joint.virtual_labels[p["series"]] = p["series_label"]
            for number in range(p["first"], p["last"] + 1):
                joint.cards[(p["series"], number)] = _Card(p["series"], number, p["stake_pct"], p["terminal"])
            joint.sales_cents += p["amount_cents"]
        elif kind == "annex_terminal_failed" and p["refunded"]:
            if p["source"] == "stakes":  # refunded while the room's sale was open: out of the game and its sales
                for label in p["refunded"]:
                    series, _, number = label.partition("-")
                    joint.cards.pop((int(series), int(number)), None)
                joint.sales_cents -= p["refunded_cents"]
            else:
                joint.cannot_express(f"the cards of failed terminal {p['terminal']} were refunded after this room's "
                                     "sale closed (R96.3: the pool stands on them)")
        elif kind == "annex_sales_reported" and p["hall_id"] == joint.partner:
            joint.partner_sales = (p["cards"], p["cents"])
        elif kind == "annex_pool":
            joint.pool = p
        elif kind == "annex_ball_drawn":
            joint.draw.append(p["ball"])
        elif kind == "annex_claim_verified" and p["hall_id"] == joint.partner:
            joint.claims.setdefault((p["card"], p["pattern"]), p)
        elif kind == "annex_prizes_paid":
            joint.settled = p
            joint.pots_after = self._pots()

    # --- Games --------------------------------------------------------------------------

    def _game(self, record: Record) -> None:
        p = record.payload
        kind = record.type
        if kind.startswith("annex_"):
            self._joint(record)
            return
        if kind == "sale_opened":
            # A paper game of this hall (a relayed network game has no card set) in the day's session.
            if "card_set" in p and p["session"] in self._day_sessions:
                opened = _Game(
                    game_id=p["game_id"],
                    number=p["game_number"],
                    price_cents=p["price_cents"],
                    card_sets={p["series"]: p["card_set"]},
                    operator=self._operator_pending,
                    session=p["session"],
                )
                self._operator_pending = dict.fromkeys(OPERATOR_POTS, 0)
                if tuple(p["patterns"]) != PATTERNS:
                    opened.cannot_express(f"it plays the patterns {', '.join(p['patterns'])}; {FORMAT_LIMIT}")
                self._games.append(opened)
                self._by_id[opened.game_id] = opened
            return
        game = self._by_id.get(p.get("game_id") or "")
        if game is None:
            return
        if kind == "paper_cards_sold" and "price_cents" in p:
            # One record for a range of paper cards (older journals wrote a card_sold per card).
            if p["price_cents"] != game.price_cents:
                game.cannot_express(
                    f"cards {p['series']}-{p['first']}..{p['last']} were sold at {p['price_cents']} cents, the game "
                    f"at {game.price_cents}; {FORMAT_LIMIT}"
                )
            for number in range(p["first"], p["last"] + 1):
                game.cards[(p["series"], number)] = _Card(p["series"], number, 100, None)
        elif kind == "card_sold":
            if p["price_cents"] != game.price_cents:
                game.cannot_express(
                    f"card {p['series']}-{p['card_number']} was sold at {p['price_cents']} cents, the game at "
                    f"{game.price_cents}; {FORMAT_LIMIT}"
                )
            card = _Card(p["series"], p["card_number"], p.get("stake_pct", 100), p.get("terminal_id"))
            game.cards[(card.series, card.number)] = card
        elif kind == "virtual_cards_bought":
            game.virtual_labels[p["series"]] = p["series_label"]
            if p.get("price_cents") is not None:  # the range is the cards (older journals: a card_sold each)
                if p["price_cents"] != game.price_cents:
                    game.cannot_express(
                        f"cards {p['series_label']}-{p['first']}..{p['last']} were sold at {p['price_cents']} cents, "
                        f"the game at {game.price_cents}; {FORMAT_LIMIT}"
                    )
                for number in range(p["first"], p["last"] + 1):
                    game.cards[(p["series"], number)] = _Card(p["series"], number, p["stake_pct"], p["terminal"])
        elif kind == "second_series_opened":
            game.card_sets[p["series"]] = p["card_set"]
        elif kind == "terminal_failed":
            on_terminal = {key: c for key, c in game.cards.items() if c.terminal == p["terminal_id"]}
            if game.closed is None:
                game.cards = {key: c for key, c in game.cards.items() if key not in on_terminal}
            else:
                # After the close the prizes stand on the whole collection (R96.3): the cards refunded leave the
                # draw and stay in the sales, the house paying their stakes back; a card that won stays in play.
                labels = p.get("refunded")
                refunded = [_label_key(label) for label in labels] if labels is not None else list(on_terminal)
                for key in refunded:
                    if key in game.cards:
                        game.refunded_after_close.append((game.card_id(*key), game.cards.pop(key).stake_pct))
        elif kind == "pots_announced":
            game.superbingo_limit = p["superbingo_limit"]
            game.grand_superbingo_limit = p["grand_superbingo_limit"]
            game.jackpot_threshold = p["jackpot_threshold"]
            game.megabingo_cents = p["megabingo_cents"]
            game.megabingo_announced = None
            if game.megabingo_cents is not None:
                if self._megabingo is None:
                    game.cannot_express("its megabingo has no announcement in the journal (R90)")
                else:
                    game.megabingo_announced = self._megabingo["announced_on"]
        elif kind == "last_game_announced":
            game.last_game = True
        elif kind == "sale_closed":
            game.closed = p
            game.jackpot_at_close = self._balances["pot:jackpot_accumulated"]
        elif kind == "ball_drawn":
            game.draw.append(p["ball"])
        elif kind == "ball_voided":  # journals written before the ruling of R85.5
            if game.draw and game.draw[-1] == p["ball"]:
                game.draw.pop()
            else:
                game.cannot_express(f"record {record.seq} voids ball {p['ball']}, which is not the last drawn")
        elif kind == "ball_corrected":
            if game.draw and game.draw[-1] == p["misread"] and len(game.draw) == p["ball_count"]:
                game.draw[-1] = p["ball"]
                game.corrections.append((p["ball_count"], p["misread"]))
            else:
                game.cannot_express(f"record {record.seq} corrects ball {p['misread']}, which is not the last drawn")
        elif kind == "prize_won":
            if p["pattern"] not in PATTERNS:
                game.cannot_express(f"it awards the pattern {p['pattern']}; {FORMAT_LIMIT}")
            winner = game.cards.get((p["series"], p["card_number"]))
            if winner is not None and game.is_paper(winner):
                game.claims.append((f"{p['series']}-{p['card_number']}", p["pattern"]))
        elif kind == "prize_paid":
            if p["prize"] not in PRIZES:
                game.cannot_express(f"it pays the prize {p['prize']}; {FORMAT_LIMIT}")
            elif p["prize"] in game.prizes:
                game.cannot_express(f"record {record.seq} pays its {p['prize']} a second time")
            game.prizes[p["prize"]] = p
            game.pots_after = self._pots()  # a prize of 0 cents has no posting to take them after
        elif kind == "game_refunded":
            game.refunded = True
            # The operator's money stayed in the pots: it counts for the next game.
            for pot, cents in game.operator.items():
                self._operator_pending[pot] = self._operator_pending.get(pot, 0) + cents
            game.operator = dict.fromkeys(OPERATOR_POTS, 0)

    # --- The documents ------------------------------------------------------------------

    @property
    def segment(self) -> tuple[Record, ...]:
        """The day's journal segment as folded so far (empty when no session is dated the day)."""
        return tuple(self._segment)

    @property
    def card_sets(self) -> dict[int, str]:
        """The card set of every paper series the day's games sold (its joint games' too)."""
        sets = {series: name for game in self._games for series, name in game.card_sets.items()}
        for joint in self._joints:
            sets.update(joint.card_sets)
        return sets

    def export(self, rules: PrizeRules, layouts: CardLayouts, rules_from: str = CONFIGURED_RULES,
               format: str | None = None) -> DayExport:
        """The day's scenario and result; :class:`AuditError` if there is none to make.

        ``rules_from`` names where ``rules`` come from in a refusal that finds them wrong;
        ``format`` is the scenario's: by default ``bingo-replay/2`` for a day of one session
        and ``bingo-replay/3`` for a date of several; an export's own to rebuild it
        (``bingo-replay/1``, whose games say nothing of the last game).
        """
        day = self.day
        if not self._day_sessions:
            raise AuditError(f"no session of this hall is dated {day}")
        if self._day_fault is not None:
            raise AuditError(self._day_fault)
        played = [g for g in self._games if g.settled]
        joints = [j for j in self._joints if j.settled is not None]
        if not played and not joints:
            raise AuditError(f"the session of {day} has no game played to its end")
        # The sessions of the day that played a game to its end, in order.
        numbers = [n for n in self._day_sessions
                   if any(g.session == n for g in played) or any(j.session == n for j in joints)]
        refunds_after_close = [g.game_id for g in played if g.refunded_after_close]
        topped_up = [g.game_id for g in played if g.top_up_cents]
        if format is None:
            needs_3 = len(numbers) > 1 or refunds_after_close or topped_up
            format = SESSIONS_INPUT_FORMAT if needs_3 else INPUT_FORMAT
        numbered = format == SESSIONS_INPUT_FORMAT
        if refunds_after_close and not numbered:
            raise AuditError(
                f"game {refunds_after_close[0]}: cards were refunded after its sale closed (R96.3), whose tax the "
                f"replay format ({format}) takes on the whole collection; {SESSIONS_INPUT_FORMAT} expresses it"
            )
        if len(numbers) > 1 and not numbered:
            raise AuditError(
                f"{day} holds sessions {' and '.join(map(str, numbers))}; the replay format ({format}) plays one "
                f"session a date ({SESSIONS_INPUT_FORMAT} plays several)"
            )
        for game in played:
            fault = game.unexpressible or _rules_fault(game, rules, rules_from, fixed_sums=numbered)
            if fault:
                raise AuditError(f"game {game.game_id}: {fault}")
        for joint in joints:
            fault = joint.unexpressible or _joint_fault(joint)
            if fault:
                raise AuditError(f"joint game {joint.game_id}: {fault}")
        assert self._opening is not None, "a day session has its opening levels"
        scenario: dict[str, Any] = {
            "format": format,
            "rules": {
                "line_bp": rules.line_bp,
                "bingo_bp": rules.bingo_bp,
                "superbingo_bp": rules.superbingo_bp,
                "megabingo": rules.megabingo,
                "jackpot": rules.jackpot,
                # The fixed sums the line and the bingo never fall below (R88.3), in version 3 when set.
                **({name: getattr(rules, name) for name in ("line_minimum_cents", "bingo_minimum_cents")
                    if getattr(rules, name)} if numbered else {}),
            },
            "opening": _levels(self._opening),
            "sessions": [],
        }
        for number in numbers:
            session: dict[str, Any] = {"date": day, **({"session": number} if numbered else {}),
                                       "games": [_scenario_game(g, layouts, format) for g in played
                                                 if g.session == number]}
            session_joints = [_scenario_joint(j, layouts) for j in joints if j.session == number]
            if session_joints:
                session["joint_games"] = session_joints
            scenario["sessions"].append(session)
        try:
            parse_scenario(scenario)
        except ReplayError as error:
            raise AuditError(f"the day {day} does not read as {format}: {error}") from None
        # The result lists the games as the replay plays them: session by session, each session's joint
        # games after its own games.
        games = [_result_game(day, g, numbered) for n in numbers for g in played if g.session == n]
        joint_results = [_result_joint(day, j, numbered) for n in numbers for j in joints if j.session == n]
        result: dict[str, Any] = {"format": VERSIONS[format][0], "games": games}
        if joint_results:
            result["joint_games"] = joint_results
        result["totals"] = {
            "sales_cents": sum(g["sales_cents"] for g in (*games, *joint_results)),
            "paid_cents": sum(
                paid["cents"] for g in games for prize in g["prizes"].values() for paid in prize["paid"]
            ) + sum(j["paid_here_cents"] for j in joint_results),
            "tax_cents": sum(g["tax_cents"] for g in (*games, *joint_results)),
        }
        return DayExport(
            day=day,
            scenario=scenario,
            result=result,
            records=tuple(self._segment),
            games=tuple(g.game_id for n in numbers for g in played if g.session == n),
            left_out=tuple(g.game_id for g in self._games if not g.settled)
            + tuple(j.game_id for j in self._joints if j.settled is None),
            session_closed=self._session_closed,
            joint_games=tuple(j.game_id for j in joints),
        )


def build_day(records: Iterable[Record], day: str, rules: PrizeRules, layouts: CardLayouts) -> DayExport:
    """The export of ``day`` from the whole journal, ``records`` in sequence order."""
    return DayFold(day).feed_all(records).export(rules, layouts)


# --- Helpers ---------------------------------------------------------------------------


def _label_key(label: str) -> tuple[int, int]:
    """``(series, number)`` of a card label ``series-number``."""
    series, _, number = label.partition("-")
    return int(series), int(number)


def _levels(pots: Mapping[str, int]) -> dict[str, int]:
    return {name: pots[name] for name in POT_NAMES}


def _rules_fault(game: _Game, rules: PrizeRules, rules_from: str, fixed_sums: bool = False) -> str | None:
    """Why ``rules`` are not the rules the game's sale was closed under, if they are not.

    The journal does not record the prize rules, so they come from the configuration;
    this check ties them to what each ``sale_closed`` record set aside, and the house's
    top-up to the fixed sums (R88.3) when the format says them (``fixed_sums``).
    """
    if game.top_up_cents and not fixed_sums:
        return (
            f"its line or bingo was raised to a fixed sum, the house adding {game.top_up_cents} cents (R88.3); "
            f"{FORMAT_LIMIT}"
        )
    closed = game.closed
    assert closed is not None, "a settled game had its sale closed"
    sales = closed["collection_cents"]
    carried = Pots(carry_line=closed["carry_line_cents"], carry_bingo=closed["carry_bingo_cents"],
                   jackpot_accumulated=game.jackpot_at_close)
    figures = close_sale(rules, sales, carried, closed.get("boost_line_cents", 0), closed.get("boost_bingo_cents", 0))
    checks = (
        ("line prize", closed["line_cents"], figures.line_cents),
        ("bingo prize", closed["bingo_cents"], figures.bingo_cents),
        ("pot contributions", dict(closed["contributions"]),
         {POT_ACCOUNTS[pot]: cents for pot, cents in figures.contributions.items() if cents}),
        ("house share", closed["house_cents"], figures.house_cents),
        ("fixed sum top-up from the house", game.top_up_cents, figures.top_up_cents),
    )
    for what, recorded, computed in checks:
        if recorded != computed:
            return (
                f"its sale closed with a {what} of {recorded} where {rules_from} give {computed}: "
                "it was played under other prize rules"
                + ("; export with the configuration of that day" if rules_from == CONFIGURED_RULES else "")
            )
    return None


def _rows(cells: Sequence[int], where: str) -> list[list[int]]:
    try:
        return [list(row) for row in card_of_cells(tuple(int(n) for n in cells)).rows]
    except CardError as error:
        raise AuditError(f"{where} is not a valid card in the card store: {error}") from None


def _scenario_game(game: _Game, layouts: CardLayouts, format: str = INPUT_FORMAT) -> dict[str, Any]:
    v2 = format != FIRST_INPUT_FORMAT
    cards = []
    for card in game.cards.values():
        card_id = game.card_id(card.series, card.number)
        label = game.virtual_labels.get(card.series)
        if label is not None:
            cells = layouts.virtual(label, card.number)
        else:
            cells = layouts.paper(game.card_sets[card.series], card.number)
        entry: dict[str, Any] = {"id": card_id, "stake_pct": card.stake_pct, "rows": _rows(cells, f"card {card_id}")}
        if v2 and game.is_paper(card):
            entry["paper"] = True
        cards.append(entry)
    pause: dict[str, Any] = {}
    if v2:
        pause["claims"] = [{"card": game.card_id_of_label(label), "pattern": pattern} for label, pattern in game.claims]
        if game.corrections:
            pause["corrections"] = [{"ball": count, "misread": misread} for count, misread in game.corrections]
    return {
        "game": game.number,
        "price_cents": game.price_cents,
        "superbingo_limit": game.superbingo_limit,
        "grand_superbingo_limit": game.grand_superbingo_limit,
        "jackpot_threshold": game.jackpot_threshold,
        "megabingo_cents": game.megabingo_cents,
        "megabingo_announced": game.megabingo_announced,
        "operator": {pot: game.operator.get(pot, 0) for pot in OPERATOR_POTS},
        "reserve_boost": _reserve_boost(game),
        # The session's last game takes the superbingo fund (R89); the first format knew no such key.
        **({} if format == FIRST_INPUT_FORMAT else {"last_game": game.last_game}),
        "cards": cards,
        **({"refunded_after_close": [{"id": card_id, "stake_pct": pct} for card_id, pct in game.refunded_after_close]}
           if game.refunded_after_close else {}),
        "draw": list(game.draw),
        **pause,
    }


def _reserve_boost(game: _Game) -> dict[str, int]:
    """What the jackpot's reserve added to the game's line and bingo at its sale's close (R91.7)."""
    closed = game.closed or {}
    return {"line": closed.get("boost_line_cents", 0), "bingo": closed.get("boost_bingo_cents", 0)}


def _result_game(day: str, game: _Game, numbered: bool = False) -> dict[str, Any]:
    assert game.closed is not None and game.pots_after is not None
    prizes = {}
    for name in PRIZES:
        paid = game.prizes.get(name)
        if paid is None:
            continue
        # Every winning card the prize record names, with what its postings paid it.
        payments = sorted(
            (game.card_id_of_label(label), game.paid.get((name, label), 0)) for label, _ in paid["payments"]
        )
        prizes[name] = {
            "ball": paid["ball_count"],
            "amount_cents": paid["amount_cents"],
            "carry_cents": paid["carry_cents"],
            "paid": [{"card": card, "cents": cents} for card, cents in payments],
        }
    return {
        "date": day,
        **({"session": game.session} if numbered else {}),
        "game": game.number,
        "sales_cents": game.closed["collection_cents"],
        "tax_cents": game.tax_cents,
        "balls_drawn": len(game.draw),
        "prizes": prizes,
        **({"refunded_after_close_cents": game.refunded_after_close_cents} if game.refunded_after_close else {}),
        "pots": _levels(game.pots_after),
    }


# --- Joint games (R3.5.b) ------------------------------------------------------------------


def _joint_fault(joint: _Joint) -> str | None:
    """Why a settled joint game's records do not make a replay's game, if they do not."""
    settled = joint.settled
    assert settled is not None
    if joint.partner_sales is None or joint.pool is None:
        return "its pool is not in the journal"
    for prize in settled["prizes"]:
        if prize["ball_count"] is None:
            return f"nobody was verified as winning its {prize['pattern']}; {FORMAT_LIMIT}"
        for hall, card, _ in prize["winners"]:
            if hall == joint.partner and (card, prize["pattern"]) not in joint.claims:
                return f"the partner's winning card {card} has no claim record"
            if hall == joint.partner and not joint.claims[(card, prize["pattern"])].get("cells"):
                return (f"the numbers of the partner's winning card {card} are not in the journal (recorded before "
                        "they were relayed)")
    return None


def _scenario_joint(joint: _Joint, layouts: CardLayouts) -> dict[str, Any]:
    assert joint.settled is not None and joint.partner_sales is not None
    cards = []
    for card in joint.cards.values():
        label = joint.virtual_labels.get(card.series)
        card_id = f"{label or card.series}-{card.number}"
        cells = layouts.virtual(label, card.number) if label is not None else \
            layouts.paper(joint.card_sets[card.series], card.number)
        cards.append({"id": card_id, "stake_pct": card.stake_pct, "rows": _rows(cells, f"card {card_id}")})
    winners: dict[str, dict[str, Any]] = {}
    for prize in joint.settled["prizes"]:
        for hall, card, _ in prize["winners"]:
            if hall != joint.partner:
                continue
            claim = joint.claims[(card, prize["pattern"])]
            card_id = joint.partner_id(card, prize["pattern"])
            winners.setdefault(card_id, {"id": card_id, "stake_pct": claim.get("stake_pct") or 100,
                                         "rows": _rows(claim["cells"], f"the partner's card {card_id}")})
    return {
        "game_id": joint.game_id,
        "after_game": joint.after_game,
        "role": "main" if joint.main else "annex",
        "partner": joint.partner,
        "price_cents": joint.price_cents,
        "line_bp": joint.line_bp,
        "bingo_bp": joint.bingo_bp,
        "partner_cards": joint.partner_sales[0],
        "partner_sales_cents": joint.partner_sales[1],
        "cards": cards,
        "partner_winners": sorted(winners.values(), key=lambda c: c["id"]),
        "draw": list(joint.draw),
    }


def _result_joint(day: str, joint: _Joint, numbered: bool = False) -> dict[str, Any]:
    settled = joint.settled
    assert settled is not None and joint.pool is not None and joint.pots_after is not None
    prizes = {}
    paid_here = 0
    for prize in settled["prizes"]:
        pattern = prize["pattern"]
        paid = []
        for hall, card, cents in prize["winners"]:
            if hall == joint.partner:
                paid.append((joint.partner_id(card, pattern), cents))  # what this hall recorded as the partner's share
            else:
                posted = joint.paid.get((pattern, card), 0)
                paid_here += posted
                paid.append((joint.card_id(card), posted))
        prizes[pattern] = {
            "ball": prize["ball_count"],
            "amount_cents": prize["amount_cents"],
            "carry_cents": prize["carry_cents"],
            "paid": [{"card": card, "cents": cents} for card, cents in sorted(paid)],
        }
    return {
        "date": day,
        **({"session": joint.session} if numbered else {}),
        "game_id": joint.game_id,
        "role": "main" if joint.main else "annex",
        "sales_cents": joint.sales_cents,
        "pool_sales_cents": joint.pool["sales_cents"],
        "tax_cents": joint.tax_cents,
        "prizes": prizes,
        "paid_here_cents": paid_here,
        "owed_to_partner_cents": settled["owed_to_partner_cents"],
        "pots": _levels(joint.pots_after),
    }

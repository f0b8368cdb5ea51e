"""A scripted hall session for newcomers: ``bingo hall serve --demo``.

Simulated staff and players play whole traditional games through the same commands
the console sends, at a pace a person can follow on the console and the information
board: the pre-session verification and the opening ball count, the signatures, then
game after game - sale announced, paper cards sold in ranges by three sellers, sale
closed, balls drawn, every card a ball completes claimed and verified by the table
chief (now and then a player claims too early and the claim is rejected), each line
and bingo found held open while the caller asks "another card?" and then closed by
the caller (R85.6), prizes paid
from the cash desk (the sellers hand their takings in to it once the game is over), game
closed and cards collected.

When the hall's prize rules fund them, the room chief puts pots in play in every game
before its sale closes: the jackpot within 42 balls, and the superbingo within 50 balls
in every other game (R89, R91); the other games' superbingo shares wait in its fund.

With ``terminals`` the games have virtual cards too: at the opening the staff enrol
those player terminals, admit a visitor for each and open a player account with a PIN
and credit, and every game opens the terminals' sale for a while before the paper sale
closes.  Who plays on them is not this script's business: :attr:`DemoSession.players`
fires with each terminal's token, account and PIN, for headless terminal clients or a
person at a kiosk to sign in and buy cards as any player would (R82.13-16, R93).

It decides no rule: each step is a command the hall's core may refuse, and a refusal
is logged and the script carries on with the next sensible step.

**The storage failing** is no refusal: while the hall's storage is unavailable (disk
full, a read-only file, a lock, the database unreachable) the script pauses at the
command it was giving, and gives it again once the storage is back - it did nothing.
Each command goes with a request id of its own, so one whose commit reached the database
after all is not carried out twice (it is answered as a repeat, and the script goes on
from what the hall shows).
"""

from __future__ import annotations

import itertools
import random
import secrets
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, Callable, Sequence, TypeVar

from twisted.application.service import Service
from twisted.internet import defer, task
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from hall_server.hall.admission import DEFAULT_TIMEZONE, local_date
from hall_server.hall.roles import Role
from hall_server.web.view import GamePicture, HallView
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import JournalRecord, declared
from protocol.records.admission import VisitorAdmitted
from protocol.records.cashier import PlayerAccountOpened
from protocol.records.game import BallDrawn
from protocol.records.sale import PaperCardsSold
from protocol.settlement import PrizeRules
from server_kit.core import Actor, CommandCore, Repeated
from server_kit.db.faults import StorageUnavailable

log = Logger()

ADMIN = Actor("demo-admin", Role.ADMINISTRATOR)
ROOM_CHIEF = Actor("demo-room-chief", Role.ROOM_CHIEF)
TABLE_CHIEF = Actor("demo-table-chief", Role.TABLE_CHIEF)
CALLER = Actor("demo-caller", Role.SELLER_CALLER)
SELLERS = tuple(Actor(name, Role.SELLER_CALLER) for name in ("demo-seller-ana", "demo-seller-ben", "demo-caller"))
CASHIER = Actor("demo-cashier", Role.CASHIER)
DOOR = Actor("demo-door", Role.ADMISSION)
WITNESSES = ["A member of the public", "Another player"]
FLOAT_CENTS = 100_000
#: What each demo player's account is loaded with at the opening.
PLAYER_CREDIT_CENTS = 20_000
#: Below this credit, a demo player goes to the desk between games and loads ``PLAYER_CREDIT_CENTS`` again.
TOP_UP_BELOW_CENTS = 5_000
#: The pots the demo's room chief puts in play when the rules fund them: a superbingo within this many
#: balls (every other game) and the jackpot within this many (every game).
SUPERBINGO_LIMIT = 50
JACKPOT_THRESHOLD = 42
#: The demo players' PIN: a demo hides nothing from the newcomer who watches it.
PLAYER_PIN = "2468"
#: The birth date the demo's door reads on its players' documents: of age (R75.1).
DEMO_BIRTH_DATE = "1980-01-01"
#: The banned list a demo hall imports, so that its door admits the demo's players (R75.2).
DEMO_BANNED_LIST = "document,name,until\nX0000000,Demo Banned Person,\n"


@dataclass(frozen=True)
class DemoPlayer:
    """A player terminal the demo enrolled and the account waiting to play on it."""

    terminal: str
    token: str
    account: str
    pin: str


@dataclass(frozen=True)
class DemoStation:
    """A video bingo machine's station the demo enrolled, with its token."""

    machine: str
    station: int
    token: str


class DemoSession(Service):
    """Plays games on ``core`` until stopped, one step every ``pace`` seconds."""

    def __init__(
        self,
        core: CommandCore,
        view: HallView,
        clock: IReactorTime,
        series: list[int],
        desk: str,
        *,
        pace: float = 2.5,
        cards_per_game: int = 120,
        rng: random.Random | None = None,
        timezone: tzinfo = DEFAULT_TIMEZONE,
        terminals: Sequence[str] = (),
        stations: Sequence[tuple[str, int]] = (),
        balance: Callable[[str], int] | None = None,
        new_series: Callable[[], int | None] | None = None,
        rules: PrizeRules | None = None,
    ) -> None:
        self.core = core
        #: The hall's prize rules: the pots they fund are put in play (None: no pot).
        self.rules = rules
        #: Registers another series when every one is sold out (its number), or says there are cards left (None).
        self.new_series = new_series
        #: An account's credit in cents, read between games to top up a demo player running low.
        self.balance = balance
        self.timezone = timezone  # the hall's: the session is dated by its local day
        self.view = view
        self.clock = clock
        self.series = list(series)
        self.desk = desk
        self.pace = pace
        self.cards_per_game = cards_per_game
        self.rng = rng or random.Random()
        self.running_game: defer.Deferred[None] | None = None
        self.terminals = tuple(terminals)
        #: The video bingo stations to enrol, ``(machine, station)``, and those enrolled.
        self.stations = tuple(stations)
        self.stations_enrolled: list[DemoStation] = []
        #: Fires once with the :class:`DemoPlayer` of every terminal enrolled.
        self.players: defer.Deferred[list[DemoPlayer]] = defer.Deferred()
        #: Seconds the terminals' sale of a game stays open: long enough to sign in and buy.
        self.terminal_sale_s = max(5, round(12 * pace))
        #: The demo players' accounts.
        self.accounts: list[str] = []
        #: What each seller's drawer took and has not handed in to the desk yet, in cents.
        self.takings: dict[str, int] = {}
        #: Whether the script waits for the storage to come back, and who waits with it.
        self.paused = False
        self._resumed: list[defer.Deferred[None]] = []
        # Request ids of this run: never one of an earlier run, whose requests the core remembers.
        self._run_id = secrets.token_hex(4)
        self._requests = itertools.count(1)

    def startService(self) -> None:
        super().startService()
        self.core.storage_listeners.append(self._storage_changed)
        self.running_game = self.play()
        self.running_game.addErrback(lambda failure: None if failure.check(defer.CancelledError)
                                     else log.failure("the demo session stopped", failure))

    def stopService(self) -> None:
        super().stopService()
        if self._storage_changed in self.core.storage_listeners:
            self.core.storage_listeners.remove(self._storage_changed)
        if self.running_game is not None:
            self.running_game.cancel()

    def _storage_changed(self, fault: StorageUnavailable | None) -> None:
        if fault is None:
            waiting, self._resumed = self._resumed, []
            for resumed in waiting:
                resumed.callback(None)

    def storage_back(self) -> defer.Deferred[None]:
        """Fires once the hall's storage takes commits again (at once if it does)."""
        if self.core.storage_fault is None:
            return defer.succeed(None)
        resumed: defer.Deferred[None] = defer.Deferred(lambda d: self._resumed.remove(d) if d in self._resumed else None)
        self._resumed.append(resumed)
        return resumed

    def wait(self, factor: float = 1.0) -> defer.Deferred[None]:
        return task.deferLater(self.clock, self.pace * factor, lambda: None)

    @defer.inlineCallbacks
    def command(self, actor: Actor, name: str, /, **args: Any):  # type: ignore[no-untyped-def]
        """Give one command; the committed records, or ``None`` if the hall refused it.

        While the storage is unavailable the script waits here, and then gives the command again.
        """
        handler = self.core.commands[name].handler
        request = f"demo-{self._run_id}-{next(self._requests)}"
        while True:
            if self.core.storage_fault is not None:
                self.paused = True
                log.info("Demo: paused at {name} while the storage is unavailable", name=name)
                yield self.storage_back()
                self.paused = False
                log.info("Demo: the storage is back; going on with {name}", name=name)
            try:
                records = yield self.core.once(actor, request, lambda who: handler(who, **args))
            except StorageUnavailable:
                continue  # nothing was done: given again once the storage is back
            except DomainError as error:
                log.info("Demo: {name} refused: {reason}", name=name, reason=str(error))
                return None
            if isinstance(records, Repeated):  # its first try reached the journal after all
                log.info("Demo: {name} was carried out by its first try", name=name)
                return None
            return records

    @defer.inlineCallbacks
    def play(self):  # type: ignore[no-untyped-def]
        yield self.open_session()
        yield self.verify_after_a_crash()
        if self.terminals or self.stations:  # after a restart too: the earlier run's tokens are gone
            yield self.enrol_players()
        while True:
            yield self.top_up()
            played = yield self.play_game()
            yield self.wait(4 if played else 10)

    @defer.inlineCallbacks
    def open_session(self):  # type: ignore[no-untyped-def]
        if self.view.session["open"]:
            return
        today = local_date(int(self.clock.seconds() * 1000), self.timezone).isoformat()
        if self.view.session["number"] == 0 or self.view.session["closed"]:
            yield self.command(ADMIN, "run_verification", date=today)
            yield self.wait()
            yield self.command(ROOM_CHIEF, "count_balls", stage="opening", balls_present=list(range(1, 91)),
                               witnesses=WITNESSES)
            yield self.wait()
        yield self.command(ROOM_CHIEF, "sign_session_opening")
        yield self.command(ADMIN, "sign_session_opening")
        # Prizes are paid in cash from the desk's drawer (R78): it opens with a float.
        yield self.command(CASHIER, "open_cash_desk", desk=self.desk, float_cents=FLOAT_CENTS)
        yield self.wait()

    @defer.inlineCallbacks
    def verify_after_a_crash(self):  # type: ignore[no-untyped-def]
        """A start that follows a crash sells nothing until a verification passes (R92.5e): the demo's
        room chief runs it, as the hall's would."""
        refusals = [getattr(m, "restart_refusal", None) for m in self.core.modules]
        if any(refusal is not None and refusal() is not None for refusal in refusals):
            session = self.view.session
            day = session.get("date") if session["open"] else None  # the open session's own date
            day = day or local_date(int(self.clock.seconds() * 1000), self.timezone).isoformat()
            yield self.command(ROOM_CHIEF, "run_verification", date=day)
            yield self.wait()

    @defer.inlineCallbacks
    def enrol_players(self):  # type: ignore[no-untyped-def]
        """Each terminal enrolled afresh (its token is known only at enrolment), with a player
        admitted at the door and an account with credit."""
        if self.view.banned_list is None:
            yield self.command(ADMIN, "import_banned_list", content=DEMO_BANNED_LIST, source="demo-banned-list.csv")
        players = []
        for number, terminal in enumerate(self.terminals, 1):
            enrolled = yield self.command(ROOM_CHIEF, "enrol_terminal", terminal=terminal, place="demo")
            if enrolled is None:  # enrolled by an earlier run, whose token is gone
                yield self.command(ROOM_CHIEF, "revoke_terminal", terminal=terminal,
                                   reason="the demo starts again and enrols it with a new token")
                enrolled = yield self.command(ROOM_CHIEF, "enrol_terminal", terminal=terminal, place="demo")
            if enrolled is None:
                continue
            document = f"DEMO{self.rng.randrange(10**8):08d}"
            admitted = yield self.command(DOOR, "admit_visitor", name=f"Demo player {number}", document=document,
                                          birth_date=DEMO_BIRTH_DATE)
            if not admitted:
                continue
            visitor = _first(admitted, VisitorAdmitted).number
            opened = yield self.command(CASHIER, "open_player_account", visitor=visitor, medium="ticket",
                                        pin=PLAYER_PIN)
            if not opened:
                continue
            account = _first(opened, PlayerAccountOpened).account
            yield self.command(CASHIER, "load_credit", account=account, amount_cents=PLAYER_CREDIT_CENTS,
                               desk=self.desk)
            players.append(DemoPlayer(terminal, enrolled["token"], account, PLAYER_PIN))
            self.accounts.append(account)
        for machine, station in self.stations:  # enrolling again gives a new token
            enrolled = yield self.command(ROOM_CHIEF, "enrol_vb_station", machine=machine, station=station)
            if enrolled is not None:
                self.stations_enrolled.append(DemoStation(machine, station, enrolled["token"]))
        if not self.players.called:
            self.players.callback(players)

    @defer.inlineCallbacks
    def top_up(self):  # type: ignore[no-untyped-def]
        """A demo player whose credit runs low loads more at the desk, so the terminals play on for hours."""
        if self.balance is None:
            return
        for account in self.accounts:
            try:
                low = self.balance(account) < TOP_UP_BELOW_CENTS
            except Exception:  # a closed or unknown account plays no more
                continue
            if low:
                yield self.command(CASHIER, "load_credit", account=account, amount_cents=PLAYER_CREDIT_CENTS,
                                   desk=self.desk)

    @defer.inlineCallbacks
    def play_game(self):  # type: ignore[no-untyped-def]
        """One whole game; False if no series could be put on sale."""
        game = self.view.game
        if game is not None and game.state == "selling":
            pass  # a sale left open by a restart: sell on, then play it
        elif game is not None and game.state not in (
            "closed", "finished by hand", "refunded", "cards collected", "suspended for good",
        ):
            # A game left half-played by a restart: finish it first.
            yield self.draw_to_the_end()
            return True
        else:
            if game is not None and game.state != "cards collected":
                yield self.command(ROOM_CHIEF, "collect_cards")
            if not (yield self.announce_sale()):
                return False
            if self.terminals:
                yield self.command(CALLER, "open_terminal_sale", seconds=self.terminal_sale_s)
            yield self.wait()
        sale_began = self.clock.seconds()
        yield self.sell()
        if self.terminals:
            # The players at the terminals buy until their sale time is over.
            left = self.terminal_sale_s - (self.clock.seconds() - sale_began)
            if left > 0:
                yield task.deferLater(self.clock, left, lambda: None)
        yield self.announce_pots()
        if self.view.game is None or not self.view.game.cards_sold:
            # Nothing could be sold (the series had no card left): the game is called off.
            yield self.command(ROOM_CHIEF, "suspend_game", reason="no card could be sold")
            yield self.command(ROOM_CHIEF, "suspend_game_for_good", reason="no card could be sold")
            yield self.command(ROOM_CHIEF, "collect_cards")
            return True
        yield self.command(ROOM_CHIEF, "close_sale")
        yield self.wait(2)
        yield self.draw_to_the_end()
        return True

    @defer.inlineCallbacks
    def announce_pots(self):  # type: ignore[no-untyped-def]
        """The room chief puts in play the pots the rules fund, before the sale closes (R89, R91)."""
        game = self.view.game
        rules = self.rules
        if rules is None or game is None or game.state != "selling":
            return
        pots = {}
        if rules.jackpot:
            pots["jackpot_threshold"] = JACKPOT_THRESHOLD
        if rules.superbingo_bp and (game.number or 1) % 2 == 1:
            pots["superbingo_limit"] = SUPERBINGO_LIMIT
        if pots:
            yield self.command(ROOM_CHIEF, "announce_pots", **pots)

    @defer.inlineCallbacks
    def announce_sale(self):  # type: ignore[no-untyped-def]
        """Open a sale on the first series with cards left; when every series is sold out, the demo's staff
        register another (as ``bingo cards add-series`` does), so that the demo plays on for hours."""
        for series in self.series:
            if (yield self.command(CALLER, "announce_sale", series=series)) is not None:
                return True
        number = self.new_series() if self.new_series is not None else None
        if number is None:
            return False
        self.series.append(number)
        return (yield self.command(CALLER, "announce_sale", series=number)) is not None

    @defer.inlineCallbacks
    def sell(self):  # type: ignore[no-untyped-def]
        game = self.view.game
        assert game is not None
        series = game.series[0]["series"]
        next_card = game.series[0]["first_card"]
        wanted = self.cards_per_game
        most = 12
        turn = 0
        while wanted > 0:
            count = min(wanted, self.rng.randint(1, most))
            seller = SELLERS[turn % len(SELLERS)]
            turn += 1
            sold = yield self.command(seller, "sell_cards", series=series, first=next_card, last=next_card + count - 1)
            if sold is None:
                if count == 1:
                    return  # the series ran out: sell what there is
                most = 1  # near the series' end: card by card, to its last card
                continue
            self.takings[seller.name] = self.takings.get(seller.name, 0) + _first(sold, PaperCardsSold).amount_cents
            next_card += count
            wanted -= count
            yield self.wait(0.2)

    @defer.inlineCallbacks
    def draw_to_the_end(self):  # type: ignore[no-untyped-def]
        while True:
            game = self.view.game
            assert game is not None
            if game.pause is not None:
                # "Line! Another card?": the draw is held while the caller asks the hall; nobody
                # else calls, so the caller closes the prize (R85.6).
                yield self.wait(2)
                yield self.command(CALLER, "close_prize")
                yield self.wait()
                game = self.view.game
                if game is not None and game.pause is None and any(w["pattern"] == "line" for w in game.winners) \
                        and not paid(game, "line"):
                    # Shared with a paper card: the desk pays it (a line of virtual cards alone was
                    # credited to their accounts as it closed, R85.9).
                    yield self.command(CASHIER, "pay_prizes", desk=self.desk)
                continue
            if any(w["pattern"] == "bingo" for w in game.winners):
                break
            records = yield self.command(CALLER, "draw_ball")
            if records is None:
                break
            yield self.wait()
            # Paper cards the ball completed are claimed while the prize is open: they share
            # what the ball also gave virtual cards (R87 ruling, R85.6).
            yield self.claims(records)
        yield self.command(ROOM_CHIEF, "close_game")
        yield self.wait()
        yield self.hand_in_takings()
        game = self.view.game
        if game is not None and not paid(game, "bingo"):
            yield self.command(CASHIER, "pay_prizes", desk=self.desk)
        yield self.wait()
        yield self.command(ROOM_CHIEF, "collect_cards")

    @defer.inlineCallbacks
    def hand_in_takings(self):  # type: ignore[no-untyped-def]
        """The game is over: each seller hands the game's takings in to the cash desk."""
        for seller, cents in sorted(self.takings.items()):
            if cents and (yield self.command(CASHIER, "hand_in_takings", seller=seller, desk=self.desk,
                                             amount_cents=cents)) is not None:
                self.takings[seller] = 0

    @defer.inlineCallbacks
    def claims(self, records: list[Record]):  # type: ignore[no-untyped-def]
        """Players shout for every card the ball completed; the table chief verifies each."""
        for record in records:
            game = self.view.game
            drawn = declared(record)
            claimed: list[str] = []
            if isinstance(drawn, BallDrawn):
                # Won on an earlier ball: a row this ball completed wins nothing. Won on this ball
                # (by a virtual card, or a paper card claimed just now): it is shared.
                line_won = game is not None and any(
                    w["pattern"] == "line" and (w.get("ball_count") or 0) < drawn.ball_count for w in game.winners
                )
                claimed += drawn.completed_bingo
                if not line_won:
                    claimed += drawn.completed_line
            # (a row completed once the line is won wins nothing: nobody claims it; and the
            # hall claims for virtual cards itself, R93.10: only paper cards are called)
            claimed = [label for label in claimed if int(label.split("-")[0]) in self.series]
            if not claimed and self.rng.random() < 0.03 and game is not None and game.cards_sold:
                # An eager player claims a card that has not won: the check refuses it (R85.11).
                first = game.series[0]
                claimed = [f"{first['series']}-{first['first_card'] + self.rng.randrange(game.cards_sold)}"]
            for label in dict.fromkeys(claimed):
                series, number = (int(x) for x in label.split("-"))
                yield self.command(TABLE_CHIEF, "verify_claim", series=series, card_number=number)
                yield self.wait(0.5)


def paid(game: GamePicture, prize: str) -> bool:
    """Whether ``game``'s picture holds a payment of ``prize``."""
    return any(payment["prize"] == prize for payment in game.paid)


Made = TypeVar("Made", bound=JournalRecord)


def _first(records: Sequence[Record], kind: type[Made]) -> Made:
    """The first record of ``kind`` a command committed (the one its answer names: the visitor, the account...)."""
    return next(made for record in records if isinstance(made := declared(record), kind))

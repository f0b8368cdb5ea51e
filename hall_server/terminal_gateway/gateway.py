"""The terminal gateway: terminal sessions in, core commands out; committed records out as updates.

:class:`TerminalGateway` is a core observer, so a terminal hears of a ball, a sale or a
prize only once its record is committed (announce after commit).  Each connected
terminal is a :class:`TerminalSession`, which knows nothing of sockets: it is given
each text message received and a ``send``/``close`` pair, checks the message against
:mod:`protocol.terminal_messages` (version, schema, sequence number), and calls one
method of the hall: :meth:`VirtualModule.authenticate`, the PIN check through
:class:`~hall_server.hall.pins.PinGuard` (lockout per account, one answer for every
refusal), or a purchase (with the terminal's request id) in the kind of game its
``buy`` names, through that kind's sale channel (:mod:`hall_server.terminal_gateway.sales`).

Refusals:

* **before hello** the connection is nobody: a refusal is answered with an ``error``
  and the connection closes, and nothing reaches the journal.  Each one is counted
  (:class:`PreHelloLimiter`, a token bucket) against the terminal certificate the
  connection presented, or against its remote address when it presented none: a
  terminal that keeps erring has its own connections refused for a while, not those of
  the other terminals behind the same address, with one log line saying so.  A
  connection that says nothing is closed after :data:`HELLO_TIMEOUT_S` and counted
  alike.
* **after hello** the terminal is known: a refusal is answered with an ``error`` and
  journaled (``terminal_request_refused``); it changes nothing else.

Fan-out: a ball is encoded once and numbered per connection, so a thousand terminals
cost a thousand small writes, not a thousand encodings.  Each write is isolated: a
connection whose transport raises (a peer that sent a Close frame and keeps the TCP
connection open) is dropped, and the others get the message.  Credit and prizes go
only to the terminals where the account is signed in.

A dropped connection is not a terminal failure (R96.3 ruling): the session just ends;
the player's cards stay in play and their wins are credited to the account.  Only
staff declare a terminal failed (:meth:`VirtualModule.declare_failed`).  A terminal
revoked or taken out of service is disconnected at once: its session leaves the
gateway before its socket has finished closing, so its replacement is welcomed at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.python.failure import Failure
from twisted.logger import Logger

from hall_server.annex.module import AnnexModule
from hall_server.annex.terminals import JointTerminalSales
from hall_server.hall.cashier import CashierModule, player_account
from hall_server.hall.games import Game, GamesModule
from hall_server.hall.responsible import ResponsiblePlayModule
from hall_server.hall.pins import SIGN_IN_REFUSED, CheckPin, PinGuard, SignInRefused
from hall_server.hall.virtual import PurchaseRequest, VirtualModule
from hall_server.network.module import NetworkGame, NetworkModule
from hall_server.reports.recall import GameRecall, players_view
from hall_server.statements import format_account_number
from hall_server.terminal_gateway.cards import card_json, joint_card_json, network_cards_json
from hall_server.terminal_gateway.sales import NOT_PLAYED, Sale, sale_channels
from protocol.annex import CLOSED, SELLING
from protocol.chain import Record
from protocol.records import JournalRecord, declared
from protocol.records.annex import (
    AnnexBallDrawn,
    AnnexClaimVerified,
    AnnexGameClosed,
    AnnexGameOpened,
    AnnexLink,
    AnnexPool,
    AnnexPrizesPaid,
    AnnexSalesReported,
    AnnexTerminalSaleOpened,
)
from protocol.records.cashier import Posting
from protocol.records.game import (
    BallCorrected,
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
    NetworkCreditPaid,
    NetworkGameClosed,
    NetworkGameNotPlayed,
    NetworkPrizeWon,
    NetworkSaleClosed,
    NetworkSaleOpened,
    NetworkWinners,
)
from protocol.records.prizes import MegabingoAnnounced, PotsAnnounced, PrizeClosed, PrizePaid, PrizeWon
from protocol.records.sale import SaleClosed, SaleOpened
from protocol.records.terminals import TerminalOutOfService, TerminalRevoked, TerminalSaleOpened
from protocol.errors import DomainError, Refusal
from server_kit.db.faults import storage_fault
from protocol.game import FINAL_STATES
from protocol.terminal_messages import MessageError, SequenceCheck, decode, encode, numbered
from server_kit.core import CommandCore
from server_kit import received

log = Logger()

#: Errors an identified terminal's connection may make before the gateway hangs up on it.
MAX_ERRORS = 20
#: Wrong PINs on one connection before the gateway hangs up on it (the account's lockout is the PinGuard's).
MAX_PIN_FAILURES = 5
#: The longest error text the terminal protocol carries (``protocol.terminal_messages``).
ERROR_TEXT = 500
#: Seconds a new connection has to say hello.
HELLO_TIMEOUT_S = 10.0
#: Errors before hello one certificate (or, without one, one remote address) may make at once,
#: and how many more a second.
PRE_HELLO_BURST = 20
PRE_HELLO_PER_S = 0.2
#: Seconds a certificate or an address that used them up has its terminal connections refused
#: the first time; each block that follows before its bucket has filled again lasts twice as
#: long, up to :data:`PRE_HELLO_BLOCK_S`.
PRE_HELLO_FIRST_BLOCK_S = 30.0
PRE_HELLO_BLOCK_S = 300.0
#: Certificates and addresses the limiter tracks at most; past it those with a full bucket are let go.
MAX_TRACKED_ADDRESSES = 10_000

#: Records that change the megabingo announced (R90.2) or its fund, which the terminals show while one is;
#: its payment (``prize_paid``) ends it.
MEGABINGO_RECORDS = (MegabingoAnnounced, SaleClosed, GameRefunded)

#: Records that change the game picture the terminals show.
GAME_RECORDS = (
    SaleOpened, TerminalSaleOpened, SaleClosed, LastGameAnnounced, PotsAnnounced, PrizeWon, PrizeClosed,
    BallCorrected, PrizePaid, GameClosed, GameFinished, GameRefunded, GameSuspended, GameResumed,
    GameSuspendedForGood, CardsCollected,
)


@dataclass
class _Bucket:
    tokens: float
    updated: float
    blocked_until: float = 0.0
    blocks: int = 0  # blocks in a row, since the bucket was last full


def limit_key(address: str, certified_as: str | None) -> str:
    """What the errors of a connection are counted against: its terminal certificate, else its address."""
    return f"terminal certificate {certified_as}" if certified_as is not None else address


class PreHelloLimiter:
    """Errors of connections that have not said hello, per key (:func:`limit_key`): a token bucket.

    Each error takes a token; the bucket holds ``burst`` and refills ``per_second``.
    The error that takes the last whole token blocks the key for ``first_block_s``, and
    each further block before the bucket is full again for twice as long, up to
    ``block_s``: its new connections are refused before the WebSocket opens, and the ones
    waiting for hello are closed.  Only the start of a block is logged, with the count,
    never what was sent.
    """

    def __init__(self, clock: IReactorTime, burst: int = PRE_HELLO_BURST, per_second: float = PRE_HELLO_PER_S,
                 block_s: float = PRE_HELLO_BLOCK_S, first_block_s: float = PRE_HELLO_FIRST_BLOCK_S) -> None:
        self.clock = clock
        self.burst = burst
        self.per_second = per_second
        self.block_s = block_s
        self.first_block_s = min(first_block_s, block_s)
        self.buckets: dict[str, _Bucket] = {}
        self.counted = 0  # errors before hello since the start, from every key

    def blocked(self, key: str) -> bool:
        bucket = self.buckets.get(key)
        return bucket is not None and self.clock.seconds() < bucket.blocked_until

    def refused(self, key: str) -> bool:
        """Count one error before hello of ``key``; True if the key is blocked now."""
        self.counted += 1
        now = self.clock.seconds()
        bucket = self.buckets.get(key)
        if bucket is None:
            self._prune(now)
            bucket = self.buckets[key] = _Bucket(float(self.burst), now)
        if now < bucket.blocked_until:
            return True
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.updated) * self.per_second)
        if bucket.tokens >= self.burst:
            bucket.blocks = 0  # full again: the next block starts short
        bucket.updated = now
        bucket.tokens -= 1
        if bucket.tokens >= 1:
            return False  # a token left for the next error
        seconds = min(self.block_s, self.first_block_s * 2.0 ** min(bucket.blocks, 32))
        bucket.blocks += 1
        bucket.blocked_until = now + seconds
        bucket.tokens = 0.0
        log.warn("Terminal connections of {key} are refused for {seconds:g} s: too many errors before hello "
                 "({counted} of every terminal and address so far)", key=key, seconds=seconds, counted=self.counted)
        return True

    def _prune(self, now: float) -> None:
        if len(self.buckets) < MAX_TRACKED_ADDRESSES:
            return
        for address in [a for a, b in self.buckets.items()
                        if now >= b.blocked_until and b.tokens + (now - b.updated) * self.per_second >= self.burst]:
            del self.buckets[address]


#: Records that change the network game's picture.
NETWORK_GAME_RECORDS = (
    NetworkSaleOpened, NetworkSaleClosed, NetworkPrizeWon, NetworkWinners, NetworkGameClosed, NetworkGameNotPlayed,
)
#: The latest winners a network game's picture lists (the count says how many there are in all).
PICTURE_WINNERS = 50


def network_picture(game: NetworkGame | None) -> dict[str, Any] | None:
    """The network game as terminals and boards show it: sale time, balls, sales, prizes,
    winners with the hall and terminal where each card was bought (R93.1, R93.9, R92.11)."""
    if game is None:
        return None
    return {
        "game_id": game.game_id,
        "state": game.phase,
        "over": game.over,
        "price_cents": game.price_cents,
        "series": game.series,
        "sale": {"closes_at_ms": game.closes_here_ms},
        "drawn": list(game.balls),
        "cards_sold": game.cards_sold,
        "sales_cents": game.sales_cents,
        "patterns": [pattern for pattern, _ in game.prizes],
        "prizes": dict(game.prize_amounts) if game.cards_sold is not None else None,
        "won": dict(game.won),
        "winner_count": len(game.winners),
        "winners": [
            {"pattern": w.pattern, "ball_count": w.ball_count, "card": f"{w.series}-{w.card_number}",
             "hall": w.hall_id, "terminal": w.terminal_id, "cents": w.payment_cents}
            for w in game.winners[-PICTURE_WINNERS:]
        ],
        "not_played": game.not_played_reason,
    }


#: Records that change the hall-annex game's picture.
JOINT_GAME_RECORDS = (
    AnnexGameOpened, AnnexTerminalSaleOpened, AnnexSalesReported, AnnexPool, AnnexClaimVerified,
    AnnexGameClosed, AnnexPrizesPaid, AnnexLink,
)


def joint_picture(annex: AnnexModule, joint: JointTerminalSales | None) -> dict[str, Any] | None:
    """The hall-annex game as terminals show it: where it stands in this room, the terminals' sale time,
    the main hall's balls, the cards in play in both rooms and the prizes, the winners of both rooms
    with the hall (and the terminal of a virtual card) where each was sold (R3.5.b, R92.11)."""
    game = annex.current()
    if game is None:
        return None
    here = annex.hall_id
    if game.paid:
        state = "closed"
    elif game.phase == CLOSED:
        state = "bingo_won"
    elif game.phase == SELLING:
        state = "sale_closed" if here in game.sales else "selling"
    else:
        state = "drawing" if game.balls else "sale_closed"
    window = joint.window(game) if joint is not None else None
    pool = game.pool
    return {
        "game_id": game.game_id,
        "state": state,
        "over": game.paid,
        "main": game.main,
        "annex": game.annex,
        "here": here,
        "price_cents": game.price_cents,
        "series": joint.library.label if joint is not None else None,
        "sale": None if window is None or here in game.sales else
        {"opens_at_ms": window.opens_at_ms, "closes_at_ms": window.closes_at_ms},
        "sells_nothing": game.clash,
        "drawn": list(game.balls),
        "cards_sold": pool.cards if pool is not None else None,
        "sales_cents": pool.sales_cents if pool is not None else None,
        "prizes": {"line": pool.line_cents, "bingo": pool.bingo_cents} if pool is not None else None,
        "won": {pattern: ball for pattern in ("line", "bingo") if (ball := game.won(pattern)) is not None},
        "winners": [
            {"pattern": claim.pattern, "ball_count": claim.ball_count, "card": claim.shown, "hall": claim.hall_id,
             "terminal": claim.terminal, "cents": cents}
            for claim, cents in annex.winners(game)[-PICTURE_WINNERS:]
        ],
    }


def _reason(refusal: Exception) -> dict[str, Any]:
    """A purchase refusal's stable ``reason`` and its figures, which the kiosk says in the player's
    language (``docs/languages.md``); ``""`` for a refusal without one (the kiosk shows its message)."""
    reason = getattr(refusal, "reason", "")
    return {"reason": reason, "params": dict(getattr(refusal, "params", {})) if reason else {}}


class TerminalGateway:
    """Every connected terminal, and what each is told after each commit."""

    def __init__(
        self,
        core: CommandCore,
        games: GamesModule,
        virtual: VirtualModule,
        cashier: CashierModule,
        clock: IReactorTime,
        check_pin: CheckPin,
        hall_name: str,
        *,
        pins: PinGuard,
        limiter: PreHelloLimiter | None = None,
        responsible: ResponsiblePlayModule | None = None,
        notices: tuple[tuple[str, ...], str] = ((), ""),
        network: NetworkModule | None = None,
        recall: GameRecall | None = None,
        annex: AnnexModule | None = None,
        joint: JointTerminalSales | None = None,
    ) -> None:
        self.core = core
        self.games = games
        self.virtual = virtual
        self.cashier = cashier
        self.clock = clock
        self.check_pin = check_pin
        self.hall_name = hall_name
        self.pins = pins
        self.limiter = limiter or PreHelloLimiter(clock)
        self.responsible = responsible
        self.notices = notices  # the operator's warnings and help page (R97.2)
        self.network = network  # the network games, when the hall takes part in them
        self.recall = recall  # the hall's last games, for the terminals' "Last games" view
        self.annex = annex  # the hall-annex game, when the hall plays one with a partner hall
        self.joint = joint  # its virtual cards on this room's terminals
        self.sales = sale_channels(virtual, network, joint)  # what a terminal's "buy" may name
        self.sessions: dict[str, TerminalSession] = {}  # by terminal id, once hello passed
        self.waiting: set[TerminalSession] = set()  # connections that have not said hello yet
        self.by_account: dict[str, set[TerminalSession]] = {}  # ledger account -> sessions signed in
        core.observers.append(self.record_committed)

    # --- Pictures -------------------------------------------------------------------

    def game_picture(self) -> dict[str, Any] | None:
        """The game as every terminal shows it: sale time, draw, prizes, last game (R93.1, R93.9, R93.15)."""
        game = self.games.current
        if game is None:
            return None
        machine = game.machine
        window = self.virtual.window(game)
        settlement = game.settlement
        return {
            "game_id": game.game_id,
            "number": game.number,
            "state": str(machine.state),
            "over": machine.state in FINAL_STATES,
            "price_cents": machine.price_cents,
            "series": self.virtual.library.label,
            "sale": None if window is None else {"opens_at_ms": window.opens_at_ms, "closes_at_ms": window.closes_at_ms},
            "drawn": list(machine.drawn),
            "cards_sold": None if settlement is None else len(machine.in_play),
            "prizes": None if settlement is None else {"line": settlement.line_cents, "bingo": settlement.bingo_cents},
            "won": {pattern: won.ball_count for pattern, won in machine.won.items()},
            "last_game": game.last_game,
        }

    def player_cards(self, game: Game | None, account: str | None) -> list[dict[str, Any]]:
        if game is None or account is None:
            return []
        return [card_json(card) for card in self.virtual.cards(game.game_id, player_account(account))]

    def credit(self, account: str) -> int:
        return self.cashier.balance(account)

    def received_ms(self) -> int | None:
        """When the message being handled reached the hall (records' clock), if its bytes came
        a while before they were read; None: now (:mod:`server_kit.received`)."""
        age = received.age_ms()
        return self.core.now_ms() - age if age > 0 else None

    # --- After each commit ----------------------------------------------------------

    def record_committed(self, record: Record) -> None:
        """The core observer: turn ``record`` into terminal updates."""
        event = declared(record)
        match event:
            case BallDrawn():
                self._to_all(json.dumps({"type": "ball", "game_id": event.game_id, "ball": event.ball,
                                         "ball_count": event.ball_count, "time_ms": record.time_ms},
                                        separators=(",", ":")))
            case BallVoided():
                self._to_all(json.dumps({"type": "ball_voided", "game_id": event.game_id, "ball": event.ball},
                                        separators=(",", ":")))
            case Posting():
                self._credit_changed(event)
            case TerminalRevoked() | TerminalOutOfService():
                session = self.sessions.get(event.terminal)
                if session is not None:
                    session.end("not_enrolled", f"this terminal is taken out of service: {event.reason}")
        if isinstance(event, GAME_RECORDS):
            picture = json.dumps({"type": "game", "game": self.game_picture()}, separators=(",", ":"))
            self._to_all(picture)
        if isinstance(event, PrizePaid):
            self._prizes_paid(event)
        played = isinstance(event, PrizePaid) and event.prize == "megabingo"
        if played or (isinstance(event, MEGABINGO_RECORDS) and self.games.state.megabingo is not None):
            self._to_all(json.dumps({"type": "megabingo", "announcement": self.games.megabingo_announcement()},
                                    separators=(",", ":")))
        if self.network is not None:
            self._network_record(event, record.time_ms)
        if self.annex is not None:
            self._joint_record(event, record.time_ms)

    # --- The hall-annex game ----------------------------------------------------------

    def joint_message(self) -> dict[str, Any]:
        assert self.annex is not None
        return {"game": joint_picture(self.annex, self.joint), "link_up": self.annex.state.link_up}

    def joint_cards(self, account: str | None) -> tuple[str, list[dict[str, Any]]] | None:
        """The player's cards in the current hall-annex game, or None when there is no game."""
        game = self.annex.current() if self.annex is not None else None
        if game is None:
            return None
        cards = [] if account is None or self.joint is None else self.joint.cards(game.game_id, player_account(account))
        return game.game_id, [joint_card_json(card) for card in cards]

    def _joint_record(self, event: JournalRecord, time_ms: int) -> None:
        if isinstance(event, AnnexBallDrawn):
            self._to_all(json.dumps({"type": "joint_ball", "game_id": event.game_id, "ball": event.ball,
                                     "ball_count": event.ball_count, "time_ms": time_ms},
                                    separators=(",", ":")))
        elif isinstance(event, JOINT_GAME_RECORDS):
            self._to_all(json.dumps({"type": "joint_game", **self.joint_message()}, separators=(",", ":")))
            if isinstance(event, AnnexGameOpened):
                for session in list(self.sessions.values()):
                    session.send_joint_cards()
            elif isinstance(event, AnnexPrizesPaid):
                self._joint_prizes_paid(event)

    def _joint_prizes_paid(self, paid: AnnexPrizesPaid) -> None:
        """Each player whose virtual card won is told what was credited to the account (R85.9)."""
        annex, joint = self.annex, self.joint
        if annex is None or joint is None:
            return
        for prize in paid.prizes:  # free-form in its declaration: each prize's pattern and winners
            for hall, card, cents in prize["winners"]:
                owner = joint.owner(paid.game_id, card) if hall == annex.hall_id else None
                if owner is None:
                    continue
                number = card.partition("-")[2]
                for session in self._signed_in(owner):
                    session.send("joint_won", game_id=paid.game_id, card=f"{joint.library.label}-{number}",
                                 prize=str(prize["pattern"]), cents=cents)

    # --- The network game ------------------------------------------------------------

    def network_message(self) -> dict[str, Any]:
        assert self.network is not None
        return {"game": network_picture(self.network.current()), "link_up": self.network.link_up()}

    def network_link(self, up: bool) -> None:
        """The relay's listener: every terminal is told the link went down or came back."""
        if self.network is not None:
            self._to_all(json.dumps({"type": "net_game", **self.network_message()}, separators=(",", ":")))

    def network_cards(self, account: str | None) -> tuple[str, list[dict[str, Any]]] | None:
        """The player's cards in the current network game, or None when there is no game."""
        network = self.network
        game = network.current() if network is not None else None
        if network is None or game is None:
            return None
        cards: list[dict[str, Any]] = []
        if account is not None:
            for hold in network.holds_of(game.game_id, player_account(account)):
                if hold.status == "bought":
                    cards += network_cards_json(game, hold)
        return game.game_id, cards

    def _network_record(self, event: JournalRecord, time_ms: int) -> None:
        if isinstance(event, NetworkBallDrawn):
            self._to_all(json.dumps({"type": "net_ball", "game_id": event.game_id, "ball": event.ball,
                                     "ball_count": event.ball_count, "time_ms": time_ms},
                                    separators=(",", ":")))
        elif isinstance(event, NETWORK_GAME_RECORDS):
            self._to_all(json.dumps({"type": "net_game", **self.network_message()}, separators=(",", ":")))
            if isinstance(event, NetworkSaleOpened):
                for session in list(self.sessions.values()):
                    session.send_network_cards()
        elif isinstance(event, NetworkCreditPaid) and event.kind == "prize":
            for session in self._signed_in(event.account):
                session.send("net_won", game_id=event.game_id,
                             card=f"{self._series_of(event.game_id)}-{event.card_number}",
                             prize=str(event.pattern)[:40], cents=event.amount_cents)

    def _series_of(self, game_id: str) -> str:
        game = self.network.game(game_id) if self.network is not None else None
        return game.series if game is not None else "?"

    def _to_all(self, body: str) -> None:
        for session in list(self.sessions.values()):
            session.send_body(body)

    def _signed_in(self, account: str) -> list["TerminalSession"]:
        return list(self.by_account.get(account, ()))

    def signed_in(self, session: "TerminalSession", account: str | None) -> None:
        """``session`` now has ``account`` signed in (None: signed out)."""
        if session.account is not None:
            key = player_account(session.account)
            held = self.by_account.get(key, set())
            held.discard(session)
            if not held:
                self.by_account.pop(key, None)
        session.account = account
        if account is not None:
            self.by_account.setdefault(player_account(account), set()).add(session)

    def sign_out_elsewhere(self, account: str, here: "TerminalSession") -> None:
        """One account plays at one terminal at a time: signing in at ``here`` (after the PIN
        check) signs it out wherever else it is signed in, and that terminal is told why.

        The player who walked away from a terminal without signing out is not locked out
        of the next one, and one account cannot hold two terminals' card limits (R83.7).
        """
        for other in self._signed_in(player_account(account)):
            if other is here:
                continue
            self.signed_in(other, None)
            other.send("error", code="signed_in_elsewhere", in_reply_to=None,
                       message=f"your account was signed in on terminal {here.terminal_id}; you are signed out here")
            other.send("signed_out")
            other.send_state()

    def _credit_changed(self, posting: Posting) -> None:
        for account, _ in [*posting.debits, *posting.credits]:
            if account.startswith("player:"):
                for session in self._signed_in(account):
                    session.send("credit", credit_cents=self.ledger_balance(account), reason=posting.reason[:200])

    def ledger_balance(self, account: str) -> int:
        return self.cashier.ledger.balance(account)

    def _prizes_paid(self, paid: PrizePaid) -> None:
        game = self.games.current
        if game is None or game.game_id != paid.game_id:
            return
        owners = {
            card.ref.label: (account, card.label)
            for account, cards in self.virtual.state.holdings.get(game.game_id, {}).items()
            for card in cards
        }
        for ref, cents in paid.payments:
            if ref in owners:
                account, label = owners[ref]
                for session in self._signed_in(account):
                    session.send("won", game_id=game.game_id, card=label, prize=paid.prize, cents=cents)

    # --- Connections ------------------------------------------------------------------

    def opened(self, session: "TerminalSession") -> None:
        """A new connection, not identified yet."""
        self.waiting.add(session)

    def attach(self, session: "TerminalSession") -> None:
        """``session`` passed hello: it replaces an older connection of the same terminal."""
        assert session.terminal_id is not None
        self.waiting.discard(session)
        old = self.sessions.get(session.terminal_id)
        if old is not None and old is not session:
            old.end("hello_first", "this terminal connected again elsewhere; this connection ends")
        self.sessions[session.terminal_id] = session

    def detach(self, session: "TerminalSession") -> None:
        """``session`` ended: it hears nothing more.  Its cards stay in play (R96.3 ruling)."""
        self.waiting.discard(session)
        self.signed_in(session, None)
        terminal = session.terminal_id
        if terminal is not None and self.sessions.get(terminal) is session:
            del self.sessions[terminal]

    def refused_before_hello(self, session: "TerminalSession") -> None:
        """Count an error of a connection that has not said hello; on a block, close the others of its key."""
        if self.limiter.refused(session.limit_key):
            for other in [s for s in self.waiting if s.limit_key == session.limit_key and s is not session]:
                other.end(None, "")


class TerminalSession:
    """One terminal's connection, without the socket: messages in, messages out.

    ``address`` is the remote address, for counting errors before hello;
    ``certified_as`` the terminal the connection's client certificate names, the only
    one it may say hello as (None where no certificate is asked for).
    """

    def __init__(self, gateway: TerminalGateway, send_text: Callable[[str], None], close: Callable[[], None],
                 address: str = "local", *, certified_as: str | None = None) -> None:
        self.gateway = gateway
        self._send_text = send_text
        self._close = close
        self.address = address
        self.certified_as = certified_as
        self.limit_key = limit_key(address, certified_as)
        self.inbound = SequenceCheck()
        self.outbound = 0
        self.terminal_id: str | None = None
        self.account: str | None = None  # the signed-in account number
        self.errors = 0
        self.pin_failures = 0
        self.closed = False
        self._hello_due: IDelayedCall | None = gateway.clock.callLater(HELLO_TIMEOUT_S, self._hello_overdue)
        gateway.opened(self)

    # --- Sending ------------------------------------------------------------------

    def send(self, kind: str, **fields: Any) -> None:
        if self.closed:
            return
        if kind == "error":  # a refusal with no code of its own for the screen: its message only
            fields.setdefault("reason", "")
            fields.setdefault("params", {})
        text = encode(self.outbound + 1, kind, **fields)  # a message that fails its schema is not counted
        self.outbound += 1
        self._deliver(text)

    def send_body(self, body: str) -> None:
        """A message encoded once for every terminal (see :func:`numbered`)."""
        if self.closed:
            return
        self.outbound += 1
        self._deliver(numbered(self.outbound, body))

    def _deliver(self, text: str) -> None:
        # One connection's failure never reaches the others (or the core's observer loop):
        # a transport that raises - a Close frame came and TCP stays open - ends this session.
        try:
            self._send_text(text)
        except Exception:
            log.failure("writing to terminal {t} at {a} failed; its connection is dropped",
                        t=self.terminal_id or "(not identified)", a=self.address)
            self.end(None, "")

    def send_state(self) -> None:
        gateway = self.gateway
        game = gateway.games.current
        player = None
        if self.account is not None:
            player = {"account": format_account_number(self.account), "credit_cents": gateway.credit(self.account)}
            if gateway.responsible is not None:
                player["limits"] = gateway.responsible.picture(self.account, gateway.core.now_ms())
        self.send("state", time_ms=gateway.core.now_ms(), game=gateway.game_picture(), player=player,
                  cards=gateway.player_cards(game, self.account))
        self.send("megabingo", announcement=gateway.games.megabingo_announcement())
        if gateway.network is not None:
            self.send("net_game", **gateway.network_message())
            self.send_network_cards()
        if gateway.annex is not None:
            self.send("joint_game", **gateway.joint_message())
            self.send_joint_cards()

    def send_joint_cards(self) -> None:
        held = self.gateway.joint_cards(self.account)
        if held is not None:
            self.send("joint_cards", game_id=held[0], cards=held[1])

    def send_network_cards(self) -> None:
        held = self.gateway.network_cards(self.account)
        if held is not None:
            self.send("net_cards", game_id=held[0], cards=held[1])

    def end(self, code: str | None, message: str) -> None:
        """End the session at once (with an ``error`` first if ``code``): it leaves the gateway now,
        whether or not its socket closes quickly."""
        if self.closed:
            return
        if code is not None:
            self.send("error", code=code, message=message, in_reply_to=None)
            if self.closed:
                return  # that write failed and ended the session already
        self.closed = True
        self._stop_hello_timer()
        self.gateway.detach(self)
        try:
            self._close()
        except Exception:
            log.failure("closing terminal {t}'s connection", t=self.terminal_id or "(not identified)")

    # --- Receiving ----------------------------------------------------------------

    def message_received(self, text: str | bytes) -> None:
        """One text frame from the terminal."""
        if self.closed:
            return
        if self.terminal_id is None and self.gateway.limiter.blocked(self.limit_key):
            self.end(None, "")  # this terminal or address is refused for a while: no answer, no work
            return
        seq: int | None = None
        try:
            message = decode(text)
            seq = message["seq"]
            self.inbound.accept(seq)
            self._dispatch(message)
        except MessageError as error:
            self._refused(error.code, str(error), seq, "message")

    def _refused(self, code: str, message: str, seq: int | None, what: str) -> None:
        """Answer with an error.  Before hello: count it against the address and close, journal
        nothing.  After hello: journal it; hang up on a terminal that keeps erring.  A
        :class:`~protocol.errors.Refusal` sends its reason and figures too, for the kiosk to
        say it in the player's language."""
        said = {"reason": message.reason, "params": message.params} if isinstance(message, Refusal) else {}
        if len(message) > ERROR_TEXT:  # an error quoting a long value still fits its message
            message = message[: ERROR_TEXT - 3] + "..."
        self.send("error", code=code, message=message, in_reply_to=seq, **said)
        if self.terminal_id is None:
            self.gateway.refused_before_hello(self)
            self.end(None, "")
            return
        self.gateway.virtual.record_refusal(self.terminal_id, what, f"{code}: {message}", str(seq or "")).addErrback(
            lambda failure: log.failure("journaling a terminal's refused request", failure)
        )
        self.errors += 1
        if self.errors >= MAX_ERRORS or self.pin_failures >= MAX_PIN_FAILURES:
            self.end(None, "")

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind, seq = message["type"], message["seq"]
        if kind == "hello":
            self._hello(message)
            return
        if self.terminal_id is None:
            raise MessageError("hello_first", "say hello with the terminal's id and token first")
        if kind == "sync":
            self.send_state()
        elif kind == "sign_in":
            self._sign_in(message, seq)
        elif kind == "sign_out":
            self.gateway.signed_in(self, None)
            self.send("signed_out")
            self.send_state()
        elif kind in ("set_limit", "exclude"):
            self._responsible(kind, message, seq)
        elif kind == "buy":
            self._buy(message, seq)
        elif kind == "recall":
            self._recall(seq)

    def _recall(self, seq: int) -> None:
        """The last games' balls and winners, as any player may see them (docs/terminals.md)."""
        recall = self.gateway.recall
        if recall is None:
            self._refused("refused", "this hall keeps no recall of its last games", seq, "recall")
            return

        def answer(games: list[dict[str, Any]]) -> None:
            self.send("last_games", in_reply_to=seq, games=players_view(games))

        recall.games().addCallbacks(answer, lambda failure: self._internal(failure, seq))

    def _hello(self, message: dict[str, Any]) -> None:
        if self.terminal_id is not None:
            raise MessageError("hello_first", "this connection has already said hello")
        if self.certified_as is not None and message["terminal"] != self.certified_as:
            self._refused(
                "not_enrolled", f"this connection's certificate is for terminal {self.certified_as}, "
                f"not {message['terminal']}", message["seq"], "hello",
            )
            return
        try:
            terminal = self.gateway.virtual.authenticate(message["terminal"], message["token"])
        except DomainError as error:
            self._refused("not_enrolled", str(error), message["seq"], "hello")
            return
        self._stop_hello_timer()
        self.terminal_id = terminal.terminal_id
        self.gateway.attach(self)
        self.send("welcome", terminal=terminal.terminal_id, hall=self.gateway.hall_name,
                  time_ms=self.gateway.core.now_ms())
        warnings, help_text = self.gateway.notices
        self.send("notices", warnings=list(warnings), help=help_text)
        self.send_state()

    def _hello_overdue(self) -> None:
        self._hello_due = None
        if not self.closed and self.terminal_id is None:
            self.gateway.refused_before_hello(self)
            self.end("hello_first", f"no hello within {HELLO_TIMEOUT_S:g} s; this connection ends")

    def _stop_hello_timer(self) -> None:
        due, self._hello_due = self._hello_due, None
        if due is not None and due.active():
            due.cancel()

    def _sign_in(self, message: dict[str, Any], seq: int) -> None:
        assert self.terminal_id is not None
        gateway = self.gateway
        checking = gateway.pins.sign_in(message["account"], message["pin"], self.terminal_id, gateway.check_pin)

        def checked(number: str) -> None:
            if self.closed:
                return
            excluded = gateway.responsible.account_refusal(number, gateway.core.now_ms()) if gateway.responsible else None
            if excluded is not None:
                self._refused("self_excluded", excluded, seq, "sign_in")
                return
            gateway.sign_out_elsewhere(number, self)
            gateway.signed_in(self, number)
            self.send("signed_in", account=format_account_number(number), credit_cents=gateway.credit(number))
            self.send_state()

        def refused(failure: Any) -> None:
            if not failure.check(SignInRefused):
                self._internal(failure, seq)
            elif not self.closed:
                # One answer for an unknown account, a wrong PIN and a locked account.
                self.pin_failures += 1
                self._refused("sign_in_refused", SIGN_IN_REFUSED, seq, "sign_in")

        checking.addCallbacks(checked, refused)

    def _responsible(self, kind: str, message: dict[str, Any], seq: int) -> None:
        """The signed-in player's own limit or self-exclusion (R97.2), journaled by the module."""
        assert self.terminal_id is not None
        gateway = self.gateway
        if self.account is None:
            raise MessageError("signed_out", "sign in with your account and PIN first")
        if gateway.responsible is None:
            raise MessageError("refused", "this hall takes limits and exclusions at the cashier's desk")
        account = self.account
        if kind == "set_limit":
            done = gateway.responsible.set_limit_from_terminal(self.terminal_id, account, message["limit_cents"])
        else:
            done = gateway.responsible.exclude_from_terminal(self.terminal_id, account, message["days"])

        def recorded(_: object) -> None:
            if kind == "exclude":  # excluded from now: signed out wherever the account is
                for session in gateway._signed_in(player_account(account)):
                    gateway.signed_in(session, None)
                    session.send("signed_out")
                    session.send_state()
            else:
                self.send_state()

        def refused(failure: Any) -> None:
            if self._unavailable(failure, seq):
                return
            if failure.check(DomainError):
                error = failure.value
                reason = getattr(error, "reason", "")
                figures = error.figures() if reason and hasattr(error, "figures") else {}
                # A refusal with a reason is said by the kiosk in the player's language.
                self._refused("refused", Refusal(str(error), reason, **figures) if reason else str(error), seq, kind)
            else:
                self._internal(failure, seq)

        done.addCallbacks(recorded, refused)

    def _buy(self, message: dict[str, Any], seq: int) -> None:
        """A purchase in the game the message names, sold through that kind's channel
        (:mod:`~hall_server.terminal_gateway.sales`); the same ``request`` again gets the first answer."""
        assert self.terminal_id is not None
        channel = self.gateway.sales.get(message["game"])
        if channel is None:
            raise MessageError("refused", NOT_PLAYED[message["game"]])
        if self.account is None:
            raise MessageError("signed_out", "sign in with your account and PIN before buying")
        request = PurchaseRequest(self.terminal_id, self.account, message["account"], message["quantity"],
                                  message["stake_pct"], message["request"], received_ms=self.gateway.received_ms())

        def sold(sale: Sale) -> None:
            assert request.signed_in is not None
            self.send(sale.answer, in_reply_to=seq, request=request.request, **sale.fields,
                      credit_cents=self.gateway.credit(request.signed_in))

        def refused(failure: Failure) -> None:
            if self._unavailable(failure, seq):
                return
            if isinstance(failure.value, DomainError):  # journaled by the channel's module with the request
                self.send("error", code="refused", message=str(failure.value)[:ERROR_TEXT], in_reply_to=seq,
                          **_reason(failure.value))
            else:
                self._internal(failure, seq)

        channel.sell(request, message["game_id"]).addCallbacks(sold, refused)

    def _internal(self, failure: Any, seq: int) -> None:
        if self._unavailable(failure, seq):
            return
        log.failure("a terminal request failed", failure)
        self.send("error", code="internal", message="the server failed on this request; the fault is logged",
                  in_reply_to=seq)

    def _unavailable(self, failure: Any, seq: int | None) -> bool:
        """Answer ``unavailable`` with the storage's fault, if that is why ``failure`` came: the
        hall could record nothing, the request did nothing (and is not held against the terminal)."""
        fault = storage_fault(failure.value, "the hall's database")
        if fault is None:
            return False
        self.send("error", code="unavailable", message=str(fault)[:ERROR_TEXT], in_reply_to=seq)
        return True

    def connection_lost(self) -> None:
        """The socket closed: the session ends; the player's cards stay in play (R96.3 ruling)."""
        self.closed = True
        self._stop_hello_timer()
        self.gateway.detach(self)

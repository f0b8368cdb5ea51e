"""The terminal gateway: terminal sessions in, core commands out; committed records out as updates.

:class:`TerminalGateway` is a core observer, so a terminal hears of a ball, a sale or a
prize only once its record is committed (announce after commit).  Each connected
terminal is a :class:`TerminalSession`, which knows nothing of sockets: it is given
each text message received and a ``send``/``close`` pair, checks the message against
:mod:`protocol.terminal_messages` (version, schema, sequence number), and calls one
method of the hall: :meth:`VirtualModule.authenticate`, the cashier's PIN check,
:meth:`VirtualModule.request_purchase`.  A refused message is answered with an
``error`` and journaled (``terminal_request_refused``); it changes nothing else.

Fan-out: a ball is encoded once and numbered per connection, so a thousand terminals
cost a thousand small writes, not a thousand encodings.  Credit and prizes go only to
the terminals where the account is signed in.

A terminal whose connection drops while it holds cards in a game under way is given
``grace_s`` seconds to come back; then it is declared failed (R96.3): its player's
cards of the game are refunded and it stays out of service until staff check it.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from hall_server.hall.cashier import CashierModule, normalize_account_number, player_account
from hall_server.hall.core import SYSTEM, HallCore
from hall_server.hall.games import Game, GamesModule
from hall_server.hall.virtual import PurchaseRequest, VirtualCard, VirtualModule
from hall_server.statements import format_account_number
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.game import FINAL_STATES
from protocol.terminal_messages import MessageError, SequenceCheck, decode, encode, numbered

log = Logger()

#: Runs the PIN check (scrypt, tens of ms) off the reactor thread in the server.
CheckPin = Callable[[str, str], "defer.Deferred[bool]"]
#: Errors a connection may make before the gateway hangs up on it.
MAX_ERRORS = 20
MAX_PIN_FAILURES = 5
DEFAULT_GRACE_S = 30.0

#: Records that change the game picture the terminals show.
GAME_RECORDS = frozenset({
    "sale_opened", "terminal_sale_opened", "sale_closed", "last_game_announced", "pots_announced",
    "prize_won", "prize_paid", "game_closed", "game_finished", "game_refunded", "game_suspended",
    "game_resumed", "game_suspended_for_good", "cards_collected",
})


def card_json(card: VirtualCard) -> dict[str, Any]:
    """A virtual card as a terminal shows it: number, series, value, stake, code (R82.9-12, R92.9)."""
    return {
        "card": card.label, "ref": card.ref.label, "cells": list(card.cells), "code": card.code,
        "price_cents": card.price_cents, "stake_cents": card.stake_cents, "stake_pct": card.stake_pct,
    }


class TerminalGateway:
    """Every connected terminal, and what each is told after each commit."""

    def __init__(
        self,
        core: HallCore,
        games: GamesModule,
        virtual: VirtualModule,
        cashier: CashierModule,
        clock: IReactorTime,
        check_pin: CheckPin,
        hall_name: str,
        grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        self.core = core
        self.games = games
        self.virtual = virtual
        self.cashier = cashier
        self.clock = clock
        self.check_pin = check_pin
        self.hall_name = hall_name
        self.grace_s = grace_s
        self.sessions: dict[str, TerminalSession] = {}  # by terminal id, once hello passed
        self.lost: dict[str, IDelayedCall] = {}  # terminals whose connection dropped mid-game
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

    # --- After each commit ----------------------------------------------------------

    def record_committed(self, record: Record) -> None:
        """The core observer: turn ``record`` into terminal updates."""
        kind, p = record.type, record.payload
        if kind == "ball_drawn":
            self._to_all(json.dumps({"type": "ball", "game_id": p["game_id"], "ball": p["ball"],
                                     "ball_count": p["ball_count"], "time_ms": record.time_ms},
                                    separators=(",", ":")))
        elif kind == "ball_voided":
            self._to_all(json.dumps({"type": "ball_voided", "game_id": p["game_id"], "ball": p["ball"]},
                                    separators=(",", ":")))
        elif kind == "posting":
            self._credit_changed(p)
        elif kind in ("terminal_revoked", "terminal_out_of_service"):
            session = self.sessions.get(p["terminal"])
            if session is not None:
                session.refuse_and_close("not_enrolled", f"this terminal is taken out of service: {p['reason']}")
        if kind in GAME_RECORDS:
            picture = json.dumps({"type": "game", "game": self.game_picture()}, separators=(",", ":"))
            self._to_all(picture)
        if kind == "prize_paid":
            self._prizes_paid(p)

    def _to_all(self, body: str) -> None:
        for session in list(self.sessions.values()):
            session.send_body(body)

    def _signed_in(self, account: str) -> list["TerminalSession"]:
        return list(self.by_account.get(account, ()))

    def signed_in(self, session: "TerminalSession", account: str | None) -> None:
        """``session`` now has ``account`` signed in (None: signed out)."""
        if session.account is not None:
            self.by_account.get(player_account(session.account), set()).discard(session)
        session.account = account
        if account is not None:
            self.by_account.setdefault(player_account(account), set()).add(session)

    def _credit_changed(self, p: Mapping[str, Any]) -> None:
        for account, _ in [*p["debits"], *p["credits"]]:
            if account.startswith("player:"):
                for session in self._signed_in(account):
                    session.send("credit", credit_cents=self.ledger_balance(account), reason=str(p["reason"])[:200])

    def ledger_balance(self, account: str) -> int:
        return self.cashier.ledger.balance(account)

    def _prizes_paid(self, p: Mapping[str, Any]) -> None:
        game = self.games.current
        if game is None or game.game_id != p["game_id"]:
            return
        owners = {
            card.ref.label: (account, card.label)
            for account, cards in self.virtual.state.holdings.get(game.game_id, {}).items()
            for card in cards
        }
        for ref, cents in p["payments"]:
            if ref in owners:
                account, label = owners[ref]
                for session in self._signed_in(account):
                    session.send("won", game_id=game.game_id, card=label, prize=p["prize"], cents=cents)

    # --- Connections ------------------------------------------------------------------

    def attach(self, session: "TerminalSession") -> None:
        """``session`` passed hello: it replaces an older connection of the same terminal."""
        old = self.sessions.get(session.terminal_id or "")
        if old is not None and old is not session:
            old.refuse_and_close("hello_first", "this terminal connected again elsewhere; this connection ends")
        assert session.terminal_id is not None
        self.sessions[session.terminal_id] = session
        pending = self.lost.pop(session.terminal_id, None)
        if pending is not None and pending.active():
            pending.cancel()  # back in time: not a failure

    def detach(self, session: "TerminalSession") -> None:
        self.signed_in(session, None)
        terminal = session.terminal_id
        if terminal is None or self.sessions.get(terminal) is not session:
            return
        del self.sessions[terminal]
        game = self.games.current
        if game is not None and not game.over and self.virtual.has_cards(game.game_id, terminal):
            self.lost[terminal] = self.clock.callLater(self.grace_s, self._lost_for_good, terminal, game.game_id)

    def _lost_for_good(self, terminal: str, game_id: str) -> None:
        self.lost.pop(terminal, None)
        game = self.games.current
        if game is None or game.game_id != game_id or game.over:
            return
        done = self.virtual.declare_failed(
            SYSTEM, terminal, f"connection lost for {self.grace_s:g} s during game {game_id}"
        )
        done.addErrback(lambda failure: log.failure("declaring terminal {t} failed", failure, t=terminal))


class TerminalSession:
    """One terminal's connection, without the socket: messages in, messages out."""

    def __init__(self, gateway: TerminalGateway, send_text: Callable[[str], None], close: Callable[[], None]) -> None:
        self.gateway = gateway
        self._send_text = send_text
        self._close = close
        self.inbound = SequenceCheck()
        self.outbound = 0
        self.terminal_id: str | None = None
        self.account: str | None = None  # the signed-in account number
        self.errors = 0
        self.pin_failures = 0
        self.closed = False

    # --- Sending ------------------------------------------------------------------

    def send(self, kind: str, **fields: Any) -> None:
        if self.closed:
            return
        text = encode(self.outbound + 1, kind, **fields)  # a message that fails its schema is not counted
        self.outbound += 1
        self._send_text(text)

    def send_body(self, body: str) -> None:
        """A message encoded once for every terminal (see :func:`numbered`)."""
        if self.closed:
            return
        self.outbound += 1
        self._send_text(numbered(self.outbound, body))

    def send_state(self) -> None:
        gateway = self.gateway
        game = gateway.games.current
        player = None
        if self.account is not None:
            player = {"account": format_account_number(self.account), "credit_cents": gateway.credit(self.account)}
        self.send("state", time_ms=gateway.core.now_ms(), game=gateway.game_picture(), player=player,
                  cards=gateway.player_cards(game, self.account))

    def refuse_and_close(self, code: str, message: str) -> None:
        self.send("error", code=code, message=message, in_reply_to=None)
        self.closed = True
        self._close()

    # --- Receiving ----------------------------------------------------------------

    def message_received(self, text: str | bytes) -> None:
        """One text frame from the terminal."""
        if self.closed:
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
        """Answer with an error and journal it; hang up on a terminal that keeps erring."""
        self.send("error", code=code, message=message, in_reply_to=seq)
        self.gateway.virtual.record_refusal(
            self.terminal_id or "(not identified)", what, f"{code}: {message}", str(seq or "")
        ).addErrback(lambda failure: log.failure("journaling a terminal's refused request", failure))
        self.errors += 1
        if self.errors >= MAX_ERRORS or code == "not_enrolled" or self.pin_failures >= MAX_PIN_FAILURES:
            self.closed = True
            self._close()

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
        elif kind == "buy":
            self._buy(message, seq)

    def _hello(self, message: dict[str, Any]) -> None:
        if self.terminal_id is not None:
            raise MessageError("hello_first", "this connection has already said hello")
        try:
            terminal = self.gateway.virtual.authenticate(message["terminal"], message["token"])
        except DomainError as error:
            self._refused("not_enrolled", str(error), message["seq"], f"hello as {message['terminal'][:40]}")
            return
        self.terminal_id = terminal.terminal_id
        self.gateway.attach(self)
        self.send("welcome", terminal=terminal.terminal_id, hall=self.gateway.hall_name,
                  time_ms=self.gateway.core.now_ms())
        self.send_state()

    def _sign_in(self, message: dict[str, Any], seq: int) -> None:
        try:
            number = normalize_account_number(message["account"])
            self.gateway.cashier.usable_account(number)
        except DomainError as error:
            self.pin_failures += 1
            self._refused("sign_in_refused", str(error), seq, "sign_in")
            return
        checking = self.gateway.check_pin(number, message["pin"])

        def checked(good: bool) -> None:
            if not good:
                self.pin_failures += 1
                self._refused("sign_in_refused", "the account number or the PIN is wrong", seq, "sign_in")
                return
            self.gateway.signed_in(self, number)
            self.send("signed_in", account=format_account_number(number), credit_cents=self.gateway.credit(number))
            self.send_state()

        checking.addCallback(checked).addErrback(self._internal, seq)

    def _buy(self, message: dict[str, Any], seq: int) -> None:
        assert self.terminal_id is not None
        if self.account is None:
            raise MessageError("signed_out", "sign in with your account and PIN before buying")
        request = PurchaseRequest(self.terminal_id, self.account, message["account"], message["quantity"],
                                  message["stake_pct"], str(seq))
        buying = self.gateway.virtual.request_purchase(request)

        def bought(cards: list[VirtualCard]) -> None:
            assert self.account is not None
            self.send("bought", in_reply_to=seq, cards=[card_json(c) for c in cards],
                      credit_cents=self.gateway.credit(self.account))

        def refused(failure: Any) -> None:
            if isinstance(failure.value, DomainError):
                # The module journaled the refusal with the request.
                self.send("error", code="refused", message=str(failure.value), in_reply_to=seq)
            else:
                self._internal(failure, seq)

        buying.addCallbacks(bought, refused)

    def _internal(self, failure: Any, seq: int) -> None:
        log.failure("a terminal request failed", failure)
        self.send("error", code="internal", message="the server failed on this request; the fault is logged",
                  in_reply_to=seq)

    def connection_lost(self) -> None:
        self.closed = True
        self.gateway.detach(self)

"""What the hall's link to the central server does, without the socket.

:class:`NetworkRelay` is told when a connection to the central server is made and lost
(:meth:`~NetworkRelay.connected`, :meth:`~NetworkRelay.disconnected`), is handed every
push the central server sends (:meth:`~NetworkRelay.push`), and talks back through a
:class:`CentralPort`: the AMP connection in the server (:mod:`hall_server.network.link`),
a ``FakeCentral`` in the unit tests.  Everything it learns goes to
:class:`~hall_server.network.module.NetworkModule` as a command, so it is journaled
before anything is shown or answered.

* **hello** first, with the versions this hall speaks and the last record of its journal;
  the link counts as up only once the central server agreed a version, and its answer's
  record of this hall's journal (what the hall said before) is one this journal holds
  (:attr:`NetworkRelay.journal_held`: a hall rolled back stops; docs/security.md).
* **Catching up** after every hello: for each network game the hall knows that is not
  over, ``get_game``, then the balls after the last one held (``get_balls``), the
  winners (``get_winners``) and the credits (``get_credits``) after the last ones held,
  page by page, and the close or the force majeure the hall missed.  Then every hold and
  every failure report the central server has not answered is sent again with its own
  request id: the central server decides a request it never received, and answers one
  it decided with its first answer.  While connected, what is still unanswered is sent
  again every :data:`RESEND_S` seconds (an ``internal_error`` is answered by trying again).
* **Pushes** are checked against :mod:`protocol.central_messages` and taken in order: a
  push the hall refuses (a game it does not know, a ball out of order) is answered with
  the error code, logged, and changes nothing; a ball out of order makes the hall ask
  for the balls it lacks.  A ``game_under_way`` (version 2, after hello) is a game whose
  sale closed while the hall was away: journaled as its sale and its close, then caught
  up like any game the hall knows.
* **Terminals are told** when the link goes down and comes back (:attr:`NetworkRelay.listeners`).
* **The gate** (version 3): every ``hello`` (the first, and the heartbeat's) measures the
  central clock against the hall's (its answer's ``central_ms`` against the middle of the
  round trip; the sample of the shortest round trip of the last :data:`CLOCK_SAMPLES` is
  kept), so a sale's deadline on the central clock is a moment on the hall's: its gate.
  The hall takes no purchase of the game from then; once every purchase it took is
  committed and sent, it says ``gate_closed``, again after a reconnection until answered.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.network.module import (
    SELLING,
    FailureReport,
    Hold,
    NetworkModule,
    NetworkRefused,
)
from protocol import central_messages as m
from protocol.chain import Record
from protocol.central_messages import CentralMessageError
from protocol.records import declared
from protocol.records.network import NetworkSaleOpened
from protocol.records.terminals import TerminalOutOfService

#: Seconds between two resends of what the central server has not answered, while connected.
RESEND_S = 2.0
#: While purchases keep coming, a hall gathers those of this many seconds into one message.
GATHER_S = 0.1
#: Codes with which the central server says a purchase can never be decided: its hold goes back.
UNDECIDABLE = frozenset({"unknown_game"})
#: The clock samples kept (one a ``hello``, every 2 s): the one of the shortest round trip is used.
CLOCK_SAMPLES = 10


@dataclass(frozen=True)
class ClockSample:
    """The central clock less the hall's, measured by one ``hello``: the offset and its round trip."""

    offset_ms: int
    round_trip_ms: int


class CentralPort(Protocol):
    """One connection to the central server: call a hall command, close the connection.

    ``call`` fires with the answer's fields, or fails with the error the central server
    answered (an exception with the protocol's ``code``) or with the connection's loss.
    """

    def call(self, name: str, arguments: Mapping[str, Any]) -> defer.Deferred[dict[str, Any]]: ...

    def close(self) -> None: ...


def _code(failure: Failure) -> str | None:
    return getattr(failure.value, "code", None) if isinstance(failure.value, Exception) else None


class NetworkRelay:
    """The hall's end of the network: one central server, at most one connection at a time."""

    log = Logger()

    def __init__(self, module: NetworkModule, hall_id: str, clock: IReactorTime, software: str = "bingo-hall",
                 gather_s: float = GATHER_S) -> None:
        self.module = module
        #: How long purchases are gathered into one message while they keep coming (0: never).
        self.gather_s = gather_s
        self._gathering: IDelayedCall | None = None
        self._last_sent = float("-inf")
        self.hall_id = hall_id
        self.clock = clock
        self.software = software[:64]
        self.port: CentralPort | None = None
        self.version: int | None = None
        self.central_id: str | None = None
        #: Told ``True`` when the link is up (after hello), ``False`` when it is lost.
        self.listeners: list[Callable[[bool], None]] = []
        self._in_flight: set[str] = set()
        self._holds_waiting: deque[Hold] = deque()  # committed, not yet sent: gathered into the next message
        self._resend: IDelayedCall | None = None
        self._catching_up: dict[str, defer.Deferred[None]] = {}
        #: Takes the central server's ``annex_delivered`` (the hall-annex game's link sets it).
        self.annex_delivered: Callable[[dict[str, Any]], Any] | None = None
        #: Called with the resend of what waits, while the link is up (the hall-annex game's posts).
        self.resenders: list[Callable[[], None]] = []
        #: Told ``(central server, seq, hash)``: the furthest record of this hall's journal the
        #: central server holds from an earlier ``hello``; raises when this journal lacks it.
        self.journal_held: Callable[[str, int, str], None] | None = None
        module.relay_hold = self._hold_committed
        module.relay_failure = self._failure_committed
        module.core.after_commit.append(self._send_holds)
        module.link_up = lambda: self.port is not None
        module.core.observers.append(self.record_committed)
        #: The clock samples of the last ``hello``s, and when the one in flight was sent (hall clock).
        self.clock_samples: deque[ClockSample] = deque(maxlen=CLOCK_SAMPLES)
        self._hello_sent_ms: int | None = None
        #: The games whose gate closed and whose ``gate_closed`` the central server answered.
        self._gates_told: set[str] = set()
        self._gate_timers: dict[str, IDelayedCall] = {}

    @property
    def up(self) -> bool:
        return self.port is not None

    # --- The connection ---------------------------------------------------------------

    @defer.inlineCallbacks
    def connected(self, port: CentralPort) -> Any:
        """Say hello on a new connection; once a version is agreed the link is up and the hall catches up.

        Fails (and the connection should be dropped) if the central server refuses the hello.
        """
        try:
            answer = yield port.call("hello", self.hello_arguments())
            m.check_answer(m.HELLO, answer)
        except CentralMessageError as error:
            self.log.error("The central server's answer to hello breaks the protocol: {error}", error=str(error))
            port.close()
            raise
        except Exception as error:
            code = getattr(error, "code", None) or getattr(error, "errorCode", None)
            if code is not None:  # an answer: the central server said no
                self.log.error("The central server refused this hall's hello ({code}): {error}", code=code,
                               error=str(error))
            else:  # no answer came: the connection was lost or cut; the link tries again by itself
                self.log.info("The connection to the central server ended before it answered hello ({error}); "
                              "it is tried again", error=str(error) or type(error).__name__)
            raise
        self.check_journal(answer)  # a journal behind what the hall said before: no link
        self.port, self.version, self.central_id = port, answer["version"], answer["central_id"]
        self.log.info("Linked to central server {central} (protocol version {version})", central=self.central_id,
                      version=self.version)
        self._tell(True)
        self._arm()
        self.catch_up()
        self._arm_gates()
        return answer

    def hello_arguments(self) -> dict[str, Any]:
        """``hello``'s arguments: this hall, the versions it speaks, its journal's last record and its clock."""
        self._hello_sent_ms = self.module.core.now_ms()
        hello: dict[str, Any] = {"hall_id": self.hall_id, "versions": list(m.SUPPORTED_VERSIONS),
                                 "software": self.software, "clock_ms": self._hello_sent_ms}
        last = self.module.core.journal.last
        if last is not None:
            hello["journal_seq"], hello["journal_hash"] = last.seq, last.hash
        return hello

    def check_journal(self, answer: Mapping[str, Any]) -> None:
        """Take what ``hello``'s answer says: the central server's record of this journal (handed to
        :attr:`journal_held`) and its clock (a sample of the central clock)."""
        self._clock_answered(answer)
        if self.journal_held is not None and answer.get("hall_journal_seq") is not None:
            self.journal_held(answer["central_id"], answer["hall_journal_seq"], answer["hall_journal_hash"])

    def _clock_answered(self, answer: Mapping[str, Any]) -> None:
        sent, central = self._hello_sent_ms, answer.get("central_ms")
        self._hello_sent_ms = None
        if sent is None or not isinstance(central, int):
            return
        received = self.module.core.now_ms()
        self.clock_samples.append(ClockSample(central - (sent + received) // 2, received - sent))
        best = min(self.clock_samples, key=lambda sample: sample.round_trip_ms)
        if self.module.central_offset_ms != best.offset_ms:
            if self.module.central_offset_ms is None or abs(self.module.central_offset_ms - best.offset_ms) > 100:
                self.log.info("The central server's clock reads {offset:+d} ms from this hall's (round trip {rtt} "
                              "ms): the sales' deadlines are kept on it", offset=best.offset_ms,
                              rtt=best.round_trip_ms)
            self.module.central_offset_ms = best.offset_ms

    # --- The gates (protocol version 3) ------------------------------------------------------

    def _arm_gates(self) -> None:
        """A timer at the gate of each game on sale whose ``gate_closed`` is not answered yet."""
        for game in self.module.live_games():
            if game.phase != SELLING or game.game_id in self._gates_told or game.game_id in self._gate_timers:
                continue
            delay_s = max(0, game.closes_here_ms - self.module.core.now_ms()) / 1000
            self._gate_timers[game.game_id] = self.clock.callLater(delay_s, self._gate_due, game.game_id)

    def _cancel_gate_timers(self) -> None:
        for timer in self._gate_timers.values():
            if timer.active():
                timer.cancel()
        self._gate_timers.clear()

    def _gate_due(self, game_id: str) -> None:
        """The gate of ``game_id`` closed: once what it let through is committed and sent, ``gate_closed``."""
        self._gate_timers.pop(game_id, None)
        port = self.port
        if port is None or (self.version or 0) < 3:
            return  # said after the next hello, if the central server keeps gates

        def passed(_: Any) -> Any:
            if self.port is not port:
                return None  # the connection changed meanwhile: the next one says it
            for hold in self.module.pending_holds():  # a reconnection's resend goes before the gate, too
                self._queue_hold(hold)
            self._flush_holds()
            game = self.module.game(game_id)
            if game is None:
                return None
            took = sum(1 for hold in self.module.state.holds.values() if hold.game_id == game_id)
            arguments = {"game_id": game_id, "hall_id": self.hall_id, "purchases": took,
                         "closed_ms": game.closes_at_ms}
            return self._call(m.GATE_CLOSED.name, arguments).addCallback(lambda _: self._gates_told.add(game_id))

        def failed(failure: Failure) -> None:
            if self.port is port and _code(failure) in UNDECIDABLE:
                self._gates_told.add(game_id)  # a game the central server does not know: nothing to say
                return
            self.log.info("The gate of {game} is said again on the next connection ({why})", game=game_id,
                          why=failure.getErrorMessage())

        self.module.gate_passed().addCallback(passed).addErrback(failed)

    def disconnected(self, port: CentralPort) -> None:
        """The connection ``port`` is gone: nothing in flight on it will be answered."""
        if self.port is not port:
            return
        self.port = None
        self._in_flight.clear()
        self._holds_waiting.clear()
        if self._gathering is not None and self._gathering.active():
            self._gathering.cancel()
        self._gathering = None
        self._catching_up.clear()
        if self._resend is not None and self._resend.active():
            self._resend.cancel()
        self._resend = None
        self._cancel_gate_timers()
        self.log.warn("The link to the central server is lost; it is tried again, and every unanswered purchase "
                      "is sent again once it is back")
        self._tell(False)

    def _tell(self, up: bool) -> None:
        for listener in list(self.listeners):
            try:
                listener(up)
            except Exception:
                self.log.failure("a listener of the link's state failed")

    def _arm(self) -> None:
        self._resend = self.clock.callLater(RESEND_S, self._resend_due)

    def _resend_due(self) -> None:
        self._resend = None
        if self.port is None:
            return
        self.resend()
        self._arm()

    def stop(self) -> None:
        if self._resend is not None and self._resend.active():
            self._resend.cancel()
        self._resend = None
        self._cancel_gate_timers()
        if self._gathering is not None and self._gathering.active():
            self._gathering.cancel()
        self._gathering = None

    # --- Calling the central server ------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any]) -> defer.Deferred[dict[str, Any]]:
        """Send hall command ``name`` on the link; fires with its answer, checked, or fails."""
        return self._call(name, arguments)

    def _call(self, name: str, arguments: dict[str, Any]) -> defer.Deferred[dict[str, Any]]:
        port = self.port
        if port is None:
            return defer.fail(ConnectionError("the link to the central server is down"))
        message = m.MESSAGES[name]

        def checked(answer: dict[str, Any]) -> dict[str, Any]:
            values = {k: v for k, v in answer.items() if v is not None}
            m.check_answer(message, values)
            return values

        return port.call(name, arguments).addCallback(checked)

    # --- Purchases and failures, sent until answered ---------------------------------------

    def _hold_committed(self, hold: Hold) -> None:
        self.send_hold(hold)

    def _failure_committed(self, report: FailureReport) -> None:
        self.send_failure(report)

    def resend(self) -> None:
        """Send again every hold and failure report not answered and not in flight."""
        for hold in self.module.pending_holds():
            self._queue_hold(hold)
        self._flush_holds()  # what waited goes together, now
        for report in self.module.pending_failures():
            self.send_failure(report)
        for resend in list(self.resenders):
            resend()

    def send_hold(self, hold: Hold) -> None:
        """Relay ``hold``'s purchase (if the link is up and it is not in flight).

        A purchase after a quiet spell goes at once, alone (``buy_cards``).  While
        purchases keep coming (a burst before a sale's close), those committed within
        :attr:`gather_s` of the last message go together once that time is up, up to
        :data:`~protocol.central_messages.BATCH_PURCHASES` in one ``buy_cards_batch``
        (a full batch goes at once): the burst costs the central server, and this hall, a
        message for many purchases, and no purchase waits for another's answer.
        """
        if self._queue_hold(hold) and not self.module.core.answering:
            self._send_holds()  # not made by a commit being answered: nothing else will come with it

    def _queue_hold(self, hold: Hold) -> bool:
        """Put ``hold`` in the next message, unless it cannot or need not go; whether it was."""
        if self.port is None or hold.request_id in self._in_flight or hold.decided:
            return False
        self._in_flight.add(hold.request_id)
        self._holds_waiting.append(hold)
        return True

    def _send_holds(self) -> None:
        """Send what waits: at once after a quiet spell or when a batch is full, else once gathered."""
        if not self._holds_waiting or self.port is None:
            return
        now = self.clock.seconds()
        if self.gather_s and len(self._holds_waiting) < m.BATCH_PURCHASES and now - self._last_sent < self.gather_s:
            if self._gathering is None:
                self._gathering = self.clock.callLater(self._last_sent + self.gather_s - now, self._gathered)
            return
        self._flush_holds()

    def _gathered(self) -> None:
        self._gathering = None
        self._flush_holds()

    def _flush_holds(self) -> None:
        if self._gathering is not None and self._gathering.active():
            self._gathering.cancel()
        self._gathering = None
        if self._holds_waiting and self.port is not None:
            self._last_sent = self.clock.seconds()
        while self._holds_waiting and self.port is not None:
            batch = [self._holds_waiting.popleft() for _ in range(min(m.BATCH_PURCHASES, len(self._holds_waiting)))]
            self._send_purchases(batch)

    def _purchase(self, hold: Hold) -> dict[str, Any]:
        return {
            "request_id": hold.request_id, "game_id": hold.game_id, "hall_id": self.hall_id,
            "terminal_id": hold.terminal, "player_ref": hold.player_ref, "card_count": hold.card_count,
            "stake_pct": hold.stake_pct,
        }  # fmt: skip

    def _send_purchases(self, holds: list[Hold]) -> None:
        port = self.port

        def done(outcome: Any) -> Any:
            for hold in holds:
                self._in_flight.discard(hold.request_id)
            return outcome

        if len(holds) == 1:
            (hold,) = holds

            def settle(answer: dict[str, Any]) -> Any:
                return self.module.settle(hold.request_id, answer)

            def not_decided(failure: Failure) -> None:
                self._purchase_failed(hold, _code(failure), failure.getErrorMessage(), port)

            one = self._call("buy_cards", self._purchase(hold)).addBoth(done)
            one.addCallbacks(settle, not_decided).addErrback(self._logged, "settling purchase {request}", hold.request_id)
            return

        @defer.inlineCallbacks
        def answered(answer: dict[str, Any]) -> Any:
            items = answer["answers"]
            if [item["request_id"] for item in items] != [hold.request_id for hold in holds]:
                self.log.error("The central server answered a batch of {n} purchases with {k} answers out of "
                               "order; they are sent again", n=len(holds), k=len(items))
                return
            for hold, item in zip(holds, items):
                if item.get("error_code") is not None:
                    self._purchase_failed(hold, item["error_code"], str(item.get("error") or ""), port)
                    continue
                try:
                    yield self.module.settle(hold.request_id, {
                        k: v for k, v in item.items() if v is not None and k not in ("error", "error_code")})
                except Exception:
                    self.log.failure("settling purchase {request}", request=hold.request_id)

        def failed(failure: Failure) -> None:
            for hold in holds:
                self._purchase_failed(hold, _code(failure), failure.getErrorMessage(), port)

        sent = self._call("buy_cards_batch", {"purchases": [self._purchase(hold) for hold in holds]}).addBoth(done)
        sent.addCallbacks(answered, failed).addErrback(self._logged, "settling a batch from {request}",
                                                       holds[0].request_id)

    def _purchase_failed(self, hold: Hold, code: str | None, why: str, port: CentralPort | None) -> None:
        """A purchase not decided: its hold goes back if it never can be, else it is sent again."""
        if code in UNDECIDABLE:
            self.log.warn("The central server cannot decide purchase {request} ({code}); its hold goes back",
                          request=hold.request_id, code=code)
            self.module.settle(hold.request_id, {
                "status": "refused", "refusal_code": code, "refusal": why[:300],
            }).addErrback(self._logged, "releasing hold {request}", hold.request_id)
            return
        if code is not None:
            self.log.warn("Purchase {request} not answered ({code}: {why}); it is sent again",
                          request=hold.request_id, code=code, why=why)
        elif self.port is port:
            self.log.warn("Purchase {request} not answered ({why}); it is sent again",
                          request=hold.request_id, why=why)

    def send_failure(self, report: FailureReport) -> None:
        """Relay ``terminal_failed`` for ``report`` (if the link is up and it is not in flight)."""
        if self.port is None or report.request_id in self._in_flight or report.answered:
            return
        self._in_flight.add(report.request_id)
        arguments = {
            "request_id": report.request_id, "game_id": report.game_id, "hall_id": self.hall_id,
            "terminal_id": report.terminal, "reason": report.reason, "declared_by": report.declared_by or "staff",
        }  # fmt: skip

        @defer.inlineCallbacks
        def answered(answer: dict[str, Any]) -> Any:
            yield self.module.failure_answered(report.request_id, answer)
            yield self.fetch_credits(report.game_id)

        def failed(failure: Failure) -> None:
            code = _code(failure)
            if code in ("terminal_already_failed", "not_now", "unknown_game"):
                self.log.warn("The central server did not take failure {request} ({code}): {why}",
                              request=report.request_id, code=code, why=failure.getErrorMessage())
                self.module.failure_answered(report.request_id, {
                    "refunded_cards": 0, "refunded_cents": 0, "paid_by": "nobody",
                }).addErrback(self._logged, "closing failure {request}", report.request_id)
                return
            self.log.warn("Failure report {request} not answered ({why}); it is sent again",
                          request=report.request_id, why=failure.getErrorMessage())

        def done(outcome: Any) -> Any:
            self._in_flight.discard(report.request_id)
            return outcome

        sent = self._call("terminal_failed", arguments).addBoth(done)
        sent.addCallbacks(answered, failed).addErrback(self._logged, "taking failure {request}", report.request_id)

    def _logged(self, failure: Failure, what: str, request: str) -> None:
        self.log.failure(what, failure, request=request)

    def record_committed(self, record: Record) -> None:
        """The core observer: a sale opened arms its gate; a terminal staff declared failed is reported in its
        network games (R96.3)."""
        event = declared(record)
        if isinstance(event, NetworkSaleOpened) and self.port is not None:
            self._arm_gates()
            return
        if not isinstance(event, TerminalOutOfService):
            return
        self.module.report_terminal_failure(event.terminal, event.reason, event.who.name or "staff").addErrback(
            lambda failure: self.log.failure("reporting terminal {t}'s failure", failure, t=event.terminal))

    # --- Catching up ---------------------------------------------------------------------

    def catch_up(self) -> defer.Deferred[None]:
        """Catch up on every network game the hall knows that is not over, then resend what waits."""

        @defer.inlineCallbacks
        def run() -> Any:
            for game in self.module.live_games():
                try:
                    yield self.catch_up_game(game.game_id)
                except Exception:
                    self.log.failure("Catching up on network game {game} failed; it is tried again at the next "
                                     "connection", game=game.game_id)
            self.resend()

        return run()

    def catch_up_game(self, game_id: str) -> defer.Deferred[None]:
        """Where ``game_id`` stands, and what the hall missed of it; one catch-up per game at a time."""
        running = self._catching_up.get(game_id)
        if running is not None:
            return running
        done = self._catch_up_game(game_id)

        def finished(outcome: Any) -> Any:
            if self._catching_up.get(game_id) is done:
                del self._catching_up[game_id]
            return outcome

        self._catching_up[game_id] = done
        done.addBoth(finished)
        return done

    @defer.inlineCallbacks
    def _catch_up_game(self, game_id: str) -> Any:
        module = self.module
        stands = yield self._call("get_game", {"game_id": game_id, "hall_id": self.hall_id})
        phase = stands["phase"]
        game = module.game(game_id)
        assert game is not None
        if phase in ("sale_closed", "drawing", "last_prize_won", "closed") and game.phase == SELLING:
            bought = [h for h in module.state.holds.values() if h.game_id == game_id and h.status == "bought"]
            yield module.sale_closed({
                "game_id": game_id, "cards_sold": stands["cards_sold"], "sales_cents": stands["sales_cents"],
                "prizes": [], "hall_cards_sold": sum(h.card_count for h in bought),
                "hall_sales_cents": sum(h.stake_cents * h.card_count for h in bought),
            })  # fmt: skip
        yield self.fetch_balls(game_id)
        yield self.fetch_winners(game_id)
        yield self.fetch_credits(game_id)
        if phase == "closed":
            yield module.game_closed(game_id, stands["ball_count"], [])
        elif phase == "not_played":
            yield module.game_not_played(game_id, "declared not played while this hall was away (R96.2)",
                                         stands["last_credit_seq"])
            yield self.fetch_credits(game_id)

    @defer.inlineCallbacks
    def fetch_balls(self, game_id: str) -> Any:
        game = self.module.game(game_id)
        assert game is not None
        have = len(game.balls)
        answer = yield self._call("get_balls", {"game_id": game_id, "hall_id": self.hall_id, "after_count": have})
        for index, ball in enumerate(answer["balls"]):
            yield self.module.ball(game_id, ball, have + index + 1)

    @defer.inlineCallbacks
    def fetch_winners(self, game_id: str) -> Any:
        while True:
            game = self.module.game(game_id)
            assert game is not None
            after = max((w.seq for w in game.winners), default=0)
            answer = yield self._call("get_winners", {"game_id": game_id, "hall_id": self.hall_id, "after": after})
            if answer["winners"]:
                yield self.module.winners(game_id, answer["winners"])
            if not answer["more"] or not answer["winners"]:
                return

    @defer.inlineCallbacks
    def fetch_credits(self, game_id: str) -> Any:
        """Pay every credit of the game after the last one paid, page by page (R85.9)."""
        while True:
            game = self.module.game(game_id)
            assert game is not None
            after = game.last_credit_paid
            answer = yield self._call("get_credits", {"game_id": game_id, "hall_id": self.hall_id, "after": after})
            for item in answer["credits"]:
                try:
                    yield self.module.credit(game_id, item)
                except NetworkRefused as refused:
                    self.log.error("Credit {seq} of network game {game} cannot be paid: {why}", seq=item["seq"],
                                   game=game_id, why=str(refused))
                    return
            if not answer["more"] or not answer["credits"]:
                return

    # --- Pushes ---------------------------------------------------------------------------

    def push(self, name: str, arguments: Mapping[str, Any]) -> defer.Deferred[None]:
        """Take push ``name``; fires once what it says is journaled, or fails with a
        :class:`NetworkRefused` whose code is the answer (nothing changed then)."""
        return defer.ensureDeferred(self._push(name, dict(arguments)))

    async def _push(self, name: str, arguments: dict[str, Any]) -> None:
        message = m.MESSAGES.get(name)
        try:
            if message is None or message.sender != "central":
                raise NetworkRefused("bad_argument", f"{name!r} is not a message of the central server")
            args = m.check_arguments(message, arguments)
            await self._take(message, args)
        except NetworkRefused as refused:
            self.log.warn("Refused the central server's {name} ({code}): {why}; nothing changed", name=name,
                          code=refused.code, why=str(refused))
            raise
        except CentralMessageError as error:
            self.log.warn("Refused the central server's {name} (bad_argument): {why}; nothing changed", name=name,
                          why=str(error))
            raise NetworkRefused("bad_argument", str(error)) from None

    async def _take(self, message: m.Message, args: dict[str, Any]) -> None:
        module = self.module
        if message is m.ANNEX_DELIVERED:
            if self.annex_delivered is None:
                raise NetworkRefused("bad_argument", "this hall plays no hall-annex game ([annex] in hall.toml)")
            await self.annex_delivered(args)
            return
        game_id = args["game_id"]
        if message is m.SALE_OPENED:
            await module.sale_opened(args)
            return
        if message is m.GAME_UNDER_WAY:  # a game whose sale closed while this hall was away (version 2)
            await module.game_under_way(args)
            if self.port is not None:
                self.catch_up_game(game_id).addErrback(self._logged, "catching up on {request}", game_id)
            return
        if module.game(game_id) is None:
            raise NetworkRefused("unknown_game", f"this hall knows no network game {game_id}")
        if message is m.SALE_CLOSED:
            await module.sale_closed(args)
        elif message is m.BALL_DRAWN:
            try:
                await module.ball(game_id, args["ball"], args["ball_count"])
            except NetworkRefused:
                if self.port is not None:
                    self.catch_up_game(game_id).addErrback(self._logged, "catching up on {request}", game_id)
                raise
        elif message is m.PRIZE_WON:
            await module.prize_won(args)
            if args["more"]:
                await self.fetch_winners(game_id)
        elif message is m.CREDITS_AVAILABLE:
            await self.fetch_credits(game_id)
        elif message is m.GAME_CLOSED:
            game = module.game(game_id)
            if game is not None and len(game.balls) < args["ball_count"] and self.port is not None:
                # The last balls' pushes were lost (the central server failed over between their
                # commit and their fan-out): they are fetched first, since no ball follows a close.
                await self.fetch_balls(game_id)
            await module.game_closed(game_id, args["ball_count"], args["carries"])
        elif message is m.GAME_NOT_PLAYED:
            await module.game_not_played(game_id, args["reason"], args["last_credit_seq"])
            if self.port is not None:
                self.fetch_credits(game_id).addErrback(self._logged, "fetching the refunds of {request}", game_id)


__all__ = ["RESEND_S", "CentralPort", "NetworkRelay"]

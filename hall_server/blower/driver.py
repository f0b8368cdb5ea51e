"""The hall server's driver for one ball blower: a ball source behind a small API.

``BlowerDriver`` speaks the blower protocol (``protocol.blower_frames``,
``blower_link``, ``blower_messages``) over any Twisted transport; ``serial.py`` gives it
a serial port with reconnects.  It checks the blower's firmware against the approved
list, resynchronises after either side restarts ("draw n, last ball k"), and runs one
command at a time:

- ``start_game(game)`` / ``resume_game(game, drawn)``: which game the balls belong to;
- ``draw()`` -> Deferred of the ball number; asking the blower for draw n is idempotent,
  so a retransmission or a restart never yields a second ball for the same draw;
- ``count_set()`` -> Deferred of a ``CountReport`` (R84.2, R84.4);
- ``self_test()`` -> Deferred of a ``SelfTestReport`` (R84.1);
- ``clear_fault()`` after staff fixed the machine.

Faults, notices and link changes reach an ``IBlowerObserver``.  Time comes from the
injected ``IReactorTime``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime, ITransport
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import Interface, implementer

from hall_server.blower.approval import ApprovedFirmware
from hall_server.blower.errors import (
    BlowerBusy, BlowerError, BlowerFault, BlowerRefused, BlowerTimeout, DrawConflict,
    FirmwareNotApproved,
)
from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import BAD, MESSAGE, Link, LinkBusy


@dataclass(frozen=True)
class Hello:
    """What a blower says about itself when a link opens."""

    version: tuple[int, int, int]
    image_hash: bytes
    state: int
    game: int
    draws: int
    last_ball: int
    presented: int
    fault: int


@dataclass(frozen=True)
class CountReport:
    """The result of cycling every ball past the reader."""

    counted: int
    unreadable: int
    missing: tuple[int, ...]
    repeated: tuple[int, ...]

    @property
    def complete(self) -> bool:
        """True for exactly the 90 balls, each read once."""
        return (self.counted == 90 and not self.unreadable and not self.missing
                and not self.repeated)


@dataclass(frozen=True)
class SelfTestReport:
    failures: int

    @property
    def passed(self) -> bool:
        return self.failures == 0

    @property
    def failed_parts(self) -> tuple[str, ...]:
        names = ((bm.TEST_PUMP, "pump"), (bm.TEST_TUBE_SENSOR, "tube sensor"),
                 (bm.TEST_READER, "ball reader"))
        return tuple(name for bit, name in names if self.failures & bit)


class IBlowerObserver(Interface):
    """Who hears about a blower's faults and link (the caller console, the journal)."""

    def blower_fault(name: str, fault: BlowerFault) -> None:
        """The blower stopped in a fault: suspend the game (R86.1)."""

    def blower_notice(name: str, reason: int, count: int) -> None:
        """The blower ignored ``count`` frames for ``reason`` (a noisy or hostile line)."""

    def blower_link(name: str, up: bool, detail: str) -> None:
        """The link to the blower came up (after a checked HELLO) or went down."""


@implementer(IBlowerObserver)
class RecordingObserver:
    """An observer that keeps what it heard; the default, and handy in tests."""

    def __init__(self) -> None:
        self.faults: list[BlowerFault] = []
        self.notices: list[tuple[int, int]] = []
        self.links: list[tuple[bool, str]] = []

    def blower_fault(self, name: str, fault: BlowerFault) -> None:
        self.faults.append(fault)

    def blower_notice(self, name: str, reason: int, count: int) -> None:
        self.notices.append((reason, count))

    def blower_link(self, name: str, up: bool, detail: str) -> None:
        self.links.append((up, detail))


#: Commands the blower refuses while it finishes a move and takes a moment later.
_ASK_AGAIN_WHEN_BUSY = (bf.NEW_GAME, bf.COUNT_SET, bf.SELF_TEST)


@dataclass
class _Command:
    kind: int
    payload: Callable[[], bytes]
    answers: tuple[int, ...]
    deferred: Deferred[Any] = field(default_factory=Deferred)
    draw_no: int = 0
    sent: bool = False
    timeout: Any = None


class BlowerProtocol(Protocol):
    """Forwards bytes and connection events to the driver; holds no logic."""

    def __init__(self, driver: BlowerDriver) -> None:
        self.driver = driver

    def connectionMade(self) -> None:
        if self.transport is not None:  # always, once connected; the type allows None
            self.driver.attach(self.transport)

    def dataReceived(self, data: bytes) -> None:
        self.driver.bytes_received(data)

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        if self.transport is not None:
            self.driver.detach(self.transport)


class BlowerDriver:
    """One blower.  See the module docstring for the API."""

    log = Logger()

    def __init__(self, clock: IReactorTime, approved: ApprovedFirmware, *,
                 name: str = "main", key: bytes = b"", observer: Any = None,
                 retransmit: float = 0.1, silent_after: int = 20,
                 command_timeout: float = 60.0, tick: float = 0.02) -> None:
        self.clock = clock
        self.approved = approved
        self.name = name
        self.observer = observer if observer is not None else RecordingObserver()
        self.link = Link(key, retransmit_ms=int(retransmit * 1000), max_queue=4)
        self.silent_after = silent_after
        self.command_timeout = command_timeout
        self.tick_interval = tick
        self.transport: ITransport | None = None
        self.ready = False
        self.hello: Hello | None = None
        self.game = 0
        self.drawn: list[int] = []
        self._nonce = 0
        self._hello_sent_at = -1.0
        self._syncing = False
        self._queue: list[_Command] = []
        self._ticker = LoopingCall(self._tick)
        self._ticker.clock = clock
        self._waiting_ready: list[Deferred[None]] = []
        self._force_sync = False
        self._retry: Any = None  # the delayed reopening after a SYNC the blower was busy for

    # -- connection ------------------------------------------------------------------

    def factory(self) -> Factory:
        """A factory whose protocols feed this driver (for endpoints and services)."""
        return Factory.forProtocol(lambda: BlowerProtocol(self))

    def attach(self, transport: ITransport) -> None:
        self.transport = transport
        if not self._ticker.running:
            self._ticker.start(self.tick_interval, now=False)
        self._open_link()

    def detach(self, transport: ITransport) -> None:
        if transport is not self.transport:
            return
        self.transport = None
        if self._ticker.running:
            self._ticker.stop()
        self._cancel_retry()
        self._link_down("the serial port closed")

    def stop(self) -> None:
        """The hall server is stopping: fail what is still asked and leave no timer behind.

        Unlike a closed port (the cable: a reconnect follows), nothing will answer these
        commands any more.  A draw failed here was never delivered, and the blower gives
        the same ball to the next driver's draw (``resume_game``).
        """
        if self._ticker.running:
            self._ticker.stop()
        self._cancel_retry()
        self._fail_all(BlowerBusy("the hall server is stopping"))

    def _cancel_retry(self) -> None:
        if self._retry is not None and self._retry.active():
            self._retry.cancel()
        self._retry = None

    def when_ready(self) -> Deferred[None]:
        """Fires once the blower is connected, approved and in step with the game."""
        if self.ready:
            d: Deferred[None] = Deferred()
            d.callback(None)
            return d
        d = Deferred()
        self._waiting_ready.append(d)
        return d

    def _now_ms(self) -> int:
        return int(self.clock.seconds() * 1000)

    def _open_link(self) -> None:
        self.ready = False
        self._syncing = False
        self.link.reset(0)
        self._nonce = int.from_bytes(os.urandom(4), "big") or 1
        self._send_hello_req()

    def _send_hello_req(self) -> None:
        self._hello_sent_at = self.clock.seconds()
        self.link.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(self._nonce), 0)
        self._flush()

    def _link_down(self, detail: str) -> None:
        was_ready = self.ready
        self.ready = False
        for command in self._queue:
            command.sent = False
        if was_ready:
            self.observer.blower_link(self.name, False, detail)

    def _tick(self) -> None:
        if self.transport is None:
            return
        if not self.ready and not self._syncing:
            if self.clock.seconds() - self._hello_sent_at >= self.link.retransmit_ms * 2 / 1000:
                self._send_hello_req()
            return
        self.link.poll(self._now_ms())
        if self.link.tries > self.silent_after:
            self._link_down("the blower stopped answering")
            self._open_link()
        self._flush()

    def _flush(self) -> None:
        data = self.link.take_output()
        if data and self.transport is not None:
            self.transport.write(data)

    # -- receiving -----------------------------------------------------------------

    def bytes_received(self, data: bytes) -> None:
        for event, item in self.link.feed(data, self._now_ms()):
            if event == MESSAGE:
                self._on_message(item)
            elif event == BAD:
                self.log.debug("blower {name}: bad frame: {error}", name=self.name,
                               error=item)
        self._flush()

    def _on_message(self, frame: bf.Frame) -> None:
        try:
            self._dispatch(frame)
        except bm.BadPayload as error:
            # Framed and checked, yet malformed: a firmware we do not understand.
            self.log.warn("blower {name}: malformed {kind:#x}: {error}", name=self.name,
                          kind=frame.kind, error=error)

    def _dispatch(self, frame: bf.Frame) -> None:
        kind = frame.kind
        if kind == bf.HELLO:
            self._on_hello(frame)
        elif kind == bf.NOTICE:
            reason, count = bm.unpack_notice(frame.payload)
            self.observer.blower_notice(self.name, reason, count)
        elif kind == bf.BALL:
            self._on_ball(*bm.unpack_ball(frame.payload))
        elif kind == bf.FAULT:
            code, game, draw_no, detail = bm.unpack_fault(frame.payload)
            fault = BlowerFault(code, game, draw_no, detail)
            self.observer.blower_fault(self.name, fault)
            self._fail_current(fault, (bf.DRAW, bf.COUNT_SET))
        elif kind == bf.REFUSED:
            refused_kind, reason, draws, last = bm.unpack_refused(frame.payload)
            current = self._current()
            if (reason == bm.BUSY and refused_kind in _ASK_AGAIN_WHEN_BUSY
                    and current is not None and current.kind == refused_kind):
                # The blower is finishing a move (the last ball being racked): ask
                # again shortly; the command's own timeout bounds the waiting.
                current.sent = False
                self._cancel_retry()
                self._retry = self.clock.callLater(self.link.retransmit_ms * 2 / 1000,
                                                   self._send_again)
                return
            self._fail_current(BlowerRefused(refused_kind, reason, draws, last), (refused_kind,))
        elif kind == bf.STATUS:
            self._on_status(bm.unpack_status(frame.payload))
        elif kind == bf.COUNT_RESULT:
            counted, unreadable, missing, repeated = bm.unpack_count_result(frame.payload)
            self._complete(bf.COUNT_SET, CountReport(counted, unreadable, tuple(missing),
                                                     tuple(repeated)))
        elif kind == bf.SELF_TEST_RESULT:
            if len(frame.payload) != 1:
                raise bm.BadPayload("self-test result")
            self._complete(bf.SELF_TEST, SelfTestReport(frame.payload[0]))

    def _on_hello(self, frame: bf.Frame) -> None:
        (_, version, digest, nonce, state, game, draws, last, presented,
         fault) = bm.unpack_hello(frame.payload)
        if nonce != self._nonce:
            # A blower that (re)booted, or a HELLO meant for an earlier link: open ours.
            if self.ready or self._syncing:
                self._link_down("the blower restarted")
                self._open_link()
            return
        if self.ready or self._syncing:
            return  # our request was answered twice
        hello = Hello(version, digest, state, game, draws, last, presented, fault)
        self.hello = hello
        if not self.approved.approves(version, digest):
            error = FirmwareNotApproved("version %d.%d.%d, image %s" % (
                version + (digest.hex()[:16],)))
            self.observer.blower_link(self.name, False, str(error))
            self._fail_all(error)
            return
        self.link.reset(frame.link)
        if fault:
            self.observer.blower_fault(self.name, BlowerFault(fault, game, draws + 1))
        if (self.game and hello.game == self.game and hello.draws + 1 == len(self.drawn)
                and hello.presented == self.drawn[-1]):
            # Our CONFIRM of the last ball was lost with the old link: send it again
            # before anything else, so the blower racks that ball.
            self._send(bf.CONFIRM, bm.pack_confirm(self.game, len(self.drawn),
                                                   self.drawn[-1]))
            self._become_ready()
            return
        if self.game and (self._force_sync or hello.game != self.game
                          or hello.draws < len(self.drawn)):
            # The blower lost the game (it restarted): tell it draw n, last ball k.
            self._syncing = True
            last_ball = self.drawn[-1] if self.drawn else 0
            self._queue.insert(0, _Command(bf.SYNC, lambda: bm.pack_sync(
                self.game, self.drawn, last_ball), (bf.STATUS,)))
            self._queue[0].deferred.addErrback(self._sync_failed)
            self._send_next()
            return
        if self.game and hello.draws > len(self.drawn) + 1:
            self._sync_failed(Failure(DrawConflict(
                "the blower has %d draws, the game %d" % (hello.draws, len(self.drawn)))))
            return
        self._become_ready()

    def _sync_failed(self, failure: Failure) -> None:
        self._syncing = False
        error = failure.value
        if isinstance(error, BlowerRefused) and error.reason == bm.BUSY:
            # The blower is still finishing a move (a count's last ball going back, a
            # ball being racked): open a fresh link shortly and send SYNC again.  The
            # same link cannot carry it: the blower has taken that seq already.
            if self.transport is not None:
                self._retry = self.clock.callLater(
                    self.link.retransmit_ms * 2 / 1000, self._reopen_after_busy)
            return
        self.observer.blower_link(self.name, False, str(error))
        if isinstance(error, BlowerError):
            self._fail_all(error)

    def _send_again(self) -> None:
        self._retry = None
        self._send_next()

    def _reopen_after_busy(self) -> None:
        self._retry = None
        if self.transport is not None:
            self._open_link()

    def _become_ready(self) -> None:
        self._syncing = False
        self.ready = True
        self.observer.blower_link(self.name, True, "firmware %d.%d.%d approved" % (
            self.hello.version if self.hello else (0, 0, 0)))
        waiting, self._waiting_ready = self._waiting_ready, []
        for d in waiting:
            d.callback(None)
        self._send_next()

    def _on_ball(self, game: int, draw_no: int, number: int) -> None:
        if game != self.game:
            return
        if draw_no <= len(self.drawn):
            if self.drawn[draw_no - 1] != number:
                self.observer.blower_fault(self.name, BlowerFault(
                    bm.REPEATED_NUMBER, game, draw_no, number))
            elif draw_no == len(self.drawn):
                # Our CONFIRM may have been lost with the link: the same ball, once.
                self._send(bf.CONFIRM, bm.pack_confirm(game, draw_no, number))
            return
        current = self._current()
        if current is None or current.kind != bf.DRAW or current.draw_no != draw_no:
            return  # reported before we asked (a ball left in the tube); asked for later
        self.drawn.append(number)
        self._send(bf.CONFIRM, bm.pack_confirm(game, draw_no, number))
        self._complete(bf.DRAW, number)

    def _on_status(self, status: tuple[int, int, int, int, int]) -> None:
        current = self._current()
        if current is not None and current.kind == bf.SYNC:
            self._queue.pop(0)
            self._cancel_timeout(current)
            self._force_sync = False
            current.deferred.callback(status)
            self._become_ready()
            return
        for kind in (bf.NEW_GAME, bf.CLEAR_FAULT):
            if current is not None and current.kind == kind:
                self._complete(kind, None)
                return

    # -- commands ----------------------------------------------------------------

    def start_game(self, game: int) -> Deferred[None]:
        """Return the racked balls to the chamber and start drawing for ``game``."""
        if self._current_kind(bf.DRAW) or not 0 < game <= 0xFFFFFFFF:
            raise BlowerBusy("start_game(%d)" % game)
        d = self._enqueue(bf.NEW_GAME, lambda: bm.pack_new_game(game), (bf.STATUS,))

        def started(result: object) -> None:
            self.game = game
            self.drawn = []
        d.addCallback(started)
        return d

    def resume_game(self, game: int, drawn: list[int]) -> None:
        """Continue ``game`` whose balls so far (from the journal) are ``drawn``; called
        after the hall server restarts, before connecting."""
        self.game = game
        self.drawn = list(drawn)

    def resynchronise(self, force: bool = False) -> Deferred[None]:
        """Open a new link so the blower learns the game set by ``resume_game``
        ("draw n, last ball k"); fires when it is in step.

        Without ``force`` a blower one draw ahead keeps that draw (its ball is the next
        one: the hall had not committed it).  ``force`` makes the blower forget it too:
        after a ball recall, the voided ball is not the next ball.
        """
        self._force_sync = self._force_sync or force
        if self.transport is None:
            return self.when_ready()
        self._link_down("resynchronising")
        self._open_link()
        return self.when_ready()

    def draw(self) -> Deferred[int]:
        """The next ball of the game, once; the blower chooses it, not us."""
        if not self.game:
            raise BlowerBusy("no game started")
        draw_no = len(self.drawn) + 1 + sum(1 for c in self._queue if c.kind == bf.DRAW)
        game = self.game
        return self._enqueue(bf.DRAW, lambda: bm.pack_draw(game, draw_no),
                             (bf.BALL, bf.FAULT, bf.REFUSED), draw_no)

    def count_set(self) -> Deferred[CountReport]:
        """Cycle every ball past the reader; ends the current game on the blower."""
        d = self._enqueue(bf.COUNT_SET, lambda: b"", (bf.COUNT_RESULT,))

        def counted(report: CountReport) -> CountReport:
            self.game = 0
            self.drawn = []
            return report
        return d.addCallback(counted)

    def self_test(self) -> Deferred[SelfTestReport]:
        return self._enqueue(bf.SELF_TEST, lambda: b"", (bf.SELF_TEST_RESULT,))

    def clear_fault(self) -> Deferred[None]:
        """Staff fixed the blower: return the ball in the tube and go idle."""
        return self._enqueue(bf.CLEAR_FAULT, lambda: b"", (bf.STATUS,))

    # -- the command queue ------------------------------------------------------------

    def _enqueue(self, kind: int, payload: Callable[[], bytes], answers: tuple[int, ...],
                 draw_no: int = 0) -> Deferred[Any]:
        command = _Command(kind, payload, answers, draw_no=draw_no)
        self._queue.append(command)
        if self.command_timeout:
            command.timeout = self.clock.callLater(
                self.command_timeout, self._timed_out, command)
        self._send_next()
        return command.deferred

    def _timed_out(self, command: _Command) -> None:
        command.timeout = None
        if command in self._queue:
            self._queue.remove(command)
            command.deferred.errback(BlowerTimeout(
                "no answer within %.0f s" % self.command_timeout))
            self._send_next()

    def _cancel_timeout(self, command: _Command) -> None:
        if command.timeout is not None and command.timeout.active():
            command.timeout.cancel()
        command.timeout = None

    def _current(self) -> _Command | None:
        return self._queue[0] if self._queue else None

    def _current_kind(self, kind: int) -> bool:
        return any(c.kind == kind for c in self._queue)

    def _send_next(self) -> None:
        current = self._current()
        if current is None or current.sent or self.transport is None:
            return
        if not self.ready and current.kind != bf.SYNC:
            return
        current.sent = True
        self._send(current.kind, current.payload())

    def _send(self, kind: int, payload: bytes) -> None:
        try:
            self.link.send(kind, payload, self._now_ms())
        except LinkBusy:
            # The blower is not acknowledging; the command is sent again on the next
            # link, and a CONFIRM is repeated by the blower's BALL.
            self.log.warn("blower {name}: link queue full", name=self.name)
        self._flush()

    def _complete(self, kind: int, result: object) -> None:
        current = self._current()
        if current is None or current.kind != kind:
            return
        self._queue.pop(0)
        self._cancel_timeout(current)
        current.deferred.callback(result)
        self._send_next()

    def _fail_current(self, error: BlowerError, kinds: tuple[int, ...]) -> None:
        current = self._current()
        if current is None or current.kind not in kinds:
            return
        self._queue.pop(0)
        self._cancel_timeout(current)
        current.deferred.errback(error)
        self._send_next()

    def _fail_all(self, error: BlowerError) -> None:
        queue, self._queue = self._queue, []
        for command in queue:
            self._cancel_timeout(command)
            command.deferred.errback(error)
        # Whoever waits for the link to be ready would otherwise wait for ever.
        waiting, self._waiting_ready = self._waiting_ready, []
        for d in waiting:
            d.errback(error)

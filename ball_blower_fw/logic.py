"""The blower controller's logic: a state machine driven by host messages and sensors.

Pure: it imports no ``machine``, ``asyncio`` or I/O; time comes in as ``now``
(milliseconds, monotonic) and the hardware is the injected ``Hardware`` port.  The
thin shell in ``main.py`` feeds it bytes and ticks and writes out what it produces.

The blower owns no game rules and never chooses a ball: it mixes, releases one ball,
reads it, reports it and racks it when the host confirms.  A DRAW names only the game
and the draw number, so asking again for draw n returns the ball already drawn for n
instead of a second ball.

States and the events that move between them are the table ``TRANSITIONS``.
"""

from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import BAD, DROPPED, MESSAGE, REPLAYED_FRAME, STALE, Link

GAME = 0
COUNT = 1

# (state, event): (next state, action).  An action may return a further event, which
# is looked up from the new state at once (e.g. reading a ball ends in "reported",
# "unreadable" or "repeated").
TRANSITIONS = {
    (bm.IDLE, "draw"): (bm.MIXING, "_start_mixing"),
    (bm.IDLE, "ball_in_tube"): (bm.PRESENTED, "_read_left_ball"),
    (bm.IDLE, "self_test"): (bm.SELF_TESTING, "_start_self_test"),
    (bm.MIXING, "mixed"): (bm.DRAWING, "_open_gate"),
    (bm.MIXING, "pump_lost"): (bm.FAULTED, "_fault_pump"),
    (bm.DRAWING, "ball_arrived"): (bm.PRESENTED, "_read_ball"),
    (bm.DRAWING, "ball_timeout"): (bm.FAULTED, "_fault_no_ball"),
    (bm.DRAWING, "chamber_empty"): (bm.RETURNED, "_finish_count"),
    (bm.DRAWING, "pump_lost"): (bm.FAULTED, "_fault_pump"),
    (bm.PRESENTED, "reported"): (bm.PRESENTED, "_report_ball"),
    (bm.PRESENTED, "counted"): (bm.CONFIRMED, "_rack_ball"),
    (bm.PRESENTED, "already_confirmed"): (bm.CONFIRMED, "_rack_ball"),
    (bm.PRESENTED, "unreadable"): (bm.FAULTED, "_fault_unreadable"),
    (bm.PRESENTED, "repeated"): (bm.FAULTED, "_fault_repeated"),
    (bm.PRESENTED, "confirm"): (bm.CONFIRMED, "_rack_ball"),
    (bm.CONFIRMED, "tube_clear"): (bm.IDLE, "_ready"),
    (bm.CONFIRMED, "clear_timeout"): (bm.FAULTED, "_fault_jam"),
    (bm.RETURNED, "tube_clear"): (bm.IDLE, "_ready"),
    (bm.RETURNED, "clear_timeout"): (bm.FAULTED, "_fault_jam"),
    (bm.SELF_TESTING, "test_done"): (bm.IDLE, "_report_self_test"),
    (bm.FAULTED, "clear_fault"): (bm.RETURNED, "_return_ball"),
}

DEFAULT_TIMINGS = {
    "mix_ms": 3000,         # air on before the gate opens
    "count_mix_ms": 200,    # counting only needs the balls loose
    "spinup_ms": 500,       # the airflow switch closes within this after pump on
    "ball_timeout_ms": 4000,
    "clear_timeout_ms": 1500,
    "self_test_ms": 1000,
    "retransmit_ms": 100,
}


class Blower:
    """The controller.  ``boot``, then ``receive`` bytes and ``tick`` as time passes;
    ``output`` gives the bytes to write to the host."""

    def __init__(self, hardware, version: tuple, image_hash: bytes, random_u32,
                 key: bytes = b"", timings=None) -> None:
        self.hw = hardware
        self.version = version
        self.image_hash = image_hash
        self.random_u32 = random_u32
        self.timings = dict(DEFAULT_TIMINGS)
        if timings:
            self.timings.update(timings)
        self.link = Link(key, retransmit_ms=self.timings["retransmit_ms"], max_queue=8,
                         rate_per_s=200, notice_ms=250)
        self.state = bm.IDLE
        self.mode = GAME
        self.game = 0
        self.draws = 0
        self.last_ball = 0
        self.drawn = set()
        self.presented = 0
        self.fault = 0
        self.fault_detail = 0
        self.pending_draw = False
        self.tube_confirmed = False
        self.hello_nonces = []
        self.deadline = 0
        self.pump_check_at = 0
        self.counted = []
        self.count_unreadable = 0
        self.now = 0
        self.refusals = 0

    # -- the shell's entry points -------------------------------------------------

    def boot(self, now: int) -> None:
        """Announce a fresh link; the host resynchronises from the HELLO."""
        self.now = now
        self.hw.pump(False)
        self.hw.led(self.state)
        self._hello(0)

    def receive(self, data: bytes, now: int) -> None:
        self.now = now
        for event, item in self.link.feed(data, now):
            if event == MESSAGE:
                self._on_message(item)
            # BAD, STALE, REPLAYED_FRAME and DROPPED are counted by the link and
            # reported to the host in NOTICE frames; nothing else to do here.
            elif event not in (BAD, STALE, REPLAYED_FRAME, DROPPED):
                raise ValueError("unknown link event %r" % event)

    def tick(self, now: int) -> None:
        """Poll sensors and timers; call every few milliseconds."""
        self.now = now
        state = self.state
        hw = self.hw
        if state == bm.MIXING:
            if now >= self.pump_check_at and not hw.pump_running():
                self._fire("pump_lost")
            elif now >= self.deadline:
                self._fire("mixed")
        elif state == bm.DRAWING:
            if hw.ball_in_tube():
                self._fire("ball_arrived")
            elif now >= self.pump_check_at and not hw.pump_running():
                self._fire("pump_lost")
            elif now >= self.deadline:
                self._fire("chamber_empty" if self.mode == COUNT else "ball_timeout")
        elif state == bm.CONFIRMED or state == bm.RETURNED:
            if not hw.ball_in_tube():
                self._fire("tube_clear")
            elif now >= self.deadline:
                self._fire("clear_timeout")
        elif state == bm.SELF_TESTING:
            if now >= self.deadline:
                self._fire("test_done")
        elif state == bm.IDLE:
            if self.game and hw.ball_in_tube():
                # A ball left in the tube across a restart: read it before drawing.
                self._fire("ball_in_tube")
            elif self.mode == COUNT or self.pending_draw:
                self.pending_draw = False
                self._fire("draw")
        self.link.poll(now)

    def output(self) -> bytes:
        return self.link.take_output()

    # -- the machine ---------------------------------------------------------------

    def _fire(self, event: str) -> None:
        while event:
            step = TRANSITIONS.get((self.state, event))
            if step is None:
                raise ValueError("no transition for %r in state %d" % (event, self.state))
            self.state = step[0]
            self.hw.led(self.state)
            event = getattr(self, step[1])()

    def _start_mixing(self):
        self.hw.pump(True)
        mix = self.timings["count_mix_ms"] if self.mode == COUNT else self.timings["mix_ms"]
        self.deadline = self.now + mix
        self.pump_check_at = self.now + self.timings["spinup_ms"]

    def _open_gate(self):
        self.hw.release()
        self.deadline = self.now + self.timings["ball_timeout_ms"]

    def _read_ball(self):
        self.hw.pump(False)
        number = self.hw.read_ball()
        if self.mode == COUNT:
            if number:
                self.counted.append(number)
            else:
                self.count_unreadable += 1
            return "counted"
        if not number:
            return "unreadable"
        if number in self.drawn:
            self.fault_detail = number
            return "repeated"
        self.presented = number
        return "reported"

    def _read_left_ball(self):
        number = self.hw.read_ball()
        if number and number == self.last_ball:
            # The confirmed ball of the last draw, left in the tube by a restart.
            self.tube_confirmed = True
            return "already_confirmed"
        # A ball released before the restart: it is the ball of the draw asked for.
        self.pending_draw = False
        return self._read_ball()

    def _report_ball(self):
        self._send(bf.BALL, bm.pack_ball(self.game, self.draws + 1, self.presented))

    def _rack_ball(self):
        self.tube_confirmed = self.mode == GAME
        self.hw.rack()
        self.deadline = self.now + self.timings["clear_timeout_ms"]

    def _return_ball(self):
        if self.hw.ball_in_tube():
            # A confirmed ball is drawn for good: it goes to the rack even when it
            # jammed on the way, never back into play.
            if self.tube_confirmed:
                self.hw.rack()
            else:
                self.hw.return_tube()
        self.presented = 0
        self.fault = 0
        self.fault_detail = 0
        self.deadline = self.now + self.timings["clear_timeout_ms"]
        self._send_status()

    def _ready(self):
        self.tube_confirmed = False

    def _finish_count(self):
        self.hw.pump(False)
        self.hw.return_all()
        self.mode = GAME
        seen = set()
        repeated = []
        for n in self.counted:
            if n in seen and n not in repeated:
                repeated.append(n)
            seen.add(n)
        missing = [n for n in range(1, 91) if n not in seen]
        self._send(bf.COUNT_RESULT, bm.pack_count_result(
            len(self.counted) + self.count_unreadable, self.count_unreadable,
            missing, repeated))
        self.counted = []
        self.count_unreadable = 0
        self.deadline = self.now + self.timings["clear_timeout_ms"]

    def _start_self_test(self):
        self.hw.pump(True)
        self.deadline = self.now + self.timings["self_test_ms"]

    def _report_self_test(self):
        failures = 0
        if not self.hw.pump_running():
            failures |= bm.TEST_PUMP
        self.hw.pump(False)
        if self.hw.ball_in_tube():
            failures |= bm.TEST_TUBE_SENSOR
        if not self.hw.reader_ok():
            failures |= bm.TEST_READER
        self._send(bf.SELF_TEST_RESULT, bytes([failures]))

    def _set_fault(self, code: int) -> None:
        self.hw.pump(False)
        self.fault = code
        # A draw asked during the fault's predecessor is cancelled: the host asks again
        # once staff have cleared the fault.
        self.pending_draw = False
        if self.mode == COUNT:
            # A fault ends the count; the balls read so far stay uncounted.
            self.mode = GAME
            self.counted = []
            self.count_unreadable = 0
        self._send(bf.FAULT, bm.pack_fault(code, self.game, self.draws + 1, self.fault_detail))

    def _fault_pump(self):
        self._set_fault(bm.PUMP_FAILURE)

    def _fault_no_ball(self):
        self._set_fault(bm.NO_BALL)

    def _fault_unreadable(self):
        self._set_fault(bm.UNREADABLE)

    def _fault_repeated(self):
        self._set_fault(bm.REPEATED_NUMBER)

    def _fault_jam(self):
        self._set_fault(bm.JAM)

    # -- host messages ---------------------------------------------------------------

    def _send(self, kind: int, payload: bytes) -> None:
        self.link.send(kind, payload, self.now)

    def _send_status(self) -> None:
        self._send(bf.STATUS, bm.pack_status(self.state, self.game, self.draws,
                                             self.last_ball, self.fault))

    def _refuse(self, kind: int, reason: int) -> None:
        self.refusals += 1
        self._send(bf.REFUSED, bm.pack_refused(kind, reason, self.draws, self.last_ball))

    def _hello(self, nonce: int, new_link: bool = True) -> None:
        if new_link:
            self.link.reset(self.random_u32() or 1)
        self.link.send_unsequenced(bf.HELLO, bm.pack_hello(
            self.version, self.image_hash, nonce, self.state, self.game, self.draws,
            self.last_ball, self.presented, self.fault))

    def _on_message(self, frame) -> None:
        kind = frame.kind
        handler = _HANDLERS.get(kind)
        if handler is None:
            if kind in bf.BLOWER_KINDS:
                # Our own kinds echoed back: a looped line, not a command.
                self.link.note(bm.WRONG_DIRECTION)
            elif kind not in bf.UNSEQUENCED:
                self._refuse(kind, bm.UNKNOWN_COMMAND)
            return
        try:
            getattr(self, handler)(frame.payload)
        except bm.BadPayload:
            self._refuse(kind, bm.BAD_PAYLOAD)

    def _on_hello_req(self, payload: bytes) -> None:
        _, nonce = bm.unpack_hello_req(payload)
        if self.hello_nonces and nonce == self.hello_nonces[-1]:
            # The host did not get our HELLO and asks again: same link, same answer.
            self._hello(nonce, new_link=False)
        elif nonce in self.hello_nonces:
            # An old host's request played back: opening a link for it would cut off
            # the real host.
            self.link.note(bm.REPLAYED)
        else:
            self.hello_nonces = (self.hello_nonces + [nonce])[-8:]
            self._hello(nonce)

    def _on_sync(self, payload: bytes) -> None:
        game, draws, last, drawn = bm.unpack_sync(payload)
        if self.state not in (bm.IDLE, bm.FAULTED) or self.mode != GAME:
            self._refuse(bf.SYNC, bm.BUSY)
            return
        self.game = game
        self.draws = draws
        self.last_ball = last
        self.drawn = set(drawn)
        self._send_status()

    def _on_new_game(self, payload: bytes) -> None:
        game = bm.unpack_new_game(payload)
        if game == self.game and self.draws == 0:
            self._send_status()  # a repeated request after a host restart
            return
        if self.state != bm.IDLE or self.mode != GAME or self.pending_draw:
            self._refuse(bf.NEW_GAME, bm.BUSY)
            return
        self.hw.return_all()
        self.game = game
        self.draws = 0
        self.last_ball = 0
        self.drawn = set()
        self._send_status()

    def _on_draw(self, payload: bytes) -> None:
        if len(payload) > 5:
            # Anything after game and draw number would be a wish for a ball.
            self._refuse(bf.DRAW, bm.BALL_CHOICE)
            return
        game, draw_no = bm.unpack_draw(payload)
        if game != self.game or not game:
            self._refuse(bf.DRAW, bm.WRONG_GAME)
        elif draw_no == self.draws and draw_no:
            # Asked again for a confirmed ball: the same ball, never a new one.
            self._send(bf.BALL, bm.pack_ball(game, draw_no, self.last_ball))
        elif draw_no != self.draws + 1:
            self._refuse(bf.DRAW, bm.OUT_OF_STEP)
        elif self.state == bm.FAULTED:
            self._refuse(bf.DRAW, bm.IN_FAULT)
        elif self.state == bm.PRESENTED and self.presented:
            self._report_ball()
        elif self.mode != GAME or self.state == bm.SELF_TESTING:
            self._refuse(bf.DRAW, bm.BUSY)
        elif self.draws >= 90:
            self._refuse(bf.DRAW, bm.SET_EXHAUSTED)
        elif self.state == bm.IDLE:
            # Started from the next tick, which first looks for a ball left in the tube.
            self.pending_draw = True
        else:
            # Mixing, drawing or racking the previous ball: this draw follows.
            self.pending_draw = self.state in (bm.CONFIRMED, bm.RETURNED)

    def _on_confirm(self, payload: bytes) -> None:
        game, draw_no, number = bm.unpack_confirm(payload)
        if (self.state == bm.PRESENTED and game == self.game
                and draw_no == self.draws + 1 and number == self.presented):
            self.draws = draw_no
            self.last_ball = number
            self.drawn.add(number)
            self.presented = 0
            self._fire("confirm")
        elif not (game == self.game and draw_no == self.draws and number == self.last_ball):
            self._refuse(bf.CONFIRM, bm.OUT_OF_STEP)

    def _on_count_set(self, payload: bytes) -> None:
        if payload:
            raise bm.BadPayload("COUNT_SET takes no payload")
        if self.state != bm.IDLE or self.mode != GAME or self.pending_draw:
            self._refuse(bf.COUNT_SET, bm.IN_FAULT if self.state == bm.FAULTED else bm.BUSY)
            return
        # Counting cycles every ball, so the game's racked balls go back first.
        self.hw.return_all()
        self.game = 0
        self.draws = 0
        self.last_ball = 0
        self.drawn = set()
        self.mode = COUNT

    def _on_self_test(self, payload: bytes) -> None:
        if payload:
            raise bm.BadPayload("SELF_TEST takes no payload")
        if self.state != bm.IDLE or self.mode != GAME or self.pending_draw:
            self._refuse(bf.SELF_TEST, bm.BUSY)
            return
        self._fire("self_test")

    def _on_clear_fault(self, payload: bytes) -> None:
        if payload:
            raise bm.BadPayload("CLEAR_FAULT takes no payload")
        if self.state != bm.FAULTED:
            self._send_status()
            return
        self._fire("clear_fault")


_HANDLERS = {
    bf.HELLO_REQ: "_on_hello_req",
    bf.SYNC: "_on_sync",
    bf.NEW_GAME: "_on_new_game",
    bf.DRAW: "_on_draw",
    bf.CONFIRM: "_on_confirm",
    bf.COUNT_SET: "_on_count_set",
    bf.SELF_TEST: "_on_self_test",
    bf.CLEAR_FAULT: "_on_clear_fault",
}

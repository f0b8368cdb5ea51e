"""Reliable delivery over the blower serial line: one end of the link, sans-I/O.

Shared by the firmware and the hall server driver (the MicroPython/CPython subset, like
``blower_frames``).  Stop-and-wait: each end has at most one numbered frame waiting for
its ACK; it is sent again every ``retransmit_ms`` until acknowledged.  The receiver
accepts only the next sequence number, acknowledges it and any repeat of the last one
(the lost-ACK case) without delivering the repeat twice, and ignores everything else
as a replay.  Frames carry a link id chosen by the blower at each HELLO, so frames of an
earlier link, including recorded ones, are ignored as stale.

Time is the caller's: every method that needs it takes ``now`` in milliseconds from
any monotonic origin.
"""

from protocol.blower_frames import (
    ACK, HELLO, HELLO_REQ, NOTICE, UNSEQUENCED, Frame, FrameDecoder, FrameError,
    encode_frame,
)
from protocol.blower_messages import (
    BAD_FRAME, FLOODED, REPLAYED, STALE_LINK, pack_notice,
)

# Events returned by ``Link.feed``: (event, frame-or-error).
MESSAGE = 0   # a frame to act on, in order, exactly once
BAD = 1       # a FrameError: the bytes were damaged or forged
STALE = 2     # a well-formed frame of another link id
REPLAYED_FRAME = 3  # a sequenced frame out of order: an old frame played again
DROPPED = 4   # a frame dropped by the rate limit


class LinkBusy(Exception):
    """More messages were queued than the link holds; the caller sends too fast."""

    message = "the blower link's send queue is full"


def next_seq(seq: int) -> int:
    """Sequence numbers run 1..65535 and wrap to 1; 0 marks unsequenced frames."""
    return 1 if seq >= 0xFFFF else seq + 1


class Link:
    """One end of the link: queue messages with ``send``, feed received bytes with
    ``feed``, call ``poll`` now and then, and write ``take_output()`` to the line."""

    def __init__(self, key: bytes = b"", retransmit_ms: int = 100, max_queue: int = 8,
                 rate_per_s: int = 0, notice_ms: int = 0) -> None:
        self.key = key
        self.retransmit_ms = retransmit_ms
        self.max_queue = max_queue
        # rate_per_s > 0 drops received frames above that rate (the blower's flood
        # guard); notice_ms > 0 makes this end report ignored frames in NOTICEs.
        self.rate_per_s = rate_per_s
        self.notice_ms = notice_ms
        self.decoder = FrameDecoder(key)
        self.link_id = 0
        self.stats = {"bad": 0, "stale": 0, "replayed": 0, "dropped": 0,
                      "duplicates": 0, "retransmits": 0, "delivered": 0}
        self._out = bytearray()
        self._tokens = rate_per_s
        self._tokens_at = 0
        self._unreported = {}  # type: dict[int, int]
        self._noticed_at = 0
        self.reset(0)

    def reset(self, link_id: int) -> None:
        """Start a new link: numbering restarts and queued messages are dropped (the
        HELLO/SYNC exchange above re-establishes what they meant)."""
        self.link_id = link_id
        self._tx_seq = 0
        self._rx_last = 0
        self._queue = []  # type: list[tuple[int, bytes]]
        self._outstanding = None  # type: bytes | None
        self._sent_at = 0
        self.tries = 0

    @property
    def idle(self) -> bool:
        """True when nothing waits to be sent or acknowledged."""
        return self._outstanding is None and not self._queue

    def send(self, kind: int, payload: bytes, now: int) -> None:
        """Queue a numbered message; it is delivered once, in order, or retried."""
        if len(self._queue) >= self.max_queue:
            raise LinkBusy()
        self._queue.append((kind, bytes(payload)))
        self.poll(now)

    def send_unsequenced(self, kind: int, payload: bytes, link_id: int = -1) -> None:
        """Write a frame that is neither numbered nor acknowledged (HELLO, NOTICE)."""
        link = self.link_id if link_id < 0 else link_id
        self._out.extend(encode_frame(Frame(kind, link, 0, payload), self.key))

    def take_output(self) -> bytes:
        """Bytes to write to the line now."""
        data = bytes(self._out)
        self._out = bytearray()
        return data

    def poll(self, now: int) -> None:
        """Send the next queued message, resend an unacknowledged one when due, and
        emit pending notices."""
        if self._outstanding is None and self._queue:
            kind, payload = self._queue.pop(0)
            self._tx_seq = next_seq(self._tx_seq)
            self._outstanding = encode_frame(Frame(kind, self.link_id, self._tx_seq, payload),
                                             self.key)
            self._out.extend(self._outstanding)
            self._sent_at = now
            self.tries = 1
        elif self._outstanding is not None and now - self._sent_at >= self.retransmit_ms:
            self._out.extend(self._outstanding)
            self._sent_at = now
            self.tries += 1
            self.stats["retransmits"] += 1
        if self.notice_ms and self._unreported and now - self._noticed_at >= self.notice_ms:
            for reason in sorted(self._unreported):
                self.send_unsequenced(NOTICE, pack_notice(reason, self._unreported[reason]))
            self._unreported = {}
            self._noticed_at = now

    def note(self, reason: int) -> None:
        """Count an ignored frame for the next NOTICE."""
        self._unreported[reason] = self._unreported.get(reason, 0) + 1

    def _admit(self, now: int) -> bool:
        if not self.rate_per_s:
            return True
        # Token bucket of one second's worth of frames, refilled continuously.
        elapsed = now - self._tokens_at
        if elapsed > 0:
            self._tokens = min(self.rate_per_s, self._tokens + elapsed * self.rate_per_s // 1000)
            self._tokens_at = now
        if self._tokens <= 0:
            return False
        self._tokens -= 1
        return True

    def feed(self, data: bytes, now: int) -> list:
        """Events for the bytes received; see the event constants above."""
        events = []
        for item in self.decoder.feed(data):
            if isinstance(item, FrameError):
                self.stats["bad"] += 1
                self.note(BAD_FRAME)
                events.append((BAD, item))
                continue
            if not self._admit(now):
                self.stats["dropped"] += 1
                self.note(FLOODED)
                events.append((DROPPED, item))
                continue
            event = self._receive(item, now)
            if event is not None:
                events.append(event)
        return events

    def _receive(self, frame: Frame, now: int):
        kind = frame.kind
        # HELLO_REQ and HELLO open a link, so they cannot be held to the current id.
        if kind != HELLO_REQ and kind != HELLO and frame.link != self.link_id:
            self.stats["stale"] += 1
            self.note(STALE_LINK)
            return (STALE, frame)
        if kind == ACK:
            if self._outstanding is not None and frame.seq == self._tx_seq:
                self._outstanding = None
                self.tries = 0
                self.poll(now)
            return None
        if kind in UNSEQUENCED:
            if frame.seq != 0:
                self.stats["replayed"] += 1
                self.note(REPLAYED)
                return (REPLAYED_FRAME, frame)
            self.stats["delivered"] += 1
            return (MESSAGE, frame)
        if frame.seq == self._rx_last and frame.seq != 0:
            # Our ACK was lost and the peer sent the frame again: acknowledge, but it
            # was already acted on once.
            self.stats["duplicates"] += 1
            self._ack(frame.seq)
            return None
        if frame.seq != next_seq(self._rx_last):
            self.stats["replayed"] += 1
            self.note(REPLAYED)
            return (REPLAYED_FRAME, frame)
        self._rx_last = frame.seq
        self._ack(frame.seq)
        self.stats["delivered"] += 1
        return (MESSAGE, frame)

    def _ack(self, seq: int) -> None:
        self._out.extend(encode_frame(Frame(ACK, self.link_id, seq, b""), self.key))

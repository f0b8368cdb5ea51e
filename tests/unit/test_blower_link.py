"""Reliable delivery over the blower link: exactly once, in order, through loss,
duplication and replays."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import BAD, DROPPED, MESSAGE, REPLAYED_FRAME, STALE, Link


def frames_of(data: bytes) -> list[bytes]:
    return [f + b"\x00" for f in data.split(b"\x00") if f]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.floats(0.0, 0.5), st.integers(1, 30))
def test_messages_arrive_once_in_order_through_a_lossy_line(seed: int, loss: float,
                                                            count: int) -> None:
    """Whatever frames the line drops or repeats, each message is delivered once."""
    rng = random.Random(seed)
    a, b = Link(retransmit_ms=10), Link(retransmit_ms=10)
    a.reset(5)
    b.reset(5)
    sent = [bm.pack_draw(1, n) for n in range(1, count + 1)]
    for payload in sent:
        a._queue.append((bf.DRAW, payload))
    got = []
    now = 0
    while len(got) < count and now < 200_000:
        now += 5
        a.poll(now)
        for frame in frames_of(a.take_output()):
            if rng.random() >= loss:
                copies = 2 if rng.random() < 0.1 else 1
                for _ in range(copies):
                    got += [f.payload for e, f in b.feed(frame, now) if e == MESSAGE]
        for frame in frames_of(b.take_output()):
            if rng.random() >= loss:
                a.feed(frame, now)
    assert got == sent


def test_a_replayed_old_frame_is_ignored_and_counted() -> None:
    a, b = Link(), Link(notice_ms=1)
    a.reset(9)
    b.reset(9)
    a.send(bf.DRAW, bm.pack_draw(1, 1), 0)
    first = a.take_output()
    assert [e for e, _ in b.feed(first, 0)] == [MESSAGE]
    a.feed(b.take_output(), 0)
    a.send(bf.DRAW, bm.pack_draw(1, 2), 1)
    assert [e for e, _ in b.feed(a.take_output(), 1)] == [MESSAGE]
    b.take_output()
    a.send(bf.DRAW, bm.pack_draw(1, 3), 2)  # unacked
    assert [e for e, _ in b.feed(first, 2)] == [REPLAYED_FRAME]
    assert b.stats["replayed"] == 1
    b.poll(10)
    notices = bf.FrameDecoder().feed(b.take_output())
    assert [(f.kind, bm.unpack_notice(f.payload)) for f in notices] == [
        (bf.NOTICE, (bm.REPLAYED, 1))]


def test_frames_of_an_earlier_link_are_stale() -> None:
    a, b = Link(), Link()
    a.reset(1)
    b.reset(2)
    a.send(bf.DRAW, bm.pack_draw(1, 1), 0)
    assert [e for e, _ in b.feed(a.take_output(), 0)] == [STALE]
    assert b.take_output() == b""  # no ACK for a stale frame


def test_a_retransmitted_frame_is_acknowledged_but_delivered_once() -> None:
    a, b = Link(retransmit_ms=10), Link()
    a.reset(3)
    b.reset(3)
    a.send(bf.BALL, bm.pack_ball(1, 1, 5), 0)
    frame = a.take_output()
    assert [e for e, _ in b.feed(frame, 0)] == [MESSAGE]
    b.take_output()  # the ACK is lost
    a.poll(10)
    again = a.take_output()
    assert again == frame
    assert b.feed(again, 10) == []
    a.feed(b.take_output(), 11)
    assert a.idle and b.stats["duplicates"] == 1 and a.stats["retransmits"] == 1


def test_the_rate_limit_drops_a_flood() -> None:
    a, b = Link(), Link(rate_per_s=50)
    a.reset(4)
    b.reset(4)
    frame = bf.encode_frame(bf.Frame(bf.NOTICE, 4, 0, bm.pack_notice(1, 1)))
    events = b.feed(frame * 200, 1000)
    assert sum(1 for e, _ in events if e == DROPPED) == 150
    assert sum(1 for e, _ in events if e == MESSAGE) == 50


def test_bad_frames_are_reported_as_events() -> None:
    b = Link()
    assert [e for e, _ in b.feed(b"\x02\x01\x00", 0)] == [BAD]

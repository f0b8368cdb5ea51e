"""Checks run by the MicroPython unix port itself (see test_firmware_build.py): the
golden frames, the pure logic on a simulated game, and the board layer on fake pins.
Prints one line per check and "ALL OK" at the end."""

import json
import os
import sys

from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import MESSAGE, Link


def check_golden(path):
    with open(path) as f:
        cases = json.load(f)
    for case in cases:
        key = case["key"].encode()
        frame = bf.Frame(case["kind"], case["link"], case["seq"],
                         bytes.fromhex(case["payload"]))
        wire = bytes.fromhex(case["wire"])
        assert bf.encode_frame(frame, key) == wire, case["what"]
        decoder = bf.FrameDecoder(key)
        got = []
        for i in range(len(wire)):  # one byte at a time: the worst chunk split
            got += decoder.feed(wire[i:i + 1])
        assert got == [frame], case["what"]
    print("golden frames", len(cases))


def check_game():
    from ball_blower_fw.chamber import SimulatedChamber
    from ball_blower_fw.host import FAST_TIMINGS, random_u32
    from ball_blower_fw.logic import Blower
    chamber = SimulatedChamber(os.urandom)
    blower = Blower(chamber, (1, 0, 0), bytes(32), random_u32, b"k", FAST_TIMINGS)
    host = Link(b"k")
    now = 0
    blower.boot(now)
    host.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(5), 0)
    inbox = []

    def step():
        blower.receive(host.take_output(), now)
        blower.tick(now)
        for event, frame in host.feed(blower.output(), now):
            if event == MESSAGE:
                inbox.append(frame)
        host.poll(now)

    def wait(kind):
        nonlocal now
        for _ in range(5000):
            for frame in inbox:
                if frame.kind == kind:
                    inbox.remove(frame)
                    return frame
            now += 2
            step()
        raise AssertionError("no frame %d" % kind)

    hello = wait(bf.HELLO)
    while bm.unpack_hello(hello.payload)[3] != 5:
        hello = wait(bf.HELLO)
    host.reset(hello.link)
    host.send(bf.NEW_GAME, bm.pack_new_game(1), now)
    wait(bf.STATUS)
    balls = []
    for n in range(1, 91):
        host.send(bf.DRAW, bm.pack_draw(1, n), now)
        ball = bm.unpack_ball(wait(bf.BALL).payload)[2]
        host.send(bf.CONFIRM, bm.pack_confirm(1, n, ball), now)
        balls.append(ball)
    assert sorted(balls) == list(range(1, 91))
    host.send(bf.DRAW, bm.pack_draw(1, 1) + b"\x07", now)
    assert bm.unpack_refused(wait(bf.REFUSED).payload)[1] == bm.BALL_CHOICE
    print("keyed game drawn", len(balls))


def check_board():
    import machine
    from ball_blower_fw.board import Board
    board = Board()
    board.pump(True)
    assert board.pump_pin.value() == 1
    board.reader.answers = [b"42\n", b"??\n", b"OK\n"]
    assert board.read_ball() == 42
    assert board.read_ball() == 0
    assert board.reader_ok()
    board.release()
    assert board.gate.value() == 0 and machine.Timer.fired[-1] == 80
    assert not board.ball_in_tube()
    board.start_watchdog()
    board.feed_watchdog()
    print("board layer on fake pins")


check_golden(sys.argv[1])
check_game()
check_board()
print("ALL OK")

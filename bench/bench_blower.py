"""Blower link benchmarks; prints its figures.

    .venv/bin/python bench/bench_blower.py [--games 2]

1. Codec: frames encoded and decoded per second under CPython and under the MicroPython
   unix port (the same file, protocol/blower_frames.py).
2. Link: the real firmware on the unix port, the real driver, a relay paced at 115,200
   baud between two ptys: frames per second on the line while drawing, and ball latency
   from draw() to the ball in hand (the moment the hall server can commit it).
3. Firmware RAM in use per state (gc.mem_alloc after gc.collect, unix port).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hall_server.blower.simulator import micropython_binary, spawn_firmware  # noqa: E402

CODEC_SCRIPT = """
import time
from protocol import blower_frames as bf
frame = bf.Frame(bf.BALL, 0x0A0B0C0D, 7, bytes([0, 0, 0, 7, 12, 42]))
wire = bf.encode_frame(frame)
decoder = bf.FrameDecoder()
n = 2000
start = time.time_ns()
for _ in range(n):
    bf.encode_frame(frame)
    decoder.feed(wire)
elapsed = (time.time_ns() - start) / 1e9
print(int(n / elapsed))
"""

RAM_SCRIPT = """
import gc, os
from ball_blower_fw.chamber import SimulatedChamber
from ball_blower_fw.host import FAST_TIMINGS, random_u32
from ball_blower_fw.logic import Blower
from protocol import blower_frames as bf, blower_messages as bm
from protocol.blower_link import MESSAGE, Link
gc.collect()
base = gc.mem_alloc()
chamber = SimulatedChamber(os.urandom)
blower = Blower(chamber, (1, 0, 0), bytes(32), random_u32, b"", FAST_TIMINGS)
host = Link()
now = 0
blower.boot(now)
host.send_unsequenced(bf.HELLO_REQ, bm.pack_hello_req(9), 0)
seen = {}
def step():
    global now
    now += 1
    blower.receive(host.take_output(), now)
    blower.tick(now)
    for e, f in host.feed(blower.output(), now):
        if e == MESSAGE and f.kind == bf.HELLO and bm.unpack_hello(f.payload)[3] == 9:
            host.reset(f.link)
        elif e == MESSAGE and f.kind == bf.BALL:
            g, d, b = bm.unpack_ball(f.payload)
            host.send(bf.CONFIRM, bm.pack_confirm(g, d, b), now)
    host.poll(now)
    gc.collect()
    used = gc.mem_alloc() - base
    name = bm.STATE_NAMES[blower.state] + (" (count)" if blower.mode else "")
    seen[name] = max(seen.get(name, 0), used)
for _ in range(20): step()
host.send(bf.NEW_GAME, bm.pack_new_game(1), now)
for n in range(1, 31):
    host.send(bf.DRAW, bm.pack_draw(1, n), now)
    for _ in range(40): step()
host.send(bf.SELF_TEST, b"", now)
for _ in range(60): step()
host.send(bf.COUNT_SET, b"", now)
for _ in range(3000): step()
for name in sorted(seen):
    print("%s\\t%d" % (name, seen[name]))
"""


def micropython(script: str) -> str:
    env = dict(os.environ, MICROPYPATH=f"{ROOT}:.frozen")
    return subprocess.run([micropython_binary(), "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True).stdout


def codec_rates() -> tuple[int, int]:
    cpython = subprocess.run([sys.executable, "-c", CODEC_SCRIPT], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    return int(cpython), int(micropython(CODEC_SCRIPT))


def link_figures(games: int) -> dict[str, float]:
    from hall_server.blower import approved_from_tree, blower_service
    from hall_server.blower.driver import BlowerDriver

    tmp = Path(tempfile.mkdtemp())
    report = tmp / "relay.json"
    relay = subprocess.Popen([sys.executable, "-m", "hall_server.blower", "relay",
                              "--baud", "115200", "--report", str(report)],
                             stdout=subprocess.PIPE, cwd=ROOT)
    assert relay.stdout is not None
    blower_side, driver_side = relay.stdout.readline().decode().split()
    firmware = spawn_firmware(blower_side)
    figures: dict[str, float] = {}

    async def run(reactor) -> None:
        driver = BlowerDriver(reactor, approved_from_tree(ROOT))
        service = blower_service(reactor, driver, driver_side)
        service.startService()
        await driver.when_ready()
        latencies = []
        sent = [0]
        take_output = driver.link.take_output

        def counting_take_output() -> bytes:
            data = take_output()
            sent[0] += data.count(0)  # one delimiter per frame
            return data
        driver.link.take_output = counting_take_output  # type: ignore[method-assign]
        frames_before = driver.link.stats["delivered"] + driver.link.stats["bad"]
        start = time.perf_counter()
        for game in range(1, games + 1):
            await driver.start_game(game)
            for _ in range(90):
                t0 = time.perf_counter()
                await driver.draw()
                latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start
        # Frames the driver wrote plus frames it received (ACKs are consumed inside the
        # link, so they are counted from our own ACKs' peers: one per frame we sent).
        received = driver.link.stats["delivered"] + driver.link.stats["bad"] - frames_before
        figures["balls"] = len(latencies)
        figures["frames_per_s"] = (sent[0] + received + sent[0]) / elapsed
        figures["latency_median_ms"] = statistics.median(latencies) * 1000
        figures["latency_p95_ms"] = sorted(latencies)[int(len(latencies) * 0.95)] * 1000
        figures["latency_max_ms"] = max(latencies) * 1000
        await service.stopService()

    def main(reactor):
        from twisted.internet.defer import Deferred
        return Deferred.fromCoroutine(run(reactor))

    try:
        _react(main)
    finally:
        firmware.kill()
        relay.terminate()
        relay.wait()
    return figures


def _react(main) -> None:
    """Run ``main(reactor)`` to its end without ``task.react``'s ``sys.exit``."""
    from twisted.internet import reactor
    from twisted.internet.defer import maybeDeferred

    done: list[object] = []

    def stop(result: object) -> object:
        done.append(result)
        reactor.stop()  # type: ignore[attr-defined]
        return None

    reactor.callWhenRunning(lambda: maybeDeferred(main, reactor).addBoth(stop))
    reactor.run()  # type: ignore[attr-defined]
    if done and hasattr(done[0], "raiseException"):
        done[0].raiseException()  # type: ignore[union-attr]


def ram_per_state() -> list[tuple[str, int]]:
    rows = []
    for line in micropython(RAM_SCRIPT).splitlines():
        name, used = line.split("\t")
        rows.append((name, int(used)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=2)
    args = parser.parse_args()
    cpython, mpy = codec_rates()
    print("codec, frame encode+decode per second: CPython %d, MicroPython unix port %d"
          % (cpython, mpy))
    figures = link_figures(args.games)
    print("link at 115200 baud (paced relay between two ptys), %d balls:" % figures["balls"])
    print("  frames on the line per second while drawing: %.0f" % figures["frames_per_s"])
    print("  ball latency draw() -> ball: median %.1f ms, p95 %.1f ms, max %.1f ms" % (
        figures["latency_median_ms"], figures["latency_p95_ms"], figures["latency_max_ms"]))
    print("firmware RAM in use per state (bytes above an empty heap, unix port):")
    for name, used in ram_per_state():
        print("  %-24s %7d" % (name, used))
    print(json.dumps({"codec_cpython": cpython, "codec_micropython": mpy, **figures}))


if __name__ == "__main__":
    main()

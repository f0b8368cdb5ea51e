"""The thin asyncio shell of the blower firmware: owns the serial line, the ticks and
the watchdog, and forwards everything else to ``logic.Blower``.

On the board, ``/main.py`` calls ``run_board()``.  On the unix port::

    micropython -m ball_blower_fw.main [--fast] [--faults no_ball:3,jam:5]
                [--state chamber.json] [--key-file blower.key]

runs the firmware with a simulated chamber on stdin/stdout (join them to a pty).
"""

import asyncio
import sys
import time

import micropython

from ball_blower_fw.logic import Blower
from ball_blower_fw.version import FIRMWARE_VERSION, image_hash

TICK_MS = 2
KEY_PATH = "/blower.key"


class MonotonicMs:
    """Milliseconds since start that never wrap (``ticks_ms`` wraps on the board)."""

    def __init__(self) -> None:
        self.last = time.ticks_ms()
        self.total = 0

    def now(self) -> int:
        ticks = time.ticks_ms()
        self.total += time.ticks_diff(ticks, self.last)
        self.last = ticks
        return self.total


def read_key(path: str) -> bytes:
    """The link key from a file of hex digits; empty when the link is not keyed."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return b""
    return bytes(int(text[i:i + 2], 16) for i in range(0, len(text), 2))


async def _receive(blower: Blower, port, clock: MonotonicMs) -> None:
    while True:
        data = await port.receive()
        blower.receive(data, clock.now())
        out = blower.output()
        if out:
            port.write(out)


async def serve(blower: Blower, port, feed_watchdog) -> None:
    """Run until the line closes: receive in one task, tick in this one."""
    clock = MonotonicMs()
    blower.boot(clock.now())
    port.write(blower.output())
    receiver = asyncio.create_task(_receive(blower, port, clock))
    while True:
        blower.tick(clock.now())
        out = blower.output()
        if out:
            port.write(out)
        feed_watchdog()
        if receiver.done():
            return
        await asyncio.sleep_ms(TICK_MS)


class UartPort:
    """The board's UART0 as an asyncio stream."""

    def __init__(self, uart) -> None:
        self.uart = uart
        self.stream = asyncio.StreamReader(uart)

    async def receive(self) -> bytes:
        return await self.stream.read(128)

    def write(self, data: bytes) -> None:
        self.uart.write(data)


class StdioStreamPort:
    """stdin/stdout as an asyncio stream (the unix port's serial line)."""

    def __init__(self) -> None:
        from ball_blower_fw.host import StdioPort
        self.port = StdioPort()
        self.stream = asyncio.StreamReader(self.port.stdin)

    async def receive(self) -> bytes:
        # read(1) wakes on the first byte (a larger read would block for all of them);
        # the rest that has arrived is taken without waiting.
        first = await self.stream.read(1)
        if not first:
            raise OSError("the serial line closed")
        return first + self.port.read(127)

    def write(self, data: bytes) -> None:
        self.port.write(data)


def run_board() -> None:
    """Entry point on the RP2040."""
    # A stray 0x03 on the USB/serial line must not stop the firmware with
    # KeyboardInterrupt.
    micropython.kbd_intr(-1)
    from ball_blower_fw.board import Board
    board = Board()
    blower = Blower(board, FIRMWARE_VERSION, image_hash("/lib"), _board_random,
                    read_key(KEY_PATH))
    board.start_watchdog()
    asyncio.run(serve(blower, UartPort(board.link), board.feed_watchdog))


def _board_random() -> int:
    import os
    raw = os.urandom(4)
    return raw[0] << 24 | raw[1] << 16 | raw[2] << 8 | raw[3]


def _option(argv: list, name: str, default: str) -> str:
    if name in argv:
        return argv[argv.index(name) + 1]
    return default


def run_host(argv: list) -> None:
    """Entry point on the unix port: simulated chamber, stdin/stdout line."""
    micropython.kbd_intr(-1)
    from ball_blower_fw import host
    root = _option(argv, "--root", ".")
    chamber = host.make_chamber(_option(argv, "--faults", ""), _option(argv, "--state", ""))
    key_file = _option(argv, "--key-file", "")
    blower = Blower(chamber, FIRMWARE_VERSION, image_hash(root), host.random_u32,
                    read_key(key_file) if key_file else b"",
                    host.FAST_TIMINGS if "--fast" in argv else None)
    try:
        asyncio.run(serve(blower, StdioStreamPort(), _no_watchdog))
    except OSError:
        pass  # the line closed: the process ends as a board would lose power


def _no_watchdog() -> None:
    """The unix port has no watchdog; the test harness restarts a hung process."""


if __name__ == "__main__":
    run_host(sys.argv)

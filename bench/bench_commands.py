"""Durable commands per second from 50 concurrent consoles: the group commit, measured.

Run: ``.venv/bin/python bench/bench_commands.py`` (``--consoles 50``, ``--commands 200``, ``--no-floor``).

This process is the hall server: the real composition root (``build_hall``: every module,
the core on its single writer thread, SQLite in WAL with full fsync, every record signed
and the signed head written after each commit) on the real reactor.  Each console is a
staff member on the real command channel (``CommandChannel.submit``: argument checks,
request ids, answers) without the WebSocket, so what is measured is the command loop
and the disk.  Each console sends ``record_complaint`` (one durable record) and sends the
next only when the answer to the last came back, after its commit.

Printed, from the same run on the same disk:

* one console, one command at a time (each command its own transaction);
* ``--consoles`` consoles at once: commands per second, transactions, commands per
  transaction (the commands that came during a commit share the next one);
* the raw fsync rate of the disk (write one block, ``os.fsync``, again) and a raw
  ``Journal.append`` of one record per transaction: the most one-commit-per-command
  could reach;
* the floor (``bench/floor.py``), before the hall starts: the same consoles sending the
  same requests, each command one row in a group commit on SQLite with the journal's
  fsyncs, no rules, no signatures; and the ``ratio to floor``.

Figures vary with the disk and the CPU; the README keeps one run's output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Generator

from twisted.internet import defer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def fsync_rate(folder: Path, count: int = 500) -> float:
    """Writes of one 4 KiB block, each followed by ``os.fsync``, per second."""
    path = folder / "fsync.probe"
    block = b"\0" * 4096
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        start = time.perf_counter()
        for _ in range(count):
            os.pwrite(descriptor, block, 0)
            os.fsync(descriptor)
        return count / (time.perf_counter() - start)
    finally:
        os.close(descriptor)
        path.unlink()


def raw_append_rate(folder: Path, count: int = 300) -> float:
    """One-record ``Journal.append`` transactions per second on a fresh database."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from hall_server.store.database import open_database
    from server_kit.journal.sql import Journal

    engine = open_database(f"sqlite:///{folder / 'raw.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "raw.head")
    actor = {"name": "rosa", "role": "room_chief"}
    start = time.perf_counter()
    for n in range(count):
        journal.append(int(time.time() * 1000), [("complaint_recorded", {"number": n + 1, "complainant": "A. Player",
                                                                          "text": "too noisy", "actor": actor})])
    rate = count / (time.perf_counter() - start)
    engine.dispose()
    return rate


#: A console's way to the channel: ``submit(actor, request, seen)`` fires with the answer.
Submit = Callable[[Any, Any, Any], "defer.Deferred[dict[str, Any]]"]


def console(submit: Submit, name: str, count: int) -> defer.Deferred[None]:
    """One console: ``count`` complaints, each sent once the last was answered."""
    from hall_server.hall.roles import Role
    from server_kit.core import Actor
    from server_kit.web.channel import SeenRequests, parse_request

    actor, seen = Actor(name, Role.ROOM_CHIEF), SeenRequests()
    done: defer.Deferred[None] = defer.Deferred()

    def send(n: int) -> None:
        if n == count:
            done.callback(None)
            return
        request = parse_request(json.dumps({"id": f"{name}-{n}", "command": "record_complaint",
                                            "args": {"complainant": "A. Player", "text": f"complaint {n}"}}))

        def answered(answer: dict[str, Any]) -> None:
            if not answer["ok"]:
                done.errback(RuntimeError(f"refused: {answer['error']}"))
                return
            send(n + 1)

        submit(actor, request, seen).addCallback(answered)

    send(0)
    return done


@defer.inlineCallbacks
def rates(submit: Submit, commits: Callable[[], int], consoles: int,
          commands: int) -> Generator[defer.Deferred[Any], Any, dict[str, tuple[float, int]]]:
    """One console alone, then ``consoles`` at once: commands per second and transactions of each."""
    before, start = commits(), time.perf_counter()
    yield console(submit, "solo", commands)
    solo = (commands / (time.perf_counter() - start), commits() - before)
    before, start = commits(), time.perf_counter()
    yield defer.gatherResults([console(submit, f"chief{k}", commands) for k in range(consoles)])
    return {"solo": solo, "many": (consoles * commands / (time.perf_counter() - start), commits() - before)}


@defer.inlineCallbacks
def floor_rates(reactor: Any, folder: Path, consoles: int,
                commands: int) -> Generator[defer.Deferred[Any], Any, dict[str, tuple[float, int]]]:
    """:func:`rates` against the floor's channel."""
    from floor import ConsoleFloor, GroupCommit

    rows = GroupCommit(folder / "floor", reactor)
    rows.start()
    channel = ConsoleFloor(rows)
    try:
        return (yield rates(lambda actor, request, seen: channel.submit(actor.name, request), lambda: rows.commits,
                            consoles, commands))
    finally:
        rows.stop()


def serve_and_measure(folder: Path, consoles: int, commands: int, with_floor: bool, report: Any) -> None:
    """Run the floor and the hall on the reactor, measure, and hand the figures to ``report`` (``task.react`` exits)."""
    from twisted.internet import reactor, task

    from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password, load_config
    from hall_server.tap import build_hall
    from server_kit import collector

    home = folder / "hall"
    home.mkdir()
    staff = [(name, role, hash_password("bench-password")) for name, role in DEFAULT_STAFF]
    (home / "hall.toml").write_text(default_config_text("Bench hall", staff, port=0))
    hall = build_hall(load_config(home / "hall.toml"), reactor)

    @defer.inlineCallbacks
    def run(_: Any):  # type: ignore[no-untyped-def]
        collector.settle()  # as the composition root (makeService) does once the hall is built
        floor = (yield floor_rates(reactor, folder, consoles, commands)) if with_floor else None
        os.sync()  # the floor's writes reach the disk before the hall runs: neither pays the other's writeback
        hall.service.startService()
        try:
            figures = yield rates(hall.channel.submit, lambda: hall.core.commits, consoles, commands)
        finally:
            yield hall.service.stopService()
        report(figures, floor)

    task.react(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--consoles", type=int, default=50, help="consoles sending at once (default 50)")
    parser.add_argument("--commands", type=int, default=200, help="commands each console sends (default 200)")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor's run (bench/floor.py)")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-commands-"))
    fsyncs = statistics.median(fsync_rate(folder) for _ in range(3))
    appends = raw_append_rate(folder)

    def report(figures: dict[str, Any], floor: dict[str, Any] | None) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        solo_rate, solo_commits = figures["solo"]
        rate, commits = figures["many"]
        total = options.consoles * options.commands
        print("Durable commands through the real hall's command channel (record_complaint: one record each; "
              "SQLite WAL, synchronous=FULL, signed head after each commit)")
        print(f"  1 console, one at a time:   {solo_rate:8.0f} commands/s  ({options.commands} commands, "
              f"{solo_commits} transactions)")
        print(f"  {options.consoles} consoles at once:       {rate:8.0f} commands/s  ({total} commands, {commits} "
              f"transactions, {total / max(commits, 1):.1f} commands a transaction)")
        print(f"  same disk, same run: raw fsync {fsyncs:8.0f}/s; raw Journal.append of one record {appends:8.0f}/s")
        print(f"  {options.consoles} consoles / raw fsync rate: {rate / fsyncs:.2f}")
        if floor is not None:
            (floor_solo, _), (floor_rate, floor_commits) = floor["solo"], floor["many"]
            print(f"  floor (bench/floor.py), the same consoles and requests: 1 console {floor_solo:8.0f} commands/s; "
                  f"{options.consoles} consoles {floor_rate:8.0f} commands/s ({floor_commits} transactions, "
                  f"{total / max(floor_commits, 1):.1f} commands a transaction)")
            print(f"  ratio to floor: {options.consoles} consoles {rate / floor_rate:.2f}x the floor's commands/s "
                  f"(1 console {solo_rate / floor_solo:.2f}x)")

    serve_and_measure(folder, options.consoles, options.commands, not options.no_floor, report)


if __name__ == "__main__":
    main()

"""Video bingo figures: ``bingo vb rtp`` on a 3 x 5 and a 4 x 5 card, and plays per second.

Run: ``.venv/bin/python bench/bench_vb.py``

Prints, for the documented 3 x 5 (15 pattern cells, 2^15 subsets) and 4 x 5 (20 cells,
2^20 subsets) example paytables: the wall time of the whole ``bingo vb rtp FILE``
command (a fresh process: interpreter start, imports, parse, computation, output; the
start alone is shown by ``bingo --help``), and
the in-process time of the exact computation by each method (median of 5).  Then a
9 x 9 card (81 pattern cells) by the cell-by-cell programme.  Then the pure play's
rate on one core: ``VideoBingoGame.play`` with 1 and 4 cards (``secrets.SystemRandom``,
the production source), and the batch evaluation the simulation uses (cards settled a
second).  Goals: the 3 x 5 return well under a second, the 4 x 5 in seconds.

Then plays through the hall's own machine module (``hall_server/hall/videobingo.py``) on
a real SQLite journal in WAL mode, each play durable (one signed ``vb_play`` record and
its postings, committed before it is answered): one station playing alone (a commit a
play), and 100 machines playing at once, where the command loop's group commit puts the
plays that arrive during a commit in the next one; with the p99 from the request to its
committed answer.
"""

from __future__ import annotations

import json
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol.videobingo.paytable import load_paytable  # noqa: E402
from protocol.videobingo.play import VideoBingoGame  # noqa: E402
from protocol.videobingo.rtp import exact_return  # noqa: E402

EXAMPLES = ROOT / "protocol" / "videobingo" / "paytables"
BINGO = Path(sys.executable).parent / "bingo"


def median_seconds(action, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def command_seconds(*args: str) -> float:
    def run() -> None:
        subprocess.run([BINGO, *args], check=False, capture_output=True)

    return median_seconds(run, repeat=3)


def nine_by_nine():
    cells = [[r, c] for r in range(9) for c in range(9)]
    patterns = [{"name": "full", "cells": cells, "pays": 1000}]
    patterns += [{"name": f"row {r}", "cells": [[r, c] for c in range(9)], "pays": 5} for r in range(9)]
    patterns += [{"name": f"column {c}", "cells": [[r, c] for r in range(9)], "pays": 5} for c in range(9)]
    patterns += [{"name": "diagonal", "cells": [[i, i] for i in range(9)], "pays": 7}]
    return load_paytable(json.dumps({
        "format": "bingo-vb-paytable/1", "name": "nine", "pool": 99, "balls": 60, "rows": 9,
        "columns": 9, "cards_max": 4, "min_rtp_bp": 8000, "patterns": patterns,
    }))


def main() -> None:
    print("bingo vb rtp")
    print(f"  {'(bingo --help)':20s} command {command_seconds('--help'):6.3f} s   (the CLI's own start)")
    for name, label in (("vb-classic-3x5", "3x5 (2^15 subsets)"), ("vb-grand-4x5", "4x5 (2^20 subsets)")):
        path = EXAMPLES / f"{name}.json"
        table = load_paytable(path.read_bytes())
        subsets = median_seconds(lambda: exact_return(table, "subsets"))
        cells = median_seconds(lambda: exact_return(table, "cells"))
        print(
            f"  {label:20s} command {command_seconds('vb', 'rtp', str(path)):6.3f} s   "
            f"computation: subsets {subsets * 1000:8.2f} ms, cell by cell {cells * 1000:8.2f} ms"
        )
    big = nine_by_nine()
    print(f"  {'9x9 (81 cells)':20s} computation: cell by cell {median_seconds(lambda: exact_return(big)) * 1000:8.2f} ms")

    print("pure play (one core)")
    game = VideoBingoGame(load_paytable((EXAMPLES / "vb-classic-3x5.json").read_bytes()))
    rng = secrets.SystemRandom()
    for count in (1, 4):
        cards = game.deal(count, rng)
        plays = 20_000
        seconds = median_seconds(lambda: [game.play(cards, rng) for _ in range(plays)], repeat=3)
        print(f"  play with {count} card{'s' if count > 1 else ' '}   {plays / seconds:10,.0f} plays/s")
    cards = np.array([game.deal(1, rng) for _ in range(100_000)])
    balls = np.array([game.draw(rng) for _ in range(100_000)])
    seconds = median_seconds(lambda: game.paid_patterns(game.hits(cards, balls).reshape(100_000, -1)))
    print(f"  batch evaluation  {100_000 / seconds:10,.0f} cards/s")


def hall_module(folder: Path, machines: int) -> Any:
    """A hall core with ``machines`` one-station machines on a real journal; commits when drained."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from twisted.internet import defer
    from twisted.internet.task import Clock

    from hall_server.hall.admission import AdmissionModule
    from hall_server.hall.cashier import CashierModule
    from hall_server.hall.ledger import LedgerModule
    from hall_server.hall.roles import Role
    from hall_server.hall.videobingo import MachineConfig, VideoBingoConfig, VideoBingoModule, load_machines
    from hall_server.store.database import open_database
    from server_kit.core import Actor, CommandCore
    from server_kit.journal.sql import Journal

    queued: list[Any] = []

    def run_later(function: Any, *args: Any) -> Any:
        done: Any = defer.Deferred()
        queued.append((function, args, done))
        return done

    def drain() -> None:
        while queued:
            function, args, done = queued.pop(0)
            done.callback(function(*args))

    engine = open_database(f"sqlite:///{folder / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head")
    clock = Clock()
    clock.advance(1_780_000_000)
    journal.initialise(int(clock.seconds() * 1000), {"hall": "bench"})
    core = CommandCore(journal, clock, run_later)
    ledger = LedgerModule(core)
    cashier = CashierModule(core, ledger, AdmissionModule(core, []), ["desk1"])
    paytable = load_paytable((EXAMPLES / "vb-classic-3x5.json").read_bytes())
    config = VideoBingoConfig(seats=5 * machines, room_zone="bingo room", machines=tuple(
        MachineConfig(f"m{n}", "classic", EXAMPLES / "vb-classic-3x5.json", 20, 1, "machines") for n in range(machines)))
    vb = VideoBingoModule(core, ledger, cashier, config, load_machines(config, {f"m{n}": paytable for n in range(machines)}))
    core.recover()
    chief, teller = Actor("rosa", Role.ROOM_CHIEF), Actor("eva", Role.CASHIER)
    cashier.open_desk(teller, "desk1", 0)
    drain()
    for n in range(machines):
        vb.enrol_station(chief, f"m{n}", 1)
        vb.desk_credit_in(teller, f"m{n}", 1, 1_000_000, "desk1")  # the player's cash taken at the desk
        drain()
    return vb, drain


def machine_plays() -> None:
    import tempfile

    print("plays through the hall's machine module, each durable (SQLite WAL, signed journal)")
    for machines, rounds in ((1, 300), (100, 10)):
        with tempfile.TemporaryDirectory() as folder:
            vb, drain = hall_module(Path(folder), machines)
            latencies: list[float] = []
            start = time.perf_counter()
            for r in range(rounds):
                asked = {}
                for n in range(machines):
                    asked[n] = time.perf_counter()
                    vb.play(f"m{n}", 1, 4, False, f"p{r}").addCallback(
                        lambda _, n=n: latencies.append(time.perf_counter() - asked[n]))
                drain()
            seconds = time.perf_counter() - start
            latencies.sort()
            p99 = latencies[int(len(latencies) * 0.99) - 1]
            print(f"  {machines:3d} machine(s) playing, 4 cards a play: {machines * rounds / seconds:8,.0f} plays/s, "
                  f"p99 request to committed answer {p99 * 1000:7.1f} ms, {vb.core.commits} commits")


if __name__ == "__main__":
    main()
    machine_plays()

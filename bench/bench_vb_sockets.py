"""100 video bingo machines playing at once on one hall server, over WebSockets on loopback.

    .venv/bin/python bench/bench_vb_sockets.py [--machines 100] [--workers 2] [--seconds 20] [--no-floor]

This process is the hall server: the real command core on a SQLite journal (WAL, one
writer thread, every record signed, every play durable before it is answered), the
cashier, ledger and machine modules (``hall_server/hall/videobingo.py``) and the
machines' gateway (``hall_server/terminal_gateway/machines.py``) serving
``ws://127.0.0.1:<port>/ws``, as ``/vb/ws`` does.  The machines are
:class:`terminals.vb_machine.MachineClient` stations in ``--workers`` child processes
(this file with ``--worker``), so the server's reactor does only the server's work.

Each station presses "play" (4 cards) again as soon as the previous play's result has
come: every station always has one play in flight, as a player holding the button would.
Measured over ``--seconds`` after a two-second warm-up:

* **plays per second** the hall server commits and answers;
* **press to result** - from the moment a station sends ``play`` to the moment it has
  parsed the committed result, which is what its screen then shows: p50, p99 and max.
  The screen's ball animation after that is the game's own pacing, not a delay.

The same figures for one machine alone give the baseline of a commit a play.  Before the
hall, in the same reactor run, the same stations in the same workers play as long against
the floor (``bench/floor.py``: the same WebSocket, each play one row in a group commit on
SQLite, no game, no ledger, no signatures), and plays/s and the p99 are given as a
``ratio to floor``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Generator

from twisted.internet import defer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

EXAMPLES = Path(__file__).resolve().parent.parent / "protocol" / "videobingo" / "paytables"
CARDS = 4
WARM_UP = 2.0


# --- A worker: many stations in one process -------------------------------------------------


def worker(url: str, stations: list[dict[str, Any]], seconds: float) -> None:
    """Connect and greet every station, then play without pause; print the timed plays as one JSON line."""
    from twisted.internet import reactor

    from terminals.vb_machine import MachineClient, connect

    timed: list[tuple[float, float]] = []
    refused: list[str] = []

    @defer.inlineCallbacks
    def run():  # type: ignore[no-untyped-def]
        clients = []
        for station in stations:
            client = MachineClient(station["machine"], 1, station["token"])
            yield connect(reactor, url, client)
            clients.append(client)
        start = time.time() + 0.5
        end = start + WARM_UP + seconds

        def keep_playing(client: MachineClient) -> defer.Deferred[None]:
            done: defer.Deferred[None] = defer.Deferred()

            def press(_: Any = None) -> None:
                pressed = time.time()
                if pressed >= end:
                    done.callback(None)
                    return

                def shown(_: Any) -> None:
                    timed.append((pressed, time.time()))
                    press()

                def failed(failure: Any) -> None:
                    refused.append(str(failure.value))
                    press()

                client.play(CARDS).addCallbacks(shown, failed)

            reactor.callLater(max(start - time.time(), 0), press)  # type: ignore[attr-defined]
            return done

        yield defer.gatherResults([keep_playing(client) for client in clients])
        counted = [(p, s) for p, s in timed if p >= start + WARM_UP]
        sys.stdout.write(json.dumps({"timed": counted, "refused": refused[:5], "refusals": len(refused),
                                     "window": [start + WARM_UP, end]}) + "\n")
        sys.stdout.flush()

    def finished(_: Any) -> None:
        reactor.stop()  # type: ignore[attr-defined]

    reactor.callWhenRunning(lambda: run().addBoth(finished))  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]


# --- The server and the run ---------------------------------------------------------------------


def drive(folder: Path, name: str, url: str, stations: list[dict[str, Any]], worker_count: int,
          seconds: float) -> defer.Deferred[dict[str, Any]]:
    """``stations`` shared among ``worker_count`` worker processes playing on ``url``; the timed plays' figures."""
    import subprocess

    from twisted.internet import threads

    share = (len(stations) + worker_count - 1) // worker_count
    specs = []
    for w in range(worker_count):
        part = stations[w * share:(w + 1) * share]
        if part:
            spec = folder / f"{name}-worker-{w}.json"
            spec.write_text(json.dumps({"url": url, "stations": part, "seconds": seconds}))
            specs.append(spec)

    def one(spec: Path) -> dict[str, Any]:
        done = subprocess.run([sys.executable, __file__, "--worker", str(spec)], capture_output=True, text=True,
                              env=os.environ.copy(), check=False)
        if done.returncode != 0 or not done.stdout.strip():
            raise RuntimeError(f"a worker failed: {done.stderr[-2000:]}")
        answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return answer

    def figures(results: list[dict[str, Any]]) -> dict[str, Any]:
        timed = sorted((s - p) * 1000 for r in results for p, s in r["timed"])
        window = max(r["window"][1] for r in results) - min(r["window"][0] for r in results)
        refusals = sum(r["refusals"] for r in results)
        if refusals:
            print(f"  {refusals} plays refused, e.g. {results[0]['refused'] or results[-1]['refused']}")
        return dict(plays_per_s=len(timed) / window, p50=statistics.median(timed),
                    p99=timed[max(int(len(timed) * 0.99) - 1, 0)], max=timed[-1], refusals=refusals)

    return defer.gatherResults([threads.deferToThread(one, spec) for spec in specs]).addCallback(figures)


@defer.inlineCallbacks
def floor_plays(reactor: Any, folder: Path, machines: int, worker_count: int,
                seconds: float) -> Generator[defer.Deferred[Any], Any, dict[str, Any]]:
    """As many stations in as many workers playing as long against the floor: the figures, its rows and commits."""
    from floor import GroupCommit, MachineFloor, listen

    rows = GroupCommit(folder / "floor", reactor)
    rows.start()
    port, url = listen(reactor, rows, MachineFloor)
    try:
        stations = [{"machine": f"m{n}", "token": "floor"} for n in range(machines)]
        figures: dict[str, Any] = yield drive(folder, "floor", url, stations, worker_count, seconds)
        return {**figures, "plays": rows.rows, "commits": rows.commits}
    finally:
        yield defer.maybeDeferred(port.stopListening)
        rows.stop()


def serve_and_measure(machines: int, worker_count: int, seconds: float,
                      with_floor: bool = False) -> tuple[dict[str, float], dict[str, float] | None]:
    """The hall's figures, and the floor's before them in the same reactor run when ``with_floor``."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from twisted.internet import reactor
    from twisted.python.threadpool import ThreadPool
    from twisted.web.server import Site

    from hall_server.hall.admission import AdmissionModule
    from hall_server.hall.cashier import CashierModule
    from hall_server.hall.ledger import LedgerModule
    from hall_server.hall.pins import PinGuard
    from hall_server.hall.roles import Role
    from hall_server.hall.videobingo import MachineConfig, VideoBingoConfig, VideoBingoModule, load_machines
    from hall_server.store.database import open_database
    from hall_server.terminal_gateway.machines import MachineGateway, MachineSocketResource
    from protocol.videobingo.paytable import load_paytable
    from server_kit import collector
    from server_kit.core import Actor, CommandCore, thread_pool_runner
    from server_kit.journal.sql import Journal

    folder = Path(tempfile.mkdtemp(prefix="bench-vb-"))
    engine = open_database(f"sqlite:///{folder / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head")
    journal.initialise(int(time.time() * 1000), {"hall": "bench"})
    writer = ThreadPool(minthreads=1, maxthreads=1, name="hall-db-writer")
    writer.start()
    core = CommandCore(journal, reactor, thread_pool_runner(reactor, writer))
    ledger = LedgerModule(core)
    cashier = CashierModule(core, ledger, AdmissionModule(core, []), ["desk1"])
    table = EXAMPLES / "vb-classic-3x5.json"
    paytable = load_paytable(table.read_bytes())
    ids = [f"m{n}" for n in range(machines)]
    config = VideoBingoConfig(seats=5 * machines, room_zone="bingo room", machines=tuple(
        MachineConfig(m, "classic", table, 20, 1, "machines") for m in ids))
    vb = VideoBingoModule(core, ledger, cashier, config, load_machines(config, dict.fromkeys(ids, paytable)))
    core.recover()
    gateway = MachineGateway(vb, PinGuard(core, cashier), lambda number, pin: defer.succeed(False), reactor)
    port = reactor.listenTCP(0, Site(MachineSocketResource(gateway, require_certificate=False)),  # type: ignore[attr-defined]
                             interface="127.0.0.1")
    url = f"ws://127.0.0.1:{port.getHost().port}/ws"
    figures: dict[str, float] = {}
    floor: dict[str, float] = {}

    @defer.inlineCallbacks
    def run():  # type: ignore[no-untyped-def]
        collector.settle()  # the collector as a server's composition root sets it, once its state is built
        if with_floor:
            floor.update((yield floor_plays(reactor, folder, machines, worker_count, seconds)))
            os.sync()  # the floor's writes reach the disk before the hall plays: neither pays the other's writeback
        chief, teller = Actor("rosa", Role.ROOM_CHIEF), Actor("eva", Role.CASHIER)
        yield cashier.open_desk(teller, "desk1", 0)
        stations = []
        for m in ids:
            token = (yield vb.enrol_station(chief, m, 1))["token"]
            yield vb.desk_credit_in(teller, m, 1, 1_000_000, "desk1")  # the player's cash taken at the desk
            stations.append({"machine": m, "token": token})
        collector.settle()
        commits_before = core.commits
        timed = yield drive(folder, "hall", url, stations, worker_count, seconds)
        played = sum(vb.meters(m).plays for m in ids)
        figures.update(timed, plays=played, commits=core.commits - commits_before)
        problems = vb.reconcile()
        if problems or ledger.ledger.total() != 0:
            print(f"  the meters or the ledger do not agree: {problems}")
        port.stopListening()

    def stopped(outcome: Any) -> Any:
        writer.stop()
        reactor.stop()  # type: ignore[attr-defined]
        return outcome

    reactor.callWhenRunning(lambda: run().addBoth(stopped))  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]
    return figures, floor or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--machines", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--no-floor", action="store_true", help="skip the floor's run (bench/floor.py)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--alone", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(Path(args.worker).read_text())
        worker(spec["url"], spec["stations"], spec["seconds"])
        return
    if args.alone:
        print(json.dumps(serve_and_measure(1, 1, args.seconds)[0]))
        return
    # One reactor a process: the baseline (one machine alone) runs in a process of its own.
    import subprocess

    alone = json.loads(subprocess.run([sys.executable, __file__, "--alone", "--seconds", str(min(args.seconds, 10))],
                                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
    many, floor = serve_and_measure(args.machines, args.workers, args.seconds, not args.no_floor)
    print("video bingo plays over WebSockets on loopback, each durable (SQLite WAL, signed journal), 4 cards a play")
    for label, f in (("1 machine alone", alone), (f"{args.machines} machines at once", many)):
        print(plays_line(label, f))
    print(f"  ratio: {many['plays_per_s'] / alone['plays_per_s']:.1f}x the plays of one machine alone")
    if floor is not None:
        print(plays_line(f"floor, {args.machines} machines", floor) + "  (bench/floor.py, the same workers)")
        print(f"  ratio to floor: plays/s {many['plays_per_s'] / floor['plays_per_s']:.2f}x the floor's, "
              f"press to result p99 {many['p99'] / floor['p99']:.1f}x the floor's")


def plays_line(label: str, f: dict[str, float]) -> str:
    return (f"  {label:22s} {f['plays_per_s']:7,.0f} plays/s   press to result p50 {f['p50']:6.1f} ms, "
            f"p99 {f['p99']:6.1f} ms, max {f['max']:6.1f} ms   "
            f"({f['plays']:,.0f} plays in {f['commits']:,.0f} commits)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

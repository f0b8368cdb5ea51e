"""Durable card assignments per second at the central server, on PostgreSQL (and SQLite beside it).

Run: ``.venv/bin/python bench/bench_central_assignments.py`` (``--requests 2000`` for a
quick run; ``--no-sqlite``, ``--no-pair`` to skip those).

A real central server (:func:`central_server.tap.build_central`: its migrations, its
signed journal, its command core with the group commit, its one database writer thread)
on a real PostgreSQL 15 cluster that the benchmark starts itself, as the tests do
(``tests/support/postgres.py``: ``initdb`` into a temporary folder as an unprivileged
user, ``fsync=on``, ``synchronous_commit=on``, a loopback port, stopped at the end);
then on the replicated central server's database pair (``bingo central cluster``: two
PostgreSQL 15 nodes under Patroni, ``synchronous_mode``), so that every commit waits
for the synchronous standby to have it: the figure beside the single node's is what
the replica costs.
One network game of 100 halls is on sale; purchase requests of 1-6 cards at random
stakes, from 350 terminals a hall, go to the central module as the AMP edge hands them
over (``CentralModule.hall_command("buy_cards", ...)``, the hall's request id in the
actor stamp):

* **one at a time**: each request waits for the previous one's commit;
* **a burst**: every request at once, as a purchase burst at the close of the sale
  arrives; each is decided in the order received (cards assigned in that order) and
  committed with those decided while the previous commit was in flight.

A request is answered only once its ``central_purchase_confirmed`` record is committed
(durable). Printed: purchases confirmed per second (each one card assignment, a range of
1-6 cards), cards assigned per second, records per commit, and the latency from the
request to its answer. The network and TLS are not in these figures (the edge adds one
AMP box each way); the terminals and halls are not either.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from twisted.internet import defer, task  # noqa: E402

from central_server import cluster as pair  # noqa: E402
from central_server.config import load_config  # noqa: E402
from central_server.server import CentralServer  # noqa: E402
from central_server.tap import build_central  # noqa: E402
from server_kit import collector  # noqa: E402
from server_kit.pki import init_authority, issue_certificate  # noqa: E402
from tests.support.postgres import PostgresCluster, PostgresUnavailable  # noqa: E402

HALLS = [f"hall-{n:03d}" for n in range(1, 101)]
TERMINALS = 350
CENTRAL = "central-bench"


def config_text(home: Path, pki_dir: Path, url: str, cards: int) -> str:
    halls = ", ".join(f'"{h}"' for h in HALLS)
    return f"""
[central]
id = "{CENTRAL}"
home = "{home}"
pki_dir = "{pki_dir}"

[listen]
interface = "127.0.0.1"
port = 0

[database]
url = "{url}"

[network]
halls = [{halls}]

[[series]]
label = "V1"
cards = {cards}

[[games]]
game_id = "bench-1"
price_cents = 100
max_price_cents = 200
sale_window_ms = 3600000
ball_interval_ms = 2000
series_label = "V1"
opens_after_ms = 0
[[games.prizes]]
pattern = {{ name = "line", rows = 1 }}
basis_points = 2000
[[games.prizes]]
pattern = {{ name = "bingo", rows = 3 }}
basis_points = 5000
"""


def requests(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    made = []
    for n in range(count):
        hall = rng.choice(HALLS)
        terminal = rng.randrange(TERMINALS)
        made.append({
            "request_id": f"r{n}", "game_id": "bench-1", "hall_id": hall, "terminal_id": f"T{terminal}",
            "player_ref": f"{hall}-p{terminal}-{n % 7}", "card_count": rng.randint(1, 6),
            "stake_pct": rng.choice((100, 100, 50, 25)),
        })  # fmt: skip
    return made


async def started(reactor: Any, folder: Path, url: str, cards: int) -> CentralServer:
    pki_dir = folder / "pki"
    init_authority(pki_dir, "Bench Operator")
    issue_certificate(pki_dir, "central", CENTRAL)
    home = folder / "central"
    home.mkdir()
    path = home / "central.toml"
    path.write_text(config_text(home, pki_dir, url, cards))
    server = build_central(load_config(path), reactor)
    collector.settle()  # as the process's composition root does (central_server.tap.makeService)
    server.service.startService()
    await server.listener.listening
    while server.module.games.get("bench-1") is None or server.module.games["bench-1"].phase != "selling":
        await task.deferLater(reactor, 0.01, lambda: None)
    return server


async def one_at_a_time(server: CentralServer, batch: list[dict[str, Any]]) -> dict[str, float]:
    latencies = []
    start = time.perf_counter()
    for arguments in batch:
        sent = time.perf_counter()
        answer = await server.module.hall_command("buy_cards", arguments, arguments["hall_id"])
        latencies.append(time.perf_counter() - sent)
        assert answer["status"] == "confirmed", answer
    return {"wall": time.perf_counter() - start, "p50": statistics.median(latencies),
            "p99": statistics.quantiles(latencies, n=100)[98]}


async def burst(server: CentralServer, batch: list[dict[str, Any]]) -> dict[str, float]:
    sent: dict[str, float] = {}
    answered: dict[str, float] = {}

    def done(answer: dict[str, Any], request: str) -> None:
        answered[request] = time.perf_counter()
        assert answer["status"] == "confirmed", answer

    commits = server.core.commits
    start = time.perf_counter()
    waiting = []
    for arguments in batch:
        sent[arguments["request_id"]] = time.perf_counter()
        waiting.append(server.module.hall_command("buy_cards", arguments, arguments["hall_id"])
                       .addCallback(done, arguments["request_id"]))
    await defer.gatherResults(waiting, consumeErrors=True)
    wall = time.perf_counter() - start
    latencies = [answered[r] - sent[r] for r in sent]
    return {"wall": wall, "p50": statistics.median(latencies), "p99": statistics.quantiles(latencies, n=100)[98],
            "last": max(answered.values()) - start, "commits": server.core.commits - commits}


def timed_commits(server: CentralServer) -> list[tuple[int, float]]:
    """Record each journal commit's records and its time on the writer thread (the transaction and the head)."""
    timings: list[tuple[int, float]] = []
    commit = server.journal.commit

    def timed(records: Any, extra: Any = None) -> Any:
        start = time.perf_counter()
        stored = commit(records, extra)
        timings.append((len(records), time.perf_counter() - start))
        return stored

    server.journal.commit = timed  # type: ignore[method-assign]
    return timings


async def measure(reactor: Any, name: str, url: str, folder: Path, count: int, seed: int) -> None:
    batch = requests(count * 2, seed)
    cards = (sum(r["card_count"] for r in batch) // 6 + 1) * 6
    server = await started(reactor, folder, url, cards)
    timings = timed_commits(server)
    try:
        cpu = time.process_time()
        single = await one_at_a_time(server, batch[: max(200, count // 10)])
        single_n = max(200, count // 10)
        single_commits = [t for _, t in timings]
        del timings[:]
        many = batch[single_n : single_n + count]
        await task.deferLater(reactor, 0, lambda: None)  # the burst starts on a reactor turn of its own
        bursted = await burst(server, many)
        cpu = time.process_time() - cpu
        many_cards = sum(r["card_count"] for r in many)
        print(f"{name}:")
        print(f"  one at a time: {single_n / single['wall']:,.0f} purchases/s "
              f"(latency p50 {single['p50'] * 1000:.2f} ms, p99 {single['p99'] * 1000:.2f} ms)")
        print(f"  burst of {len(many):,} purchases ({many_cards:,} cards): {len(many) / bursted['wall']:,.0f} "
              f"purchases/s, {many_cards / bursted['wall']:,.0f} cards/s; {bursted['commits']:,} commits "
              f"(the largest {max(n for n, _ in timings):,} purchases in one transaction); last answered "
              f"{bursted['last'] * 1000:.0f} ms after the first was sent; latency p50 {bursted['p50'] * 1000:.0f} ms, "
              f"p99 {bursted['p99'] * 1000:.0f} ms")
        in_commits = sum(t for _, t in timings)
        print(f"  the writer thread's commits: one purchase {statistics.median(single_commits) * 1000:.1f} ms (median); "
              f"the burst's {len(timings)} commits {in_commits:.2f} s in all "
              f"({sum(n for n, _ in timings) / max(in_commits, 1e-9):,.0f} records/s inside the transactions)")
        print(f"  CPU of this process (decisions, journal sealing, database driver): {cpu:.1f} s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        game = server.module.games["bench-1"]
        assert game.decision_count == single_n + len(many)
        assert server.journal.verify() >= game.decision_count
    finally:
        await server.service.stopService()
        server.engine.dispose()


async def main(reactor: Any, args: argparse.Namespace) -> None:
    try:
        cluster = PostgresCluster().start()
    except PostgresUnavailable as error:
        print(f"PostgreSQL: {error}")
        cluster = None
    try:
        if cluster is not None:
            with tempfile.TemporaryDirectory(prefix="bench-central-pg-") as folder:
                await measure(reactor, "PostgreSQL 15 (fsync on, synchronous_commit on)", cluster.create_database(),
                              Path(folder), args.requests, args.seed)
    finally:
        if cluster is not None:
            cluster.stop()
    if not args.no_pair:
        place = Path(tempfile.mkdtemp(prefix="bench-central-pair-"))
        os.chmod(place, 0o755)  # the postgres user runs the pair in it
        try:
            init_authority(place / "operator", "Bench network")  # issues the pair's certificates
            pair.start(place / "cluster", place / "operator")
            found = pair.status(place / "cluster")
            index = int(str(found["leader"])[-1])
            await measure(reactor, f"the database pair (PostgreSQL 15 x2 under Patroni, synchronous standby "
                                   f"{found['sync_standby']})", pair.database_url(place / "cluster", index),
                          place, args.requests, args.seed)
        except pair.ClusterError as error:
            print(f"the database pair: {error}")
        finally:
            if (place / "cluster" / "cluster.json").exists():
                pair.stop(place / "cluster")
            shutil.rmtree(place, ignore_errors=True)
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory(prefix="bench-central-sqlite-") as folder:
            await measure(reactor, "SQLite (WAL, the single-node demo)", f"sqlite:///{folder}/central.sqlite3",
                          Path(folder), args.requests, args.seed)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000, help="purchases in the burst (default 20,000)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--no-sqlite", action="store_true", help="no SQLite comparison")
    parser.add_argument("--no-pair", action="store_true", help="no database pair (synchronous standby)")
    options = parser.parse_args()
    task.react(lambda reactor: defer.ensureDeferred(main(reactor, options)))

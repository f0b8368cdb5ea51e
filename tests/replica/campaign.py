"""The failover campaign (R92.6), played in two shards at once: each a whole replicated set failed 12 times.

One long-lived set on loopback per shard (:mod:`simulation.replica`, the same as ``bingo
central failover-drill``): etcd x3, Patroni and PostgreSQL 15 x2, the two central server
processes, two real halls with three headless terminals each, buying in the last
seconds of every sale.  Ten runs SIGKILL the active node (its PostgreSQL, Patroni and
central process) in turn during a sale's buying burst, right after a ball's commit
before the halls are told, and right after a prize's commit before it is credited; one
pauses the active node instead (SIGSTOP) and wakes it after the takeover; one kills the
active central process alone.  Each killed node is started again and must rejoin as the
synchronous standby, its process as the standby, while play goes on.

The two shards (``test_failover_campaign.py``, ``test_failover_campaign_second.py``) run
on two of the suite's workers at once, each on its own set and ports: a run is mostly
waiting for Patroni's leader key to expire (its ``ttl``, 20 s), so two sets take the
time of one.  Together: 20 node kills, 2 pauses, 2 central kills.

After each run: every purchase a hall captured is confirmed once in the central journal
and charged once, no hold is left on a closed sale, no ball was changed or drawn twice
and every hall's balls are the central server's, no credit was paid twice, every closed
game's audit export replays to the cent, the journal's epochs never go back (nothing a
fenced process did landed).  At the end: every purchase a terminal was told was
confirmed is in the journal once and charged once, and the simulation's own checks.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from simulation.replica import CENTRAL, KILL, PAUSE, campaign, drill
from tests.replica.test_cluster import installed

#: Each shard's runs: node kills, pauses, kills of the central process alone.
NODE_KILLS = 10
PAUSES = 1
CENTRAL_KILLS = 1


def play_shard(seed: int, first_moment: int) -> None:
    """One shard of the campaign on a new set, with every check; ``first_moment`` turns the kills' moments."""
    installed()
    home = Path(tempfile.mkdtemp(prefix="bingo-failover-"))
    os.chmod(home, 0o755)  # the postgres user enters it to reach the database pair's folder
    started = time.monotonic()
    try:
        runs = campaign(NODE_KILLS, PAUSES, CENTRAL_KILLS, first_moment=first_moment)
        summary = drill(home / "drill", runs, seed=seed, progress=print)
    finally:
        if not os.environ.get("BINGO_KEEP_DRILL"):
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps({k: v for k, v in summary.items() if k != "run_reports"}, indent=2))
    print(f"failover campaign shard: {summary['runs']} runs in {time.monotonic() - started:.0f} s")
    assert summary["ok"], summary["problems"]
    assert (summary["kills"], summary["pauses"], summary["central_kills"]) == (NODE_KILLS, PAUSES, CENTRAL_KILLS)
    assert summary["lost"] == summary["doubled"] == summary["balls_changed"] == summary["prizes_doubled"] == 0
    assert summary["confirmed_purchases"] > 0 and summary["purchases"]["unanswered"] == 0
    reports = summary["run_reports"]
    assert all(run["moment_hit"] for run in reports), [(r["kind"], r["moment"]) for r in reports if not r["moment_hit"]]
    assert {(r["kind"], r["cause"]) for r in reports} == {(KILL, "failover"), (PAUSE, "failover"), (CENTRAL, "start")}
    assert all(run["rejoined_s"] is not None for run in reports if run["kind"] != CENTRAL)
    assert all(run["takeover_s"] is not None for run in reports)
    epochs = [run["epoch"] for run in reports]
    assert epochs == sorted(epochs) and len(set(epochs)) == len(epochs)

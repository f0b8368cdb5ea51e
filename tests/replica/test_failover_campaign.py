"""The failover campaign (R92.6): the replicated central server failed 24 times while network games are played.

One long-lived set on loopback (:mod:`simulation.replica`, the same as ``bingo central
failover-drill``): etcd x3, Patroni and PostgreSQL 15 x2, the two central server
processes, two real halls with three headless terminals each, buying in the last
seconds of every sale.  Twenty runs SIGKILL the active node (its PostgreSQL, Patroni
and central process) in turn during a sale's buying burst, right after a ball's commit
before the halls are told, and right after a prize's commit before it is credited; two
pause the active node instead (SIGSTOP) and wake it after the takeover; two kill the
active central process alone.  Each killed node is started again and must rejoin as the
synchronous standby, its process as the standby, while play goes on.

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

import pytest

from simulation.replica import CENTRAL, KILL, PAUSE, campaign, drill
from tests.replica.test_cluster import installed

pytestmark = [pytest.mark.integration, pytest.mark.req("R92.6", "R93.6", "R93.8", "R85.9", "R92.10")]

NODE_KILLS = 20
PAUSES = 2
CENTRAL_KILLS = 2


@pytest.mark.campaign
@pytest.mark.timeout(3600)
def test_r92_6_failover_campaign_nothing_confirmed_is_lost_or_doubled_no_ball_changed_no_prize_paid_twice() -> None:
    installed()
    home = Path(tempfile.mkdtemp(prefix="bingo-failover-"))
    os.chmod(home, 0o755)  # the postgres user enters it to reach the database pair's folder
    started = time.monotonic()
    try:
        summary = drill(home / "drill", campaign(NODE_KILLS, PAUSES, CENTRAL_KILLS), seed=11, progress=print)
    finally:
        if not os.environ.get("BINGO_KEEP_DRILL"):
            shutil.rmtree(home, ignore_errors=True)
    print(json.dumps({k: v for k, v in summary.items() if k != "run_reports"}, indent=2))
    print(f"failover campaign: {summary['runs']} runs in {time.monotonic() - started:.0f} s")
    assert summary["ok"], summary["problems"]
    assert (summary["kills"], summary["pauses"], summary["central_kills"]) == (NODE_KILLS, PAUSES, CENTRAL_KILLS)
    assert summary["lost"] == summary["doubled"] == summary["balls_changed"] == summary["prizes_doubled"] == 0
    assert summary["confirmed_purchases"] > 0 and summary["purchases"]["unanswered"] == 0
    runs = summary["run_reports"]
    assert all(run["moment_hit"] for run in runs), [(r["kind"], r["moment"]) for r in runs if not r["moment_hit"]]
    assert {(r["kind"], r["cause"]) for r in runs} == {(KILL, "failover"), (PAUSE, "failover"), (CENTRAL, "start")}
    assert all(run["rejoined_s"] is not None for run in runs if run["kind"] != CENTRAL)
    assert all(run["takeover_s"] is not None for run in runs)
    epochs = [run["epoch"] for run in runs]
    assert epochs == sorted(epochs) and len(set(epochs)) == len(epochs)

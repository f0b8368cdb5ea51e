"""Takeover of the replicated central server: from the failure to the next ball shown on the terminals.

Run: ``.venv/bin/python bench/bench_replica.py`` (``--kills 10 --central-kills 10`` by
default; each node kill costs about 30 s, Patroni's leader key expiring and the killed
node rejoining).

The failover drill's set on loopback (:mod:`simulation.replica`: etcd x3, Patroni and
PostgreSQL 15 x2, the two central server processes, two real halls with three headless
terminals each, network games played all along), failed again and again:

* **a whole node killed** (SIGKILL of its central process, its Patroni, its PostgreSQL):
  from the kill to the next ball shown on the terminals, beside Patroni's own promotion
  (the kill to the other node running as the leader), median and worst. The goal: the
  next ball within 3 s of Patroni's promotion;
* **the active central process alone killed**, its database up, and started again at
  once as its supervisor would: from the kill to the next ball shown. The goal: under 5 s.

"Shown on the terminals": the first ball committed after the kill, once every terminal
that received it showed it (the terminals' own clock, the same machine's). The kills
come at the moments the campaign uses (a sale's burst, after a ball's commit, after a
prize's), in turn. Every run's checks hold as in the drill; a failed check is printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulation.replica import BALL, CENTRAL, KILL, PRIZE, SALE, Run, drill  # noqa: E402


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"median {statistics.median(values):.1f} s, worst {max(values):.1f} s (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10, help="whole-node kills (default 10)")
    parser.add_argument("--central-kills", type=int, default=10, help="kills of the central process alone (default 10)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    moments = (SALE, BALL, PRIZE)
    runs = [Run(KILL, moments[k % 3]) for k in range(args.kills)]
    runs += [Run(CENTRAL, moments[k % 3]) for k in range(args.central_kills)]
    home = Path(tempfile.mkdtemp(prefix="bench-replica-"))
    os.chmod(home, 0o755)  # the postgres user enters it
    started = time.monotonic()
    try:
        summary = drill(home / "drill", runs, args.seed, progress=lambda line: print(line, file=sys.stderr, flush=True))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    reports = summary["run_reports"]
    kills = [r for r in reports if r["kind"] == KILL]
    alone = [r for r in reports if r["kind"] == CENTRAL]
    behind = [r["takeover_s"] - r["patroni_s"] for r in kills if r["takeover_s"] is not None and r["patroni_s"]]
    print(f"whole node killed ({len(kills)} runs):")
    print(f"  Patroni's promotion (kill to the other node leading): {spread([r['patroni_s'] for r in kills])}")
    print(f"  kill to the next ball shown on the terminals:         {spread([r['takeover_s'] for r in kills])}")
    print(f"  the next ball after Patroni's promotion:              {spread(behind)} (goal: within 3 s)")
    print(f"  kill to the new process's leadership taken:           {spread([r['taken_s'] for r in kills])}")
    print(f"  kill to the killed node back as synchronous standby:  {spread([r['rejoined_s'] for r in kills])}")
    print(f"central process alone killed and started again ({len(alone)} runs):")
    print(f"  kill to the leadership taken again:                   {spread([r['taken_s'] for r in alone])}")
    print(f"  kill to the next ball shown on the terminals:         {spread([r['takeover_s'] for r in alone])} "
          "(goal: under 5 s)")
    print(f"lost {summary['lost']}, doubled {summary['doubled']}, balls changed {summary['balls_changed']}, "
          f"prizes doubled {summary['prizes_doubled']}; {summary['confirmed_purchases']} purchases confirmed; "
          f"checks {'all held' if summary['ok'] else summary['problems']}")
    print(f"wall time {time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")


if __name__ == "__main__":
    main()

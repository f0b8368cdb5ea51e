"""How long a failover of the database pair takes (docs/replica.md): SIGKILL of the
leader's Patroni and PostgreSQL, until the former standby accepts a write.

Usage: ``python scripts/replica_failover_time.py DIR`` on a set started with
``bingo central cluster start --dir DIR``; prints the seconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import psycopg

from central_server import cluster as pair


def main(folder: Path) -> float:
    found = pair.status(folder)
    layout = pair.Layout.load(folder)
    leader = int(str(found["leader"]).removeprefix("node"))
    postmaster = int((folder / f"node{leader}" / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(int(layout.state["pids"][f"node{leader}"]), signal.SIGKILL)
    os.kill(postmaster, signal.SIGKILL)
    began = time.monotonic()
    info = pair.connection_info(folder, 1 - leader)
    while True:
        try:
            with psycopg.connect(**info, connect_timeout=1, autocommit=True) as db:
                db.execute("CREATE TABLE IF NOT EXISTS failover_probe (x int)")
                db.execute("INSERT INTO failover_probe VALUES (1)")
                return time.monotonic() - began
        except psycopg.Error:
            time.sleep(0.1)


if __name__ == "__main__":
    print(f"failover {main(Path(sys.argv[1]).resolve()):.1f} s")

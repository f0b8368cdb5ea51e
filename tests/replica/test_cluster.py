"""The central server's database pair (R92.6): ``bingo central cluster start|stop|status``.

Real processes only: three etcd members and two PostgreSQL 15 nodes each run by
Patroni, on loopback ports, as the ``postgres`` user under root.  Each test starts the
set through the command, and stops it in a ``finally`` that also checks that no
process of the set is left and every port is free again.  Skipped where etcd or
Patroni's venv is missing, except in CI, where these tests must run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from central_server import cluster as pair
from server_kit.ports import listenable

pytestmark = [pytest.mark.integration, pytest.mark.req("R92.6")]
ROOT = Path(__file__).resolve().parents[2]


def bingo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(Path(sys.executable).parent / "bingo"), *args],
                          capture_output=True, text=True, timeout=180, env=env, cwd=ROOT)


def installed() -> None:
    """The set's parts are there: ./test.sh installs them (scripts/system-deps.sh); a missing one fails."""
    try:
        pair._check_installed()
    except pair.ClusterError as error:
        pytest.fail(f"the replica tests cannot run: {error}")


def _set_processes(folder: Path) -> list[int]:
    """Every process whose command line names the set's folder (etcd, Patroni, PostgreSQL)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if "Z" == (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]:
                continue
        except OSError:
            continue
        if str(folder) in argv:
            found.append(int(entry.name))
    return found


@pytest.fixture
def cluster_dir() -> Iterator[Path]:
    """A started set in a fresh folder under /tmp (the postgres user can enter it); stopped after."""
    installed()
    folder = Path(tempfile.mkdtemp(prefix="bingo-replica-"))
    try:
        started = bingo("central", "cluster", "start", "--dir", str(folder))
        assert started.returncode == 0, started.stdout + started.stderr
        yield folder
    finally:
        taken: list[int] = []
        if (folder / "cluster.json").exists():
            state = pair.Layout.load(folder).state
            stopped = bingo("central", "cluster", "stop", "--dir", str(folder))
            ports = [p for m in state["etcd"] for p in (m["client"], m["peer"])]
            ports += [p for n in state["nodes"] for p in (n["rest"], n["pg"])]
            taken = [p for p in ports if not listenable(p)]
        left = _set_processes(folder)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["rm", "-rf", str(folder)], check=False)
        assert not left, f"processes left after stop: {left}"
        assert not taken, f"ports still taken after stop: {taken}"
        if (folder / "cluster.json").exists():
            assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def connect(folder: Path, index: int) -> Any:
    import psycopg

    return psycopg.connect(**pair.connection_info(folder, index), autocommit=True, connect_timeout=5)


def node_index(name: str) -> int:
    return int(name.removeprefix("node"))


def test_r92_6_commit_on_leader_is_on_synchronous_standby(cluster_dir: Path) -> None:
    """R92.6: a commit on the leader is on the standby, which replicates synchronously."""
    shown = bingo("central", "cluster", "status", "--dir", str(cluster_dir))
    assert shown.returncode == 0, shown.stderr
    found = pair.status(cluster_dir)
    assert found["leader"] is not None and found["sync_standby"] is not None
    assert found["leader"] != found["sync_standby"]
    assert f"leader: {found['leader']}" in shown.stdout
    assert f"sync standby: {found['sync_standby']}" in shown.stdout
    assert "lag " in shown.stdout
    leader, standby = node_index(found["leader"]), node_index(found["sync_standby"])
    with connect(cluster_dir, leader) as db:
        states = db.execute("SELECT application_name, sync_state FROM pg_stat_replication").fetchall()
        assert (found["sync_standby"], "sync") in states
        assert db.execute("SHOW synchronous_standby_names").fetchone()[0] != ""
        db.execute("CREATE TABLE ledger (id int PRIMARY KEY, cents bigint NOT NULL)")
        db.execute("INSERT INTO ledger VALUES (1, 12345)")
    # synchronous_commit=on with a sync standby: the commit returned after the standby
    # flushed it; it is visible there once replayed (a moment at most).
    deadline = time.monotonic() + 10
    with connect(cluster_dir, standby) as replica:
        assert replica.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        while True:
            try:
                rows = replica.execute("SELECT id, cents FROM ledger").fetchall()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    assert rows == [(1, 12345)]


def test_r92_6_start_refuses_a_folder_already_running(cluster_dir: Path) -> None:
    """A second start in the same folder is refused, naming the folder; the set stays up."""
    again = bingo("central", "cluster", "start", "--dir", str(cluster_dir))
    assert again.returncode != 0
    assert "already running" in again.stderr and str(cluster_dir) in again.stderr
    assert pair.status(cluster_dir)["leader"] is not None


@pytest.mark.campaign
def test_r92_6_killed_leader_is_replaced_and_rejoins_as_standby(cluster_dir: Path) -> None:
    """R92.6: SIGKILL of the leader's Patroni and PostgreSQL: the standby is promoted and
    accepts writes; the old node, restarted, rejoins as the synchronous standby."""
    import psycopg

    found = pair.status(cluster_dir)
    old, new = node_index(found["leader"]), node_index(found["sync_standby"])
    layout = pair.Layout.load(cluster_dir)
    postmaster = int((cluster_dir / f"node{old}" / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(layout.state["pids"][f"node{old}"], signal.SIGKILL)
    os.kill(postmaster, signal.SIGKILL)
    deadline = time.monotonic() + 90
    while True:
        try:
            with connect(cluster_dir, new) as db:
                db.execute("CREATE TABLE after_failover (x int)")
                db.execute("INSERT INTO after_failover VALUES (7)")
            break
        except psycopg.Error:
            assert time.monotonic() < deadline, "the standby was not promoted in 90 s"
            time.sleep(0.2)
    pair.restart_node(cluster_dir, old)
    deadline = time.monotonic() + 120
    while True:
        now = pair.status(cluster_dir)
        if now["leader"] == f"node{new}" and now["sync_standby"] == f"node{old}":
            break
        assert time.monotonic() < deadline, f"the old leader did not rejoin as standby: {now}"
        time.sleep(0.5)
    with connect(cluster_dir, old) as replica:
        assert replica.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        deadline = time.monotonic() + 10
        while True:
            try:
                assert replica.execute("SELECT x FROM after_failover").fetchall() == [(7,)]
                break
            except psycopg.Error:
                assert time.monotonic() < deadline
                time.sleep(0.2)

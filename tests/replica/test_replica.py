"""Two central server processes over the database pair (R92.6): one active, the other standby; fencing.

Real processes only: ``bingo central cluster`` (etcd x3, Patroni and PostgreSQL 15 x2)
and two ``bingo central serve``, one beside each node, sharing one journal key; no hall
(the failover campaign plays with halls and terminals, ``test_failover_campaign.py``).
Network games are configured to open a sale every few seconds, so the active process
commits all the time.  The set is started once for the module, in a fresh folder under
the temporary folder (the ``postgres`` user must enter it), and stopped after.

The paused primary: SIGSTOP of the active node (Patroni and PostgreSQL) and of the
central process beside it; the other process takes over once Patroni promoted its node,
and commits; the paused side wakes (SIGCONT), its process stops by itself without
anything of it reaching the journal, and its node rejoins as the synchronous standby.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from central_server import cluster
from central_server.audit import verified_journal
from central_server.config import load_config
from server_kit.keys import load_journal_key
from server_kit.pki import export_bundle, init_authority, issue_certificate
from simulation.processes import Child, SimulationError, python, wait_for
from simulation.replica import STANDBY, STOPPED_ACTING, TOOK
from tests.central_server.support import CENTRAL, GAME, HALLS, OPERATOR, OPERATOR_ROLE
from tests.replica.test_cluster import installed

pytestmark = [pytest.mark.integration]
ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(rb"listening for halls on")
FENCED = re.compile(rb"is fenced: nothing was written")


def bingo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(Path(sys.executable).parent / "bingo"), *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)


class Pair:
    """The database pair and the two central processes beside it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.cluster = home / "cluster"
        self.pki = home / "pki"
        self.configs = [home / f"central-{i}" / "central.toml" for i in (0, 1)]
        self.ports = [0, 0]
        self.processes = [Child(f"central-{i}", python("from central_server.cli import central; central()", "serve",
                                                       "--config", str(config)), config.parent, up=LISTENING)
                          for i, config in enumerate(self.configs)]

    def prepare(self) -> None:
        init_authority(self.pki, "Acme Bingo Network")
        issue_certificate(self.pki, "central", CENTRAL)
        issue_certificate(self.pki, OPERATOR_ROLE, OPERATOR)
        export_bundle(self.pki, OPERATOR, self.home / "operator")
        cluster.start(self.cluster, self.pki)
        key = self.configs[0].parent / "keys" / "journal-signing.pem"
        load_journal_key(key, create=True)
        games = "".join(GAME.format(game_id=f"net-{k}", sale_ms=10_000, ball_ms=1_000, series="V1",
                                    opens_after=f"opens_after_ms = {5_000 + 4_000 * k}\n") for k in range(60))
        for index, config in enumerate(self.configs):
            home = config.parent
            export_bundle(self.pki, CENTRAL, home / "pki")
            if index:
                (home / "keys").mkdir(mode=0o700)
                shutil.copy2(key, home / "keys" / "journal-signing.pem")
            from simulation.processes import free_port

            self.ports[index] = free_port()
            config.write_text(f"""
[central]
id = "{CENTRAL}"
home = "{home}"

[listen]
interface = "127.0.0.1"
port = {self.ports[index]}

[database]
url = "{cluster.database_url(self.cluster, index, home / 'pki' / 'ca.pem')}"

[network]
halls = {list(HALLS)!r}

[[series]]
label = "V1"
cards = 60
{games}
[replica]
node = "node{index}"
patroni = "{cluster.rest_url(self.cluster, index)}"
""".replace("'", '"'))

    def leader(self) -> int:
        return int(str(cluster.leader(self.cluster))[-1])

    def took(self, index: int) -> list[tuple[str, str, int]]:
        """What process ``index`` logged taking in its current run: (node, cause, epoch)."""
        return [(m.group(1).decode(), m.group(2).decode(), int(m.group(3)))
                for line in self.processes[index].lines if (m := TOOK.search(line))]

    def journal(self) -> list[Any]:
        return verified_journal(load_config(self.configs[self.leader()]))[0]

    def stop(self) -> None:
        for child in self.processes:
            if child.process is not None and child.process.returncode is None:
                os.kill(child.process.pid, signal.SIGCONT)
            child.kill()
        if (self.cluster / "cluster.json").exists():
            for index in (0, 1):
                cluster.signal_node(self.cluster, index, signal.SIGCONT)
            cluster.stop(self.cluster)


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    installed()
    home = Path(tempfile.mkdtemp(prefix="bingo-pair-"))
    os.chmod(home, 0o755)
    made = Pair(home)
    try:
        made.prepare()
        leader = made.leader()
        made.processes[leader].start(timeout=120)
        made.processes[1 - leader].start(timeout=120)
        wait_for(lambda: made.took(leader), 60, "the process beside the leader to take the leadership")
        yield made
    finally:
        made.stop()
        if not os.environ.get("BINGO_KEEP_PAIR"):
            shutil.rmtree(home, ignore_errors=True)


@pytest.mark.req("R92.6")
def test_r92_6_the_process_beside_the_leader_is_active_and_the_other_refuses_as_standby(pair: Pair) -> None:
    leader = pair.leader()
    assert pair.took(leader) == [(f"node{leader}", "start", 1)] and pair.took(1 - leader) == []
    assert pair.processes[1 - leader].count(STANDBY) == 1
    operator = ["--pki-dir", str(pair.home / "operator")]
    standby = bingo("central", "games", "--server", f"localhost:{pair.ports[1 - leader]}", *operator)
    assert standby.returncode == 2, standby.stdout + standby.stderr
    assert standby.stderr.startswith("refused (standby): central-a here is the standby process")
    active = bingo("central", "games", "--server", f"localhost:{pair.ports[leader]}", *operator)
    assert active.returncode == 0 and "net-0: " in active.stdout, active.stderr
    standby_line = (f"process beside node{1 - leader} (127.0.0.1:{pair.ports[1 - leader]}): standby, "
                    f"listening; node{1 - leader}: sync_standby streaming, lag 0 bytes")
    lines: list[str] = []

    def caught_up() -> bool:  # the standby streams with no lag once it replayed the active process's first records
        nonlocal lines
        shown = bingo("central", "status", "--config", str(pair.configs[0]), "--config", str(pair.configs[1]))
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        return any(line.startswith(standby_line) for line in lines)

    try:
        wait_for(caught_up, 60, "the standby's node to stream with no lag", interval=0.5)
    except SimulationError:
        pytest.fail(f"bingo central status never showed {standby_line!r}:\n" + "\n".join(lines))
    assert lines[0].startswith(f"active: central-a beside node{leader} on ") and ", epoch 1, since " in lines[0]
    assert f"database leader: node{leader}" in lines
    assert any(line.startswith(f"process beside node{leader} (127.0.0.1:{pair.ports[leader]}): active, listening; "
                               f"node{leader}: leader running") for line in lines)
    assert "last failover: none" in lines


@pytest.mark.req("R92.6")
def test_r92_6_an_active_process_that_died_is_started_again_and_takes_the_leadership_back(pair: Pair) -> None:
    """Its database stays Patroni's leader: the process started again beside it leads again (cause start)."""
    leader = pair.leader()
    before = pair.took(leader)[-1][2]
    pair.processes[leader].kill()
    started = time.monotonic()
    pair.processes[leader].start(timeout=60)
    wait_for(lambda: pair.took(leader), 60, "the process started again to take the leadership")
    assert pair.took(leader) == [(f"node{leader}", "start", before + 1)]
    print(f"central process killed and started again: leadership taken in {time.monotonic() - started:.1f} s")
    assert pair.took(1 - leader) == []  # the standby beside the other node never leads while its node follows


@pytest.mark.req("R92.6")
def test_r92_6_a_paused_primary_wakes_fenced_stops_and_nothing_it_does_lands(pair: Pair) -> None:
    """SIGSTOP of the active node and process; the other takes over; woken, the old one writes nothing and stops."""
    old = pair.leader()
    new = 1 - old
    epoch = pair.took(old)[-1][2]
    process = pair.processes[old].process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)
    cluster.signal_node(pair.cluster, old, signal.SIGSTOP)
    paused = time.monotonic()
    wait_for(lambda: pair.took(new), 90, "the standby to take over")
    assert pair.took(new) == [(f"node{new}", "failover", epoch + 1)]
    print(f"paused: the other process took over after {time.monotonic() - paused:.1f} s")
    length = len(pair.journal())
    wait_for(lambda: len(pair.journal()) > length, 60, "the new active process to commit")
    cluster.signal_node(pair.cluster, old, signal.SIGCONT)
    os.kill(process.pid, signal.SIGCONT)
    wait_for(lambda: not pair.processes[old].running, 60, "the woken process to stop by itself")
    pair.processes[old].reap()
    assert pair.processes[old].count(STOPPED_ACTING) == 1
    records = pair.journal()
    taken = max(r.seq for r in records if r.type == "central_leadership_taken")
    assert all(r.payload["epoch"] == epoch + 1 for r in records if r.seq > taken), "a record of the old epoch landed"
    held = 0
    for record in records:
        assert record.payload.get("epoch", held) >= held
        held = record.payload.get("epoch", held)
    wait_for(lambda: cluster.status(pair.cluster).get("sync_standby") == f"node{old}", 180,
             "the woken node to rejoin as the synchronous standby")
    pair.processes[old].start(timeout=120)
    wait_for(lambda: pair.processes[old].count(STANDBY) == 1, 60, "the old process to wait as the standby")
    shown = bingo("central", "status", "--config", str(pair.configs[0]), "--config", str(pair.configs[1]))
    assert f"last failover: " in shown.stdout and f"epoch {epoch + 1} taken by central-a beside node{new}" in shown.stdout

"""The replicated central server under failures: the failover campaign and ``bingo central failover-drill`` (R92.6).

:class:`ReplicaSimulation` is :class:`~simulation.network.Simulation` with the central
server replicated: the database pair on loopback (``bingo central cluster``: etcd x3,
Patroni and PostgreSQL 15 x2, in ``DIR/cluster``), two central server processes
(``DIR/central-0`` beside ``node0``, ``DIR/central-1`` beside ``node1``, one journal
key, ``[replica]`` naming each one's node), and the halls configured with both
endpoints.  One set lives through every run; the games run all the time (every game
configured at once, a sale opening while the games before draw) and the terminals buy
in the last seconds of each sale.

A run (:class:`Run`) fails the active side at a chosen moment and waits until the
network plays on:

* ``kill``: SIGKILL of the active node, its Patroni, its PostgreSQL and the central
  process beside it, a machine that died.  Patroni promotes the synchronous standby
  once the leader key expired (about 20 s), the process beside it takes over; the dead
  node is started again (Patroni, then its central process) and must rejoin as the
  synchronous standby, its process as the standby;
* ``pause``: SIGSTOP of the same processes, a machine that froze; it is woken (SIGCONT)
  once the other process took over and drew a ball: its process must stop by itself
  with nothing of it committed, its node rejoin as the standby;
* ``central``: SIGKILL of the active central process only, started again at once as a
  supervisor does: it takes the leadership back beside the same node.

The moment is ``sale`` (a sale closing within its buying burst), ``ball`` (after a
ball's commit, before the halls are told: the process stops itself there, armed by
the drill, :class:`central_server.replica.DrillPoint`) or ``prize`` (the same, for a
ball that won a prize, before the prize is credited to the players), or ``any``.

After each run :meth:`ReplicaSimulation.check_run` holds the issue's checks: every
purchase a hall captured is confirmed once in the central journal and charged once, no
hold is left on a closed sale, no ball was changed or drawn twice and every hall's balls
are the central server's, no credit paid twice, every closed game's audit export replays
to the cent, the journal's epochs never go back, and the failed node is back as the
synchronous standby.  At the end the simulation's own summary adds what the terminals
were told.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from central_server import cluster
from central_server.audit import rebuilt_games, verified_journal
from central_server.config import load_config
from central_server.domain.export import result, scenario
from central_server.domain.game import Phase
from protocol.chain import Record
from protocol.replay import replay_json
from server_kit.db.database import create
from server_kit.journal import table
from server_kit.keys import load_journal_key
from server_kit.pki import export_bundle
from simulation.journals import CentralFacts, HallFacts, JournalTail
from simulation.network import CENTRAL_ID, CENTRAL_UP, LINKED, HallPlace, Plan, Simulation, missed
from simulation.processes import Child, SimulationError, free_port, process_state, python, wait_for

KILL, PAUSE, CENTRAL = "kill", "pause", "central"
SALE, BALL, PRIZE, ANY = "sale", "ball", "prize", "any"
#: What the central processes say (their log lines).
TOOK = re.compile(rb"Took the central leadership beside (node\d) \((\w+)\): epoch (\d+)")
STANDBY = re.compile(rb"is the standby: it refuses halls")
STOPPED_ACTING = re.compile(rb"stops acting")
#: How long one step of a run may take before the run fails, in seconds.
PROMOTION_S = 90
REJOIN_S = 180
TAKEOVER_S = 90
MOMENT_S = 120
#: Seconds a difference between the halls and the central journal may last before it is a problem.
AGREE_S = 30
#: A run's estimated length (for the number of games to configure), in seconds.
RUN_S = {KILL: 35, PAUSE: 60, CENTRAL: 10}


@dataclass(frozen=True)
class Run:
    """One failure: what fails, and when."""

    kind: str  # kill, pause or central
    moment: str  # sale, ball, prize or any


def campaign(kills: int, pauses: int = 0, central_kills: int = 0, first_moment: int = 0) -> list[Run]:
    """The runs of a campaign: node kills at the sale burst, after a ball's commit and after a prize's in turn
    (from the ``first_moment``-th of them), pauses, and kills of the central process alone, interleaved."""
    moments = (SALE, BALL, PRIZE)[first_moment % 3:] + (SALE, BALL, PRIZE)[:first_moment % 3]
    runs = [Run(KILL, moments[k % 3]) for k in range(kills)]
    for p in range(pauses):
        runs.insert(min(len(runs), (p + 1) * max(1, len(runs) // (pauses + 1)) + p), Run(PAUSE, ANY))
    for c in range(central_kills):
        runs.insert(min(len(runs), 1 + c * max(1, len(runs) // max(1, central_kills))), Run(CENTRAL, moments[c % 3]))
    return runs


@dataclass
class RunReport:
    """What one run did and measured; ``problems`` empty when every check held."""

    number: int
    kind: str
    moment: str
    victim: str  # the node (or the process beside it) that failed
    moment_hit: bool = True  # the failure came at the moment asked for
    failed_ms: int = 0  # the kill or pause, wall clock ms
    patroni_s: float | None = None  # the failure to Patroni's new leader running (node failures)
    taken_s: float | None = None  # the failure to the new process's central_leadership_taken logged
    takeover_s: float | None = None  # the failure to the next ball shown on the terminals (filled at the end)
    cause: str | None = None
    epoch: int | None = None
    rejoined_s: float | None = None  # the failure to the failed node back as the synchronous standby
    problems: list[str] = field(default_factory=list)


class ClusterTail(JournalTail):
    """The central journal as the database pair has it: read from Patroni's leader, else the node that answered last.

    A synchronous standby has every committed record on its disk, but replays it a moment
    later: read there, the journal may lag what the halls were already told.
    """

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.folder = folder
        self.node = 0

    def new_records(self) -> list[Record]:
        if not (self.folder / "cluster.json").exists():
            return []
        leader = cluster.leader(self.folder)
        if leader in ("node0", "node1"):
            self.node = int(leader[-1])
        for index in (self.node, 1 - self.node):
            engine = create(cluster.database_url(self.folder, index), create_folder=False)
            try:
                records = list(table.read(engine, after=self.last))
            except Exception:
                continue  # that node is down, paused or not a database yet
            finally:
                engine.dispose()
            self.node = index
            if records:
                self.last = records[-1].seq
            return records
        return []


class ReplicaSimulation(Simulation):
    """A simulation whose central server is two processes over the database pair."""

    def __init__(self, plan: Plan, progress: Callable[[str], None] = lambda line: None) -> None:
        super().__init__(plan, progress)
        self.cluster_dir = self.home / "cluster"
        self.central_homes = [self.home / "central-0", self.home / "central-1"]
        self.central_home = self.central_homes[0]
        self.central_ports = [free_port(), free_port()]
        self.central_port = self.central_ports[0]
        self.centrals = [
            Child(f"central-{index}", python("from central_server.cli import central; central()", "serve", "--config",
                                             str(home / "central.toml")), home, up=CENTRAL_UP)
            for index, home in enumerate(self.central_homes)
        ]
        self.central = self.centrals[0]
        self.central_facts = CentralFacts(self.home / "unused")
        self.central_facts.tail = ClusterTail(self.cluster_dir)
        self.reports: list[RunReport] = []
        self._seen_balls: dict[str, list[int]] = {}
        self._replayed: set[str] = set()
        self.rng = random.Random(plan.seed)

    # --- Setting up -------------------------------------------------------------------

    def prepare(self) -> None:
        super().prepare()
        self.progress(f"starting the database pair in {self.cluster_dir}: etcd x3, Patroni and PostgreSQL 15 x2")
        try:
            cluster.start(self.cluster_dir, self.pki)
        except cluster.ClusterError as error:
            raise SimulationError(f"the database pair did not start: {error}") from None
        # One journal key for both processes: they sign one journal.
        key = self.central_homes[0] / "keys" / "journal-signing.pem"
        load_journal_key(key, create=True)
        home = self.central_homes[1]
        export_bundle(self.pki, CENTRAL_ID, home / "pki")
        (home / "keys").mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copy2(key, home / "keys" / "journal-signing.pem")
        self._write_central(with_games=False)

    def _write_central(self, *, with_games: bool) -> None:
        """Both processes' configurations: the simulation's, each with its home, port, node and database."""
        if not (self.cluster_dir / "cluster.json").exists():
            return  # prepare writes them once the pair is up
        super()._write_central(with_games=with_games)
        text = (self.central_homes[0] / "central.toml").read_text()
        for index, home in enumerate(self.central_homes):
            home.mkdir(parents=True, exist_ok=True)
            mine = re.sub(r'(?m)^home = ".*"$', f'home = "{home}"', text, count=1)
            mine = re.sub(r"(?m)^port = \d+$", f"port = {self.central_ports[index]}", mine, count=1)
            url = cluster.database_url(self.cluster_dir, index, home / "pki" / "ca.pem")
            mine = re.sub(r'(?m)^url = "sqlite:///.*"$', f'url = "{url}"', mine, count=1)
            mine += f"""
[replica]
node = "node{index}"
patroni = "{cluster.rest_url(self.cluster_dir, index)}"
drill = true
"""
            (home / "central.toml").write_text(mine)

    def _hall_config(self, template: str, hall_id: str) -> str:
        text = super()._hall_config(template, hall_id)
        single = f'host = "127.0.0.1"\nport = {self.central_ports[0]}\n'
        assert single in text
        endpoints = ", ".join(f'"127.0.0.1:{port}"' for port in self.central_ports)
        return text.replace(single, f"endpoints = [{endpoints}]\n")

    # --- Running ----------------------------------------------------------------------

    def _start_central(self) -> None:
        self.progress(f"starting the central server's processes on ports {self.central_ports}")
        self._start_centrals()

    def _start_centrals(self) -> None:
        """Both processes: the one beside Patroni's leader first (it may start the journal), then the other."""
        leader = self.leader()
        for index in (leader, 1 - leader):
            self.centrals[index].start(timeout=REJOIN_S)
        wait_for(lambda: self.centrals[leader].count(TOOK) >= 1, TAKEOVER_S, "the active process to take the leadership")

    def open_games(self) -> None:
        """Both processes started again with the plan's games in their configuration; the halls link again."""
        self.progress(f"scheduling {self.plan.games} network game(s): both central processes start with them")
        links = [h.child.count(LINKED) for h in self.halls]
        for child in self.centrals:
            child.stop()
        self._write_central(with_games=True)
        self._start_centrals()
        wait_for(lambda: all(h.linked(n + 1) for h, n in zip(self.halls, links)), 90,
                 "every hall to link to the central server again")

    def leader(self) -> int:
        """The index of Patroni's leader node (0 or 1)."""
        found = cluster.leader(self.cluster_dir)
        if found not in ("node0", "node1"):
            raise SimulationError(f"the database pair has no leader now: {cluster.status(self.cluster_dir)}")
        return int(str(found)[-1])

    def stop(self) -> None:
        for worker in self.workers:
            worker.terminate()
        for worker in self.workers:
            worker.stop(timeout=60)
        self._each_hall(lambda hall: hall.child.stop())
        for child in self.centrals:
            child.stop()
        self._stop_cluster()

    def kill_all(self) -> None:
        for child in [*self.workers, *(h.child for h in self.halls), *self.centrals]:
            if child.process is not None and child.process.returncode is None:
                try:
                    os.kill(child.process.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            child.kill()
        self._stop_cluster()

    def _stop_cluster(self) -> None:
        if (self.cluster_dir / "cluster.json").exists():
            for index in (0, 1):
                cluster.signal_node(self.cluster_dir, index, signal.SIGCONT)
            taken = cluster.stop(self.cluster_dir)
            if taken:
                self.progress(f"the database pair stopped, but ports are still taken: {taken}")

    # --- The runs -----------------------------------------------------------------------

    def execute(self, run: Run) -> RunReport:
        """One run, from the wait for its moment to the failed side back as the standby, then its checks."""
        victim = self.leader()
        report = RunReport(len(self.reports) + 1, run.kind, run.moment, f"node{victim}")
        self.reports.append(report)
        survivor = victim if run.kind == CENTRAL else 1 - victim
        took_before = self.centrals[survivor].count(TOOK)
        self.progress(f"run {report.number}: {run.kind} of {'the process beside ' if run.kind == CENTRAL else ''}"
                      f"node{victim} at the moment {run.moment}")
        report.moment_hit = self._wait_for_moment(run, victim)
        report.failed_ms = int(time.time() * 1000)
        started = time.monotonic()
        process = self.centrals[victim]
        if run.kind == KILL:
            process.kill()
            cluster.signal_node(self.cluster_dir, victim, signal.SIGKILL)
        elif run.kind == PAUSE:
            assert process.process is not None
            os.kill(process.process.pid, signal.SIGSTOP)
            cluster.signal_node(self.cluster_dir, victim, signal.SIGSTOP)
        else:
            process.kill()
            process.start(timeout=TAKEOVER_S)  # its supervisor starts it again at once
        if run.kind != CENTRAL:
            wait_for(lambda: cluster.leader(self.cluster_dir) == f"node{survivor}", PROMOTION_S,
                     f"Patroni to promote node{survivor}", interval=0.1)
            report.patroni_s = round(time.monotonic() - started, 2)
        if run.kind == CENTRAL:
            took_before = 0  # the lines of the process's new start
        wait_for(lambda: self.centrals[survivor].count(TOOK) > took_before, TAKEOVER_S,
                 f"the process beside node{survivor} to take the leadership", interval=0.05)
        report.taken_s = round(time.monotonic() - started, 2)
        took = [m for line in self.centrals[survivor].lines if (m := TOOK.search(line))][-1]
        report.cause, report.epoch = took.group(2).decode(), int(took.group(3))
        if run.kind == PAUSE:
            self._wake(victim, report)
        if run.kind != CENTRAL:
            if run.kind == KILL:
                cluster.restart_node(self.cluster_dir, victim)  # a woken node's Patroni runs on and demotes it
            self.centrals[victim].start(timeout=REJOIN_S)  # its supervisor starts the process again
            wait_for(lambda: self._rejoined(survivor, victim), REJOIN_S, f"node{victim} to rejoin as the standby",
                     interval=0.5)
            report.rejoined_s = round(time.monotonic() - started, 2)
        report.problems += self.check_run(report)
        self.progress(f"run {report.number}: {report.kind} at {report.moment}: Patroni {report.patroni_s} s, taken "
                      f"{report.taken_s} s ({report.cause}, epoch {report.epoch}), rejoined {report.rejoined_s} s; "
                      f"{'ok' if not report.problems else report.problems}")
        return report

    def _wait_for_moment(self, run: Run, victim: int) -> bool:
        """Wait for the run's moment; whether it came (else the failure comes at once, and says so)."""
        if run.moment == ANY:
            time.sleep(self.rng.uniform(0.0, 2.0))
            return True
        if run.moment == SALE:
            def in_burst() -> bool:
                now = time.time() * 1000
                return any(g.phase == "selling" and g.closes_at_ms is not None
                           and 500 <= g.closes_at_ms - now <= self.plan.burst_ms - 500
                           for g in self.central_facts.refresh().games.values())

            try:
                wait_for(in_burst, MOMENT_S, "a sale's buying burst", interval=0.1)
            except SimulationError:
                return False
            time.sleep(self.rng.uniform(0.0, 1.5))
            return True
        process = self.centrals[victim].process
        assert process is not None
        os.kill(process.pid, signal.SIGUSR1 if run.moment == BALL else signal.SIGUSR2)
        try:
            wait_for(lambda: _stopped(process.pid), MOMENT_S, f"the central process to stop after a {run.moment}",
                     interval=0.02)
        except SimulationError:
            return False
        return True

    def _wake(self, victim: int, report: RunReport) -> None:
        """The paused node and process wake after the takeover, once the new process drew a ball."""
        drawn = self._balls_committed()
        wait_for(lambda: self._balls_committed() > drawn, TAKEOVER_S, "a ball of the new process", interval=0.2)
        old = self.centrals[victim]
        cluster.signal_node(self.cluster_dir, victim, signal.SIGCONT)
        assert old.process is not None
        os.kill(old.process.pid, signal.SIGCONT)
        try:
            wait_for(lambda: not old.running, 60, "the woken process to stop by itself", interval=0.1)
        except SimulationError:
            report.problems.append(f"the woken central process beside node{victim} did not stop by itself")
            old.kill()
        status = old.reap()
        if not old.count(STOPPED_ACTING):
            report.problems.append(f"the woken central process beside node{victim} did not say it stopped acting "
                                   f"(exit status {status})")

    def _balls_committed(self) -> int:
        return sum(len(g.balls) for g in self.central_facts.refresh().games.values())

    def _rejoined(self, leader: int, standby: int) -> bool:
        found = cluster.status(self.cluster_dir)
        return (found.get("leader") == f"node{leader}" and found.get("sync_standby") == f"node{standby}"
                and self.centrals[standby].count(STANDBY) >= 1)

    # --- The checks after each run --------------------------------------------------------

    def check_run(self, report: RunReport) -> list[str]:
        """The issue's checks, once the halls caught up with the central server; the problems found."""
        problems: list[str] = []
        try:
            wait_for(self._settled, 120, "every hall to catch up and settle what it holds", interval=0.5)
        except SimulationError as error:
            problems.append(str(error))
        # The halls are read before the central journal: a hall holds only what the central server committed
        # first, so the journal read after them covers them, though the programme plays on meanwhile.  A
        # synchronous standby read while no leader answers replays a moment late: the comparison is made again
        # for a while before a difference is a problem.
        compared: list[str] = []
        deadline = time.monotonic() + AGREE_S
        while True:
            halls = [(hall, hall.facts.refresh()) for hall in self.halls]
            central = self.central_facts.refresh()
            compared = self._compare(central, halls)
            if not compared or time.monotonic() >= deadline:
                break
            time.sleep(1)
        problems += compared
        for game_id, game in central.games.items():
            seen = self._seen_balls.get(game_id, [])
            if game.balls[: len(seen)] != seen:
                problems.append(f"{game_id}: balls changed from {seen} to {game.balls}")
            if len(set(game.balls)) != len(game.balls):
                problems.append(f"{game_id}: a ball drawn twice: {game.balls}")
            self._seen_balls[game_id] = list(game.balls)
        records, _, library = verified_journal(self._active_config())
        problems += self._replays(records, library)
        problems += _epochs(records)
        return problems

    def _compare(self, central: CentralFacts, halls: list[tuple[HallPlace, HallFacts]]) -> list[str]:
        """What the halls hold that the central journal does not say: balls, captures, credits."""
        problems: list[str] = []
        for hall, facts in halls:
            for game_id, game in central.games.items():
                mine = facts.games.get(game_id)
                if mine is not None and mine.balls != game.balls[: len(mine.balls)]:
                    problems.append(f"{hall.hall_id} {game_id}: balls {mine.balls} are not the central server's "
                                    f"{game.balls}")
            confirmed = {rid: c for g in central.games.values() for (h, rid), c in g.confirmed.items()
                         if h == hall.hall_id}
            for rid, hold in facts.holds.items():
                if hold["status"] == "settled twice":
                    problems.append(f"{hall.hall_id}: hold {rid} settled twice")
                elif hold["status"] == "bought" and (rid not in confirmed
                                                    or confirmed[rid]["amount_cents"] != hold["captured"]):
                    problems.append(f"{hall.hall_id}: {rid} captured {hold['captured']} but the central journal "
                                    f"confirms {confirmed.get(rid, {}).get('amount_cents')}")
            for (terminal, request), holds in facts.by_terminal_request.items():
                if sum(1 for h in holds if facts.holds[h]["status"] == "bought") > 1:
                    problems.append(f"{hall.hall_id}: {terminal} {request} charged more than once")
            for game_id, mine in facts.games.items():
                seqs = [c["seq"] for c in mine.credits]
                if len(set(seqs)) != len(seqs):
                    problems.append(f"{hall.hall_id} {game_id}: a credit paid twice: {sorted(seqs)}")
                owed = dict(central.games[game_id].credits_of(hall.hall_id)) if game_id in central.games else {}
                for credit in mine.credits:
                    if owed.get(credit["seq"]) != credit["amount_cents"]:
                        problems.append(f"{hall.hall_id} {game_id}: credit {credit['seq']} paid "
                                        f"{credit['amount_cents']}, owed {owed.get(credit['seq'])}")
        return problems

    def _settled(self) -> bool:
        central = self.central_facts.refresh()
        for hall in self.halls:
            facts = hall.facts.refresh()
            for game_id, game in central.games.items():
                mine = facts.games.get(game_id)
                if mine is None:
                    if game.phase in ("scheduled", "selling") or missed(game, hall.hall_id):
                        continue
                    return False
                if len(mine.balls) < len(game.balls) and game.phase in ("drawing", "last_prize_won", "closed"):
                    return False
                if len(mine.balls) > len(game.balls):  # the journal as read is behind (a standby replays late)
                    return False
                if game.phase not in ("scheduled", "selling") and facts.pending_holds(game_id):
                    return False
                if game.over and facts.credits_of(game_id) != game.credits_of(hall.hall_id):
                    return False
        return True

    def _active_config(self) -> Any:
        return load_config(self.central_homes[self.leader()] / "central.toml")

    def _replays(self, records: list[Record], library: dict[str, Any]) -> list[str]:
        """Every game closed since the last run: its audit export, replayed, equals what it recorded (to the cent)."""
        problems = []
        games, spans, _ = rebuilt_games(records, library)
        for game_id, game in games.items():
            if game_id in self._replayed or game.phase is not Phase.CLOSED or game_id not in spans:
                continue
            if "bingo" not in game.prizes and game.cards_in_play == 0:
                self._replayed.add(game_id)
                continue
            day = time.strftime("%Y-%m-%d", time.gmtime(spans[game_id][1].time_ms / 1000))
            layouts = library[game.config.series_label]
            try:
                replayed = json.loads(replay_json(json.dumps(scenario(day, [game], layouts))))
                if replayed != result(day, [game]):
                    problems.append(f"{game_id}: its audit export does not replay to what it recorded")
            except Exception as error:
                problems.append(f"{game_id}: its audit export cannot be replayed: {error}")
            self._replayed.add(game_id)
        return problems

    # --- The figures ------------------------------------------------------------------

    def takeover_times(self, reports: list[dict[str, Any]]) -> None:
        """Each run's failure to the next ball shown on the terminals: the first ball committed after it,
        once every terminal that received it showed it."""
        central = self.central_facts.refresh()
        shown: list[tuple[float, float]] = []  # (committed ms, last terminal's arrival ms)
        for game in central.games.values():
            for index, committed in enumerate(game.ball_times_ms):
                arrivals = [a for r in reports for a in r["balls"].get(game.game_id, {}).get(str(index + 1), [])]
                if arrivals:
                    shown.append((committed, max(arrivals)))
        shown.sort()
        for report in self.reports:
            after = [arrival for committed, arrival in shown if committed > report.failed_ms]
            if after:
                report.takeover_s = round((after[0] - report.failed_ms) / 1000, 2)


def _epochs(records: list[Record]) -> list[str]:
    """The journal's epochs never go back: nothing a fenced process wrote is in it."""
    held, problems = 0, []
    for record in records:
        epoch = record.payload.get("epoch")
        if epoch is None:
            continue
        if epoch < held:
            problems.append(f"record {record.seq} ({record.type}) carries epoch {epoch} after epoch {held}")
        held = max(held, epoch)
    return problems


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP): state ``T``."""
    return process_state(pid) in ("T", "t")


def drill_plan(home: Path, runs: list[Run], seed: int = 7) -> Plan:
    """The simulation a campaign of ``runs`` plays on: games enough to last it, sales overlapping draws."""
    sale_ms = 16_000
    duration = sum(RUN_S[run.kind] for run in runs) + 60
    games = max(3, min(50, -(-duration * 1000 // (sale_ms + 2_000)) + 2))
    return Plan(home=home, halls=2, terminals=3, games=games, seed=seed, mode="burst", burst_ms=5_000, sale_ms=sale_ms,
                ball_ms=1_000, opens_after_ms=5_000, one_after_another=False, buys=(1, 2), quantities=(1, 4))


def drill(home: Path, runs: list[Run], seed: int = 7,
          progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run the campaign ``runs`` on a new replicated set under ``home``; the summary (JSON-able)."""
    sim = ReplicaSimulation(drill_plan(home, runs, seed), progress)
    sim.prepare()
    try:
        sim.start()
        sim.open_games()
        wait_for(lambda: any(g.phase == "selling" for g in sim.central_facts.refresh().games.values()), 90,
                 "the first sale to open")
        for run in runs:
            sim.execute(run)
        sim.progress("the runs are over: every game is played to its end")
        sim.wait_played()
        sim.progress("stopping every process")
        sim.stop()
    except BaseException:
        sim.kill_all()
        raise
    return drill_summary(sim)


def drill_summary(sim: ReplicaSimulation) -> dict[str, Any]:
    """The issue's summary: runs, confirmed purchases, lost, doubled, balls changed, prizes doubled, takeover times."""
    reports = sim.terminal_reports()
    sim.takeover_times(reports)
    summary = sim.summary()
    central = sim.central_facts.refresh()
    confirmed_at_terminals = [p for r in reports for p in r["purchases"] if p["outcome"] == "confirmed"]
    central_confirmed = {(h, rid) for g in central.games.values() for (h, rid) in g.confirmed}
    lost = doubled = 0
    for hall in sim.halls:
        facts = hall.facts.refresh()
        for purchase in (p for p in confirmed_at_terminals if p["hall"] == hall.hall_id):
            holds = facts.by_terminal_request.get((purchase["terminal"], purchase["request"]), [])
            charged = [h for h in holds if facts.holds[h]["status"] in ("bought", "settled twice")]
            if not any((hall.hall_id, h) in central_confirmed for h in charged):
                lost += 1  # a terminal was told confirmed; the central journal does not hold it
            if len(charged) > 1 or any(facts.holds[h]["status"] == "settled twice" for h in charged):
                doubled += 1  # charged twice for one request
    problems = [problem for report in sim.reports for problem in report.problems]
    changed = sum(1 for problem in problems if "balls" in problem or "drawn twice" in problem)
    prizes_doubled = sum(1 for problem in problems if "paid twice" in problem)
    summary["cpu_s"]["central"] = round(sum(child.cpu_s for child in sim.centrals), 2)
    by_kind = {kind: [r for r in sim.reports if r.kind == kind] for kind in (KILL, PAUSE, CENTRAL)}

    def spread(values: list[float | None]) -> dict[str, float | None]:
        known = sorted(v for v in values if v is not None)
        return {"median": known[len(known) // 2] if known else None, "worst": known[-1] if known else None}

    return {
        "runs": len(sim.reports),
        "kills": len(by_kind[KILL]), "pauses": len(by_kind[PAUSE]), "central_kills": len(by_kind[CENTRAL]),
        "confirmed_purchases": len(confirmed_at_terminals),
        "lost": lost,
        "doubled": doubled,
        "balls_changed": changed,
        "prizes_doubled": prizes_doubled,
        "takeover_s": [r.takeover_s for r in sim.reports],
        "patroni_s": [r.patroni_s for r in sim.reports],
        "takeover": {kind: {"to_next_ball_s": spread([r.takeover_s for r in runs]),
                            "patroni_promotion_s": spread([r.patroni_s for r in runs])}
                     for kind, runs in by_kind.items() if runs},
        "run_reports": [asdict(r) for r in sim.reports],
        "checks": {**summary["checks"], "every run's checks": not problems,
                   "every moment hit": all(r.moment_hit for r in sim.reports)},
        "problems": (problems + summary["problems"])[:20],
        "purchases": summary["purchases"],
        "wall_s": summary["wall_s"],
        "ok": summary["ok"] and not problems and not lost and not doubled,
    }


__all__ = ["ANY", "BALL", "CENTRAL", "KILL", "PAUSE", "PRIZE", "SALE", "ReplicaSimulation", "Run", "RunReport",
           "campaign", "drill", "drill_plan", "drill_summary"]

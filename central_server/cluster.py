"""The central server's database pair on one machine: three etcd members and two
PostgreSQL 15 nodes, each run by Patroni, all on loopback (R92.6, docs/replica.md).

``start`` writes everything under one folder (``cluster.json`` holds the ports and the
process ids; ``etcdN/`` and ``nodeN/`` the data and the logs), waits for a leader and
a synchronous standby and returns; ``stop`` ends every process it started (Patroni
first, which stops its PostgreSQL, then etcd) and checks each port is free again;
``status`` reads Patroni's REST API ``/cluster``.

PostgreSQL and Patroni refuse to run as root: under root every process runs as the
``postgres`` system user (Debian's postgresql package creates it), the folder is
given to that user.  Patroni comes from the virtual environment that
``scripts/patroni-venv.sh`` makes with Debian's own ``/usr/bin/python3``.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server_kit.ports import alive, listenable, reserve_port

#: Where ``scripts/patroni-venv.sh`` puts Patroni (readable by the ``postgres`` user).
PATRONI_VENV = Path("/opt/bingo/patroni")
#: Patroni's smallest ttl; with loop_wait 2 a killed leader is replaced in about 20 s.
TTL = 20
LOOP_WAIT = 2
SCOPE = "bingo-central"
SUPERUSER = "bingo"
OWNER = "postgres"
#: The database the central server's processes use on the pair (made by ``start``).
DATABASE = "central"


class ClusterError(Exception):
    """The set could not be started, stopped or read; the message says why."""


def server_binaries() -> Path:
    """Debian's PostgreSQL 15 server binaries."""
    path = Path("/usr/lib/postgresql/15/bin")
    if not (path / "postgres").exists():
        raise ClusterError(f"PostgreSQL 15 is not installed ({path}); run scripts/system-deps.sh")
    return path


@dataclass
class Layout:
    """The ports and files of one set under ``folder``."""

    folder: Path
    state: dict[str, Any]

    @property
    def state_file(self) -> Path:
        return self.folder / "cluster.json"

    def save(self) -> None:
        self.state_file.write_text(json.dumps(self.state, indent=2))

    @classmethod
    def load(cls, folder: Path) -> "Layout":
        path = folder / "cluster.json"
        if not path.exists():
            raise ClusterError(f"no cluster in {folder} (no cluster.json)")
        return cls(folder, json.loads(path.read_text()))

    def rest_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{node['rest']}" for node in self.state["nodes"]]


def _owner() -> pwd.struct_passwd | None:
    return pwd.getpwnam(OWNER) if os.geteuid() == 0 else None


def _spawn(argv: list[str], log: Path, cwd: Path) -> int:
    owner = _owner()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(cwd)}
    with open(log, "ab") as out:
        if owner is not None:
            os.chown(log, owner.pw_uid, owner.pw_gid)
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=cwd, env=env, start_new_session=True,
                                       user=owner.pw_uid, group=owner.pw_gid, extra_groups=[])
        else:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=cwd, env=env, start_new_session=True)
    return process.pid


def _etcd_argv(index: int, members: list[dict[str, int]], folder: Path) -> list[str]:
    member = members[index]
    initial = ",".join(f"etcd{i}=http://127.0.0.1:{m['peer']}" for i, m in enumerate(members))
    return [
        "/usr/bin/etcd", "--name", f"etcd{index}", "--data-dir", str(folder / f"etcd{index}" / "data"),
        "--listen-client-urls", f"http://127.0.0.1:{member['client']}",
        "--advertise-client-urls", f"http://127.0.0.1:{member['client']}",
        "--listen-peer-urls", f"http://127.0.0.1:{member['peer']}",
        "--initial-advertise-peer-urls", f"http://127.0.0.1:{member['peer']}",
        "--initial-cluster", initial, "--initial-cluster-state", "new",
        "--initial-cluster-token", SCOPE, "--enable-v2=false",
    ]


def _patroni_config(index: int, layout: Layout) -> dict[str, Any]:
    state = layout.state
    node = state["nodes"][index]
    home = layout.folder / f"node{index}"
    hosts = [f"127.0.0.1:{m['client']}" for m in state["etcd"]]
    return {
        "scope": SCOPE,
        "namespace": "/bingo/",
        "name": f"node{index}",
        "restapi": {"listen": f"127.0.0.1:{node['rest']}", "connect_address": f"127.0.0.1:{node['rest']}"},
        "etcd3": {"hosts": hosts},
        "bootstrap": {
            "dcs": {
                "ttl": TTL, "loop_wait": LOOP_WAIT, "retry_timeout": 5,
                "maximum_lag_on_failover": 1048576,
                "synchronous_mode": True,
                "synchronous_mode_strict": False,
                "postgresql": {"use_pg_rewind": True, "use_slots": True,
                               "parameters": {"wal_level": "replica", "hot_standby": "on", "wal_log_hints": "on",
                                              "max_wal_senders": 10, "max_replication_slots": 10,
                                              "synchronous_commit": "on"}},
            },
            "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}, "data-checksums"],
        },
        "postgresql": {
            "listen": f"127.0.0.1:{node['pg']}",
            "connect_address": f"127.0.0.1:{node['pg']}",
            "data_dir": str(home / "data"),
            "bin_dir": str(server_binaries()),
            "pgpass": str(home / "pgpass"),
            "authentication": {
                "superuser": {"username": SUPERUSER, "password": state["password"]},
                "replication": {"username": "replicator", "password": state["replication_password"]},
                "rewind": {"username": "rewinder", "password": state["replication_password"]},
            },
            "parameters": {"unix_socket_directories": str(home)},
            "pg_hba": [
                "local all all trust",
                "host replication replicator 127.0.0.1/32 scram-sha-256",
                "host all all 127.0.0.1/32 scram-sha-256",
            ],
        },
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
    }


def _get_json(url: str, timeout: float = 2.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - loopback only
        return json.loads(answer.read())


def cluster_view(layout: Layout) -> dict[str, Any] | None:
    """Patroni's ``/cluster`` from the first node that answers, or None."""
    for url in layout.rest_urls():
        try:
            return dict(_get_json(url + "/cluster"))
        except (OSError, ValueError):
            continue
    return None


def summary(view: dict[str, Any]) -> dict[str, Any]:
    """The leader, the synchronous standby and each replica's lag (bytes) from ``/cluster``."""
    members = view.get("members", [])
    leader = next((m for m in members if m.get("role") == "leader" and m.get("state") == "running"), None)
    sync = next((m for m in members if m.get("role") == "sync_standby"
                 and m.get("state") in ("streaming", "running")), None)
    return {
        "leader": leader and leader["name"],
        "leader_port": leader and leader.get("port"),
        "sync_standby": sync and sync["name"],
        "lag": {m["name"]: m.get("lag") for m in members if m.get("role") != "leader"},
        "members": [{k: m.get(k) for k in ("name", "role", "state", "host", "port", "timeline", "lag")} for m in members],
    }


def _check_installed(venv: Path = PATRONI_VENV) -> None:
    if not Path("/usr/bin/etcd").exists():
        raise ClusterError("etcd is not installed (/usr/bin/etcd); run scripts/system-deps.sh")
    if not (venv / "bin" / "patroni").exists():
        raise ClusterError(f"Patroni is not installed in {venv}; run scripts/patroni-venv.sh")
    server_binaries()


def start(folder: Path, timeout: float = 90.0, venv: Path = PATRONI_VENV) -> dict[str, Any]:
    """Start the set under ``folder`` (Patroni from ``venv``) and wait for a leader and a synchronous standby."""
    _check_installed(venv)
    folder = folder.resolve()
    if (folder / "cluster.json").exists():
        layout = Layout.load(folder)
        if any(alive(pid) for pid in _pids(layout)):
            raise ClusterError(f"a cluster is already running in {folder}; stop it first")
    folder.mkdir(parents=True, exist_ok=True)
    owner = _owner()
    state: dict[str, Any] = {
        "etcd": [{"client": reserve_port(), "peer": reserve_port()} for _ in range(3)],
        "nodes": [{"rest": reserve_port(), "pg": reserve_port()} for _ in range(2)],
        "password": secrets.token_hex(16),
        "replication_password": secrets.token_hex(16),
        "pids": {},
        "patroni": str(venv / "bin" / "patroni"),
    }
    layout = Layout(folder, state)
    for index in range(3):
        (folder / f"etcd{index}").mkdir(exist_ok=True)
    for index in range(2):
        (folder / f"node{index}").mkdir(exist_ok=True)
    layout.save()
    os.chmod(folder / "cluster.json", 0o600)
    if owner is not None:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, owner.pw_uid, owner.pw_gid)
        probe = subprocess.run(["runuser", "-u", OWNER, "--", "test", "-w", str(folder)], check=False)
        if probe.returncode != 0:
            raise ClusterError(f"the {OWNER} user cannot write {folder}: choose a --dir whose parents it can enter")
    os.chmod(folder, 0o700)
    try:
        for index in range(3):
            state["pids"][f"etcd{index}"] = _spawn(_etcd_argv(index, state["etcd"], folder),
                                                   folder / f"etcd{index}" / "etcd.log", folder / f"etcd{index}")
        layout.save()
        _wait(lambda: all(_etcd_healthy(m["client"]) for m in state["etcd"]), 30, "etcd members healthy", layout)
        for index in range(2):
            home = folder / f"node{index}"
            config = home / "patroni.yml"
            config.write_text(json.dumps(_patroni_config(index, layout), indent=2))  # YAML is a superset of JSON
            os.chmod(config, 0o600)
            if owner is not None:
                os.chown(config, owner.pw_uid, owner.pw_gid)
            state["pids"][f"node{index}"] = _spawn([state["patroni"], str(config)],
                                                   home / "patroni.log", home)
            layout.save()
            if index == 0:  # the first node bootstraps; the second then clones it
                _wait(lambda: _leader_ready(layout), timeout, "a leader", layout)
        _wait(lambda: _sync_ready(layout), timeout, "a synchronous standby", layout)
        _create_database(layout)
    except BaseException:
        stop(folder)
        raise
    return status(folder)


def _create_database(layout: Layout) -> None:
    """The central server's database on the leader (replicated to the standby like everything)."""
    import psycopg

    found = summary(cluster_view(layout) or {})
    index = int(str(found["leader"]).removeprefix("node"))
    with psycopg.connect(**connection_info(layout.folder, index), autocommit=True, connect_timeout=10) as db:
        if db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone() is None:
            db.execute(f"CREATE DATABASE {DATABASE}")


def restart_node(folder: Path, index: int) -> None:
    """Start node ``index``'s Patroni again (after it was stopped or killed); it rejoins the set."""
    layout = Layout.load(folder.resolve())
    name = f"node{index}"
    if alive(int(layout.state["pids"][name])):
        raise ClusterError(f"{name} is still running")
    home = layout.folder / name
    layout.state["pids"][name] = _spawn([layout.state["patroni"], str(home / "patroni.yml")],
                                        home / "patroni.log", home)
    layout.save()


def _etcd_healthy(port: int) -> bool:
    try:
        return bool(_get_json(f"http://127.0.0.1:{port}/health").get("health") == "true")
    except (OSError, ValueError):
        return False


def _leader_ready(layout: Layout) -> bool:
    view = cluster_view(layout)
    return view is not None and summary(view)["leader"] is not None


def _sync_ready(layout: Layout) -> bool:
    view = cluster_view(layout)
    if view is None:
        return False
    found = summary(view)
    return found["leader"] is not None and found["sync_standby"] is not None


def _wait(condition: Any, timeout: float, what: str, layout: Layout) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        dead = [name for name, pid in layout.state["pids"].items() if not alive(pid)]
        if dead:
            raise ClusterError(f"waiting for {what}: {', '.join(dead)} exited (see its log under {layout.folder})")
        time.sleep(0.5)
    raise ClusterError(f"no {what} after {timeout:.0f} s (logs under {layout.folder})")


def _pids(layout: Layout) -> list[int]:
    return [int(pid) for pid in layout.state.get("pids", {}).values()]


def _postmaster_pids(layout: Layout) -> list[int]:
    found = []
    for index in range(len(layout.state.get("nodes", []))):
        pidfile = layout.folder / f"node{index}" / "data" / "postmaster.pid"
        try:
            found.append(int(pidfile.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _signal(pids: list[int], which: signal.Signals) -> None:
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, which)
            except ProcessLookupError:
                pass


def _end(pids: list[int], grace: float) -> None:
    _signal(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        _reap()
        time.sleep(0.2)
    _signal(pids, signal.SIGKILL)
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop(folder: Path) -> list[int]:
    """Stop every process of the set under ``folder``; the ports still taken (none when all is well)."""
    layout = Layout.load(folder.resolve())
    pids = layout.state.get("pids", {})
    _end([int(pid) for name, pid in pids.items() if name.startswith("node")], 30)
    _end(_postmaster_pids(layout), 15)  # a PostgreSQL left behind by a killed Patroni
    _end([int(pid) for name, pid in pids.items() if name.startswith("etcd")], 15)
    ports = [p for m in layout.state["etcd"] for p in (m["client"], m["peer"])]
    ports += [p for n in layout.state["nodes"] for p in (n["rest"], n["pg"])]
    deadline = time.monotonic() + 10
    taken = [p for p in ports if not listenable(p)]
    while taken and time.monotonic() < deadline:
        time.sleep(0.2)
        taken = [p for p in ports if not listenable(p)]
    return taken


def leader(folder: Path) -> str | None:
    """Patroni's running leader (``node0``, ``node1``), or None when no node answers or none leads."""
    view = cluster_view(Layout.load(folder.resolve()))
    return summary(view)["leader"] if view is not None else None


def status(folder: Path) -> dict[str, Any]:
    """The leader, the synchronous standby, the replication lag and each process's liveness."""
    layout = Layout.load(folder.resolve())
    view = cluster_view(layout)
    found: dict[str, Any] = summary(view) if view is not None else {"leader": None, "sync_standby": None, "lag": {}, "members": []}
    found["processes"] = {name: alive(int(pid)) for name, pid in layout.state.get("pids", {}).items()}
    found["nodes"] = layout.state["nodes"]
    found["etcd"] = layout.state["etcd"]
    return found


def database_url(folder: Path, index: int) -> str:
    """The URL a central server process beside node ``index`` uses: that node's central database."""
    layout = Layout.load(folder.resolve())
    return (f"postgresql://{SUPERUSER}:{layout.state['password']}@127.0.0.1:{layout.state['nodes'][index]['pg']}"
            f"/{DATABASE}?connect_timeout=5")


def rest_url(folder: Path, index: int) -> str:
    """Node ``index``'s Patroni REST API."""
    return Layout.load(folder.resolve()).rest_urls()[index]


def node_processes(folder: Path, index: int) -> list[int]:
    """Node ``index``'s processes: its Patroni, its PostgreSQL's postmaster and every process of that
    postmaster (each backend is a process group of its own), those alive now."""
    layout = Layout.load(folder.resolve())
    found = [int(layout.state["pids"][f"node{index}"])]
    try:
        postmaster = int((layout.folder / f"node{index}" / "data" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        postmaster = None
    if postmaster is not None and alive(postmaster):
        found.append(postmaster)
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return [pid for pid in found if alive(pid)]


def signal_node(folder: Path, index: int, which: signal.Signals) -> list[int]:
    """Send ``which`` to every process of node ``index`` (Patroni first, then its PostgreSQL): SIGKILL
    is a machine that died, SIGSTOP one that froze, SIGCONT it waking up; the pids signalled."""
    pids = node_processes(folder, index)
    if which is signal.SIGCONT:
        pids.reverse()  # PostgreSQL first: Patroni wakes to a database that answers
    _signal(pids, which)
    return pids


def connection_info(folder: Path, index: int) -> dict[str, Any]:
    """psycopg connection keywords for node ``index`` (the superuser, over loopback TCP)."""
    layout = Layout.load(folder.resolve())
    return {"host": "127.0.0.1", "port": layout.state["nodes"][index]["pg"], "user": SUPERUSER,
            "password": layout.state["password"], "dbname": "postgres"}

"""The central server's database pair on one machine: three etcd members and two
PostgreSQL 15 nodes, each run by Patroni, all on loopback (R92.6, docs/replica.md).

``start`` writes everything under one folder (``cluster.json`` holds the ports and the
process ids; ``etcdN/`` and ``nodeN/`` the data and the logs), waits for a leader and
a synchronous standby and returns; ``stop`` ends every process it started (Patroni
first, which stops its PostgreSQL, then etcd) and checks each port is free again;
``status`` reads Patroni's REST API ``/cluster``.

**Every member authenticated and encrypted** (docs/replica.md, "Who may reach the
set").  ``start`` issues the set's certificates with the operator's authority (role
``cluster``) and copies them to ``tls/``: etcd speaks TLS on its client and peer URLs
and admits only the set's own certificates; Patroni's REST API speaks TLS, admits only
certificates of the authority and asks a password for every unsafe method; PostgreSQL
runs ``ssl=on`` and admits only TLS connections with a ``scram-sha-256`` password.  The central server's processes connect as the owner of
the ``central`` database, a role that is not a superuser and creates no database or
role; ``replicator`` has the REPLICATION right only; Patroni's superuser password, the
replication and rewind passwords and the REST API's password are in each node's
``patroni.yml`` alone.

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
import shutil
import signal
import ssl
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from server_kit import pki
from server_kit.pki.folder import load_credentials
from server_kit.private import make_private
from server_kit.ports import alive, listenable, reserve_port

#: Where ``scripts/patroni-venv.sh`` puts Patroni (readable by the ``postgres`` user).
PATRONI_VENV = Path("/opt/bingo/patroni")
#: Patroni's smallest ttl; with loop_wait 2 a killed leader is replaced in about 20 s.
TTL = 20
LOOP_WAIT = 2
SCOPE = "bingo-central"
#: Patroni's superuser (its password only in each node's patroni.yml).
SUPERUSER = "bingo"
#: The user the set's processes run as under root.
OWNER = "postgres"
#: The database the central server's processes use on the pair (made by ``start``).
DATABASE = "central"
#: Its owner, the role the central server's processes connect as: not a superuser.
DATABASE_OWNER = "central"
#: The streaming replication role (REPLICATION only) and pg_rewind's (a few functions only).
REPLICATOR, REWINDER = "replicator", "rewinder"
#: The user an unsafe method of Patroni's REST API (PATCH /config, POST /switchover) needs.
REST_USER = "patroni"
#: The set's name when none is given: its certificates are ``NAME-etcd0`` ... ``NAME-admin``.
DEFAULT_NAME = "central-db"
#: The certificates' folder in the set's folder (a PKI folder's layout: ca.pem, crl.pem, certs/, keys/).
TLS_FOLDER = "tls"
#: The certificate ``bingo central cluster`` itself presents (status, readiness).
ADMIN = "admin"
ETCD_MEMBERS, NODES = 3, 2


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
        return [f"https://127.0.0.1:{node['rest']}" for node in self.state["nodes"]]

    @property
    def tls(self) -> pki.PkiFolder:
        return pki.PkiFolder(self.folder / TLS_FOLDER)

    @property
    def name(self) -> str:
        return str(self.state["name"])

    def certificate(self, member: str) -> str:
        """The name of ``member``'s certificate (``etcd0``, ``node1``, ``admin``)."""
        return f"{self.name}-{member}"

    @property
    def etcd_clients(self) -> Path:
        """The certificates etcd admits from a client: exactly the set's (a list, not an authority)."""
        return self.tls.root / "etcd-clients.pem"

    @property
    def etcd_peers(self) -> Path:
        """The certificates etcd admits from a peer: its members'."""
        return self.tls.root / "etcd-peers.pem"

    def tls_files(self, member: str) -> tuple[str, str, str]:
        """``member``'s certificate, its key and the authority's certificate, as paths."""
        name = self.certificate(member)
        return str(self.tls.cert(name)), str(self.tls.key(name)), str(self.tls.ca_cert)

    def context(self) -> ssl.SSLContext:
        """TLS as ``bingo central cluster`` itself: the admin certificate, every member's checked."""
        try:
            return pki.client_ssl_context(self.tls.root, self.certificate(ADMIN))
        except pki.PkiError as error:
            raise ClusterError(f"the set's certificates in {self.tls.root} cannot be used: {error}") from None


ETCD = [f"etcd{i}" for i in range(ETCD_MEMBERS)]
#: Who speaks to etcd as a client: its members themselves (their gRPC gateway), Patroni, this tool.
ETCD_CLIENTS = [*ETCD, *(f"node{i}" for i in range(NODES)), ADMIN]


def _issue_certificates(authority: Path, layout: Layout) -> None:
    """Each member's certificate from the operator's authority (role ``cluster``; issued once, kept in
    the authority's folder and used again by a later set of the same name), copied with its key into
    the set's ``tls/``; and the lists of certificates etcd admits (:func:`_etcd_argv`)."""
    folder = pki.PkiFolder(authority)
    shutil.rmtree(layout.tls.root, ignore_errors=True)  # what a start that failed earlier left
    try:
        for member in ETCD_CLIENTS:
            name = layout.certificate(member)
            if not folder.cert(name).exists():
                pki.issue_certificate(authority, "cluster", name)
            pki.export_bundle(authority, name, layout.tls.root)
            role = load_credentials(layout.tls.root, name).role
            if role is not pki.Role.cluster:
                raise ClusterError(f"the certificate {name} in {authority} is a {role} certificate, not a member "
                                   f"of a database set's (cluster); revoke it (bingo pki revoke {name}) or start the "
                                   "set under another --name")
    except pki.PkiError as error:
        raise ClusterError(f"the set's certificates: {error}") from None
    for path, members in ((layout.etcd_clients, ETCD_CLIENTS), (layout.etcd_peers, ETCD)):
        path.write_bytes(b"".join(layout.tls.cert(layout.certificate(member)).read_bytes() for member in members))


def _owner() -> pwd.struct_passwd | None:
    return pwd.getpwnam(OWNER) if os.geteuid() == 0 else None


def _spawn(argv: list[str], log: Path, cwd: Path) -> int:
    owner = _owner()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(cwd)}
    with os.fdopen(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as out:
        if owner is not None:
            os.chown(log, owner.pw_uid, owner.pw_gid)
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=cwd, env=env, start_new_session=True,
                                       user=owner.pw_uid, group=owner.pw_gid, extra_groups=[])
        else:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=cwd, env=env, start_new_session=True)
    return process.pid


def _etcd_argv(index: int, layout: Layout) -> list[str]:
    """etcd member ``index``: TLS on its client and peer URLs, and a client or peer admitted only with
    one of the set's own certificates, not on the authority's revocation list.

    etcd's trusted lists are the set's certificates themselves, not the operator's authority (which
    would admit every hall, terminal and staff certificate): Go takes a certificate in its trusted
    pool as an anchor of its own.  (etcd's ``--client-cert-allowed-hostname`` cannot do it: etcd
    3.4's gRPC gateway, which Patroni's etcd3 client speaks to, is then refused by its own member.)
    """
    members = layout.state["etcd"]
    member = members[index]
    cert, key, _ = layout.tls_files(f"etcd{index}")
    crl = str(layout.tls.crl)
    initial = ",".join(f"etcd{i}=https://127.0.0.1:{m['peer']}" for i, m in enumerate(members))
    return [
        "/usr/bin/etcd", "--name", f"etcd{index}", "--data-dir", str(layout.folder / f"etcd{index}" / "data"),
        "--listen-client-urls", f"https://127.0.0.1:{member['client']}",
        "--advertise-client-urls", f"https://127.0.0.1:{member['client']}",
        "--listen-peer-urls", f"https://127.0.0.1:{member['peer']}",
        "--initial-advertise-peer-urls", f"https://127.0.0.1:{member['peer']}",
        "--initial-cluster", initial, "--initial-cluster-state", "new",
        "--initial-cluster-token", SCOPE, "--enable-v2=false",
        "--cert-file", cert, "--key-file", key, "--trusted-ca-file", str(layout.etcd_clients),
        "--client-cert-auth", "--client-crl-file", crl,
        "--peer-cert-file", cert, "--peer-key-file", key, "--peer-trusted-ca-file", str(layout.etcd_peers),
        "--peer-client-cert-auth", "--peer-crl-file", crl,
    ]


def _patroni_config(index: int, layout: Layout, secrets_: dict[str, str]) -> dict[str, Any]:
    """Node ``index``'s patroni.yml: the only place of Patroni's superuser, replication, rewind and
    REST API passwords (``secrets_``)."""
    state = layout.state
    node = state["nodes"][index]
    home = layout.folder / f"node{index}"
    hosts = [f"127.0.0.1:{m['client']}" for m in state["etcd"]]
    cert, key, ca = layout.tls_files(f"node{index}")
    # Every connection Patroni, pg_basebackup and pg_rewind make checks the node it reaches.
    verified = {"sslmode": "verify-full", "sslrootcert": ca}
    return {
        "scope": SCOPE,
        "namespace": "/bingo/",
        "name": f"node{index}",
        "restapi": {"listen": f"127.0.0.1:{node['rest']}", "connect_address": f"127.0.0.1:{node['rest']}",
                    # Its certificate also authenticates this node to the other's REST API.
                    "certfile": cert, "keyfile": key, "cafile": ca, "verify_client": "required",
                    "authentication": {"username": REST_USER, "password": secrets_["rest"]}},
        "ctl": {"certfile": cert, "keyfile": key, "cacert": ca, "insecure": False},
        "etcd3": {"hosts": hosts, "protocol": "https", "cacert": ca, "cert": cert, "key": key},
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
            # A clone starts from an immediate checkpoint on the leader, not a spread one.
            "basebackup": [{"checkpoint": "fast"}],
            "pgpass": str(home / "pgpass"),
            "authentication": {
                "superuser": {"username": SUPERUSER, "password": secrets_["superuser"], **verified},
                "replication": {"username": REPLICATOR, "password": secrets_["replication"], **verified},
                "rewind": {"username": REWINDER, "password": secrets_["rewind"], **verified},
            },
            "parameters": {"unix_socket_directories": str(home), "unix_socket_permissions": "0700", "ssl": "on", "ssl_cert_file": cert,
                           "ssl_key_file": key, "ssl_min_protocol_version": "TLSv1.2",
                           "password_encryption": "scram-sha-256"},
            # TLS and a password on every line; nothing over the local socket; the central
            # server's owner role reaches its own database only.
            "pg_hba": [
                f"hostssl replication {REPLICATOR} 127.0.0.1/32 scram-sha-256",
                f"hostssl {DATABASE} {DATABASE_OWNER} 127.0.0.1/32 scram-sha-256",
                f"hostssl all {SUPERUSER},{REWINDER} 127.0.0.1/32 scram-sha-256",
            ],
        },
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
    }


def _get_json(url: str, context: ssl.SSLContext, timeout: float = 2.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout, context=context) as answer:  # noqa: S310 - loopback only
        return json.loads(answer.read())


def cluster_view(layout: Layout, context: ssl.SSLContext | None = None) -> dict[str, Any] | None:
    """Patroni's ``/cluster`` from the first node that answers, or None."""
    context = context or layout.context()
    for url in layout.rest_urls():
        try:
            return dict(_get_json(url + "/cluster", context))
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


def start(folder: Path, authority: Path, timeout: float = 90.0, venv: Path = PATRONI_VENV,
          name: str = DEFAULT_NAME) -> dict[str, Any]:
    """Start the set ``name`` under ``folder`` (Patroni from ``venv``), its certificates issued by the
    operator's authority in ``authority`` (its PKI folder, with ``ca.key``), and wait for a leader
    and a synchronous standby; then make the central server's database and its owner role."""
    _check_installed(venv)
    folder = folder.resolve()
    if (folder / "cluster.json").exists():
        layout = Layout.load(folder)
        if any(alive(pid) for pid in _pids(layout)):
            raise ClusterError(f"a cluster is already running in {folder}; stop it first")
    if any((folder / f"node{index}" / "data").exists() for index in range(NODES)):
        raise ClusterError(f"{folder} holds the data of a set that was stopped; start makes a new set: "
                           "choose an empty --dir")
    folder.mkdir(parents=True, exist_ok=True)
    owner = _owner()
    state: dict[str, Any] = {
        "name": name,
        "etcd": [{"client": reserve_port(), "peer": reserve_port()} for _ in range(ETCD_MEMBERS)],
        "nodes": [{"rest": reserve_port(), "pg": reserve_port()} for _ in range(NODES)],
        # The central server's processes' password (node-config prints it in their database URL).
        "owner_password": secrets.token_hex(16),
        "pids": {},
        "patroni": str(venv / "bin" / "patroni"),
    }
    # Patroni's own: written into each node's patroni.yml, kept nowhere else.
    patroni_secrets = {what: secrets.token_hex(16) for what in ("superuser", "replication", "rewind", "rest")}
    layout = Layout(folder, state)
    for index in range(ETCD_MEMBERS):
        (folder / f"etcd{index}").mkdir(exist_ok=True)
    for index in range(NODES):
        (folder / f"node{index}").mkdir(exist_ok=True)
    _issue_certificates(authority, layout)
    for index in range(NODES):
        config = folder / f"node{index}" / "patroni.yml"
        config.write_text(json.dumps(_patroni_config(index, layout, patroni_secrets), indent=2))  # YAML is a superset of JSON
    layout.save()
    make_private(folder)
    if owner is not None:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, owner.pw_uid, owner.pw_gid)
        probe = subprocess.run(["runuser", "-u", OWNER, "--", "test", "-w", str(folder)], check=False)
        if probe.returncode != 0:
            raise ClusterError(f"the {OWNER} user cannot write {folder}: choose a --dir whose parents it can enter")
    context = layout.context()
    try:
        for index in range(ETCD_MEMBERS):
            state["pids"][f"etcd{index}"] = _spawn(_etcd_argv(index, layout),
                                                   folder / f"etcd{index}" / "etcd.log", folder / f"etcd{index}")
        layout.save()
        _wait(lambda: all(_etcd_healthy(m["client"], context) for m in state["etcd"]), 30, "etcd members healthy",
              layout)
        for index in range(NODES):
            home = folder / f"node{index}"
            state["pids"][f"node{index}"] = _spawn([state["patroni"], str(home / "patroni.yml")],
                                                   home / "patroni.log", home)
            layout.save()
            if index == 0:
                # The first node bootstraps: once it holds the initialize key the second may
                # start, and clones it as soon as it leads (Patroni's own race decides no more).
                _wait(lambda: _bootstrapping(layout, context), timeout, "the first node to bootstrap", layout)
        _wait(lambda: _leader_ready(layout, context), timeout, "a leader", layout)
        _wait(lambda: _sync_ready(layout, context), timeout, "a synchronous standby", layout)
        _create_database(layout, patroni_secrets["superuser"], context)
    except BaseException:
        stop(folder)
        raise
    return status(folder)


def _create_database(layout: Layout, superuser_password: str, context: ssl.SSLContext) -> None:
    """The central server's database on the leader, owned by a role that is no superuser, creates no
    database and no role, and replicates nothing (replicated to the standby like everything)."""
    import psycopg
    from psycopg import sql

    found = summary(cluster_view(layout, context) or {})
    index = int(str(found["leader"]).removeprefix("node"))
    info = {**connection_info(layout.folder, index), "password": superuser_password}
    with psycopg.connect(**info, autocommit=True, connect_timeout=10) as db:
        db.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS "
                           "PASSWORD {}").format(sql.Identifier(DATABASE_OWNER),
                                                 sql.Literal(layout.state["owner_password"])))
        db.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE),
                                                                 sql.Identifier(DATABASE_OWNER)))
        # Only its owner (and Patroni's superuser) may connect to it.
        db.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(DATABASE)))


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


def _etcd_healthy(port: int, context: ssl.SSLContext) -> bool:
    try:
        return bool(_get_json(f"https://127.0.0.1:{port}/health", context).get("health") == "true")
    except (OSError, ValueError):
        return False


def _bootstrapping(layout: Layout, context: ssl.SSLContext) -> bool:
    """Whether a node holds Patroni's initialize key (it runs initdb, or did)."""
    import base64

    key = base64.b64encode(f"/bingo/{SCOPE}/initialize".encode()).decode()
    for member in layout.state["etcd"]:
        try:
            request = urllib.request.Request(f"https://127.0.0.1:{member['client']}/v3/kv/range",
                                             data=json.dumps({"key": key}).encode())
            with urllib.request.urlopen(request, timeout=2.0, context=context) as answer:  # noqa: S310 - loopback
                return bool(json.loads(answer.read()).get("kvs"))
        except (OSError, ValueError):
            continue
    return False


def _leader_ready(layout: Layout, context: ssl.SSLContext) -> bool:
    view = cluster_view(layout, context)
    return view is not None and summary(view)["leader"] is not None


def _sync_ready(layout: Layout, context: ssl.SSLContext) -> bool:
    view = cluster_view(layout, context)
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


def database_url(folder: Path, index: int, ca: Path | None = None) -> str:
    """The URL a central server process beside node ``index`` uses: that node's central database, as
    its owner, over TLS checked against the operator's authority ``ca`` (the process's own
    ``pki/ca.pem``; by default the set's copy, which only the set's user may read)."""
    layout = Layout.load(folder.resolve())
    ca = (ca or layout.tls.ca_cert).resolve()
    return (f"postgresql://{DATABASE_OWNER}:{layout.state['owner_password']}@127.0.0.1:"
            f"{layout.state['nodes'][index]['pg']}/{DATABASE}?sslmode=verify-full&sslrootcert={quote(str(ca))}"
            f"&connect_timeout=5")


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
    """psycopg connection keywords for node ``index`` as Patroni's superuser (over loopback TLS): for
    the operator's and the tests' own checks, by whoever may read the node's ``patroni.yml``."""
    layout = Layout.load(folder.resolve())
    info = {"host": "127.0.0.1", "port": layout.state["nodes"][index]["pg"], "dbname": "postgres",
            "sslmode": "verify-full", "sslrootcert": str(layout.tls.ca_cert)}
    config = layout.folder / f"node{index}" / "patroni.yml"
    try:
        superuser = json.loads(config.read_text())["postgresql"]["authentication"]["superuser"]
    except FileNotFoundError:
        return {**info, "user": SUPERUSER}  # no password: the connection is refused with a reason
    return {**info, "user": superuser["username"], "password": superuser["password"]}

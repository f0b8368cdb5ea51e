"""The central server's database pair (R92.6): ``bingo central cluster start|stop|status``.

Real processes only: three etcd members and two PostgreSQL 15 nodes each run by
Patroni, on loopback ports, as the ``postgres`` user under root.  The set is started
through the command (its certificates issued by an operator's authority made for the
module), once for the module's tests that leave it as it is, once more for the test
that kills its leader; each is stopped in a ``finally`` that also checks that no process
of the set is left and every port is free again.  Every member authenticated and
encrypted: each access an attacker on the network would try is refused (``test_N2_...``).
Fails where etcd or Patroni's venv is missing (``./test.sh`` installs them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from central_server import cluster as pair
from server_kit.pki import client_ssl_context, init_authority, issue_certificate
from server_kit.ports import listenable

pytestmark = [pytest.mark.integration]
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


@pytest.fixture(scope="module")
def authority() -> Iterator[Path]:
    """The operator's authority, with a central server's and a terminal's certificates beside the set's."""
    folder = Path(tempfile.mkdtemp(prefix="bingo-operator-"))
    init_authority(folder, "Acme Bingo Network")
    issue_certificate(folder, "central", "central-a")
    issue_certificate(folder, "terminal", "kiosk-1")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def shared_set(authority: Path) -> Iterator[Path]:
    """A started set for the tests that leave it as it is."""
    yield from started_set(authority)


@pytest.fixture
def cluster_dir(authority: Path) -> Iterator[Path]:
    """A started set of the test's own (one it fails)."""
    yield from started_set(authority)


def started_set(authority: Path) -> Iterator[Path]:
    """A started set in a fresh folder under /tmp (the postgres user can enter it); stopped after."""
    installed()
    folder = Path(tempfile.mkdtemp(prefix="bingo-replica-"))
    try:
        started = bingo("central", "cluster", "start", "--dir", str(folder), "--pki", str(authority))
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


@pytest.mark.req("R92.6")
def test_r92_6_commit_on_leader_is_on_synchronous_standby(shared_set: Path) -> None:
    """R92.6: a commit on the leader is on the standby, which replicates synchronously."""
    cluster_dir = shared_set
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


@pytest.mark.req("R92.6")
def test_r92_6_start_refuses_a_folder_already_running(shared_set: Path, authority: Path) -> None:
    """A second start in the same folder is refused, naming the folder; the set stays up."""
    cluster_dir = shared_set
    again = bingo("central", "cluster", "start", "--dir", str(cluster_dir), "--pki", str(authority))
    assert again.returncode != 0
    assert "already running" in again.stderr and str(cluster_dir) in again.stderr
    assert pair.status(cluster_dir)["leader"] is not None


@pytest.mark.req("R92.6")
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


# --- N2: every member authenticated and encrypted ------------------------------------------------

LEADER_KEY = f"/bingo/{pair.SCOPE}/leader"


def b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


def call(url: str, context: ssl.SSLContext | None, body: Any = None, method: str | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One HTTP(S) request: its status and its JSON (or text) answer; an HTTP error status is an answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:  # noqa: S310 - loopback
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def attackers(authority: Path) -> dict[str, ssl.SSLContext]:
    """TLS clients that are not the set: none at all, and certificates of the operator's own authority."""
    bare = ssl.create_default_context(cafile=str(authority / "ca.pem"))
    return {"no certificate": bare, "a terminal's certificate": client_ssl_context(authority, "kiosk-1"),
            "the central server's certificate": client_ssl_context(authority, "central-a")}


def refused(what: str, attempt: Any) -> None:
    """``attempt()`` fails at the connection (TLS handshake, certificate, or a closed connection)."""
    import http.client

    try:
        answer = attempt()
    except (OSError, http.client.HTTPException):
        return
    pytest.fail(f"{what} was answered: {answer}")


def leader_key(layout: pair.Layout, port: int) -> str:
    status, found = call(f"https://127.0.0.1:{port}/v3/kv/range", layout.context(), {"key": b64(LEADER_KEY)})
    assert status == 200, found
    import base64

    return base64.b64decode(found["kvs"][0]["value"]).decode()


def test_N2_etcd_admits_no_client_and_no_peer_but_the_set_s_own_certificates(shared_set: Path, authority: Path) -> None:
    """An etcd put of Patroni's leader key without a client certificate, with a terminal's or the
    central server's certificate of the same authority, or in plain HTTP, is refused on every member,
    and so is a peer connection; the set's own certificate reads the key, unchanged."""
    layout = pair.Layout.load(shared_set)
    before = leader_key(layout, layout.state["etcd"][0]["client"])
    assert before in ("node0", "node1")
    put = {"key": b64(LEADER_KEY), "value": b64("attacker")}
    for member in layout.state["etcd"]:
        for who, context in attackers(authority).items():
            refused(f"an etcd put with {who}",
                    lambda: call(f"https://127.0.0.1:{member['client']}/v3/kv/put", context, put))
            refused(f"a peer connection with {who}",
                    lambda: call(f"https://127.0.0.1:{member['peer']}/members", context))
        refused("an etcd put in plain HTTP", lambda: call(f"http://127.0.0.1:{member['client']}/v3/kv/put", None, put))
    assert [leader_key(layout, m["client"]) for m in layout.state["etcd"]] == [before] * len(layout.state["etcd"])


def test_N2_patroni_refuses_a_config_change_and_a_switchover_without_credentials(shared_set: Path,
                                                                                 authority: Path) -> None:
    """Patroni's REST API: ``PATCH /config`` and ``POST /switchover`` with no certificate or in plain
    HTTP fail at the connection; with a certificate of the authority but no password, or a wrong one,
    they are answered 401; the leader and the configuration are unchanged."""
    found = pair.status(shared_set)
    leader, standby = found["leader"], found["sync_standby"]
    urls = pair.Layout.load(shared_set).rest_urls()
    change = {"synchronous_mode": False, "ttl": 3600}
    switch = {"leader": leader, "candidate": standby}
    for url in urls:
        for who, context in attackers(authority).items():
            if who == "no certificate":
                refused(f"PATCH /config with {who}", lambda: call(url + "/config", context, change, "PATCH"))
                refused(f"POST /switchover with {who}", lambda: call(url + "/switchover", context, switch, "POST"))
                continue
            status, shown = call(url + "/cluster", context)
            assert status == 200 and shown["members"], shown  # a certificate of the authority reads
            for password in (None, "not-the-password"):
                headers = {} if password is None else {"Authorization": "Basic " + b64(f"{pair.REST_USER}:{password}")}
                assert call(url + "/config", context, change, "PATCH", headers)[0] == 401
                assert call(url + "/switchover", context, switch, "POST", headers)[0] == 401
        plain = url.replace("https://", "http://")
        refused("PATCH /config in plain HTTP", lambda: call(plain + "/config", None, change, "PATCH"))
    _, config = call(urls[0] + "/config", client_ssl_context(authority, "central-a"))
    assert (config["ttl"], config["synchronous_mode"]) == (pair.TTL, True)
    assert pair.status(shared_set)["leader"] == leader


def test_N2_postgresql_admits_only_tls_with_the_right_password(shared_set: Path) -> None:
    """Every node runs ssl=on; a connection without TLS, over the local socket, or with a wrong
    password is refused, whoever it claims to be; every line of pg_hba is hostssl with scram-sha-256."""
    import psycopg

    layout = pair.Layout.load(shared_set)
    owner = {"user": pair.DATABASE_OWNER, "password": layout.state["owner_password"], "dbname": pair.DATABASE}
    for index, node in enumerate(layout.state["nodes"]):
        tls = {"host": "127.0.0.1", "port": node["pg"], "sslmode": "verify-full",
               "sslrootcert": str(layout.tls.ca_cert), "connect_timeout": 10}
        attempts = {
            "without TLS": ({**tls, "sslmode": "disable", **owner}, "no encryption"),
            "over the local socket": ({**tls, "host": str(shared_set / f"node{index}"), "sslmode": "disable",
                                       **owner}, "no pg_hba.conf entry"),
            "with a wrong password": ({**tls, **owner, "password": "guessed"}, "password authentication failed"),
            "as the superuser with a wrong password": ({**tls, "user": pair.SUPERUSER, "password": "guessed",
                                                        "dbname": "postgres"}, "password authentication failed"),
            "as the central server to another database": ({**tls, **owner, "dbname": "postgres"},
                                                          "no pg_hba.conf entry"),
        }
        for what, (keywords, why) in attempts.items():
            with pytest.raises(psycopg.OperationalError, match=why):
                psycopg.connect(**keywords).close()
        with psycopg.connect(**{**tls, **owner}) as db:  # the right password over TLS: admitted
            assert db.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (True,)
        with psycopg.connect(**pair.connection_info(shared_set, index), connect_timeout=10) as db:
            assert db.execute("SHOW ssl").fetchone() == ("on",)
            rules = db.execute("SELECT type, auth_method, error FROM pg_hba_file_rules").fetchall()
            assert rules and {rule for rule in rules} == {("hostssl", "scram-sha-256", None)}, rules


def test_N2_the_central_server_is_no_superuser_and_runs_no_program(shared_set: Path) -> None:
    """The central server's URL checks the node's certificate; its role owns its database but is no
    superuser: COPY ... FROM PROGRAM, CREATE DATABASE, CREATE ROLE and making itself a superuser are
    refused; the replication role has the REPLICATION right only."""
    import psycopg
    from psycopg import errors

    leader = node_index(pair.status(shared_set)["leader"])
    url = pair.database_url(shared_set, leader)
    assert "sslmode=verify-full" in url and "sslrootcert=" in url
    with psycopg.connect(url, autocommit=True) as db:
        assert db.execute("SELECT current_user, ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (
            pair.DATABASE_OWNER, True)
        assert db.execute("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
                          ).fetchone() == (pair.DATABASE_OWNER,)
        db.execute("CREATE TABLE IF NOT EXISTS loot (line text)")
        for statement in ("COPY loot FROM PROGRAM 'id'", "CREATE DATABASE stolen", "CREATE ROLE intruder LOGIN",
                          f"ALTER ROLE {pair.DATABASE_OWNER} SUPERUSER"):
            with pytest.raises(errors.InsufficientPrivilege):
                db.execute(statement)
        assert db.execute("SELECT count(*) FROM loot").fetchone() == (0,)
    with psycopg.connect(**pair.connection_info(shared_set, leader), connect_timeout=10) as db:
        roles = dict((name, rights) for name, *rights in db.execute(
            "SELECT rolname, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls FROM pg_roles "
            "WHERE rolname = ANY(%s)", ([pair.DATABASE_OWNER, pair.REPLICATOR, pair.REWINDER],)).fetchall())
    assert roles == {pair.DATABASE_OWNER: [False] * 5, pair.REWINDER: [False] * 5,
                     pair.REPLICATOR: [False, False, False, True, False]}


def test_N2_patroni_s_passwords_are_in_its_own_configuration_only(shared_set: Path) -> None:
    """cluster.json holds the central server's password only; the superuser's, the replication's, the
    rewind's and the REST API's are in each node's patroni.yml; the folder is its user's alone."""
    layout = pair.Layout.load(shared_set)
    state = layout.state_file.read_text()
    for index in range(pair.NODES):
        config = json.loads((shared_set / f"node{index}" / "patroni.yml").read_text())
        kept = [config["postgresql"]["authentication"][who]["password"] for who in ("superuser", "replication",
                                                                                    "rewind")]
        kept.append(config["restapi"]["authentication"]["password"])
        assert len(set(kept)) == 4 and not any(secret in state for secret in kept)
    assert layout.state["owner_password"] in state
    for path in [shared_set, *shared_set.rglob("*")]:
        if path.is_symlink() or "data" in path.relative_to(shared_set).parts:
            continue  # PostgreSQL keeps its own data folder 0700
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {mode:o}"

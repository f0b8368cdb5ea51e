"""A real PostgreSQL cluster for the tests, started by the tests themselves.

Debian's PostgreSQL 15 binaries (``scripts/system-deps.sh`` installs them): ``initdb``
into a temporary folder, the server on a free loopback port with its socket in that
folder, stopped at the end.  PostgreSQL refuses to run as root, so under root the
cluster belongs to the ``postgres`` system user (which the Debian package creates) and
every server command runs through ``runuser``.  Each test gets a database of its own
(``CREATE DATABASE``), so tests never see each other's rows.

Where the binaries are missing the tests that need the cluster are skipped, except in
CI (``CI`` set), where a missing cluster is a failure: those tests must run there.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from server_kit.ports import reserve_port

SUPERUSER = "bingo"


class PostgresUnavailable(Exception):
    """No PostgreSQL server binaries on this machine."""


def server_binaries() -> Path:
    """The newest ``/usr/lib/postgresql/N/bin`` holding ``initdb`` and ``pg_ctl``."""
    root = Path("/usr/lib/postgresql")
    found = sorted(
        (p for p in root.glob("*/bin") if (p / "initdb").exists() and (p / "pg_ctl").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    ) if root.is_dir() else []
    if not found:
        raise PostgresUnavailable(
            "PostgreSQL server binaries not found under /usr/lib/postgresql "
            "(scripts/system-deps.sh installs Debian's postgresql)"
        )
    return found[-1]


class PostgresCluster:
    """One throw-away cluster: :meth:`start`, :meth:`create_database`, :meth:`stop`."""

    def __init__(self) -> None:
        self.bin = server_binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="bingo-pg-"))
        self.data = self.folder / "data"
        self.port = reserve_port()
        self.owner = "postgres" if os.geteuid() == 0 else None
        self.started = False

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(self.bin / command[0]), *command[1:]]
        if self.owner is not None:
            argv = ["runuser", "-u", self.owner, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=self.folder)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:2])} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def start(self) -> "PostgresCluster":
        if self.owner is not None:
            entry = pwd.getpwnam(self.owner)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        self.folder.chmod(0o700)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-instructions")
        self.start_server()
        return self

    def start_server(self) -> None:
        """Start the cluster's server (again, after :meth:`stop_server`)."""
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.folder} "
            "-c max_connections=200 -c fsync=on -c synchronous_commit=on"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-o", options, "-w", "start")
        self.started = True

    def stop_server(self) -> None:
        """Stop the server as an outage would (``pg_ctl stop -m fast``: sessions cut), keeping its data."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        self.started = False

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None, template: str | None = None) -> str:
        """A fresh database (optionally a copy of ``template``); its SQLAlchemy URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname=postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.started:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)

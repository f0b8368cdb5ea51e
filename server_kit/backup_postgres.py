"""A server's PostgreSQL database in a backup: ``pg_dump`` in one snapshot, ``pg_restore`` into an empty database.

Every call to PostgreSQL's tools and every query a backup or a restore makes of a
PostgreSQL database is here (:mod:`server_kit.backup` is the rest).

**The snapshot.**  A transaction (REPEATABLE READ, read-only) exports its snapshot
(``pg_export_snapshot()``), reads the journal's last record and every table's rows in
it, and ``pg_dump --snapshot`` dumps exactly that state while the transaction stays
open: the dump, the last record and the counts the manifest names are one committed
state, whatever the server commits meanwhile.  The dump is ``pg_dump``'s custom format
(compressed; ``pg_restore`` reads it), made with the role the server itself connects as:
the owner of its database needs no superuser, no replication right and no access to
the machine PostgreSQL runs on.  The password goes to the tools through their
environment (``PGPASSWORD``), never on a command line another user could read.

**The restore** goes into a database that exists and holds no table (the operator
creates it, owned by the role the server will connect as): ``pg_restore
--single-transaction --exit-on-error --no-owner --no-privileges``, so the tables are
the restoring role's and a restore that fails leaves the database empty.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from server_kit.backup import BackupError, Snapshot, shown_url

#: How long one of PostgreSQL's tools may run before the backup or the restore gives up.
TOOL_TIMEOUT_S = 6 * 3600.0


def tool(name: str) -> Path:
    """PostgreSQL's ``name`` (``pg_dump``, ``pg_restore``): on the PATH (Debian's wrapper picks the newest
    installed), else the newest ``/usr/lib/postgresql/N/bin``."""
    found = shutil.which(name)
    if found:
        return Path(found)
    versions = sorted((p for p in Path("/usr/lib/postgresql").glob(f"*/bin/{name}")),
                      key=lambda p: int(p.parents[1].name) if p.parents[1].name.isdigit() else 0)
    if not versions:
        raise BackupError(f"PostgreSQL's {name} is not installed (Debian: apt-get install postgresql-client)")
    return versions[-1]


def connection(url: str) -> tuple[dict[str, Any], dict[str, str]]:
    """psycopg's connection keywords for the SQLAlchemy ``url``, and the environment PostgreSQL's tools take
    the same connection from (the password in ``PGPASSWORD``, never on their command line)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise BackupError(f"{shown_url(url)} is not a PostgreSQL database")
    keywords: dict[str, Any] = {"host": parsed.host or "localhost", "dbname": parsed.database or ""}
    if parsed.port:
        keywords["port"] = parsed.port
    if parsed.username:
        keywords["user"] = parsed.username
    for name, value in parsed.query.items():  # sslmode, sslrootcert, connect_timeout, ...
        keywords[name] = value if isinstance(value, str) else value[-1]
    environment = {"PGHOST": str(keywords["host"]), "PGDATABASE": str(keywords["dbname"])}
    if "port" in keywords:
        environment["PGPORT"] = str(keywords["port"])
    if "user" in keywords:
        environment["PGUSER"] = str(keywords["user"])
    for name, variable in (("sslmode", "PGSSLMODE"), ("sslrootcert", "PGSSLROOTCERT"), ("sslcert", "PGSSLCERT"),
                           ("sslkey", "PGSSLKEY"), ("connect_timeout", "PGCONNECT_TIMEOUT")):
        if name in keywords:
            environment[variable] = str(keywords[name])
    if parsed.password:
        keywords["password"] = parsed.password
        environment["PGPASSWORD"] = str(parsed.password)
    return keywords, environment


def _connect(url: str) -> Any:
    import psycopg

    keywords, _ = connection(url)
    try:
        return psycopg.connect(**keywords)
    except psycopg.OperationalError as error:
        raise BackupError(f"cannot reach the database {shown_url(url)}: {_first_line(error)}") from None


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _tables(db: Any) -> list[tuple[str, str]]:
    return [(str(schema), str(name)) for schema, name in db.execute(
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
        "AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_schema, table_name")]


def _counts(db: Any) -> dict[str, int]:
    from psycopg import sql

    counts = {}
    for schema, name in _tables(db):
        rows = db.execute(sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(name)))
        counts[name if schema == "public" else f"{schema}.{name}"] = int(rows.fetchone()[0])
    return counts


def _run(argv: list[str], url: str, what: str) -> None:
    _, environment = connection(url)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **environment}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise BackupError(f"{what} of {shown_url(url)} did not end within {TOOL_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        raise BackupError(f"{what} of {shown_url(url)} failed: {said[0] if said else f'exit {done.returncode}'}")


def snapshot(url: str, target: Path) -> Snapshot:
    """The database at ``url`` dumped into ``target`` (custom format) in one snapshot (see the module)."""
    import psycopg

    db = _connect(url)
    try:
        db.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        db.read_only = True
        exported = str(db.execute("SELECT pg_export_snapshot()").fetchone()[0])
        counts = _counts(db)
        last = None
        if "journal" in counts:
            row = db.execute("SELECT seq, hash, time_ms FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
            last = (int(row[0]), str(row[1]), int(row[2])) if row else None
        # The snapshot is valid while the transaction that exported it is open: the dump runs now.
        _run([str(tool("pg_dump")), "--format=custom", "--compress=6", f"--snapshot={exported}",
              "--file", str(target)], url, "pg_dump")
        db.rollback()
    except psycopg.Error as error:
        raise BackupError(f"the database {shown_url(url)} cannot be read in one snapshot: {_first_line(error)}") from None
    finally:
        db.close()
    return Snapshot("postgresql", target, last, counts)


def table_counts(url: str) -> dict[str, int]:
    """Every table of the database at ``url`` with its rows."""
    db = _connect(url)
    try:
        with db.transaction():
            return _counts(db)
    finally:
        db.close()


def restore(dump: Path, url: str) -> None:
    """``dump`` restored into the database at ``url``, which must exist and hold no table."""
    db = _connect(url)
    try:
        held = _tables(db)
        db.rollback()
    finally:
        db.close()
    if held:
        names = ", ".join(name for _, name in held[:5]) + (", ..." if len(held) > 5 else "")
        raise BackupError(f"the database {shown_url(url)} is not empty (it holds {len(held)} tables: {names}): "
                          "restore into a new, empty database")
    _run([str(tool("pg_restore")), "--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges",
          "--dbname", _dbname(url), str(dump)], url, "pg_restore")


def _dbname(url: str) -> str:
    """The database's name for ``--dbname`` (the rest of the connection is in the environment)."""
    name = make_url(url).database or ""
    if not re.fullmatch(r"[A-Za-z0-9_$-]+", name):
        raise BackupError(f"{name!r} is not a database name this restore takes (letters, digits, _ $ -)")
    return name

"""The database pair as the backup tests use it: every call that depends on how the pair authenticates is here.

The pair is started as ``bingo central cluster start`` starts it (:func:`central_server.cluster.start`);
the central server's process connects to its node with the URL ``node-config`` prints; a database
lost and made again is made empty, owned by the role that process connects as.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from central_server import cluster


def start(folder: Path, authority: Path) -> dict[str, Any]:
    """The pair in ``folder`` (``authority``: the operator's PKI folder, for a pair whose members it certifies)."""
    return cluster.start(folder, authority)


def node_sections(folder: Path, index: int, ca: Path) -> str:
    """``[database]`` and ``[replica]`` of the central process beside node ``index`` (``ca``: its ``pki/ca.pem``)."""
    return (f'[database]\nurl = "{cluster.database_url(folder, index, ca)}"\n\n'
            f'[replica]\nnode = "node{index}"\npatroni = "{cluster.rest_url(folder, index)}"\n')


def leader(folder: Path) -> int:
    return int(str(cluster.leader(folder)).removeprefix("node"))


def make_database_again(folder: Path) -> None:
    """The central database dropped (lost) and created again, empty, owned by the central server's role."""
    import psycopg
    from psycopg import sql

    owner = cluster.DATABASE_OWNER
    with psycopg.connect(**cluster.connection_info(folder, leader(folder)), autocommit=True, connect_timeout=10) as db:
        db.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(cluster.DATABASE)))
        db.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(cluster.DATABASE),
                                                                 sql.Identifier(owner)))


def stop(folder: Path) -> None:
    if (folder / "cluster.json").exists():
        cluster.stop(folder)

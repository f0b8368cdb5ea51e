"""The central server's part in ``bingo backup`` and ``bingo restore`` (:mod:`server_kit.backup` does the rest).

:func:`central_folder` says where a central server's parts are, from its
``central.toml``; the database it is backed up from is the one its process writes to:
for a replicated central server (``[replica]``), the node Patroni names as the leader,
asked through the REST API of the process's own node (:func:`leader_url`), so the dump
is of the database the active process commits to, never of a standby that may lag.
The dump itself is ``pg_dump`` in one snapshot, as the role the process connects as
(:mod:`server_kit.backup_postgres`; docs/backup.md says why rather than
``pg_basebackup``).  :data:`KIND` says how an archive of a central server moves into a
new folder; ``bingo restore`` finds it through the ``bingo.backup`` entry point
``central``.
"""

from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from central_server.config import CentralConfig, load_config
from server_kit.backup import BackupError, ServerFolder, ServerKind
from server_kit.pki import PkiFolder

#: How long Patroni's REST API may take to answer.
PATRONI_TIMEOUT_S = 10.0


def central_folder(config: CentralConfig) -> ServerFolder:
    """What a backup of the central server ``config`` describes reads (its database: :func:`leader_url`)."""
    outside: dict[str, str] = {}
    if not config.pki_dir.resolve().is_relative_to(config.home.resolve()):
        outside[str(config.pki_dir)] = "the central server's certificate, key and the operator's ca.pem ([central] pki_dir)"
    return ServerFolder(
        server="central", name=config.central_id, home=config.home, database_url=leader_url(config),
        journal_key=config.journal_key, journal_head=config.journal_head, checkpoints=None, config=config.source,
        outside=outside,
    )


def leader_url(config: CentralConfig) -> str:
    """The database URL of the node Patroni names as the leader (the configured URL without ``[replica]``).

    The node's address replaces the configured one; the role, the password, the
    database and the TLS settings stay those the process connects with.
    """
    if config.replica is None:
        return config.database_url
    view = _patroni_cluster(config)
    leaders = [m for m in view.get("members", []) if m.get("role") == "leader" and m.get("state") == "running"]
    if len(leaders) != 1:
        raise BackupError(f"Patroni ({config.replica.patroni}) names no running leader of the database pair now: "
                          "back up once it has one (bingo central cluster status)")
    member = leaders[0]
    try:
        return make_url(config.database_url).set(host=str(member["host"]), port=int(member["port"])).render_as_string(
            hide_password=False)
    except (KeyError, TypeError, ValueError):
        raise BackupError(f"Patroni ({config.replica.patroni}) does not say where its leader listens") from None


def _patroni_cluster(config: CentralConfig) -> dict[str, Any]:
    """Patroni's ``GET /cluster`` from the process's own node; over ``https://`` with the central server's
    certificate, as its process asks (the set's REST API admits no client without one)."""
    assert config.replica is not None
    url = config.replica.patroni.rstrip("/") + "/cluster"
    context = None
    if url.startswith("https://"):
        folder = PkiFolder(config.pki_dir)
        context = ssl.create_default_context(cafile=str(folder.ca_cert))
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(str(folder.cert(config.central_id)), str(folder.key(config.central_id)))
    try:
        with urllib.request.urlopen(url, timeout=PATRONI_TIMEOUT_S, context=context) as answer:  # noqa: S310 - configured
            view = json.loads(answer.read())
    except (OSError, ValueError) as error:
        raise BackupError(f"Patroni's REST API at {config.replica.patroni} does not answer ({error}): the backup "
                          "is taken from the leader it names") from None
    if not isinstance(view, dict):
        raise BackupError(f"Patroni's REST API at {config.replica.patroni} answered no cluster")
    return view


def _read(path: Path) -> tuple[Path, str]:
    config = load_config(path)
    return config.home, config.database_url


def _start(home: Path, config: Path | None, database_url: str) -> str:
    return f"bingo central serve --config {config or home / 'central.toml'}"


KIND = ServerKind(server="central", config_name="central.toml", database_name="central.sqlite3",
                  home_key=("central", "home"), database_key=("database", "url"), read_config=_read,
                  start_command=_start)

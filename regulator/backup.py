"""The regulator's receiver's part in ``bingo backup`` and ``bingo restore`` (:mod:`server_kit.backup`).

:func:`receiver_folder` says where a receiver's parts are: its folder (``--dir``: its
database by default, its journal's key, head and checkpoints, ``senders.toml``, the
reports it received), its database and its PKI folder; :data:`KIND` says how an archive of a
receiver moves into a new folder (it has no configuration file: its folder, its
database and its PKI are the command's options); ``bingo restore`` finds it through the
``bingo.backup`` entry point ``regulator``.
"""

from __future__ import annotations

from pathlib import Path

from server_kit.backup import ServerFolder, ServerKind, sqlite_path

#: The receiver's database in its folder when ``--db`` names none (regulator.service.ReceiverSettings).
DATABASE = "regulator.sqlite3"


def receiver_folder(home: Path, database_url: str | None = None, pki_dir: Path | None = None,
                    certificate: str = "regulator") -> ServerFolder:
    """What a backup of the receiver in ``home`` reads (``database_url``: ``--db``, when given)."""
    outside: dict[str, str] = {}
    if pki_dir is not None and not pki_dir.resolve().is_relative_to(home.resolve()):
        outside[str(pki_dir)] = "the receiver's certificate, key and the operator's ca.pem (--pki)"
    return ServerFolder(
        server="regulator", name=certificate, home=home,
        database_url=database_url or f"sqlite:///{home / DATABASE}", journal_key=home / "keys" / "journal-signing.pem",
        journal_head=home / "journal.head", checkpoints=home / "checkpoints", config=None, outside=outside,
    )


def _start(home: Path, config: Path | None, database_url: str) -> str:
    database = sqlite_path(database_url)
    db = "" if database is not None and database == home / DATABASE else f" --db {database_url}"
    return f"bingo regulator serve --dir {home}{db} --pki PKI-FOLDER"


KIND = ServerKind(server="regulator", config_name=None, database_name=DATABASE, home_key=None, database_key=None,
                  read_config=None, start_command=_start)

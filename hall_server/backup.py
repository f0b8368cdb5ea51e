"""The hall's part in ``bingo backup`` and ``bingo restore`` (:mod:`server_kit.backup` does the rest).

:func:`hall_folder` says where a hall's parts are, from its configuration: its folder,
database, journal key and head, checkpoints and ``hall.toml``; and what of its folder
stays out of a backup besides the kit's own rules (the local authority a first start
makes, the bundles handed to the kiosks, the logins shown once).  :data:`KIND` says how
an archive of a hall moves into a new folder; ``bingo restore`` finds it through the
``bingo.backup`` entry point ``hall``.
"""

from __future__ import annotations

from pathlib import Path

from hall_server.config import HallConfig, load_config
from server_kit.backup import ServerFolder, ServerKind
from server_kit.journal.sql import head_path
from server_kit.keys import journal_key_path

#: What of a hall's folder a backup leaves out, and why (the kit leaves out any authority's folder anyway).
LEFT_OUT = {
    "operator-ca": "the operator's certificate authority: it belongs offline, never in a backup (docs/pki.md)",
    "terminal-certs": "the certificate bundles handed to the kiosks: the operator's authority issues them again",
    "new-staff-logins.txt": "staff passwords shown once, to be read and deleted: never kept in a backup",
    "demo-kiosk.txt": "the demo's note of a kiosk's address and token, for a person to read",
    "voice": "the board's speech clips: made again from their texts when a board first asks for them",
}


def hall_folder(config: HallConfig, database_url: str | None = None, card_key: Path | None = None) -> ServerFolder:
    """What a backup of the hall ``config`` describes reads (``database_url``: ``--db``, when given)."""
    home = config.home
    outside: dict[str, str] = {}
    if config.tls.enabled and not _under(config.tls.pki_dir, home):
        outside[str(config.tls.pki_dir)] = "the server's TLS certificate and key ([tls] pki_dir)"
    if card_key is not None and not _under(card_key, home):
        outside[str(card_key)] = "the card code key ($BINGO_CARD_KEY_FILE)"
    return ServerFolder(
        server="hall", name=config.name, home=home, database_url=database_url or config.database_url,
        journal_key=journal_key_path(home), journal_head=head_path(home), checkpoints=home / "checkpoints",
        config=config.source, left_out=LEFT_OUT, outside=outside,
    )


def _under(path: Path, home: Path) -> bool:
    return path.resolve().is_relative_to(home.resolve())


def _read(path: Path) -> tuple[Path, str]:
    config = load_config(path)
    return config.home, config.database_url


def _start(home: Path, config: Path | None, database_url: str) -> str:
    return f"BINGO_HOME={home} bingo hall serve --config {config or home / 'hall.toml'}"


KIND = ServerKind(server="hall", config_name="hall.toml", database_name="hall.sqlite3", home_key=("hall", "home"),
                  database_key=("database", "url"), read_config=_read, start_command=_start)

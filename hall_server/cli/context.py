"""What every subcommand shares: the hall's folder, its files and its database.

The CLI is a composition root of its own: this is the one module of the command that
reads the environment (``$BINGO_HOME``, the hall's folder, ``var/`` by default;
``$BINGO_DB``; ``$BINGO_CARD_KEY_FILE``; ``$BINGO_SPEC``) and the hall's configuration
file.  The subcommands ask :class:`Hall` for paths, keys and the configuration and
hand them down to the modules that use them, which read neither.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.errors import DomainError
from server_kit.settings import ConfigFile

if TYPE_CHECKING:
    from datetime import tzinfo

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from sqlalchemy import Engine

    from hall_server.config import HallConfig
    from hall_server.hall.roles import Role
    from server_kit.journal.sql import Journal

# The hall's modules (its configuration, database, journal and keys) are imported by the
# methods that use them: every subcommand's declaration imports this module, and its
# ``--help`` loads neither the database nor the cryptography (docs/testing.md).


class HallFolderError(DomainError):
    """The folder a command was given holds no hall; the message says what to set."""


#: The hall's folder when ``$BINGO_HOME`` is not set.
DEFAULT_HOME = Path("var")
#: The hall's configuration file in its folder.
CONFIG_FILE = "hall.toml"
#: The hall's name in reports when it has no configuration.
UNNAMED_HALL = "Bingo hall"


def hall_home() -> Path:
    """The hall's folder: ``$BINGO_HOME``, or ``var/`` in the working folder."""
    return Path(os.environ.get("BINGO_HOME") or DEFAULT_HOME)


def spec_from_environment() -> Path | None:
    """The regulation text named by ``$BINGO_SPEC``, if it is set."""
    named = os.environ.get("BINGO_SPEC")
    return Path(named) if named else None


@dataclass
class Hall:
    """The hall the command works on; ``url`` is ``--db`` (else ``$BINGO_DB``, else the embedded default)."""

    url: str | None = None
    _engine: Engine | None = field(default=None, repr=False)

    @property
    def home(self) -> Path:
        return hall_home()

    @property
    def database_url(self) -> str | None:
        """The database named by ``--db`` or ``$BINGO_DB``; ``None`` for the embedded default."""
        return self.url or os.environ.get("BINGO_DB") or None

    @property
    def existing_engine(self) -> Engine:
        """:attr:`engine` for a command that only reads: the embedded default must exist already.

        A command that reads the journal in a folder holding no hall (a central server's,
        say) says so, instead of leaving an empty ``hall.sqlite3`` behind.
        """
        if self._engine is None and not self.database_url:
            from sqlalchemy.engine import make_url

            from hall_server.store.database import default_url

            database = Path(make_url(default_url(self.home)).database or "")
            if not database.exists():
                raise HallFolderError(f"there is no hall database in {self.home} ({database.name} is missing): "
                                      "this folder holds no hall (set BINGO_HOME to the hall's folder, or --db)")
        return self.engine

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            from hall_server.store.database import default_url, open_database

            if self.database_url:
                # A typed URL must name a folder that exists.
                self._engine = open_database(self.database_url, create_folder=False)
            else:
                self._engine = open_database(default_url(self.home))
        return self._engine

    # --- Files of the hall's folder ----------------------------------------------------

    @property
    def config_path(self) -> Path:
        """The hall's configuration file (``hall.toml`` in its folder)."""
        return self.home / CONFIG_FILE

    def config(self, path: Path | None = None) -> HallConfig:
        """The configuration at ``path`` (default :attr:`config_path`), read and checked."""
        from hall_server.config import load_config

        return load_config(path or self.config_path)

    def write_config(self, path: Path, *, hall_name: str, port: int) -> tuple[HallConfig, list[tuple[str, Role, str]]]:
        """Write the embedded default at ``path`` with fresh staff logins (:func:`ensure_config`); the logins."""
        from hall_server.config import ensure_config

        return ensure_config(path, hall_name=hall_name, port=port)

    def hall_name(self) -> str:
        """The hall's name from its configuration, when there is one."""
        return self.config().name if self.config_path.exists() else UNNAMED_HALL

    def language(self) -> str:
        """The hall's language from its configuration (``[hall] language``), when there is one."""
        from hall_server.i18n import DEFAULT_LANGUAGE

        return self.config().language if self.config_path.exists() else DEFAULT_LANGUAGE

    def timezone(self) -> tzinfo:
        """The hall's time zone from its configuration (``[hall] timezone``), when there is one."""
        from hall_server.hall.admission import DEFAULT_TIMEZONE

        return self.config().timezone if self.config_path.exists() else DEFAULT_TIMEZONE

    @property
    def head_path(self) -> Path:
        from server_kit.journal.sql import head_path

        return head_path(self.home)

    @property
    def journal_key_path(self) -> Path:
        from server_kit.keys import journal_key_path

        return journal_key_path(self.home)

    @property
    def card_key_path(self) -> Path:
        """``$BINGO_CARD_KEY_FILE``, or ``keys/card-code.key`` in the hall's folder."""
        from server_kit.keys import card_key_path

        named = os.environ.get("BINGO_CARD_KEY_FILE")
        return Path(named) if named else card_key_path(self.home)

    @property
    def pki_dir(self) -> Path:
        from server_kit.pki import default_pki_dir

        return default_pki_dir(self.home)

    def journal_key(self, *, create: bool = False) -> Ed25519PrivateKey:
        from server_kit.keys import load_journal_key

        return load_journal_key(self.journal_key_path, create=create)

    def journal(self, *, create_key: bool = False) -> Journal:
        """The hall's journal: its database, its key and its signed head (a journal that only
        verifies, with ``create_key`` False, needs the hall's database to exist already)."""
        from server_kit.journal.sql import Journal

        engine = self.engine if create_key else self.existing_engine
        return Journal(engine, self.journal_key(create=create_key), head=self.head_path)


def _describe_config(path: Path) -> str:
    """``hall.toml`` at ``path`` read as the hall's start reads it, in one line (``bingo config check``)."""
    from sqlalchemy.engine import make_url

    from hall_server.config import load_config

    hall = load_config(path)
    return (f"a hall configuration: hall {hall.name!r}, {len(hall.staff)} staff logins, "
            f"database {make_url(hall.database_url).get_backend_name()}, listening on {hall.interface}:{hall.port}")


#: The hall's configuration file for ``bingo config check`` (the ``bingo.config`` entry point ``hall``).
CONFIG_CHECK = ConfigFile("hall", CONFIG_FILE, _describe_config)

"""Opening the hall database and bringing its schema up to date with Alembic.

The embedded default is SQLite in WAL mode under ``var/``; any SQLAlchemy URL
(PostgreSQL included) can be given instead.  Migrations are applied on every open,
so a fresh machine needs nothing but the command.
"""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event

DEFAULT_HOME = Path("var")
MIGRATIONS = "hall_server:migrations"


def default_url(home: Path | None = None) -> str:
    """``sqlite:///var/hall.sqlite3`` (or under ``$BINGO_HOME``)."""
    home = home or Path(os.environ.get("BINGO_HOME", DEFAULT_HOME))
    return f"sqlite:///{home / 'hall.sqlite3'}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    # FULL: a commit is on disk before it returns, so nothing is announced that a power
    # cut could take back (WAL with NORMAL survives a killed process, not a power cut).
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def create(url: str) -> Engine:
    """An engine for ``url``; for SQLite the folder is created and WAL switched on."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    return config


def upgrade(engine: Engine) -> None:
    """Apply every migration not yet applied."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def is_current(engine: Engine) -> bool:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head


def open_database(url: str | None = None) -> Engine:
    """The hall database at ``url`` (default: SQLite under var/), migrated to the head."""
    engine = create(url or default_url())
    upgrade(engine)
    return engine

"""The hall's database: the embedded default and the hall's migrations.

Opening, driver choice and migration are the server kit's
(:mod:`server_kit.db.database`); the hall adds where its SQLite file lives by default
(``hall.sqlite3`` in the hall's folder, which the composition root names) and which
migrations make its schema.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from server_kit.db import database as kit

MIGRATIONS = "hall_server:migrations"


def default_url(home: Path) -> str:
    """``sqlite:///HOME/hall.sqlite3``: the embedded default in the hall's folder ``home``."""
    return f"sqlite:///{home / 'hall.sqlite3'}"


def open_database(url: str, create_folder: bool = True) -> Engine:
    """The hall database at ``url`` (the composition root names it), migrated to the head."""
    return kit.open_database(url, MIGRATIONS, create_folder)


def is_current(engine: Engine) -> bool:
    """Whether the hall database's schema is at the head of the hall's migrations."""
    return kit.is_current(engine, MIGRATIONS)

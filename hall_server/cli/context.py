"""What every subcommand shares: the database, opened (and migrated) on first use."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from hall_server.store.database import open_database


@dataclass
class Hall:
    url: str | None
    _engine: Engine | None = field(default=None, repr=False)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = open_database(self.url)
        return self._engine

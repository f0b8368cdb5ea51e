"""What every subcommand shares: the hall's folder and its database, opened (and migrated) on first use.

The CLI is a composition root of its own: it is the one place of the command that reads
``$BINGO_HOME`` (the hall's folder, ``var/`` by default) and hands paths down.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from hall_server.store.database import DEFAULT_HOME, default_url, open_database


def hall_home() -> Path:
    """The hall's folder: ``$BINGO_HOME``, or ``var/`` in the working folder."""
    return Path(os.environ.get("BINGO_HOME") or DEFAULT_HOME)


@dataclass
class Hall:
    url: str | None
    _engine: Engine | None = field(default=None, repr=False)

    @property
    def home(self) -> Path:
        return hall_home()

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            if self.url:
                # A typed URL must name a folder that exists.
                self._engine = open_database(self.url, create_folder=False)
            else:
                self._engine = open_database(default_url(self.home))
        return self._engine

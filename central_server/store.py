"""The central server's tables besides the journal: its library of virtual cards (and, declared in
:mod:`central_server.leadership`, the leadership's one row).

A series of the central library (R82.9-12) is its label, its size, the SHA-256 of its
layouts (:func:`~central_server.domain.config.library_digest`, which every network
game's configuration names) and the layouts themselves, 27 bytes a card (row-major, 0
for a blank).  A series is generated once, from the operating system's CSPRNG, and
never changed: a game refuses to run, or to be rebuilt from its journal, on other cards.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sqlalchemy import Engine, Integer, LargeBinary, MetaData, String, insert, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from twisted.logger import Logger

from central_server import leadership
from central_server.config import SeriesConfig
from central_server.domain.config import library_digest
from protocol.cards import CARDS_PER_STRIP
from protocol.library import build_distinct_strips
from server_kit.boot import StartRefused
from server_kit.db import database as kit
from server_kit.journal.table import NAMING, JournalBase

log = Logger()

MIGRATIONS = "central_server:migrations"
CELLS = 27


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class CentralSeries(Base):
    """One series of the central library: generated once, never changed."""

    __tablename__ = "central_series"
    label: Mapped[str] = mapped_column(String(8), primary_key=True)
    card_count: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))
    cells: Mapped[bytes] = mapped_column(LargeBinary)


#: What the migrations make: the journal, the library and the leadership.
METADATA = [Base.metadata, JournalBase.metadata, leadership.METADATA]


def open_database(url: str, create_folder: bool = True) -> Engine:
    """The central database at ``url``, migrated to the head of the central migrations."""
    return kit.open_database(url, MIGRATIONS, create_folder)


def load_series(engine: Engine) -> dict[str, np.ndarray]:
    """Every series of the library, by label, as (cards, 27) arrays; each checked against its digest."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(CentralSeries.label, CentralSeries.card_count, CentralSeries.digest, CentralSeries.cells)
        ).all()
    library: dict[str, np.ndarray] = {}
    for label, count, digest, cells in rows:
        layouts = np.frombuffer(cells, dtype=np.uint8).reshape(count, CELLS)
        if library_digest(layouts) != digest:
            raise kit.DatabaseError(f"series {label} of the central library does not match its digest: it was altered")
        library[label] = layouts
    return library


def add_series(engine: Engine, label: str, cards: int) -> np.ndarray:
    """Generate series ``label`` of ``cards`` cards (whole strips, no two cards alike) and keep it; its layouts.

    The strips are drawn a batch at a time into one array (:func:`~protocol.library.build_distinct_strips`):
    a million cards peak at about 350 MB, where drawing them in one call peaked at 1.4 GB."""
    layouts = build_distinct_strips(cards // CARDS_PER_STRIP)
    with engine.begin() as connection:
        connection.execute(
            insert(CentralSeries),
            [{"label": label, "card_count": len(layouts), "digest": library_digest(layouts),
              "cells": layouts.tobytes()}],
        )
    return layouts


def provision_library(engine: Engine, configured: Sequence[SeriesConfig]) -> dict[str, np.ndarray]:
    """The library with each ``configured`` series: those missing are generated once, kept, and added.

    A series held with another size than configured refuses the start (:class:`StartRefused`):
    a series is never changed."""
    library = load_series(engine)
    for series in configured:
        known = library.get(series.label)
        if known is None:
            log.info("Generating series {label} of the central library: {n} cards", label=series.label, n=series.cards)
            library[series.label] = add_series(engine, series.label, series.cards)
        elif len(known) != series.cards:
            raise StartRefused(
                f"series {series.label} of the central library holds {len(known)} cards, the configuration says "
                f"{series.cards}; a series is never changed: give the new size a new label"
            )
    return library

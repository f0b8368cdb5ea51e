"""The central server's schema and library on every database it supports (SQLite, PostgreSQL)."""

from __future__ import annotations

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import update

from central_server.domain.config import library_digest
from protocol.cards import fingerprints
from central_server.store import METADATA, CentralSeries, add_series, load_series, open_database
from server_kit.db.database import DatabaseError

pytestmark = [pytest.mark.integration]


def test_the_schema_is_the_models_after_the_migrations(database_url: str) -> None:
    engine = open_database(database_url)
    try:
        with engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), METADATA) == []
    finally:
        engine.dispose()


@pytest.mark.req("R92.3")
def test_a_series_is_kept_whole_and_an_altered_one_is_refused(database_url: str) -> None:
    engine = open_database(database_url)
    try:
        layouts = add_series(engine, "V1", 12_000)
        loaded = load_series(engine)["V1"]
        assert loaded.shape == (12_000, 27) and library_digest(loaded) == library_digest(layouts)
        # Whole strips (each number once in six cards), and no two cards of the series alike (R82.9-12).
        strips = loaded.reshape(-1, 6 * 27)
        assert all(sorted(int(n) for n in strip if n) == list(range(1, 91)) for strip in strips[:50])
        assert len(np.unique(fingerprints(loaded), axis=0)) == 12_000
        with engine.begin() as connection:
            connection.execute(update(CentralSeries).values(cells=bytes(12_000 * 27)))
        with pytest.raises(DatabaseError, match="series V1 .* does not match its digest"):
            load_series(engine)
    finally:
        engine.dispose()

"""What every server's Alembic ``env.py`` does: run the migrations on the connection the
application hands over (``server_kit.db.database`` upgrades through it), batch mode for
SQLite's ALTER TABLE, column types compared."""

from __future__ import annotations

from typing import Sequence

from sqlalchemy import MetaData


def run_on_given_connection(metadata: MetaData | Sequence[MetaData]) -> None:
    """Run the migrations of the current Alembic context against ``metadata`` (one or several)."""
    from alembic import context

    connection = context.config.attributes["connection"]
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()

"""The central server's Alembic migrations (applied on every start)."""

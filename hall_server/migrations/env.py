"""Alembic environment: migrations run on the connection the application hands over."""

from hall_server.store.models import METADATA
from server_kit.db.migration_env import run_on_given_connection

run_on_given_connection(METADATA)

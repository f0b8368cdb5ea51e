"""Test configuration shared by every layer.

Tests name the requirements they prove with ``@pytest.mark.req("R82.5", ...)``;
``bingo reqs`` collects them to show which requirements of REGULATION.md have tests.
"""

import os
from typing import Iterator

import pytest

from tests.support.postgres import PostgresCluster, PostgresUnavailable


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "req(*ids): the REGULATION.md requirement IDs this test proves"
    )
    config.addinivalue_line(
        "markers", "integration: uses real sockets, processes, databases or devices"
    )
    config.addinivalue_line("markers", "campaign: a long run: fuzzing, certification or statistics over 10^5 inputs or more")


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A real PostgreSQL cluster for the session's tests (``tests/support/postgres.py``).

    Skipped where PostgreSQL is not installed, except under CI, where the tests that
    need it must run.
    """
    try:
        import psycopg  # noqa: F401 (the driver the URLs name)

        cluster = PostgresCluster().start()
    except (PostgresUnavailable, ImportError) as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the PostgreSQL tests, and cannot: {error}")
        pytest.skip(str(error))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A fresh, empty database on each backend the system supports: the test runs once on each."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hall.sqlite3'}"
    return request.getfixturevalue("postgres_cluster").create_database()

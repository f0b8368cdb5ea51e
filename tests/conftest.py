"""Test configuration shared by every layer.

Tests name the requirements they prove with ``@pytest.mark.req("R82.5", ...)``;
``bingo reqs`` collects them to show which requirements of REGULATION.md have tests.
"""

import os
from typing import Iterator

import pytest
from hypothesis import settings

from tests.support.postgres import PostgresCluster, PostgresUnavailable

# Speed is measured by the benchmarks, not asserted in tests: Hypothesis's per-example deadline
# (200 ms) failed a property test whose example waited 296 ms for a core while six workers ran.
# The suite's examples are the same at every run (derandomize): a run's verdict never depends on
# the examples it happened to draw.  HYPOTHESIS_PROFILE=explore draws new ones, to look for more.
settings.register_profile("bingo", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "bingo"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "req(*ids): the REGULATION.md requirement IDs this test proves"
    )
    config.addinivalue_line(
        "markers", "integration: uses real sockets, processes, databases or devices"
    )
    config.addinivalue_line("markers", "campaign: a long run: fuzzing, certification or statistics over 10^5 inputs or more")


#: The suite's longest files, longest first (``--durations``): ``./test.sh`` hands whole files
#: to its workers in collection order (``--dist loadfile --no-loadscope-reorder``), so
#: these start first and the short files fill in around them, and the workers end together.
LONGEST_FIRST = (
    "tests/replica/test_failover_campaign.py",
    "tests/replica/test_failover_campaign_second.py",
    "tests/simulation/test_kill_campaign.py",
    "tests/simulation/test_kill_campaign_central.py",
    "tests/faults/test_soak.py",
    "tests/central_server/test_programme_process.py",
    "tests/fuzz/test_fuzz_campaign_kiosk.py",
    "tests/crash/test_crash_recovery.py",
    "tests/fuzz/test_fuzz_campaigns.py",
    "tests/simulation/test_simulate.py",
    "tests/web/test_consultation.py",
    "tests/network/test_network_end_to_end.py",
    "tests/network/test_network_browser.py",
    "tests/fuzz/test_fuzz_findings.py",
    "tests/central_server/test_recovery.py",
    "tests/replica/test_cluster.py",
    "tests/videobingo/test_play.py",
    "tests/central_server/test_audit_export.py",
    "tests/videobingo/test_vb_power_loss.py",
    "tests/network/test_annex_end_to_end.py",
    "tests/audit/test_demo_export.py",
    "tests/ops/test_backup_central.py",
    "tests/ops/test_backup_hall.py",
    "tests/videobingo/test_vb_languages_browser.py",
    "tests/web/test_languages_browser.py",
    "tests/network/test_gate_process.py",
    "tests/central_server/test_consultation.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


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

"""Test configuration shared by every layer.

Tests name the requirements they prove with ``@pytest.mark.req("R82.5", ...)``;
``bingo reqs`` collects them to show which requirements of REGULATION.md have tests.
"""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "req(*ids): the REGULATION.md requirement IDs this test proves"
    )
    config.addinivalue_line(
        "markers", "integration: uses real sockets, processes, databases or devices"
    )
    config.addinivalue_line(
        "markers", "campaign: a fuzzing or certification campaign of 10^5 inputs or draws"
    )

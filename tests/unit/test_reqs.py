"""``bingo reqs``: requirement IDs and the tests that prove them (DESIGN.md, Traceability)."""

from pathlib import Path

from click.testing import CliRunner

from hall_server.cli import main
from hall_server.cli.reqs import expand, requirement_ids

SPEC = """# Rules
- **R2.2 / R82.1** 90 balls.
- **R82.9-12** A virtual card ... **R92.5e / R95.1** checks.
- **R87.a** Line. **R89 Superbingo** ... (R88.1, R94.1) and R3.5.d.
"""


def test_ids_and_ranges_are_read_in_order_once_each() -> None:
    assert expand("R82.9-12 and R93.2-4") == [
        "R82.9", "R82.10", "R82.11", "R82.12", "R93.2", "R93.3", "R93.4",
    ]
    assert requirement_ids(SPEC + "R2.2 again") == [
        "R2.2", "R82.1", "R82.9", "R82.10", "R82.11", "R82.12", "R92.5e", "R95.1",
        "R87.a", "R89", "R88.1", "R94.1", "R3.5.d",
    ]


def test_the_command_lists_proofs_and_gaps(tmp_path: Path) -> None:
    (tmp_path / "spec.md").write_text(SPEC)
    tests = tmp_path / "suite"
    tests.mkdir()
    (tests / "test_sample.py").write_text(
        "import pytest\n"
        "pytestmark = pytest.mark.req('R2.2')\n"
        "@pytest.mark.req('R82.9-12')\n"
        "def test_library():\n    pass\n"
        "def test_R87_a_line():\n    pass\n"
        "@pytest.mark.req('R99.9')\n"
        "def test_other():\n    pass\n"
    )
    (tests / "conftest.py").write_text(
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'req(*ids): requirement IDs')\n"
    )
    result = CliRunner().invoke(main, ["reqs", "--spec", str(tmp_path / "spec.md"), "--tests", str(tests)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "R2.2      3 test(s): test_library, test_R87_a_line and 1 more" in lines
    assert any(line.startswith("R82.11    1 test(s): test_library") for line in lines)
    assert "R88.1     no test" in lines
    assert "marked but not in the regulation: R87, R99.9" in lines
    assert lines[-1] == "13 requirement IDs, 5 with tests, 8 with no test (3 tests read)"
    missing = CliRunner().invoke(
        main, ["reqs", "--missing", "--spec", str(tmp_path / "spec.md"), "--tests", str(tests)]
    )
    assert "R2.2" not in missing.output and "R94.1     no test" in missing.output


def test_a_missing_spec_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["reqs", "--spec", str(tmp_path / "nope.md"), "--tests", str(tmp_path)])
    assert result.exit_code == 1
    assert "Error: " in result.output and "Traceback" not in result.output

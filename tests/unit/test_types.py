"""The code type-checks: mypy over every package of the servers and the shared domain.

mypy reads its settings from setup.cfg (``[mypy]``: untyped functions are checked too).
The firmware is MicroPython and is checked by pyright against the MicroPython stubs
(tests/firmware/test_firmware_build.py).
"""

import sys
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("protocol", "server_kit", "hall_server", "central_server", "terminals", "simulation", "regulator")


def test_mypy_finds_no_error_in_any_package(tmp_path: Path) -> None:
    # mypy raises the process's recursion limit for good; the tests after this one (a TOML file
    # nested too deeply, tests/integration/test_config_typos.py) need the interpreter's own.
    limit = sys.getrecursionlimit()
    try:
        out, err, status = api.run(
            ["--config-file", str(ROOT / "setup.cfg"), "--cache-dir", str(tmp_path / "mypy-cache"),
             *(str(ROOT / p) for p in PACKAGES)]
        )
    finally:
        sys.setrecursionlimit(limit)
    assert status == 0, f"mypy found errors:\n{out}{err}"
    assert "Success: no issues found" in out

"""The systemd units of the release (deploy/systemd/) pass ``systemd-analyze verify``:
every directive known, the command each starts executable, the service locked down
(a dedicated user, a read-only system, one writable state folder, no new privileges)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
#: Where a unit expects the release installed (docs/deploy.md).
INSTALLED = "/opt/bingo/venv/bin/bingo"

pytestmark = pytest.mark.integration
needs_systemd = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="systemd is not installed (./test.sh installs it)")


def _service(unit: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit.read_text())
    return parser["Service"]


def test_there_is_a_unit_for_the_hall_the_central_server_and_the_receiver() -> None:
    assert [unit.name for unit in UNITS] == ["bingo-central.service", "bingo-hall.service",
                                            "bingo-regulator.service"]


@needs_systemd
@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_analyze_verify_finds_nothing_to_say(unit: Path, tmp_path: Path) -> None:
    # The unit names the release as installed; here the command is this checkout's.
    bingo = Path(sys.executable).parent / "bingo"
    copy = tmp_path / unit.name
    copy.write_text(unit.read_text().replace(INSTALLED, str(bingo)))
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", str(copy)],
                          capture_output=True, text=True, timeout=60)
    said = [line for line in (done.stdout + done.stderr).splitlines() if unit.name in line or "Unknown" in line]
    assert done.returncode == 0 and not said, done.stdout + done.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_each_service_runs_locked_down_as_its_own_user_writing_only_its_state(unit: Path) -> None:
    service = _service(unit)
    assert service["User"] not in ("", "root") and service["ProtectSystem"] == "strict"
    assert service["NoNewPrivileges"] == "yes" and service["ProtectHome"] == "yes"
    assert service["StateDirectory"] == unit.stem and service["StateDirectoryMode"] == "0700"
    assert service["UMask"] == "0077" and service["CapabilityBoundingSet"] == ""
    command = service["ExecStart"].split()
    assert command[0] == INSTALLED and command[-2:] == ["--log-format", "json"]
    assert "ReadWritePaths" not in service  # the state folder is the only one written

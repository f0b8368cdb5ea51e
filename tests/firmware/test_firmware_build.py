"""The firmware builds and runs where it must: every module compiles with mpy-cross and
imports under the MicroPython unix port, it type-checks against the rp2 stubs with
pyright, and the codec and logic pass their checks under MicroPython itself."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from ball_blower_fw.version import IMAGE_FILES
from hall_server.blower.simulator import micropython_binary

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FIRMWARE_MODULES = sorted(
    [str(p.relative_to(ROOT)) for p in (ROOT / "ball_blower_fw").glob("*.py")]
    + ["protocol/blower_frames.py", "protocol/blower_link.py", "protocol/blower_messages.py"])
BIN = Path(sys.executable).parent


def micropython(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MICROPYPATH=f"{ROOT}:{HERE / 'fake_machine'}:.frozen")
    return subprocess.run([micropython_binary(), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_image_lists_every_board_module() -> None:
    """The image hash covers every module the board runs (all but the host layer)."""
    host_only = {"ball_blower_fw/host.py", "ball_blower_fw/chamber.py"}
    assert set(IMAGE_FILES) == set(FIRMWARE_MODULES) - host_only


@pytest.mark.parametrize("module", FIRMWARE_MODULES)
def test_mpy_cross_compiles(module: str, tmp_path: Path) -> None:
    out = tmp_path / "module.mpy"
    result = subprocess.run([str(BIN / "mpy-cross"), "-o", str(out), module], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0


@pytest.mark.integration
def test_every_module_imports_under_the_unix_port() -> None:
    names = [m[:-3].replace("/", ".") for m in FIRMWARE_MODULES]
    script = "".join("import %s\n" % n for n in names) + "print('imported', %d)" % len(names)
    result = micropython("-c", script)
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.strip() == "imported %d" % len(names)


@pytest.mark.integration
@pytest.mark.req("R83.6")
def test_codec_logic_and_board_layer_pass_under_micropython() -> None:
    """Golden bytes fed one byte at a time, a keyed 90-ball game, the board on fake pins."""
    result = micropython("tests/firmware/mp_checks.py", "tests/firmware/golden_frames.json")
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.splitlines()[-1] == "ALL OK"


@pytest.mark.integration
def test_firmware_type_checks_against_the_rp2_stubs() -> None:
    typeshed = sysconfig.get_paths()["purelib"]
    result = subprocess.run([str(BIN / "pyright"), "-p", "ball_blower_fw", "--typeshedpath",
                             typeshed], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout
    assert "0 errors" in result.stdout

"""The release as an operator installs it: the wheel built from this tree, installed into a
fresh virtual environment outside the tree with every dependency from the lock file checked
against its hashes (``pip install --require-hashes``), then a demo hall started from a
folder outside the tree through ``twist bingo-hall`` and through ``bingo hall serve``.

Each hall serves the demo's video bingo machine (``/vb/``: its paytable is package data),
answers ``/ready`` with 200 once its journal is verified, and ``/metrics`` in a form
``prometheus_client``'s parser reads.  The wheel and the environment are made once for the
module (the dependencies come from pip's cache after the first run)."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration]
REPO = Path(__file__).resolve().parents[2]
#: What the copy of the tree the wheel is built from leaves out (never part of a release).
NOT_SOURCE = shutil.ignore_patterns(".venv", ".git", "var", "build", "dist", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".mypy_cache", ".hypothesis", "dropin.cache")
#: Bounds for the build and the install (downloads, on a loaded machine).
BUILD_S, INSTALL_S = 300, 600


def run(command: list[str], timeout: float, cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh virtual environment with the wheel and its locked dependencies."""
    work = tmp_path_factory.mktemp("release")
    source = work / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)  # the tree itself is left as it is: no build/ in it
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(work / "dist"), str(source)],
        BUILD_S, work)
    [wheel] = (work / "dist").glob("bingo_hall-*-py3-none-any.whl")
    venv = work / "venv"
    run([sys.executable, "-m", "venv", str(venv)], INSTALL_S, work)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, "--require-hashes", "--no-deps", "-r", str(REPO / "requirements" / "runtime.lock")], INSTALL_S, work)
    run([*pip, "--no-deps", str(wheel)], INSTALL_S, work)
    run([str(venv / "bin" / "python"), "-m", "pip", "check"], INSTALL_S, work)  # nothing missing, nothing at odds
    return venv / "bin"


def get(hall: HallProcess, path: str) -> tuple[int, str, bytes]:
    context = ssl.create_default_context(cafile=str(hall.folder / "pki" / "ca.pem"))
    try:
        with urllib.request.urlopen(hall.base + path, timeout=WAIT, context=context) as answer:
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


@pytest.fixture(params=["twist", "bingo"])
def hall(request: pytest.FixtureRequest, installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    folder = tmp_path_factory.mktemp(f"hall-{request.param}")
    process = HallProcess(folder, demo=True, demo_pace=0.5)
    process.command = ([str(installed / "twist"), "--log-format", "text", "bingo-hall"] if request.param == "twist" else
                       [str(installed / "bingo"), "hall", "serve"])
    try:
        yield process.start()
    finally:
        process.stop()


def test_the_installed_wheel_serves_a_demo_hall_with_its_machine_ready_and_measured(hall: HallProcess) -> None:
    assert not hall.folder.is_relative_to(REPO)
    assert b"Traceback" not in hall.output, hall.output.decode(errors="replace")
    status, content_type, page = get(hall, "/vb/")
    assert status == 200 and content_type.startswith("text/html"), (status, page[:300])
    wait_until(lambda: get(hall, "/ready")[0] == 200, WAIT, "the installed hall's /ready to answer 200",
               seen=lambda: get(hall, "/ready"), interval=0.2)
    assert json.loads(get(hall, "/ready")[2]) == {"ready": True}
    status, _, body = get(hall, "/metrics")
    assert status == 200, body[:300]
    names = {family.name for family in text_string_to_metric_families(body.decode())}
    assert {"bingo_commands", "bingo_journal_last_record", "bingo_ready", "process_cpu_seconds"} <= names, names

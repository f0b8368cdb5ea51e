"""A newer release starts on what release 0.1.0 left behind (tests/data/release-0.1.0).

The hall's folder after a demo and the central server's after a network game were made by
0.1.0; this release starts on each as an operator upgrading would, after the one edit
CHANGELOG.md's "Upgrading from 0.1.0" asks (every staff login's class I licence, R79): the
journal is verified to its last record, nothing of it is rewritten, and a clean stop leaves a
journal that `bingo journal verify` passes.
"""

from __future__ import annotations

from contextlib import closing
import re
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.central_server.support import CentralProcess
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration]

RELEASE = Path(__file__).parents[1] / "data" / "release-0.1.0"
#: Where release 0.1.0's central folder was made: its configuration names it.
MADE_IN = "/tmp/rel010/net"


def unpacked(archive: str, into: Path) -> Path:
    with tarfile.open(RELEASE / archive) as opened:
        opened.extractall(into, filter="data")
    return into


def journal(database: Path) -> list[tuple[int, str]]:
    """Each record's number and hash, as the database holds them."""
    with closing(sqlite3.connect(database)) as connection, connection:
        return connection.execute("SELECT seq, hash FROM journal ORDER BY seq").fetchall()


def licensed(config: Path) -> None:
    """The upgrade's one edit: a class I licence for every staff login (CHANGELOG.md)."""
    numbers = iter(range(1, 1000))
    config.write_text(re.sub(r'(password_hash = "[^"]*"\n)', lambda m: m.group(1) + (
        f'licence = "AND-{next(numbers):04d}"\nlicence_valid_until = "2030-12-31"\n'), config.read_text()))


def test_a_hall_folder_of_release_0_1_0_starts_on_this_release_with_its_journal_whole(tmp_path: Path) -> None:
    folder = unpacked("hall-var.tar.xz", tmp_path) / "var"
    before = journal(folder / "hall.sqlite3")
    assert len(before) == 764
    config = folder / "hall.toml"
    refused = subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve",
                              "--config", str(config)], cwd=folder, capture_output=True, text=True, timeout=120,
                             env={"BINGO_HOME": str(folder), "PATH": "/usr/bin:/bin"})
    # Unedited, it names what the upgrade asks, and changes nothing.
    assert refused.returncode != 0 and "licence" in refused.stderr, refused.stderr
    assert journal(folder / "hall.sqlite3") == before
    licensed(config)
    config.write_text(re.sub(r"(?m)^port = \d+$", "port = 0", config.read_text(), count=1))
    hall = HallProcess(folder).start()
    try:
        output = hall.output.decode(errors="replace")
        assert "Recovered" in output and "the hall is at record" in output, output
    finally:
        hall.stop()
    after = journal(folder / "hall.sqlite3")
    assert after[: len(before)] == before  # what 0.1.0 wrote stands as it was
    verified = subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", "journal", "verify"],
                              cwd=folder, capture_output=True, text=True, timeout=120,
                              env={"BINGO_HOME": str(folder), "PATH": "/usr/bin:/bin"})
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_central_folder_of_release_0_1_0_starts_on_this_release_with_its_journal_whole(tmp_path: Path) -> None:
    root = unpacked("central.tar.xz", tmp_path)
    folder = root / "central"
    config = folder / "central.toml"
    text = config.read_text().replace(MADE_IN, str(root))
    config.write_text(re.sub(r"(?m)^port = \d+$", "port = 0", text, count=1))
    before = journal(folder / "central.sqlite3")
    assert before
    central = CentralProcess(config).start()
    try:
        assert b"Journal verified" in central.output, central.output.decode(errors="replace")
    finally:
        central.stop()
    assert journal(folder / "central.sqlite3")[: len(before)] == before

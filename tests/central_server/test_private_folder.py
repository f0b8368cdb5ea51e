"""The central server's folder is its own user's alone (folders 0700, files 0600), checked at each start.

The attack: another user of the machine reads the central server's database, its
``central.toml`` (a replicated one holds the database owner's password) and its signed
reports, all 0644 in 0755 folders.  A real ``bingo central serve`` starts in a folder an
operator would give it (its parent open to everyone, as ``/srv`` is), over files an
older release left readable; once it listens, every file is 0600 and every folder 0700,
and, run as root, the ``nobody`` user can read none of them.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.central_server.support import CentralProcess, config_text, make_pki

pytestmark = pytest.mark.integration


@pytest.fixture
def open_parent() -> Iterator[Path]:
    """A folder every user may enter (pytest's own temporary folder is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="bingo-central-home-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def readable_by_nobody(paths: list[Path]) -> list[Path]:
    """The paths the ``nobody`` user can read (open for reading, or list a folder)."""
    found = []
    for path in paths:
        test = ["test", "-r", str(path)] if path.is_file() else ["ls", str(path)]
        done = subprocess.run(["runuser", "-u", "nobody", "--", *test], capture_output=True, check=False)
        if done.returncode == 0:
            found.append(path)
    return found


def test_N11_the_central_server_s_database_configuration_and_reports_are_its_user_s_alone(open_parent: Path) -> None:
    pki_dir = make_pki(open_parent / "pki")
    home = open_parent / "central"
    reports = home / "reports" / "2026-01-01"
    reports.mkdir(parents=True)
    left = reports / "daily-report.json"
    left.write_text("{}")  # a report an older release wrote, 0644 in 0755 folders
    config = home / "central.toml"
    config.write_text(config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}"))
    for path in (home, home / "reports", reports):
        path.chmod(0o755)
    for path in (left, config):
        path.chmod(0o644)
    process = CentralProcess(config).start()
    try:
        database = home / "central.sqlite3"
        assert database.exists()
        owned = [home, *home.rglob("*"), pki_dir, *pki_dir.rglob("*")]
        wide = {str(path): oct(stat.S_IMODE(path.stat().st_mode)) for path in owned
                if stat.S_IMODE(path.stat().st_mode) != (0o700 if path.is_dir() else 0o600)}
        assert not wide, f"not private to the central server's user: {wide}"
        if os.geteuid() == 0:
            assert readable_by_nobody([config, database, left, home / "reports"]) == []
    finally:
        process.stop()

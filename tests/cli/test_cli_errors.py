"""No ``bingo`` command prints a traceback; a typed path or URL is checked, never guessed at.

Each case here was found by a new user: a database created at the root of the file
system for a mistyped folder, tracebacks for an unknown database kind and for a binary
card file, ``bingo release check`` looking under ``var/`` whatever ``$BINGO_HOME`` said,
``bingo reqs`` failing where the test tools are not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from hall_server.cli import main

REPOSITORY = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, list(args), env=env)
    assert "Traceback" not in result.output
    return result


def test_a_typed_sqlite_path_in_a_missing_folder_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "dir"
    result = run("--db", f"sqlite:///{missing / 'x.db'}", "cards", "list")
    assert result.exit_code == 1
    assert f"the folder {missing} does not exist" in result.output
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("url, said", [
    ("garbage://x", "'garbage' is not a database this system knows"),
    ("not a url", "not a database URL"),
])
def test_an_unknown_database_url_is_one_line(url: str, said: str) -> None:
    result = run("--db", url, "cards", "list")
    assert result.exit_code == 1
    assert said in result.output and len(result.output.strip().splitlines()) == 1


def test_a_database_password_is_never_shown() -> None:
    result = run("--db", "postgresql+psycopg://clerk:s3cret@127.0.0.1:1/hall", "cards", "list")
    assert result.exit_code == 1
    assert "s3cret" not in result.output and "clerk:***@127.0.0.1:1" in result.output


def test_a_binary_card_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    binary = tmp_path / "cards.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    result = run("--db", f"sqlite:///{tmp_path / 'hall.sqlite3'}", "cards", "verify", str(binary))
    assert result.exit_code == 1
    assert "not UTF-8 text: a card file is CSV text" in result.output


def test_release_check_reads_the_manifest_of_the_hall_folder(tmp_path: Path) -> None:
    home = tmp_path / "hall-home"
    env = {"BINGO_HOME": str(home)}
    missing = run("release", "check", env=env)
    assert missing.exit_code == 1 and str(home / "release-manifest.json") in missing.output
    assert run("release", "manifest", env=env).exit_code == 0
    assert (home / "release-manifest.json").is_file()
    checked = run("release", "check", env=env)
    assert checked.exit_code == 0 and str(home / "release-manifest.json") in checked.output


def test_reqs_works_without_the_test_tools(tmp_path: Path) -> None:
    """After ``./run.sh`` only the runtime is installed: ``bingo reqs`` must not need pytest."""
    blocked = (
        "import sys\n"
        "for name in ('pytest', '_pytest', 'hypothesis', 'pytest_twisted'):\n"
        "    sys.modules[name] = None\n"
        "from hall_server.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        [sys.executable, "-c", blocked, "reqs", "--tests", str(REPOSITORY / "tests")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "requirement IDs," in done.stdout.splitlines()[-1]
    assert "R82.5" in done.stdout


def test_an_unexpected_fault_is_one_line_and_its_details_go_to_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    @click.command("explode")
    def explode() -> None:
        raise RuntimeError("a fault of ours")

    monkeypatch.setitem(main.commands, "explode", explode)
    result = run("explode")
    assert result.exit_code == 1
    line = result.output.strip()
    assert "internal fault (RuntimeError: a fault of ours)" in line and "\n" not in line
    report = Path(line.rsplit("send ", 1)[1].split(" to support")[0])
    try:
        assert "RuntimeError: a fault of ours" in report.read_text()
    finally:
        report.unlink()

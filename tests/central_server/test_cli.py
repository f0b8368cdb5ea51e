"""``bingo central serve`` and ``twist bingo-central``: found without an import, run as processes.

The ``bingo`` command (``hall_server/cli``) never imports the central server; it finds
``bingo central`` through the ``bingo.commands`` entry point group that setup.cfg
declares.  The tests put that declaration on the path as an installed distribution's
metadata would be (a ``*.dist-info`` folder), so they prove the discovery without
reinstalling the package.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.central_server.support import REPO, ENTRY_POINT_LINE, CentralProcess, bingo, config_text, installed, make_pki

pytestmark = pytest.mark.integration


def test_pyproject_declares_the_central_commands() -> None:
    text = (REPO / "pyproject.toml").read_text()
    name, _, value = ENTRY_POINT_LINE.partition(" = ")
    assert f'[project.entry-points."bingo.commands"]\n{name} = "{value}"' in text


def test_bingo_finds_the_central_commands_through_the_entry_point_group(tmp_path: Path) -> None:
    site = installed(tmp_path, f"[bingo.commands]\n{ENTRY_POINT_LINE}\n")
    listed = bingo("--help", extra_path=site)
    assert listed.returncode == 0 and "central" in listed.stdout
    serve = bingo("central", "serve", "--help", extra_path=site)
    assert serve.returncode == 0 and "--config" in serve.stdout, serve.stderr


def test_a_command_group_that_cannot_load_is_reported_and_the_rest_works(tmp_path: Path) -> None:
    site = installed(tmp_path, "[bingo.commands]\nbroken = no_such_module:register\n")
    listed = bingo("--help", extra_path=site)
    assert listed.returncode == 0 and "hall" in listed.stdout
    assert "the broken commands cannot be loaded" in listed.stderr


def test_bingo_central_serve_without_a_configuration_says_where_it_looked(tmp_path: Path) -> None:
    site = installed(tmp_path, f"[bingo.commands]\n{ENTRY_POINT_LINE}\n")
    done = bingo("central", "serve", "--config", str(tmp_path / "none.toml"), extra_path=site)
    assert done.returncode == 1 and "no configuration at" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.req("R92.5")
def test_twist_bingo_central_runs_the_same_service_with_a_warning_on_sqlite(tmp_path: Path) -> None:
    pki_dir = make_pki(tmp_path / "pki")
    config = tmp_path / "central.toml"
    config.write_text(config_text(tmp_path, pki_dir, f"sqlite:///{tmp_path / 'central.sqlite3'}"))
    twist = Path(sys.executable).with_name("twist")
    process = CentralProcess(config, [str(twist), "--log-format=text", "bingo-central", "--config", str(config)]).start()
    try:
        assert b"for a single-node demo only" in process.output
        assert b"Journal verified" in process.output
    finally:
        process.stop()

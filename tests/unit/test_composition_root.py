"""Only the composition roots read the environment and the configuration (DESIGN.md, STYLE.md 9).

The hall server's root is ``hall_server/tap.py`` (with the ``twist`` plugin that calls
it), the command line's is ``hall_server/cli/context.py``; every other module is handed
its paths and settings.  The check reads the source (the syntax tree), so it holds for
code no test happens to run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("protocol", "server_kit", "hall_server", "central_server", "terminals", "regulator", "twisted/plugins")
ROOTS = {"hall_server/tap.py", "hall_server/cli/context.py", "central_server/tap.py"}
#: Modules that touch the environment without reading a setting from it, and why.
PASSES_ENVIRONMENT_ON = {
    # The blower simulator's own process hands its environment to the firmware it starts.
    "hall_server/blower/simulator.py",
    # The demo's headless players run in a child process that gets the hall's environment.
    "hall_server/web/demo_terminals.py",
    # pg_dump and pg_restore get the PATH to find their own libraries, nothing else of it.
    "server_kit/backup_postgres.py",
}
#: The configuration modules define the readers; only the roots may call them.
CONFIG_MODULES = {"hall_server/config.py", "central_server/config.py"}
CONFIG_READERS = {"load_config", "ensure_config", "parse_config"}
#: Modules that handle a configuration file as a file, never taking a setting from it, and why.
HANDLES_CONFIGURATION_FILES = {
    # A restore moves the configuration into its new folder, checks it still parses and reads
    # it back with the server's own reader to prove the move; the server reads it at its start.
    "server_kit/backup.py",
    "hall_server/backup.py",
    "central_server/backup.py",
    # The regulator's registry of senders is data the regulator keeps (who may send), in TOML.
    "regulator/senders.py",
    # The readers' one way of parsing a TOML file (load_toml); the readers are the servers' own.
    "server_kit/settings.py",
}
ENVIRONMENT_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv"}
SETTING_NAME = re.compile(r"BINGO_[A-Z_]+")


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def environment_reads(tree: ast.AST) -> list[str]:
    """Where ``tree`` reads the process environment: ``os.environ``, ``getenv``, click's ``envvar=``,
    or names a ``BINGO_*`` setting."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT_NAMES:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"line {node.lineno}: from os import {a.name}" for a in node.names if a.name in ENVIRONMENT_NAMES]
        elif isinstance(node, ast.keyword) and node.arg in ("envvar", "auto_envvar_prefix"):
            found.append(f"line {node.value.lineno}: {node.arg}=")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SETTING_NAME.fullmatch(node.value):
            found.append(f"line {node.lineno}: {node.value!r}")
    return found


def configuration_reads(tree: ast.AST) -> list[str]:
    """Where ``tree`` calls a reader of the configuration file, or parses TOML itself."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in CONFIG_READERS:
                found.append(f"line {node.lineno}: {called}()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"line {node.lineno}: imports {n}" for n in names if n.split(".")[0] in ("tomllib", "tomli")]
    return found


@pytest.mark.parametrize("path", _modules(), ids=_name)
def test_no_module_outside_the_composition_roots_reads_the_environment(path: Path) -> None:
    """``BINGO_HOME`` and every other setting reach a module as a parameter, never from ``os.environ``."""
    name = _name(path)
    if name in ROOTS or name in PASSES_ENVIRONMENT_ON:
        return
    reads = environment_reads(ast.parse(path.read_text(encoding="utf-8"), filename=name))
    assert not reads, f"{name} reads the environment ({'; '.join(reads)}): take it as a parameter from the root"


@pytest.mark.parametrize("path", _modules(), ids=_name)
def test_no_module_outside_the_composition_roots_reads_the_configuration(path: Path) -> None:
    """The configuration file is read by the roots and handed down as values."""
    name = _name(path)
    if name in ROOTS or name in CONFIG_MODULES or name in HANDLES_CONFIGURATION_FILES:
        return
    reads = configuration_reads(ast.parse(path.read_text(encoding="utf-8"), filename=name))
    assert not reads, f"{name} reads the configuration ({'; '.join(reads)}): the root hands it down"


def test_the_checks_find_what_they_look_for() -> None:
    """The two detectors are not vacuous: each finds the forms it is meant to refuse."""
    reading = ast.parse(
        "import os\nfrom os import getenv\nhome = os.environ.get('BINGO_HOME')\n"
        "click.option('--db', envvar='BINGO_DB')\n"
    )
    assert len(environment_reads(reading)) == 5
    configured = ast.parse("import tomllib\nconfig = load_config(path)\nhall.ensure_config(path)\n")
    assert len(configuration_reads(configured)) == 3
    assert environment_reads(ast.parse("'''Moves it with $BINGO_HOME.'''")) == []

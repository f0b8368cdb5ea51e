"""``bingo --help`` imports click and none of the system: each subcommand's module is
imported only when that subcommand runs or its own help is asked for (docs/testing.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from hall_server.cli import SUBCOMMANDS, main

#: What a listing of the commands must not pull in: the database, the arrays, the reactor, the PDFs.
HEAVY = ("sqlalchemy", "numpy", "twisted", "reportlab", "cryptography", "alembic", "nacl")


def _modules_after(code: str) -> set[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_bingo_help_imports_none_of_the_heavy_libraries() -> None:
    loaded = _modules_after(
        "from click.testing import CliRunner\n"
        "from hall_server.cli import main\n"
        "result = CliRunner().invoke(main, ['--help'])\n"
        "assert result.exit_code == 0, result.output"
    )
    assert not {name for name in loaded if name.split(".")[0] in HEAVY}
    assert not {name for name in loaded if name.startswith("hall_server.cli.") and name != "hall_server.cli"}


def test_the_listing_shows_each_subcommands_own_summary() -> None:
    """The table ``bingo --help`` reads says what each command's own help says."""
    for name, (_, summary) in SUBCOMMANDS.items():
        command = main.get_command(click.Context(main), name)
        assert command is not None, name
        assert command.get_short_help_str(10_000) == summary, name


def test_every_subcommand_is_listed_and_loads() -> None:
    context = click.Context(main)
    names = main.list_commands(context)
    assert {*SUBCOMMANDS, "central", "regulator"} <= set(names)
    for name in names:
        assert isinstance(main.get_command(context, name), click.Command), name

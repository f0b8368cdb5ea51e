"""``bingo --help`` imports click and none of the system: each subcommand's module is
imported only when that subcommand runs or its own help is asked for; and no command's
help, at any depth, imports a heavy library or a module of the servers beyond the ones
that declare the commands (docs/testing.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from hall_server.cli import SUBCOMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
#: What a listing of the commands must not pull in: the database, the arrays, the reactor, the PDFs.
HEAVY = ("sqlalchemy", "numpy", "twisted", "reportlab", "cryptography", "alembic", "nacl", "scipy")
#: The packages of the system, whose modules a help loads only if they declare commands.
SYSTEM = ("protocol", "server_kit", "hall_server", "central_server", "regulator", "terminals", "simulation")
#: The modules that declare the commands: the ``bingo`` command's and the ``bingo.commands`` entry points'.
DECLARING = ("hall_server.cli", "central_server.cli", "regulator.cli")
#: What else of the system a help may load, small and framework-free, and why.
SHOWN_IN_HELP = {
    "protocol", "server_kit", "hall_server", "hall_server.hall", "central_server", "regulator",  # the packages
    "protocol.errors", "protocol.money",  # the domain's error, which the bingo command turns into one line
    "server_kit.settings",  # the configuration files' declaration (bingo config check)
    "server_kit.limits",  # the receiver's connection limits, its options' defaults (bingo regulator serve)
    "server_kit.pki_defaults",  # the certificates' validity and revocation reasons (bingo pki issue, revoke)
    "server_kit.actors", "hall_server.hall.roles",  # the staff roles bingo hall add-staff offers
}
#: Commands that hand every argument, ``--help`` too, to a program of their own.
HANDED_ON = {"vb cash-device": "python -m terminals.vb_cash_device, the device's own program"}

#: Asks for the help of every command reachable from ``bingo``, depth first, each group's
#: commands (a lazy one loaded by its own help) after the group's: prints, one JSON line a
#: command, the modules its help added to those loaded before it.
WALK = """
import json, sys
import click
from click.testing import CliRunner

loaded = set(sys.modules)
from hall_server.cli import main

def walk(path, command):
    if command.get_help_option(click.Context(command, **command.context_settings)) is None:
        print(json.dumps({"command": path, "handed_on": True}))
        return
    global loaded
    result = CliRunner().invoke(main, [*path, "--help"])
    added, loaded = sorted(set(sys.modules) - loaded), set(sys.modules)
    print(json.dumps({"command": path, "exit_code": result.exit_code, "output": result.output, "added": added}))
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            walk([*path, name], command.get_command(context, name))

walk([], main)
"""


def _modules_after(code: str) -> set[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return set(json.loads(out.splitlines()[-1]))


def _not_declaring(name: str) -> bool:
    """A module of the system that declares no command and is not shown in a help."""
    return (name.split(".")[0] in SYSTEM and name not in SHOWN_IN_HELP
            and not any(name == module or name.startswith(f"{module}.") for module in DECLARING))


def test_bingo_help_imports_none_of_the_heavy_libraries() -> None:
    loaded = _modules_after(
        "from click.testing import CliRunner\n"
        "from hall_server.cli import main\n"
        "result = CliRunner().invoke(main, ['--help'])\n"
        "assert result.exit_code == 0, result.output"
    )
    assert not {name for name in loaded if name.split(".")[0] in HEAVY}
    assert not {name for name in loaded if name.startswith("hall_server.cli.") and name != "hall_server.cli"}


def test_every_commands_help_imports_only_what_declares_the_commands() -> None:
    """``bingo X --help`` and ``bingo X Y --help``, for every group and command (``central`` and
    ``regulator`` too), load no heavy library and no module of the servers beyond the ones that
    declare the commands: the first command whose help pulled one in is named."""
    out = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    walked = [json.loads(line) for line in out.splitlines()]
    helped = [entry for entry in walked if not entry.get("handed_on")]
    for entry in helped:
        command = " ".join(["bingo", *entry["command"], "--help"])
        assert entry["exit_code"] == 0, f"{command} failed:\n{entry['output']}"
        heavy = [name for name in entry["added"] if name.split(".")[0] in HEAVY]
        assert not heavy, f"{command} imports {', '.join(sorted({n.split('.')[0] for n in heavy}))} ({heavy[:5]}...)"
        beyond = [name for name in entry["added"] if _not_declaring(name)]
        assert not beyond, f"{command} imports modules that declare no command: {', '.join(beyond)}"
    assert {" ".join(entry["command"]) for entry in walked if entry.get("handed_on")} == set(HANDED_ON)
    names = {" ".join(entry["command"]) for entry in helped}
    assert {*SUBCOMMANDS, "central", "regulator", "hall serve", "central cluster start", "regulator serve"} <= names
    assert len(names) > 80, sorted(names)  # every level was walked, not only the first


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

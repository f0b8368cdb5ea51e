"""The ``bingo`` command: one entry point, a subcommand per area of the system.

Errors of the domain (a refused sale, a malformed card file, an unknown set) reach
the user as one line on stderr and a non-zero exit, never as a traceback.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

import click

from protocol.errors import DomainError


#: Each subcommand of the hall's ``bingo``: where it lives and the line ``bingo --help`` shows.
#: Its module is imported only when the subcommand runs (or its own ``--help`` is asked),
#: so ``bingo --help`` imports click and nothing of the system (docs/testing.md).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("hall_server.cli.audit", "Audit exports: a day's raw facts and recorded money, for `bingo replay`, and their check."),
    "backup": ("hall_server.cli.backup", "Back the hall up while it runs: one archive, checked and signed."),
    "cards": ("hall_server.cli.cards", "Card sets, series and virtual card libraries."),
    "config": ("hall_server.cli.config", "Check a server's configuration file before it starts."),
    "demo": ("hall_server.cli.demo", "Play one game with simulated sellers on cards generated for it; nothing is stored."),
    "hall": ("hall_server.cli.hall", "The hall server: serve, configuration, staff passwords."),
    "journal": ("hall_server.cli.journal", "The append-only, signed journal of every fact."),
    "minutes": ("hall_server.cli.minutes", "The minutes book (R77, R83.3-5): signed PDF and CSV reports from the journal."),
    "pki": ("hall_server.cli.pki", "The operator's certificate authority and the certificates of servers, staff and terminals."),
    "release": ("hall_server.cli.release", "The installed release and its manifest (R92.5e software check)."),
    "replay": ("hall_server.cli.replay", "Recompute every prize and pot of the scenario in FILE (- for stdin)."),
    "report": ("hall_server.cli.report", "Reports to the regulator, signed with the server's report-signing certificate."),
    "reqs": ("hall_server.cli.reqs", "List every requirement ID of REGULATION.md with the tests that prove it."),
    "restore": ("hall_server.cli.backup", "Restore a server's backup archive into a new folder, verified."),
    "rng": ("hall_server.cli.rng", "The random ball generator (R92.10): certification runs and their signed reports."),
    "vb": ("hall_server.cli.vb", "Video bingo machines: paytables and their return."),
}


class BingoGroup(click.Group):
    """The ``bingo`` command: its subcommands loaded when asked for, domain errors as one line."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: name -> (module, summary) of a command not imported yet
        self.lazy: dict[str, tuple[str, str]] = dict(lazy or {})

    def add_lazy(self, name: str, module: str, summary: str) -> None:
        """A command ``name``, the attribute of the same name in ``module``, imported when used."""
        self.lazy[name] = (module, summary)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _ = self.lazy[cmd_name]
            self.add_command(getattr(import_module(module), cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of subcommands, from the table: listing them imports none of them."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is not None:
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(formatter.width - 6 - len(name))))
            else:
                rows.append((name, self.lazy[name][1]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DomainError as error:
            raise click.ClickException(str(error)) from None
        except OSError as error:
            from hall_server.cli.context import hall_home  # imported when needed: see SUBCOMMANDS
            from server_kit.db.faults import describe_os_error

            raise click.ClickException(describe_os_error(error, hall_home())) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except Exception as error:  # the last resort: a fault of ours still gets one line, not a traceback
            raise click.ClickException(_internal_error(error)) from None


def _internal_error(error: Exception) -> str:
    """One line for an unexpected fault; its traceback goes to a file for the report."""
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="bingo-fault-", suffix=".txt", delete=False) as report:
        report.write(f"bingo {' '.join(sys.argv[1:])}\n\n")
        traceback.print_exception(error, file=report)
    return (
        f"internal fault ({type(error).__name__}: {error}); nothing was changed by it. "
        f"Please send {report.name} to support"
    )


@click.group(cls=BingoGroup, lazy=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    default=None,
    metavar="URL",
    help="Database URL (default: SQLite under var/, or $BINGO_DB).",
)
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """Run and inspect a licensed bingo hall."""
    from hall_server.cli.context import Hall

    ctx.obj = Hall(db)



#: The entry point group other parts of the system add their commands through
#: (``bingo central`` is the central server's): found at run time, never imported here.
COMMAND_GROUP = "bingo.commands"


def add_installed_commands(group: click.Group = main) -> list[str]:
    """Add the commands of every installed ``bingo.commands`` entry point; the names added.

    An entry point names a module (``central_server.cli``) whose ``register(group)`` adds
    its commands; an entry point that cannot be loaded is reported on stderr and left out:
    the other commands still work.
    """
    from importlib.metadata import entry_points

    added: list[str] = []
    for entry in entry_points(group=COMMAND_GROUP):
        if entry.name in added:
            continue  # the same distribution seen twice on the path
        try:
            entry.load()(group)
        except Exception as error:
            click.echo(f"bingo: the {entry.name} commands cannot be loaded ({entry.value}: {error})", err=True)
            continue
        added.append(entry.name)
    return added


add_installed_commands()

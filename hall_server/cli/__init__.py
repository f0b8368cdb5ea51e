"""The ``bingo`` command: one entry point, a subcommand per area of the system.

Errors of the domain (a refused sale, a malformed card file, an unknown set) reach
the user as one line on stderr and a non-zero exit, never as a traceback.
"""

from __future__ import annotations

import sys
import tempfile
import traceback
from typing import Any

import click

from hall_server.cli.audit import audit
from hall_server.cli.cards import cards
from hall_server.cli.context import Hall
from hall_server.cli.demo import demo
from hall_server.cli.hall import hall
from hall_server.cli.journal import journal
from hall_server.cli.minutes import minutes
from hall_server.cli.pki import pki
from hall_server.cli.release import release
from hall_server.cli.report import report
from hall_server.cli.reqs import reqs
from hall_server.cli.replay import replay
from hall_server.cli.rng import rng
from hall_server.cli.vb import vb
from protocol.errors import DomainError


class BingoGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DomainError as error:
            raise click.ClickException(str(error)) from None
        except OSError as error:
            raise click.ClickException(f"{error.strerror or error}: {error.filename}") from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except Exception as error:  # the last resort: a fault of ours still gets one line, not a traceback
            raise click.ClickException(_internal_error(error)) from None


def _internal_error(error: Exception) -> str:
    """One line for an unexpected fault; its traceback goes to a file for the report."""
    with tempfile.NamedTemporaryFile("w", prefix="bingo-fault-", suffix=".txt", delete=False) as report:
        report.write(f"bingo {' '.join(sys.argv[1:])}\n\n")
        traceback.print_exception(error, file=report)
    return (
        f"internal fault ({type(error).__name__}: {error}); nothing was changed by it. "
        f"Please send {report.name} to support"
    )


@click.group(cls=BingoGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    default=None,
    metavar="URL",
    help="Database URL (default: SQLite under var/, or $BINGO_DB).",
)
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """Run and inspect a licensed bingo hall."""
    ctx.obj = Hall(db)


main.add_command(audit)
main.add_command(cards)
main.add_command(demo)
main.add_command(hall)
main.add_command(journal)
main.add_command(minutes)
main.add_command(pki)
main.add_command(reqs)
main.add_command(release)
main.add_command(report)
main.add_command(replay)
main.add_command(vb)
main.add_command(rng)

#: The entry point group other parts of the system add their commands through
#: (``bingo central`` is the central server's): found at run time, never imported here.
COMMAND_GROUP = "bingo.commands"


def add_installed_commands(group: click.Group = main) -> list[str]:
    """Add the commands of every installed ``bingo.commands`` entry point; the names added.

    An entry point that cannot be loaded is reported on stderr and left out: the other
    commands still work.
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

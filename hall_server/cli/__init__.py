"""The ``bingo`` command: one entry point, a subcommand per area of the system.

Errors of the domain (a refused sale, a malformed card file, an unknown set) reach
the user as one line on stderr and a non-zero exit, never as a traceback.
"""

from __future__ import annotations

from typing import Any

import click

from hall_server.cli.cards import cards
from hall_server.cli.context import Hall
from hall_server.cli.demo import demo
from hall_server.cli.hall import hall
from hall_server.cli.journal import journal
from hall_server.cli.minutes import minutes
from hall_server.cli.pki import pki
from hall_server.cli.release import release
from hall_server.cli.reqs import reqs
from hall_server.cli.replay import replay
from hall_server.cli.rng import rng
from protocol.errors import DomainError


class BingoGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DomainError as error:
            raise click.ClickException(str(error)) from None
        except OSError as error:
            raise click.ClickException(f"{error.strerror or error}: {error.filename}") from None


@click.group(cls=BingoGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    envvar="BINGO_DB",
    default=None,
    metavar="URL",
    help="Database URL (default: SQLite under var/, or $BINGO_DB).",
)
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """Run and inspect a licensed bingo hall."""
    ctx.obj = Hall(db)


main.add_command(cards)
main.add_command(demo)
main.add_command(hall)
main.add_command(journal)
main.add_command(minutes)
main.add_command(pki)
main.add_command(reqs)
main.add_command(release)
main.add_command(replay)
main.add_command(rng)

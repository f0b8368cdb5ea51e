"""The ``bingo`` command: one entry point, a subcommand per area of the system."""

from __future__ import annotations

import click

from hall_server.cli.cards import cards


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Run and inspect a licensed bingo hall."""


main.add_command(cards)

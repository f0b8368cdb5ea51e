"""``bingo cards``: card sets, series and virtual libraries."""

import click


@click.group()
def cards() -> None:
    """Card sets, series and virtual card libraries."""

"""``bingo replay FILE``: the audit replay of FORMATS.md section 2.

Prints the result JSON and exits 0; on any invalid input prints one line on stderr
naming where the fault is, nothing on stdout, and exits 2.  ``FILE`` may be ``-`` for
standard input.
"""

from __future__ import annotations

import sys

import click

INVALID_INPUT = 2


@click.command()
@click.argument("file", metavar="FILE")
def replay(file: str) -> None:
    """Recompute every prize and pot of the scenario in FILE (- for stdin)."""
    from protocol.replay import ReplayError, replay_json

    try:
        if file == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(file, "rb") as source:
                raw = source.read()
    except OSError as error:
        click.echo(f"{file}: cannot be read: {error.strerror or error}", err=True)
        sys.exit(INVALID_INPUT)
    try:
        result = replay_json(raw)
    except ReplayError as error:
        click.echo(str(error), err=True)
        sys.exit(INVALID_INPUT)
    click.echo(result, nl=False)

"""``bingo vb``: video bingo tools; ``bingo vb rtp FILE`` is FORMATS.md section 4.

``rtp`` prints the exact return of a paytable as one line of JSON and exits 0 when it
meets the paytable's ``min_rtp_bp``, 3 when it does not (the result is still printed);
on an invalid or unreadable file it prints nothing on stdout, one line on stderr naming
the field at fault, and exits 2.  ``FILE`` may be ``-`` for standard input.
"""

from __future__ import annotations

import os
import sys

import click

BELOW_MINIMUM = 3
INVALID_INPUT = 2


@click.group()
def vb() -> None:
    """Video bingo machines: paytables and their return."""


@vb.command()
@click.argument("file", metavar="FILE")
def rtp(file: str) -> None:
    """Print the exact return to player of the paytable in FILE (- for stdin)."""
    from protocol.videobingo.errors import PaytableError
    from protocol.videobingo.paytable import MAX_PAYTABLE_BYTES
    from protocol.videobingo.rtp import rtp_json

    try:
        if file == "-":
            raw = sys.stdin.buffer.read(MAX_PAYTABLE_BYTES + 1)
        else:
            with open(file, "rb") as source:
                raw = source.read(MAX_PAYTABLE_BYTES + 1)
    except OSError as error:
        click.echo(f"{file}: cannot be read: {error.strerror or error}", err=True)
        sys.exit(INVALID_INPUT)
    try:
        result, meets_minimum = rtp_json(raw)
    except PaytableError as error:
        click.echo(str(error), err=True)
        sys.exit(INVALID_INPUT)
    click.echo(result, nl=False)
    if not meets_minimum:
        sys.exit(BELOW_MINIMUM)


@vb.command("cash-device", context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
def cash_device(arguments: tuple[str, ...]) -> None:
    """A machine's cash device simulated without hardware (the demo's bill validator): ``new FOLDER`` makes
    its key, ``insert FOLDER`` signs a bill and relays the note (docs/video-bingo.md, "Cash in").

    The device is a program of its own (``python -m terminals.vb_cash_device``), as the cabinet's
    validator is a device of its own: the hall's code never holds its key.
    """
    os.execv(sys.executable, [sys.executable, "-m", "terminals.vb_cash_device", *arguments])

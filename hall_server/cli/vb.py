"""``bingo vb``: video bingo tools; ``bingo vb rtp FILE`` is FORMATS.md section 4.

``rtp`` prints the exact return of a paytable as one line of JSON and exits 0 when it
meets the paytable's ``min_rtp_bp``, 3 when it does not (the result is still printed);
on an invalid or unreadable file it prints nothing on stdout, one line on stderr naming
the field at fault, and exits 2.  ``FILE`` may be ``-`` for standard input.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from twisted.internet import defer

from protocol.videobingo.errors import PaytableError
from protocol.videobingo.paytable import MAX_PAYTABLE_BYTES
from protocol.videobingo.rtp import rtp_json

BELOW_MINIMUM = 3
INVALID_INPUT = 2


@click.group()
def vb() -> None:
    """Video bingo machines: paytables and their return."""


@vb.command()
@click.argument("file", metavar="FILE")
def rtp(file: str) -> None:
    """Print the exact return to player of the paytable in FILE (- for stdin)."""
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


@vb.group("cash-device")
def cash_device() -> None:
    """A machine's cash device simulated without hardware (the demo's bill validator): it holds the key
    that signs the cash taken in, apart from the station (docs/video-bingo.md, "Cash in")."""


@cash_device.command("new")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--machine", required=True, help="The machine whose cash device it is (vb-1).")
def cash_device_new(folder: Path, machine: str) -> None:
    """Make a cash device's key in FOLDER and print its public key, for the room chief to enrol."""
    from terminals.vb_cash_device import new_device

    try:
        device = new_device(folder, machine)
    except FileExistsError as error:
        click.echo(str(error), err=True)
        sys.exit(INVALID_INPUT)
    click.echo(f"cash device of machine {machine}: key {folder / 'key.pem'} (kept there, never on the station)")
    click.echo(f"enrol it on the room chief's console: enrol_vb_cash_device machine={machine} "
               f"public_key={device.public_key}")


@cash_device.command("insert")
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--machine", required=True, help="The machine (vb-1).")
@click.option("--station", type=int, required=True, help="The station the cash is put into.")
@click.option("--amount-cents", type=int, required=True, help="The bill or coins taken in, in cents (at most 50000).")
@click.option("--url", required=True, help="The hall's machine socket: wss://HOST:PORT/vb/ws.")
@click.option("--token", required=True, help="The station's token (its screen relays the notes).")
@click.option("--bundle", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="The station's certificate folder (terminal-certs/<machine>.<station>), for wss://.")
def cash_device_insert(folder: Path, machine: str, station: int, amount_cents: int, url: str, token: str,
                       bundle: Path | None) -> None:
    """Take AMOUNT in: the device in FOLDER signs the note, which is relayed as the station's cash in."""
    from protocol.videobingo.cash import CashNoteError
    from terminals.client import TerminalCertificate
    from terminals.vb_cash_device import load_device
    from terminals.vb_machine import MachineClient, MachineRefused, connect

    device = load_device(folder, machine)
    try:
        note = device.insert(station, amount_cents)
    except CashNoteError as error:
        click.echo(str(error), err=True)
        sys.exit(INVALID_INPUT)
    tls = TerminalCertificate(bundle, f"{machine}.{station}") if bundle is not None else None
    status: list[int] = []

    async def relay(reactor: Any) -> None:
        client = MachineClient(machine, station, token)
        socket = await connect(reactor, url, client, tls)
        try:
            answer = await client.insert_cash(note)
            click.echo(f"note {note.counter}: {amount_cents} cents taken in on {machine}.{station}; its credit is "
                       f"{answer['credit_after_cents']} cents")
            status.append(0)
        except MachineRefused as error:
            click.echo(f"note {note.counter} refused ({error.code}): {error}", err=True)
            status.append(1)
        finally:
            socket.close()

    from twisted.internet import reactor

    def failed(failure: Any) -> None:
        click.echo(f"the hall could not be reached at {url}: {failure.getErrorMessage()}", err=True)
        status.append(1)

    done = defer.ensureDeferred(relay(reactor)).addErrback(failed)
    done.addBoth(lambda _: reactor.stop())  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]
    sys.exit(status[0] if status else 1)

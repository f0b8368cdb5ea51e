"""A video bingo machine's cash device, simulated without hardware: it holds the key and signs the notes.

In a cabinet the bill validator and coin acceptor (or the cabinet controller they are
wired to) keep an Ed25519 key in a secure element or a TPM and sign every insertion as a
cash note (:mod:`protocol.videobingo.cash`); the station only relays the note to the hall,
which checks it against the public key staff enrolled (``enrol_vb_cash_device``).  This
module is that device for the demo, the tests and the benchmarks: :class:`CashDevice` holds
a key and a counter and signs what is inserted, and :func:`load_device` keeps both in a
folder of their own (``key.pem``, mode 0600, and ``counter``: each station's), apart from the station's
token and certificate, as a separate chip would.  Its command line (:func:`main`, also
``bingo vb cash-device``) makes a key (``new``) and takes a bill in (``insert``): the note
is signed here and relayed over the station's own connection, as the cabinet would.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import click
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import defer

from protocol.videobingo.cash import CashNote, CashNoteError, fingerprint, public_key_hex, sign_note
from terminals.client import TerminalCertificate
from terminals.vb_machine import MachineClient, MachineRefused, connect

KEY_FILE = "key.pem"
COUNTER_FILE = "counter"


@dataclass
class CashDevice:
    """Machine ``machine``'s cash device: it signs each insertion with ``key``; ``counters`` counts the notes
    of each station (the hall takes each station's notes in the order of their counters)."""

    machine: str
    key: Ed25519PrivateKey = field(default_factory=Ed25519PrivateKey.generate)
    counters: dict[int, int] = field(default_factory=dict)
    nonce: Callable[[], str] = lambda: secrets.token_hex(16)
    #: Called with the counters after each note (a device that keeps them in a file).
    keep_counters: Callable[[dict[int, int]], None] = lambda counters: None

    @property
    def public_key(self) -> str:
        """The public key staff enrol for the machine: 64 hex digits."""
        return public_key_hex(self.key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def insert(self, station: int, amount_cents: int) -> CashNote:
        """A bill or coins of ``amount_cents`` taken in for ``station``: the signed note, its counter moved on."""
        counter = self.counters.get(station, 0) + 1
        note = sign_note(self.key, self.machine, station, counter, amount_cents, self.nonce())
        self.counters[station] = counter
        self.keep_counters(dict(self.counters))
        return note


def new_device(folder: Path, machine: str) -> CashDevice:
    """A new device's key and counter in ``folder`` (made, private); refused if one is there already."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    key_path = folder / KEY_FILE
    if key_path.exists():
        raise FileExistsError(f"{key_path} holds a cash device's key already")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(pem)
    (folder / COUNTER_FILE).write_text("{}\n")
    return load_device(folder, machine)


def load_device(folder: Path, machine: str) -> CashDevice:
    """The device kept in ``folder``: its key, and its counter, written back after every note."""
    key = serialization.load_pem_private_key((folder / KEY_FILE).read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{folder / KEY_FILE} is not an Ed25519 key")
    counter_path = folder / COUNTER_FILE
    kept = json.loads(counter_path.read_text()) if counter_path.exists() else {}
    counters = {int(station): int(counter) for station, counter in kept.items()}

    def keep(value: dict[int, int]) -> None:
        partial = counter_path.with_suffix(".new")
        partial.write_text(json.dumps({str(k): v for k, v in sorted(value.items())}) + "\n")
        partial.replace(counter_path)

    return CashDevice(machine, key, counters, keep_counters=keep)


@click.group()
def main() -> None:
    """A machine's cash device simulated without hardware (the demo's bill validator): it holds the key
    that signs the cash taken in, apart from the station (docs/video-bingo.md, "Cash in")."""


@main.command("new")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--machine", required=True, help="The machine whose cash device it is (vb-1).")
def cash_device_new(folder: Path, machine: str) -> None:
    """Make a cash device's key in FOLDER and print its public key, for the room chief to enrol."""
    try:
        device = new_device(folder, machine)
    except FileExistsError as error:
        click.echo(str(error), err=True)
        sys.exit(2)
    click.echo(f"cash device of machine {machine}: key {folder / 'key.pem'} (kept there, never on the station)")
    click.echo(f"enrol it on the room chief's console: enrol_vb_cash_device machine={machine} "
               f"public_key={device.public_key}")


@main.command("insert")
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
    """Take --amount-cents in: the device in FOLDER signs the note and relays it as the station's cash in."""
    device = load_device(folder, machine)
    try:
        note = device.insert(station, amount_cents)
    except CashNoteError as error:
        click.echo(str(error), err=True)
        sys.exit(2)
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


__all__ = ["CashDevice", "load_device", "main", "new_device"]

if __name__ == "__main__":
    main()

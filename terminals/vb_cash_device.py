"""A video bingo machine's cash device, simulated without hardware: it holds the key and signs the notes.

In a cabinet the bill validator and coin acceptor (or the cabinet controller they are
wired to) keep an Ed25519 key in a secure element or a TPM and sign every insertion as a
cash note (:mod:`protocol.videobingo.cash`); the station only relays the note to the hall,
which checks it against the public key staff enrolled (``enrol_vb_cash_device``).  This
module is that device for the demo, the tests and the benchmarks: :class:`CashDevice` holds
a key and a counter and signs what is inserted, and :func:`load_device` keeps both in a
folder of their own (``key.pem``, mode 0600, and ``counter``: each station's), apart from the station's
token and certificate, as a separate chip would.  ``bingo vb cash-device`` drives it from
the command line.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.videobingo.cash import CashNote, fingerprint, public_key_hex, sign_note

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


__all__ = ["CashDevice", "load_device", "new_device"]

"""The cash a video bingo machine takes in, as its bill validator signs it (``bingo-vb-cash/1``).

A machine's screen (the station) is a browser or a program on the cabinet: whoever holds
its token and certificate could say "cash came in" for any amount.  So the hall credits
cash put into a machine only on a **cash note** signed by the machine's cash device - the
bill validator and coin acceptor, or the cabinet controller they are wired to - with an
Ed25519 key that lives in the device (a secure element, a TPM) and that the station never
holds.  The hall keeps the device's public key, enrolled by staff for the machine
(``enrol_vb_cash_device``), and the station only relays the note.

A note says which machine and station took how many cents, with the device's counter
(strictly increasing: a note already credited, or an older one, is refused) and a nonce
the device chose; the signed bytes are :meth:`CashNote.signed_bytes`::

    bingo-vb-cash/1
    <machine>
    <station>
    <counter>
    <amount_cents>
    <nonce>

(lines joined by ``\\n``, UTF-8, no final newline; the machine id holds letters, digits,
``-`` and ``_`` only).  The signature is Ed25519 over those bytes, as 128 hex digits.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from protocol.errors import N_
from protocol.videobingo.errors import VideoBingoError

NOTE_FORMAT = "bingo-vb-cash/1"
#: The most one note may credit: the largest euro banknote, 500 EUR.
MAX_NOTE_CENTS = 50_000
#: A counter is a whole number from 1 to this.
MAX_COUNTER = 2**63 - 1
_MACHINE = re.compile(r"[A-Za-z0-9_-]{1,32}")
_NONCE = re.compile(r"[0-9a-f]{32}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")
_KEY_HEX = re.compile(r"[0-9a-f]{64}")
NOTE_KEYS = ("machine", "station", "counter", "amount_cents", "nonce", "signature")


class CashNoteError(VideoBingoError):
    """A cash note or a device key that cannot be read; the message names the field."""


def _whole(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise CashNoteError(f"the cash note's {what} is a whole number from {low} to {high}, not {value!r}")
    return value


def _text(value: object, what: str, pattern: re.Pattern[str], shape: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise CashNoteError(f"the cash note's {what} is {shape}")
    return value


@dataclass(frozen=True)
class CashNote:
    """Cash taken in by ``machine``'s device for ``station``: ``amount_cents``, as note ``counter``."""

    machine: str
    station: int
    counter: int
    amount_cents: int
    nonce: str
    signature: str

    def signed_bytes(self) -> bytes:
        return signed_bytes(self.machine, self.station, self.counter, self.amount_cents, self.nonce)

    def to_json(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in NOTE_KEYS}

    @classmethod
    def from_json(cls, value: object) -> "CashNote":
        """A note as a station relays it (a JSON object of :data:`NOTE_KEYS`), checked field by field."""
        if not isinstance(value, Mapping):
            raise CashNoteError("a cash note is a JSON object: machine, station, counter, amount_cents, nonce, signature")
        extra = sorted(set(value) - set(NOTE_KEYS))
        if extra:
            raise CashNoteError(f"a cash note has no field {extra[0]!r}")
        return cls(
            machine=_text(value.get("machine"), "machine", _MACHINE, "the machine's id"),
            station=_whole(value.get("station"), "station", 1, 15),
            counter=_whole(value.get("counter"), "counter", 1, MAX_COUNTER),
            amount_cents=_whole(value.get("amount_cents"), "amount", 1, MAX_NOTE_CENTS),
            nonce=_text(value.get("nonce"), "nonce", _NONCE, "32 lowercase hex digits"),
            signature=_text(value.get("signature"), "signature", _SIGNATURE, "128 lowercase hex digits (Ed25519)"),
        )

    def signed_by(self, public_key: str) -> bool:
        """Whether the device whose public key is ``public_key`` (64 hex digits) signed this note."""
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        try:
            key.verify(bytes.fromhex(self.signature), self.signed_bytes())
        except InvalidSignature:
            return False
        return True


def signed_bytes(machine: str, station: int, counter: int, amount_cents: int, nonce: str) -> bytes:
    return "\n".join((NOTE_FORMAT, machine, str(station), str(counter), str(amount_cents), nonce)).encode("utf-8")


def sign_note(key: Ed25519PrivateKey, machine: str, station: int, counter: int, amount_cents: int,
              nonce: str) -> CashNote:
    """The note a device holding ``key`` signs (the device chooses ``nonce``: 16 random bytes in hex)."""
    unsigned = {"machine": machine, "station": station, "counter": counter, "amount_cents": amount_cents,
                "nonce": nonce, "signature": "0" * 128}
    CashNote.from_json(unsigned)  # the device signs only what the hall can read
    signature = key.sign(signed_bytes(machine, station, counter, amount_cents, nonce)).hex()
    return CashNote(machine, station, counter, amount_cents, nonce, signature)


def device_public_key(text: object) -> str:
    """A device's Ed25519 public key as staff give it (64 hex digits, or a PEM block), as 64 hex digits."""
    if not isinstance(text, str) or not text.strip():
        raise CashNoteError(N_("give the cash device's Ed25519 public key: 64 hex digits, or its PEM block"))
    given = text.strip()
    if _KEY_HEX.fullmatch(given.lower()):
        return given.lower()
    try:
        key = serialization.load_pem_public_key(given.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise CashNoteError(N_("the cash device's public key is neither 64 hex digits nor a PEM public key")) from None
    if not isinstance(key, Ed25519PublicKey):
        raise CashNoteError(N_("the cash device's key is not an Ed25519 key"))
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def public_key_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def fingerprint(public_key: str) -> str:
    """A device key's short name in records and messages: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(bytes.fromhex(public_key)).hexdigest()[:16]


__all__ = ["MAX_NOTE_CENTS", "NOTE_FORMAT", "CashNote", "CashNoteError", "device_public_key", "fingerprint",
           "public_key_hex", "sign_note"]

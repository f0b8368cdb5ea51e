"""Secret keys kept as files outside the database.

The journal signing key (Ed25519) is ``keys/journal-signing.pem`` in the server's
folder (:func:`journal_key_path`), the card security code key (R92.9)
``keys/card-code.key`` (:func:`card_key_path`), the report-signing certificate and its
EC key ``keys/report-signing.pem`` and ``keys/report-signing.key``
(:func:`report_cert_path`, :func:`report_key_path`, issued by ``bingo pki``).  Which folder that is, is the
composition root's to say: this module is handed paths and reads no configuration.
A copy of the database alone cannot forge or check codes; back the key up with the
operator's other secrets, not with the database.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.errors import DomainError

KEY_BYTES = 32


class KeyFileError(DomainError):
    """A key file that is missing, unreadable or malformed."""


def card_key_path(home: Path) -> Path:
    """Where the card code key of the server whose folder is ``home`` is kept."""
    return home / "keys" / "card-code.key"


def load_card_key(path: Path, *, create: bool = False) -> bytes:
    """The card code key; with ``create`` a new random key is written if none exists."""
    if not path.exists():
        if not create:
            raise KeyFileError(
                f"no card code key at {path}; pass --key-file with the key the codes were made with"
            )
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as stream:
            stream.write(secrets.token_hex(KEY_BYTES) + "\n")
    text = path.read_text().strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise KeyFileError(f"{path} does not hold a hexadecimal key") from None
    if len(key) < 16:
        raise KeyFileError(f"{path} holds a key of {len(key)} bytes; at least 16 are needed")
    return key


def report_cert_path(home: Path) -> Path:
    """The report-signing certificate of the server whose folder is ``home``."""
    return home / "keys" / "report-signing.pem"


def report_key_path(home: Path) -> Path:
    """The report-signing key (EC P-256) of the server whose folder is ``home``."""
    return home / "keys" / "report-signing.key"


def journal_key_path(home: Path) -> Path:
    """Where the journal signing key of the server whose folder is ``home`` is kept."""
    return home / "keys" / "journal-signing.pem"


def load_journal_key(path: Path, *, create: bool = False) -> Ed25519PrivateKey:
    """The server's Ed25519 journal signing key (PEM, PKCS#8, mode 0600) at ``path``."""
    if not path.exists():
        if not create:
            raise KeyFileError(f"no journal signing key at {path}")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(pem)
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except ValueError:
        raise KeyFileError(f"{path} is not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} is not an Ed25519 key")
    return key


def public_pem(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )

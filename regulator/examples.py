"""The golden examples of docs/regulator-feed.md: real bytes, made with a published test key.

The key is the Ed25519 key whose 32 private bytes are 0, 1, ..., 31: it signs the examples
and nothing else (Ed25519 signatures are deterministic, so the bytes never change).
``scripts/regulator_feed_examples.py`` writes them into the document between its markers
and tests/regulator/test_feed_format.py fails when the document and this module differ.
"""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.regulator_feed import Ack, Batch, Hello, Message, Position, encode
from protocol.records import seal_entries

BEGIN = "<!-- examples: begin (scripts/regulator_feed_examples.py) -->"
END = "<!-- examples: end -->"
SENDER = "hall:h1"
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))


def public_pem() -> str:
    return KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def messages() -> list[tuple[str, Message]]:
    """Each example with the line that says what it is."""
    records = seal_entries(KEY, None, 1_767_225_600_000, [("journal_opened", {"hall": "h1"})])
    return [
        ("The hall says who it is and its journal key:", Hello(SENDER, public_pem())),
        ("The receiver has nothing of it yet:", Position(SENDER, 0)),
        ("The hall sends its journal from record 1:", Batch(SENDER, tuple(records))),
        ("The receiver has stored record 1:", Ack(SENDER, 1)),
    ]


def section() -> str:
    parts = [BEGIN]
    for said, message in messages():
        parts += ["", said, "", "```json", encode(message).decode(), "```"]
    parts += ["", END]
    return "\n".join(parts)


def rewrite(document: str) -> str:
    """``document`` with its examples section as :func:`section` makes it."""
    start, end = document.index(BEGIN), document.index(END) + len(END)
    return document[:start] + section() + document[end:]

"""Detached signatures of report files, and the journal range a report names.

A report file is signed whole with the hall's Ed25519 journal key: the signature is
the raw 64 bytes in ``<file>.sig``, the form ``openssl pkeyutl -verify -rawin`` reads::

    openssl pkeyutl -verify -pubin -inkey hall-journal.pub.pem -rawin \\
        -in minutes-session-3.pdf -sigfile minutes-session-3.pdf.sig

Ed25519 signs the message itself (no separate digest), hence ``-rawin``.  The journal
range a report was made from is read back from the file (:func:`journal_range_of`) so
that it can be compared with the journal.
"""

from __future__ import annotations

import csv
import io
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from server_kit.reports.document import JournalRange, ReportError
from server_kit.reports.render import CSV_HEADER

SIGNATURE_BYTES = 64
SIGNATURE_SUFFIX = ".sig"
_PDF_RANGE = re.compile(rb"/Subject \(journal-range (\d+) (\d+) ([0-9a-f]{64})\)")


class ReportSignatureError(ReportError):
    """A report whose signature is missing, malformed or does not match its bytes."""


def sign(key: Ed25519PrivateKey, data: bytes) -> bytes:
    """The detached signature of a report file's bytes: raw, 64 bytes."""
    return key.sign(data)


def verify(public_key: Ed25519PublicKey, data: bytes, signature: bytes, name: str = "the report") -> None:
    """Raise :class:`ReportSignatureError` unless ``signature`` signs ``data`` with ``public_key``."""
    if len(signature) != SIGNATURE_BYTES:
        raise ReportSignatureError(
            f"the signature of {name} is {len(signature)} bytes; an Ed25519 signature is {SIGNATURE_BYTES}"
        )
    try:
        public_key.verify(signature, data)
    except InvalidSignature:
        raise ReportSignatureError(
            f"the signature of {name} does not match: the file was changed, or another key signed it"
        ) from None


def journal_range_of(data: bytes) -> JournalRange | None:
    """The journal range a report file names (CSV or PDF made by this package), or None."""
    if data.startswith(b"%PDF"):
        found = _PDF_RANGE.search(data)
        if found is None:
            return None
        return JournalRange(int(found[1]), int(found[2]), found[3].decode())
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    except UnicodeDecodeError:
        return None
    if not rows or tuple(rows[0]) != CSV_HEADER:
        return None
    fields = {row[2]: row[3] for row in rows[1:] if len(row) == 4 and row[0] == "journal"}
    try:
        return JournalRange(
            int(fields["journal_first_seq"]), int(fields["journal_last_seq"]), fields["journal_last_hash"]
        )
    except (KeyError, ValueError):
        return None

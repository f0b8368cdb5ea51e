"""Detached CMS signatures (``.p7s``, DER) of report files, by a server's report-signing certificate.

A report file is signed whole with cryptography's ``PKCS7SignatureBuilder``: SHA-256,
the signer's certificate included, the content left out (detached) and signed as
bytes (binary: no S/MIME line-ending canonicalisation), so that stock OpenSSL checks
it against the operator's certificate authority::

    openssl cms -verify -binary -inform DER -in report.json.p7s -content report.json \\
        -CAfile ca.pem -purpose any

The key is EC P-256, issued by ``bingo pki issue report-signing``: CMS signs with RSA
and EC keys, not with the Ed25519 journal key.  ``-purpose any`` because the
certificate is for signing documents (documentSigning), not e-mail.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs7

from server_kit.keys import report_cert_path, report_key_path
from server_kit.pki.folder import load_report_signing
from server_kit.reports.document import Report
from server_kit.reports.render import to_csv, to_json, to_pdf

CMS_SUFFIX = ".p7s"
#: The renderings of a signed report, in the order they are written.
RENDERINGS = {"json": to_json, "csv": to_csv, "pdf": to_pdf}


@dataclass(frozen=True)
class ReportSigner:
    """A report-signing certificate and its key."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @classmethod
    def of_server(cls, home: Path) -> "ReportSigner":
        """The signer kept in the server folder ``home`` (``keys/report-signing.pem`` and ``.key``)."""
        return cls(*load_report_signing(report_cert_path(home), report_key_path(home)))

    def sign(self, data: bytes) -> bytes:
        """The detached CMS signature of ``data``, DER."""
        return (
            pkcs7.PKCS7SignatureBuilder()
            .set_data(data)
            .add_signer(self.certificate, self.key, hashes.SHA256())
            .sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary])
        )


def write_signed(report: Report, folder: Path, signer: ReportSigner, pdf: bytes | None = None) -> list[Path]:
    """Write ``report`` as JSON, CSV and PDF into ``folder``, each with its ``.p7s``; the files written.

    ``pdf``, if given, is the PDF to write: the same report printed in its readers' words
    (:class:`~server_kit.reports.document.Wording`); the JSON and the CSV are the data's.
    Each file (mode 0600) is written beside itself and renamed into place, its signature
    after it, so a reader never finds half a file.
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    written: list[Path] = []
    for suffix, render in RENDERINGS.items():
        data = pdf if suffix == "pdf" and pdf is not None else render(report)
        path = folder / f"{report.file_stem}.{suffix}"
        _replace(path, data)
        _replace(path.with_name(path.name + CMS_SUFFIX), signer.sign(data))
        written.append(path)
    return written


def write_signed_folder(files: Mapping[str, bytes], folder: Path, signer: ReportSigner) -> Path:
    """Write ``files`` (name to bytes), each with its ``.p7s``, as the whole of ``folder``; ``folder``.

    The files are written into a hidden sibling folder, which then takes the place of
    ``folder`` (a report written again replaces the one before, whole), so a reader such
    as the regulator's feed never finds half a report, nor a mix of two.
    """
    parent = folder.parent
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = parent / f".{folder.name}.partial"  # not a report's name: the feed passes it by
    shutil.rmtree(partial, ignore_errors=True)  # what a stop in the middle of a write left
    partial.mkdir(mode=0o700)
    for name, data in files.items():
        _replace(partial / name, data)
        _replace(partial / (name + CMS_SUFFIX), signer.sign(data))
    if folder.exists():
        old = parent / f".{folder.name}.replaced"
        shutil.rmtree(old, ignore_errors=True)
        os.rename(folder, old)
        os.rename(partial, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(partial, folder)
    return folder


def _replace(path: Path, data: bytes) -> None:
    partial = path.with_name(f".{path.name}.partial")
    # The server's own (0600) like every file of its folder; whoever sends the report copies it.
    with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(partial, path)

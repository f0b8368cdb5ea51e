"""The PKI folder: its layout, the roles a certificate names, and reading its files.

The folder (``pki/`` in the server's folder, e.g. ``var/pki``) is laid out so that a copy of part of
it is what a single machine needs::

    ca.pem            the authority's certificate (every machine)
    ca.key            the authority's private key (the operator's machine only, 0600)
    crl.pem           the revocation list, signed by the authority (every machine)
    certs/NAME.pem    an issued certificate
    keys/NAME.key     its private key (only on the machine that is NAME, 0600)
    revoked/NAME.SERIAL.pem   certificates taken out of service, kept for the record

A server's report-signing certificate and key also live in the server's own key
folder (``keys/report-signing.pem`` and ``keys/report-signing.key``, beside its journal
key): they sign files, not connections (:func:`load_report_signing`).

The role travels in the certificate's organizational unit, so a server reads who is
calling without a lookup (``docs/pki.md`` has the table of roles and endpoints).
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from protocol.errors import DomainError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


class PkiError(DomainError):
    """A PKI command or file that cannot be used; the message says which and why."""


class Role(StrEnum):
    """What a certificate's holder is; a server decides what a peer may do from it."""

    server = "server"
    staff = "staff"
    terminal = "terminal"
    machine = "machine"  # a video bingo machine
    central = "central"
    regulator = "regulator"  # the regulator: its receiver, and its people who consult everything
    inspector = "inspector"  # a person the regulator lets read its receiver's records, without personal data
    operator = "operator"  # the network's operator, commanding the central server
    report_signing = "report-signing"  # a server's key for its signed daily reports, never a TLS peer
    #: A member of the central server's database cluster (etcd, Patroni, PostgreSQL): the
    #: cluster's members admit it; no endpoint of the system does.
    cluster = "cluster"


def parse_role(kind: str) -> Role:
    """The role named ``kind``, or an error listing the roles there are."""
    try:
        return Role(kind)
    except ValueError:
        raise PkiError(
            f"unknown kind {kind!r}: use one of {', '.join(role.value for role in Role)}"
        ) from None


class PeerIdentity(NamedTuple):
    """Who is at the other end of a TLS connection, as its certificate says."""

    common_name: str
    role: Role


def identity_of(cert: x509.Certificate) -> PeerIdentity:
    """The name and role ``cert`` says (a certificate a peer presented, or one that signed a report);
    :class:`PkiError` for one that names no role of this PKI."""
    common_name = _common_name(cert, "the certificate")
    return PeerIdentity(common_name, _role_of(cert, f"the certificate of {common_name}"))


@dataclass(frozen=True)
class IssuedCertificate:
    """One certificate of the PKI as read from disk."""

    name: str
    role: Role
    serial: int
    not_after: datetime.datetime
    hosts: tuple[str, ...]
    revoked_at: datetime.datetime | None

    def status(self, now: datetime.datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.not_after <= now else "valid"


@dataclass(frozen=True)
class PkiFolder:
    """The files of a PKI folder (see the module docstring for the layout)."""

    root: Path

    @property
    def ca_cert(self) -> Path:
        return self.root / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.root / "ca.key"

    @property
    def crl(self) -> Path:
        return self.root / "crl.pem"

    @property
    def certs(self) -> Path:
        return self.root / "certs"

    @property
    def keys(self) -> Path:
        return self.root / "keys"

    @property
    def revoked(self) -> Path:
        return self.root / "revoked"

    def cert(self, name: str) -> Path:
        return self.certs / f"{name}.pem"

    def key(self, name: str) -> Path:
        return self.keys / f"{name}.key"


def default_pki_dir(home: Path) -> Path:
    """The PKI folder of the server (or operator) whose folder is ``home``: ``home/pki``."""
    return home / "pki"


def _now(now: datetime.datetime | None) -> datetime.datetime:
    return now if now is not None else datetime.datetime.now(datetime.timezone.utc)


def _read(path: Path, what: str, missing: str = "") -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise PkiError(f"no {what} at {path}{missing}") from None
    except OSError as error:
        raise PkiError(f"cannot read {what} {path}: {error.strerror or error}") from None


def _load_cert(path: Path, what: str, missing: str = "") -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(_read(path, what, missing))
    except ValueError:
        raise PkiError(f"{path} is not a PEM certificate") from None


def _load_key(path: Path, what: str) -> ec.EllipticCurvePrivateKey:
    try:
        key = serialization.load_pem_private_key(_read(path, what), password=None)
    except (ValueError, TypeError):
        # TypeError is how cryptography reports a key that wants a passphrase.
        raise PkiError(f"{path} is not an unencrypted PEM private key") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise PkiError(f"{path} is not an EC private key")
    return key


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Write a file that must not exist yet, created with ``mode`` (never wider first)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise PkiError(f"{path} already exists; it is left as it is") from None
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)


def _replace(path: Path, data: bytes) -> None:
    """Replace ``path`` in one step, so a server re-reading it never sees half a file."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class _Authority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey | None


def _no_ca(folder: PkiFolder) -> str:
    return f"; create the certificate authority with `bingo pki init --operator NAME --dir {folder.root}`"


def _load_authority(folder: PkiFolder, *, with_key: bool) -> _Authority:
    cert = _load_cert(folder.ca_cert, "CA certificate", _no_ca(folder))
    key = _load_key(folder.ca_key, "CA private key") if with_key else None
    if key is not None and key.public_key() != cert.public_key():
        raise PkiError(f"{folder.ca_key} is not the key of the certificate {folder.ca_cert}")
    return _Authority(cert, key)


def _load_crl(folder: PkiFolder, ca_cert: x509.Certificate) -> x509.CertificateRevocationList:
    data = _read(folder.crl, "revocation list", "; copy crl.pem from the operator's PKI folder")
    try:
        crl = x509.load_pem_x509_crl(data)
    except ValueError:
        raise PkiError(f"{folder.crl} is not a PEM revocation list") from None
    public = ca_cert.public_key()
    if not isinstance(public, ec.EllipticCurvePublicKey) or not crl.is_signature_valid(public):
        raise PkiError(f"{folder.crl} is not signed by the certificate authority in {folder.ca_cert}")
    return crl


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise PkiError(
            f"{name!r} is not a usable name: use up to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )


def _role_of(cert: x509.Certificate, source: str) -> Role:
    units = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)
    if len(units) != 1:
        raise PkiError(f"{source} names no role (organizational unit)")
    try:
        return Role(str(units[0].value))
    except ValueError:
        raise PkiError(f"{source} has the unknown role {units[0].value!r}") from None


def _common_name(cert: x509.Certificate, source: str) -> str:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if len(names) != 1:
        raise PkiError(f"{source} has no single common name")
    return str(names[0].value)


def _hosts_of(cert: x509.Certificate) -> tuple[str, ...]:
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return ()
    return (*names.get_values_for_type(x509.DNSName), *map(str, names.get_values_for_type(x509.IPAddress)))


# Hall and central servers accept connections and also connect out (hall to central,
# central to the regulator's feed), so they hold both purposes, and so do the members of
# the database cluster (etcd's peers, Patroni's REST API); everyone else only calls.
#: The roles whose certificates serve TLS as well (the regulator's: its feed receiver).
_SERVING = frozenset({Role.server, Role.central, Role.regulator, Role.cluster})


@dataclass(frozen=True)
class Credentials:
    authority: x509.Certificate
    crl: x509.CertificateRevocationList
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    role: Role


def load_credentials(pki_dir: Path, name: str) -> Credentials:
    """Everything a process needs to speak TLS as ``name``, checked so that a mistake shows
    up as one clear error at start rather than as refused handshakes later."""
    _check_name(name)
    folder = PkiFolder(pki_dir)
    authority = _load_authority(folder, with_key=False).cert
    crl = _load_crl(folder, authority)
    cert = _load_cert(folder.cert(name), "certificate", f"; issue one with `bingo pki issue KIND {name}`")
    key = _load_key(folder.key(name), "private key")
    if key.public_key() != cert.public_key():
        raise PkiError(f"{folder.key(name)} is not the key of the certificate {folder.cert(name)}")
    try:
        cert.verify_directly_issued_by(authority)
    except (ValueError, TypeError, InvalidSignature):
        raise PkiError(f"certificate {name} was not issued by the certificate authority in {folder.ca_cert}") from None
    if crl.get_revoked_certificate_by_serial_number(cert.serial_number) is not None:
        raise PkiError(f"certificate {name} is revoked; issue a new one")
    if cert.not_valid_after_utc <= datetime.datetime.now(datetime.timezone.utc):
        raise PkiError(f"certificate {name} expired on {cert.not_valid_after_utc:%Y-%m-%d}; issue a new one")
    return Credentials(authority, crl, cert, key, _role_of(cert, f"certificate {name}"))


def load_report_signing(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A server's report-signing certificate and its key, checked: the role, the key, the dates."""
    cert = _load_cert(cert_path, "report-signing certificate",
                      "; issue one with `bingo pki issue report-signing NAME --home SERVER_FOLDER` (docs/pki.md)")
    key = _load_key(key_path, "report-signing key")
    role = _role_of(cert, str(cert_path))
    if role is not Role.report_signing:
        raise PkiError(f"{cert_path} is a {role} certificate, not a report-signing one")
    if key.public_key() != cert.public_key():
        raise PkiError(f"{key_path} is not the key of the certificate {cert_path}")
    now = datetime.datetime.now(datetime.timezone.utc)
    if cert.not_valid_after_utc <= now:
        raise PkiError(f"the report-signing certificate {cert_path} expired on {cert.not_valid_after_utc:%Y-%m-%d}; "
                       "issue a new one")
    return cert, key

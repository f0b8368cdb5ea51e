"""The operator's public key infrastructure: one certificate authority, the certificates it
issues, and the TLS options every networked process builds from them.

Every link of the system is mutual TLS (R92.7, R95.3): a hall server, the central server
and the regulator's access present certificates for their role, staff and terminals
present client certificates, and each side checks the other against the operator's
certificate authority and its revocation list.  The folder (``var/pki`` or
``$BINGO_HOME/pki``) is laid out so that a copy of part of it is what a single machine
needs::

    ca.pem            the authority's certificate (every machine)
    ca.key            the authority's private key (the operator's machine only, 0600)
    crl.pem           the revocation list, signed by the authority (every machine)
    certs/NAME.pem    an issued certificate
    keys/NAME.key     its private key (only on the machine that is NAME, 0600)
    revoked/NAME.SERIAL.pem   certificates taken out of service, kept for the record

Keys are ECDSA P-256 with SHA-256 signatures, the CA's included.  OpenSSL accepts Ed25519
certificates for TLS, but the browsers that show the caller console and the kiosk
terminals do not, and one authority must serve both.

The role travels in the certificate's organizational unit, so a server reads who is
calling (``peer_identity``) without a lookup, and each endpoint admits only the roles it
serves (``docs/pki.md`` has the table).  Revocation is a standard X.509 CRL: stock
``openssl verify -crl_check`` reads it, and servers re-read it when the file changes, so a
revoked terminal is refused at its next connection without a restart.

TLS is 1.2 or 1.3 only, and TLS 1.2 offers only forward-secret AEAD suites (ECDHE with
AES-GCM or ChaCha20-Poly1305): no CBC, no SHA-1, no RSA key exchange.  TLS 1.3's suites
are AEAD by construction.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from OpenSSL import SSL
from OpenSSL.crypto import PKey, X509, X509StoreFlags
from twisted.protocols.tls import TLSMemoryBIOProtocol
from twisted.internet.interfaces import IOpenSSLClientConnectionCreator, ISSLTransport
from twisted.internet.ssl import (
    AcceptableCiphers,
    Certificate,
    CertificateOptions,
    KeyPair,
    PrivateCertificate,
    TLSVersion,
    optionsForClientTLS,
)
from twisted.logger import Logger
from zope.interface import implementer

from protocol.errors import DomainError

CA_DAYS = 3650
# A year and a month: browsers refuse server certificates valid for more than 398 days,
# and one renewal date a year is easy for an operator to keep.
LEAF_DAYS = 397
# Clocks of terminals and halls drift; a certificate issued "now" must already be valid
# on a machine a few minutes behind the operator's.
CLOCK_SKEW = datetime.timedelta(minutes=5)
DEFAULT_HOSTS = ("localhost", "127.0.0.1")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


_log = Logger()


class PkiError(DomainError):
    """A PKI command or file that cannot be used; the message says which and why."""


class Role(StrEnum):
    """What a certificate's holder is; a server decides what a peer may do from it."""

    server = "server"
    staff = "staff"
    terminal = "terminal"
    machine = "machine"  # a video bingo machine
    central = "central"
    regulator = "regulator"


class ClientCertificates(StrEnum):
    """What a server asks of its clients at the TLS handshake."""

    #: No handshake without a certificate of the authority (hall-central, the regulator).
    required = "required"
    #: Asked for and checked when presented (a certificate of another authority, expired
    #: or revoked fails the handshake); each endpoint then decides on the role it sees.
    requested = "requested"


#: TLS 1.2's suites: forward secrecy (ECDHE) and AEAD (AES-GCM, ChaCha20-Poly1305) only.
AEAD_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


def _tls_policy() -> dict[str, object]:
    """The protocol versions and suites of every TLS context of the system."""
    return {
        "acceptableCiphers": AcceptableCiphers.fromOpenSSLCipherString(AEAD_CIPHERS),
        "raiseMinimumTo": TLSVersion.TLSv1_2,
    }


# Hall and central servers accept connections and also connect out (hall to central,
# central to the regulator's feed), so they hold both purposes; everyone else only calls.
_SERVING = frozenset({Role.server, Role.central})


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


def default_pki_dir() -> Path:
    """``$BINGO_HOME/pki``, or ``var/pki`` when ``$BINGO_HOME`` is not set."""
    return Path(os.environ.get("BINGO_HOME", "var")) / "pki"


def _now(now: datetime.datetime | None) -> datetime.datetime:
    return now if now is not None else datetime.datetime.now(datetime.timezone.utc)


# --- reading and writing files ---------------------------------------------------------


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


# --- the authority ---------------------------------------------------------------------


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


def init_authority(
    pki_dir: Path, operator: str, *, days: int = CA_DAYS, now: datetime.datetime | None = None
) -> x509.Certificate:
    """Create the operator's certificate authority and an empty revocation list in ``pki_dir``."""
    operator = operator.strip()
    if not operator:
        raise PkiError("the operator's name is empty")
    if days < 1:
        raise PkiError(f"--days must be at least 1, not {days}")
    folder = PkiFolder(pki_dir)
    for existing in (folder.ca_cert, folder.ca_key):
        if existing.exists():
            raise PkiError(f"a certificate authority already exists in {pki_dir} ({existing.name}); it is left as it is")
    now = _now(now)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, operator),
            x509.NameAttribute(NameOID.COMMON_NAME, f"{operator} certificate authority"),
        ]
    )
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + datetime.timedelta(days=days))
        # path_length=0: the authority signs leaf certificates only, never another CA.
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    for folder_path, mode in ((folder.root, 0o755), (folder.certs, 0o755), (folder.keys, 0o700), (folder.revoked, 0o755)):
        folder_path.mkdir(mode=mode, parents=True, exist_ok=True)
    _write_new(folder.ca_key, _key_pem(key), 0o600)
    _write_new(folder.ca_cert, _cert_pem(cert), 0o644)
    _write_crl(folder, _Authority(cert, key), [], 1, now)
    return cert


# --- revocation ------------------------------------------------------------------------


def _write_crl(
    folder: PkiFolder,
    authority: _Authority,
    entries: Iterable[x509.RevokedCertificate],
    number: int,
    now: datetime.datetime,
) -> x509.CertificateRevocationList:
    assert authority.key is not None
    builder = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(authority.cert.subject)
        .last_update(now - CLOCK_SKEW)
        # OpenSSL refuses every peer once the list is past its next update; the list is
        # re-signed at each revocation, so it may stay current as long as the authority.
        .next_update(authority.cert.not_valid_after_utc)
        .add_extension(x509.CRLNumber(number), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.key.public_key()), critical=False
        )
    )
    for entry in entries:
        builder = builder.add_revoked_certificate(entry)
    crl = builder.sign(authority.key, hashes.SHA256())
    _replace(folder.crl, crl.public_bytes(serialization.Encoding.PEM))
    return crl


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


def _crl_number(crl: x509.CertificateRevocationList) -> int:
    try:
        return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
    except x509.ExtensionNotFound:
        return 0


_REASONS = {
    "unspecified": x509.ReasonFlags.unspecified,
    "key-compromise": x509.ReasonFlags.key_compromise,
    "superseded": x509.ReasonFlags.superseded,
    "cessation-of-operation": x509.ReasonFlags.cessation_of_operation,
}
REVOCATION_REASONS = tuple(_REASONS)


def revoke_certificate(
    pki_dir: Path, name: str, *, reason: str = "unspecified", now: datetime.datetime | None = None
) -> IssuedCertificate:
    """Put ``name`` on the revocation list, move its certificate to ``revoked/`` and delete its key.

    The name is free again afterwards, so a replacement can be issued under it.
    """
    if reason not in _REASONS:
        raise PkiError(f"unknown reason {reason!r}: use one of {', '.join(_REASONS)}")
    folder = PkiFolder(pki_dir)
    authority = _load_authority(folder, with_key=True)
    cert = _load_cert(folder.cert(name), "certificate", f"; `bingo pki list --dir {pki_dir}` shows the names issued")
    crl = _load_crl(folder, authority.cert)
    now = _now(now)
    # A revocation interrupted after the list was written leaves the serial listed but the
    # files in place; running the command again finishes the job.
    if crl.get_revoked_certificate_by_serial_number(cert.serial_number) is None:
        entry = (
            x509.RevokedCertificateBuilder()
            .serial_number(cert.serial_number)
            .revocation_date(now)
            .add_extension(x509.CRLReason(_REASONS[reason]), critical=False)
            .build()
        )
        crl = _write_crl(folder, authority, [*crl, entry], _crl_number(crl) + 1, now)
    folder.revoked.mkdir(exist_ok=True)
    os.replace(folder.cert(name), folder.revoked / f"{name}.{cert.serial_number:x}.pem")
    folder.key(name).unlink(missing_ok=True)
    return _describe(name, cert, crl)


# --- issuing ---------------------------------------------------------------------------


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise PkiError(
            f"{name!r} is not a usable name: use up to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )


def _subject_alternative_names(hosts: Sequence[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
            continue
        except ValueError:
            pass
        if not _HOST.fullmatch(host):
            raise PkiError(f"--host {host!r} is neither a host name nor an IP address")
        names.append(x509.DNSName(host.lower()))
    return names


def issue_certificate(
    pki_dir: Path,
    kind: str,
    name: str,
    *,
    hosts: Sequence[str] = (),
    days: int = LEAF_DAYS,
    now: datetime.datetime | None = None,
) -> IssuedCertificate:
    """Create a key and a certificate signed by the authority for ``name`` in role ``kind``.

    Servers (``server``, ``central``) get serverAuth and clientAuth and a subject
    alternative name for each of ``hosts`` (default: localhost and 127.0.0.1); staff,
    terminals and the regulator get clientAuth only.
    """
    role = parse_role(kind)
    _check_name(name)
    if days < 1:
        raise PkiError(f"--days must be at least 1, not {days}")
    if hosts and role not in _SERVING:
        raise PkiError(f"--host is for server and central certificates; a {role} certificate names no host")
    folder = PkiFolder(pki_dir)
    authority = _load_authority(folder, with_key=True)
    assert authority.key is not None
    if folder.cert(name).exists():
        raise PkiError(
            f"a certificate named {name} already exists in {folder.certs}; revoke it first to issue a replacement"
        )
    now = _now(now)
    not_after = now + datetime.timedelta(days=days)
    if not_after > authority.cert.not_valid_after_utc:
        raise PkiError(
            f"--days {days} would outlast the certificate authority, which expires on "
            f"{authority.cert.not_valid_after_utc:%Y-%m-%d}"
        )
    serving = role in _SERVING
    key = ec.generate_private_key(ec.SECP256R1())
    organization = authority.cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    builder = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name(
                [
                    *organization,
                    x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, role.value),
                    x509.NameAttribute(NameOID.COMMON_NAME, name),
                ]
            )
        )
        .issuer_name(authority.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                if serving
                else [ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.key.public_key()), critical=False
        )
    )
    if serving:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(_subject_alternative_names(hosts or DEFAULT_HOSTS)), critical=False
        )
    cert = builder.sign(authority.key, hashes.SHA256())
    folder.keys.mkdir(mode=0o700, exist_ok=True)
    folder.certs.mkdir(exist_ok=True)
    # The key first: a certificate on disk always has its key beside it.
    _write_new(folder.key(name), _key_pem(key), 0o600)
    try:
        _write_new(folder.cert(name), _cert_pem(cert), 0o644)
    except BaseException:
        folder.key(name).unlink(missing_ok=True)
        raise
    return _describe(name, cert, None)


# --- reading what was issued -----------------------------------------------------------


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


def _describe(name: str, cert: x509.Certificate, crl: x509.CertificateRevocationList | None) -> IssuedCertificate:
    entry = crl.get_revoked_certificate_by_serial_number(cert.serial_number) if crl is not None else None
    return IssuedCertificate(
        name=name,
        role=_role_of(cert, f"certificate {name}"),
        serial=cert.serial_number,
        not_after=cert.not_valid_after_utc,
        hosts=_hosts_of(cert),
        revoked_at=entry.revocation_date_utc if entry is not None else None,
    )


def authority_certificate(pki_dir: Path) -> x509.Certificate:
    """The authority's certificate, or an error saying how to create one."""
    return _load_authority(PkiFolder(pki_dir), with_key=False).cert


def list_certificates(pki_dir: Path) -> list[IssuedCertificate]:
    """Every certificate in ``certs/`` and ``revoked/``, by name, with its revocation if any."""
    folder = PkiFolder(pki_dir)
    authority = _load_authority(folder, with_key=False)
    crl = _load_crl(folder, authority.cert)
    found = []
    for path in sorted(folder.certs.glob("*.pem")):
        found.append(_describe(path.stem, _load_cert(path, "certificate"), crl))
    for path in sorted(folder.revoked.glob("*.pem")):
        cert = _load_cert(path, "certificate")
        found.append(_describe(_common_name(cert, str(path)), cert, crl))
    return sorted(found, key=lambda issued: (issued.name, issued.revoked_at is None, issued.not_after))


def export_bundle(pki_dir: Path, name: str, out_dir: Path) -> PkiFolder:
    """Copy what the machine ``name`` needs into ``out_dir``, in the same layout.

    ``ca.pem`` and ``crl.pem`` (replaced: a newer list is the point of a copy), then
    ``certs/NAME.pem`` and ``keys/NAME.key`` (never overwritten), every file 0600 and
    every folder 0700.  The certificate is checked first, so a revoked or expired one
    is never handed out.
    """
    _credentials(pki_dir, name)
    source, target = PkiFolder(pki_dir), PkiFolder(out_dir)
    for folder in (target.root, target.certs, target.keys):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for path, copy in ((source.ca_cert, target.ca_cert), (source.crl, target.crl)):
        _replace(copy, path.read_bytes())
        copy.chmod(0o600)
    _write_new(target.key(name), source.key(name).read_bytes(), 0o600)
    try:
        _write_new(target.cert(name), source.cert(name).read_bytes(), 0o600)
    except BaseException:
        target.key(name).unlink(missing_ok=True)
        raise
    return target


# --- TLS for the servers and their clients ---------------------------------------------


@dataclass(frozen=True)
class _Credentials:
    authority: x509.Certificate
    crl: x509.CertificateRevocationList
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    role: Role


def _credentials(pki_dir: Path, name: str) -> _Credentials:
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
    return _Credentials(authority, crl, cert, key, _role_of(cert, f"certificate {name}"))


def _check_revocations(context: SSL.Context, crl: x509.CertificateRevocationList | None) -> None:
    """Make OpenSSL refuse a peer whose certificate is on ``crl``, or every peer without one."""
    store = context.get_cert_store()
    assert store is not None
    if crl is not None:
        store.add_crl(crl)
    # CRL_CHECK covers the peer's own certificate; the authority is the root and is trusted.
    store.set_flags(X509StoreFlags.CRL_CHECK)


class _RevocationCheckingOptions(CertificateOptions):
    """Server options that check client certificates against the authority and refuse the
    revoked ones, re-reading the revocation list whenever its file changes.

    Twisted asks ``getContext`` for every new connection; a changed list yields a fresh
    context, so revocations take effect without restarting the server.
    """

    def __init__(
        self, folder: PkiFolder, authority: x509.Certificate, crl: x509.CertificateRevocationList, **options: object
    ) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        # Not ``_options``: CertificateOptions keeps its OpenSSL option bits under that name.
        self._arguments = options
        self._folder = folder
        self._authority = authority
        self._crl_stamp = _stamp(folder.crl)
        self._current = self._context_with(crl)

    def _context_with(self, crl: x509.CertificateRevocationList | None) -> SSL.Context:
        context = CertificateOptions(**self._arguments).getContext()  # type: ignore[arg-type]
        _check_revocations(context, crl)
        # Name the authority in the certificate request, so a browser offers the right one.
        context.add_client_ca(self._authority)
        return context

    def getContext(self) -> SSL.Context:
        stamp = _stamp(self._folder.crl)
        if stamp != self._crl_stamp:
            crl: x509.CertificateRevocationList | None
            try:
                crl = _load_crl(self._folder, _load_cert(self._folder.ca_cert, "CA certificate"))
            except PkiError as error:
                # Failing closed is the point of a revocation list: with none, OpenSSL
                # refuses every client certificate until the file is repaired.
                _log.error("Refusing every client certificate: {error}", error=str(error))
                crl = None
            self._current = self._context_with(crl)
            self._crl_stamp = stamp
        return self._current


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return (status.st_ino, status.st_mtime_ns, status.st_size)


def _twisted_certificate(cert: x509.Certificate) -> Certificate:
    return Certificate(X509.from_cryptography(cert))


def server_tls_options(
    pki_dir: Path, name: str, *, client_certificates: ClientCertificates | str = ClientCertificates.required
) -> CertificateOptions:
    """TLS options for a server presenting certificate ``name`` of ``pki_dir``.

    With ``required`` the handshake succeeds only for a client whose certificate the
    authority issued, that has not expired and is not on the revocation list (re-read
    when it changes).  With ``requested`` a client may present none, but one it
    presents is checked the same way.  :func:`presented_identity` then names the
    client, and the endpoint decides what its role may do.
    """
    mode = ClientCertificates(client_certificates)
    folder = PkiFolder(pki_dir)
    credentials = _credentials(pki_dir, name)
    if credentials.role not in _SERVING:
        raise PkiError(f"certificate {name} is for a {credentials.role}; a server needs a server or central certificate")
    # pyOpenSSL takes cryptography's objects directly and deprecates its own wrappers.
    options: dict[str, object] = {"privateKey": credentials.key, "certificate": credentials.cert, **_tls_policy()}
    if mode is ClientCertificates.required:
        options["trustRoot"] = _twisted_certificate(credentials.authority)
    else:
        options.update(verify=True, caCerts=[X509.from_cryptography(credentials.authority)], requireCertificate=False)
    return _RevocationCheckingOptions(folder, credentials.authority, credentials.crl, **options)


@implementer(IOpenSSLClientConnectionCreator)
class _RevocationCheckingClient:
    """A client connection creator that also refuses a server whose certificate is revoked."""

    def __init__(self, creator: IOpenSSLClientConnectionCreator, crl: x509.CertificateRevocationList) -> None:
        self._creator = creator
        self._crl = crl
        self._prepared: SSL.Context | None = None

    def clientConnectionForTLS(self, tlsProtocol: TLSMemoryBIOProtocol) -> SSL.Connection:
        connection: SSL.Connection = self._creator.clientConnectionForTLS(tlsProtocol)
        context = connection.get_context()
        # The creator reuses one context for all its connections; the list goes in once.
        if context is not self._prepared:
            _check_revocations(context, self._crl)
            self._prepared = context
        return connection


def client_tls_options(pki_dir: Path, name: str, server_hostname: str) -> IOpenSSLClientConnectionCreator:
    """TLS options for a client presenting certificate ``name`` to the server ``server_hostname``.

    The server must present a certificate of the authority, naming ``server_hostname``
    among its hosts, and not on the revocation list read now.
    """
    credentials = _credentials(pki_dir, name)
    client = PrivateCertificate.fromCertificateAndKeyPair(
        _twisted_certificate(credentials.cert), KeyPair(PKey.from_cryptography_key(credentials.key))
    )
    creator = optionsForClientTLS(
        server_hostname, trustRoot=_twisted_certificate(credentials.authority), clientCertificate=client,
        extraCertificateOptions=_tls_policy(),
    )
    return _RevocationCheckingClient(creator, credentials.crl)  # type: ignore[return-value]


def presented_identity(transport: object) -> PeerIdentity | None:
    """Who the certificate presented on ``transport`` names, or ``None`` if it presented
    none (or the connection is not TLS); :class:`PkiError` if it names no usable role.

    For an endpoint on a server with :attr:`ClientCertificates.requested`: the
    certificate, when there is one, was checked at the handshake.
    """
    get_peer_certificate = getattr(transport, "getPeerCertificate", None)
    if get_peer_certificate is None or get_peer_certificate() is None:
        return None
    return peer_identity(transport)  # type: ignore[arg-type]


def peer_identity(transport: ISSLTransport) -> PeerIdentity:
    """The common name and role in the certificate the other end of ``transport`` presented.

    Call it once the handshake is complete (``IHandshakeListener.handshakeCompleted``);
    the certificate has been verified against the authority by then.
    """
    get_peer_certificate = getattr(transport, "getPeerCertificate", None)
    if get_peer_certificate is None:
        raise PkiError("the connection is not TLS, so the peer has no certificate")
    peer = get_peer_certificate()
    if peer is None:
        raise PkiError("the peer presented no certificate")
    cert = peer.to_cryptography()
    common_name = _common_name(cert, "the peer's certificate")
    return PeerIdentity(common_name, _role_of(cert, f"the certificate of {common_name}"))

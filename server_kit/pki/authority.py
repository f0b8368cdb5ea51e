"""The operator's offline certificate authority: create it, issue, revoke, list, export.

Only :mod:`cryptography` is used here: the authority runs on the operator's machine
(``bingo pki ...``), never inside a server.  Keys are ECDSA P-256 with SHA-256
signatures, the CA's included: OpenSSL accepts Ed25519 certificates for TLS, but the
browsers that show the caller console and the kiosk terminals do not, and one
authority must serve both.  Revocation is a standard X.509 CRL that stock ``openssl
verify -crl_check`` reads.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
from pathlib import Path
from typing import Iterable, Sequence

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from server_kit.pki.folder import (
    _SERVING,
    IssuedCertificate,
    PkiError,
    PkiFolder,
    Role,
    _Authority,
    _cert_pem,
    _check_name,
    _common_name,
    _hosts_of,
    _key_pem,
    _load_authority,
    _load_cert,
    _load_crl,
    _now,
    _replace,
    _role_of,
    _write_new,
    load_credentials,
    load_report_signing,
    parse_role,
)
from server_kit.keys import report_cert_path, report_key_path
from server_kit.pki_defaults import CA_DAYS, LEAF_DAYS, REVOCATION_REASONS


# Clocks of terminals and halls drift; a certificate issued "now" must already be valid
# on a machine a few minutes behind the operator's.
CLOCK_SKEW = datetime.timedelta(minutes=5)


DEFAULT_HOSTS = ("localhost", "127.0.0.1")

#: id-kp-documentSigning (RFC 9336): the key signs documents, here the daily reports.
DOCUMENT_SIGNING = ObjectIdentifier("1.3.6.1.5.5.7.3.36")


_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


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


def _crl_number(crl: x509.CertificateRevocationList) -> int:
    try:
        return crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
    except x509.ExtensionNotFound:
        return 0


_REASONS = {reason: x509.ReasonFlags[reason.replace("-", "_")] for reason in REVOCATION_REASONS}


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

    Servers (``server``, ``central``, ``regulator``: its feed receiver serves and its
    consultation is a client, and ``cluster``: a member of the central server's database
    cluster, a server to its peers and their client) get serverAuth and clientAuth and a subject alternative
    name for each of ``hosts`` (default: localhost and 127.0.0.1); staff, terminals,
    machines, inspectors and the operator get clientAuth only; a ``report-signing`` certificate
    signs documents only (digitalSignature and nonRepudiation, documentSigning), so no
    TLS peer accepts it.
    """
    role = parse_role(kind)
    _check_name(name)
    if days < 1:
        raise PkiError(f"--days must be at least 1, not {days}")
    if hosts and role not in _SERVING:
        raise PkiError(f"--host is for server, central, regulator and cluster certificates; a {role} certificate names no host")
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
    signing = role is Role.report_signing
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
                content_commitment=signing,
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
                else [DOCUMENT_SIGNING]
                if signing
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


def install_report_signing(pki_dir: Path, name: str, home: Path) -> tuple[Path, Path]:
    """Copy the report-signing certificate ``name`` and its key into the server folder ``home``.

    They go to ``keys/report-signing.pem`` and ``keys/report-signing.key`` (0600, the
    folder 0700), beside the server's journal key; an existing pair is never replaced.
    Returns the certificate's and the key's paths.
    """
    folder = PkiFolder(pki_dir)
    cert_path, key_path = report_cert_path(home), report_key_path(home)
    load_report_signing(folder.cert(name), folder.key(name))
    for existing in (cert_path, key_path):
        if existing.exists():
            raise PkiError(f"{existing} already exists; it is left as it is (remove the old pair to install a new one)")
    key_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _write_new(key_path, folder.key(name).read_bytes(), 0o600)
    try:
        _write_new(cert_path, folder.cert(name).read_bytes(), 0o600)
    except BaseException:
        key_path.unlink(missing_ok=True)
        raise
    return cert_path, key_path


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
    load_credentials(pki_dir, name)
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

"""The TLS runtime: the server and client contexts every networked process builds from
the PKI folder, the revocation list re-read when it changes, and who the peer is.

Every link of the system is mutual TLS (R92.7, R95.3): a hall server, the central server
and the regulator's access present certificates for their role, staff and terminals
present client certificates, and each side checks the other against the operator's
certificate authority and its revocation list.  The folder (``pki/`` in the server's
folder, e.g. ``var/pki``) is laid out so that a copy of part of it is what a single machine
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
revoked terminal is refused at its next connection without a restart, and
:class:`RevocationWatch` tells the server's connection guard
(:mod:`server_kit.connections`) to cut the connections already open with it.

TLS is 1.2 or 1.3 only, and TLS 1.2 offers only forward-secret AEAD suites (ECDHE with
AES-GCM or ChaCha20-Poly1305): no CBC, no SHA-1, no RSA key exchange.  TLS 1.3's suites
are AEAD by construction.
"""

from __future__ import annotations

import ssl
from enum import StrEnum
from pathlib import Path
from typing import Callable

from cryptography import x509
from OpenSSL import SSL
from OpenSSL.crypto import X509, X509StoreFlags
from twisted.internet.interfaces import IOpenSSLClientConnectionCreator, ISSLTransport
from twisted.internet.ssl import (
    AcceptableCiphers,
    Certificate,
    CertificateOptions,
    TLSVersion,
    optionsForClientTLS,
)
from twisted.logger import Logger
from twisted.protocols.tls import TLSMemoryBIOProtocol
from zope.interface import implementer

from server_kit.pki.folder import (
    _SERVING,
    PeerIdentity,
    PkiError,
    PkiFolder,
    Role,
    _common_name,
    _load_cert,
    _load_crl,
    _role_of,
    load_credentials,
)


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


class RevocationWatch:
    """The revocation list of a PKI folder, read again when its file changes.

    :meth:`check` (a server calls it every second or so) looks at the file's stamp; when
    it changed and the list verifies against the authority, ``on_change`` is given the
    serial numbers it names, so the server cuts the connections of those certificates
    (the TLS contexts refuse them at their next handshake by themselves).  A list that
    does not verify (damaged, half copied, of another authority) is logged and looked at
    again at the next change: the contexts refuse every certificate meanwhile, and the
    connections already open are left to the next good list.
    """

    def __init__(self, pki_dir: Path, on_change: Callable[[frozenset[int]], None]) -> None:
        self.folder = PkiFolder(pki_dir)
        self.on_change = on_change
        self._stamp = _stamp(self.folder.crl)

    def check(self) -> None:
        stamp = _stamp(self.folder.crl)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            crl = _load_crl(self.folder, _load_cert(self.folder.ca_cert, "CA certificate"))
        except PkiError as error:
            _log.error("The revocation list changed and cannot be used: {error}", error=str(error))
            return
        self.on_change(frozenset(entry.serial_number for entry in crl))


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
    credentials = load_credentials(pki_dir, name)
    if credentials.role not in _SERVING or credentials.role is Role.cluster:
        raise PkiError(f"certificate {name} is for a {credentials.role}; a server needs a server, central or regulator certificate")
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
    credentials = load_credentials(pki_dir, name)
    # The client's certificate and key go to OpenSSL as cryptography's objects, as the server's
    # do (pyOpenSSL deprecates its own wrappers, which Twisted's PrivateCertificate is made of).
    creator = optionsForClientTLS(
        server_hostname, trustRoot=_twisted_certificate(credentials.authority),
        extraCertificateOptions={"certificate": credentials.cert, "privateKey": credentials.key, **_tls_policy()},
    )
    return _RevocationCheckingClient(creator, credentials.crl)  # type: ignore[return-value]


def client_ssl_context(pki_dir: Path, name: str) -> ssl.SSLContext:
    """A standard-library client context presenting certificate ``name`` of ``pki_dir``.

    For the blocking HTTPS clients outside the reactor (``urllib``): the server must
    present a certificate of the authority naming the host asked for, not on the
    revocation list read now; TLS 1.2 with the system's AEAD suites, or 1.3.
    """
    load_credentials(pki_dir, name)  # one clear error now rather than a refused handshake later
    folder = PkiFolder(pki_dir)
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(folder.ca_cert))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(AEAD_CIPHERS)
    context.load_verify_locations(cafile=str(folder.crl))
    context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    context.load_cert_chain(str(folder.cert(name)), str(folder.key(name)))
    return context


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


_log = Logger()

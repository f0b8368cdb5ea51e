"""The operator's public key infrastructure: one certificate authority, the certificates it
issues, and the TLS every networked process builds from them.

Every link of the system is mutual TLS (R92.7, R95.3): a hall server, the central
server and the regulator's access present certificates for their role, staff and
terminals present client certificates, and each side checks the other against the
operator's certificate authority and its revocation list.  Three parts:

* :mod:`~server_kit.pki.folder` - the folder's layout, the roles, reading its files;
* :mod:`~server_kit.pki.authority` - the offline authority (``bingo pki ...``);
* :mod:`~server_kit.pki.tls` - server and client contexts, the CRL, the peer's identity.
"""

from server_kit.pki.authority import (
    CA_DAYS,
    DEFAULT_HOSTS,
    LEAF_DAYS,
    REVOCATION_REASONS,
    authority_certificate,
    export_bundle,
    init_authority,
    install_report_signing,
    issue_certificate,
    list_certificates,
    revoke_certificate,
)
from server_kit.pki.folder import (
    IssuedCertificate,
    PeerIdentity,
    PkiError,
    PkiFolder,
    Role,
    default_pki_dir,
    identity_of,
    load_report_signing,
    parse_role,
)
from server_kit.pki.tls import (
    AEAD_CIPHERS,
    ClientCertificates,
    client_ssl_context,
    client_tls_options,
    peer_identity,
    presented_identity,
    server_tls_options,
)

__all__ = [
    "AEAD_CIPHERS",
    "CA_DAYS",
    "DEFAULT_HOSTS",
    "LEAF_DAYS",
    "REVOCATION_REASONS",
    "ClientCertificates",
    "IssuedCertificate",
    "PeerIdentity",
    "PkiError",
    "PkiFolder",
    "Role",
    "authority_certificate",
    "client_ssl_context",
    "client_tls_options",
    "default_pki_dir",
    "export_bundle",
    "identity_of",
    "init_authority",
    "install_report_signing",
    "issue_certificate",
    "list_certificates",
    "load_report_signing",
    "parse_role",
    "peer_identity",
    "presented_identity",
    "revoke_certificate",
    "server_tls_options",
]

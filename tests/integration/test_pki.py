"""The operator's PKI: real mutual-TLS handshakes over loopback admit exactly the peers the
authority vouches for, and stock openssl accepts what ``bingo pki`` issues."""

from __future__ import annotations

import datetime
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
import pytest_twisted
from click.testing import CliRunner
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.endpoints import SSL4ClientEndpoint, SSL4ServerEndpoint
from twisted.internet.interfaces import IHandshakeListener, IOpenSSLClientConnectionCreator
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.ssl import Certificate, CertificateOptions, optionsForClientTLS
from twisted.python.failure import Failure
from zope.interface import implementer

from hall_server.cli import main
from server_kit.pki import (
    PeerIdentity,
    PkiError,
    PkiFolder,
    Role,
    client_tls_options,
    init_authority,
    issue_certificate,
    list_certificates,
    peer_identity,
    revoke_certificate,
    server_tls_options,
)

pytestmark = pytest.mark.integration
secure_link = pytest.mark.req("R92.7", "R95.3")

WELCOME = b"welcome\n"


@pytest.fixture
def pki_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "pki"
    init_authority(directory, "Acme Bingo")
    issue_certificate(directory, "server", "hall")
    return directory


# --- a loopback server and client that report what each side saw -----------------------


@implementer(IHandshakeListener)
class Peer(Protocol):
    """Records the identity the other side proved, or why the connection ended without one."""

    def __init__(self) -> None:
        self.identity: PeerIdentity | None = None
        self.welcomed = False
        self.closed: Deferred[None] = Deferred()

    def handshakeCompleted(self) -> None:
        try:
            self.identity = peer_identity(self.transport)  # type: ignore[arg-type]
        except PkiError:
            self.identity = None  # a server that asks for no certificate gets none
        if self.factory.serving:  # type: ignore[attr-defined]
            # In TLS 1.3 the client finishes its handshake before the server has checked
            # the client's certificate: only this greeting proves the server let it in.
            self.transport.write(WELCOME)  # type: ignore[union-attr]

    def dataReceived(self, data: bytes) -> None:
        if data == WELCOME:
            self.welcomed = True
            self.transport.loseConnection()  # type: ignore[union-attr]

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        self.closed.callback(None)


class PeerFactory(Factory):
    def __init__(self, serving: bool) -> None:
        self.serving = serving
        self.peers: list[Peer] = []

    def buildProtocol(self, addr: Any) -> Peer:
        peer = Peer()
        peer.factory = self
        self.peers.append(peer)
        return peer


@dataclass
class Outcome:
    admitted: bool
    client_saw: PeerIdentity | None
    server_saw: list[PeerIdentity] = field(default_factory=list)


async def handshake(server_options: CertificateOptions, client_options: IOpenSSLClientConnectionCreator) -> Outcome:
    """Listen on loopback, connect once, and wait until both sides have hung up."""
    servers = PeerFactory(serving=True)
    port = await SSL4ServerEndpoint(reactor, 0, server_options, interface="127.0.0.1").listen(servers)
    try:
        endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port, client_options)
        client: Peer = await endpoint.connect(PeerFactory(serving=False))
        # A refused handshake closes the connection; the timeout only guards a hung test.
        await client.closed.addTimeout(5, reactor)
        await DeferredList([peer.closed for peer in servers.peers]).addTimeout(5, reactor)
    finally:
        await port.stopListening()
    return Outcome(
        admitted=client.welcomed,
        client_saw=client.identity,
        server_saw=[peer.identity for peer in servers.peers if peer.identity is not None],
    )


def mutual(pki_dir: Path) -> CertificateOptions:
    return server_tls_options(pki_dir, "hall")


def client_presenting(trusted: Path, certificate_dir: Path, name: str) -> IOpenSSLClientConnectionCreator:
    """A client that trusts ``trusted``'s authority but presents a certificate from ``certificate_dir``."""
    folder = PkiFolder(certificate_dir)
    own = {"certificate": x509.load_pem_x509_certificate(folder.cert(name).read_bytes()),
           "privateKey": serialization.load_pem_private_key(folder.key(name).read_bytes(), password=None)}
    ca = Certificate.loadPEM(PkiFolder(trusted).ca_cert.read_bytes())
    return optionsForClientTLS("localhost", trustRoot=ca, extraCertificateOptions=own)


# --- handshakes --------------------------------------------------------------------------


@secure_link
@pytest.mark.parametrize("kind", ["terminal", "staff", "regulator", "central"])
@pytest_twisted.ensureDeferred
async def test_a_client_certified_by_the_authority_connects_and_each_side_learns_who_the_other_is(
    pki_dir: Path, kind: str
) -> None:
    issue_certificate(pki_dir, kind, "caller-7")
    outcome = await handshake(mutual(pki_dir), client_tls_options(pki_dir, "caller-7", "localhost"))
    assert outcome.admitted
    assert outcome.server_saw == [PeerIdentity("caller-7", Role(kind))]
    assert outcome.client_saw == PeerIdentity("hall", Role.server)


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_server_for_the_right_ip_address_is_accepted(pki_dir: Path) -> None:
    issue_certificate(pki_dir, "terminal", "t-1")
    outcome = await handshake(mutual(pki_dir), client_tls_options(pki_dir, "t-1", "127.0.0.1"))
    assert outcome.admitted and outcome.client_saw == ("hall", "server")


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_client_without_a_certificate_is_refused(pki_dir: Path) -> None:
    ca = Certificate.loadPEM(PkiFolder(pki_dir).ca_cert.read_bytes())
    outcome = await handshake(mutual(pki_dir), optionsForClientTLS("localhost", trustRoot=ca))
    assert not outcome.admitted and outcome.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_client_certified_by_another_authority_is_refused(pki_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    init_authority(other, "Acme Bingo")
    issue_certificate(other, "terminal", "t-1")
    outcome = await handshake(mutual(pki_dir), client_presenting(pki_dir, other, "t-1"))
    assert not outcome.admitted and outcome.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_client_with_an_expired_certificate_is_refused(pki_dir: Path) -> None:
    long_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=60)
    issue_certificate(pki_dir, "terminal", "t-old", days=30, now=long_ago)
    outcome = await handshake(mutual(pki_dir), client_presenting(pki_dir, pki_dir, "t-old"))
    assert not outcome.admitted and outcome.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_revoked_client_is_refused_by_a_running_server_from_its_next_connection(pki_dir: Path) -> None:
    issue_certificate(pki_dir, "terminal", "t-lost")
    server = mutual(pki_dir)
    # The client's credentials are taken before the revocation, as a stolen terminal's would be.
    stolen = client_presenting(pki_dir, pki_dir, "t-lost")
    before = await handshake(server, stolen)
    revoke_certificate(pki_dir, "t-lost", reason="key-compromise")
    after = await handshake(server, stolen)
    assert before.admitted
    assert not after.admitted and after.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_client_refuses_a_server_whose_certificate_is_revoked(pki_dir: Path) -> None:
    issue_certificate(pki_dir, "terminal", "t-1")
    server = mutual(pki_dir)
    revoke_certificate(pki_dir, "hall")
    outcome = await handshake(server, client_tls_options(pki_dir, "t-1", "localhost"))
    assert not outcome.admitted and outcome.client_saw is None and outcome.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_client_refuses_a_server_certificate_for_another_host(pki_dir: Path) -> None:
    issue_certificate(pki_dir, "server", "elsewhere", hosts=["hall-2.example.org", "10.9.8.7"])
    issue_certificate(pki_dir, "terminal", "t-1")
    server = server_tls_options(pki_dir, "elsewhere")
    outcome = await handshake(server, client_tls_options(pki_dir, "t-1", "localhost"))
    assert not outcome.admitted and outcome.client_saw is None and outcome.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_client_refuses_a_server_presenting_a_terminal_certificate(pki_dir: Path) -> None:
    """A terminal's certificate names no host and lacks serverAuth: a thief of one cannot pose as the hall."""
    issue_certificate(pki_dir, "terminal", "t-1")
    issue_certificate(pki_dir, "terminal", "t-2")
    folder = PkiFolder(pki_dir)
    impostor = CertificateOptions(certificate=x509.load_pem_x509_certificate(folder.cert("t-2").read_bytes()),
                                  privateKey=serialization.load_pem_private_key(folder.key("t-2").read_bytes(), None))
    outcome = await handshake(impostor, client_tls_options(pki_dir, "t-1", "localhost"))
    assert not outcome.admitted and outcome.client_saw is None


@secure_link
@pytest_twisted.ensureDeferred
async def test_with_certificates_requested_anyone_may_connect_but_has_no_identity(pki_dir: Path) -> None:
    ca = Certificate.loadPEM(PkiFolder(pki_dir).ca_cert.read_bytes())
    server = server_tls_options(pki_dir, "hall", client_certificates="requested")
    outcome = await handshake(server, optionsForClientTLS("localhost", trustRoot=ca))
    assert outcome.admitted and outcome.client_saw == ("hall", "server") and outcome.server_saw == []


@secure_link
@pytest_twisted.ensureDeferred
async def test_with_certificates_requested_a_presented_one_is_checked_and_names_the_client(
    pki_dir: Path, tmp_path: Path
) -> None:
    server = server_tls_options(pki_dir, "hall", client_certificates="requested")
    issue_certificate(pki_dir, "terminal", "t-1")
    named = await handshake(server, client_tls_options(pki_dir, "t-1", "localhost"))
    assert named.admitted and named.server_saw == [PeerIdentity("t-1", Role.terminal)]
    other = tmp_path / "other"
    init_authority(other, "Acme Bingo")
    issue_certificate(other, "terminal", "t-1")
    assert not (await handshake(server, client_presenting(pki_dir, other, "t-1"))).admitted
    issue_certificate(pki_dir, "terminal", "t-lost")
    stolen = client_presenting(pki_dir, pki_dir, "t-lost")
    revoke_certificate(pki_dir, "t-lost")
    assert not (await handshake(server, stolen)).admitted


# --- loaders refuse what cannot work, with one clear message ----------------------------


@pytest.mark.parametrize(
    "spoil, name, message",
    [
        (lambda d: issue_certificate(d, "terminal", "t-1"), "t-1", "certificate t-1 is for a terminal; a server needs a server"),
        (lambda d: revoke_certificate(d, "hall"), "hall", "no certificate at"),
        (lambda d: PkiFolder(d).crl.unlink(), "hall", "no revocation list at"),
        (lambda d: PkiFolder(d).crl.write_text("garbage"), "hall", "is not a PEM revocation list"),
        (lambda d: shutil.copy(PkiFolder(d).ca_key, PkiFolder(d).key("hall")), "hall", "is not the key of the certificate"),
    ],
)
def test_a_server_refuses_to_start_with_unusable_credentials(pki_dir: Path, spoil: Any, name: str, message: str) -> None:
    spoil(pki_dir)
    with pytest.raises(PkiError) as error:
        server_tls_options(pki_dir, name)
    assert message in str(error.value)


def test_a_revoked_certificate_left_in_place_is_refused_when_loaded(pki_dir: Path) -> None:
    """A copy of certs/ made before the revocation still meets the list."""
    saved = PkiFolder(pki_dir).cert("hall").read_bytes(), PkiFolder(pki_dir).key("hall").read_bytes()
    revoke_certificate(pki_dir, "hall")
    PkiFolder(pki_dir).cert("hall").write_bytes(saved[0])
    PkiFolder(pki_dir).key("hall").write_bytes(saved[1])
    with pytest.raises(PkiError, match="certificate hall is revoked"):
        server_tls_options(pki_dir, "hall")


def test_a_client_refuses_to_start_with_an_expired_certificate(pki_dir: Path) -> None:
    long_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=60)
    issue_certificate(pki_dir, "terminal", "t-old", days=30, now=long_ago)
    with pytest.raises(PkiError, match=r"certificate t-old expired on \d{4}-\d\d-\d\d; issue a new one"):
        client_tls_options(pki_dir, "t-old", "localhost")


def test_a_revocation_list_signed_by_another_authority_is_refused(pki_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    init_authority(other, "Someone Else")
    shutil.copy(PkiFolder(other).crl, PkiFolder(pki_dir).crl)
    with pytest.raises(PkiError, match="is not signed by the certificate authority"):
        server_tls_options(pki_dir, "hall")


def test_a_certificate_from_another_authority_is_refused_when_loaded(pki_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    init_authority(other, "Acme Bingo")
    issue_certificate(other, "server", "hall")
    for source, target in ((PkiFolder(other).cert("hall"), PkiFolder(pki_dir).cert("hall")), (PkiFolder(other).key("hall"), PkiFolder(pki_dir).key("hall"))):
        shutil.copy(source, target)
    with pytest.raises(PkiError, match="was not issued by the certificate authority"):
        server_tls_options(pki_dir, "hall")


# --- stock openssl ------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_stock_openssl_verifies_every_kind_issued_and_sees_revocations(pki_dir: Path) -> None:
    folder = PkiFolder(pki_dir)
    for kind in ("staff", "terminal", "central", "regulator"):
        issue_certificate(pki_dir, kind, f"a-{kind}")

    def verify(name: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["openssl", "verify", "-CAfile", str(folder.ca_cert), *extra, str(folder.cert(name))],
            capture_output=True,
            text=True,
        )

    for name in ("hall", "a-staff", "a-terminal", "a-central", "a-regulator"):
        result = verify(name)
        assert result.returncode == 0 and result.stdout.strip().endswith(": OK"), result.stderr
    assert verify("hall", "-purpose", "sslserver").returncode == 0
    assert verify("a-terminal", "-purpose", "sslclient").returncode == 0
    assert verify("a-terminal", "-purpose", "sslserver").returncode != 0

    crl_check = ("-crl_check", "-CRLfile", str(folder.crl))
    assert verify("a-staff", *crl_check).returncode == 0
    revoke_certificate(pki_dir, "a-staff")
    moved = next(folder.revoked.glob("a-staff.*.pem"))
    result = subprocess.run(
        ["openssl", "verify", "-CAfile", str(folder.ca_cert), *crl_check, str(moved)], capture_output=True, text=True
    )
    assert result.returncode != 0 and "certificate revoked" in result.stdout + result.stderr


# --- the commands ---------------------------------------------------------------------------


def bingo(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_the_commands_create_an_authority_issue_list_and_revoke(tmp_path: Path) -> None:
    d = str(tmp_path / "pki")
    assert bingo("pki", "init", "--operator", "Acme Bingo", "--dir", d).exit_code == 0
    issued = bingo("pki", "issue", "server", "hall", "--host", "hall.local", "--host", "10.0.0.5", "--dir", d)
    assert issued.exit_code == 0, issued.output
    assert "server certificate hall for hall.local, 10.0.0.5" in issued.output
    assert bingo("pki", "issue", "terminal", "t-01", "--days", "30", "--dir", d).exit_code == 0
    assert bingo("pki", "revoke", "t-01", "--dir", d).exit_code == 0
    listing = bingo("pki", "list", "--dir", d)
    assert listing.exit_code == 0
    rows = {line.split()[0]: line.split() for line in listing.output.splitlines()[2:]}
    assert rows["hall"][1:2] + rows["hall"][3:] == ["server", "valid", "hall.local", "10.0.0.5"]
    assert rows["t-01"][1] == "terminal" and rows["t-01"][3] == "revoked"
    # A revoked name may be issued again, for the terminal that replaces the lost one.
    assert bingo("pki", "issue", "terminal", "t-01", "--dir", d).exit_code == 0
    assert [(c.name, c.revoked_at is None) for c in list_certificates(Path(d))] == [
        ("hall", True),
        ("t-01", False),
        ("t-01", True),
    ]


def test_private_keys_are_readable_by_their_owner_only(pki_dir: Path) -> None:
    issue_certificate(pki_dir, "staff", "anna")
    folder = PkiFolder(pki_dir)
    for key in (folder.ca_key, folder.key("hall"), folder.key("anna")):
        assert key.stat().st_mode & 0o777 == 0o600
    assert folder.keys.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["issue", "printer", "p1"], "unknown kind 'printer': use one of server, staff, terminal, machine, central, regulator, inspector, operator"),
        (["issue", "server", "hall"], "a certificate named hall already exists"),
        (["issue", "terminal", "t-1", "--host", "t1.local"], "--host is for server, central, regulator and cluster certificates"),
        (["issue", "server", "hall-2", "--host", "not a host"], "--host 'not a host' is neither a host name nor an IP address"),
        (["issue", "terminal", "../escape"], "'../escape' is not a usable name"),
        (["issue", "terminal", "t-1", "--days", "99999"], "--days 99999 would outlast the certificate authority"),
        (["revoke", "nobody"], "no certificate at"),
        (["init", "--operator", "Again"], "a certificate authority already exists"),
    ],
)
def test_bad_input_gives_one_line_error_and_changes_nothing(pki_dir: Path, args: list[str], message: str) -> None:
    before = sorted(p.relative_to(pki_dir) for p in pki_dir.rglob("*"))
    result = bingo("pki", *args, "--dir", str(pki_dir))
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("Error: ") and message in result.output
    assert sorted(p.relative_to(pki_dir) for p in pki_dir.rglob("*")) == before


@pytest.mark.parametrize(
    "spoil, message",
    [
        (lambda d: shutil.rmtree(d), "no CA certificate at"),
        (lambda d: (d / "ca.pem").write_text("not a certificate"), "is not a PEM certificate"),
        (lambda d: ((d / "ca.key").unlink(), (d / "ca.key").mkdir()), "cannot read CA private key"),
        (lambda d: (d / "ca.key").write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "is not an unencrypted PEM private key"),
    ],
)
def test_a_missing_or_unreadable_authority_gives_one_line_error(pki_dir: Path, spoil: Any, message: str) -> None:
    spoil(pki_dir)
    result = bingo("pki", "issue", "terminal", "t-1", "--dir", str(pki_dir))
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and message in result.output, result.output


@secure_link
@pytest_twisted.ensureDeferred
async def test_a_running_server_refuses_everyone_while_its_revocation_list_is_damaged(pki_dir: Path) -> None:
    issue_certificate(pki_dir, "terminal", "t-1")
    server = mutual(pki_dir)
    client = client_tls_options(pki_dir, "t-1", "localhost")
    crl = PkiFolder(pki_dir).crl
    good = crl.read_bytes()
    crl.write_text("damaged")
    damaged = await handshake(server, client)
    crl.write_bytes(good)
    repaired = await handshake(server, client)
    assert not damaged.admitted and damaged.server_saw == []
    assert repaired.admitted


# --- protocol versions and suites (pentest finding 15) -----------------------------------


def _python_client(port: int, pki_dir: Path, *, ciphers: str | None = None, version: Any = None) -> str:
    """A stock Python (OpenSSL) client presenting t-1: the suite agreed, or the error."""
    import socket
    import ssl

    folder = PkiFolder(pki_dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(str(folder.ca_cert))
    context.load_cert_chain(str(folder.cert("t-1")), str(folder.key("t-1")))
    if version is not None:
        context.minimum_version = context.maximum_version = version
    if ciphers is not None:
        context.set_ciphers(ciphers)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                return f"{tls.version()} {tls.cipher()[0]}"
    except (ssl.SSLError, OSError) as error:
        return f"refused: {error}"


@secure_link
@pytest.mark.parametrize(
    "ciphers, version, agreed",
    [
        ("ECDHE-ECDSA-AES128-SHA256", "TLSv1_2", None),  # CBC
        ("ECDHE-ECDSA-AES256-SHA", "TLSv1_2", None),  # CBC with SHA-1
        ("ECDHE-ECDSA-AES128-SHA", "TLSv1_2", None),
        ("ECDHE-ECDSA-AES128-GCM-SHA256", "TLSv1_2", "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256"),
        ("ECDHE-ECDSA-CHACHA20-POLY1305", "TLSv1_2", "TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305"),
        (None, "TLSv1_3", "TLSv1.3 TLS_AES_256_GCM_SHA384"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_pentest_15_only_tls_1_2_aead_suites_and_tls_1_3_are_accepted(
    pki_dir: Path, ciphers: str | None, version: str, agreed: str | None
) -> None:
    import ssl

    from twisted.internet.threads import deferToThread

    issue_certificate(pki_dir, "terminal", "t-1")
    port = await SSL4ServerEndpoint(reactor, 0, mutual(pki_dir), interface="127.0.0.1").listen(PeerFactory(serving=True))
    try:
        spoken = await deferToThread(
            _python_client, port.getHost().port, pki_dir, ciphers=ciphers,
            version=getattr(ssl.TLSVersion, version),
        )
    finally:
        await port.stopListening()
    if agreed is None:
        assert spoken.startswith("refused"), spoken
    else:
        assert spoken == agreed


def test_a_bundle_holds_one_machines_part_private_and_never_a_revoked_certificate(pki_dir: Path, tmp_path: Path) -> None:
    issue_certificate(pki_dir, "terminal", "t-07")
    out = tmp_path / "t-07-bundle"
    made = bingo("pki", "bundle", "t-07", "--out", str(out), "--dir", str(pki_dir))
    assert made.exit_code == 0, made.output
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["ca.pem", "certs/t-07.pem", "crl.pem", "keys/t-07.key"]
    assert all(p.stat().st_mode & 0o077 == 0 for p in out.rglob("*"))
    assert client_tls_options(out, "t-07", "localhost") is not None  # a usable folder for the client
    again = bingo("pki", "bundle", "t-07", "--out", str(out), "--dir", str(pki_dir))
    assert again.exit_code == 1 and "already exists; it is left as it is" in again.output
    issue_certificate(pki_dir, "terminal", "t-08")
    revoke_certificate(pki_dir, "t-08")
    refused = bingo("pki", "bundle", "t-08", "--out", str(tmp_path / "t-08"), "--dir", str(pki_dir))
    assert refused.exit_code == 1 and "no certificate at" in refused.output

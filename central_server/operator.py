"""The operator's end of the link: one command to a running central server, its answer or its refusal.

``bingo central games``, ``open-sale`` and ``not-played`` (:mod:`central_server.cli`)
each make one connection to the central server's communications endpoint, over mutual
TLS with the operator's certificate (``bingo pki issue operator NAME``), check that the
server presents a ``central`` certificate of the same authority, send one command of
:mod:`protocol.central_operator`, and close.  The answer is checked against the
command's declaration; a refusal comes back as :class:`OperatorRefused` with its code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from twisted.internet import defer
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
from twisted.internet.interfaces import IHandshakeListener
from twisted.protocols import amp
from zope.interface import implementer

from protocol.central_messages import check_answer, check_arguments
from protocol.central_operator import OPERATOR_MESSAGES
from protocol.errors import DomainError
from server_kit.amp.commands import CommandFailed, amp_commands
from server_kit.pki import PkiError, Role, client_tls_options, peer_identity

COMMANDS = amp_commands(OPERATOR_MESSAGES)
#: How long a connection may take to be made, in seconds.
CONNECT_TIMEOUT_S = 10


class OperatorError(DomainError):
    """The command could not be sent or answered (no server there, a certificate problem)."""


class OperatorNoAnswer(OperatorError):
    """The command was sent and no answer came (the connection was lost): it may have been carried out."""


class OperatorRefused(DomainError):
    """The central server refused the command; ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class CentralAddress:
    """Where the central server listens, and the host name its certificate must carry."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> "CentralAddress":
        """``HOST:PORT``, or an :class:`OperatorError` saying what is wrong."""
        host, _, port = text.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise OperatorError(f"--server is HOST:PORT (central.acme.net:7310), not {text!r}")
        return cls(host.strip("[]"), int(port))

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def operator_name(pki_dir: Path) -> str:
    """The one certificate of an operator's bundle (``bingo pki bundle NAME``): its name."""
    names = sorted(path.stem for path in (pki_dir / "certs").glob("*.pem"))
    if len(names) != 1:
        found = ", ".join(names) if names else "none"
        raise OperatorError(f"{pki_dir / 'certs'} holds {len(names)} certificates ({found}); say which is yours with --name")
    return names[0]


@implementer(IHandshakeListener)
class _OperatorLink(amp.AMP):
    """The client's connection: it fires :attr:`ready` once TLS is up and the server is the central server."""

    def __init__(self) -> None:
        super().__init__()
        self.ready: defer.Deferred[None] = defer.Deferred()
        self.lost: defer.Deferred[None] = defer.Deferred()

    def handshakeCompleted(self) -> None:
        try:
            identity = peer_identity(self.transport)  # type: ignore[arg-type]
        except PkiError as error:
            self.ready.errback(OperatorError(f"the server's certificate cannot be used: {error}"))
            return
        if identity.role is not Role.central:
            self.ready.errback(OperatorError(
                f"the server presents a {identity.role} certificate ({identity.common_name}), not a central "
                "server's; check --server"
            ))
            return
        self.ready.callback(None)

    def connectionLost(self, reason: Any = None) -> None:
        super().connectionLost(reason)
        if not self.ready.called:
            why = reason.getErrorMessage() if reason is not None else "the connection closed"
            self.ready.errback(OperatorError(f"the central server closed the connection during TLS: {why}"))
        if not self.lost.called:
            self.lost.callback(None)


async def send(reactor: Any, address: CentralAddress, pki_dir: Path, name: str, command: str,
               arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Send one operator command and return its checked answer.

    Raises :class:`OperatorRefused` for a refusal, :class:`OperatorError` when the
    server cannot be reached or is not the central server.
    """
    message = OPERATOR_MESSAGES[command]
    check_arguments(message, arguments)
    try:
        options = client_tls_options(pki_dir, name, address.host)
    except PkiError as error:
        raise OperatorError(f"the operator's certificate cannot be used: {error}") from None
    endpoint = SSL4ClientEndpoint(reactor, address.host, address.port, options, timeout=CONNECT_TIMEOUT_S)
    try:
        link = await connectProtocol(endpoint, _OperatorLink())
    except Exception as error:
        raise OperatorError(f"cannot reach the central server at {address}: {_reason(error)}") from None
    try:
        await link.ready
        try:
            answer = await link.callRemote(COMMANDS[command], **arguments)
        except CommandFailed as refused:
            raise OperatorRefused(refused.code, str(refused)) from None
        except (amp.UnhandledCommand, amp.UnknownRemoteError) as error:
            raise OperatorError(f"the central server does not take {command} from this certificate: {error}") from None
        except Exception as error:
            raise OperatorNoAnswer(f"the central server did not answer {command}: {_reason(error)}") from None
        shown = {key: value for key, value in answer.items() if value is not None}
        if "games" in shown:
            shown["games"] = [{k: v for k, v in row.items() if v is not None} for row in shown["games"]]
        check_answer(message, shown)
        return shown
    finally:
        if link.transport is not None:
            link.transport.loseConnection()
            await link.lost


def _reason(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


__all__ = ["CentralAddress", "OperatorError", "OperatorNoAnswer", "OperatorRefused", "operator_name", "send"]

"""The hall's AMP connection to the central server, over mutual TLS, kept up by a ``ClientService``.

This edge only translates: :class:`CentralConnection` is the :class:`~hall_server.network.relay.CentralPort`
of one connection (``call`` sends a hall command built from
:mod:`protocol.central_messages` by :func:`server_kit.amp.commands.amp_commands`), and
every push the central server sends is parsed and handed to
:meth:`NetworkRelay.push <hall_server.network.relay.NetworkRelay.push>`; its answer is
the empty box once the push is journaled, or the error code the relay refused it with.

:func:`central_link` builds the service: the hall presents its ``server`` certificate
(named as its hall id) from its PKI folder and checks the central server's against the
same authority and revocation list; ``ClientService`` reconnects by itself with
back-off, and a connection counts only once ``hello`` agreed a version.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet import defer
from twisted.internet.endpoints import SSL4ClientEndpoint
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.protocols import amp
from twisted.python.failure import Failure

from hall_server.network.module import NetworkRefused
from hall_server.network.relay import NetworkRelay
from protocol import central_messages as m
from server_kit.amp.commands import amp_commands
from server_kit.pki import client_tls_options

COMMANDS: Mapping[str, type[amp.Command]] = amp_commands(m.MESSAGES)
#: Reconnecting: the first retry after about a second, at most a minute apart.
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0


@dataclass(frozen=True)
class CentralAddress:
    """Where the central server is and who this hall is to it."""

    host: str
    port: int
    hall_id: str  # the name of the hall's server certificate
    pki_dir: Path
    server_name: str  # the name the central server's certificate must carry


class CentralConnection(amp.AMP):
    """One AMP connection to the central server."""

    log = Logger()

    def __init__(self, relay: NetworkRelay) -> None:
        super().__init__()
        self.relay = relay

    def call(self, name: str, arguments: Mapping[str, Any]) -> defer.Deferred[dict[str, Any]]:
        return self.callRemote(COMMANDS[name], **arguments)

    def itself(self) -> "CentralConnection":
        """This connection, not the proxy of it that ``ClientService`` hands ``prepareConnection``:
        the relay must know it as the one :meth:`connectionLost` names."""
        return self

    def close(self) -> None:
        if self.transport is not None:
            self.transport.loseConnection()

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        self.relay.disconnected(self)
        super().connectionLost(reason)

    def locateResponder(self, name: bytes) -> Any:
        message = m.MESSAGES.get(name.decode("utf-8", "replace"))
        if message is None or message.sender != "central":
            self.log.warn("The central server sent a command this hall does not know: {name!r}", name=name[:64])
            return None  # AMP answers UNHANDLED
        command = COMMANDS[message.name]
        return lambda box: self._take(message, command, box)

    @defer.inlineCallbacks
    def _take(self, message: m.Message, command: type[amp.Command], box: amp.AmpBox) -> Any:
        try:
            try:
                parsed = command.parseArguments(box, self)
            except Exception as error:
                raise NetworkRefused("bad_argument", f"{message.name}: the arguments cannot be read ({error})") from None
            yield self.relay.push(message.name, {k: v for k, v in parsed.items() if v is not None})
        except NetworkRefused as refused:
            raise amp.RemoteAmpError(refused.code.encode(), str(refused), local=Failure(refused)) from None
        except Exception as error:
            self.log.failure("Taking the central server's {name} failed", Failure(error), name=message.name)
            raise amp.RemoteAmpError(b"internal_error", "the hall server failed to take it; the fault is logged",
                                     local=Failure(error)) from None
        return command.makeResponse({}, self)


class _Factory(Factory):
    noisy = False

    def __init__(self, relay: NetworkRelay) -> None:
        self.relay = relay

    def buildProtocol(self, addr: Any) -> CentralConnection:
        connection = CentralConnection(self.relay)
        connection.factory = self
        return connection


def central_link(reactor: Any, relay: NetworkRelay, address: CentralAddress) -> ClientService:
    """The service that keeps this hall linked to the central server."""
    options = client_tls_options(address.pki_dir, address.hall_id, address.server_name)
    endpoint = SSL4ClientEndpoint(reactor, address.host, address.port, options)

    def prepare(proxy: Any) -> defer.Deferred[Any]:
        # The link is up once hello agreed a version; a refused hello drops the connection
        # and the service tries again later.
        connection: CentralConnection = proxy.itself()
        hello: defer.Deferred[Any] = relay.connected(connection)

        def refused(failure: Failure) -> Failure:
            connection.close()
            return failure

        return hello.addErrback(refused)

    return CentralLinkService(relay, endpoint, _Factory(relay), retryPolicy=backoffPolicy(RETRY_FIRST_S, RETRY_MAX_S),
                              clock=reactor, prepareConnection=prepare)


class CentralLinkService(ClientService):
    """``ClientService`` that also stops the relay's resend timer when it stops."""

    def __init__(self, relay: NetworkRelay, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.relay = relay

    def stopService(self) -> defer.Deferred[None]:
        self.relay.stop()
        return super().stopService()


__all__ = ["COMMANDS", "CentralAddress", "CentralConnection", "CentralLinkService", "central_link"]

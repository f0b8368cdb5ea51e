"""The hall's port: its endpoint, the line that announces it, and how the process ends when it cannot serve.

One port serves staff browsers, boards and terminals (:func:`endpoint`), behind the
connection guard and stamped with each read's arrival.  A port another process holds ends
the start before anything is made (:func:`refuse_a_taken_port`) or, taken in between, once
the hall tries it (:func:`cannot_listen`); a peer that holds more of the journal than the
hall ends the process too (:func:`stop_rolled_back`).  Each says why in one line and ends
the process with status 1, so a hall that serves nothing never looks like a running one.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

from twisted.logger import Logger

from hall_server.config import HallConfig
from server_kit import pki
from server_kit.connections import ConnectionGuard
from server_kit.journal.checkpoints import CheckpointService
from server_kit.received import ReceiptServerEndpoint

log = Logger()


def announce_url(port: Any, config: HallConfig) -> Any:
    address = port.getHost()
    host = "localhost" if config.interface in ("", "0.0.0.0", "127.0.0.1", "::") else config.interface
    log.info(
        "Caller console at {scheme}://{host}:{port}/console, information board at /board",
        scheme=config.scheme, host=host, port=address.port,
    )
    return port


def endpoint(config: HallConfig, reactor: Any, guard: ConnectionGuard) -> Any:
    # What the terminals send is stamped with its arrival: a purchase sent in the sale time
    # is decided as of then, even if the hall reads it later (server_kit/received.py).  The
    # guard stands outside TLS, the stamp at the socket: a read is stamped whatever is above it.
    if config.tls.enabled:
        # One port for staff browsers, boards and terminals: certificates are requested and
        # checked at the handshake, and each endpoint admits the roles it serves.
        required = config.tls.require_client_certificate
        options = pki.server_tls_options(
            config.tls.pki_dir, config.tls.server_name,
            client_certificates=pki.ClientCertificates.required if required else pki.ClientCertificates.requested,
        )
        return guard.endpoint(ReceiptServerEndpoint(reactor, config.port, interface=config.interface), tls=options)
    return guard.endpoint(ReceiptServerEndpoint(reactor, config.port, interface=config.interface))


def cannot_listen(failure: Any, config: HallConfig, reactor: Any) -> None:
    """The port cannot be had: say so and end the process with a failure status.

    A hall that serves nothing must not look like a running hall to whoever started it
    (``twist`` or ``bingo hall serve``, a service manager): the process exits 1 once the
    other services have stopped.
    """
    say_cannot_listen(config, failure.getErrorMessage())
    end_process(reactor, 1)


def stop_rolled_back(reactor: Any, checkpointing: CheckpointService, sentence: str) -> None:
    """A peer holds more of the journal than the hall has: say so and end the process with status 1.

    No checkpoint is written on the way out: the state is that of a journal the hall
    does not serve on.
    """
    checkpointing.forbid(sentence)
    log.critical("{sentence}. The hall server stops.", sentence=sentence)
    print(f"Error: {sentence}", file=sys.stderr)
    end_process(reactor, 1)


def refuse_a_taken_port(config: HallConfig) -> None:
    """Before anything is made: a port another process holds ends the start as :func:`cannot_listen` does.

    (Another process may still take it before the hall listens: then :func:`cannot_listen`.)
    """
    if not config.port:
        return
    try:
        family, kind, _, _, address = socket.getaddrinfo(config.interface or None, config.port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the listening port will
            probe.bind(address)
    except OSError as error:
        say_cannot_listen(config, error.strerror or str(error))
        raise SystemExit(1) from None


def say_cannot_listen(config: HallConfig, reason: str) -> None:
    """The port cannot be had: in the log, and on the terminal that started the hall."""
    log.critical("Cannot listen on {interface}:{port}: {reason}. Another process (another hall server?) may hold "
                 "the port; stop it or set another [listen] port in the configuration. The hall server stops.",
                 interface=config.interface or "*", port=config.port, reason=reason)
    print(f"hall server: cannot listen on {config.interface or '*'}:{config.port}: {reason}", file=sys.stderr)


def end_process(reactor: Any, status: int) -> None:
    """Stop the reactor (now, or once it runs) and end the process with ``status`` after its shutdown."""
    reactor.addSystemEventTrigger("after", "shutdown", exit_now, status)
    if reactor.running:
        reactor.stop()
    else:
        reactor.callWhenRunning(reactor.stop)


def exit_now(status: int) -> None:
    """End the process with ``status`` after the reactor's shutdown (the runners would exit 0)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

"""Twisted services every server runs: its thread pools and its listening ports.

They start and stop with the process: a pool drains its running job before the
process ends (the database writer never stops half-way through a commit), and a port
says through ``listening`` whether it could be had, so a server that cannot listen
can say why and exit instead of serving nothing.
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.interfaces import IListeningPort
from twisted.python.threadpool import ThreadPool
from twisted.web.server import Site


class ThreadPoolService(Service):
    """A thread pool that starts and stops with the process."""

    def __init__(self, pool: ThreadPool) -> None:
        self.pool = pool

    def startService(self) -> None:
        super().startService()
        self.pool.start()

    def stopService(self) -> None:
        super().stopService()
        self.pool.stop()  # waits for the running write to finish: nothing half-written


class WebService(Service):
    """A web site on an endpoint; ``listening`` fires with the port (or why not)."""

    def __init__(self, endpoint: Any, site: Site) -> None:
        self.endpoint = endpoint
        self.site = site
        self.port: Any = None  # the IListeningPort, once listening
        self.listening: defer.Deferred[IListeningPort] = defer.Deferred()

    def startService(self) -> None:
        super().startService()
        started = self.endpoint.listen(self.site)

        def listening(port: IListeningPort) -> IListeningPort:
            self.port = port
            return port

        started.addCallback(listening).chainDeferred(self.listening)

    def stopService(self) -> defer.Deferred[None] | None:
        super().stopService()
        if self.port is not None:
            return defer.maybeDeferred(self.port.stopListening)
        return None

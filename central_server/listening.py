"""The central server's listening ports: the halls' endpoint, whose start schedules the games, and the
regulator's consultation.

:class:`HallListener` is the service of the halls' port (:mod:`central_server.edge`).
Once it listens - and, on a replicated central server, once this process is the active
one - it judges the start (:func:`central_server.stops.resume_play`: after a stop of
normal play the games interrupted, play stopped, R92.5e), schedules the configured games
not yet in the journal (their prize terms notified to the regulator first, R93.11,
R94.3), arms every game's timers from its journaled times and starts the programme.
A port that cannot listen, or a start that fails, stops the reactor: the process ends
and says why (``listener.failure``).

:func:`consultation_site` is the regulator's read-only consultation (R95.3) over HTTPS.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.internet.interfaces import IListeningPort
from twisted.logger import Logger
from twisted.web.resource import Resource

from central_server import i18n
from central_server.config import CentralConfig
from central_server.consultation import CentralConsultation
from central_server.domain.config import library_digest
from central_server.stops import resume_play
from central_server.terms import NOTICE_DAYS
from server_kit import pki
from server_kit.connections import ConnectionGuard
from server_kit.core import CommandCore, RunBlocking
from server_kit.journal.sql import Journal
from server_kit.services import WebService
from server_kit.web.consultation import BODY_BYTES as CONSULTATION_BODY_BYTES
from server_kit.web.consultation import STATIC as CONSULTATION_STATIC
from server_kit.web.consultation import consultation_resource
from server_kit.web.http import NotFound, StaticFiles, secure_site
from server_kit.web.i18n import CatalogResource

if TYPE_CHECKING:
    from central_server.server import CentralServer

log = Logger()
#: The consultation's page, its script and its style.
STATIC = Path(__file__).parent / "static"


def _utc(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


class HallListener(Service):
    """The endpoint's port; once it listens, the games are scheduled and their timers armed."""

    def __init__(self, endpoint: Any, reactor: Any, central: CentralServer | None = None) -> None:
        self.endpoint = endpoint
        self.reactor = reactor
        self.central = central
        self.port: Any = None  # the IListeningPort, once listening
        self.failure: Any = None  # why it could not start serving, if it could not
        self.listening: defer.Deferred[IListeningPort] = defer.Deferred()

    @defer.inlineCallbacks
    def _start(self):  # type: ignore[no-untyped-def]
        assert self.central is not None
        central = self.central
        self.port = yield self.endpoint.listen(central.endpoint.factory())
        address: Any = self.port.getHost()
        log.info("Central server {id} listening for halls on {host}:{port} (mutual TLS, AMP)",
                 id=central.config.central_id, host=address.host, port=address.port)
        if central.role is not None:
            log.info("The central server beside {node} is the standby: it refuses halls until Patroni's leader is "
                     "its node", node=central.config.replica.node if central.config.replica else "?")
            yield central.role.active  # the games and timers are the active process's alone
        assert central.gate is not None
        # After a stop of normal play: the games interrupted, play stopped (R92.5e).
        yield resume_play(central.gate, central.module, central.config.replica, crashed=central.crashed,
                          stopped_after_ms=central.stopped_after_ms)
        for plan in central.config.games:
            if plan.game_id in central.module.games:
                continue
            layouts = central.module.library[plan.settings["series_label"]]
            config = plan.config(library_digest(layouts))
            admitted = yield central.terms.admit(config)  # R93.11, R94.3: the regulator told first
            if not admitted.schedule:
                log.warn("Network game {game} is not scheduled: its prize percentages change, notified to the "
                         "regulator, and apply from {day} (R94.3: at least {days} days after the notice); start "
                         "the central server again from then", game=plan.game_id, days=NOTICE_DAYS,
                         day=_utc(admitted.applies_from_ms))
                continue
            if admitted.notified:
                log.info("Prize terms of network game {game} notified to the regulator", game=plan.game_id)
            yield central.module.schedule(config)
            log.info("Scheduled network game {game}", game=plan.game_id)
        central.module.start_timers()
        yield central.programme.start()
        return self.port

    def startService(self) -> None:
        super().startService()

        def failed(failure: Any) -> Any:
            self.failure = failure
            log.failure("The central server cannot serve", failure)
            self.reactor.stop()
            return failure

        self._start().addErrback(failed).chainDeferred(self.listening)

    def stopService(self) -> defer.Deferred[None] | None:
        super().stopService()
        if self.central is not None:
            self.central.module.stop_timers()
            self.central.programme.stop()
            if self.central.endpoint.admission is not None:
                self.central.endpoint.admission.stop()  # what was read and not decided: the halls resend it
        if self.port is not None:
            return defer.maybeDeferred(self.port.stopListening)
        return None


class _Root(Resource):
    """Nothing but the consultation and its files: every other path is not found."""

    def getChild(self, path: bytes, request: Any) -> Resource:
        return NotFound()


def consultation_site(config: CentralConfig, journal: Journal, core: CommandCore, reactor: Any,
                      read: RunBlocking, guard: ConnectionGuard) -> WebService:
    """The regulator's read-only consultation (R95.3): ``/regulator/`` over HTTPS, a regulator
    certificate required at the handshake, the queries read off the reactor with ``read``."""
    assert config.consultation is not None
    consultation = CentralConsultation(journal.records, read)
    root = _Root()
    root.putChild(b"regulator", consultation_resource(core, consultation.answer, STATIC / "regulator.html",
                                                      "the central server"))
    root.putChild(b"static", StaticFiles(STATIC, CONSULTATION_STATIC))
    root.putChild(b"i18n", CatalogResource(i18n.CATALOGS, config.language, config.timezone, i18n.SETTINGS))
    tls = pki.server_tls_options(config.pki_dir, config.central_id, client_certificates=pki.ClientCertificates.required)
    endpoint = guard.endpoint(TCP4ServerEndpoint(reactor, config.consultation.port, interface=config.consultation.interface),
                              tls=tls)
    return WebService(endpoint, secure_site(root, max_body_bytes=CONSULTATION_BODY_BYTES))


__all__ = ["STATIC", "HallListener", "consultation_site"]

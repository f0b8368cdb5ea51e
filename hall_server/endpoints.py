"""What the hall serves and the links it keeps, built around its modules once they are recovered.

:func:`build_endpoints` makes the staff's sign-ins (each login's licence read against
the hall's day, R79), the command channel and the consoles' live hub, the day's signed
report at each session's close (R83.5, R95.4), the web site (caller console,
information board, minutes, voice), the terminals' gateway and kiosk, the video bingo
machines' screens, the regulator's read-only consultation (R95.3), the link to the
central server (with ``[central]``), the regulator's feed (with ``[regulator]``), and the
one port behind the connection guard, on TLS from the hall's PKI or plain TCP when
``[tls] enabled = false`` (:mod:`hall_server.listening`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from twisted.web.server import Site

from hall_server.annex.link import AnnexLink
from hall_server.config import HallConfig
from hall_server.hall.admission import local_date
from hall_server.hall.pins import pin_matches_or_none
from hall_server.i18n import said
from hall_server.listening import announce_url, endpoint
from hall_server.modules import HallModules
from hall_server.network.link import CentralAddress, Endpoint, central_link
from hall_server.network.relay import NetworkRelay
from hall_server.reports.consultation import Consultation
from hall_server.reports.daily_files import DailyReporter
from hall_server.terminal_gateway.gateway import TerminalGateway
from hall_server.terminal_gateway.machines import MachineGateway, MachineScreenResource
from hall_server.terminal_gateway.resource import KioskResource
from hall_server.voice.clips import VoiceClips
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.consultation import consultation_resource
from hall_server.web.live import LiveHub
from hall_server.web.minutes import MinutesDesk
from hall_server.web.site import build_site
from hall_server.web.view import HallView
from protocol.regulator_feed import hall_sender
from server_kit.boot import Foundation
from server_kit.connections import ConnectionGuard
from server_kit.core import Actor
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedLinkService, ReceiverAddress
from server_kit.feed.reports import ReportOutbox
from server_kit.journal.rollback import RollbackGuard
from server_kit.keys import public_pem
from server_kit.release import SOFTWARE
from server_kit.reports.daily import REPORTS_FOLDER
from server_kit.services import ThreadPoolService, WebService
from server_kit.web.channel import CommandChannel

log = Logger()


@dataclass
class HallEndpoints:
    """What :func:`build_endpoints` made."""

    hub: LiveHub
    channel: CommandChannel
    sign_ins: SignIns
    site: Site
    web: WebService
    gateway: TerminalGateway
    sign_in_pool: ThreadPool
    relay: NetworkRelay | None = None
    link: Any = None


def regulator_feed(config: HallConfig, reactor: Any, journal: Any, read: Any) -> FeedLinkService | None:
    """The link that sends the journal to the regulator's receiver (``[regulator]``), or None; ``read`` runs
    its reads of the journal off the reactor."""
    feeding = config.regulator
    if feeding is None:
        return None
    sender = hall_sender(feeding.hall_id)
    cursor = FeedCursor(journal, sender, public_pem(journal.key).decode())
    address = ReceiverAddress(feeding.host, feeding.port, feeding.pki_dir, feeding.hall_id, feeding.server_name)
    return FeedLinkService(reactor, cursor, address, ReportOutbox(config.home / REPORTS_FOLDER, sender), read)


def build_endpoints(config: HallConfig, base: Foundation, modules: HallModules, view: HallView,
                    feed: FeedLinkService | None, rollback: RollbackGuard, run: Any) -> HallEndpoints:
    """The hall's web site, gateway, links and port over its recovered ``modules`` (see the module
    docstring); ``run``: the reactor's pool."""
    core, reactor, service, m = base.core, base.reactor, base.service, modules
    assert core is not None
    # Each login's class I licence is read against the hall's day (R79): at sign-in, at each
    # request, and for each signature of a session's opening.
    directory = StaffDirectory(config.staff, today=lambda: local_date(base.clock.now_ms(), config.timezone))
    directory.sign_sessions(m.session, config.timezone)
    sign_ins = SignIns(directory, reactor)
    channel = CommandChannel(core, say=said)  # a refusal in the language the console reads
    hub = LiveHub(view, channel, sign_ins)
    core.observers.append(hub.record_committed)
    core.storage_listeners.append(hub.storage_changed)  # the alarm on every console
    # The day's signed report at each session's close (R83.5, R95.4), on the reactor's pool;
    # beside it the day's audit export, which the regulator's receiver replays card by card (R92.7).
    reporter = DailyReporter(base.journal, config.home, config.name, config.timezone, run, config.prize_rules,
                             language=config.language)
    core.observers.append(reporter.record_committed)
    # Staff password checks (scrypt) run on a pool of their own, not on the DB writer and not
    # on the reactor's pool where players' PIN checks run: a burst of bad staff sign-ins
    # waits for its one thread (and the sign-in throttle bounds how many may wait).
    sign_in_pool = ThreadPool(minthreads=0, maxthreads=1, name="hall-staff-sign-in")
    ThreadPoolService(sign_in_pool).setServiceParent(service)

    def authenticate(name: str, password: str) -> defer.Deferred[Actor]:
        return deferToThreadPool(reactor, sign_in_pool, sign_ins.directory.authenticate, name, password)

    # The minutes are made from the whole journal on the reactor's pool, not on the DB writer.
    minutes = MinutesDesk(base.journal, config.name, config.timezone, run, config.language)
    site = build_site(
        hub=hub, sign_ins=sign_ins, channel=channel, authenticate=authenticate, secure_cookie=config.tls.enabled,
        minutes=minutes, voice=voice(config, run), language=config.language, time_zone=str(config.timezone),
    )

    # The PIN check (scrypt) runs off the reactor thread, on the hash read on it; an
    # unknown or closed account costs the same check, so the time tells nothing.
    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        known = m.cashier.state.accounts.get(number)
        stored = known.pin_hash if known is not None and not known.closed else None
        return run(pin_matches_or_none, pin, stored)  # type: ignore[no-any-return]

    gateway = TerminalGateway(core, m.games, m.virtual, m.cashier, reactor, check_pin, config.name, pins=m.pins,
                              responsible=m.responsible, recall=m.lookups.recall,
                              notices=(config.responsible.warnings, config.responsible.help), network=m.network,
                              annex=m.annex, joint=m.joint_sales)
    relay, link = central(config, base, m, view, hub, gateway, rollback)
    site.resource.putChild(b"kiosk", KioskResource(gateway, require_certificate=config.tls.enabled))
    # The regulator's read-only consultation (R95.3): regulator certificates only, each query journaled.
    site.resource.putChild(b"regulator", consultation_resource(core, Consultation(base.journal.records, run)))
    if m.videobingo is not None:
        machines = MachineGateway(m.videobingo, m.pins, check_pin, reactor,
                                  notices=(config.responsible.warnings, config.responsible.help))
        site.resource.putChild(b"vb", MachineScreenResource(machines, require_certificate=config.tls.enabled))
    if feed is not None and config.regulator is not None:
        feed.witness = functools.partial(
            rollback.held, f"the regulator's receiver at {config.regulator.host}:{config.regulator.port}")
        feed.setServiceParent(service)
        feed.listeners.append(hub.feed_changed)  # the consoles' line follows the acks
        reporter.listeners.append(feed.report_written)  # the day's report, sent once written
        core.observers.append(lambda record: feed.wake())  # each commit is sent at once
        log.info("Regulator's feed: sending the journal to {host}:{port} as hall:{hall}", host=config.regulator.host,
                 port=config.regulator.port, hall=config.regulator.hall_id)
    if feed is not None or relay is not None:
        log.info("The journal ends at record {seq}; at each connection to {peers}, what it holds of the journal is "
                 "checked against it, and the hall server stops if it holds more (docs/security.md)", seq=core.seq,
                 peers=" and ".join(p for p, on in (("the regulator's receiver", feed is not None),
                                                    ("the central server", relay is not None)) if on))
    # The port behind the connection guard: deadlines, per-address and per-certificate bounds,
    # descriptors kept for the database and the journal, revoked certificates cut at once.
    guard = ConnectionGuard(reactor, config.connections, pki_dir=config.tls.pki_dir if config.tls.enabled else None)
    guard.setServiceParent(service)
    base.monitor.watch_connections(guard)
    base.monitor.put_on(site.resource)
    web = WebService(endpoint(config, reactor, guard), site)
    web.setServiceParent(service)
    web.listening.addCallback(announce_url, config)
    web.listening.addCallback(base.monitor.require_flag("serving", "the server is starting: its port does not serve yet"))
    return HallEndpoints(hub, channel, sign_ins, site, web, gateway, sign_in_pool, relay, link)


def central(config: HallConfig, base: Foundation, m: HallModules, view: HallView, hub: LiveHub,
            gateway: TerminalGateway, rollback: RollbackGuard) -> tuple[NetworkRelay | None, Any]:
    """With ``[central]``: the relay of the network games and the link to the central server (and the
    hall-annex game over it); else nothing."""
    if m.network is None or config.central is None:
        return None, None
    settings = config.central
    relay = NetworkRelay(m.network, settings.hall_id, base.reactor, software=SOFTWARE)
    relay.journal_held = lambda central_id, seq, hash: rollback.held(f"the central server {central_id}", seq, hash)
    relay.listeners.append(gateway.network_link)
    endpoints = tuple(Endpoint(host, port, settings.server_name or host) for host, port in settings.endpoints)
    address = CentralAddress(settings.host, settings.port, settings.hall_id, settings.pki_dir,
                             settings.server_name or settings.host, endpoints)
    link = central_link(base.reactor, relay, address)
    link.setServiceParent(base.service)
    view.central_source = link.console_status
    link.listeners.append(hub.central_changed)
    if m.annex is not None and config.annex is not None:
        AnnexLink(m.annex, relay)
        log.info("Hall-annex game: this hall is the {role} hall, its partner {partner}", role=config.annex.role,
                 partner=config.annex.partner)
    log.info("Network games: linking to the central server at {endpoints} as hall {hall}",
             endpoints=", ".join(str(e) for e in address.each()), hall=settings.hall_id)
    return relay, link


def voice(config: HallConfig, run: Any) -> VoiceClips:
    """The board's speech clips, made on ``run`` (the reactor's pool) and kept in the hall's folder."""
    clips = VoiceClips(config.home / "voice", run)
    if not clips.available():
        log.warn("No espeak-ng: the board speaks no ball, prize or announcement (apt-get install espeak-ng)")
    return clips

"""What only the active central server process runs: the clock's watch, the daily report, the
regulator's feed and the regulator's consultation.

A single central server runs them from its start; of the two processes of a replicated
central server (:mod:`central_server.replicated`), only the one that took over, once it
leads.  :func:`active_services` makes them as one :class:`MultiService` the composition
root starts when the process acts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.application.service import MultiService
from twisted.logger import Logger

from central_server.config import CentralConfig
from central_server.daily_close import DayCloser
from central_server.deliveries import JournalDeliveries
from central_server.listening import consultation_site
from central_server.module import SYSTEM
from protocol.regulator_feed import CENTRAL
from server_kit.clock import ClockWatch, JournalClock
from server_kit.connections import ConnectionGuard
from server_kit.core import CommandCore, RunBlocking
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedLinkService, ReceiverAddress
from server_kit.feed.reports import ReportOutbox
from server_kit.journal.sql import Journal
from server_kit.keys import public_pem
from server_kit.reports.daily import REPORTS_FOLDER

log = Logger()


@dataclass
class ActiveServices:
    """The active process's services, and the parts of them the server's other parts reach."""

    services: MultiService
    closer: DayCloser  # the daily report written at each day's close (R95.4)
    feed: FeedLinkService | None  # the journal and the reports to the regulator (R92.7, R95.4)


def active_services(config: CentralConfig, reactor: Any, clock: JournalClock, core: CommandCore, journal: Journal,
                    key: Ed25519PrivateKey, deliveries: JournalDeliveries, read: RunBlocking,
                    guard: ConnectionGuard) -> ActiveServices:
    """The services only the active process runs; ``read`` reads the whole journal off the reactor."""
    active = MultiService()
    ClockWatch(core, clock, SYSTEM).setServiceParent(active)  # a step of the wall clock is a fault, journaled
    # The daily report at each day's close (R95.4, R83.5), rendered and signed.
    closer = DayCloser(journal, config.home, config.central_id, config.timezone, clock, read,
                       decided_seq=lambda: core.seq, reported=deliveries.days, language=config.language)
    closer.setServiceParent(active)
    feed = None
    if config.regulator is not None:
        feeding = config.regulator
        cursor = FeedCursor(journal, CENTRAL, public_pem(key).decode())
        feed = FeedLinkService(reactor, cursor, ReceiverAddress(feeding.host, feeding.port, feeding.pki_dir,
                                                                config.central_id, feeding.server_name),
                               ReportOutbox(config.home / REPORTS_FOLDER, CENTRAL, deliveries), read)
        feed.setServiceParent(active)
        sending = feed
        core.observers.append(lambda record: sending.wake())  # each commit is sent at once
        closer.listeners.append(feed.report_written)  # the day's report, sent once written
        log.info("Regulator's feed: sending the journal to {host}:{port} as central", host=feeding.host,
                 port=feeding.port)
    if config.consultation is not None:  # R95.3
        consultation_site(config, journal, core, reactor, read, guard).setServiceParent(active)
        log.info("The regulator's consultation on {interface}:{port} (HTTPS, regulator certificates only)",
                 interface=config.consultation.interface, port=config.consultation.port)
    return ActiveServices(active, closer, feed)


__all__ = ["ActiveServices", "active_services"]

"""What one central server is made of: its modules on the command core, and its parts as wired.

:func:`add_modules` puts the central server's modules on a command core, in one place: the
composition root (:mod:`central_server.tap`) and the tests that compare a state restored
from a checkpoint with a whole replay of the journal make the same ones.  Each folds the
journal's records and gives ``checkpoint()`` / ``restore(data)`` of its state
(``server_kit/journal/checkpoints.py``): the network games (:class:`CentralModule`), the
prize terms notified, the programme's chain, the reports the regulator acknowledged and
the play gate after a stop.  What is not state - the clock, the library of cards, the
timers, the halls' links - is rebuilt at every start, never checkpointed.

:class:`CentralServer` holds every part the composition root wired, for the CLI and the
tests (``service.central``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np
from sqlalchemy import Engine

from central_server.config import CentralConfig
from central_server.deliveries import JournalDeliveries
from central_server.module import CentralModule
from central_server.programme import ProgrammeRunner
from central_server.stops import PlayGate, play_gate
from central_server.terms import PrizeTerms
from server_kit.boot import ServerService
from server_kit.clock import JournalClock
from server_kit.core import CommandCore, RunBlocking
from server_kit.journal.sql import Journal

if TYPE_CHECKING:
    from central_server import leadership, replica
    from central_server.daily_close import DayCloser
    from central_server.edge import CentralEndpoint
    from central_server.listening import HallListener
    from server_kit.feed.link import FeedLinkService
    from server_kit.health import Monitor
    from server_kit.journal.checkpoints import CheckpointService
    from server_kit.run_marker import RunMarker


@dataclass
class CentralModules:
    """The modules of the central server's command core."""

    module: CentralModule
    terms: PrizeTerms  # the prize terms notified to the regulator (R93.11, R94.3)
    programme: ProgrammeRunner  # the games scheduled one after another, their carries chained (R88.5)
    deliveries: JournalDeliveries  # the reports the regulator acknowledged, kept across a failover
    gate: PlayGate  # no new game after a stop of play until a verification passes (R92.5e)


def add_modules(core: CommandCore, clock: JournalClock, config: CentralConfig, library: Mapping[str, np.ndarray],
                journal: Journal, engine: Engine, run_checks: RunBlocking) -> CentralModules:
    """The central server's modules on ``core``, over the central ``library``, their timers on ``clock``;
    ``run_checks`` runs the verification's checks, which read the whole journal, off the reactor."""
    module = CentralModule(core, library, clock, opens_after={g.game_id: g.opens_after_ms for g in config.games},
                           annex_pairs=config.annex_pairs)
    terms = PrizeTerms(core)
    programme = ProgrammeRunner(core, module, terms, clock, config.programme, config.timezone)
    deliveries = JournalDeliveries(core)
    gate = play_gate(core, clock, module, journal, engine, run_checks)
    return CentralModules(module, terms, programme, deliveries, gate)


class CentralService(ServerService):
    """The central server's services (:class:`~server_kit.boot.ServerService`, with its run marker);
    ``central`` holds its parts, for the CLI and the tests."""

    central: CentralServer


@dataclass
class CentralServer:
    """Every part of one running central server, as the composition root wired them."""

    config: CentralConfig
    engine: Engine
    journal: Journal
    core: CommandCore
    module: CentralModule
    endpoint: CentralEndpoint
    service: CentralService
    listener: HallListener
    terms: PrizeTerms  # the prize terms notified to the regulator (R93.11, R94.3)
    programme: ProgrammeRunner  # the games scheduled one after another, their carries chained (R88.5)
    closer: DayCloser | None = None  # the daily report written at each day's close (R95.4)
    fence: leadership.Fence | None = None  # the leadership epoch this process holds, guarding each commit
    role: replica.ReplicaRole | None = None  # one of two processes of a replicated central server
    gate: PlayGate | None = None  # no new game after a stop of play until a verification passes (R92.5e)
    marker: RunMarker | None = None  # the run marker of the central server's folder
    crashed: bool = False  # the run before this one did not stop cleanly
    #: The last moment the server before this start was known to lead (its last record, or a
    #: replicated holder's renewal), central clock.
    stopped_after_ms: int = 0
    monitor: Monitor | None = None  # /health, /ready and /metrics (server_kit/health.py)
    feed: FeedLinkService | None = None  # the journal and the reports to the regulator (R92.7, R95.4)
    deliveries: JournalDeliveries | None = None  # the reports the regulator acknowledged
    #: The record of the checkpoint the start restored (0: the whole journal was replayed).
    recovered_from: int = 0
    checkpointing: CheckpointService | None = None  # the checkpoints written (a single central server's)


__all__ = ["CentralModules", "CentralServer", "CentralService", "add_modules"]

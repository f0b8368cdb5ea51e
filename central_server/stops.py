"""The central server after a stop: the games it interrupted, and the verification before play goes on
(R92.5e, R95.1, R92.6).

:mod:`central_server.domain.stops` says what a start follows (a failover bridged within
the hold time, or a stop of normal play); this module does it on the command core:

* :class:`PlayGate` - a module of the core folding ``central_play_interrupted`` (play
  stopped) and ``central_verified`` (play open again when it passed): while play is
  stopped no network game's sale opens (the timers leave scheduled games be, and the
  operator's ``open-sale`` is refused ``not_now``), so "no new game opens";
* :meth:`PlayGate.resume` - at start, once this process leads and before any timer is
  armed: when the start follows a stop of normal play, journal ``central_play_interrupted``
  and declare each game under way not played, as the central server itself (every stake
  returned; the prizes committed stand, R96.2);
* :meth:`PlayGate.verify` - the operator's ``operator_verify`` (``bingo central verify``):
  the central server's own checks (its journal, database, library and clock, on a worker
  thread) and each linked hall's link, journaled as ``central_verified``;
* :func:`play_gate` puts the gate on the core and the network games' sales, and
  :func:`resume_play` judges a start once the process leads.

How a start knows it follows a crash: the run marker in the central server's folder
(:mod:`server_kit.run_marker`); how a replicated process knows how long no server led:
the leadership row's ``alive_ms``, renewed by the active process every
:data:`~central_server.domain.stops.RENEW_S` seconds (:func:`central_server.leadership.renew`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from sqlalchemy import Engine
from twisted.internet import defer
from twisted.logger import Logger

from central_server import store
from central_server.config import ReplicaConfig
from central_server.domain.stops import HOLD_MS, Interruption, judge, under_way
from central_server.module import CentralModule
from protocol.central_operator import LINK_FAULTS_SHOWN, OPERATOR_VERIFY
from protocol.chain import Record
from protocol.records import declared
from protocol.records.leadership import CentralPlayInterrupted, CentralVerified
from server_kit.clock import JournalClock
from server_kit.core import Actor, CommandCore, RunBlocking
from server_kit.journal.projection import decode, encode
from server_kit.journal.port import JournalPort
from server_kit.verification import check_clock, check_database, check_journal

log = Logger()

#: A linked hall says ``hello`` every 2 s (its heartbeat); one not heard for this long fails its check.
HEARD_WITHIN_MS = 10_000
#: The central server's own checks, in the order the operator reads them.
CHECKS = ("journal", "database", "library", "clock")

PERMISSIONS: Mapping[str, frozenset[str]] = {
    "play_interrupted": frozenset({"system"}),
    "verify": frozenset({"operator"}),
}

SYSTEM = Actor("central", "system")


def central_checks(journal: JournalPort, engine: Engine, library: Mapping[str, Any],
                   wall_ms: Callable[[], int]) -> dict[str, str | None]:
    """The central server's own checks (blocking: on a worker thread)."""
    try:
        stored = store.load_series(engine)  # each series checked against its digest
        differs = sorted(label for label, layouts in library.items()
                         if label not in stored or stored[label].shape != layouts.shape
                         or not (stored[label] == layouts).all())
        library_fault = (f"series {', '.join(differs)} of the central library in the database are not the cards "
                         "the games are played with" if differs else None)
    except Exception as error:  # a series altered in the database, or the database away
        library_fault = str(error)
    return {
        "journal": check_journal(journal),
        "database": check_database(engine, store.MIGRATIONS),
        "library": library_fault,
        "clock": check_clock(wall_ms, journal),
    }


class PlayGate:
    """Whether a new network game may open, folded from the journal; the start's judgement and the verification."""

    def __init__(self, core: CommandCore, run_checks: RunBlocking, checks: Callable[[int], Mapping[str, str | None]],
                 links: Callable[[int], tuple[dict[str, str | None], tuple[str, ...]]]) -> None:
        self.core = core
        self.run_checks = run_checks
        self.checks = checks
        #: Each linked hall's link checked (hall -> fault or None) and the member halls not linked.
        self.links = links
        #: The last ``central_play_interrupted`` no passing verification followed yet.
        self.stopped: dict[str, Any] | None = None
        #: This process found the run before it crashed: play waits from the start, before the record
        #: is committed.  Not part of the folded state.
        self.crashed_after_seq: int | None = None
        #: Told when play opens again (the module re-arms the scheduled games' timers).
        self.opened: list[Callable[[], None]] = []
        core.allow(PERMISSIONS)
        core.add_module(self)

    # --- The fold -------------------------------------------------------------------

    def reset(self) -> None:
        self.stopped = None

    def savepoint(self) -> dict[str, Any] | None:
        """The interruption in force, for the core's restore point (without it the core kept every record)."""
        return None if self.stopped is None else dict(self.stopped)

    def rollback(self, point: dict[str, Any] | None) -> None:
        self.stopped = None if point is None else dict(point)

    def checkpoint(self) -> Any:
        """The interruption in force (None: play is open), for a checkpoint."""
        return encode(self.stopped)

    def restore(self, data: Any) -> None:
        stopped = decode(data)
        if stopped is not None and not isinstance(stopped, dict):
            raise TypeError("the play gate's checkpoint holds no interruption")
        self.stopped = stopped

    def apply(self, record: Record) -> None:
        if record.type == CentralPlayInterrupted.type:
            self.stopped = {**record.payload, "seq": record.seq}
        elif isinstance(event := declared(record), CentralVerified) and event.passed:
            self.stopped = None
            if self.crashed_after_seq is not None and record.seq > self.crashed_after_seq:
                self.crashed_after_seq = None

    def refusal(self) -> str | None:
        """Why no network game may open now, or None (R92.5e, R95.1)."""
        if self.stopped is None and self.crashed_after_seq is None:
            return None
        return ("play stopped: a stop of the central server interrupted it (R92.5e); no network game opens until "
                "the operator's verification of the central server and the halls' links passes (bingo central verify)")

    # --- At start -------------------------------------------------------------------

    def resume(self, module: Any, *, replicated: bool, crashed: bool, stopped_after_ms: int,
               hold_ms: int) -> defer.Deferred[Interruption | None]:
        """Judge this start (:func:`~central_server.domain.stops.judge`); journal an interruption and declare
        each game under way not played.  Fires with the interruption, or None."""
        now = self.core.now_ms()
        found = judge(replicated=replicated, crashed=crashed, stopped_after_ms=min(stopped_after_ms, now),
                      resumed_at_ms=now, hold_ms=hold_ms, games=under_way(module.games.values()))
        if found is None:
            if replicated:
                log.info("The failover was bridged: no central server led for {s} s, within the hold time of {hold} "
                         "s; play goes on (R92.6)", s=max(0, now - stopped_after_ms) // 1000, hold=hold_ms // 1000)
            return defer.succeed(None)
        log.warn("{reason}: {n} game(s) under way declared not played; no network game opens until the operator's "
                 "verification passes (bingo central verify)", reason=found.reason, n=len(found.games))
        record = CentralPlayInterrupted(cause=found.cause, stopped_after_ms=found.stopped_after_ms,
                                        resumed_at_ms=found.resumed_at_ms, hold_ms=found.hold_ms, games=found.games)
        done = self.core.execute(SYSTEM, "play_interrupted", lambda now_ms: [record])

        @defer.inlineCallbacks
        def declare(_: Any) -> Any:
            for game_id in found.games:
                yield module.declare_not_played(game_id, found.reason, SYSTEM)
            return found

        return done.addCallback(declare)

    # --- The operator's verification ----------------------------------------------------

    def verify(self, arguments: Mapping[str, Any], actor: Actor) -> defer.Deferred[dict[str, Any]]:
        """``operator_verify``: run every check, journal ``central_verified``, answer what was found."""
        now = self.core.now_ms()
        halls, away = self.links(now)
        running = self.run_checks(self.checks, now)

        def record(results: Mapping[str, str | None]) -> defer.Deferred[Any]:
            passed = not any(results.values()) and not any(halls.values())
            verified = CentralVerified(results=dict(results), halls=dict(halls), not_linked=away, passed=passed)
            return self.core.execute(actor, "verify", lambda now_ms: [verified]).addCallback(
                lambda _: self._answer(verified))

        return running.addCallback(record)

    def _answer(self, verified: CentralVerified) -> dict[str, Any]:
        if verified.passed:
            for listener in list(self.opened):
                listener()
        checks = [{"check": name, "fault": fault} for name, fault in verified.results.items()]
        faults = [{"hall": hall, "fault": fault[:200]} for hall, fault in sorted(verified.halls.items()) if fault]
        refusal = self.refusal()
        answer: dict[str, Any] = {
            "passed": verified.passed,
            "checks": [{k: v for k, v in check.items() if v is not None} for check in checks],
            "linked": [{"hall": hall} for hall, fault in sorted(verified.halls.items()) if not fault],
            "link_faults": faults[:LINK_FAULTS_SHOWN],
            "not_linked": [{"hall": hall} for hall in verified.not_linked],
            "play": "open" if refusal is None else "stopped",
            "stopped": refusal,
        }
        if len(faults) > LINK_FAULTS_SHOWN:
            answer["link_faults_more"] = len(faults) - LINK_FAULTS_SHOWN
        return answer


def play_gate(core: CommandCore, clock: JournalClock, module: CentralModule, journal: JournalPort, engine: Engine,
              run_checks: RunBlocking) -> PlayGate:
    """No network game's sale opens after a stop of normal play until the operator's verification passes
    (R92.5e, R95.1): the gate on the core, the module's sales asking it, the operator's command."""
    gate = PlayGate(core, run_checks, lambda now_ms: central_checks(journal, engine, module.library, clock.wall_ms),
                    lambda now_ms: ({}, ()))
    module.sale_checks.append(gate.refusal)
    gate.opened.append(lambda: module.start_timers() if module.timers_running else None)
    module.operator_commands[OPERATOR_VERIFY.name] = gate.verify
    return gate


def resume_play(gate: PlayGate, module: CentralModule, replicated: ReplicaConfig | None, *, crashed: bool,
                stopped_after_ms: int) -> defer.Deferred[Any]:
    """Once this process leads and before any timer runs: judge the start (R92.5e, R95.1)."""
    return gate.resume(module, replicated=replicated is not None, crashed=crashed, stopped_after_ms=stopped_after_ms,
                       hold_ms=replicated.hold_ms if replicated is not None else HOLD_MS)


def hall_links(links: Mapping[str, Any], members: Sequence[str], now_ms: int) -> tuple[dict[str, str | None], tuple[str, ...]]:
    """Each member hall's link: checked when linked (its protocol agreed, heard within
    :data:`HEARD_WITHIN_MS`), else named as not linked."""
    checked: dict[str, str | None] = {}
    away = []
    for hall in sorted(members):
        link = links.get(hall)
        if link is None:
            away.append(hall)
            continue
        heard = getattr(link, "heard_ms", None)
        if link.version is None:
            checked[hall] = "connected, but its hello was not agreed"
        elif heard is None or now_ms - heard > HEARD_WITHIN_MS:
            silent = "never" if heard is None else f"for {(now_ms - heard) // 1000} s"
            checked[hall] = f"linked, but not heard {silent} (its heartbeat is every 2 s)"
        else:
            checked[hall] = None
    return checked, tuple(away)


__all__ = ["CHECKS", "HEARD_WITHIN_MS", "PlayGate", "central_checks", "hall_links", "play_gate", "resume_play"]

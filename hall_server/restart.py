"""A hall server's start after a crash (R92.5e, R95.1, R86.1).

"If a server failure stops normal play during a session, the server is stopped and the
stakes are returned to players; play restarts only after the server and every element
are checked again."  The project's ruling for the hall server: after any start that
follows a crash (not a clean stop), nothing is sold until the room chief runs the
verification (the journal, the blower or the generator, the terminals, the links) and it
passes; the game in progress follows R86.

How a start knows: the run marker (:mod:`server_kit.run_marker`), written when the
hall's service starts and removed at the end of a clean stop.  A start that finds it:

* closes the sales at once, in memory (:meth:`SessionModule.crashed_after`), before any
  terminal or console is served;
* journals ``restarted_after_crash`` (the journal's last record before the start, its
  time, the game then in progress), which keeps the sales closed across any later
  start until a verification passes after it;
* suspends the game in progress, as the server (R86.1: ``game_suspended``, the reason
  saying why), when it is selling or drawing; the room chief then resumes it once the
  verification has passed, or suspends it for good, which refunds it when no prize was
  won (R86.2) - the existing failure commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from twisted.internet import defer
from twisted.logger import Logger

from hall_server.annex.module import AnnexModule
from hall_server.hall.games import GamesModule
from hall_server.hall.videobingo import VideoBingoModule
from hall_server.hall.virtual import VirtualModule
from hall_server.hall.roles import SYSTEM, Role
from hall_server.hall.session import SessionModule
from protocol.records import JournalRecord
from protocol.records.session import RestartedAfterCrash
from server_kit.core import CommandCore

log = Logger()

PERMISSIONS = {"record_restart_after_crash": {Role.SYSTEM}}
#: The reason the suspended game's record gives.
SUSPENDED_BECAUSE = ("the hall server restarted after a crash: the game waits for the verification (R92.5e); "
                     "then resume it, or suspend it for good (R86.2)")


class CrashRestart:
    """What the start does when the run before it crashed (its run marker was left behind, R92.5e)."""

    def __init__(self, crashed: bool) -> None:
        #: Whether the run before this one ended without a clean stop (read before this run wrote its marker).
        self.crashed = crashed
        #: Journals the restart once the service runs (set by :meth:`install` when the run before crashed).
        self._record: Callable[[], Any] | None = None

    def started(self) -> None:
        """The hall's service started (its marker written): a crash before this start is journaled now (a
        hall built but never started, to look at a folder, journals nothing)."""
        record, self._record = self._record, None
        if record is not None:
            record()

    def install(self, core: CommandCore, session: SessionModule, games: GamesModule, reactor: Any,
                sellers: Sellers) -> None:
        """After recovery: every sale asks the session's gate; if the run before crashed, close it now and
        journal it once the reactor runs."""
        core.allow(PERMISSIONS)
        gate(session, games, sellers)
        if not self.crashed:
            return
        session.crashed_after(core.seq)
        log.warn("The hall server did not stop cleanly last time (its journal ends at record {seq}): nothing is sold "
                 "until the room chief runs the verification and it passes (R92.5e)", seq=core.seq)
        self._record = lambda: reactor.callWhenRunning(lambda: record_restart(core, games).addErrback(
            lambda failure: log.failure("journaling the restart after a crash", failure)))


@dataclass
class Sellers:
    """What sells in this hall, each told to ask the session's gate (:meth:`SessionModule.restart_refusal`)."""

    virtual: VirtualModule | None = None  # its purchase checks serve the network games and the joint game too
    videobingo: VideoBingoModule | None = None
    annex: AnnexModule | None = None


def gate(session: SessionModule, games: GamesModule, sellers: Sellers) -> None:
    """A paper game's sale, virtual and network cards, credit into a video bingo machine, the joint
    game's paper cards, and the resumption of a suspended game are refused while a restart from a
    crash awaits its verification."""

    def refusal(account: str, amount_cents: int, now_ms: int) -> str | None:
        return session.restart_refusal()

    games.sale_checks.append(session.restart_refusal)
    games.resume_checks.append(session.restart_refusal)
    if sellers.virtual is not None:
        sellers.virtual.purchase_checks.append(refusal)
    if sellers.videobingo is not None:
        sellers.videobingo.credit_checks.append(refusal)
    if sellers.annex is not None:
        sellers.annex.session_open = session.require_open_for_sale


def record_restart(core: CommandCore, games: GamesModule) -> defer.Deferred[Any]:
    """Journal ``restarted_after_crash`` and, in the same commit, suspend the game in progress (R86.1)."""
    last = core.journal.last

    def decide(now: int) -> list[JournalRecord]:
        game = games.current
        restarted = RestartedAfterCrash(last_record=last.seq if last is not None else 0,
                                        stopped_after_ms=last.time_ms if last is not None else now,
                                        game_id=game.game_id if game is not None and not game.over else None)
        return [restarted, *games.suspension(SUSPENDED_BECAUSE)]

    return core.execute(SYSTEM, "record_restart_after_crash", decide)


__all__ = ["CrashRestart", "record_restart"]

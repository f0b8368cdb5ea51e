"""A stop of the central server: a failover bridged, or play interrupted (R92.5e, R95.1, R92.6).

REGULATION.md's ruling: a failover in which the standby takes over and the game goes on
within the hold time (configured, 60 s by default) with nothing lost is not a stop of
normal play (R92.6 exists for it).  Any other stop - no server leading past the hold
time, a restart from a crash, a journal that fails its check - interrupts the game: the
central server itself declares it not played once it leads again (every stake returned,
prizes already committed stand), and opens no new game until a verification of the
central server and of every linked hall's link passes and is journaled.

Pure: the shell (``central_server/stops.py``) says how this process came to lead and
when the server before it was last known to lead; :func:`judge` says what that was.

* **A single central server** has no standby: whatever stopped it, its start finds the
  games under way interrupted (``stopped``: a clean stop; ``crash``: a start that found
  the run marker of a run that did not stop cleanly, or whose journal failed its check).
  A start after a crash with no game under way interrupts none, but play was stopped all
  the same: no game opens before a verification.  A start after a clean stop with no game
  under way is no stop of play at all.
* **A replicated central server** (``[replica]``): the process that takes the leadership,
  beside the node Patroni promoted or beside the same node after its process died, carries
  on from the synchronously replicated journal, which loses nothing acknowledged.  When it
  took over within the hold time of the last moment the previous holder was known to lead
  (the leadership row's ``alive_ms``, which the active process renews every
  :data:`RENEW_S` seconds, or the previous holder's last record when later), that is the
  failover R92.6 provides for: no stop.  Past the hold time (``hold_exceeded``) it is an
  interruption like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from central_server.domain.game import CentralGame, Phase

#: The hold time when ``[replica] hold_ms`` does not say another.
HOLD_MS = 60_000
#: How often the active process of a replicated central server says it still leads.
RENEW_S = 2.0
#: Phases of a game under way: it has a sale open or balls still to come.
UNDER_WAY = frozenset({Phase.SELLING, Phase.SALE_CLOSED, Phase.DRAWING})

#: Why play stopped, as ``central_play_interrupted.cause`` says it.
CAUSES = {
    "crash": "the central server restarted after a crash (or after a journal that failed its check)",
    "stopped": "the central server was stopped while a game was under way",
    "hold_exceeded": "no central server led for longer than the hold time",
}


@dataclass(frozen=True)
class Interruption:
    """What a start found: why play stopped, for how long, and the games it interrupted."""

    cause: str
    stopped_after_ms: int
    resumed_at_ms: int
    hold_ms: int
    games: tuple[str, ...]

    @property
    def reason(self) -> str:
        """The reason each interrupted game's ``central_game_not_played`` gives."""
        seconds = max(0, self.resumed_at_ms - self.stopped_after_ms) // 1000
        return (f"{CAUSES[self.cause]}; play stopped for {seconds} s (R92.5e, R95.1): the game is not played and "
                "every stake is returned")


def under_way(games: Iterable[CentralGame]) -> tuple[str, ...]:
    """The games a stop interrupts, in the order they were scheduled."""
    return tuple(game.game_id for game in games if game.phase in UNDER_WAY)


def judge(
    *,
    replicated: bool,
    crashed: bool,
    stopped_after_ms: int,
    resumed_at_ms: int,
    hold_ms: int,
    games: Sequence[str],
) -> Interruption | None:
    """Whether this start follows a stop of normal play, and which; ``None`` when it does not.

    ``stopped_after_ms`` is the last moment the server before this start was known to lead;
    ``games`` those under way in the journal (:func:`under_way`).
    """
    if replicated:
        if resumed_at_ms - stopped_after_ms <= hold_ms:
            return None  # the failover R92.6 provides for: nothing lost, play goes on
        cause = "hold_exceeded"
    elif crashed:
        cause = "crash"
    elif games:
        cause = "stopped"
    else:
        return None
    return Interruption(cause, stopped_after_ms, resumed_at_ms, hold_ms, tuple(games))


__all__ = ["CAUSES", "HOLD_MS", "RENEW_S", "UNDER_WAY", "Interruption", "judge", "under_way"]

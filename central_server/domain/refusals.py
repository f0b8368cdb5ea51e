"""How much of what one authenticated peer gets refused is journaled, without I/O or clock.

A refused command of a hall or an operator goes on file (``central_command_refused``), so
the regulator sees who tried what.  One peer must not make the journal grow at the rate it
can send garbage: per peer and per interval (:data:`INTERVAL_MS`), the first
:data:`IN_FULL` refusals are journaled one by one; the rest are only counted, by command
and code, and journaled as **one** ``central_refusals_counted`` record when the interval
ends.  So a peer sending 1,000 bad commands a second costs the journal at most
``IN_FULL + 1`` records a minute, and nothing it sent is forgotten: the count says how
many, of what, and the last message.

:class:`RefusalBudget` decides; the module journals and arms the timer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: Refusals of one peer journaled one by one in an interval.
IN_FULL = 20
#: The interval, in milliseconds of the central clock.
INTERVAL_MS = 60_000


@dataclass
class _Window:
    start_ms: int
    role: str
    in_full: int = 0
    counted: Counter[str] = field(default_factory=Counter)
    first_ms: int | None = None
    last_ms: int = 0
    last_message: str = ""


@dataclass(frozen=True)
class RefusalCount:
    """What ``central_refusals_counted`` says of one peer's interval."""

    peer: str
    role: str
    from_ms: int
    to_ms: int
    refused: int
    by_code: dict[str, int]
    shown: str


class RefusalBudget:
    """Per peer: whether a refusal is journaled in full now, and the counts due at each interval's end."""

    def __init__(self, in_full: int = IN_FULL, interval_ms: int = INTERVAL_MS) -> None:
        self.in_full = in_full
        self.interval_ms = interval_ms
        self._windows: dict[str, _Window] = {}

    def take(self, peer: str, role: str, command: str, code: str, message: str, now_ms: int) -> bool:
        """Count one refusal of ``peer`` at ``now_ms``: True if it is journaled one by one, False if only counted.

        An interval that ended and counted nothing starts afresh; one that counted something
        stays until :meth:`due` hands its count over, and a refusal that comes meanwhile is
        counted in it (its ``to_ms`` says so).
        """
        window = self._windows.get(peer)
        if window is None or (now_ms >= window.start_ms + self.interval_ms and not window.counted):
            window = self._windows[peer] = _Window(now_ms, role)
        if window.in_full < self.in_full and now_ms < window.start_ms + self.interval_ms:
            window.in_full += 1
            return True
        window.counted[f"{command}: {code}"] += 1
        window.first_ms = now_ms if window.first_ms is None else window.first_ms
        window.last_ms, window.last_message = now_ms, message
        return False

    def next_due_ms(self) -> int | None:
        """When the earliest interval holding a count ends (central clock), or None."""
        ends = [w.start_ms + self.interval_ms for w in self._windows.values() if w.counted]
        return min(ends) if ends else None

    def due(self, now_ms: int) -> list[RefusalCount]:
        """The counts of the intervals ended by ``now_ms``, each once; their peers start afresh."""
        out = []
        for peer, window in sorted(self._windows.items()):
            if window.counted and now_ms >= window.start_ms + self.interval_ms:
                assert window.first_ms is not None
                out.append(RefusalCount(peer, window.role, window.first_ms, window.last_ms,
                                        sum(window.counted.values()), dict(sorted(window.counted.items())),
                                        window.last_message))
                del self._windows[peer]
        return out

    def pending(self) -> int:
        """Refusals counted and not yet handed over (what a stop now would leave unjournaled)."""
        return sum(sum(w.counted.values()) for w in self._windows.values())


__all__ = ["IN_FULL", "INTERVAL_MS", "RefusalBudget", "RefusalCount"]

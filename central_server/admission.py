"""The halls' deciding commands, stamped when received and decided in that order, a few at a time.

A purchase burst brings thousands of ``buy_cards`` a second from every hall at once
(R93.6: decided in the order received).  Reading a command off its connection costs a
fraction of deciding and journaling it, so the endpoint only reads: each deciding
command (``buy_cards``, ``terminal_failed``) is stamped with the central clock's time as
it is read and queued here, and the queue is decided :data:`PER_TURN` commands at a
time, one turn of the reactor after another, so the reactor goes back to its
connections between two turns and every command is read, and stamped, when it comes.

Each command is decided as of the time it was received (its stamp): a purchase received
before the sale's deadline is decided on the open sale even if the burst's last ones
are decided a moment after the deadline, and one received at or after it is refused
(R93.8: nothing is assigned after the deadline; the decision records say when each
request was received).  The sale closes only once every command received before its
deadline has been decided (:meth:`Admission.decided_before`), so no decision taken as of
the open sale comes after the close.

The queue holds what was read and not yet decided; a crash loses it with the
connections it came on, and the halls send each request again with its request id
(``docs/central-protocol.md``): nobody was told anything of it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

#: Commands decided in one turn of the reactor before it reads its connections again.
PER_TURN = 48

#: Decide one command: ``(name, arguments, hall, received_ms)`` -> the answer.
Decide = Callable[[str, Mapping[str, Any], str, int], "defer.Deferred[Any]"]


@dataclass
class _Received:
    received_ms: int
    name: str
    arguments: Mapping[str, Any]
    hall: str
    done: defer.Deferred[Any] = field(default_factory=defer.Deferred)


class Admission:
    """The queue of received deciding commands; ``decide`` is the module's, ``clock`` stamps, ``turns`` schedules."""

    log = Logger()

    def __init__(self, decide: Decide, clock: IReactorTime, turns: IReactorTime, per_turn: int = PER_TURN) -> None:
        if per_turn < 1:
            raise ValueError(f"at least one command a turn, not {per_turn}")
        self.decide = decide
        self.clock = clock
        self.turns = turns
        self.per_turn = per_turn
        self._queue: deque[_Received] = deque()
        self._turn: IDelayedCall | None = None
        self._waiting: list[tuple[int, defer.Deferred[None]]] = []  # (deadline, fired once none before it waits)
        #: The most commands that waited at once (for the benchmarks and the log).
        self.deepest = 0

    def submit(self, name: str, arguments: Mapping[str, Any], hall: str) -> defer.Deferred[Any]:
        """Queue a command received now; fires with its answer once decided and committed."""
        received = _Received(int(self.clock.seconds() * 1000), name, arguments, hall)
        self._queue.append(received)
        self.deepest = max(self.deepest, len(self._queue))
        self._schedule()
        return received.done

    @property
    def waiting(self) -> int:
        """Commands received and not yet decided."""
        return len(self._queue)

    def received_before(self, deadline_ms: int) -> bool:
        """Whether a command received before ``deadline_ms`` still waits to be decided."""
        return bool(self._queue) and self._queue[0].received_ms < deadline_ms

    def decided_before(self, deadline_ms: int) -> defer.Deferred[None]:
        """Fires once every command received before ``deadline_ms`` has been decided (at once if none waits)."""
        if not self.received_before(deadline_ms):
            return defer.succeed(None)
        done: defer.Deferred[None] = defer.Deferred()
        self._waiting.append((deadline_ms, done))
        return done

    def _schedule(self) -> None:
        if self._turn is None:
            self._turn = self.turns.callLater(0, self._decide_some)

    def _decide_some(self) -> None:
        self._turn = None
        for _ in range(min(self.per_turn, len(self._queue))):
            command = self._queue.popleft()
            try:
                decided = self.decide(command.name, command.arguments, command.hall, command.received_ms)
            except Exception as error:  # a decision that raised at once: its caller hears it
                command.done.errback(error)
                continue
            decided.chainDeferred(command.done)
        if self._waiting:
            still = []
            for deadline, done in self._waiting:
                if self.received_before(deadline):
                    still.append((deadline, done))
                else:
                    done.callback(None)
            self._waiting = still
        if self._queue:
            self._schedule()

    def stop(self) -> None:
        """Stop deciding (the process stops): what waits is dropped, as a crash would drop it."""
        if self._turn is not None and self._turn.active():
            self._turn.cancel()
        self._turn = None
        dropped, self._queue = self._queue, deque()
        for command in dropped:
            command.done.errback(defer.CancelledError("the central server stopped before deciding this command"))

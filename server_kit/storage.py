"""Watching a server's storage while it is unavailable, and telling the core when it is back.

:class:`StorageWatch` is a service beside the command core.  When a commit fails for the
storage (:class:`~server_kit.db.faults.StorageUnavailable`) the core refuses commands and
tells its storage listeners; the watch then tries the storage again and again, with
back-off on the reactor's clock (Twisted's ``backoffPolicy``: :data:`FIRST_TRY_S`
doubling up to :data:`MAX_WAIT_S`), each try being the journal's
:meth:`~server_kit.journal.sql.Journal.probe` on the database's writer thread (so it
never runs beside a commit).  The try:

========================  ===============================================================
the probe                 then
========================  ===============================================================
fails for the storage     still unavailable (the fault may have changed): try again later
finds the journal's end   ``core.storage_back([])``: commands are taken again
where the core stands
finds the failed batch    verified and adopted by the journal, ``core.storage_back(batch)``
committed after all
finds anything else       stays unavailable, and stops trying: the journal's end is not
                          what this process committed; a restart verifies the journal
========================  ===============================================================
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from twisted.application.internet import backoffPolicy
from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from protocol.chain import Record
from protocol.errors import N_, worded
from server_kit.core import CommandCore, RunBlocking
from server_kit.db.faults import FAILING, StorageUnavailable

#: The first try after the storage failed, and the longest wait between two tries.
FIRST_TRY_S = 0.25
MAX_WAIT_S = 5.0

log = Logger()


class StorageWatch(Service):
    """Tries the storage again while the core finds it unavailable (see the module docstring).

    ``probe(unconfirmed)`` is the journal's: it raises
    :class:`~server_kit.db.faults.StorageUnavailable` while the storage is not back, and
    returns the records of ``unconfirmed`` it found committed (verified) otherwise.
    """

    def __init__(self, core: CommandCore, clock: IReactorTime, run_blocking: RunBlocking,
                 probe: Callable[[Sequence[Record]], list[Record]],
                 delay: Callable[[int], float] = backoffPolicy(FIRST_TRY_S, MAX_WAIT_S, 2.0, jitter=lambda: 0.0)) -> None:
        self.core = core
        self.clock = clock
        self.run_blocking = run_blocking
        self.probe = probe
        self.delay = delay
        #: Tries since the storage failed, and when it failed (ms, the clock's).
        self.tries = 0
        self.since_ms: int | None = None
        self._next: IDelayedCall | None = None
        self._trying: defer.Deferred[Any] | None = None
        #: Whether the tries stopped: the journal's end is not what the core committed (a restart verifies it).
        self.given_up = False
        # First among the listeners: the others (the consoles) read status() when told.
        self.core.storage_listeners.insert(0, self._changed)

    def startService(self) -> None:
        super().startService()
        if self.core.storage_fault is not None:
            self._arm()

    def stopService(self) -> Any:
        super().stopService()
        self._cancel()
        return self._trying  # a try under way ends before the writer's pool stops

    def status(self) -> dict[str, Any] | None:
        """The storage's alarm as consoles show it; None while the storage works."""
        fault = self.core.storage_fault
        if fault is None:
            return None
        template = N_("STORAGE UNAVAILABLE ({kind}): {detail}; commands are refused")
        figures = {"kind": fault.kind, "detail": fault.detail}
        return {"up": False, "kind": fault.kind, "where": fault.where, "message": str(fault),
                "since_ms": self.since_ms, "tries": self.tries,
                **worded(template, figures)}

    def _changed(self, fault: StorageUnavailable | None) -> None:
        if fault is None:
            self.tries, self.since_ms = 0, None
            self._cancel()
            return
        if self.since_ms is None:
            self.since_ms = int(self.clock.seconds() * 1000)
        if self._trying is None and self.running and not self.given_up:
            self._arm()

    def _cancel(self) -> None:
        if self._next is not None and self._next.active():
            self._next.cancel()
        self._next = None

    def _arm(self) -> None:
        if self._next is None or not self._next.active():  # one try waits at a time
            self._next = self.clock.callLater(self.delay(self.tries), self.try_now)

    def try_now(self) -> defer.Deferred[Any]:
        """One try of the storage (the timer's; tests call it too)."""
        self._next = None
        if self.core.storage_fault is None or self._trying is not None:
            return defer.succeed(None)
        self.tries += 1
        trying = self.run_blocking(self.probe, list(self.core.unconfirmed))
        self._trying = trying

        def back(adopted: list[Record]) -> None:
            self._trying = None
            self.core.storage_back(adopted)

        def still(failure: Failure) -> None:
            self._trying = None
            if isinstance(failure.value, StorageUnavailable):
                self.core.storage_still_unavailable(failure.value)
                if self.running:
                    self._arm()  # unless the core's listeners armed it already
                return
            # Not the storage: the journal's end is not what this process committed.
            log.failure("The storage is back but the journal's end is not what this server committed; it keeps "
                        "refusing commands: restart it, and the start verifies the journal", failure)
            self.given_up = True
            fault = self.core.storage_fault
            where = fault.where if fault is not None else "the database"
            self.core.storage_still_unavailable(StorageUnavailable(
                FAILING, where, f"the journal's end in {where} is not what this server committed "
                f"({failure.getErrorMessage()}); restart the server: it verifies the journal before it serves"))

        return trying.addCallbacks(back, still)

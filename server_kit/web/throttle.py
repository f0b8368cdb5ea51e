"""Staff sign-in throttling: back-off after failed sign-ins, and a bound on password checks.

Two rules, both on the injected clock:

* **Back-off.**  Failed sign-ins are counted per name (whether the name exists or not,
  so a lock tells nothing about who is on the staff) and per client address.  After
  :data:`FREE_FAILURES_PER_NAME` (per address :data:`FREE_FAILURES_PER_ADDRESS`)
  failures in a row, each further failure locks the name (the address) for twice as
  long as the one before, from :data:`FIRST_LOCK_S` up to :data:`MAX_LOCK_S`.  While
  locked, a sign-in is refused before its password is looked at.  A good sign-in
  clears its name; failures are forgotten after :data:`FORGET_AFTER_S` without one.
* **Checks in flight.**  A password check is scrypt, tens of milliseconds of a core:
  at most :data:`MAX_CHECKS_PER_ADDRESS` run for one address and :data:`MAX_CHECKS` in
  all; a sign-in beyond that is refused at once ("busy") instead of queueing, so a
  burst of bad sign-ins costs the hall a bounded amount of work.

The counters are bounded too (:data:`MAX_TRACKED` names and addresses each).
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Protocol

from protocol.errors import DomainError

FREE_FAILURES_PER_NAME = 5
#: An address may be a shared console at a desk where several staff sign in.
FREE_FAILURES_PER_ADDRESS = 20
FIRST_LOCK_S = 1.0
MAX_LOCK_S = 15 * 60.0
FORGET_AFTER_S = 3600.0
MAX_TRACKED = 10_000
MAX_CHECKS_PER_ADDRESS = 2
MAX_CHECKS = 8


class Clock(Protocol):
    def seconds(self) -> float: ...


class SignInThrottled(DomainError):
    """A sign-in refused before its password was checked; ``code`` is ``locked`` or ``busy``."""

    def __init__(self, code: str, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after_s = retry_after_s


@dataclass
class _Failures:
    count: int
    last_s: float
    locked_until_s: float = 0.0


class Backoff:
    """Failures counted by key, each beyond the free ones locking the key for longer."""

    def __init__(self, clock: Clock, free_failures: int, first_lock_s: float = FIRST_LOCK_S,
                 max_lock_s: float = MAX_LOCK_S, forget_after_s: float = FORGET_AFTER_S,
                 max_keys: int = MAX_TRACKED) -> None:
        self.clock = clock
        self.free_failures = free_failures
        self.first_lock_s = first_lock_s
        self.max_lock_s = max_lock_s
        self.forget_after_s = forget_after_s
        self.max_keys = max_keys
        self.failures: OrderedDict[str, _Failures] = OrderedDict()

    def _current(self, key: str) -> _Failures | None:
        entry = self.failures.get(key)
        if entry is not None and self.clock.seconds() - entry.last_s > self.forget_after_s:
            del self.failures[key]
            return None
        return entry

    def wait_s(self, key: str) -> float:
        """How long ``key`` stays locked (0 when it is not)."""
        entry = self._current(key)
        return max(0.0, entry.locked_until_s - self.clock.seconds()) if entry else 0.0

    def failed(self, key: str) -> float:
        """Count a failure of ``key``; the lock it starts, in seconds (0 while failures are free)."""
        now = self.clock.seconds()
        entry = self._current(key) or _Failures(0, now)
        entry.count += 1
        entry.last_s = now
        lock = 0.0
        if entry.count > self.free_failures:
            lock = min(self.max_lock_s, self.first_lock_s * 2.0 ** min(entry.count - self.free_failures - 1, 64))
            entry.locked_until_s = now + lock
        self.failures[key] = entry
        self.failures.move_to_end(key)
        self._bound()
        return lock

    def succeeded(self, key: str) -> None:
        self.failures.pop(key, None)

    def _bound(self) -> None:
        # Lapsed entries go first; past that the oldest, so memory stays bounded whatever is sent.
        if len(self.failures) <= self.max_keys:
            return
        now = self.clock.seconds()
        for key in [k for k, e in self.failures.items() if now - e.last_s > self.forget_after_s]:
            del self.failures[key]
        while len(self.failures) > self.max_keys:
            self.failures.popitem(last=False)


class SignInThrottle:
    """Whether a sign-in may have its password checked now, and what its outcome locks."""

    def __init__(self, clock: Clock, *, per_address: int = MAX_CHECKS_PER_ADDRESS, in_all: int = MAX_CHECKS) -> None:
        self.names = Backoff(clock, FREE_FAILURES_PER_NAME)
        self.addresses = Backoff(clock, FREE_FAILURES_PER_ADDRESS)
        self.per_address = per_address
        self.in_all = in_all
        self.in_flight: Counter[str] = Counter()

    def admit(self, name: str, address: str) -> None:
        """Take a place for one password check, or raise :class:`SignInThrottled`."""
        wait = max(self.names.wait_s(name), self.addresses.wait_s(address))
        if wait > 0:
            raise SignInThrottled(
                "locked", f"too many failed sign-ins for this name or from this address; "
                          f"try again in {math.ceil(wait)} s", wait)
        if self.in_flight[address] >= self.per_address or sum(self.in_flight.values()) >= self.in_all:
            raise SignInThrottled("busy", "other sign-ins are being checked; try again in a moment", 1.0)
        self.in_flight[address] += 1

    def finished(self, name: str, address: str, accepted: bool) -> float:
        """Give the place back and count the outcome; the lock a failure started, in seconds."""
        self.in_flight[address] -= 1
        if self.in_flight[address] <= 0:
            del self.in_flight[address]
        if accepted:
            self.names.succeeded(name)
            return 0.0
        return max(self.names.failed(name), self.addresses.failed(address))

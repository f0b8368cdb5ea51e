"""Waiting for an event in a test: with a bound, and saying what did not happen.

A test that sleeps and then asserts fails on a busy machine, and a polling loop that
gives up silently fails somewhere later with a message about something else.  These
helpers wait for the event itself (a condition that becomes true), give up only after a
generous bound, and then fail with :class:`WaitTimeout` naming what was awaited and,
where the caller can say, what was seen instead.

- :func:`wait_until` blocks the calling thread: for tests that drive processes,
  sockets on threads, browsers or ptys by hand.
- :func:`wait_until_in_reactor` returns a ``Deferred`` and polls on the reactor's own
  clock: for ``pytest_twisted`` tests, where blocking the thread would stop the very
  reactor that has to deliver the event.

The bounds are not timings the tests assert: a test that waits the whole bound has
failed.  They are sized for a loaded two-core machine, where a step that takes a
fraction of a second on an idle one can take many seconds.
"""

from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

from twisted.internet import defer, task
from twisted.internet.interfaces import IReactorTime

T = TypeVar("T")

#: The bound for one event (a ball racked, an answer, a page updated), in seconds.
WAIT = 60.0
#: The bound for a process to start and be ready (keys, certificates, a card set).
START = 120.0
#: How often a condition that offers no notification is looked at again, in seconds.
POLL = 0.02


class WaitTimeout(AssertionError):
    """The event a test waited for did not come within its bound."""


def timed_out(what: str, timeout: float, seen: Callable[[], Any] | None = None) -> WaitTimeout:
    """The error for ``what`` not having happened within ``timeout`` seconds."""
    message = f"waited {timeout:g} s for {what}"
    if seen is not None:
        try:
            message += f"; last seen: {seen()}"
        except Exception as error:  # the description must not hide the timeout itself
            message += f"; what was seen could not be described ({error!r})"
    return WaitTimeout(message)


def wait_until(predicate: Callable[[], T], timeout: float = WAIT, what: str = "a condition", *,
               seen: Callable[[], Any] | None = None, interval: float = POLL) -> T:
    """Call ``predicate`` until it returns something true, and return that.

    Raises :class:`WaitTimeout` after ``timeout`` seconds, naming ``what`` and, when
    given, ``seen()``: what the test saw instead.  ``interval`` is the pause between
    two looks; 0 when ``predicate`` itself waits (a ``select`` with a timeout).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise timed_out(what, timeout, seen)
        if interval:
            time.sleep(interval)


@defer.inlineCallbacks
def wait_until_in_reactor(reactor: IReactorTime, predicate: Callable[[], T], timeout: float = WAIT,
                          what: str = "a condition", *, seen: Callable[[], Any] | None = None,
                          interval: float = POLL) -> Any:
    """:func:`wait_until` for a running reactor: a ``Deferred`` that fires with the value.

    The reactor keeps running between two looks, so the events being waited for (bytes
    on a pty, a retransmission, a timer) go on happening.
    """
    deadline = reactor.seconds() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if reactor.seconds() >= deadline:
            raise timed_out(what, timeout, seen)
        yield task.deferLater(reactor, interval, lambda: None)

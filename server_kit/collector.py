"""The cyclic garbage collector of a long-running server, set once its state is built.

A server builds its state at start (the journal folded, the card libraries, the
modules) and keeps it for as long as it runs; under load it makes tens of thousands of
objects that stay alive until their commit is answered (a purchase burst's commands,
records and deferreds).  None of that is garbage, and almost nothing a server makes is
in a reference cycle.  With CPython's defaults (a young collection every 700 new
containers, and a full one each time the long-lived objects grew by a quarter), the
collector walks those objects again and again: in ``bench/bench_central_assignments.py``
a burst of 20,000 purchases spent about 40% of its CPU there.

:func:`settle` is called by each process's composition root once its state is built:
it collects once, freezes what survived (the collector never walks it again; it is
the server's state), and starts a young collection every :data:`YOUNG_THRESHOLD` new
containers instead of 700.  Cycles are still found and freed, just less often.

The threshold is above what a loaded server holds in flight.  With 100 video bingo
machines playing (``bench/bench_vb_sockets.py``, 2026-12-07) the commands, records and
deferreds of the plays in flight are about 10,000 containers: at a threshold of 10,000
they alone filled the young generation again and again, 70 young passes in 17 seconds,
each walking them and moving them to the middle generation, whose passes then took
10-27 ms on the reactor (the plays' p99 waited for them).  At 50,000 the same run made
2 young passes; the 1,000-terminal purchase burst took 517-531 ms against 558-572 ms.
"""

from __future__ import annotations

import gc

#: New containers between two young collections (CPython's default is 700).
YOUNG_THRESHOLD = 50_000


def settle() -> None:
    """Collect once, freeze the state built so far, and collect young objects less often."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)

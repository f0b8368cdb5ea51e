"""The journal writer's commits while the thread that decides is busy.

    .venv/bin/python bench/bench_writer.py [--records 20000] [--seconds 3]

A server decides on its reactor thread and commits on one writer thread
(:class:`server_kit.journal.sql.Journal`): each record is signed (Ed25519) and inserted
there.  Python runs one thread at a time; a thread that lets go of the interpreter in a
C call (a signature, a row's insert) waits to have it back until the thread holding it
yields, up to ``sys.getswitchinterval()`` (5 ms) while that thread is busy in Python, as
the reactor is through a purchase burst.

Printed, in records committed a second (commits of 1,000 purchase records on SQLite):

* the writer alone;
* the writer while another thread spins in Python (the reactor in a burst), and how far
  that thread got;
* the same two with the way the writer worked before, in the same run: PyNaCl's
  signature (which lets go of the interpreter) and one insert a row (``executemany``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PAYLOAD = {"actor": {"name": "hall-17", "role": "hall", "request": "hall-17.123"}, "game_id": "bench-1",
           "decision": 0, "hall_id": "hall-17", "request_id": "hall-17.123", "terminal_id": "T123",
           "player_ref": "p.123", "card_count": 28, "stake_pct": 100, "first_card": 12345, "stake_cents": 100,
           "amount_cents": 2800, "received_ms": 1_765_000_000_000}


def _journal(folder: Path, before: bool) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from nacl.signing import SigningKey
    from sqlalchemy import insert

    from protocol.chain import canonical_json
    from server_kit.db.database import create
    from server_kit.journal import table
    from server_kit.journal.sql import Journal
    from server_kit.journal.table import JournalBase

    engine = create(f"sqlite:///{folder / 'journal.sqlite3'}")
    JournalBase.metadata.create_all(engine)
    journal = Journal(engine, Ed25519PrivateKey.generate(), folder / "journal.head")
    if before:
        releasing = SigningKey.generate()
        journal._sign = lambda data: releasing.sign(data).signature  # type: ignore[method-assign]

        def one_a_row(engine: Any, records: list[Any], extra: Any = None, guard: Any = None) -> None:
            with engine.begin() as connection:
                connection.execute(insert(table._TABLE), [
                    {"seq": r.seq, "time_ms": r.time_ms, "type": r.type, "payload": canonical_json(r.payload).decode(),
                     "prev": r.prev, "hash": r.hash, "signature": r.signature} for r in records])

        journal._append = one_a_row
    return journal


def _batches(count: int) -> list[list[Any]]:
    from protocol.chain import seal

    previous, batches = None, []
    for start in range(0, count, 1000):
        batch = []
        for decision in range(start, min(count, start + 1000)):
            previous = seal(None, previous, 1_765_000_000_000, "central_purchase_confirmed",
                            dict(PAYLOAD, decision=decision))
            batch.append(previous)
        batches.append(batch)
    return batches


def _run(journal: Any, batches: list[list[Any]], seconds: float, busy: bool) -> tuple[float, float]:
    """Records committed a second, and the busy thread's loops a second (0 when alone)."""
    from server_kit.journal import table

    committed, loops = [0], [0]
    stop = time.perf_counter() + seconds
    append: Callable[..., None] = getattr(journal, "_append", table.append)
    saved = table.append
    table.append = append  # type: ignore[assignment]

    def writer() -> None:
        for batch in batches:
            if time.perf_counter() > stop:
                break
            journal.commit(batch)
            committed[0] += len(batch)

    try:
        started = time.perf_counter()
        thread = threading.Thread(target=writer)
        thread.start()
        while busy and time.perf_counter() < stop:
            sum(i * i for i in range(200))
            loops[0] += 1
        thread.join()
        elapsed = time.perf_counter() - started
    finally:
        table.append = saved  # type: ignore[assignment]
    return committed[0] / elapsed, loops[0] / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    for before in (False, True):
        label = "before (PyNaCl lets go of the interpreter, one insert a row)" if before else \
            "now (signed with the interpreter held, statements of rows)"
        results = []
        for busy in (False, True):
            with tempfile.TemporaryDirectory(prefix="bench-writer-") as scratch:
                journal = _journal(Path(scratch), before)
                results.append(_run(journal, _batches(args.records), args.seconds, busy))
        (alone, _), (shared, loops) = results
        print(f"{label}:\n  alone {alone:,.0f} records/s; beside a busy thread {shared:,.0f} records/s "
              f"({shared / alone:.0%} of alone; the busy thread {loops:,.0f} loops/s)")


if __name__ == "__main__":
    main()

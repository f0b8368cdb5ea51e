"""Strip generation and library building: strips/s on one core, and a 1M-card library.

Run: ``.venv/bin/python bench/bench_cards.py [--cards 1000000]``

Prints the exact-uniform sampler's strips/s (pinned to one core) at several batch
sizes, then builds a library the way ``bingo cards new-library`` does - sample,
check for duplicates against the registered cards, compute the security codes, write
the card file, store it in a fresh SQLite database - and prints each stage's seconds,
cards/s and the peak RSS.  Goals: 40,000 strips/s on one core; a 1,000,000-card
library generated, checked and stored in under 30 s with under 1 GB peak memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hall_server.store import cards as store  # noqa: E402
from hall_server.store.database import open_database  # noqa: E402
from protocol import strips  # noqa: E402
from protocol.cardfile import card_codes, write_card_file  # noqa: E402
from protocol.library import build_distinct_strips  # noqa: E402

TARGET_STRIPS_PER_SECOND = 40_000


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=1_000_000)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    started = time.perf_counter()
    strips.count_table()
    print(f"tables built in {time.perf_counter() - started:.2f} s (once per process)")
    for batch in (1_000, 10_000, 50_000):
        rounds = max(1, 100_000 // batch)
        started = time.perf_counter()
        for _ in range(rounds):
            strips.sample_strips(batch)
        rate = rounds * batch / (time.perf_counter() - started)
        print(
            f"uniform strips, batch {batch:>6}: {rate:>9,.0f} strips/s on one core "
            f"({rate / TARGET_STRIPS_PER_SECOND:.2f}x the 40,000 goal)"
        )

    count = args.cards - args.cards % 6
    with tempfile.TemporaryDirectory() as folder:
        engine = open_database(f"sqlite:///{folder}/bench.sqlite3")
        total = time.perf_counter()
        started = time.perf_counter()
        cells = build_distinct_strips(count // 6, store.registered_prints(engine))
        generated = time.perf_counter() - started
        ids = [store.library_card_id("B1", k) for k in range(1, count + 1)]
        started = time.perf_counter()
        codes = card_codes(os.urandom(32), ids, cells)
        coded = time.perf_counter() - started
        started = time.perf_counter()
        with open(f"{folder}/lib.csv", "w", newline="") as stream:
            write_card_file(stream, ids, [store.library_strip_label("B1", k) for k in range(1, count + 1)], cells, codes)
        written = time.perf_counter() - started
        started = time.perf_counter()
        store.add_library(engine, "B1", "B1", cells, codes)
        stored = time.perf_counter() - started
        total = time.perf_counter() - total
    print(f"library of {count:,} cards:")
    print(f"  generate + duplicate check  {generated:6.2f} s  ({count / generated:,.0f} cards/s)")
    print(f"  security codes              {coded:6.2f} s")
    print(f"  card file                   {written:6.2f} s")
    print(f"  store (SQLite)              {stored:6.2f} s")
    print(f"  total                       {total:6.2f} s  (goal: under 30 s)")
    print(f"peak RSS {peak_rss_mb():,.0f} MB (goal: under 1,024 MB)")


if __name__ == "__main__":
    main()

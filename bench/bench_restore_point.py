"""What the core's restore point costs a hall: taking it, holding it, and a failed commit put back.

    .venv/bin/python bench/bench_restore_point.py [--records 100000] [--folder DIR]

Builds (or reuses, with ``--folder``) a hall folder whose journal holds ``--records``
records of days of play (``bench/bench_restart.py``'s generator), starts the hall on it
(``build_hall``), then measures on that state:

* taking a restore point (every module's in-memory savepoint or checkpoint, on the reactor
  thread: what the core does every 10,000 committed records, at the end of a recovery and
  with each checkpoint, whose state it reuses);
* the memory the restore point holds (tracemalloc: what taking it allocated and kept);
* putting the state back after a failed commit with 0 and with 10,000 records committed
  since the restore point (each module restored, the records folded again).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_restart import generate, prepare, start  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bingo-restore-point-"))
    try:
        config = folder / "hall.toml"
        if not config.exists():
            prepare(folder)
        count = generate(config, max(1, args.records - 10_000))
        hall = start(config)
        core = hall.core
        print(f"hall of {count} records, started (the restore point taken at the end of its recovery)")

        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        began = time.perf_counter()
        core._set_restore_point()
        took = time.perf_counter() - began
        after = tracemalloc.take_snapshot()
        held = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
        tracemalloc.stop()
        print(f"taking the restore point: {took * 1000:.0f} ms on the reactor thread; it holds {held / 2**20:.1f} MB")

        began = time.perf_counter()
        core._roll_back([])
        print(f"a failed commit put back, 0 records since the restore point: {(time.perf_counter() - began) * 1000:.0f} ms")

        # More days of play, folded into the running hall as committed records after its restore point.
        total = generate(config, count + 10_000)
        folded = core.recover(after=core.seq)
        began = time.perf_counter()
        core._roll_back([])
        print(f"a failed commit put back, {folded} records since the restore point (folded again): "
              f"{(time.perf_counter() - began) * 1000:.0f} ms; the hall is at record {core.seq} of {total}")
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

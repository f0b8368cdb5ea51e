"""Video bingo figures: ``bingo vb rtp`` on a 3 x 5 and a 4 x 5 card, and plays per second.

Run: ``.venv/bin/python bench/bench_vb.py``

Prints, for the documented 3 x 5 (15 pattern cells, 2^15 subsets) and 4 x 5 (20 cells,
2^20 subsets) example paytables: the wall time of the whole ``bingo vb rtp FILE``
command (a fresh process: interpreter start, imports, parse, computation, output; the
start alone is shown by ``bingo --help``), and
the in-process time of the exact computation by each method (median of 5).  Then a
9 x 9 card (81 pattern cells) by the cell-by-cell programme.  Then the pure play's
rate on one core: ``VideoBingoGame.play`` with 1 and 4 cards (``secrets.SystemRandom``,
the production source), and the batch evaluation the simulation uses (cards settled a
second).  Goals: the 3 x 5 return well under a second, the 4 x 5 in seconds.
"""

from __future__ import annotations

import json
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol.videobingo.paytable import load_paytable  # noqa: E402
from protocol.videobingo.play import VideoBingoGame  # noqa: E402
from protocol.videobingo.rtp import exact_return  # noqa: E402

EXAMPLES = ROOT / "docs" / "examples"
BINGO = Path(sys.executable).parent / "bingo"


def median_seconds(action, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def command_seconds(*args: str) -> float:
    def run() -> None:
        subprocess.run([BINGO, *args], check=False, capture_output=True)

    return median_seconds(run, repeat=3)


def nine_by_nine():
    cells = [[r, c] for r in range(9) for c in range(9)]
    patterns = [{"name": "full", "cells": cells, "pays": 1000}]
    patterns += [{"name": f"row {r}", "cells": [[r, c] for c in range(9)], "pays": 5} for r in range(9)]
    patterns += [{"name": f"column {c}", "cells": [[r, c] for r in range(9)], "pays": 5} for c in range(9)]
    patterns += [{"name": "diagonal", "cells": [[i, i] for i in range(9)], "pays": 7}]
    return load_paytable(json.dumps({
        "format": "bingo-vb-paytable/1", "name": "nine", "pool": 99, "balls": 60, "rows": 9,
        "columns": 9, "cards_max": 4, "min_rtp_bp": 8000, "patterns": patterns,
    }))


def main() -> None:
    print("bingo vb rtp")
    print(f"  {'(bingo --help)':20s} command {command_seconds('--help'):6.3f} s   (the CLI's own start)")
    for name, label in (("vb-classic-3x5", "3x5 (2^15 subsets)"), ("vb-grand-4x5", "4x5 (2^20 subsets)")):
        path = EXAMPLES / f"{name}.json"
        table = load_paytable(path.read_bytes())
        subsets = median_seconds(lambda: exact_return(table, "subsets"))
        cells = median_seconds(lambda: exact_return(table, "cells"))
        print(
            f"  {label:20s} command {command_seconds('vb', 'rtp', str(path)):6.3f} s   "
            f"computation: subsets {subsets * 1000:8.2f} ms, cell by cell {cells * 1000:8.2f} ms"
        )
    big = nine_by_nine()
    print(f"  {'9x9 (81 cells)':20s} computation: cell by cell {median_seconds(lambda: exact_return(big)) * 1000:8.2f} ms")

    print("pure play (one core)")
    game = VideoBingoGame(load_paytable((EXAMPLES / "vb-classic-3x5.json").read_bytes()))
    rng = secrets.SystemRandom()
    for count in (1, 4):
        cards = game.deal(count, rng)
        plays = 20_000
        seconds = median_seconds(lambda: [game.play(cards, rng) for _ in range(plays)], repeat=3)
        print(f"  play with {count} card{'s' if count > 1 else ' '}   {plays / seconds:10,.0f} plays/s")
    cards = np.array([game.deal(1, rng) for _ in range(100_000)])
    balls = np.array([game.draw(rng) for _ in range(100_000)])
    seconds = median_seconds(lambda: game.paid_patterns(game.hits(cards, balls).reshape(100_000, -1)))
    print(f"  batch evaluation  {100_000 / seconds:10,.0f} cards/s")


if __name__ == "__main__":
    main()

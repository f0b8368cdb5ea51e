"""Win detection figures: per-ball time at 100k, 1M and 10M cards, whole-game replay.

Run: ``.venv/bin/python bench/bench_wins.py`` (``--quick`` stops at 1M cards).

Each size runs in its own process, so that its peak RSS counts the cards, the index
and the counters, not the strip sampler.  Prints, for each size, the per-ball detection time of :class:`protocol.wins.WinDetector`
(median and p99 over every ball of each game, up to and including the bingo ball), the
index build time, the whole-game pass (:func:`protocol.wins.game_winners`) time, the
peak RSS of the process so far, and whether the per-ball detector's first line and
bingo agree with the whole-game pass.  The whole-game pass is itself compared with a
brute force on Python sets over the first 3,000 cards of each size.

Goals: per ball at most 0.5 ms at 100k cards, 2 ms at 1M and 25 ms at 10M with peak
memory under 2 GB; a whole 1M-card game replayed in under 150 ms.

Cards: 1,000,002 cards (166,667 strips) come from the exact uniform sampler
:func:`protocol.strips.sample_strips`.  Larger sizes tile those strips; each further
tile relabels every column's decade by its own random permutation and re-sorts each
card's column downwards.  That keeps every card valid and every strip holding 1..90
once (a permutation of a decade maps the strip's numbers onto themselves), at a
fraction of the sampler's cost, but the tiles are not independent uniform strips.
Draws are uniform random permutations of 1..90.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.cards import COLUMN_RANGES, COLUMNS, ROWS  # noqa: E402
from protocol.strips import sample_strips  # noqa: E402
from protocol.wins import NEVER, WinDetector, completion_balls, game_winners  # noqa: E402

BASE_CARDS = 1_000_002
BRUTE_CARDS = 3_000


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM).

    Not ``getrusage``'s ``ru_maxrss``: Linux carries that over from the parent across
    fork and exec, so a child would report the sampler's peak.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def relabelled(cards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``cards`` with each decade permuted at random and each column re-sorted downwards."""
    table = np.zeros(256, dtype=np.uint8)
    for lo, hi in COLUMN_RANGES:
        table[lo : hi + 1] = rng.permutation(np.arange(lo, hi + 1))
    out = table[cards]
    for column in range(COLUMNS):
        cells = out[:, column::COLUMNS]  # (n, 3) view: the column's three cells
        filled = cells != 0
        ascending = np.sort(np.where(filled, cells, 255), axis=1)  # numbers first
        rank = np.cumsum(filled, axis=1) - 1  # the k-th filled cell takes the k-th number
        cells[:] = np.where(filled, np.take_along_axis(ascending, rank.clip(0), axis=1), 0)
    return out


def make_cards(count: int, base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cards = np.empty((count, base.shape[1]), dtype=np.uint8)
    for start in range(0, count, len(base)):
        stop = min(count, start + len(base))
        tile = base if start == 0 else relabelled(base[: stop - start], rng)
        cards[start:stop] = tile[: stop - start]
    return cards


def brute_first_balls(cards: np.ndarray, draw: np.ndarray) -> tuple[list[int], list[int]]:
    position = {int(n): k for k, n in enumerate(draw, start=1)}
    line, bingo = [], []
    for cells in cards:
        rows = [max(position[int(n)] for n in cells[r * COLUMNS : (r + 1) * COLUMNS] if n)
                for r in range(ROWS)]
        line.append(min(rows))
        bingo.append(max(rows))
    return line, bingo


Completion = tuple[int, np.ndarray] | None  # (ball count, card indices), None: not seen


def play(detector: WinDetector, draw: np.ndarray) -> tuple[list[float], Completion, Completion]:
    """Draw until the first bingo; per-ball seconds, and the first line and bingo seen."""
    times: list[float] = []
    line: Completion = None
    bingo: Completion = None
    for k, number in enumerate(draw.tolist(), start=1):
        t0 = time.perf_counter()
        result = detector.ball_drawn(number)
        times.append(time.perf_counter() - t0)
        if line is None and len(result.rows):
            line = (k, result.rows)
        if len(result.cards):
            bingo = (k, result.cards)
            break
    return times, line, bingo


def bench(count: int, base: np.ndarray, rng: np.random.Generator, games: int) -> bool:
    cards = make_cards(count, base, rng)
    t0 = time.perf_counter()
    detector = WinDetector(cards)
    build = time.perf_counter() - t0

    times: list[float] = []
    agree = True
    pass_times: list[float] = []
    for _ in range(games):
        draw = rng.permutation(np.arange(1, 91, dtype=np.uint8))
        ball_times, line, bingo = play(detector, draw)
        times.extend(ball_times)
        while detector.drawn:  # rewind by ball recalls so the index is reused
            detector.last_ball_voided()
        t0 = time.perf_counter()
        winners = game_winners(cards, draw)
        pass_times.append(time.perf_counter() - t0)
        for seen, prize in ((line, winners.line), (bingo, winners.bingo)):
            agree &= seen is not None and (seen[0], seen[1].tolist()) == (
                prize.ball, prize.cards.tolist())
        sample = cards[:BRUTE_CARDS]
        balls = completion_balls(sample, draw)
        brute_line, brute_bingo = brute_first_balls(sample, draw)
        agree &= balls.line.tolist() == brute_line and balls.bingo.tolist() == brute_bingo
        agree &= bool((balls.bingo != NEVER).all())

    ms = np.array(times) * 1e3
    print(
        f"{count:>10,} cards | build {build:6.2f} s | per ball median {np.median(ms):7.3f} ms"
        f"  p99 {np.percentile(ms, 99):7.3f} ms  ({len(ms)} balls, {games} games) | "
        f"whole-game pass median {np.median(pass_times) * 1e3:7.1f} ms | "
        f"peak RSS {peak_rss_mb():7.0f} MB | agreement {'yes' if agree else 'NO'}",
        flush=True,
    )
    return agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 1M cards")
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)  # one size, in a child
    parser.add_argument("--games", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--base", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.size:
        base = np.load(args.base)
        return 0 if bench(args.size, base, np.random.default_rng(), args.games) else 1

    t0 = time.perf_counter()
    base = sample_strips(BASE_CARDS // 6).reshape(-1, ROWS * COLUMNS)
    print(f"sampled {len(base):,} cards in {time.perf_counter() - t0:.1f} s", flush=True)
    sizes = [(100_000, 20), (1_000_000, 5)] + ([] if args.quick else [(10_000_000, 2)])
    status = 0
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "cards.npy"
        np.save(path, base)
        del base
        for count, games in sizes:
            child = [sys.executable, __file__, "--size", str(count), "--games", str(games),
                     "--base", str(path)]
            status |= subprocess.run(child, check=False).returncode
    return status


if __name__ == "__main__":
    raise SystemExit(main())

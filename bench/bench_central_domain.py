"""The central server's domain at network scale: purchase decisions and winners per ball.

Run: ``.venv/bin/python bench/bench_central_domain.py`` (``--cards 100000`` for a
quick run).

One network game of 1,000,002 virtual cards (166,667 strips from
:func:`protocol.strips.sample_strips`) across 100 halls of 350 terminals, played
through :class:`central_server.domain.game.CentralGame` with no I/O:

* **decisions/s**: purchase requests of 1-6 cards at random stakes, each decided,
  assigned and applied as an event (``request_purchase``), until the series is sold;
  then the same requests again, resent (a repeat answers the first decision);
* **close**: the sale's close, which builds the vectorised detector over every card;
* **per ball**: the time of ``ball_drawn`` - the ball's event, marking every card,
  finding every pattern's winners among the cards in play, splitting the prizes and
  making the winners' events - median, p99 and max over every ball of three draws,
  with the line and the bingo only and with two extra patterns;
* **replay**: rebuilding the whole game from its journal (``CentralGame.replay``).

Goal: winners per ball across 1,000,000 cards in under 2 ms.  The figures
are the domain's alone: journaling, the network and the halls come on top.  Per-ball
times are printed as wall time and as the thread's CPU time: on a shared machine the
wall time's tail is the scheduler's (another process holding the core), the CPU time
is what the work costs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from central_server.domain.config import NetworkGameConfig, PrizeShare, library_digest  # noqa: E402
from central_server.domain.game import CentralGame, PurchaseRequest  # noqa: E402
from protocol.patterns import BINGO, FOUR_CORNERS, LINE, TWO_LINES  # noqa: E402
from protocol.strips import sample_strips  # noqa: E402

HALLS = tuple(f"hall-{n:03d}" for n in range(1, 101))
TERMINALS = 350


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_config(layouts: np.ndarray, patterns: tuple, game_id: str) -> NetworkGameConfig:
    return NetworkGameConfig(
        game_id=game_id, halls=HALLS, price_cents=100, max_price_cents=100,
        prizes=tuple(PrizeShare(p, bp) for p, bp in patterns), sale_window_ms=60_000,
        ball_interval_ms=2_000, series_label="V1", series_cards=len(layouts),
        library_digest=library_digest(layouts),
    )  # fmt: skip


def requests(cards: int, rng: random.Random) -> list[PurchaseRequest]:
    """Enough requests to sell ``cards`` cards, spread over every hall and terminal."""
    out, total, n = [], 0, 0
    while total < cards:
        count = rng.randint(1, 6)
        hall = HALLS[n % len(HALLS)]
        terminal = f"T{(n // len(HALLS)) % TERMINALS:03d}"
        out.append(PurchaseRequest(f"{hall}-{n}", hall, terminal, f"p{n % 997}", count, rng.choice((100, 100, 50, 25))))
        total += count
        n += 1
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def play(
    layouts: np.ndarray, patterns: tuple, game_id: str, seed: int, decisions: bool
) -> tuple[list[float], list[float], CentralGame, list]:
    rng = random.Random(seed)
    config = make_config(layouts, patterns, game_id)
    game, events = CentralGame.schedule(config, layouts)
    events += game.open_sale(0)
    asks = requests(len(layouts), rng)
    start = time.perf_counter()
    for request in asks:
        events += game.request_purchase(request, from_hall=request.hall_id, now_ms=1_000).events
    elapsed = time.perf_counter() - start
    if decisions:
        print(f"  purchase decisions: {len(asks):,} requests for {game.cards_assigned:,} cards in {elapsed:.2f} s "
              f"= {len(asks) / elapsed:,.0f} decisions/s")  # fmt: skip
        start = time.perf_counter()
        for request in asks[:50_000]:
            game.request_purchase(request, from_hall=request.hall_id, now_ms=1_000)
        again = time.perf_counter() - start
        print(f"  the same requests resent: {min(50_000, len(asks)) / again:,.0f} answers/s (first decision, no event)")
        start = time.perf_counter()
        journal = [e.to_payload() for e in events]
        print(f"  events to their journal form: {len(journal) / (time.perf_counter() - start):,.0f} events/s")
    start = time.perf_counter()
    events += game.close_sale(60_000)
    print(f"  close of the sale (detector over {game.cards_in_play:,} cards): {time.perf_counter() - start:.2f} s")
    draw = rng.sample(range(1, 91), 90)
    wall: list[float] = []
    cpu: list[float] = []
    for ball in draw:
        if game.next_ball_due_ms is None:
            break
        now = game.next_ball_due_ms
        start, start_cpu = time.perf_counter(), time.thread_time()
        events += game.ball_drawn(ball, now)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return wall, cpu, game, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=1_000_002, help="cards in the game (a multiple of 6)")
    parser.add_argument("--draws", type=int, default=3, help="games played for the per-ball figures")
    args = parser.parse_args()
    strips = args.cards // 6
    start = time.perf_counter()
    layouts = sample_strips(strips).reshape(-1, 27)
    print(f"{len(layouts):,} cards sampled in {time.perf_counter() - start:.1f} s; "
          f"{len(HALLS)} halls x {TERMINALS} terminals")  # fmt: skip

    for label, patterns in (
        ("line and bingo", ((LINE, 2000), (BINGO, 5000))),
        ("line, two lines, four corners, bingo", ((LINE, 1500), (TWO_LINES, 1000), (FOUR_CORNERS, 500), (BINGO, 4000))),
    ):
        print(f"{label}:")
        walls: list[float] = []
        cpus: list[float] = []
        for n in range(args.draws):
            first = n == 0 and label == "line and bingo"
            wall, cpu, game, events = play(layouts, patterns, f"bench-{n}", seed=n, decisions=first)
            walls += wall
            cpus += cpu
            prizes = ", ".join(f"{p.pattern} ball {p.ball_count} ({p.winner_count} cards)" for p in game.prizes.values())
            print(f"    game {n + 1}: {len(wall)} balls; {prizes}")
        for name, times in (("wall", walls), ("CPU", cpus)):
            print(f"  winners per ball over {len(layouts):,} cards, {name} time: median {statistics.median(times):.2f} ms, "
                  f"p99 {percentile(times, 0.99):.2f} ms, max {max(times):.2f} ms ({len(times)} balls)")  # fmt: skip
        start = time.perf_counter()
        rebuilt = CentralGame.replay(events, layouts)
        print(f"  replay of the last game's {len(events):,} events: {time.perf_counter() - start:.2f} s "
              f"(same state: {rebuilt.snapshot() == game.snapshot()})")  # fmt: skip
    print(f"peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()

"""Hall server figures: durable paper sales per second, and ball-to-screen latency.

Run: ``.venv/bin/python bench/bench_hall.py`` (``--screens N``, ``--sales N``).

Everything goes through a real ``bingo hall serve`` process on loopback over TLS, on its
embedded SQLite (WAL, one writer thread), the way a hall runs:

* **Paper sales.** A seller-caller's console WebSocket sends ``sell_cards`` for one card
  at a time; each answer comes only after the sale's records (``paper_cards_sold``,
  ``card_sold``, ``posting``) are committed (announce after commit).  Measured twice:
  one sale at a time (the latency a seller sees, p50/p99) and with 16 sales in flight
  (the throughput the server's one writer reaches).
* **Ball to screen.** With ``--screens`` WebSockets open (half signed-in consoles, half
  public information boards), the caller draws every ball of a game, one at a time;
  for each ball and each screen, the time from the draw request to the screen
  receiving the ball.  The commit sits inside that time: the server announces a ball
  only after its record is committed.  Also shown: the fan-out, from the first screen
  to the last for the same ball.
* **Baseline, same run, same disk.** Raw ``Journal.append`` of the same three records
  per transaction on a fresh database in this process: the most the journal alone can
  do, without TLS, WebSocket, JSON or the game's rules.  The ratios say what the
  server costs on top of its commits.

Figures vary with the disk (the commit waits on the WAL) and the CPU; the README keeps
one run's output.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from multiprocessing import Pipe, Process
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password  # noqa: E402
from hall_server.store.database import open_database  # noqa: E402
from server_kit.journal.sql import Journal  # noqa: E402
from tests.crash.wire import LiveSocket, board, console  # noqa: E402
from tests.web.conftest import ALL_BALLS, PASSWORD, HallProcess  # noqa: E402

IN_FLIGHT = 16


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.2f} ms"


class Caller:
    """Commands on one console socket, each answered before the next unless pipelined."""

    def __init__(self, socket: LiveSocket) -> None:
        self.socket = socket
        self.count = 0

    def send(self, command: str, **args: object) -> str:
        self.count += 1
        request_id = f"b{self.count}"
        self.socket.send({"id": request_id, "command": command, "args": args})
        return request_id

    def __call__(self, command: str, **args: object) -> dict:
        answer = self.socket.answer(self.send(command, **args), timeout=60)
        if not answer["ok"]:
            raise SystemExit(f"{command} refused: {answer['error']}")
        return answer


def raw_appends(folder: Path, count: int) -> list[float]:
    """Seconds per ``Journal.append`` of one one-card sale's three records, sequentially."""
    engine = open_database(f"sqlite:///{folder / 'raw.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "raw.head")
    actor = {"name": "sam", "role": "seller_caller"}
    times = []
    for n in range(1, count + 1):
        game = "2026-11-29-s1-g1"
        entries: list[tuple[str, dict[str, Any]]] = [
            ("paper_cards_sold", {"game_id": game, "series": 1001, "first": n, "last": n, "count": 1,
                                  "seller": "sam", "account": "cash:sam", "amount_cents": 100, "actor": actor}),
            ("card_sold", {"game_id": game, "series": 1001, "card_number": n, "price_cents": 100,
                           "stake_cents": 100, "account": "cash:sam", "terminal_id": None, "actor": actor}),
            ("posting", {"debits": [["cash:sam", 100]], "credits": [[f"stakes:{game}", 100]],
                         "reason": "sale:paper", "reference": {"game_id": game, "card": None, "event_seq": n},
                         "actor": actor}),
        ]
        start = time.perf_counter()
        journal.append(int(time.time() * 1000), entries)
        times.append(time.perf_counter() - start)
    engine.dispose()
    return times


def open_session(hall: HallProcess) -> dict[str, Caller]:
    staff = {name: Caller(console(hall, name)) for name in ("admin", "rosa", "sam")}
    staff["admin"]("run_verification", date="2026-11-29")
    staff["rosa"]("count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff["rosa"]("sign_session_opening")
    staff["admin"]("sign_session_opening")
    return staff


def bench_sales(sam: Caller, sequential: int, pipelined: int) -> tuple[list[float], float]:
    """Per-sale seconds one at a time, and sales per second with :data:`IN_FLIGHT` in flight."""
    sam("announce_sale", series=1001)
    latencies = []
    for card in range(1, sequential + 1):
        start = time.perf_counter()
        sam("sell_cards", series=1001, first=card, last=card)
        latencies.append(time.perf_counter() - start)
    cards = range(sequential + 1, sequential + pipelined + 1)
    pending: list[str] = []
    start = time.perf_counter()
    for card in cards:
        pending.append(sam.send("sell_cards", series=1001, first=card, last=card))
        if len(pending) >= IN_FLIGHT:
            answer = sam.socket.answer(pending.pop(0), timeout=60)
            assert answer["ok"], answer
    for request_id in pending:
        assert sam.socket.answer(request_id, timeout=60)["ok"]
    return latencies, pipelined / (time.perf_counter() - start)


def screen_worker(folder: Path, base: str, screens: int, first: int, link: Connection) -> None:
    """A process holding ``screens`` of the open screens; for each ball, when each showed it.

    The screens are spread over processes so that one client's parsing does not queue
    behind another's on one interpreter lock: what is measured is the server's delivery.
    """
    hall = HallProcess(folder)
    hall.base = base
    sockets = [console(hall, "rosa") if (first + k) % 2 == 0 else board(hall) for k in range(screens)]
    for socket in sockets:
        socket.snapshot()
    link.send("ready")
    while (count := link.recv()) is not None:
        link.send([shown_at(socket, count) for socket in sockets])
    for socket in sockets:
        socket.close()


def bench_balls(hall: HallProcess, sam: Caller, screens: int, processes: int = 5) -> tuple[list[float], list[float]]:
    """Draw request to each screen, and first screen to last, for every ball of a game."""
    links: list[Connection] = []
    workers: list[Process] = []
    for k in range(processes):
        ours, theirs = Pipe()
        share = screens // processes + (1 if k < screens % processes else 0)
        worker = Process(target=screen_worker, args=(hall.folder, hall.base, share, len(links) * 100, theirs))
        worker.start()
        links.append(ours)
        workers.append(worker)
    for link in links:
        assert link.recv() == "ready"
    to_screen: list[float] = []
    spread: list[float] = []
    for count in range(1, 91):
        for link in links:
            link.send(count)
        sent = sam.socket.send({"id": f"draw{count}", "command": "draw_ball", "args": {}})
        answer = sam.socket.answer(f"draw{count}", timeout=60)
        assert answer["ok"], answer
        arrivals = [at for link in links for at in link.recv()]  # time.monotonic: one clock for all
        to_screen += [at - sent for at in arrivals]
        spread.append(max(arrivals) - min(arrivals))
    for link in links:
        link.send(None)
    for worker in workers:
        worker.join(30)
    return to_screen, spread


def shown_at(socket: LiveSocket, count: int) -> float:
    """When ``socket`` first showed a picture with ``count`` balls."""

    def shown() -> float | None:
        at = None
        for received in reversed(socket.messages):  # ball counts only grow: no ball is voided here
            game = (received.message.get("view") or {}).get("game") or {}
            if len(game.get("balls") or ()) < count:
                break
            at = received.at
        return at

    socket.wait_for(lambda: shown() is not None, timeout=60)
    at = shown()
    assert at is not None
    return at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--screens", type=int, default=50, help="consoles and boards open (default 50)")
    parser.add_argument("--sales", type=int, default=600, help="one-card sales in all (at most 600; default 600)")
    options = parser.parse_args()
    sequential = min(200, options.sales // 3)
    folder = Path(tempfile.mkdtemp(prefix="bench-hall-"))
    try:
        home = folder / "hall"
        home.mkdir()
        staff_hashes = [(name, role, hash_password(PASSWORD)) for name, role in DEFAULT_STAFF]
        (home / "hall.toml").write_text(default_config_text("Bench hall", staff_hashes, port=0))
        hall = HallProcess(home).start(timeout=300)
        try:
            staff = open_session(hall)
            sam = staff.pop("sam")
            for other in staff.values():  # the seller's own screen is the only one during the sales
                other.socket.close()
            latencies, sales_per_s = bench_sales(sam, sequential, options.sales - sequential)
            rosa = Caller(console(hall, "rosa"))
            rosa("close_sale")
            rosa.socket.close()
            to_screen, spread = bench_balls(hall, sam, options.screens)
        finally:
            hall.stop()
        raw = raw_appends(folder, 300)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    raw_per_s = 1 / statistics.mean(raw)
    print("Durable paper sales through the real server (TLS WebSocket, SQLite WAL, answer after commit)")
    print(f"  one at a time:   {1 / statistics.mean(latencies):8.0f} sales/s   "
          f"p50 {ms(percentile(latencies, 0.5))}  p99 {ms(percentile(latencies, 0.99))}  ({sequential} sales)")
    print(f"  {IN_FLIGHT} in flight:    {sales_per_s:8.0f} sales/s   = {3 * sales_per_s:.0f} records/s "
          f"({options.sales - sequential} sales of 3 records)")
    print(f"  baseline, raw Journal.append of the same 3 records: {raw_per_s:8.0f} appends/s   "
          f"p50 {ms(percentile(raw, 0.5))}  p99 {ms(percentile(raw, 0.99))}")
    print(f"  server / raw journal: one at a time {1 / statistics.mean(latencies) / raw_per_s:.2f}, "
          f"{IN_FLIGHT} in flight {sales_per_s / raw_per_s:.2f}")
    print(f"Ball to screen, {options.screens} screens open ({(options.screens + 1) // 2} consoles, "
          f"{options.screens // 2} boards), 90 balls: {len(to_screen)} arrivals")
    print(f"  draw request -> shown:   p50 {ms(percentile(to_screen, 0.5))}  p99 {ms(percentile(to_screen, 0.99))}"
          f"  (the commit inside it: raw append p50 {ms(percentile(raw, 0.5))})")
    print(f"  first screen -> last:    p50 {ms(percentile(spread, 0.5))}  p99 {ms(percentile(spread, 0.99))}")


if __name__ == "__main__":
    main()

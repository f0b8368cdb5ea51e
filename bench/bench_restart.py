"""What a restart of a hall with a long journal costs: the whole replay against a checkpoint.

    .venv/bin/python bench/bench_restart.py [--records 1000000] [--folder DIR]

Builds a hall folder whose journal holds ``--records`` records of days of play: every
record is sealed and folded by the hall's own modules (sessions verified, counted and
signed; games sold in ranges by three sellers, drawn, claimed, paid, closed and
collected; a ball set replaced every 1,900 games), the records written to the journal
table in large transactions rather than one commit each.  Then it times the real
start, :func:`hall_server.tap.build_hall` on that folder, twice: with no checkpoint
(every record verified and replayed), and after the hall wrote its checkpoint at its
clean stop (the records under it checked by hash and link, those after it verified and
replayed, here none).  ``--folder``
keeps the folder (and reuses it when it already holds a journal).
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from twisted.internet import defer  # noqa: E402
from twisted.internet.testing import MemoryReactorClock  # noqa: E402

from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password, load_config  # noqa: E402
from hall_server.hall.session import CHECKS  # noqa: E402
from hall_server.store import cards as card_store  # noqa: E402
from hall_server.tap import HallServer, build_hall  # noqa: E402
from hall_server.web.demo_session import ADMIN, CASHIER, ROOM_CHIEF, WITNESSES, DemoSession  # noqa: E402
from protocol.chain import sign_head, signed  # noqa: E402
from server_kit.core import run_inline  # noqa: E402
from server_kit.journal import table  # noqa: E402
from server_kit.journal.sql import Journal, _write_head  # noqa: E402

#: The hall's clock at the first session: a plausible date.
START_S = 1_790_000_000
GAMES_PER_SESSION = 10
CARDS_PER_GAME = 120
#: Paper series registered for the days of play, of the whole card set each.
SERIES_FIRST = 2001
BATCH = 20_000


class BufferedJournal(Journal):
    """The SQL journal sealing as always, but writing its records in transactions of
    :data:`BATCH` (the bench's shortcut: one commit per command would take hours)."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(journal.engine, journal.key, journal.head)
        self.pending: list[Any] = []

    def commit(self, records: Any, extra: Any = None) -> Any:
        assert extra is None
        records = signed(self._sign, records)
        self.pending += records
        if records:
            self.last = records[-1]
        if len(self.pending) >= BATCH:
            self.flush()
        return records

    def flush(self) -> None:
        if self.pending:
            table.append(self.engine, self.pending)
            self.pending = []
            assert self.last is not None
            _write_head(self.head, sign_head(self.key, self.last))


class Day(DemoSession):
    """The demo's staff, giving their commands at once (no pace) on the inline core."""

    def wait(self, factor: float = 1.0) -> defer.Deferred[None]:
        return defer.succeed(None)


def prepare(folder: Path, strips: int = 100) -> Path:
    """A hall folder with its configuration: TLS off (the bench starts no listener)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "hall.toml"
    # Passwords nobody knows: the bench gives its commands to the core, signed in as nobody.
    unknown = hash_password(secrets.token_urlsafe(24))
    text = default_config_text("Bench hall", [(n, r, unknown) for n, r in DEFAULT_STAFF], port=0)
    text = text.replace("enabled = true", "enabled = false").replace("generate_strips = 100", f"generate_strips = {strips}")
    config.write_text(text)
    return config


def done(deferred: defer.Deferred[Any]) -> Any:
    outcome: list[Any] = []
    deferred.addBoth(outcome.append)
    assert outcome, "a command did not complete inline"
    if hasattr(outcome[0], "raiseException"):
        outcome[0].raiseException()
    return outcome[0]


def start(config: Path) -> HallServer:
    """The real start: :func:`build_hall` on the folder."""
    clock = MemoryReactorClock()
    clock.advance(START_S + 10**7)
    return build_hall(load_config(config), clock)


def generate(config: Path, records: int) -> int:
    """Play days in the hall at ``config`` until its journal holds ``records`` records; the count."""
    clock = MemoryReactorClock()
    clock.advance(START_S)
    hall = build_hall(load_config(config), clock)
    last = hall.core.journal.last
    if last is not None and last.time_ms // 1000 >= START_S:
        # More days on a journal already played: the hall's clock goes on from its last day.
        clock.advance(last.time_ms // 1000 - START_S + 86_400)
    engine = hall.core.journal.engine  # type: ignore[attr-defined]
    buffered = BufferedJournal(hall.core.journal)  # type: ignore[arg-type]
    hall.core.journal = buffered
    hall.core.run_blocking = run_inline
    hall.session.run_checks = run_inline
    # The pre-session verification is what bench_journal.py times; here every day passes it.
    hall.session.verifier = lambda now: dict.fromkeys(CHECKS)
    card_set = hall.config.card_set
    size = next(s for s in card_store.list_sets(engine) if s.name == card_set).size
    games_needed = records // 25 + 1  # a game journals some 50 records (a paper range is one); fewer with few claims
    series = [SERIES_FIRST + k for k in range(games_needed // (size // CARDS_PER_GAME) + 1)]
    known = {s.number for cs in card_store.list_sets(engine) for s in cs.series}
    for number in series:
        if number not in known:
            card_store.add_series(engine, card_set, number, 100, size)
    hall.games.catalog.reload()  # type: ignore[attr-defined]
    day = Day(hall.core, hall.view, clock, series, hall.config.desks[0], pace=0, cards_per_game=CARDS_PER_GAME)
    games = 0
    while buffered.last is None or buffered.last.seq < records:
        done(day.open_session())
        for _ in range(GAMES_PER_SESSION):
            # A sold-out series is put away, so the seller does not offer it again each game.
            day.series = [n for n in day.series if hall.games.state.last_sold.get(n, 0) + CARDS_PER_GAME <= size]
            if not done(day.play_game()):
                raise SystemExit("the bench ran out of paper series")
            games += 1
            if hall.session.ball_set_warning():
                done(day.command(ROOM_CHIEF, "replace_ball_set", new_set=f"set-{games}", reason="worn (R83.2)"))
        close_session(day, hall)
        clock.advance(86_400)
    buffered.flush()
    return buffered.last.seq


def close_session(day: Day, hall: HallServer) -> None:
    """The day's end: the desk reconciled against its drawer, the balls counted, both sign."""
    desk = hall.config.desks[0]
    counted = hall.ledger.balance(f"cash:{desk}")
    done(day.command(CASHIER, "reconcile_cash_desk", desk=desk, counted_cents=counted))
    done(day.command(ROOM_CHIEF, "count_balls", stage="closing", balls_present=list(range(1, 91)),
                     witnesses=WITNESSES))
    done(day.command(ROOM_CHIEF, "sign_session_closing"))
    done(day.command(ADMIN, "sign_session_closing"))


def timed_start(config: Path) -> tuple[float, HallServer]:
    began = time.perf_counter()
    hall = start(config)
    return time.perf_counter() - began, hall


def write_checkpoint(hall: HallServer) -> None:
    """The hall's own checkpoint writer, as at a clean stop (inline here)."""
    assert hall.checkpoints is not None
    hall.checkpoints.run_blocking = run_inline
    done(hall.checkpoints.write())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    scratch = None
    folder = args.folder
    if folder is None:
        scratch = tempfile.mkdtemp(prefix="bench-restart-")
        folder = Path(scratch)
    try:
        config = folder / "hall.toml"
        if not (folder / "hall.sqlite3").exists():
            prepare(folder, strips=1_000)
            began = time.perf_counter()
            count = generate(config, args.records)
            print(f"journal: {count:,} records generated in {time.perf_counter() - began:.0f} s", flush=True)
        shutil.rmtree(folder / "checkpoints", ignore_errors=True)
        full, hall = timed_start(config)
        print(f"restart, whole journal verified and replayed: {full:6.2f} s ({hall.core.seq:,} records)", flush=True)
        began = time.perf_counter()
        hall.core.checkpoint()
        copied = time.perf_counter() - began
        began = time.perf_counter()
        write_checkpoint(hall)
        written = time.perf_counter() - began
        size = sum(p.stat().st_size for p in (folder / "checkpoints").iterdir())
        print(f"checkpoint at record {hall.core.seq:,}: state copied on the reactor thread in {copied:.2f} s; "
              f"copied, compressed, signed and written in {written:.2f} s, {size / 1e6:.1f} MB", flush=True)
        quick, again = timed_start(config)
        print(f"restart from the checkpoint:                  {quick:6.2f} s (goal < 5 s)", flush=True)
        assert again.core.checkpoint() == hall.core.checkpoint(), "the restored hall differs from the replayed one"
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

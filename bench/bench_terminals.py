"""1,000 headless terminals on one hall server over loopback: the purchase burst and the balls.

    .venv/bin/python bench/bench_terminals.py [--terminals 1000] [--workers 2] [--balls 30] [--no-floor]

This process is the hall server: the real core on a SQLite journal (WAL, one writer
thread, every record signed), the game, cashier and virtual-card modules and the terminal
gateway, serving ``ws://127.0.0.1:<port>/kiosk/ws``.  The terminals are
:class:`terminals.client.TerminalClient` objects in ``--workers`` child processes (this
same file with ``--worker``), so the server's reactor does only the server's work.

Measured:

* **purchase burst** - every terminal sends one ``buy`` (2 cards) at the same moment,
  just before the sale window closes; from the first request sent to the last
  ``bought`` received, every purchase committed (durable) to the journal first.
  Goal: the whole burst confirmed within 2 s.
* **ball to terminal** - for each ball drawn, from the moment its record is committed
  (the core's observer hears of it) to the moment each terminal has parsed the ``ball``
  message; p50, p99 and max over all terminals and balls.  Goal: p99 within 100 ms.

Before the hall, the same terminals in the same workers make the same burst against the
floor (``bench/floor.py``: the same WebSocket, each purchase one row in a group commit on
SQLite, no rules, no signatures), and the burst's ``ratio to floor`` is printed.

Setting up a thousand accounts is not measured and takes a shortcut: the accounts are
opened with one PIN hash computed once, and the PIN check remembers its answer for that
hash, because scrypt (50 ms a check by design) would otherwise dominate the setup.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generator

from twisted.internet import defer, protocol

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SALE_SECONDS = 600
CARDS_EACH = 2
PIN = "4821"


# --- A worker: many terminals in one process ----------------------------------------------


def worker(url: str, credentials: list[dict[str, str]]) -> None:
    """Connect, say hello, sign in; then on ``buy`` buy and report; report every ball's arrival."""
    from twisted.internet import reactor, stdio
    from twisted.logger import globalLogBeginner, textFileLogObserver
    from twisted.protocols.basic import LineReceiver

    globalLogBeginner.beginLoggingTo([textFileLogObserver(sys.stderr)], redirectStandardIO=False)

    from terminals.client import TerminalClient, connect

    clients: list[TerminalClient] = []

    def out(message: dict[str, Any]) -> None:
        # Through the stdio transport: StandardIO made stdout non-blocking, so a big report
        # written with sys.stdout would be cut short.
        commands.transport.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]

    @defer.inlineCallbacks
    def start():  # type: ignore[no-untyped-def]
        for credential in credentials:
            client = TerminalClient(credential["terminal"], credential["token"], clock=time.time)
            yield connect(reactor, url, client)
            yield client.hello()
            yield client.sign_in(credential["account"], PIN)
            clients.append(client)
        out({"ready": len(clients)})

    @defer.inlineCallbacks
    def buy_all():  # type: ignore[no-untyped-def]
        sent = time.time()
        answers = [client.buy(CARDS_EACH) for client in clients]
        done = []
        for answer in answers:
            answer.addCallback(lambda _: done.append(time.time()))
        results = yield defer.DeferredList(answers, consumeErrors=True)
        refused = sum(1 for ok, _ in results if not ok)
        out({"bought": len(done), "refused": refused, "sent": sent, "last": max(done) if done else sent})

    class Commands(LineReceiver):
        delimiter = b"\n"

        def lineReceived(self, line: bytes) -> None:
            command = line.decode().strip()
            if command == "buy":
                buy_all()
            elif command == "report":
                out({"arrivals": [[ball, at] for client in clients for ball, _, at in client.ball_arrivals]})
            elif command == "stop":
                reactor.stop()  # type: ignore[attr-defined]

    commands = Commands()
    stdio.StandardIO(commands)
    reactor.callWhenRunning(start)  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]


# --- The workers, the burst and the floor's ---------------------------------------------------


class Worker(protocol.ProcessProtocol):
    """A child process of terminals: commands as lines in, one JSON answer line out per command."""

    def __init__(self, reactor: Any, spec: Path) -> None:
        self.buffer = b""
        self.waiting: list[defer.Deferred[dict[str, Any]]] = []
        self.ended: defer.Deferred[None] = defer.Deferred()
        reactor.spawnProcess(self, sys.executable, [sys.executable, __file__, "--worker", str(spec)],
                             env=os.environ.copy(), childFDs={0: "w", 1: "r", 2: 2})

    def answer(self) -> defer.Deferred[dict[str, Any]]:
        waiting: defer.Deferred[dict[str, Any]] = defer.Deferred()
        self.waiting.append(waiting)
        return waiting

    def ask(self, command: str) -> defer.Deferred[dict[str, Any]]:
        answer = self.answer()
        self.transport.write(command.encode() + b"\n")  # type: ignore[union-attr]
        return answer

    def outReceived(self, data: bytes) -> None:
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.waiting.pop(0).callback(json.loads(line))

    def processEnded(self, reason: Any) -> None:
        if self.waiting:  # it ended with a question unanswered: say so rather than wait for ever
            print(f"a worker ended early: {reason.value}", file=sys.stderr)
            for waiting in self.waiting:
                waiting.errback(reason)
            self.waiting = []
        self.ended.callback(None)

    def stop(self) -> defer.Deferred[None]:
        self.transport.write(b"stop\n")  # type: ignore[union-attr]
        return self.ended


def start_workers(reactor: Any, folder: Path, name: str, url: str, credentials: list[dict[str, str]],
                  worker_count: int) -> list[Worker]:
    """``worker_count`` workers sharing the terminals of ``credentials``, on ``url``."""
    share = (len(credentials) + worker_count - 1) // worker_count
    workers = []
    for w in range(worker_count):
        spec = folder / f"{name}-worker-{w}.json"
        spec.write_text(json.dumps({"url": url, "credentials": credentials[w * share:(w + 1) * share]}))
        workers.append(Worker(reactor, spec))
    return workers


@dataclass(frozen=True)
class Burst:
    """Every terminal's purchase at once: how many were confirmed and refused, first sent to last answered."""

    bought: int
    refused: int
    span: float


@defer.inlineCallbacks
def burst(workers: list[Worker]) -> Generator[defer.Deferred[Any], Any, Burst]:
    """Every terminal of ``workers`` buys at the same moment."""
    bursts = yield defer.gatherResults([w.ask("buy") for w in workers])
    span = max(b["last"] for b in bursts) - min(b["sent"] for b in bursts)
    return Burst(sum(b["bought"] for b in bursts), sum(b["refused"] for b in bursts), span)


@defer.inlineCallbacks
def floor_burst(reactor: Any, folder: Path, count: int,
                worker_count: int) -> Generator[defer.Deferred[Any], Any, tuple[Burst, int, int]]:
    """The same burst from as many terminals in as many workers against the floor: it, its rows and commits."""
    from floor import GroupCommit, TerminalFloor, listen

    rows = GroupCommit(folder / "floor", reactor)
    rows.start()
    port, url = listen(reactor, rows, TerminalFloor)
    credentials = [{"terminal": f"T{i + 1}", "token": "floor", "account": f"{i + 1:012d}"} for i in range(count)]
    workers = start_workers(reactor, folder, "floor", url, credentials, worker_count)
    try:
        yield defer.gatherResults([w.answer() for w in workers])
        rows_before, commits_before = rows.rows, rows.commits
        done = yield burst(workers)
        return done, rows.rows - rows_before, rows.commits - commits_before
    finally:
        yield defer.gatherResults([w.stop() for w in workers])
        yield defer.maybeDeferred(port.stopListening)
        rows.stop()


def burst_line(done: Burst) -> str:
    return (f"{done.bought} purchases ({done.bought * CARDS_EACH} cards, {done.refused} refused) confirmed in "
            f"{done.span * 1000:.0f} ms = {done.bought / done.span:.0f} purchases/s")


# --- The server and the run ----------------------------------------------------------------


def raise_file_limit() -> None:
    """A thousand sockets need more than the usual 1,024 descriptors: take the hard limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main() -> None:
    raise_file_limit()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--terminals", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--balls", type=int, default=30)
    parser.add_argument("--no-floor", action="store_true", help="skip the floor's burst (bench/floor.py)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(Path(args.worker).read_text())
        worker(spec["url"], spec["credentials"])
        return
    serve_and_measure(args.terminals, args.workers, args.balls, not args.no_floor)


def serve_and_measure(count: int, worker_count: int, ball_count: int, with_floor: bool) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from twisted.internet import reactor, task
    from twisted.internet.threads import deferToThread
    from twisted.logger import globalLogBeginner, textFileLogObserver
    from twisted.python.threadpool import ThreadPool
    from twisted.web.server import Site

    from hall_server.hall.admission import AdmissionModule
    from hall_server.hall.cashier import CashierModule, hash_pin, luhn_check_digit, pin_matches
    from hall_server.hall.catalog import FakeCardCatalog
    from hall_server.hall.games import GamesModule
    from hall_server.hall.ledger import LedgerModule, posting_records
    from hall_server.hall.pins import PinGuard
    from hall_server.hall.roles import Role
    from hall_server.hall.session import CHECKS, SessionModule
    from hall_server.hall.virtual import VirtualLibrary, VirtualModule
    from hall_server.store.database import open_database
    from hall_server.terminal_gateway.gateway import TerminalGateway
    from hall_server.terminal_gateway.resource import KioskResource
    from protocol.balls import RandomBallGenerator
    from protocol.cardfile import card_codes
    from protocol.game import Input
    from protocol.ledger import Posting
    from protocol.records.cashier import PlayerAccountOpened
    from protocol.library import build_distinct_strips
    from protocol.settlement import PrizeRules
    from protocol.sale import Series
    from server_kit import collector
    from server_kit.core import Actor, CommandCore, thread_pool_runner
    from server_kit.journal.sql import Journal

    globalLogBeginner.beginLoggingTo([textFileLogObserver(sys.stderr)], redirectStandardIO=False)  # failures are shown, not lost
    folder = Path(tempfile.mkdtemp(prefix="bench-terminals-"))
    engine = open_database(f"sqlite:///{folder / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head")
    writer = ThreadPool(minthreads=1, maxthreads=1, name="hall-db-writer")
    writer.start()
    core = CommandCore(journal, reactor, thread_pool_runner(reactor, writer))
    # Checks that pass: this bench measures terminals, not the pre-session verification.
    session, ledger = SessionModule(core, lambda now: dict.fromkeys(CHECKS)), LedgerModule(core)
    admission = AdmissionModule(core, [])
    cashier = CashierModule(core, ledger, admission, ["desk1"])
    paper = build_distinct_strips(10)
    virtual_cells = build_distinct_strips(count * CARDS_EACH // 6 + 10, None)
    catalog = FakeCardCatalog([Series(1, "paper", 100, 60)], {"paper": paper})
    games = GamesModule(core, session, ledger, catalog, RandomBallGenerator, PrizeRules(line_bp=1500, bingo_bp=5500),
                        desks=cashier)
    ids = [f"V1-{k}" for k in range(1, len(virtual_cells) + 1)]
    library = VirtualLibrary("V1", 9001, virtual_cells, card_codes(b"k" * 32, ids, virtual_cells))
    virtual = VirtualModule(core, games, ledger, cashier, library)
    stored_hash = hash_pin(PIN, b"bench-salt-00000")
    pin_answers: dict[tuple[str, str], bool] = {}

    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        stored = cashier.usable_account(number).pin_hash
        if (stored, pin) in pin_answers:
            return defer.succeed(pin_answers[(stored, pin)])
        checking = deferToThread(pin_matches, pin, stored)
        checking.addCallback(lambda good: pin_answers.setdefault((stored, pin), good))
        return checking

    pins = PinGuard(core, cashier)
    gateway = TerminalGateway(core, games, virtual, cashier, reactor, check_pin, "Bench hall", pins=pins)
    commits: dict[int, float] = {}

    def committed(record: Any) -> None:
        if record.type == "ball_drawn":
            commits[record.payload["ball"]] = time.time()

    core.observers.insert(0, committed)  # before the gateway: the moment of the commit
    # Plain WebSocket on loopback, terminals known by token: this measures the gateway, not TLS.
    kiosk = KioskResource(gateway, require_certificate=False)
    port = reactor.listenTCP(0, Site(kiosk), interface="127.0.0.1")  # type: ignore[attr-defined]
    url = f"ws://127.0.0.1:{port.getHost().port}/ws"

    chief, seller = Actor("rui", Role.ROOM_CHIEF), Actor("ana", Role.SELLER_CALLER)
    admin, cashier_actor = Actor("ines", Role.ADMINISTRATOR), Actor("eva", Role.CASHIER)

    @defer.inlineCallbacks
    def run(_: Any):  # type: ignore[no-untyped-def]
        collector.settle()  # the collector as a server's composition root sets it, once its state is built
        floor = (yield floor_burst(reactor, folder, count, worker_count)) if with_floor else None
        os.sync()  # the floor's writes reach the disk before the hall runs: neither pays the other's writeback
        yield session.run_verification(admin, "2026-12-01")
        yield session.count_balls(chief, "opening", list(range(1, 91)), ["a player"])
        yield session.sign_opening(admin)
        yield session.sign_opening(chief)
        yield cashier.open_desk(cashier_actor, "desk1", 100_000)
        # The shortcut: accounts opened straight into the journal with one precomputed hash.
        numbers = [f"{n:011d}" for n in range(10_000_000_000, 10_000_000_000 + count)]
        numbers = [n + luhn_check_digit(n) for n in numbers]
        opened = [PlayerAccountOpened(account=n, medium="ticket", visitor=i + 1, pin_hash=stored_hash)
                  for i, n in enumerate(numbers)]
        loads = posting_records([Posting.transfer(1_000, debit="cash:desk1", credit=f"player:{n}", reason="bench credit")
                                 for n in numbers])
        yield core.execute(cashier_actor, "load_credit", lambda now: [*opened, *loads])
        credentials = []
        for i, number in enumerate(numbers):
            token = (yield virtual.enrol_terminal(chief, f"T{i + 1}", "bench"))["token"]
            credentials.append({"terminal": f"T{i + 1}", "token": token, "account": number})
        yield games.announce_sale(seller, 1)
        yield virtual.open_sale(seller, SALE_SECONDS)

        started = time.time()
        workers = start_workers(reactor, folder, "hall", url, credentials, worker_count)
        ready = yield defer.gatherResults([w.answer() for w in workers])
        print(f"{sum(r['ready'] for r in ready)} terminals connected and signed in in {time.time() - started:.1f} s")

        collector.settle()
        records_before, commits_before = core.seq, core.commits
        done = yield burst(workers)
        print(f"purchase burst: {burst_line(done)}, {core.seq - records_before} journal records committed "
              f"(goal: within 2000 ms)")
        if floor is not None:
            floor_done, floor_rows, floor_commits = floor
            print(f"floor (bench/floor.py), the same {count} terminals in {worker_count} workers: "
                  f"{burst_line(floor_done)}, {floor_rows} rows in {floor_commits} commits")
            print(f"ratio to floor: burst {done.span / floor_done.span:.1f}x the floor's ({done.span * 1000:.0f} ms "
                  f"against {floor_done.span * 1000:.0f} ms; ours in {core.commits - commits_before} commits)")

        yield games.close_sale(chief)
        for _ in range(ball_count):
            if games.current is not None and games.current.machine.open_prizes:
                yield games.close_prize(seller)  # "Another card?" - none: the caller closes the prize (R85.6)
            if games.current is None or not games.current.machine.accepts(Input.BALL_DRAWN):
                break
            yield games.draw_ball(seller)
            yield task.deferLater(reactor, 0.1, lambda: None)
        yield task.deferLater(reactor, 0.5, lambda: None)
        reports = yield defer.gatherResults([w.ask("report") for w in workers])
        latencies = sorted(
            (at - commits[ball]) * 1000 for report in reports for ball, at in report["arrivals"] if ball in commits
        )
        if latencies:
            p50 = statistics.median(latencies)
            p99 = latencies[int(len(latencies) * 0.99) - 1]
            print(f"ball to terminal: {len(commits)} balls x {count} terminals = {len(latencies)} arrivals; "
                  f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms (goal: p99 within 100 ms)")
        yield defer.gatherResults([w.stop() for w in workers])
        port.stopListening()

    def measured(_: Any) -> defer.Deferred[None]:
        done = run(None)
        done.addBoth(lambda outcome: (writer.stop(), outcome)[1])  # the writer thread must not outlive the run
        return done

    task.react(measured)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

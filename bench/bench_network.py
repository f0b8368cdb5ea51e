"""The network game across real processes: the purchase burst, balls to halls and terminals, CPU seconds.

    .venv/bin/python bench/bench_network.py central [--halls 100] [--terminals 350] [--cards 1000000] [--processes 4]
    .venv/bin/python bench/bench_network.py halls [--halls 6] [--terminals 50]

**central** - the central server at full size: one real ``bingo central serve`` (SQLite,
every record signed) and ``--halls`` halls simulated in ``--processes`` child processes
(this file with ``--stand-in``).  Each simulated hall is what a hall server is to the
central server: an AMP connection in mutual TLS with its own ``server`` certificate,
``hello``, and then a purchase for each of its ``--terminals`` terminals, every one in
the last 5 s of the sale, ``--cards`` cards in all (28 or 29 a terminal at 35,000
terminals), relayed as a hall server relays them (``hall_server.network.relay``: at once
after a quiet spell, else gathered for up to ``--gather-ms`` into one ``buy_cards_batch``).
Each simulated hall keeps the sale's deadline at its gate as a hall server does (protocol
version 3): it says ``hello`` with its clock, takes no purchase after the deadline and
says ``gate_closed`` once it relayed the last one.
Measured: when the last purchase was answered, after the sale's close; how many were confirmed; each ball from its commit at the central server (the
record's time) to its arrival at every hall (p50, p99 of the last hall per ball, and
over every hall and ball); the CPU seconds of the central server (and of it from the
halls' link to the end, a purchase), its peak memory, and the simulated halls' CPU.
``--background-load N`` runs N processes that each burn a core for the whole run, as
another program on the same machine would.

**halls** - real hall servers and real terminals: ``bingo central simulate`` in its
burst mode (every terminal buys once in the last 5 s), ``--halls`` hall server
processes with ``--terminals`` terminals each in a few worker processes.  Measured:
every purchase answered after the close (at its hall's clock), a ball from the central
commit to every hall and to every terminal (p50, p99), and the CPU seconds of the
central server, the halls and the terminals, so the figures can be projected to 100
halls of 350 terminals (each hall on its own machine there).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hall_server.network.relay import GATHER_S  # noqa: E402
from simulation.network import Plan, figures, simulate  # noqa: E402
from simulation.processes import Child, free_port, wait_for  # noqa: E402

CENTRAL_UP = re.compile(rb"listening for halls on [0-9.]+:(\d+)")
BURST_MS = 5_000
SALE_MS = 20_000
BALL_MS = 2_000


# --- The simulated halls (child processes) -------------------------------------------------


def stand_in(spec_path: str) -> None:
    """Simulated halls in this process: connect, hello, buy in the burst, note every ball's arrival."""
    from twisted.internet import defer, reactor, task
    from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
    from twisted.protocols import amp

    from protocol import central_messages as m
    from server_kit.amp.commands import amp_commands
    from server_kit.pki import client_tls_options

    spec = json.loads(Path(spec_path).read_text())
    gather_s = float(spec["gather_s"])
    commands = amp_commands(m.MESSAGES)
    rng = random.Random(spec["seed"])
    report: dict[str, Any] = {"halls": {}}

    class Hall(amp.AMP):
        def __init__(self, hall_id: str, terminals: list[int]) -> None:
            super().__init__()
            self.hall_id = hall_id
            self.terminals = terminals  # cards each terminal buys
            self.balls: dict[int, float] = {}
            self.answers: list[tuple[float, str, float]] = []  # (answered at, status, sent at)
            self.sent_first: float | None = None
            self.closed: defer.Deferred[None] = defer.Deferred()
            self.buying = False
            self.waiting: list[dict[str, Any]] = []  # purchases not yet relayed
            self.gathering: Any = None  # the call that sends what is being gathered
            self.last_sent = float("-inf")

        def locateResponder(self, name: bytes) -> Any:
            message = m.MESSAGES.get(name.decode())
            if message is None or message.sender != "central":
                return None
            command = commands[message.name]

            def take(box: amp.AmpBox) -> Any:
                arguments = command.parseArguments(box, self)
                self.pushed(message.name, arguments)
                return defer.succeed(command.makeResponse({}, self))

            return take

        def pushed(self, name: str, arguments: dict[str, Any]) -> None:
            now = time.time()
            if name == "sale_opened" and not self.buying:
                self.buying = True
                # The burst's last 5 s before the deadline, on the central clock (this machine's), as a hall's
                # terminals count down to its gate: a push that came late shortens the burst, never moves it.
                start = arguments["closes_at_ms"] / 1000 - time.time() - BURST_MS / 1000
                for index, cards in enumerate(self.terminals):
                    reactor.callLater(max(0.0, start + rng.uniform(0, BURST_MS / 1000 - 0.3)), self.buy,
                                      arguments["game_id"], index, cards)
                # The gate: at the deadline (this machine's clock is the central server's), what waits is
                # sent, then gate_closed.
                gate_s = max(0.0, arguments["closes_at_ms"] / 1000 - time.time())
                reactor.callLater(gate_s, self.close_gate, arguments["game_id"], arguments["closes_at_ms"])
            elif name == "ball_drawn":
                self.balls.setdefault(arguments["ball_count"], now)
            elif name in ("game_closed", "game_not_played") and not self.closed.called:
                self.closed.callback(None)

        def buy(self, game_id: str, index: int, cards: int) -> None:
            """Relay a terminal's purchase as a hall server does (hall_server/network/relay.py): at once after
            a quiet spell, else gathered with those that follow for up to ``gather_s`` into one message."""
            if self.sent_first is None:
                self.sent_first = time.time()
            self.waiting.append({"request_id": f"{self.hall_id}.{index + 1}", "game_id": game_id,
                                 "hall_id": self.hall_id, "terminal_id": f"T{index + 1}", "player_ref": f"p.{index + 1}",
                                 "card_count": cards, "stake_pct": 100})
            now = reactor.seconds()
            if len(self.waiting) >= m.BATCH_PURCHASES or now - self.last_sent >= gather_s:
                self.send_waiting()
            elif self.gathering is None:
                self.gathering = reactor.callLater(self.last_sent + gather_s - now, self.send_waiting)

        def close_gate(self, game_id: str, closes_at_ms: int) -> None:
            self.send_waiting()
            self.callRemote(commands["gate_closed"], game_id=game_id, hall_id=self.hall_id,
                            purchases=len(self.terminals), closed_ms=closes_at_ms).addErrback(
                lambda failure: print(f"{self.hall_id}: gate_closed: {failure.getErrorMessage()}", flush=True))

        def send_waiting(self) -> None:
            if self.gathering is not None and self.gathering.active():
                self.gathering.cancel()
            self.gathering = None
            self.last_sent = reactor.seconds()
            while self.waiting:
                batch, self.waiting = self.waiting[:m.BATCH_PURCHASES], self.waiting[m.BATCH_PURCHASES:]
                if len(batch) == 1:
                    sent = self.callRemote(commands["buy_cards"], **batch[0]).addCallback(lambda answer: [answer])
                else:
                    sent = self.callRemote(commands["buy_cards_batch"], purchases=batch).addCallback(
                        lambda answer: answer["answers"])
                sent.addCallbacks(self.answered, self.failed, callbackArgs=(time.time(),),
                                  errbackArgs=(len(batch), time.time()))

        def answered(self, answers: list[dict[str, Any]], sent: float) -> None:
            now = time.time()
            for answer in answers:
                status = answer.get("status") or f"error {answer.get('error_code')}"
                self.answers.append((now, status if status == "confirmed" else f"{status} {answer.get('refusal_code')}",
                                     sent))

        def failed(self, failure: Any, count: int, sent: float) -> None:
            self.answers += [(time.time(), f"error: {failure.getErrorMessage()[:80]}", sent)] * count

    async def run() -> None:
        halls: list[Hall] = []
        for hall_id, terminals in spec["halls"].items():
            options = client_tls_options(Path(spec["pki"]), hall_id, "localhost")
            endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", spec["port"], options)
            hall = await connectProtocol(endpoint, Hall(hall_id, terminals))
            await hall.callRemote(commands["hello"], hall_id=hall_id, versions=list(m.SUPPORTED_VERSIONS),
                                  software="bench stand-in", clock_ms=int(time.time() * 1000))
            halls.append(hall)
        print("ready", flush=True)
        stop_after = spec["balls"]
        while not all(h.closed.called or len(h.balls) >= stop_after for h in halls):
            await task.deferLater(reactor, 0.2, lambda: None)
        await task.deferLater(reactor, 0.5, lambda: None)
        for hall in halls:
            report["halls"][hall.hall_id] = {"balls": hall.balls, "answers": hall.answers, "sent_first": hall.sent_first}
        Path(spec["out"]).write_text(json.dumps(report))
        reactor.stop()

    def failed(failure: Any) -> None:
        failure.printTraceback()
        reactor.stop()

    reactor.callWhenRunning(lambda: defer.ensureDeferred(run()).addErrback(failed))
    reactor.run()


# --- The central server at full size ----------------------------------------------------------


def _cpu_s(pid: int) -> float:
    """The CPU seconds process ``pid`` has used so far (user and system, from ``/proc``)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_mb(pid: int) -> float:
    """The most resident memory process ``pid`` has held (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def background_load(count: int) -> list[Any]:
    """``count`` processes that each burn a core until killed: another program on the same machine."""
    import subprocess

    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def central_bench(args: argparse.Namespace) -> dict[str, Any]:
    from server_kit.db.database import create
    from server_kit.journal import table
    from server_kit.pki import export_bundle, init_authority, issue_certificate

    home = Path(tempfile.mkdtemp(prefix="bench-network-"))
    pki, central_home = home / "pki", home / "central"
    central_home.mkdir(parents=True)
    init_authority(pki, "Bench network")
    issue_certificate(pki, "central", "central-bench")
    export_bundle(pki, "central-bench", central_home / "pki")
    halls = [f"hall-{i + 1}" for i in range(args.halls)]
    for hall in halls:
        issue_certificate(pki, "server", hall)
    terminals = args.halls * args.terminals
    base, extra = divmod(args.cards, terminals)
    if base + (1 if extra else 0) > 96:
        raise SystemExit(f"{args.cards} cards over {terminals} terminals is more than 96 a terminal (R83.7)")
    series = -(-args.cards // 6) * 6
    port = free_port()
    # The sale opens once the simulated halls have linked: the series is generated before the server listens.
    (central_home / "central.toml").write_text(f"""[central]
id = "central-bench"
home = "{central_home}"
pki_dir = "pki"
[listen]
interface = "127.0.0.1"
port = {port}
[database]
url = "sqlite:///{central_home / 'central.sqlite3'}"
[network]
halls = {json.dumps(halls)}
[[series]]
label = "V1"
cards = {series}
[[games]]
game_id = "bench-1"
price_cents = 100
max_price_cents = 100
sale_window_ms = {SALE_MS}
ball_interval_ms = {BALL_MS}
series_label = "V1"
opens_after_ms = {args.opens_after_s * 1000}
[[games.prizes]]
pattern = {{ name = "line", rows = 1 }}
basis_points = 2000
[[games.prizes]]
pattern = {{ name = "bingo", rows = 3 }}
basis_points = 5000
""")
    serve = ["serve", "--config", str(central_home / "central.toml")]
    code = "from central_server.cli import central; central()"
    if args.profile:  # the central server under cProfile: where its CPU goes, for the next optimisation
        code = (f"import cProfile, sys; sys.argv = ['central', *{serve!r}]; "
                f"cProfile.run({code!r}, {str(args.profile)!r})")
        serve = []
    central = Child("central", [sys.executable, "-c", code, *serve], central_home, up=CENTRAL_UP)
    print(f"central server: generating {series:,} cards and starting", flush=True)
    started = time.monotonic()
    central.start(timeout=900)
    print(f"central server listening after {time.monotonic() - started:.1f} s", flush=True)
    cards_of = [base + (1 if t < extra else 0) for t in range(terminals)]
    stand_ins: list[Child] = []
    for p in range(args.processes):
        mine = halls[p::args.processes]
        spec = {"seed": p, "port": port, "pki": str(pki), "balls": args.balls, "out": str(home / f"stand-in-{p}.json"),
                "gather_s": args.gather_ms / 1000,
                "halls": {h: cards_of[halls.index(h) * args.terminals:(halls.index(h) + 1) * args.terminals] for h in mine}}
        (home / f"stand-in-{p}.spec.json").write_text(json.dumps(spec))
        stand_ins.append(Child(f"stand-in-{p}", [sys.executable, __file__, "--stand-in", str(home / f"stand-in-{p}.spec.json")],
                               home, up=re.compile(rb"^ready$")).start(timeout=300))
    print(f"{args.halls} simulated halls linked in {args.processes} processes", flush=True)
    assert central.process is not None
    central_pid = central.process.pid
    cpu_linked = _cpu_s(central_pid)  # the series made, the halls linked: what follows is the sale and the draw
    peak_mb = 0.0
    try:
        for child in stand_ins:
            wait_for(lambda: not child.running, args.opens_after_s + SALE_MS / 1000 + args.balls * BALL_MS / 1000 + 600,
                     "the simulated halls to finish", interval=0.5)
            child.reap()
        cpu_sale = _cpu_s(central_pid) - cpu_linked
        peak_mb = _peak_mb(central_pid)
    finally:
        central.stop()
        for child in stand_ins:
            child.kill()
    engine = create(f"sqlite:///{central_home / 'central.sqlite3'}", create_folder=False)
    try:
        records = list(table.read(engine))
    finally:
        engine.dispose()
    closes = next(r.payload["closes_at_ms"] for r in records if r.type == "central_sale_opened") / 1000
    committed = {r.payload["ball_count"]: r.time_ms / 1000 for r in records if r.type == "central_ball_drawn"}
    confirmed = [r for r in records if r.type == "central_purchase_confirmed"]
    answers: list[tuple[float, str, float]] = []
    firsts: list[float] = []
    to_last_hall: list[float] = []
    to_each_hall: list[float] = []
    reports = [json.loads(Path(home / f"stand-in-{p}.json").read_text()) for p in range(args.processes)]
    arrivals: dict[int, list[float]] = {}
    for report in reports:
        for hall in report["halls"].values():
            answers += [tuple(a) for a in hall["answers"]]
            if hall["sent_first"]:
                firsts.append(hall["sent_first"])
            for count, at in hall["balls"].items():
                arrivals.setdefault(int(count), []).append(at)
    for count, times in arrivals.items():
        if count in committed:
            lags = [(t - committed[count]) * 1000 for t in times]
            to_each_hall += lags
            if len(times) == args.halls:
                to_last_hall.append(max(lags))
    statuses: dict[str, int] = {}
    for _, status, _ in answers:
        statuses[status] = statuses.get(status, 0) + 1
    # A purchase a simulated hall itself sent after the deadline (its process short of CPU) is late
    # whatever the central server does.
    sent_late = sum(1 for _, _, sent in answers if sent >= closes)
    return {
        "size": {"halls": args.halls, "terminals": terminals, "cards_asked": args.cards, "processes": args.processes},
        "burst": {"requests": len(answers), "answers": statuses, "cards_confirmed": sum(r.payload["card_count"] for r in confirmed),
                  "first_sent_before_close_s": round(closes - min(firsts), 2) if firsts else None,
                  "sent_after_close_by_the_halls": sent_late,
                  "last_answered_after_close_s": round(max(a for a, _, _ in answers) - closes, 2) if answers else None,
                  "answered_after_close_ms": figures([max(0.0, a - closes) * 1000 for a, _, _ in answers])},
        "ball_to_all_halls_ms": figures(to_last_hall),
        "ball_to_each_hall_ms": figures(to_each_hall),
        "cpu_s": {"central": round(central.cpu_s, 1), "central_from_the_link": round(cpu_sale, 1),
                  "central_per_purchase_ms": round(cpu_sale * 1000 / max(1, len(answers)), 3),
                  "simulated_halls": round(sum(c.cpu_s for c in stand_ins), 1)},
        "central_peak_mb": round(peak_mb),
        "background_load": args.background_load,
        "home": str(home),
    }


# --- Real halls and terminals -------------------------------------------------------------------


def halls_bench(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="bench-halls-")) / "sim"
    plan = Plan(home=home, halls=args.halls, terminals=args.terminals, games=1, mode="burst", burst_ms=BURST_MS,
                sale_ms=SALE_MS, ball_ms=BALL_MS, buys=(1, 1), quantities=(1, 6), stakes=(100,),
                workers=args.workers)
    summary = simulate(plan, progress=lambda line: print(line, flush=True))
    return {key: summary[key] for key in ("plan", "purchases", "cards_in_play", "balls", "timing_ms", "cpu_s", "wall_s", "ok")}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--stand-in":
        stand_in(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="which", required=True)
    central = sub.add_parser("central", help="the central server at full size, halls simulated")
    central.add_argument("--halls", type=int, default=100)
    central.add_argument("--terminals", type=int, default=350)
    central.add_argument("--cards", type=int, default=1_000_000)
    central.add_argument("--processes", type=int, default=4)
    central.add_argument("--balls", type=int, default=30, help="stop after this many balls")
    central.add_argument("--opens-after-s", type=int, default=30)
    central.add_argument("--gather-ms", type=int, default=int(GATHER_S * 1000),
                         help="while purchases keep coming, each simulated hall gathers them this long into one "
                              "message, as a hall server does (0: each goes alone)")
    central.add_argument("--profile", type=Path, default=None, help="write the central server's cProfile stats here")
    central.add_argument("--background-load", type=int, default=0,
                         help="processes that each burn a core for the whole run (another program on the machine)")
    halls = sub.add_parser("halls", help="real hall servers and terminals (bingo central simulate --burst)")
    halls.add_argument("--halls", type=int, default=6)
    halls.add_argument("--terminals", type=int, default=50)
    halls.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    load = background_load(getattr(args, "background_load", 0))
    try:
        result = central_bench(args) if args.which == "central" else halls_bench(args)
    finally:
        for burner in load:
            burner.kill()
            burner.wait()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""Power loss (GLI-11, R3.5.d): ``kill -9`` the real hall server while its video bingo
machine plays, start it again on the same folder, and hold the plays and the money to account.

Each of the two runs kills the hall ten times in a row (20 kills in all; each kill costs
one restart of a few seconds).  A run copies a provisioned hall folder (configuration with one two-station machine,
PKI, keys, the stations enrolled), starts ``bingo hall serve`` on loopback over TLS, and
lets both stations play on their WebSockets (``/vb/ws``, each with its terminal
certificate) as fast as the hall answers.  Once play number ``k`` (from the run's seed) is
handed over, SIGKILL follows a few milliseconds later, or at once.  Then, on the journal
the dead process left:

* every play a station was shown is in the journal as shown (cards, balls, credit after):
  nothing was shown that was not committed;
* every ``vb_play`` is followed by its postings and is paid once: its stake, its prize and
  its jackpots, folded independently from the postings, give every station's credit; the
  meters of the last record equal the sum of the records; the postings sum to zero;
* after the restart each station is shown its last committed play and its credit as the
  journal has it; each request the dead server never answered is sent again with its
  id: one that was committed is answered with the same play, charged nothing more; one
  that was not is played now, for the first time (it was never charged);
* the stations play on, and the hall's ``vb_reconcile`` finds the meters and the ledger
  in agreement; the journal verifies.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import threading
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

from hall_server.config import load_config
from server_kit.db.database import create
from server_kit.journal import table as table
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from terminals.vb_cash_device import CashDevice
from tests.crash.wire import LiveSocket, SocketClosed, console
from tests.support.waiting import WaitTimeout
from tests.videobingo.paytables import EXAMPLES
from tests.web.conftest import HallProcess

pytestmark = [pytest.mark.integration, pytest.mark.campaign]

#: Runs, each killing the hall this many times in a row: 20 kills in all.
RUNS = 2
KILLS = 10
MACHINE = "vb-1"
STATIONS = (1, 2)
#: Seconds a station waits for an answer before the server is taken for dead.
ANSWER_WAIT = 10.0
VIDEOBINGO = """
[videobingo]
seats = 20
room_zone = "bingo room"

[videobingo.superjackpot]
share_bp = 100
pattern = "top line"
balls = 12

[[videobingo.machine]]
id = "vb-1"
model = "classic"
paytable = "{paytable}"
credit_cents = 20
stations = 2
zone = "machines"
linked = true
jackpot_share_bp = 200
jackpot_pattern = "corners"
jackpot_balls = 12
"""


class _Certified:
    """The hall as one station's socket sees it: its port, and TLS with the station's certificate."""

    def __init__(self, hall: HallProcess, name: str) -> None:
        self.hall = hall
        self.name = name
        self.port = hall.port

    def tls_context(self) -> Any:
        return self.hall.tls_context(("machine", self.name))


class Station:
    """One station of the machine on its WebSocket."""

    def __init__(self, hall: HallProcess, station: int, token: str) -> None:
        self.station = station
        self.socket = LiveSocket(cast(HallProcess, _Certified(hall, f"{MACHINE}.{station}")), "/vb/ws")
        self.socket.send({"type": "hello", "protocol": "bingo-vb-machine/1", "machine": MACHINE,
                          "station": station, "token": token})
        self.welcome = self.wait(lambda m: m.get("type") in ("welcome", "error"))
        assert self.welcome["type"] == "welcome", self.welcome

    def wait(self, predicate: Any) -> dict[str, Any]:
        found: list[dict[str, Any]] = []

        def seen() -> bool:
            found[:] = [r.message for r in self.socket.messages if predicate(r.message)]
            return bool(found)

        self.socket.wait_for(seen, ANSWER_WAIT, "the hall's answer")
        return found[0]

    def answer(self, request: str) -> dict[str, Any]:
        return self.wait(lambda m: m.get("request") == request)

    def close(self) -> None:
        self.socket.close()


def journal_records(folder: Path) -> list[dict[str, Any]]:
    engine = create(load_config(folder / "hall.toml").database_url)
    try:
        return [{"seq": r.seq, "type": r.type, "payload": dict(r.payload)} for r in table.read(engine)]
    finally:
        engine.dispose()


def journal_verifies(folder: Path) -> int:
    engine = create(load_config(folder / "hall.toml").database_url)
    try:
        key = load_journal_key(folder / "keys" / "journal-signing.pem")
        return Journal(engine, key, head=folder / "journal.head").verify()
    finally:
        engine.dispose()


def balances(records: list[dict[str, Any]]) -> dict[str, int]:
    """Every account's balance (credit side positive) folded from the postings alone."""
    signed: Counter[str] = Counter()
    for record in records:
        if record["type"] == "posting":
            for account, cents in record["payload"]["credits"]:
                signed[account] += cents
            for account, cents in record["payload"]["debits"]:
                signed[account] -= cents
    return dict(signed)


def check_journal(records: list[dict[str, Any]]) -> dict[str, int]:
    """Every play paid once and the meters the records' sum; the stations' credit by the postings."""
    by_seq = {r["seq"]: r for r in records}
    money = balances(records)
    assert sum(money.values()) == 0
    meters: Counter[str] = Counter()
    credit: Counter[int] = Counter()
    requests: Counter[tuple[int, str]] = Counter()
    for record in records:
        kind, p = record["type"], record["payload"]
        if kind == "vb_credit_in":
            meters.update(credits_in=p["amount"], cash_in=p["amount"] if p["source"] == "cash" else 0)
            credit[p["station"]] += p["amount"]
        elif kind == "vb_credit_out":
            meters.update(credits_out=p["amount"], cash_out=p["amount"] if p["destination"] == "cash" else 0)
            credit[p["station"]] -= p["amount"]
        elif kind == "vb_play":
            requests[(p["station"], p["request"])] += 1
            jackpots = sum(j["cents"] for j in p["jackpots"])
            meters.update(stakes=p["stake_cents"], prizes=p["won_cents"], plays=1,
                          jackpot_contributions=sum(p["contributions"]), jackpot_payouts=jackpots)
            credit[p["station"]] += p["won_cents"] + jackpots - p["stake_cents"]
            # Its postings follow it, each naming it: the stake once, the prize once, each jackpot once.
            own = [by_seq[s] for s in range(record["seq"] + 1, record["seq"] + 6)
                   if s in by_seq and by_seq[s]["type"] == "posting"
                   and by_seq[s]["payload"]["reference"]["event_seq"] == record["seq"]]
            reasons = Counter(r["payload"]["reason"] for r in own)
            assert reasons["vb:stake"] == 1 and reasons["vb:prize"] == (1 if p["won_cents"] else 0)
            assert reasons["vb:jackpot won"] == len(p["jackpots"])
        if kind.startswith("vb_") and "meters" in p:
            assert {k: v for k, v in p["meters"].items() if v} == {k: v for k, v in meters.items() if v}, record["seq"]
    assert all(n == 1 for n in requests.values()), "a request was played twice"
    for station in STATIONS:
        assert money.get(f"vbcredit:{MACHINE}.{station}", 0) == credit[station]
    return {f"{station}": credit[station] for station in STATIONS}


@pytest.fixture(scope="module")
def provisioned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, str], CashDevice]:
    """A hall folder with one two-station machine, both stations enrolled and certified, and its cash device."""
    folder = tmp_path_factory.mktemp("vb-template") / "hall"
    folder.mkdir()
    hall = HallProcess(folder)
    with open(hall.config, "a") as config:
        config.write(VIDEOBINGO.format(paytable=EXAMPLES / "vb-classic-3x5.json"))
    hall.start()
    tokens = {}
    device = CashDevice(MACHINE)
    try:
        chief = console(hall, "rosa")
        chief.send({"id": "device", "command": "enrol_vb_cash_device",
                    "args": {"machine": MACHINE, "public_key": device.public_key}})
        assert chief.answer("device")["ok"]
        for station in STATIONS:
            chief.send({"id": f"enrol-{station}", "command": "enrol_vb_station",
                        "args": {"machine": MACHINE, "station": station}})
            answer = chief.answer(f"enrol-{station}")
            assert answer["ok"], answer
            tokens[station] = answer["result"]["token"]
            hall.certificate("machine", f"{MACHINE}.{station}")
        chief.close()
    finally:
        hall.stop()
    return folder, tokens, device


class Run:
    """One run's stations and what they sent and were shown, over the server's lives."""

    def __init__(self, hall: HallProcess, tokens: dict[int, str], rng: random.Random, device: CashDevice) -> None:
        self.hall = hall
        self.tokens = tokens
        self.device = CashDevice(device.machine, device.key)  # a fresh copy of the template: no note taken yet
        self.rng = rng
        self.sent: dict[tuple[int, str], dict[str, Any]] = {}  # (station, request) -> the message
        self.shown: dict[tuple[int, str], dict[str, Any]] = {}  # (station, request) -> the answer
        self.stations: dict[int, Station] = {}
        self.ids = 0

    def connect(self) -> None:
        self.stations = {s: Station(self.hall, s, self.tokens[s]) for s in STATIONS}

    def send(self, station: int, message: dict[str, Any]) -> str:
        self.ids += 1
        request = f"s{station}-{self.ids}"
        message = {**message, "request": request}
        self.sent[(station, request)] = message
        self.stations[station].socket.send(message)
        return request

    def play_round(self, kill_after: int | None, delay: float) -> None:
        """Both stations play at once; credit first where it runs low."""
        requests = []
        for station in STATIONS:
            if self.credit(station) < 80:
                note = self.device.insert(station, 5_000)  # the bill validator's signed note, relayed
                requests.append((station, self.send(station, {"type": "credit_in", "source": "cash",
                                                              "amount_cents": 5_000, "note": note.to_json()})))
            requests.append((station, self.send(station, {"type": "play", "cards": self.rng.randint(1, 4),
                                                          "keep": False})))
            plays = sum(1 for (s, _), m in self.sent.items() if m["type"] == "play")
            if kill_after is not None and plays == kill_after:
                threading.Timer(delay, os.kill, (cast(Any, self.hall.process).pid, signal.SIGKILL)).start()
        for station, request in requests:
            answer = self.stations[station].answer(request)
            assert answer["type"] != "error", answer
            self.shown[(station, request)] = answer

    def credit(self, station: int) -> int:
        """The station's credit as its screen shows it: the last answer's, or the welcome's."""
        shown = [m for m in self.messages(station) if "credit_after_cents" in m]
        return int(shown[-1]["credit_after_cents"]) if shown else int(self.stations[station].welcome["credit_cents"])

    def messages(self, station: int) -> list[dict[str, Any]]:
        return [r.message for r in self.stations[station].socket.messages]

    def close(self) -> None:
        for station in self.stations.values():
            station.close()


def after_kill(run: Run, folder: Path, life: int, kill_after: int, delay: float) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The journal the dead server left, checked against what the stations were shown."""
    shown = [(s, m) for s in STATIONS for m in run.messages(s) if m.get("type") == "play"]
    run.close()
    records = journal_records(folder)
    credit = check_journal(records)
    committed = committed_plays(records)
    # Nothing was shown that was not committed, and as it was committed.
    for station, answer in shown:
        record = committed[(station, answer["request"])]
        assert answer["seq"] == record["seq"] and answer["balls"] == record["payload"]["balls"]
        assert answer["cards"] == record["payload"]["cards"]
    unanswered = [key for key in run.sent if key not in run.shown]
    print(f"life {life}: killed {delay * 1000:.1f} ms after play {kill_after}; {len(unanswered)} unanswered, "
          f"{sum(1 for k in unanswered if k in committed)} of them committed; {len(records)} records")
    return records, credit


def committed_plays(records: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    return {(r["payload"]["station"], r["payload"]["request"]): r for r in records if r["type"] == "vb_play"}


def resume(run: Run, records: list[dict[str, Any]], credit: dict[str, int]) -> None:
    """After the restart: the last committed play and the credit shown, the unanswered requests sent again."""
    committed = committed_plays(records)
    run.connect()
    for station in STATIONS:
        welcome = run.stations[station].welcome
        last = max((r for (s, _), r in committed.items() if s == station), key=lambda r: r["seq"], default=None)
        assert (welcome["last_play"] or {}).get("seq") == (last["seq"] if last else None)
        assert welcome["credit_cents"] == credit[f"{station}"]
    for station, request in [key for key in run.sent if key not in run.shown]:
        message = run.sent[(station, request)]
        run.stations[station].socket.send(message)
        answer = run.stations[station].answer(request)
        assert answer["type"] != "error", answer
        if message["type"] == "play" and (station, request) in committed:
            assert answer.get("repeated") and answer["seq"] == committed[(station, request)]["seq"]
        elif message["type"] == "play":
            assert not answer.get("repeated") and answer["seq"] > records[-1]["seq"], answer
        run.shown[(station, request)] = answer


@pytest.mark.req("R3.5.d")
@pytest.mark.parametrize("seed", range(1, RUNS + 1))
def test_a_hall_killed_mid_play_shows_the_committed_play_pays_it_once_and_never_charges_an_uncommitted_one(
        seed: int, provisioned: tuple[Path, dict[int, str], CashDevice], tmp_path: Path) -> None:
    """Each run kills the hall :data:`KILLS` times in a row, at random moments of the plays."""
    template, tokens, device = provisioned
    folder = tmp_path / "hall"
    shutil.copytree(template, folder)
    rng = random.Random(seed)
    hall = HallProcess(folder).start()
    run = Run(hall, tokens, rng, device)
    try:
        run.connect()
        for life in range(KILLS):
            plays = sum(1 for m in run.sent.values() if m["type"] == "play")
            kill_after = plays + rng.randrange(1, 12)
            delay = rng.choice((0.0, rng.uniform(0, 0.004), rng.uniform(0, 0.02)))
            try:
                while True:
                    run.play_round(kill_after, delay)
            except (SocketClosed, WaitTimeout):
                pass
            cast(Any, hall.process).wait(timeout=10)
            hall.kill()
            records, credit = after_kill(run, folder, life, kill_after, delay)
            hall.start()
            resume(run, records, credit)
        for _ in range(3):
            run.play_round(None, 0.0)
        chief = console(hall, "rosa")
        chief.send({"id": "reconcile", "command": "vb_reconcile", "args": {}})
        answer = chief.answer("reconcile")
        chief.close()
        assert answer["ok"] and answer["result"]["agree"] is True and answer["result"]["differences"] == [], answer
        # Every cash credit came on a note of the machine's device, once: the meters' cash box is the ledger's.
        assert answer["result"]["cash_boxes"][MACHINE]["meters_cents"] == answer["result"]["cash_boxes"][MACHINE][
            "ledger_cents"]
    finally:
        run.close()
        hall.stop()
    records = journal_records(folder)
    check_journal(records)
    assert journal_verifies(folder) == records[-1]["seq"]

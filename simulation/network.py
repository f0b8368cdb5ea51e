"""``bingo central simulate``: a central server, H hall servers and their terminals on loopback.

:class:`Simulation` lays out ``DIR`` (``DIR/pki`` the operator's authority,
``DIR/central``, ``DIR/hall-1``... each server's home, ``DIR/terminals`` the workers'
specs and reports) and runs:

1. one operator authority issues every certificate: the central server's, each
   hall's ``server`` certificate (named as its hall id), each terminal's;
2. ``bingo central serve`` starts with no game, then H ``bingo hall serve``, each on
   a free port, linked to it over mutual TLS;
3. each hall's staff set it up over HTTPS as a hall is set up: the regulator's banned
   list, a cash desk, and per terminal an enrolment, a visitor admitted, a player
   account opened and credit loaded;
4. the terminal workers (:mod:`simulation.terminal_worker`, a few processes with many
   terminals each) connect and sign in;
5. the central server is stopped and started again with a programme of G network
   games in its configuration (``[programme]``): it schedules each game itself when the
   one before it ends, with what that game carried out (R88.5), and its sale opens a few
   seconds later.  The kill campaigns configure the G games at once instead
   (``[[games]]``): game k's sale opens a few seconds after the start plus k sale windows,
   so a sale opens while the previous game draws;
6. once every game is over at the central server and at every hall, the workers,
   the halls and the central server are stopped, and :meth:`Simulation.summary` sums
   up what the journals and the terminals say, with the checks that they agree.

The kill campaigns drive the same object: :meth:`Simulation.kill_hall`,
:meth:`Simulation.kill_central` and the restarts are ``kill -9`` of a real process
and its start on the same folder and port.
"""

from __future__ import annotations

import http.client
import json
import re
import resource
import secrets
import ssl
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from server_kit.pki import export_bundle, init_authority, issue_certificate
from simulation.journals import CentralFacts, CentralGameFacts, HallFacts
from simulation.processes import Child, SimulationError, free_port, python, wait_for

CENTRAL_ID = "central-sim"
#: The operator who runs the central server's verification after its restart (R92.5e).
OPERATOR = "sim-operator"
#: Every game of a simulation has an id that starts so: ``sim-3``, or the programme's ``sim-2026-12-03-3``.
GAME_PREFIX = "sim"
PIN = "4821"
SERIES = "V1"
CENTRAL_UP = re.compile(rb"listening for halls on [0-9.]+:(\d+)")
HALL_UP = re.compile(rb"Caller console at https?://[^/\s]+/console")
LINKED = re.compile(rb"Linked to central server")
LOGIN = re.compile(r"^\s+(\w+)\s+.*password: (\S+)\s*$")
#: The regulator's banned list each hall imports before it admits anyone (R75.2).
BANNED_LIST = "document,name,until\nB1000001,Joan Banned,\n"


@dataclass(frozen=True)
class Plan:
    """What to simulate."""

    home: Path
    halls: int = 2
    terminals: int = 5
    games: int = 1
    seed: int = 1
    #: Terminal worker processes (default: one per 200 terminals, at least 2, at most 4).
    workers: int | None = None
    #: ``random``: purchases at random moments of the sale; ``burst``: in its last ``burst_ms``.
    mode: str = "random"
    burst_ms: int = 5_000
    sale_ms: int = 10_000
    ball_ms: int = 1_000
    #: The first sale opens this long after the central server starts with the games.
    opens_after_ms: int = 5_000
    #: ``True``: one game after another, the central server's programme scheduling each when the
    #: one before it ends, with what it carried to its prizes (R88.5), so the day's games chain
    #: as the audit export requires; ``False``: every game configured at once, each sale opening
    #: while the game before draws (the kill campaigns, to have sales and draws all the time).
    one_after_another: bool = True
    price_cents: int = 100
    #: Purchases per terminal per game, cards per purchase (both ranges inclusive), stakes in percent.
    buys: tuple[int, int] = (1, 3)
    quantities: tuple[int, int] = (1, 6)
    stakes: tuple[int, ...] = (100, 50, 25, 10)

    def check(self) -> None:
        if not 1 <= self.halls <= 200:
            raise SimulationError(f"--halls is 1 to 200, not {self.halls}")
        if self.halls < 2:
            raise SimulationError("a network game needs two halls or more (R92.5b): --halls 2 at least")
        if not 1 <= self.terminals <= 1000:
            raise SimulationError(f"--terminals is 1 to 1000 per hall, not {self.terminals}")
        if not 1 <= self.games <= 50:
            raise SimulationError(f"--games is 1 to 50, not {self.games}")
        if self.mode not in ("random", "burst"):
            raise SimulationError(f"the buying mode is random or burst, not {self.mode}")
        if self.buys[1] * self.quantities[1] > 96:
            raise SimulationError("a terminal may hold at most 96 cards of a game (R83.7)")

    @property
    def worker_count(self) -> int:
        total = self.halls * self.terminals
        return max(1, min(total, self.workers or min(4, max(2, -(-total // 200)))))

    @property
    def load_cents(self) -> int:
        """What each player is loaded with: enough for every purchase of every game."""
        return self.games * self.buys[1] * self.quantities[1] * self.price_cents

    @property
    def series_cards(self) -> int:
        cards = self.halls * self.terminals * self.buys[1] * self.quantities[1]
        return max(60, -(-cards // 6) * 6)

    def game_id(self, k: int) -> str:
        """The id of game ``k`` configured at once (the programme's games are named by its id scheme)."""
        return f"{GAME_PREFIX}-{k + 1}"


@dataclass
class HallPlace:
    hall_id: str
    home: Path
    port: int
    child: Child
    facts: HallFacts
    terminals: list[dict[str, Any]] = field(default_factory=list)
    kills: int = 0

    def linked(self, times: int = 1) -> bool:
        return self.child.count(LINKED) >= times


class Simulation:
    """The processes of one simulation and what they left."""

    def __init__(self, plan: Plan, progress: Callable[[str], None] = lambda line: None) -> None:
        plan.check()
        self.plan = plan
        self.started_s = time.monotonic()
        self.progress = lambda line: progress(f"[{time.monotonic() - self.started_s:6.1f} s] {line}")
        self.home = plan.home
        self.pki = self.home / "pki"
        self.central_home = self.home / "central"
        self.work = self.home / "terminals"
        self.central_port = free_port()
        self.central = Child("central", python("from central_server.cli import central; central()", "serve",
                                               "--config", str(self.central_home / "central.toml")),
                             self.central_home, up=CENTRAL_UP)
        self.central_facts = CentralFacts(self.central_home / "central.sqlite3")
        self.halls: list[HallPlace] = []
        self.workers: list[Child] = []
        self.central_kills = 0

    # --- Setting up -----------------------------------------------------------------

    def prepare(self) -> None:
        """The folders, the certificates and the configurations."""
        if self.home.exists() and any(self.home.iterdir()):
            raise SimulationError(f"{self.home} is not empty; a simulation starts in a new folder")
        self.progress(f"preparing {self.home}: an operator authority and {self.plan.halls} hall(s)")
        for folder in (self.central_home, self.work):
            folder.mkdir(parents=True)
        init_authority(self.pki, "Simulated Bingo Network")
        issue_certificate(self.pki, "central", CENTRAL_ID)
        issue_certificate(self.pki, "operator", OPERATOR)
        export_bundle(self.pki, CENTRAL_ID, self.central_home / "pki")
        self._write_central(with_games=False)
        template, logins = self._hall_template()
        self.logins = logins
        for index in range(self.plan.halls):
            hall_id = f"hall-{index + 1}"
            home = self.home / hall_id
            issue_certificate(self.pki, "server", hall_id)
            export_bundle(self.pki, hall_id, home / "pki")
            port = free_port()
            (home / "hall.toml").write_text(self._hall_config(template, hall_id))
            child = Child(hall_id, python("from hall_server.cli import main; main()", "hall", "serve", "--config",
                                          str(home / "hall.toml"), "--port", str(port)),
                          home, env={"BINGO_HOME": str(home)}, up=HALL_UP)
            self.halls.append(HallPlace(hall_id, home, port, child, HallFacts(hall_id, home / "hall.sqlite3")))
            for t in range(self.plan.terminals):
                issue_certificate(self.pki, "terminal", f"{hall_id}-T{t + 1}")

    def _hall_template(self) -> tuple[str, dict[str, str]]:
        """A hall configuration as ``bingo hall init-config`` writes it, and its staff logins."""
        path = self.home / "hall-template.toml"
        init = Child("hall-init-config", python("from hall_server.cli import main; main()", "hall", "init-config",
                                                "--config", str(path), "--name", "Simulated hall"), self.home)
        init.start()
        wait_for(lambda: not init.running, 120, "bingo hall init-config")
        if init.reap() != 0:
            raise SimulationError(f"bingo hall init-config failed:\n{init.text()}")
        logins = {m.group(1): m.group(2) for line in init.text().splitlines() if (m := LOGIN.match(line))}
        text = path.read_text()
        path.unlink()
        init.log.unlink()
        return text, logins

    def _hall_config(self, template: str, hall_id: str) -> str:
        # A small card set of the hall's own keeps each first start quick; the network game's cards are central.
        text = template.replace('name = "Simulated hall"', f'name = "Simulated {hall_id}"')
        text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
        text = re.sub(r'server_name = "[^"]*"', f'server_name = "{hall_id}"', text, count=1)
        # Every terminal of the simulation connects from the loopback address, all at once at the start.
        text = text.replace("per_address = 64", f"per_address = {max(64, 2 * self.plan.terminals)}")
        return text + f"""
[central]
host = "127.0.0.1"
port = {self.central_port}
hall_id = "{hall_id}"
server_name = "localhost"
"""

    def _write_central(self, *, with_games: bool) -> None:
        """The central configuration: no game yet, or the plan's games (a programme of them, or all at once)."""
        plan = self.plan
        halls = [f"hall-{i + 1}" for i in range(plan.halls)]
        text = f"""[central]
id = "{CENTRAL_ID}"
home = "{self.central_home}"
pki_dir = "pki"

[listen]
interface = "127.0.0.1"
port = {self.central_port}

[database]
url = "sqlite:///{self.central_home / 'central.sqlite3'}"

[network]
halls = {json.dumps(halls)}

[[series]]
label = "{SERIES}"
cards = {plan.series_cards}
"""
        settings = f"""price_cents = {plan.price_cents}
max_price_cents = {plan.price_cents}
sale_window_ms = {plan.sale_ms}
ball_interval_ms = {plan.ball_ms}
series_label = "{SERIES}"
"""
        prizes = """
[[{table}.prizes]]
pattern = {{ name = "line", rows = 1 }}
basis_points = 2000
[[{table}.prizes]]
pattern = {{ name = "bingo", rows = 3 }}
basis_points = 5000
"""
        if with_games and plan.one_after_another:
            text += f"""
[programme]
id_prefix = "{GAME_PREFIX}"
opens_after_ms = {plan.opens_after_ms}
games = {plan.games}

[programme.game]
{settings}{prizes.format(table="programme.game")}"""
        elif with_games:
            for k in range(plan.games):
                opens = plan.opens_after_ms + k * (plan.sale_ms + 2_000)
                text += f"""
[[games]]
game_id = "{plan.game_id(k)}"
{settings}opens_after_ms = {opens}
{prizes.format(table="games")}"""
        (self.central_home / "central.toml").write_text(text)

    # --- Running ------------------------------------------------------------------------

    def start(self) -> None:
        """The central server, the halls linked to it, set up, and every terminal signed in."""
        self._start_central()
        self.progress(f"starting {len(self.halls)} hall server(s)")
        self._each_hall(lambda hall: hall.child.start())
        wait_for(lambda: all(h.linked() for h in self.halls), 120, "every hall to link to the central server")
        self.progress(f"setting up {self.plan.terminals} terminal(s) and player(s) in each hall")
        self._each_hall(self._set_up)
        self._start_workers()

    def _start_central(self) -> None:
        self.progress(f"starting the central server on port {self.central_port}")
        self.central.start()

    def _each_hall(self, work: Callable[[HallPlace], Any]) -> None:
        """``work`` for every hall at once, on threads; the first failure is raised."""
        failures: list[BaseException] = []

        def run(hall: HallPlace) -> None:
            try:
                work(hall)
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=run, args=(hall,)) for hall in self.halls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]

    def _set_up(self, hall: HallPlace) -> None:
        staff = {name: Staff(hall.port, self.pki / "ca.pem", name, password) for name, password in self.logins.items()}
        staff["admin"].command("import_banned_list", content=BANNED_LIST, source="simulation.csv")
        staff["carla"].command("open_cash_desk", desk="desk-1", float_cents=100_000)
        names = [f"{hall.hall_id}-T{t + 1}" for t in range(self.plan.terminals)]
        tokens = {name: staff["rosa"].command("enrol_terminal", terminal=name, place="simulation")["result"]["token"]
                  for name in names}
        number = int(hall.hall_id.split("-")[1])
        admitted = {name: staff["adam"].command("admit_visitor", name=f"Player {name}",
                                                document=f"S{number:04d}{t:05d}",
                                                birth_date="1980-01-01")["records"][0]["seq"]
                    for t, name in enumerate(names)}
        hall.facts.refresh()
        opened = {name: staff["carla"].command("open_player_account", visitor=hall.facts.payloads[seq]["number"],
                                               medium="ticket", pin=PIN)["records"][0]["seq"]
                  for name, seq in admitted.items()}
        hall.facts.refresh()
        for name in names:
            account = hall.facts.payloads[opened[name]]["account"]
            staff["carla"].command("load_credit", account=account, amount_cents=self.plan.load_cents, desk="desk-1")
            hall.terminals.append({"hall": hall.hall_id, "url": f"wss://localhost:{hall.port}/kiosk/ws",
                                   "terminal": name, "token": tokens[name], "account": account, "pin": PIN})
        for client in staff.values():
            client.close()

    def _start_workers(self) -> None:
        entries = [t for hall in self.halls for t in hall.terminals]
        count = self.plan.worker_count
        self.progress(f"starting {count} terminal worker(s) for {len(entries)} terminal(s)")
        for w in range(count):
            terminals = entries[w::count]
            spec = {
                "seed": self.plan.seed * 1000 + w, "mode": self.plan.mode, "burst_ms": self.plan.burst_ms,
                "buys": list(self.plan.buys), "quantities": list(self.plan.quantities),
                "stakes": list(self.plan.stakes), "game_prefix": f"{GAME_PREFIX}-",
                "terminals": terminals, "bundle": str(self.pki), "out": str(self.work / f"worker-{w + 1}.json"),
            }  # fmt: skip
            path = self.work / f"worker-{w + 1}.spec.json"
            path.write_text(json.dumps(spec))
            child = Child(f"worker-{w + 1}", [sys.executable, "-m", "simulation.terminal_worker", str(path)],
                          self.work, up=re.compile(rb"^ready$"))
            self.workers.append(child)
            child.start(timeout=60 + len(terminals) * 0.5)

    def open_games(self) -> None:
        """The central server started again with the games in its configuration: a programme that
        schedules them one after another, or all of them at once; the halls link again."""
        if self.plan.one_after_another:
            self.progress(f"a programme of {self.plan.games} network game(s): the central server starts with it")
        else:
            self.progress(f"scheduling {self.plan.games} network game(s): the central server starts with them")
        links = [h.child.count(LINKED) for h in self.halls]
        self.central.stop()
        self._write_central(with_games=True)
        self.central.start()
        wait_for(lambda: all(h.linked(n + 1) for h, n in zip(self.halls, links)), 60,
                 "every hall to link to the central server again")

    def played(self) -> bool:
        """Every game is over at the central server and every hall holds all of it."""
        central = self.central_facts.refresh()
        if len(central.games) < self.plan.games or not all(g.over for g in central.games.values()):
            return False
        for hall in self.halls:
            facts = hall.facts.refresh()
            for game in central.games.values():
                mine = facts.games.get(game.game_id)
                if mine is None and missed(game, hall.hall_id):
                    continue
                if mine is None or not mine.over or facts.pending_holds(game.game_id):
                    return False
                if facts.credits_of(game.game_id) != game.credits_of(hall.hall_id):
                    return False
        return True

    def wait_played(self) -> None:
        plan = self.plan
        game_s = plan.opens_after_ms / 1000 + plan.sale_ms / 1000 + 91 * plan.ball_ms / 1000 + 60
        if plan.one_after_another:
            for k in range(plan.games):
                wait_for(lambda: len(self.central_facts.refresh().games) > k, game_s,
                         f"the programme to schedule game {k + 1}", interval=0.5)
                game_id = list(self.central_facts.games)[k]
                self.progress(f"playing {game_id}, game {k + 1} of the programme (at most {game_s:.0f} s)")
                wait_for(lambda: self._over(game_id), game_s, f"{game_id} to be played", interval=0.5)
        bound = game_s + plan.games * (plan.sale_ms + 2_000) / 1000 + 60
        self.progress(f"waiting for every game to be over at every hall (at most {bound:.0f} s)")
        wait_for(self.played, bound, "every network game to be played at the central server and every hall",
                 interval=0.5)

    def _over(self, game_id: str) -> bool:
        game = self.central_facts.refresh().games.get(game_id)
        return game is not None and game.over

    # --- Failures -------------------------------------------------------------------------

    def kill_hall(self, index: int) -> HallPlace:
        hall = self.halls[index]
        hall.child.kill()
        hall.kills += 1
        return hall

    def restart_hall(self, index: int) -> None:
        """The hall started again after its kill, linked, and its room chief's verification passed: a hall
        started after a crash sells nothing before it (R92.5e)."""
        hall = self.halls[index]
        hall.child.start()
        wait_for(hall.linked, 60, f"{hall.hall_id} to link again")
        chief = Staff(hall.port, self.pki / "ca.pem", "rosa", self.logins["rosa"])
        try:
            (verified,) = chief.command("run_verification", date="")["records"]
        finally:
            chief.close()
        # The answer comes once the record is committed; the facts read the journal's file after it.
        wait_for(lambda: verified["seq"] in hall.facts.refresh().payloads, 30,
                 f"{hall.hall_id}'s verification record in its journal")
        if not hall.facts.payloads[verified["seq"]]["passed"]:
            raise SimulationError(f"{hall.hall_id}'s verification after its restart failed: "
                                  f"{hall.facts.payloads[verified['seq']]['results']}")

    def kill_central(self) -> None:
        self.central.kill()
        self.central_kills += 1

    def restart_central(self) -> None:
        """The central server started again after its kill, every hall linked, and the operator's verification
        passed: the single central server restarted after a crash declared the games under way not played and
        opens no game before it (R92.5e)."""
        links = [h.child.count(LINKED) for h in self.halls]
        self.central.start()
        wait_for(lambda: all(h.linked(n + 1) for h, n in zip(self.halls, links)), 90,
                 "every hall to link to the central server again")
        self.verify_central()

    def verify_central(self) -> None:
        """``bingo central verify`` as the operator runs it; it must pass."""
        verify = Child("central-verify", python("from central_server.cli import central; central()", "verify",
                                                "--config", str(self.central_home / "central.toml"),
                                                "--pki-dir", str(self.pki), "--name", OPERATOR), self.central_home)
        verify.start()
        wait_for(lambda: not verify.running, 120, "bingo central verify")
        if verify.reap() != 0 or "verification passed" not in verify.text():
            raise SimulationError(f"the central server's verification after its restart did not pass:\n{verify.text()}")

    # --- Stopping -------------------------------------------------------------------------

    def stop(self) -> None:
        """Every process stopped: the terminals first (they write what they saw), then halls, then central."""
        for worker in self.workers:
            worker.terminate()
        for worker in self.workers:
            worker.stop(timeout=60)
        self._each_hall(lambda hall: hall.child.stop())
        self.central.stop()

    def kill_all(self) -> None:
        """Everything still running ended at once (after a failure)."""
        for child in [*self.workers, *(h.child for h in self.halls), self.central]:
            child.kill()

    # --- What happened ----------------------------------------------------------------------

    def terminal_reports(self) -> list[dict[str, Any]]:
        reports = []
        for w in range(len(self.workers)):
            path = self.work / f"worker-{w + 1}.json"
            if not path.exists():
                raise SimulationError(f"terminal worker {w + 1} wrote no report (see {self.work / f'worker-{w + 1}.log'})")
            reports.append(json.loads(path.read_text()))
        return reports

    def summary(self) -> dict[str, Any]:
        return summarize(self, self.terminal_reports())


def missed(game: CentralGameFacts, hall_id: str) -> bool:
    """Whether the hall took no part in the game: away from its sale's opening to its close, it
    never heard of it (the protocol lists no games) and bought nothing in it."""
    return game.phase not in ("scheduled", "selling") and not any(h == hall_id for h, _ in game.confirmed)


class Staff:
    """One staff member signed in to a hall's console over HTTPS (keep-alive, the session cookie)."""

    def __init__(self, port: int, ca: Path, name: str, password: str) -> None:
        self.context = ssl.create_default_context(cafile=str(ca))
        self.port = port
        self.name = name
        self.connection = http.client.HTTPSConnection("localhost", port, context=self.context, timeout=120)
        self.cookie = ""
        self.counter = 0
        # A request id names one request for good (the hall answers a repeat with the first answer):
        # each sign-in's ids are its own.
        self.prefix = f"{name}-{secrets.token_hex(4)}"
        status, answer = self._post("/login", {"name": name, "password": password})
        if status != 200:
            raise SimulationError(f"{name} cannot sign in to the hall on port {port}: {answer}")

    def _post(self, path: str, value: Any) -> tuple[int, Any]:
        body = json.dumps(value).encode()
        headers = {"Content-Type": "application/json", "Host": f"localhost:{self.port}"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        for attempt in range(2):
            try:
                self.connection.request("POST", path, body, headers)
                response = self.connection.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()  # a connection the server closed: open a new one once
                if attempt:
                    raise
        cookie = response.getheader("Set-Cookie")
        if cookie and cookie.startswith("bingo_session="):
            self.cookie = cookie.split(";", 1)[0]
        return response.status, json.loads(data)

    def command(self, command: str, **args: Any) -> dict[str, Any]:
        self.counter += 1
        status, answer = self._post("/api/command", {"id": f"{self.prefix}-{self.counter}", "command": command,
                                                     "args": args})
        if status != 200 or not answer.get("ok"):
            raise SimulationError(f"{command} by {self.name} was refused on the hall at port {self.port}: {answer}")
        return dict(answer)

    def close(self) -> None:
        self.connection.close()


# --- The summary ------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))], 1)


def figures(values: list[float]) -> dict[str, Any]:
    return {"count": len(values), "p50": percentile(values, 50), "p99": percentile(values, 99),
            "max": round(max(values), 1) if values else None}


def summarize(sim: Simulation, reports: list[dict[str, Any]]) -> dict[str, Any]:
    """What the simulation did, from three sources that must agree: the terminals, the halls, the central server."""
    plan = sim.plan
    central = sim.central_facts.refresh()
    purchases = [p for report in reports for p in report["purchases"]]
    checks: dict[str, bool] = {}
    problems: list[str] = []

    def check(name: str, holds: bool, detail: str) -> None:
        checks[name] = checks.get(name, True) and holds
        if not holds:
            problems.append(detail)

    # A game a stop of the central server interrupted is declared not played, every stake returned (R92.5e).
    check("every game played", len(central.games) == plan.games and all(g.phase in ("closed", "not_played")
                                                                         for g in central.games.values()),
          f"games: {[(g.game_id, g.phase) for g in central.games.values()]}")
    unanswered = [p for p in purchases if p["outcome"] == "unanswered"]
    away = {t: a for report in reports for t, a in report.get("away", {}).items()}
    check("every request answered", not unanswered, f"{len(unanswered)} request(s) never answered: {unanswered[:3]}; "
          f"terminals that could not open a session: {away}")

    halls: dict[str, Any] = {}
    for hall in sim.halls:
        facts = hall.facts.refresh()
        mine = [p for p in purchases if p["hall"] == hall.hall_id]
        confirmed = [p for p in mine if p["outcome"] == "confirmed"]
        refused = [p for p in mine if p["outcome"] == "refused"]
        bought = {rid: h for rid, h in facts.holds.items() if h["status"] == "bought"}
        central_confirmed = {rid: c for g in central.games.values() for (h, rid), c in g.confirmed.items()
                             if h == hall.hall_id}
        collections = sum(h["captured"] for h in bought.values())
        confirmed_cents = sum(p["amount_cents"] for p in confirmed)
        cards_x_stake = sum(p["cards"] * p["stake_cents"] for p in confirmed)
        for (terminal, request), holds in facts.by_terminal_request.items():
            check("one hold per request", len(holds) == 1, f"{hall.hall_id}: {terminal} {request} made {len(holds)} holds")
        twice = [h for h in facts.holds.values() if h["status"] == "settled twice"]
        check("one hold per request", not twice, f"{hall.hall_id}: holds settled twice: {twice[:3]}")
        check("every hold decided", not facts.pending_holds(), f"{hall.hall_id}: {len(facts.pending_holds())} hold(s) still held")
        terminal_bought = sorted((p["terminal"], p["request"]) for p in confirmed)
        hall_bought = sorted((h["terminal"], h["terminal_request"]) for h in bought.values())
        check("confirmed once, at the terminal, the hall and the central server",
              terminal_bought == hall_bought and sorted(bought) == sorted(central_confirmed),
              f"{hall.hall_id}: {len(terminal_bought)} confirmed at terminals, {len(hall_bought)} captured, "
              f"{len(central_confirmed)} confirmed centrally")
        for p in refused:
            hold_ids = facts.by_terminal_request.get((p["terminal"], p["request"]), [])
            charged = [facts.holds[r] for r in hold_ids if facts.holds[r]["status"] == "bought"]
            check("refused with no charge", not charged, f"{hall.hall_id}: {p['request']} refused but charged")
        check("collections add up", confirmed_cents == collections == cards_x_stake == sum(
            c["amount_cents"] for c in central_confirmed.values()),
              f"{hall.hall_id}: terminals {confirmed_cents}, cards x stake {cards_x_stake}, hall {collections}, "
              f"central {sum(c['amount_cents'] for c in central_confirmed.values())}")
        prizes = sum(w["payment_cents"] for g in central.games.values() for w in g.won if w["hall_id"] == hall.hall_id)
        paid = [c for g in facts.games.values() for c in g.credits]
        prizes_paid = sum(c["amount_cents"] for c in paid if c["kind"] == "prize")
        refunds_paid = sum(c["amount_cents"] for c in paid if c["kind"] != "prize")
        games_missed = [g.game_id for g in central.games.values() if g.game_id not in facts.games and missed(g, hall.hall_id)]
        for game in central.games.values():
            if game.game_id in games_missed:
                continue
            check("every prize paid once", facts.credits_of(game.game_id) == game.credits_of(hall.hall_id),
                  f"{hall.hall_id} {game.game_id}: credits paid {facts.credits_of(game.game_id)}, "
                  f"owed {game.credits_of(hall.hall_id)}")
            seen = facts.games.get(game.game_id)
            check("balls identical in every hall", seen is not None and seen.balls == game.balls,
                  f"{hall.hall_id} {game.game_id}: balls differ from the central server's")
            check("no credit held", facts.balances.get(f"held:{game.game_id}", 0) == 0,
                  f"{hall.hall_id} {game.game_id}: {facts.balances.get(f'held:{game.game_id}')} cents held")
        check("winners paid = prizes", prizes == prizes_paid, f"{hall.hall_id}: prizes {prizes}, paid {prizes_paid}")
        for entry in hall.terminals:
            account = f"player:{entry['account']}"
            captured = sum(h["captured"] for h in bought.values() if h["account"] == account)
            credited = sum(c["amount_cents"] for c in paid if c["account"] == account)
            check("every player's balance", facts.balances.get(account, 0) == plan.load_cents - captured + credited,
                  f"{hall.hall_id} {entry['terminal']}: balance {facts.balances.get(account, 0)}, "
                  f"loaded {plan.load_cents} - captured {captured} + paid {credited}")
        owed = sum(facts.balances.get(f"network:{g}", 0) for g in central.games)
        halls[hall.hall_id] = {
            "terminals": len(hall.terminals),
            "purchases": {"requested": len(mine), "confirmed": len(confirmed), "refused": len(refused),
                          "unanswered": sum(1 for p in mine if p["outcome"] == "unanswered")},
            "cards": sum(p["cards"] for p in confirmed),
            "collections_cents": collections,
            "winners": sum(1 for g in central.games.values() for w in g.won if w["hall_id"] == hall.hall_id),
            "prizes_cents": prizes,
            "prizes_paid_cents": prizes_paid,
            "refunds_paid_cents": refunds_paid,
            "owed_to_network_cents": owed,
            "restarts": hall.kills,
            "games_missed": games_missed,
        }  # fmt: skip
        check("what a hall owes the network", owed == collections - prizes_paid - refunds_paid,
              f"{hall.hall_id}: owes {owed}, collected {collections}, paid {prizes_paid + refunds_paid}")

    games: dict[str, Any] = {}
    for game in central.games.values():
        winners: dict[str, int] = {}
        for w in game.won:
            winners[w["hall_id"]] = winners.get(w["hall_id"], 0) + 1
        games[game.game_id] = {"phase": game.phase, "cards_in_play": game.cards_in_play,
                               "sales_cents": game.sales_cents, "prizes_cents": game.prizes,
                               "balls": len(game.balls), "drawn": game.balls, "winners": winners}
    refusals: dict[str, int] = {}
    for p in purchases:
        if p["outcome"] == "refused":
            reason = p["message"].split(";")[0].split("(")[0].strip()[:60]
            refusals[reason] = refusals.get(reason, 0) + 1
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "plan": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(plan).items()} | {
            "workers": plan.worker_count},
        "purchases": {
            "requested": len(purchases),
            "confirmed": sum(1 for p in purchases if p["outcome"] == "confirmed"),
            "refused": sum(1 for p in purchases if p["outcome"] == "refused"),
            "unanswered": len(unanswered),
            "unsent": sum(r.get("unsent", 0) for r in reports),
            "refusals": refusals,
        },
        "terminals_away": away,
        "cards_in_play": sum(g.cards_in_play or 0 for g in central.games.values()),
        "balls": sum(len(g.balls) for g in central.games.values()),
        "games": games,
        "halls": halls,
        "timing_ms": timing(sim, central, reports),
        "cpu_s": {
            "central": round(sim.central.cpu_s, 2),
            "halls": round(sum(h.child.cpu_s for h in sim.halls), 2),
            "terminals": round(sum(w.cpu_s for w in sim.workers), 2),
            "simulate": round(own.ru_utime + own.ru_stime, 2),
        },
        "wall_s": round(time.monotonic() - sim.started_s, 1),
        "restarts": {"central": sim.central_kills, "halls": sum(h.kills for h in sim.halls)},
        "checks": checks,
        "problems": problems[:20],
        "ok": all(checks.values()),
    }


def timing(sim: Simulation, central: CentralFacts, reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Latencies: a ball from its commit at the central server to every hall and to every terminal;
    each confirmed purchase's answer after the sale's close at its hall."""
    to_halls: list[float] = []  # per ball: the last hall to commit it
    to_each_hall: list[float] = []
    to_terminals: list[float] = []
    for game in central.games.values():
        for index, committed in enumerate(game.ball_times_ms):
            times = []
            for hall in sim.halls:
                seen = hall.facts.games.get(game.game_id)
                if seen is not None and index < len(seen.ball_times_ms):
                    times.append(seen.ball_times_ms[index] - committed)
            to_each_hall += times
            if len(times) == len(sim.halls):
                to_halls.append(max(times))
            for report in reports:
                for arrival in report["balls"].get(game.game_id, {}).get(str(index + 1), []):
                    to_terminals.append(arrival - committed)
    after_close: list[float] = []
    closes = {(h.hall_id, g): f.closes_here_ms for h in sim.halls for g, f in h.facts.games.items()}
    for report in reports:
        for p in report["purchases"]:
            close = closes.get((p["hall"], p["game_id"]))
            if p["outcome"] == "confirmed" and close is not None:
                after_close.append(p["answered_at_ms"] - close)
    return {
        "ball_to_all_halls": figures(to_halls),
        "ball_to_each_hall": figures(to_each_hall),
        "ball_to_terminals": figures(to_terminals),
        "confirmed_after_close": figures(after_close),
    }


def simulate(plan: Plan, progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run the whole simulation; the summary."""
    sim = Simulation(plan, progress)
    sim.prepare()
    try:
        sim.start()
        sim.open_games()
        sim.wait_played()
        sim.progress("stopping every process")
        sim.stop()
    except BaseException:
        sim.kill_all()
        raise
    return sim.summary()


__all__ = ["Plan", "Simulation", "SimulationError", "simulate", "summarize"]


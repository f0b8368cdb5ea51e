"""Start a network of two halls and a central server on this machine, and leave it running to watch.

    .venv/bin/python scripts/network_watch.py --home /tmp/net

One operator authority (``HOME/pki``) issues every certificate; a real central server
(``bingo central serve``, ``HOME/central``) and two real halls (``bingo hall serve``,
``HOME/hall-1`` on port 8441 and ``HOME/hall-2`` on 8442) start on loopback and link over
AMP in mutual TLS.  Each hall's staff then set it up over its HTTPS console: a cash desk,
a terminal enrolled, a player's account opened and loaded.  The script prints the boards'
and the kiosks' addresses, the kiosks' certificates to import into the browser, and the
players' accounts, then waits: the network game's sale opens ``--opens-after`` seconds
after the central server's first start.  Ctrl-C (or SIGTERM) stops every process; the
homes stay, and running the script again on the same ``--home`` starts the same network
again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password  # noqa: E402
from hall_server.web.demo_terminals import KIOSK_P12_PASSWORD, kiosk_p12  # noqa: E402
from server_kit.pki import PkiFolder, export_bundle, init_authority, issue_certificate  # noqa: E402

HALLS = {"hall-1": 8441, "hall-2": 8442}
CENTRAL_PORT = 7310
#: The regulator's consultation of the central server (R95.3), and its inspector's certificate.
CONSULTATION_PORT = 7311
INSPECTOR = "inspector"
PASSWORD = "demo-network"
PIN = "2468"
LOAD_CENTS = 5_000
URL_LINE = re.compile(r"Caller console at (https?://[^/\s]+)/console")
LINKED = "Linked to central server"


def central_toml(home: Path, opens_after_s: int, sale_s: int) -> str:
    return f"""
[central]
id = "central-a"
home = "{home}"
pki_dir = "{home / 'pki'}"

[listen]
interface = "127.0.0.1"
port = {CENTRAL_PORT}

[consultation]
interface = "127.0.0.1"
port = {CONSULTATION_PORT}

[database]
url = "sqlite:///{home / 'central.sqlite3'}"

[network]
halls = {json.dumps(list(HALLS))}

[[series]]
label = "N1"
cards = 600

[[games]]
game_id = "net-1"
price_cents = 100
max_price_cents = 200
sale_window_ms = {sale_s * 1000}
ball_interval_ms = 3000
series_label = "N1"
opens_after_ms = {opens_after_s * 1000}
[[games.prizes]]
pattern = {{ name = "line", rows = 1 }}
basis_points = 2000
[[games.prizes]]
pattern = {{ name = "bingo", rows = 3 }}
basis_points = 5000
"""


def hall_toml(hall_id: str, port: int) -> str:
    text = default_config_text(f"Hall {hall_id}", [(n, r, hash_password(PASSWORD)) for n, r in DEFAULT_STAFF],
                               port=port)
    text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    text = text.replace('server_name = "hall-server"', f'server_name = "{hall_id}"')
    return text + f"""
[central]
host = "127.0.0.1"
port = {CENTRAL_PORT}
hall_id = "{hall_id}"
server_name = "localhost"
"""


class Process:
    """A server in a child process; what it prints is kept (and read, so that its pipe never fills)."""

    def __init__(self, name: str, command: list[str], folder: Path) -> None:
        self.name = name
        self.output = ""
        env = {**os.environ, "BINGO_HOME": str(folder), "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output += line

    def wait_for(self, what: str, pattern: str, timeout: float = 180) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (found := re.search(pattern, self.output)) is not None:
                return found
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} stopped before {what}:\n{self.output[-3000:]}")
            time.sleep(0.1)
        raise SystemExit(f"{self.name}: no {what} within {timeout:.0f} s:\n{self.output[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


class Staff:
    """The hall's staff on its HTTPS command channel, each signed in once."""

    def __init__(self, base: str, ca: Path) -> None:
        self.base = base
        self.context = ssl.create_default_context(cafile=str(ca))
        self.openers: dict[str, urllib.request.OpenerDirector] = {}
        self.counter = 0

    def _call(self, opener: urllib.request.OpenerDirector, path: str, value: Any) -> Any:
        request = urllib.request.Request(self.base + path, data=json.dumps(value).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with opener.open(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            return json.loads(error.read())

    def __call__(self, who: str, command: str, **args: Any) -> dict[str, Any]:
        if who not in self.openers:
            opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=self.context),
                                                 urllib.request.HTTPCookieProcessor(CookieJar()))
            self._call(opener, "/login", {"name": who, "password": PASSWORD})
            self.openers[who] = opener
        self.counter += 1
        answer = self._call(self.openers[who], "/api/command", {"id": f"w{self.counter}", "command": command,
                                                                "args": args})
        if not answer.get("ok"):
            raise SystemExit(f"{who}'s {command} was refused: {answer}")
        return dict(answer)


def payload(database: Path, seq: int) -> dict[str, Any]:
    import sqlite3

    with sqlite3.connect(database) as db:
        (text,) = db.execute("SELECT payload FROM journal WHERE seq = ?", (seq,)).fetchone()
    return dict(json.loads(text))


def prepare(home: Path, opens_after_s: int, sale_s: int) -> None:
    """The certificates and configurations, made once."""
    operator = home / "pki"
    if PkiFolder(operator).ca_cert.exists():
        return
    init_authority(operator, "Network watch")
    issue_certificate(operator, "central", "central-a")
    export_bundle(operator, "central-a", home / "central" / "pki")
    (home / "central" / "central.toml").write_text(central_toml(home / "central", opens_after_s, sale_s))
    for hall_id, port in HALLS.items():
        issue_certificate(operator, "server", hall_id)
        export_bundle(operator, hall_id, home / hall_id / "pki")
        terminal = f"{hall_id}-K1"
        issue_certificate(operator, "terminal", terminal)
        export_bundle(operator, terminal, home / "kiosks" / terminal)
        (home / hall_id / "hall.toml").write_text(hall_toml(hall_id, port))
    issue_certificate(operator, "regulator", INSPECTOR)
    export_bundle(operator, INSPECTOR, home / "regulator" / INSPECTOR)


def set_up(hall_id: str, base: str, home: Path, number: int) -> tuple[str, str]:
    """A desk, the hall's kiosk enrolled, a player's account loaded: (token, account)."""
    staff = Staff(base, home / hall_id / "pki" / "ca.pem")
    staff("admin", "import_banned_list", content="document,name,until\nB1000001,Joan Banned,\n", source="craj.csv")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
    token = str(staff("rosa", "enrol_terminal", terminal=f"{hall_id}-K1", place="row A")["result"]["token"])
    database = home / hall_id / "hall.sqlite3"
    (admitted,) = staff("adam", "admit_visitor", name=f"Player {number}", document=f"{number}2000000X", birth_date="1980-01-01")["records"]
    visitor = payload(database, admitted["seq"])["number"]
    (opened,) = staff("carla", "open_player_account", visitor=visitor, medium="ticket", pin=PIN)["records"]
    account = str(payload(database, opened["seq"])["account"])
    staff("carla", "load_credit", account=account, amount_cents=LOAD_CENTS, desk="desk-1")
    return token, account


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupted)  # stopped like Ctrl-C: every process with it
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="where the network's folders are made")
    parser.add_argument("--opens-after", type=int, default=180, help="seconds from the central server's first "
                        "start to the sale's opening (default 180)")
    parser.add_argument("--sale", type=int, default=120, help="seconds the sale lasts (default 120)")
    options = parser.parse_args()
    home = options.home.resolve()
    fresh = not (home / "central" / "central.sqlite3").exists()
    prepare(home, options.opens_after, options.sale)
    python = sys.executable
    central = Process("the central server", [python, "-c", "from central_server.cli import central; central()",
                                             "serve", "--config", str(home / "central" / "central.toml")],
                      home / "central")
    halls = {hall_id: Process(hall_id, [python, "-c", "from hall_server.cli import main; main()", "hall", "serve",
                                        "--config", str(home / hall_id / "hall.toml")], home / hall_id)
             for hall_id in HALLS}
    processes = [central, *halls.values()]
    try:
        central.wait_for("its listening line", r"listening for halls")
        bases = {hall_id: hall.wait_for("its console address", URL_LINE.pattern)[1] for hall_id, hall in halls.items()}
        for hall in halls.values():
            hall.wait_for("its link to the central server", LINKED)
        lines = ["", "The network is up: a central server and two halls, linked.", ""]
        for number, (hall_id, base) in enumerate(bases.items(), start=1):
            terminal = f"{hall_id}-K1"
            p12 = kiosk_p12(home / "kiosks" / terminal, terminal)
            lines.append(f"{hall_id}: board {base}/board   console {base}/console (staff password {PASSWORD!r})")
            if fresh:
                token, account = set_up(hall_id, base, home, number)
                lines += [f"  kiosk: import {p12} (password {KIOSK_P12_PASSWORD!r}) into the browser, then open",
                          f"    {base}/kiosk#terminal={terminal}&token={token}",
                          f"  and sign in with account {account}, PIN {PIN} ({LOAD_CENTS // 100} EUR of credit)"]
            else:
                lines.append(f"  kiosk: {base}/kiosk (enrolled at the first start; {p12}, password "
                             f"{KIOSK_P12_PASSWORD!r})")
        if (home / "regulator" / INSPECTOR).is_dir():  # a home made before the consultation has none
            inspector = kiosk_p12(home / "regulator" / INSPECTOR, INSPECTOR)
            lines += ["", f"The regulator's consultation of the central server: import {inspector} (password "
                      f"{KIOSK_P12_PASSWORD!r}), then open https://localhost:{CONSULTATION_PORT}/regulator/"]
        if fresh:
            lines += ["", f"The network game's sale opens {options.opens_after} s from now and lasts {options.sale} s; "
                      "then a ball every 3 s until the bingo."]
        else:
            lines += ["", "The network game goes on from where the central server's journal left it."]
        lines.append("Ctrl-C stops every process.")
        print("\n".join(lines), flush=True)
        while all(p.process.poll() is None for p in processes):
            time.sleep(1)
        stopped = next(p for p in processes if p.process.poll() is not None)
        raise SystemExit(f"{stopped.name} stopped:\n{stopped.output[-3000:]}")
    except KeyboardInterrupt:
        pass
    finally:
        for process in processes:
            process.stop()


if __name__ == "__main__":
    main()

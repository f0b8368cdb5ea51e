"""What the central server's tests share: certificates, a configuration, a hall's AMP client.

The certificates are real, issued in the test's folder by :mod:`server_kit.pki`: the
central server's (``central-a``), two member halls' (``hall-1``, ``hall-2``), a hall
server that is not a member (``hall-9``) and a terminal's (``term-1``).  The test
client speaks the protocol as a hall server does, over the same AMP commands
(:func:`server_kit.amp.commands.amp_commands`), and keeps every push it is sent.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from twisted.internet import defer, reactor
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
from twisted.protocols import amp

from protocol import central_messages as m
from server_kit.amp.commands import amp_commands
from server_kit.pki import client_tls_options, init_authority, issue_certificate
from tests.support.waiting import START, WaitTimeout, wait_until, wait_until_in_reactor

COMMANDS = amp_commands(m.MESSAGES)
CENTRAL = "central-a"
HALLS = ("hall-1", "hall-2")
#: The operator's person who commands the central server in the tests.
OPERATOR = "olga"
OPERATOR_ROLE = "operator"
REPO = Path(__file__).resolve().parents[2]
LISTENING = re.compile(rb"listening for halls on [0-9.]+:(\d+)")


def make_pki(folder: Path) -> Path:
    """An authority in ``folder`` with every certificate the tests present."""
    init_authority(folder, "Acme Bingo Network")
    issue_certificate(folder, "central", CENTRAL)
    for hall in (*HALLS, "hall-9"):
        issue_certificate(folder, "server", hall)
    issue_certificate(folder, "terminal", "term-1")
    issue_certificate(folder, OPERATOR_ROLE, OPERATOR)
    return folder


GAME = """
[[games]]
game_id = "{game_id}"
price_cents = 100
max_price_cents = 200
sale_window_ms = {sale_ms}
ball_interval_ms = {ball_ms}
series_label = "{series}"
{opens_after}[[games.prizes]]
pattern = {{ name = "line", rows = 1 }}
basis_points = 2000
[[games.prizes]]
pattern = {{ name = "bingo", rows = 3 }}
basis_points = 5000
"""


PROGRAMME = """
[programme]
id_prefix = "net"
opens_after_ms = {opens_after_ms}
{extra}
[programme.game]
price_cents = 100
max_price_cents = 200
sale_window_ms = {sale_ms}
ball_interval_ms = {ball_ms}
series_label = "{series}"
[[programme.game.prizes]]
pattern = {{ name = "line", rows = 1 }}
basis_points = 2000
carry_in_cents = {line_carry}
[[programme.game.prizes]]
pattern = {{ name = "bingo", rows = 3 }}
basis_points = 5000
"""


def programme_text(*, opens_after_ms: int = 1_000, sale_ms: int = 10_000, ball_ms: int = 1_000, series: str = "V1",
                   games: int | None = None, hours: str | None = None, line_carry: int = 0) -> str:
    """A ``[programme]`` of line and bingo games: ``games`` of them (default: no end), within ``hours``."""
    extra = "".join([f"games = {games}\n" if games is not None else "", f'hours = "{hours}"\n' if hours else ""])
    return PROGRAMME.format(opens_after_ms=opens_after_ms, extra=extra, sale_ms=sale_ms, ball_ms=ball_ms,
                            series=series, line_carry=line_carry)


def config_text(home: Path, pki_dir: Path, database_url: str, *, sale_ms: int = 10_000, ball_ms: int = 1_000,
                opens_after_ms: int | None = 1_000, games: tuple[str, ...] = ("net-1",),
                halls: tuple[str, ...] = HALLS, series: str = "V1", cards: int = 60, port: int = 0,
                annex: tuple[tuple[str, str], ...] = (), programme: str = "", extra_prizes: str = "") -> str:
    """A central server's configuration; ``opens_after_ms=None``: only the operator opens the sales;
    ``programme``: a ``[programme]`` section (:func:`programme_text`); ``extra_prizes``: each game's
    ``[[games.prizes]]`` after its line and bingo."""
    text = f"""
[central]
id = "{CENTRAL}"
home = "{home}"
pki_dir = "{pki_dir}"

[listen]
interface = "127.0.0.1"
port = {port}

[database]
url = "{database_url}"

[network]
halls = {json.dumps(list(halls))}

[[series]]
label = "{series}"
cards = {cards}
"""
    for game_id in games:
        opens_after = "" if opens_after_ms is None else f"opens_after_ms = {opens_after_ms}\n"
        text += GAME.format(game_id=game_id, sale_ms=sale_ms, ball_ms=ball_ms, opens_after=opens_after, series=series)
        text += extra_prizes
    for main, annexed in annex:  # hall-annex pairs (R3.5.b)
        text += f'\n[[annex]]\nmain = "{main}"\nannex = "{annexed}"\n'
    return text + programme


class HallClient(amp.AMP):
    """A hall server's end of the link, as far as the tests need it: it keeps every push."""

    def __init__(self) -> None:
        super().__init__()
        self.pushes: list[tuple[str, dict[str, Any]]] = []
        self.lost: defer.Deferred[None] = defer.Deferred()

    def locateResponder(self, name: bytes) -> Any:
        message = m.MESSAGES.get(name.decode())
        if message is None or message.sender != "central":
            return None
        command = COMMANDS[message.name]

        def take(box: amp.AmpBox) -> Any:
            arguments = command.parseArguments(box, self)
            m.check_arguments(message, {k: v for k, v in arguments.items() if v is not None})
            self.pushes.append((message.name, arguments))
            return defer.succeed(command.makeResponse({}, self))

        return take

    def connectionLost(self, reason: Any = None) -> None:
        super().connectionLost(reason)
        if not self.lost.called:
            self.lost.callback(None)

    def pushed(self, name: str) -> list[dict[str, Any]]:
        return [arguments for kind, arguments in self.pushes if kind == name]

    def call(self, name: str, **arguments: Any) -> defer.Deferred[dict[str, Any]]:
        return self.callRemote(COMMANDS[name], **arguments)

    def hello(self, hall: str = "hall-1") -> defer.Deferred[dict[str, Any]]:
        """The answer's fields that came (a single central server names no node and no epoch)."""
        answered = self.call("hello", hall_id=hall, versions=[2], software="test-hall 1.0")
        return answered.addCallback(lambda answer: {k: v for k, v in answer.items() if v is not None})

    def buy(self, request_id: str, *, hall: str = "hall-1", terminal: str = "T1", player: str = "p1",
            count: int = 1, pct: int = 100, game: str = "net-1") -> defer.Deferred[dict[str, Any]]:
        return self.call("buy_cards", request_id=request_id, game_id=game, hall_id=hall, terminal_id=terminal,
                         player_ref=player, card_count=count, stake_pct=pct)

    def get_game(self, hall: str = "hall-1", game: str = "net-1") -> defer.Deferred[dict[str, Any]]:
        return self.call("get_game", game_id=game, hall_id=hall)


async def connect(port: int, pki_dir: Path, name: str) -> HallClient:
    """A client presenting certificate ``name`` of ``pki_dir`` to the central server on ``port``."""
    options = client_tls_options(pki_dir, name, "localhost")
    endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", port, options)
    return await connectProtocol(endpoint, HallClient())


async def until(predicate: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    return await wait_until_in_reactor(reactor, predicate, timeout, what)


class CentralProcess:
    """``bingo central serve`` in a child process: started, read, killed with SIGKILL."""

    def __init__(self, config: Path, command: list[str] | None = None) -> None:
        self.config = config
        #: What runs it: ``bingo central serve`` by default (``twist bingo-central`` is the same service).
        self.command = command or [sys.executable, "-c", "from central_server.cli import central; central()",
                                   "serve", "--config", str(config)]
        self.process: subprocess.Popen[bytes] | None = None
        self.output = b""
        self.port = 0

    def start(self, timeout: float = START) -> "CentralProcess":
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.output, self.port = b"", 0
        self.process = subprocess.Popen(self.command, cwd=self.config.parent, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT)
        threading.Thread(target=self._drain, args=(self.process.stdout,), daemon=True).start()
        process = self.process
        try:
            wait_until(lambda: self.port or process.poll() is not None, timeout, "the central server to listen",
                       interval=0.05)
        except WaitTimeout as timed_out:
            self.kill()
            raise WaitTimeout(f"{timed_out}:\n{self.output.decode(errors='replace')}") from None
        if not self.port:
            raise AssertionError(f"the central server did not start:\n{self.output.decode(errors='replace')}")
        return self

    def _drain(self, stream: Any) -> None:
        for line in iter(stream.readline, b""):
            self.output += line
            if not self.port and (match := LISTENING.search(line)):
                self.port = int(match.group(1))

    def kill(self) -> None:
        """``kill -9``: the process gets no chance to finish anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


# --- The ``bingo`` command, as installed -----------------------------------------------

#: The entry point that adds ``bingo central`` to the ``bingo`` command, as an installed
#: distribution's ``entry_points.txt`` writes it (pyproject.toml quotes its value).
ENTRY_POINT_LINE = "central = central_server.cli:register"


def bingo(*args: str, extra_path: Path | None = None, cwd: Path = REPO,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``bingo ARGS`` in a child process (``env`` added to this one's), its output captured."""
    path = [str(REPO)] + ([str(extra_path)] if extra_path else [])
    env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def installed(tmp_path: Path, entry_points: str) -> Path:
    """A folder holding a distribution's metadata that declares ``entry_points``."""
    site = tmp_path / "site"
    info = site / "bingo_entry_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bingo-entry-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(entry_points)
    return site


def bingo_central(*args: str, tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``bingo ARGS`` with the ``bingo central`` commands installed (pyproject.toml's entry point)."""
    site = tmp_path / "site"
    if not site.exists():
        installed(tmp_path, f"[bingo.commands]\n{ENTRY_POINT_LINE}\n")
    return bingo(*args, extra_path=site, env=env)

"""A central server built in this process on real TLS and a real database, its games on a test clock.

The sockets, the TLS handshakes and the database writer run on the real reactor; the
games' times and timers (sale window, ball interval) run on a ``task.Clock`` the test
advances, so a whole game takes moments.  Real processes are in ``test_recovery.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor, task

from central_server.config import load_config
from central_server.domain.game import CentralGame
from central_server.server import CentralServer
from central_server.tap import build_central
from protocol.records.central import GAME_RECORDS
from server_kit.journal import table
from tests.central_server.support import HallClient, config_text, connect, make_pki, until

#: The test clock's start: a plausible time in 2026, in seconds.
EPOCH_S = 1_780_000_000.0


@dataclass
class Running:
    server: CentralServer
    clock: task.Clock
    pki_dir: Path
    port: int
    clients: list[HallClient]

    @property
    def game(self) -> CentralGame:
        return self.server.module.games["net-1"]

    def journal_length(self) -> int:
        return table.count(self.server.engine)

    def records(self, type: str) -> list[Any]:
        return [r for r in table.read(self.server.engine) if r.type == type]

    def game_records(self) -> list[Any]:
        """The journal's records of the network games, in order."""
        return [r for r in table.read(self.server.engine) if r.type in GAME_RECORDS]

    async def hall(self, name: str = "hall-1", *, hello: bool = True) -> HallClient:
        client = await connect(self.port, self.pki_dir, name)
        self.clients.append(client)
        if hello:
            await client.hello(name)
        return client

    async def advance(self, seconds: float, until_seen: Any = None, what: str = "the timer's command") -> None:
        """Move the games' clock on; with ``until_seen``, wait for what the step committed."""
        self.clock.advance(seconds)
        if until_seen is not None:
            await until(until_seen, what)

    def settled(self, phase: str) -> bool:
        """The game is in ``phase`` with that step committed and its next timer armed."""
        return self.game.phase == phase and (self.server.module.armed("net-1") or phase in ("closed", "not_played"))

    async def open_sale(self) -> None:
        await self.advance(1.01, lambda: self.settled("selling"), "the sale to open")

    async def close_sale(self) -> None:
        await self.advance(10.01, lambda: self.settled("sale_closed") or self.settled("closed"), "the sale to close")

    async def next_ball(self) -> None:
        balls = len(self.game.balls)
        await self.advance(1.01, lambda: len(self.game.balls) > balls and (self.settled("drawing") or self.settled("closed")),
                           "the next ball")


async def start_central(tmp_path: Path, database_url: str, **config: Any) -> Running:
    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    path = home / "central.toml"
    path.write_text(config_text(home, pki_dir, database_url, **config))
    clock = task.Clock()
    clock.advance(EPOCH_S)
    server = build_central(load_config(path), reactor, clock)
    server.service.startService()
    port = await server.listener.listening
    await until(lambda: "net-1" in server.module.games, "the configured game to be scheduled")
    return Running(server, clock, pki_dir, port.getHost().port, [])


async def stop_central(running: Running) -> None:
    for client in running.clients:
        if client.transport is not None:
            client.transport.loseConnection()
    await running.server.service.stopService()
    running.server.engine.dispose()


@pytest_twisted.async_yield_fixture
async def central(tmp_path: Path) -> Any:
    """A central server on SQLite (the bad-input and protocol tests)."""
    running = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}")
    yield running
    await stop_central(running)


@pytest_twisted.async_yield_fixture
async def central_on(tmp_path: Path, database_url: str) -> Any:
    """A central server on each database the system supports (SQLite and PostgreSQL)."""
    running = await start_central(tmp_path, database_url)
    yield running
    await stop_central(running)


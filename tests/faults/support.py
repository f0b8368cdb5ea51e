"""What the storage-fault tests share: staff at a real hall's desks, its journal, its alarm.

Each fault is injected into real processes - PostgreSQL stopped, a database file made
immutable, a disk filled, a lock held by another connection - and the tests look at what
staff see (the answers, the consoles' alarm) and at what the journal holds afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hall_server.config import load_config
from server_kit.db.database import create
from server_kit.journal import table
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess, HttpClient, WireSocket

#: The staff of the default configuration and the role each plays here.
ADMIN, CASHIER, DOOR = "admin", "carla", "adam"
BANNED_LIST = "document,name,until\nB1000001,Joan Banned,\n"
PIN = "4826"


class Desks:
    """Staff signed in at a hall's desks, each command with a request id of its own."""

    def __init__(self, hall: HallProcess) -> None:
        self.hall = hall
        self.clients: dict[str, HttpClient] = {}
        self.prefix = secrets.token_hex(4)
        self.counter = 0

    def client(self, who: str) -> HttpClient:
        if who not in self.clients:
            client = HttpClient(self.hall)
            status, answer = client.call("POST", "/login", {"name": who, "password": PASSWORD})
            assert status == 200, answer
            self.clients[who] = client
        return self.clients[who]

    def send(self, who: str, command: str, **args: Any) -> tuple[int, dict[str, Any]]:
        """The HTTP status and the answer of one command, whatever they are."""
        self.counter += 1
        return self.client(who).call("POST", "/api/command",
                                     {"id": f"f{self.prefix}-{self.counter}", "command": command, "args": args})

    def __call__(self, who: str, command: str, **args: Any) -> dict[str, Any]:
        """A command that must be carried out: its answer."""
        status, answer = self.send(who, command, **args)
        assert status == 200 and answer["ok"], (command, status, answer)
        return answer

    def console(self, who: str = ADMIN) -> tuple[WireSocket, dict[str, Any]]:
        """A console's WebSocket signed in as ``who``, and the picture its snapshot showed."""
        # A read waits as long as an event may take: a console hears nothing while a fault lasts.
        socket = WireSocket(self.hall, "/ws", cookie=self.client(who).cookie, timeout=WAIT)
        snapshot = socket.until(lambda message: message.get("type") == "snapshot")
        return socket, snapshot["view"]

    def forget(self) -> None:
        """The sign-ins end with the process they were made on."""
        self.clients.clear()


def refused_for_storage(status: int, answer: dict[str, Any], kind: str, where: str) -> None:
    """The answer staff get while the storage is unavailable: 503, the fault and where it is."""
    assert status == 503 and not answer["ok"], answer
    error = answer["error"]
    assert error["code"] == "storage_unavailable", answer
    assert f"storage unavailable ({kind})" in error["message"] and where in error["message"], answer
    assert "nothing already confirmed is lost" in error["message"], answer


def storage_alarm(socket: WireSocket, *, raised: bool, shown: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The storage's alarm at a console once it is raised (its picture) or cleared (None).

    ``shown``: the console's snapshot picture, which has the alarm already when it was raised
    before the console opened (by the demo's commit, say); else the ``storage`` message that comes.
    """
    if shown is not None and (shown.get("storage") is not None) == raised:
        return shown.get("storage")
    message = socket.until(lambda m: m.get("type") == "storage" and (m["storage"] is not None) == raised, WAIT)
    return message["storage"]


def records(url: str) -> list[Any]:
    engine = create(url)
    try:
        return list(table.read(engine))
    finally:
        engine.dispose()


def verified(folder: Path, url: str) -> int:
    """The hall's journal checked as a start checks it: every hash, link, signature and the head."""
    engine = create(url)
    try:
        key = load_journal_key(folder / "keys" / "journal-signing.pem")
        return Journal(engine, key, head=folder / "journal.head").verify()
    finally:
        engine.dispose()


def hall_url(folder: Path) -> str:
    return load_config(folder / "hall.toml").database_url


def facts(journal: list[Any]) -> list[tuple[str, str]]:
    """Each record's type and payload without its time and request id: what a run writes, whenever."""
    shown = []
    for record in journal:
        payload = {k: v for k, v in record.payload.items() if k != "actor"}
        actor = record.payload.get("actor") or {}
        shown.append((record.type, json.dumps({**payload, "by": actor.get("name")}, sort_keys=True)))
    return shown


def counted(journal: list[Any]) -> Counter[str]:
    return Counter(record.type for record in journal)


def partial_files(folder: Path) -> list[Path]:
    """Files a write left half-done: ``*.partial`` anywhere under ``folder``."""
    return sorted(folder.rglob("*.partial"))


def chattr(flag: str, *paths: Path) -> None:
    """``chattr +i`` / ``-i``: a file nobody may write, root included, and back."""
    done = subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True, text=True)
    if done.returncode != 0:
        if os.environ.get("CI"):
            raise AssertionError(f"chattr {flag} failed under CI: {done.stderr}")
        pytest.skip(f"chattr {flag} is not permitted here ({done.stderr.strip()}); it needs root on a file system "
                    "that keeps the immutable flag")


def wait_for(predicate: Any, what: str, timeout: float = WAIT) -> Any:
    return wait_until(predicate, timeout, what, interval=0.1)

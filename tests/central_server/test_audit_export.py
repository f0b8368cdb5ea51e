"""``BINGO_HOME=DIR/central bingo audit export --day D --out X`` on a central server's folder
(FORMATS.md section 3, R92.3, R93.7): a real ``bingo central serve`` process plays a network game
with cards bought by two halls over mutual TLS; the export's ``scenario.json`` replayed by
``bingo replay`` is its ``result.json``, byte for byte, and its journal segment verifies.

The hall's ``bingo audit export`` finds the central server's export through the ``bingo``
command (the ``bingo.commands`` entry point), because the folder holds a ``central.toml``.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from twisted.internet import reactor, task, threads

from central_server.config import load_config
from server_kit.audit_folder import FILES, read_journal, verify_segment
from server_kit.db.database import create
from server_kit.journal import table
from tests.central_server.support import (
    GAME,
    OPERATOR,
    CentralProcess,
    HallClient,
    bingo_central,
    config_text,
    connect,
    make_pki,
)

pytestmark = [pytest.mark.integration]

#: Every purchase: (hall, terminal, player, cards, stake percentage).
PURCHASES = [
    ("hall-1", "T1", "p1", 20, 100),
    ("hall-1", "T2", "p2", 10, 50),
    ("hall-2", "T7", "q1", 12, 25),
    ("hall-2", "T8", "q2", 9, 100),
]
SALES_CENTS = 20 * 100 + 10 * 50 + 12 * 25 + 9 * 100


async def wait_for(client: HallClient, hall: str, test: Any, what: str, game: str = "net-1",
                   timeout: float = 240.0) -> dict[str, Any]:
    deadline = reactor.seconds() + timeout
    while True:
        state = await client.get_game(hall, game)
        if test(state):
            return state
        if reactor.seconds() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}; the game is {state}")
        await task.deferLater(reactor, 0.05, lambda: None)


def closed_on(config: Path) -> str:
    """The date (UTC, the configuration's time zone) of the record that closed net-1."""
    engine = create(load_config(config).database_url)
    try:
        (closed,) = [r for r in table.read(engine) if r.type == "central_game_closed"]
    finally:
        engine.dispose()
    return datetime.datetime.fromtimestamp(closed.time_ms / 1000, datetime.timezone.utc).date().isoformat()


@pytest.mark.req("R92.3", "R93.7", "R96.2")
@pytest_twisted.ensureDeferred
async def test_a_central_servers_day_exports_and_its_scenario_replays_to_its_result(tmp_path: Path) -> None:
    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    config = home / "central.toml"
    text = config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", sale_ms=10_000, ball_ms=1_000,
                       opens_after_ms=300)
    # A second game the operator opens, here declared not played: the export leaves it out.
    text += GAME.format(game_id="net-2", sale_ms=10_000, ball_ms=1_000, opens_after="", series="V1")
    config.write_text(text)
    process = CentralProcess(config).start()
    clients: list[HallClient] = []
    try:
        for hall in ("hall-1", "hall-2"):
            client = await connect(process.port, pki_dir, hall)
            await client.hello(hall)
            clients.append(client)
        links = dict(zip(("hall-1", "hall-2"), clients))
        await wait_for(links["hall-1"], "hall-1", lambda g: g["phase"] == "selling", "the sale to open")
        for n, (hall, terminal, player, count, pct) in enumerate(PURCHASES):
            bought = await links[hall].buy(f"{hall}-{n}", hall=hall, terminal=terminal, player=player, count=count,
                                           pct=pct)
            assert bought["status"] == "confirmed", bought
        declared = await threads.deferToThread(
            bingo_central, "central", "not-played", "net-2", "--reason", "the studio is flooded",
            "--server", f"127.0.0.1:{process.port}", "--pki-dir", str(pki_dir), "--name", OPERATOR, tmp_path=tmp_path,
        )
        assert declared.returncode == 0, declared.stderr
        closed = await wait_for(links["hall-1"], "hall-1", lambda g: g["phase"] == "closed", "the game to end")
        assert closed["sales_cents"] == SALES_CENTS
    finally:
        for client in clients:
            if client.transport is not None:
                client.transport.loseConnection()
        process.stop()

    day = closed_on(config)
    out = tmp_path / "audit" / day
    exported = bingo_central("audit", "export", "--day", day, "--out", str(out), tmp_path=tmp_path,
                             env={"BINGO_HOME": str(home)})
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    assert lines[0].startswith(f"{out}: {day}, 1 network game(s), journal records ")
    assert lines[1:] == ["left out: net-2 (declared not played (R96.2), every stake returned)"]
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)

    replayed = bingo_central("replay", str(out / "scenario.json"), tmp_path=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == (out / "result.json").read_text(), "the replay recomputes what the central server paid"

    facts = json.loads((out / "scenario.json").read_text())
    (game,) = facts["sessions"][0]["games"]
    ids = [card["id"] for card in game["cards"]]
    assert len(ids) == sum(p[3] for p in PURCHASES) and len(set(ids)) == len(ids)
    assert ids[:6] == [f"hall-1/V1-{n}" for n in range(1, 7)], "cards in the order assigned, named HALL/V1-N"
    assert {i.split("/")[0] for i in ids} == {"hall-1", "hall-2"}
    recorded = json.loads((out / "result.json").read_text())
    assert recorded["totals"]["sales_cents"] == SALES_CENTS
    paid = [c["card"] for prize in recorded["games"][0]["prizes"].values() for c in prize["paid"]]
    assert paid and set(paid) <= set(ids)

    key = serialization.load_pem_public_key((out / "public-key.pem").read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    records = list(read_journal(out / "journal.jsonl"))
    assert verify_segment(records, key) == len(records)
    types = {r.type for r in records}
    assert {"central_game_scheduled", "central_purchase_confirmed", "central_card_won", "central_game_closed",
            "central_game_not_played"} <= types

    # The export holds together with nothing but its files (bingo audit verify).
    verified = bingo_central("audit", "verify", str(out), tmp_path=tmp_path)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"{out}: verified (central export of {day}): {len(records)} journal records")

    # Refusals: one line, exit status 2, nothing written.
    again = bingo_central("audit", "export", "--day", day, "--out", str(out), tmp_path=tmp_path,
                          env={"BINGO_HOME": str(home)})
    assert (again.returncode, again.stderr) == (2, f"{out} is not empty; name a new or empty folder\n")
    empty = tmp_path / "audit" / "none"
    unknown = bingo_central("central", "audit-export", "--day", "2001-01-01", "--out", str(empty), "--config",
                            str(config), tmp_path=tmp_path)
    assert (unknown.returncode, unknown.stderr) == (2, "no network game of this central server ended on 2001-01-01 (UTC)\n")
    bad = bingo_central("audit", "export", "--day", "2026-13-01", "--out", str(empty), tmp_path=tmp_path,
                        env={"BINGO_HOME": str(home)})
    assert (bad.returncode, bad.stderr) == (2, "--day is a date, YYYY-MM-DD, not '2026-13-01'\n")
    assert not empty.exists()

"""The operator's commands to a running central server (R93.1, R96.2): ``bingo central games``,
``open-sale`` and ``not-played``, sent with an ``operator`` certificate over the halls' mutual
TLS endpoint to a real ``bingo central serve`` process, journaled with the operator as actor.

Two real halls' links (the tests' AMP client with the hall certificates) buy cards and receive
the pushes; every ``bingo`` command runs as its own process, as the operator would type it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import threads
from twisted.protocols import amp

from central_server.config import load_config
from server_kit.db.database import create
from server_kit.journal import table
from tests.central_server.support import (
    OPERATOR,
    CentralProcess,
    HallClient,
    bingo_central,
    config_text,
    connect,
    make_pki,
    until,
)
from tests.support.waiting import WAIT, wait_until

pytestmark = [pytest.mark.integration]


class Operator:
    """``bingo central ...`` as the operator runs it against one central server process."""

    def __init__(self, tmp_path: Path, process: CentralProcess, pki_dir: Path) -> None:
        self.tmp_path = tmp_path
        self.process = process
        self.pki_dir = pki_dir

    async def run(self, *args: str, name: str = OPERATOR, server: str | None = None) -> subprocess.CompletedProcess[str]:
        where = server or f"127.0.0.1:{self.process.port}"
        command = [*args, "--server", where, "--pki-dir", str(self.pki_dir), "--name", name]
        return await threads.deferToThread(bingo_central, "central", *command, tmp_path=self.tmp_path)


def start(tmp_path: Path) -> tuple[CentralProcess, Path, Path]:
    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    config = home / "central.toml"
    # No opens_after_ms: only the operator opens the sale; a long window keeps it open meanwhile.
    config.write_text(config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", opens_after_ms=None,
                                  sale_ms=600_000))
    process = CentralProcess(config).start()
    # The games are scheduled once the endpoint listens: a test counts the records after that.
    wait_until(lambda: any(r.type == "central_game_scheduled" for r in journal(config)), WAIT,
               "the configured game to be scheduled")
    return process, pki_dir, config


def journal(config: Path) -> list[Any]:
    engine = create(load_config(config).database_url)
    try:
        return list(table.read(engine))
    finally:
        engine.dispose()


async def hall(process: CentralProcess, pki_dir: Path, name: str) -> HallClient:
    client = await connect(process.port, pki_dir, name)
    await client.hello(name)
    return client


@pytest.mark.req("R96.2", "R93.1")
@pytest_twisted.ensureDeferred
async def test_the_operator_lists_the_games_opens_a_sale_and_declares_a_game_not_played_every_stake_returned(
    tmp_path: Path,
) -> None:
    process, pki_dir, config = start(tmp_path)
    operator = Operator(tmp_path, process, pki_dir)
    clients: list[HallClient] = []
    try:
        listed = await operator.run("games")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith("net-1: scheduled, the sale opens when the operator opens it; series V1 at 1.00 EUR")

        one, two = await hall(process, pki_dir, "hall-1"), await hall(process, pki_dir, "hall-2")
        clients += [one, two]
        early = await one.buy("h1-early")
        assert (early["status"], early["refusal_code"]) == ("refused", "sale_not_open")

        opened = await operator.run("open-sale", "net-1")
        assert opened.returncode == 0, opened.stderr
        assert opened.stdout.startswith("net-1: the sale is open until ") and "(600 s); the halls are told" in opened.stdout
        for client in (one, two):
            await until(lambda c=client: c.pushed("sale_opened"), "the halls to hear that the sale is open")
        again = await operator.run("open-sale", "net-1")
        assert again.returncode == 2 and again.stdout == ""
        assert again.stderr == "refused (not_now): cannot open the sale while the sale is open\n"

        assert (await one.buy("h1-a", terminal="T1", player="p1", count=3))["status"] == "confirmed"
        assert (await two.buy("h2-a", hall="hall-2", terminal="T7", player="q1", count=2, pct=50))["status"] == "confirmed"
        listed = await operator.run("games", "--json")
        (row,) = json.loads(listed.stdout)["games"]
        assert row == {"game_id": "net-1", "phase": "selling", "series": "V1", "price_cents": 100, "hall_count": 2,
                       "closes_at_ms": row["closes_at_ms"], "cards_in_play": 5, "sales_cents": 400, "ball_count": 0,
                       "winner_count": 0}

        declared = await operator.run("not-played", "net-1", "--reason", "power cut at the central site")
        assert declared.returncode == 0, declared.stderr
        assert declared.stdout == (
            "net-1 is declared not played (R96.2): 5 card(s), 4.00 EUR returned to the players of 2 hall(s)\n"
        )
        for client, hall_id, stakes in ((one, "hall-1", 300), (two, "hall-2", 100)):
            await until(lambda c=client: c.pushed("game_not_played"), "the halls to hear the game is not played")
            (pushed,) = client.pushed("game_not_played")
            assert pushed["reason"] == "power cut at the central site"
            credits = await client.call("get_credits", game_id="net-1", hall_id=hall_id, after=0)
            assert [(c["kind"], c["amount_cents"]) for c in credits["credits"]] == [("refund", stakes)]
        late = await one.buy("h1-late")
        assert late["refusal_code"] == "not_played"

        twice = await operator.run("not-played", "net-1", "--reason", "again")
        assert twice.returncode == 2
        assert twice.stderr == "refused (not_now): cannot declare the game not played once the game is declared not played\n"
        unknown = await operator.run("open-sale", "net-404")
        assert (unknown.returncode, unknown.stderr) == (2, "refused (unknown_game): there is no network game net-404\n")
        listed = await operator.run("games")
        assert listed.stdout.startswith("net-1: not played; series V1")
    finally:
        for client in clients:
            if client.transport is not None:
                client.transport.loseConnection()
        process.stop()

    records = journal(config)
    by_operator = [(r.type, r.payload["actor"]) for r in records if r.payload.get("actor", {}).get("role") == "operator"]
    olga = {"name": OPERATOR, "role": "operator"}
    assert by_operator == [
        ("central_sale_opened", olga),
        ("central_command_refused", olga),
        ("central_game_not_played", olga),
        ("central_stake_returned", olga),
        ("central_stake_returned", olga),
        ("central_command_refused", olga),
        ("central_command_refused", olga),
    ]
    (not_played,) = [r.payload for r in records if r.type == "central_game_not_played"]
    assert (not_played["declared_by"], not_played["reason"]) == (OPERATOR, "power cut at the central site")
    refusals = [r.payload for r in records if r.type == "central_command_refused"]
    assert [(p["peer"], p["command"], p["code"]) for p in refusals] == [
        (OPERATOR, "operator_open_sale", "not_now"),
        (OPERATOR, "operator_not_played", "not_now"),
        (OPERATOR, "operator_open_sale", "unknown_game"),
    ]


@pytest_twisted.ensureDeferred
async def test_only_an_operator_certificate_sends_the_operators_commands_and_it_sends_nothing_else(tmp_path: Path) -> None:
    process, pki_dir, config = start(tmp_path)
    operator = Operator(tmp_path, process, pki_dir)
    try:
        before = len(journal(config))
        # A hall's certificate: the endpoint does not know the operator's commands from a hall.
        as_hall = await operator.run("open-sale", "net-1", name="hall-1")
        assert as_hall.returncode == 1 and "Traceback" not in as_hall.stderr
        assert "the central server does not take operator_open_sale from this certificate" in as_hall.stderr
        # The operator's certificate: no hall command, not even hello.
        link = await connect(process.port, pki_dir, OPERATOR)
        with pytest.raises(amp.UnhandledCommand):
            await link.hello("hall-1")
        link.transport.loseConnection()  # type: ignore[union-attr]
        # A terminal's certificate is cut at the handshake.
        as_terminal = await operator.run("games", name="term-1")
        assert as_terminal.returncode == 1 and as_terminal.stderr.startswith("Error: ")
        assert len(journal(config)) == before, "nothing was journaled"
        listed = await operator.run("games")
        assert listed.returncode == 0 and listed.stdout.startswith("net-1: scheduled")
    finally:
        process.stop()


@pytest_twisted.ensureDeferred
async def test_an_operator_command_that_cannot_be_sent_says_why_in_one_line(tmp_path: Path) -> None:
    process, pki_dir, _ = start(tmp_path)
    operator = Operator(tmp_path, process, pki_dir)
    try:
        closed = await operator.run("games", server="127.0.0.1:1")
        assert closed.returncode == 1
        assert closed.stderr.startswith("Error: cannot reach the central server at 127.0.0.1:1: ")
        assert len(closed.stderr.splitlines()) == 1
        bad = await operator.run("games", server="no-port")
        assert bad.stderr == "Error: --server is HOST:PORT (central.acme.net:7310), not 'no-port'\n"
        nobody = await operator.run("games", name="nobody")
        assert nobody.returncode == 1 and "Error: the operator's certificate cannot be used" in nobody.stderr
    finally:
        process.stop()

"""Recovery (R92.3, R96.4): ``kill -9`` the real central server during the sale or the draw,
start it again on the same folder, and every game resumes from its journal.

Each run starts ``bingo central serve`` (the ``central`` command group, as the ``bingo``
command runs it) in a child process, buys cards over mutual TLS as hall ``hall-1``
(some purchases still in flight when the kill comes), and sends SIGKILL at a moment drawn
from the run's seed: during the sale, or after a few balls.  Then:

* the journal the dead process left verifies (chain, signatures, signed head), and the
  game rebuilt from it is the state before the kill;
* the restarted server serves that state: the same phase or later, the same deadline,
  the same balls first; every purchase answered before the kill gets the same answer,
  word for word, when resent; every purchase in flight is decided exactly once;
* its timers run from the journaled times: the sale closes at its journaled deadline,
  the next ball comes one interval after the last journaled one.

Two runs are in every run of the suite; the campaign adds 8 (``-m campaign``). The
20-kill campaign of the central server, with real halls and terminals around it, is
``tests/simulation/test_kill_campaign.py``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task

from central_server.config import load_config
from central_server.module import game_record
from central_server.domain.game import CentralGame
from central_server.store import load_series
from protocol.records.central import GAME_RECORDS, CentralSaleClosed
from server_kit.db.database import create
from server_kit.journal import table
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from tests.central_server.support import CentralProcess, HallClient, config_text, connect, make_pki, until

pytestmark = [pytest.mark.integration]

CAMPAIGN_RUNS = 8


def journaled_game(config_path: Path) -> tuple[CentralGame | None, int]:
    """The game as the journal in the folder has it (verified first), and the record count."""
    config = load_config(config_path)
    engine = create(config.database_url)
    try:
        count = Journal(engine, load_journal_key(config.journal_key), head=config.journal_head).verify()
        events = [
            game_record(r)
            for r in table.read(engine) if r.type in GAME_RECORDS
        ]
        library = load_series(engine)
    finally:
        engine.dispose()
    return (CentralGame.replay(events, library["V1"]) if events else None), count


async def sleep(seconds: float) -> None:
    await task.deferLater(reactor, seconds, lambda: None)


async def hall_link(process: CentralProcess, pki_dir: Path) -> HallClient:
    client = await connect(process.port, pki_dir, "hall-1")
    await client.hello("hall-1")
    return client


async def wait_for(client: HallClient, test: Any, what: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = reactor.seconds() + timeout
    while True:
        game = await client.get_game()
        if test(game):
            return game
        if reactor.seconds() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}; the game is {game}")
        await sleep(0.05)


async def one_run(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    during = "sale" if seed % 2 == 0 else "draw"
    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    config = home / "central.toml"
    config.write_text(config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", opens_after_ms=200))
    process = CentralProcess(config).start()
    answered: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}  # request id -> (arguments, answer)
    in_flight: dict[str, dict[str, Any]] = {}
    try:
        client = await hall_link(process, pki_dir)
        await wait_for(client, lambda g: g["phase"] == "selling", "the sale to open")
        for k in range(rng.randint(1, 4)):
            arguments = {"terminal": f"T{k}", "player": f"p{k}", "count": rng.randint(1, 6)}
            answered[f"a{k}"] = (arguments, await client.buy(f"a{k}", **arguments))
        if during == "draw":
            balls = rng.randint(1, 4)
            await wait_for(client, lambda g: g["ball_count"] >= balls, f"{balls} balls", timeout=90)
        # A burst still in flight when the kill comes: each must be decided once, or not at all.
        burst: list[defer.Deferred[Any]] = []
        for k in range(rng.randint(0, 5)):
            arguments = {"terminal": f"B{k}", "player": f"b{k}", "count": 1}
            in_flight[f"b{k}"] = arguments
            burst.append(client.buy(f"b{k}", **arguments).addErrback(lambda failure: None))
        await sleep(rng.uniform(0, 0.3))
        process.kill()
        await defer.DeferredList(burst)
    finally:
        process.kill()

    before, _ = journaled_game(config)
    assert before is not None
    for request, (arguments, answer) in answered.items():
        decided = before.decision_for("hall-1", request)
        assert decided is not None and decided.decision == answer["decision"], "an answered purchase is in the journal as answered"

    process = CentralProcess(config).start()
    try:
        client = await hall_link(process, pki_dir)
        now = await client.get_game()
        assert now["closes_at_ms"] == before.closes_at_ms, "the deadline is the journaled one"
        balls = await client.call("get_balls", game_id="net-1", hall_id="hall-1", after_count=0)
        assert balls["balls"][: len(before.balls)] == before.balls
        for request, (arguments, answer) in answered.items():
            assert await client.buy(request, **arguments) == answer, "a resend gets its first answer"
        for request, arguments in in_flight.items():
            again = await client.buy(request, **arguments)
            earlier = before.decision_for("hall-1", request)
            if earlier is not None:
                assert again["decision"] == earlier.decision, "a purchase decided before the kill stays decided"
        # The timers run from the journaled times.
        if str(before.phase) == "selling":
            await wait_for(client, lambda g: g["phase"] != "selling", "the sale to close at its deadline")
        else:
            await wait_for(client, lambda g: g["ball_count"] > len(before.balls) or g["phase"] == "closed",
                           "the next ball")
    finally:
        process.stop()

    after, _ = journaled_game(config)
    assert after is not None and after.events[: len(before.events)] == before.events
    closes = [e for e in after.events if isinstance(e, CentralSaleClosed)]
    if closes:
        assert closes[0].closed_at_ms >= after.closes_at_ms, "nothing closes the sale before its deadline"
    assert after.balls[: len(before.balls)] == before.balls
    if len(after.balls) > len(before.balls) and before.last_ball_at_ms is not None:
        next_ball = next(e for e in after.events if getattr(e, "ball_count", 0) == len(before.balls) + 1)
        assert next_ball.drawn_at_ms >= before.last_ball_at_ms + 1000  # type: ignore[attr-defined]


@pytest.mark.req("R96.4")
@pytest.mark.parametrize("seed", [0, 1])
@pytest_twisted.ensureDeferred
async def test_a_central_server_killed_during_the_sale_or_the_draw_resumes_from_its_journal(
    tmp_path: Path, seed: int
) -> None:
    await one_run(tmp_path, seed)


@pytest.mark.req("R96.4")
@pytest.mark.campaign
@pytest.mark.parametrize("seed", range(100, 100 + CAMPAIGN_RUNS))
@pytest_twisted.ensureDeferred
async def test_kill_campaign_the_central_server_resumes_every_time(tmp_path: Path, seed: int) -> None:
    """Part of ./test.sh (CI runs every campaign); skip it while iterating with -m "not campaign"."""
    await one_run(tmp_path, seed)

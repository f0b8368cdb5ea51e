"""The programme in a real process (R88.5, R96.4): ``bingo central serve`` plays its games one after
another, each carrying in what the one before it carried out, and a ``kill -9`` between a game's end
and the next one's scheduling leaves the next game scheduled once, with the right carries.

The central server runs as the operator runs it, with a ``[programme]`` and no ``[[games]]``; two
halls' links (the tests' AMP client with the hall certificates) buy cards at partial stakes, each
prize paid whole among its winners by stake (R93.13); the operator's commands are ``bingo central
...`` processes.  Each start after a kill stops play (R92.5e): the operator's ``bingo central verify``
lets the next game's sale open.

1. Game 1 is played; the moment its close is in the journal the process gets SIGKILL (the next
   game's scheduling is then in flight, or just committed: the journal says which), and is started
   again: one game follows game 1, with game 1's carries.
2. The operator pauses the programme during game 2, which sells nothing and so ends at its sale's
   close: nothing follows it.  SIGKILL there, in the window a pause holds open; started again,
   still paused; the operator resumes and the process is killed again at once: game 3 follows game
   2 once, with its carries.  Bad commands on the way are refused with a code and change nothing.
3. Game 3 is played; the day's audit export chains the three games and ``bingo audit verify`` holds
   it: the journal segment signed and chained, the replay of the scenario equal to the result.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
import time
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import task, threads

from central_server.edge import OPERATOR_COMMANDS
from central_server.module import game_record
from protocol.records.central import CentralGameScheduled
from server_kit.amp.commands import CommandFailed
from tests.central_server.support import (
    OPERATOR,
    CentralProcess,
    HallClient,
    bingo_central,
    config_text,
    connect,
    make_pki,
    programme_text,
    until,
)
from tests.central_server.test_operator import Operator, journal

pytestmark = [pytest.mark.integration]

#: A game's draw at a ball a second, from its sale's close to its bingo: bounded generously.
GAME_S = 240.0


def scheduled(config: Path) -> list[CentralGameScheduled]:
    out = []
    for record in journal(config):
        if record.type == CentralGameScheduled.type:
            event = game_record(record)
            assert isinstance(event, CentralGameScheduled)
            out.append(event)
    return out


def ends(config: Path) -> dict[str, dict[str, int]]:
    return {r.payload["game_id"]: dict(r.payload["carries"]) for r in journal(config)
            if r.type in ("central_game_closed", "central_game_not_played")}


def carried_in(event: CentralGameScheduled) -> dict[str, int]:
    return {p["pattern"]["name"]: p["carry_in_cents"] for p in event.config["prizes"]}


def kill_at_the_close(process: CentralProcess, database: Path, game_id: str) -> None:
    """SIGKILL the moment ``game_id``'s close is committed (polling the journal, on a thread)."""
    deadline = time.monotonic() + GAME_S
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
    try:
        while time.monotonic() < deadline:
            try:
                found = connection.execute(
                    "SELECT payload FROM journal WHERE type = 'central_game_closed'").fetchall()
            except sqlite3.OperationalError:
                found = []  # the writer holds the database for a moment
            if any(json.loads(payload)["game_id"] == game_id for (payload,) in found):
                process.kill()
                return
            time.sleep(0.002)
    finally:
        connection.close()
    raise AssertionError(f"game {game_id} did not close within {GAME_S} s")


class Halls:
    """Two halls' links to the running process, buying in each sale they hear of."""

    def __init__(self, process: CentralProcess, pki_dir: Path) -> None:
        self.process = process
        self.pki_dir = pki_dir
        self.links: list[HallClient] = []

    async def link(self) -> "Halls":
        self.close()
        for hall in ("hall-1", "hall-2"):
            client = await connect(self.process.port, self.pki_dir, hall)
            await client.hello(hall)
            self.links.append(client)
        return self

    def close(self) -> None:
        for link in self.links:
            if link.transport is not None:
                link.transport.loseConnection()
        self.links = []

    async def verify(self, operator: Operator) -> None:
        """The operator's verification after a start that followed a kill (R92.5e), the halls linked and
        saying hello every 2 s as their links do; it must pass."""
        await self.link()
        heartbeat = task.LoopingCall(lambda: [link.hello(hall) for link, hall in zip(self.links, ("hall-1", "hall-2"))])
        heartbeat.start(2.0)
        try:
            done = await operator.run("verify")
        finally:
            heartbeat.stop()
        assert done.returncode == 0 and done.stdout.startswith("verification passed"), (done.stdout, done.stderr)

    async def buy(self, game_id: str) -> int:
        """Each hall buys four times, four cards at stakes of 50, 33, 25 and 10%; the cards bought."""
        await until(lambda: all(any(p["game_id"] == game_id for p in link.pushed("sale_opened")) for link in self.links),
                    f"both halls to hear that {game_id}'s sale is open")
        cards = 0
        for link, hall in zip(self.links, ("hall-1", "hall-2")):
            for k, pct in enumerate((50, 33, 25, 10)):
                answer = await link.buy(f"{game_id}.{hall}.{k}", hall=hall, terminal=f"T{k}", player=f"{hall}.p{k}",
                                        count=4, pct=pct, game=game_id)
                assert answer["status"] == "confirmed", answer
                cards += answer["card_count"]
        return cards


@pytest.mark.req("R96.4")
@pytest.mark.timeout(900)
@pytest_twisted.ensureDeferred
async def test_the_programme_chains_its_games_and_a_kill_between_a_close_and_the_next_scheduling_schedules_it_once(
    tmp_path: Path,
) -> None:
    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    config = home / "central.toml"
    database = home / "central.sqlite3"
    # Each sale is open 30 s: a restarted process on a loaded machine, and the halls linking
    # again, must still find game 3's sale open (with 10 s, a restart that took longer let game 3
    # close unsold and the programme schedule a fourth).
    config.write_text(config_text(home, pki_dir, f"sqlite:///{database}", games=(), cards=120,
                                  programme=programme_text(opens_after_ms=2_000, sale_ms=30_000, line_carry=14)))
    process = CentralProcess(config).start()
    operator = Operator(tmp_path, process, pki_dir)
    halls = Halls(process, pki_dir)
    try:
        # 1. Game 1 played; SIGKILL as its close is committed; started again.
        await halls.link()
        (first,) = scheduled(config)
        assert carried_in(first) == {"line": 14, "bingo": 0} and first.after_game is None
        assert await halls.buy(first.game_id) == 32
        await threads.deferToThread(kill_at_the_close, process, database, first.game_id)
        in_flight = len(scheduled(config)) == 1  # the kill came before the next game's record was committed
        process.start()
        await until(lambda: len(scheduled(config)) == 2, "the restarted server to schedule the next game")
        one, second = scheduled(config)
        carries = ends(config)[first.game_id]
        assert carries == {"line": 0, "bingo": 0}, "each prize won is paid whole: nothing carries (R93.13)"
        await halls.verify(operator)
        assert second.after_game == first.game_id and dict(second.carries_taken or {}) == carries == carried_in(second)
        print(f"killed at game 1's close: the next game's scheduling was {'in flight' if in_flight else 'committed'}")

        # 2. Paused during game 2, which sells nothing; killed after its close, resumed, killed again.
        await halls.link()
        paused = await operator.run("pause", "--reason", "the regulator's visit")
        assert paused.returncode == 0, paused.stderr
        assert paused.stdout == (f"the programme is paused: it schedules no game until it is resumed; the chain's "
                                 f"last game, {second.game_id}, plays on\n")
        before = len(journal(config))
        refusals = [  # (the command, the certificate, what it is told)
            (("pause", "--reason", "again"), "olga",
             "refused (not_now): the programme is already paused (the regulator's visit)"),
            (("resume",), "hall-1", "Error: the central server does not take operator_resume_programme"),
            (("schedule-game", "--price-cents", "500"), "olga",
             "refused (bad_config): price_cents: 500 cents is above the maximum price the regulator approved, "
             "200 cents (R93.5)"),
            (("schedule-game", "--game-id", first.game_id), "olga",
             f"refused (not_now): there is already a network game {first.game_id}; choose another id"),
            (("schedule-game", "--game-id", "a b"), "olga", "Error: game_id may not hold ' '"),  # not even sent
        ]
        for arguments, name, said in refusals:
            refused = await operator.run(*arguments, name=name)
            assert refused.returncode in (1, 2) and refused.stderr.startswith(said), (arguments, refused.stderr)
        # What the tool would not send, sent by hand with the operator's certificate.
        link = await connect(process.port, pki_dir, OPERATOR)
        try:
            with pytest.raises(CommandFailed) as bad:
                await link.callRemote(OPERATOR_COMMANDS["operator_pause_programme"], reason="")
            assert bad.value.code == "bad_argument"
        finally:
            link.transport.loseConnection()  # type: ignore[union-attr]
        records = journal(config)[before:]
        refused_on_file = [r.payload for r in records if r.type == "central_command_refused"]
        assert [(p["code"], p["peer"], p["actor"]["role"]) for p in refused_on_file] == [
            ("not_now", OPERATOR, "operator"), ("bad_config", OPERATOR, "operator"), ("not_now", OPERATOR, "operator"),
            ("bad_argument", OPERATOR, "operator"),
        ], "each refusal the server saw is on file, with the operator's name"
        game_2 = {"central_sale_opened", "central_sale_closed", "central_game_closed"}
        assert {r.type for r in records} <= {"central_command_refused"} | game_2, "and nothing else changed"
        await until(lambda: second.game_id in ends(config), f"{second.game_id} to end at its sale's close", GAME_S)
        status = await operator.run("programme")
        assert status.returncode == 0, status.stderr
        assert f"the chain's last game: {second.game_id} (closed, carried out" in status.stdout
        assert "no game is scheduled now: the programme is paused (the regulator's visit)" in status.stdout
        assert len(scheduled(config)) == 2
        process.kill()  # between game 2's close and game 3's scheduling, held open by the pause
        process.start()
        await halls.verify(operator)
        status = await operator.run("programme", "--json")
        assert json.loads(status.stdout)["state"] == "paused" and len(scheduled(config)) == 2
        resumed = await operator.run("resume")
        assert resumed.returncode == 0, resumed.stderr
        third_id = resumed.stdout.removeprefix("the programme is running; ").removesuffix(" is scheduled\n")
        process.kill()  # at once: the game the answer named is committed, and only once
        process.start()
        await halls.verify(operator)
        one, two, third = scheduled(config)
        assert third.game_id == third_id and third.after_game == second.game_id
        assert dict(third.carries_taken or {}) == ends(config)[second.game_id] == carries == carried_in(third), \
            "a game that sold nothing passes its carries on untouched"

        # 3. Game 3 played to its end.
        await halls.buy(third.game_id)
        await until(lambda: third.game_id in ends(config), f"{third.game_id} to be played", GAME_S)
    finally:
        halls.close()
        process.stop()

    # The day's audit export chains the three games, and verifies with nothing but its files.
    closed = {r.payload["game_id"]: r.time_ms for r in journal(config) if r.type == "central_game_closed"}
    days = {datetime.datetime.fromtimestamp(closed[g.game_id] / 1000, datetime.timezone.utc).date().isoformat()
            for g in (first, second, third)}
    day = max(days)
    out = tmp_path / "audit"
    exported = await threads.deferToThread(bingo_central, "audit", "export", "--day", day, "--out", str(out),
                                           tmp_path=tmp_path, env={"BINGO_HOME": str(home)})
    assert exported.returncode == 0, exported.stderr
    chain = " -> ".join(g.game_id for g in (first, second, third))
    if len(days) == 1:  # not across midnight
        assert f"chain: {chain}: each game takes the carries of the one before it (R88.5)" in exported.stdout
        assert f"left out: {second.game_id} (no card was in play)" in exported.stdout
    verified = await threads.deferToThread(bingo_central, "audit", "verify", str(out), tmp_path=tmp_path)
    assert verified.returncode == 0, verified.stderr
    if len(days) == 1:
        assert verified.stdout.rstrip().endswith(f"the carries chain through 3 game(s) of the programme ({chain})")

"""A real ``bingo hall serve --demo`` plays whole games with pots in play; ``bingo audit export``
on its folder writes a day that ``bingo replay`` recomputes to the hall's own result, and
whose journal segment verifies against the key beside it (R92.3, R95.3, R96.4).

The hall's ``[prizes]`` fund a superbingo and the jackpot, which the demo's room chief puts
in play (R89, R91): the replay and ``bingo audit verify`` agree with what the hall paid
with the pots and the claim pause in play (R85.6).
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from hall_server.audit.folder import FILES, read_journal, verify_segment
from tests.crash.wire import LiveSocket, sign_in_cookie
from tests.support.waiting import wait_until
from tests.web.conftest import PASSWORD, HallProcess, HttpClient

WHOLE_GAMES = 2
#: A demo game takes some 25 s on an idle machine; the bound leaves room for a loaded one.
GAMES_BOUND = 480
#: The demo hall's prizes: a superbingo (3%) and the jackpot (10%) beside the line and the bingo (R88.1).
POTS = "line_bp = 1500\nbingo_bp = 4200\nsuperbingo_bp = 300\njackpot = true"


def bingo(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """The ``bingo`` command on the hall's folder, as an inspector runs it."""
    return subprocess.run(
        [sys.executable, "-c", "from hall_server.cli import main; main()", *args],
        cwd=folder, env={**os.environ, "BINGO_HOME": str(folder)}, capture_output=True, timeout=120,
    )


@pytest.mark.integration
@pytest.mark.timeout(GAMES_BOUND + 120)
@pytest.mark.req("R92.3", "R95.3", "R96.4", "R85.6")
def test_a_demo_day_exported_replays_to_what_the_hall_recorded(tmp_path: Path) -> None:
    hall = HallProcess(tmp_path, demo=True)
    config = hall.config.read_text()
    assert "line_bp = 1500\nbingo_bp = 5500" in config
    hall.config.write_text(config.replace("line_bp = 1500\nbingo_bp = 5500", POTS))
    hall.start()
    console = None
    try:
        console = LiveSocket(hall, "/ws", sign_in_cookie(hall, "rosa"))

        def collected() -> list[dict]:
            return [r for r in console.records() if r["type"] == "cards_collected"]

        # Every record reaches the console once committed: wait for the second game's end.
        console.wait_for(lambda: len(collected()) >= WHOLE_GAMES, timeout=GAMES_BOUND)
        day = collected()[0]["payload"]["game_id"][:10]  # a game id starts with its session date
        out = tmp_path / "audit" / day
        exported = bingo(tmp_path, "audit", "export", "--day", day, "--out", str(out))
    finally:
        if console is not None:
            console.close()
        hall.stop()
    assert exported.returncode == 0, exported.stderr.decode()
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)

    replayed = bingo(tmp_path, "replay", str(out / "scenario.json"))
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == (out / "result.json").read_bytes()
    assert len(json.loads(replayed.stdout)["games"]) >= WHOLE_GAMES
    # The pots were in play: the superbingo in the session's first game, the jackpot in every one.
    scenario = json.loads((out / "scenario.json").read_text())
    games = scenario["sessions"][0]["games"]
    assert scenario["format"] == "bingo-replay/2" and scenario["rules"]["superbingo_bp"] == 300
    assert games[0]["superbingo_limit"] == 50 and all(game["jackpot_threshold"] == 42 for game in games)

    key = serialization.load_pem_public_key((out / "public-key.pem").read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    records = list(read_journal(out / "journal.jsonl"))
    assert verify_segment(records, key) == len(records)
    assert records[0].type == "system_verified" and records[0].payload["date"] == day
    # The claim pause was in play: each prize found was closed before the draw went on (R85.6), and
    # the scenario says which cards are paper (whether a paper card won depends on the draw).
    assert sum(r.type == "prize_closed" for r in records) >= 2 * WHOLE_GAMES
    assert any(card.get("paper") for game in games for card in game["cards"])
    assert all(isinstance(game["claims"], list) for game in games)

    # The export holds together with nothing but its files, checked from another folder.
    verified = bingo(tmp_path / "audit", "audit", "verify", day)
    assert verified.returncode == 0, verified.stderr.decode()
    assert verified.stdout.decode().startswith(f"{day}: verified (hall export of {day}): {len(records)} journal records")


def _signed_in(hall: HallProcess, name: str) -> HttpClient:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": PASSWORD})
    assert status == 200, answer
    return client


_TRIES = itertools.count(1)
_ANSWERS: dict[str, Any] = {}


def _command(client: HttpClient, name: str, **args: Any) -> Any:
    """The command's answer, or None when the hall refused it (the demo has the game in another state)."""
    status, answer = client.call("POST", "/api/command", {"id": f"{name}-{next(_TRIES)}", "command": name, "args": args})
    _ANSWERS[name] = (status, answer)
    return answer if status == 200 and answer.get("ok") else None


def _journal(hall: HallProcess, query: str, *args: Any) -> list[Any]:
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as db, db:
        return list(db.execute(query, args))


def _collected(hall: HallProcess) -> list[str]:
    """The hall's games whose cards were collected, played to their end (not refunded), in order."""
    rows = [(t, json.loads(p)["game_id"]) for t, p in _journal(
        hall, "SELECT type, payload FROM journal WHERE type IN ('cards_collected', 'game_refunded') ORDER BY seq")]
    refunded = {game for kind, game in rows if kind == "game_refunded"}
    return [game for kind, game in rows if kind == "cards_collected" and game not in refunded]


@pytest.mark.integration
@pytest.mark.timeout(2 * GAMES_BOUND + 240)
@pytest.mark.req("R92.3", "R96.4")
def test_days_the_regulator_cannot_replay_the_demo_run_twice_on_one_date_exports_and_replays(tmp_path: Path) -> None:
    """The README's path: the demo plays, its session is closed from the console, and the demo is started
    again the same date, which opens a second session.  `bingo audit export` writes the date's two sessions
    (bingo-replay/3); `bingo replay` prints its result.json byte for byte and `bingo audit verify` passes."""
    hall = HallProcess(tmp_path, demo=True)
    hall.start()
    try:
        rosa, admin = _signed_in(hall, "rosa"), _signed_in(hall, "admin")
        announced = wait_until(lambda: _command(rosa, "announce_last_game"), GAMES_BOUND,
                               "a game on sale to announce as the session's last", interval=0.25,
                               seen=lambda: _ANSWERS.get("announce_last_game"))
        ((payload,),) = _journal(hall, "SELECT payload FROM journal WHERE seq = ?", announced["records"][0]["seq"])
        last_game = json.loads(payload)["game_id"]
        wait_until(lambda: last_game in _collected(hall), GAMES_BOUND, f"game {last_game}'s cards collected",
                   interval=0.25, seen=lambda: _collected(hall))
        assert _command(rosa, "count_balls", stage="closing", balls_present=list(range(1, 91)),
                        witnesses=["A player"]), _ANSWERS["count_balls"]
        assert _command(rosa, "sign_session_closing") and _command(admin, "sign_session_closing"), _ANSWERS
    finally:
        hall.stop()
    day = last_game[:10]  # a game id starts with its session date
    assert last_game.startswith(f"{day}-s1-")
    hall.start()  # the demo again: the session is closed, so it verifies and opens the next one
    try:
        second = wait_until(lambda: [g for g in _collected(hall) if "-s2-" in g], GAMES_BOUND,
                            "a game of the second session collected", interval=0.25, seen=lambda: _collected(hall))
    finally:
        hall.stop()
    assert second[0].startswith(f"{day}-s2-"), f"the second session is dated {second[0][:10]}, not {day}"

    out = tmp_path / "audit" / day
    exported = bingo(tmp_path, "audit", "export", "--day", day, "--out", str(out))
    assert exported.returncode == 0, exported.stderr.decode()
    scenario = json.loads((out / "scenario.json").read_text())
    assert scenario["format"] == "bingo-replay/3"
    assert [(s["date"], s["session"]) for s in scenario["sessions"]] == [(day, 1), (day, 2)]
    result = json.loads((out / "result.json").read_text())
    assert [f"{g['date']}-s{g['session']}-g{g['game']}" for g in result["games"]] == _collected(hall)
    replayed = bingo(tmp_path, "replay", str(out / "scenario.json"))
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == (out / "result.json").read_bytes()
    verified = bingo(tmp_path / "audit", "audit", "verify", day)
    assert verified.returncode == 0, verified.stderr.decode()
    assert verified.stdout.decode().startswith(f"{day}: verified (hall export of {day}): ")

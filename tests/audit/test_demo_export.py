"""A real ``bingo hall serve --demo`` plays whole games with pots in play; ``bingo audit export``
on its folder writes a day that ``bingo replay`` recomputes to the hall's own result, and
whose journal segment verifies against the key beside it (R92.3, R95.3, R96.4).

The hall's ``[prizes]`` fund a superbingo and the jackpot, which the demo's room chief puts
in play (R89, R91): the replay and ``bingo audit verify`` agree with what the hall paid
with the pots and the claim pause in play (R85.6).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from hall_server.audit.folder import FILES, read_journal, verify_segment
from tests.crash.wire import LiveSocket, sign_in_cookie
from tests.web.conftest import HallProcess

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

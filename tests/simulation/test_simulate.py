"""``bingo central simulate`` end to end: a real central server, two real hall servers, ten terminals, two games.

The command runs as a user runs it (the ``bingo`` command, ``central`` found through
the ``bingo.commands`` entry point) in a child process, and prints its summary.  The
test checks the summary against what the processes left on file, read here on their
own: the central server's journal (every confirmation, every card won), each hall's
journal (every capture, every credit paid) and the terminal workers' reports (every
answer a terminal got); and the central server's audit export of the day, replayed by
``bingo replay``, equals the result the games recorded.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server_kit.db.database import create
from server_kit.journal import table

pytestmark = [pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]


def records(database: Path) -> list[Any]:
    engine = create(f"sqlite:///{database}", create_folder=False)
    try:
        return list(table.read(engine))
    finally:
        engine.dispose()


def bingo(*arguments: str, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", *arguments],
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.req("R93.6", "R93.8", "R85.9")
@pytest.mark.timeout(900)
def test_simulate_two_halls_of_five_terminals_two_games_and_the_money_of_each_hall_adds_up(tmp_path: Path) -> None:
    """R93.6/R93.8: every purchase confirmed once or refused with no charge; R85.9: winners paid the prizes."""
    home = tmp_path / "sim"
    done = bingo("central", "simulate", "--halls", "2", "--terminals", "5", "--games", "2", "--home", str(home),
                 "--seed", "7", timeout=840)
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n{done.stdout[-3000:]}"
    summary = json.loads(done.stdout)
    assert summary["ok"], summary["problems"]
    assert all(summary["checks"].values()) and len(summary["checks"]) >= 10

    purchases = summary["purchases"]
    assert purchases["requested"] >= 10 and purchases["unanswered"] == 0
    assert purchases["requested"] == purchases["confirmed"] + purchases["refused"]
    games = list(summary["games"])  # the programme's two games, named by its id scheme: sim-<day>-<n>
    assert len(games) == 2 and all(re.fullmatch(r"sim-\d{4}-\d\d-\d\d-\d+", g) for g in games), games
    assert all(game["phase"] == "closed" and game["balls"] >= 1 for game in summary["games"].values())
    assert all(summary["cpu_s"][part] > 0 for part in ("central", "halls", "terminals"))

    central = records(home / "central" / "central.sqlite3")
    confirmed = [r.payload for r in central if r.type == "central_purchase_confirmed"]
    won = [r.payload for r in central if r.type == "central_card_won"]
    # R88.5: the programme scheduled the second game with what the first carried out.
    first, second = [r.payload for r in central if r.type == "central_game_scheduled"]
    (closed,) = [r.payload for r in central if r.type == "central_game_closed" and r.payload["game_id"] == games[0]]
    assert (second["chain"], second["after_game"], second["carries_taken"]) == ("programme", games[0], closed["carries"])
    assert {p["pattern"]["name"]: p["carry_in_cents"] for p in second["config"]["prizes"]} == closed["carries"]
    balls = {g: [r.payload["ball"] for r in central if r.type == "central_ball_drawn" and r.payload["game_id"] == g]
             for g in summary["games"]}
    assert won, "the games had winners"
    assert summary["cards_in_play"] == sum(c["card_count"] for c in confirmed)
    terminal_answers = [p for w in sorted((home / "terminals").glob("worker-*[0-9].json"))
                        for p in json.loads(w.read_text())["purchases"]]
    assert len(terminal_answers) == purchases["requested"]

    for hall_id, hall in summary["halls"].items():
        assert hall["terminals"] == 5
        mine = [c for c in confirmed if c["hall_id"] == hall_id]
        answered = [p for p in terminal_answers if p["hall"] == hall_id and p["outcome"] == "confirmed"]
        # Confirmed purchases x stake = collections, at the terminals, the hall and the central server.
        assert hall["collections_cents"] == sum(c["card_count"] * c["stake_cents"] for c in mine)
        assert hall["collections_cents"] == sum(p["cards"] * p["stake_cents"] for p in answered)
        assert hall["cards"] == sum(c["card_count"] for c in mine)
        # Winners paid = prizes: what the central server awarded this hall's cards, paid once each.
        hall_records = records(home / hall_id / "hall.sqlite3")
        paid = [r.payload for r in hall_records if r.type == "network_credit_paid"]
        awarded = [w for w in won if w["hall_id"] == hall_id]
        assert hall["winners"] == len(awarded) == sum(summary["games"][g]["winners"].get(hall_id, 0)
                                                      for g in summary["games"])
        assert hall["prizes_cents"] == sum(w["payment_cents"] for w in awarded) == hall["prizes_paid_cents"]
        assert sorted((c["game_id"], c["seq"]) for c in paid) == sorted((w["game_id"], w["credit_seq"]) for w in awarded)
        assert hall["owed_to_network_cents"] == hall["collections_cents"] - hall["prizes_paid_cents"]
        for game_id, drawn in balls.items():
            here = [r.payload["ball"] for r in hall_records
                    if r.type == "network_ball_drawn" and r.payload["game_id"] == game_id]
            assert here == drawn == summary["games"][game_id]["drawn"], f"{hall_id} shows the central server's balls"

    # The audit export of the central server's day, replayed, equals what the games recorded (FORMATS.md 3).
    day = datetime.datetime.fromtimestamp(max(r.time_ms for r in central if r.type == "central_game_closed") / 1000,
                                          datetime.timezone.utc).date().isoformat()
    export = tmp_path / "audit"
    exported = bingo("audit", "export", "--day", day, "--out", str(export), timeout=300,
                     env={"BINGO_HOME": str(home / "central")})
    assert exported.returncode == 0, exported.stderr
    (chain,) = [line for line in exported.stdout.splitlines() if line.startswith("chain: ")]
    assert chain.startswith((f"chain: {games[0]} -> {games[1]}: ", f"chain: {games[1]}: ")), chain  # across midnight
    scenario = json.loads((export / "scenario.json").read_text())
    cards = [c for session in scenario["sessions"] for g in session["games"] for c in g["cards"]]
    assert len(cards) == summary["cards_in_play"] and {c["id"].split("/")[0] for c in cards} <= set(summary["halls"])
    replayed = bingo("replay", str(export / "scenario.json"), timeout=300)
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == json.loads((export / "result.json").read_text())

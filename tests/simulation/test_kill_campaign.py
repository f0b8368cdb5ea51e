"""Kill campaigns across real processes (R93.6, R93.8, R96.4, R85.9): ``kill -9`` a hall server, or
the central server, at random moments of the sales and the draws, start it again, and nothing is lost.

Each campaign is one simulation (:mod:`simulation.network`): a real central server, two
real hall servers linked to it over mutual TLS, three headless terminals per hall in
two worker processes buying at random moments of every sale, and several small network
games, each sale opening while the game before draws (the central server's campaign: one
after another, as a programme schedules them).  Twenty runs (ten for the central server),
each at a random moment: SIGKILL to the victim (a hall drawn at random, or the central
server), the process started again on the same folder and port (which verifies its
whole journal before it serves), its verification run (R92.5e: the hall's room chief's, or the
operator's ``bingo central verify``, which must pass before anything sells again; a restart of the
central server declares the games under way not played, every stake returned), and then:

* every hall links again and catches up: its balls of every game are the central
  server's, in order, up to the ball the central server had drawn when it came back;
* no credit stays held at a hall for a game whose sale has closed.

After the last run every game is played to its end, every process is stopped and the
simulation's checks are held against the three sources (terminals, hall journals,
central journal): every purchase a terminal asked for was confirmed once, or refused
with no charge; the balls are identical in every hall; every prize was paid once, to
the player who bought the card; every player's balance is what was loaded, less what
was captured, plus what was paid; no credit is held.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from simulation.network import Plan, Simulation, missed
from simulation.processes import SimulationError, wait_for

pytestmark = [pytest.mark.integration]

CAMPAIGN_RUNS = 20


def moment(sim: Simulation) -> set[str]:
    """What the network games are doing now: ``sale`` if a sale is open, ``draw`` if a game is drawing."""
    phases = {g.phase for g in sim.central_facts.refresh().games.values()}
    found = set()
    if "selling" in phases:
        found.add("sale")
    if phases & {"sale_closed", "drawing"}:
        found.add("draw")
    return found


def still_to_come(sim: Simulation) -> set[str]:
    """The moments the games have still to go through: a sale while a game is not yet past its sale, a draw
    while a game is not yet over."""
    games = sim.central_facts.refresh().games.values()
    phases = {g.phase for g in games}
    coming = set()
    if len(games) < sim.plan.games or phases & {"scheduled", "selling"}:
        coming |= {"sale", "draw"}
    if phases & {"sale_closed", "drawing"}:
        coming.add("draw")
    return coming


def caught_up(sim: Simulation, hall_index: int, drawn: dict[str, int]) -> bool:
    """The hall holds every game's balls as the central server drew them, at least ``drawn[game]`` of them."""
    central = sim.central_facts.refresh()
    facts = sim.halls[hall_index].facts.refresh()
    for game_id, count in drawn.items():
        mine = facts.games.get(game_id)
        if mine is None and (count == 0 or missed(central.games[game_id], facts.hall_id)):
            continue  # not on sale yet, or the hall was away from its sale's opening to its close
        balls = central.games[game_id].balls
        if mine is None or len(mine.balls) < count or mine.balls != balls[: len(mine.balls)]:
            return False
    return True


def state(sim: Simulation, hall_index: int) -> str:
    """Each game's balls at the central server and at the hall, for a failure's message."""
    central = sim.central_facts.refresh()
    facts = sim.halls[hall_index].facts.refresh()
    return "; ".join(f"{g}: {game.phase}, central {len(game.balls)} balls, hall "
                     f"{len(facts.games[g].balls) if g in facts.games else 'never heard of it'}"
                     for g, game in central.games.items())


def nothing_held_after_the_sale(sim: Simulation, hall_index: int) -> bool:
    central = sim.central_facts.refresh()
    facts = sim.halls[hall_index].facts.refresh()
    closed = [g for g, game in central.games.items() if game.phase not in ("scheduled", "selling")]
    return not any(facts.pending_holds(g) for g in closed)


#: Kills of the single central server: each ends the game under way (R92.5e), so each needs a game of
#: its own; the programme plays one more than the kills, one after another (the next is scheduled once
#: the last is over), so a slow run never finds every game already played, and the last is played whole.
CENTRAL_RUNS = 10

#: The games of a hall's campaign: their sales open every 12 s, so ten runs that wait for a sale
#: find one as long as a run (kill, start, verification, catching up) takes less than about 14 s.
HALL_GAMES = 12


def run_campaign(home: Path, victim: str, seed: int) -> tuple[dict[str, Any], list[set[str]]]:
    rng = random.Random(seed)
    runs = CAMPAIGN_RUNS if victim == "hall" else CENTRAL_RUNS
    plan = Plan(home=home, halls=2, terminals=3, games=HALL_GAMES if victim == "hall" else CENTRAL_RUNS + 1, seed=seed,
                opens_after_ms=3_000, buys=(2, 4), quantities=(1, 4), one_after_another=victim == "central")
    sim = Simulation(plan)
    sim.prepare()
    moments: list[set[str]] = []
    try:
        sim.start()
        sim.open_games()
        wait_for(lambda: moment(sim), 60, "the first sale to open")
        for run in range(runs):
            # Every other kill waits for a sale, the others for a draw; its moment within it is drawn
            # from the seed.  The games' times are the central server's, not the campaign's: on a slow
            # machine the last sales may be over before the last runs, which then kill during a draw.
            wanted = ("sale", "draw")[run % 2]
            if wanted not in still_to_come(sim):
                wanted = "draw"
            wait_for(lambda: wanted in moment(sim), 120, f"run {run}: a game's {wanted}")
            time.sleep(rng.uniform(0.0, 1.0))
            moments.append(moment(sim))
            if victim == "hall":
                index = rng.randrange(len(sim.halls))
                sim.kill_hall(index)
                sim.restart_hall(index)
                back = [index]
            else:
                sim.kill_central()
                sim.restart_central()
                back = list(range(len(sim.halls)))
            drawn = {g: len(game.balls) for g, game in sim.central_facts.refresh().games.items()}
            for index in back:
                try:
                    wait_for(lambda: caught_up(sim, index, drawn), 60, "the hall to catch up on the balls")
                    wait_for(lambda: nothing_held_after_the_sale(sim, index), 60,
                             "the hall to settle every hold of a closed sale")
                except SimulationError as error:
                    raise AssertionError(f"run {run}, {sim.halls[index].hall_id}: {error}; {state(sim, index)}") from None
        sim.wait_played()
        sim.stop()
    except BaseException:
        sim.kill_all()
        raise
    return sim.summary(), moments


@pytest.mark.req("R93.6", "R93.8", "R96.4", "R85.9", "R92.10")
@pytest.mark.campaign
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("victim", ["hall"])
def test_kill_campaign_every_purchase_confirmed_once_or_refused_free_balls_identical_prizes_paid_once(
    tmp_path: Path, victim: str
) -> None:
    """Twenty kill -9 of a hall during sales and draws (R93.6, R93.8, R96.4, R85.9); the central
    server's campaign is in ``test_kill_campaign_central.py``, on a worker of its own."""
    check_campaign(tmp_path, victim)


def check_campaign(tmp_path: Path, victim: str) -> None:
    """The campaign against ``victim`` ("hall" or "central"), and everything it must leave true."""
    summary, moments = run_campaign(tmp_path / "sim", victim, seed=41 if victim == "hall" else 42)
    assert summary["ok"], summary["problems"]
    assert summary["restarts"][{"hall": "halls", "central": "central"}[victim]] == len(moments)
    assert sum("sale" in m for m in moments) >= 3 and sum("draw" in m for m in moments) >= 3, moments
    purchases = summary["purchases"]
    assert purchases["unanswered"] == 0 and purchases["confirmed"] > 0
    assert purchases["requested"] == purchases["confirmed"] + purchases["refused"]
    phases = [game["phase"] for game in summary["games"].values()]
    if victim == "hall":
        assert all(phase == "closed" for phase in phases), phases
    else:  # each restart of the single central server interrupted the games under way (R92.5e)
        assert set(phases) <= {"closed", "not_played"} and "not_played" in phases, phases

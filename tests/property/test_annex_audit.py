"""Random days with joint games (R3.5.b) played by both halls of a pair, each hall's day exported by
``bingo audit export`` and replayed by ``bingo replay``: each hall's recorded money and the replay agree
to the cent, and ``bingo audit verify`` finds every export whole.

Each example draws the prize rules, one or two joint games (paper and virtual cards at any
stake in both rooms) and, around them, games of the main hall's own and of the annex's own
(the main hall carries the rest of a joint game's splits into its next own game, R88.5).
Both halls are the composition the server runs, each with its journal, key, card store and
configuration in a folder of its own; both play the day to its close; each is exported by
the command, the replay of its ``scenario.json`` must give its ``result.json`` byte for
byte, and the check of the folder must pass.

The default run is quick; ``ANNEX_AUDIT_EXAMPLES=200`` in the environment searches longer.
"""

from __future__ import annotations

import dataclasses

import os
import shutil
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hall_server.cli import main
from protocol.replay import replay_json
from protocol.settlement import PrizeRules
from tests.audit.conftest import fast_folder
from tests.audit.halls import GamePlan, Purchase, play_game
from tests.network.joint_halls import ANNEX, DAY, MAIN, JointPlan, open_pair, play_joint_game

EXAMPLES = int(os.environ.get("ANNEX_AUDIT_EXAMPLES", "8"))
purchases = st.builds(Purchase, player=st.integers(0, 2), terminal=st.integers(0, 1), quantity=st.integers(1, 8),
                      stake_pct=st.one_of(st.just(100), st.integers(1, 100)))
joint_plans = st.builds(JointPlan, main_paper=st.integers(1, 40), annex_paper=st.integers(1, 40),
                        main_purchases=st.lists(purchases, max_size=3), annex_purchases=st.lists(purchases, max_size=3),
                        seed=st.integers(0, 2**32))
own_plans = st.builds(GamePlan, paper=st.integers(1, 20), purchases=st.lists(purchases, max_size=2),
                      seed=st.integers(0, 2**32))
RULES = (PrizeRules(1500, 5500), PrizeRules(2000, 5500, superbingo_bp=300), PrizeRules(1200, 5800, jackpot=True))


@dataclass
class Day:
    rules: PrizeRules
    joints: list[JointPlan]
    own: dict[str, list[GamePlan | None]] = field(default_factory=dict)  # hall -> a game (or none) before each joint
    own_after: dict[str, GamePlan | None] = field(default_factory=dict)


@st.composite
def days(draw: st.DrawFn) -> Day:
    joints = draw(st.lists(joint_plans, min_size=1, max_size=2))
    maybe = st.one_of(st.none(), own_plans)
    return Day(
        rules=draw(st.sampled_from(RULES)), joints=joints,
        own={hall: [draw(maybe) for _ in joints] for hall in (MAIN, ANNEX)},
        own_after={hall: draw(maybe) for hall in (MAIN, ANNEX)},
    )


@pytest.mark.req("R3.5.b", "R88.5", "R92.3", "R96.4", "R98")
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(days())
def test_R3_5_b_each_hall_s_day_with_joint_games_is_exported_replayed_to_the_cent_and_verified(day: Day) -> None:
    folder = fast_folder()
    try:
        main_hall, annex_hall, relay = open_pair(folder, day.rules, stored=True)
        halls = {MAIN: main_hall, ANNEX: annex_hall}
        joint_ids = []
        for index, plan in enumerate(day.joints):
            for hall_id, hall in halls.items():
                own = day.own[hall_id][index]
                if own is not None:
                    play_game(hall, own)
            joint_ids.append(play_joint_game(main_hall, annex_hall, relay, plan))
        for hall_id, hall in halls.items():
            after = day.own_after[hall_id]
            if after is None and any(own is not None for own in day.own[hall_id]):
                after = GamePlan(paper=1)  # a session that played its own games ends with its last (R89, R93.15)
            if after is not None:
                play_game(hall, dataclasses.replace(after, last=True))
            hall.close_day()
        runner = CliRunner()
        for hall_id, hall in halls.items():
            out = folder / f"export-{hall_id}"
            exported = runner.invoke(main, ["audit", "export", "--day", DAY, "--out", str(out)],
                                     env={"BINGO_HOME": str(folder / hall_id)})
            assert exported.exit_code == 0, exported.output
            assert f"{len(joint_ids)} joint game(s) with the partner hall" in exported.output
            scenario = (out / "scenario.json").read_text()
            assert replay_json(scenario) == (out / "result.json").read_text(), hall_id
            verified = runner.invoke(main, ["audit", "verify", str(out)])
            assert verified.exit_code == 0, verified.output
            assert "verified (hall export" in verified.output
    finally:
        shutil.rmtree(folder, ignore_errors=True)

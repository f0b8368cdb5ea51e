"""Random hall days played through the real hall modules, exported by ``bingo audit export`` and
replayed by ``bingo replay``: the hall's recorded money and the replay agree to the cent.

Each example draws the prize rules and one to three session days of one to four games:
paper cards of the hall's series (a second series once the first runs out), virtual
cards bought on terminals at stakes of 1-100%, superbingo, grand superbingo, jackpot
and megabingo games, operator contributions before, during the sale and during the
draw, boosts of the line and bingo from the jackpot's reserve, refunded games, failed terminals, and the carries of the line, the bingo and the
pots between games and between sessions.  The hall is the composition the server runs
(session, ledger, admission, cashier, games, virtual cards) on a real journal on SQLite
with its key, card store and configuration in a folder of its own; each day is exported
with the ``bingo audit export`` command into a folder, and ``scenario.json`` replayed
by :func:`protocol.replay.replay_json` must give ``result.json`` byte for byte.

Both sides compute through :mod:`protocol.settlement`; the check still matters, since
the hall reaches each figure through its commands, records and ledger postings, and the
export reads the journal alone, never the settlement.

The default run is quick (40 examples); ``SETTLEMENT_EXAMPLES=1000`` in the environment
runs a longer search.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hall_server.cli import main
from protocol.replay import replay_json
from protocol.settlement import PrizeRules
from tests.audit.conftest import fast_folder, new_clock
from tests.audit.halls import CHIEF, AuditHall, Contribution, GamePlan, Purchase, play_game, stored_hall
from tests.hall.conftest import result

DATES = ("2026-12-01", "2026-12-02", "2026-12-03")
#: The rules the property proves: the 70% floor, the split and its remainders carried across
#: games and sessions, the superbingo and its last-game rule, the grand superbingo, the operator's
#: limits, the megabingo, the jackpot with its cap, reserve and boosts, refunds, failed terminals,
#: the tax, and the reconstruction of a day from the journal.
REQUIREMENTS = (
    "R88.1", "R88.2", "R88.4-5", "R89", "R89.5", "R90", "R91", "R91.7", "R86.2", "R96.3", "R98", "R92.3", "R96.4",
)


@st.composite
def prize_rules(draw: st.DrawFn) -> PrizeRules:
    superbingo_bp = draw(st.sampled_from([0, 200, 350, 500]))
    megabingo, jackpot = draw(st.booleans()), draw(st.booleans())
    line_bp = draw(st.integers(500, 2500))
    others = line_bp + superbingo_bp + (100 if megabingo else 0) + (1000 if jackpot else 0)
    bingo_bp = draw(st.integers(max(0, 7000 - others), 10000 - others))
    return PrizeRules(line_bp, bingo_bp, superbingo_bp, megabingo, jackpot)


purchases = st.builds(
    Purchase,
    player=st.integers(0, 2),
    terminal=st.integers(0, 1),
    quantity=st.integers(1, 4),
    stake_pct=st.one_of(st.just(100), st.integers(1, 100)),
)
contributions = st.builds(
    Contribution,
    pot=st.sampled_from(["superbingo", "grand_superbingo", "jackpot"]),
    amount_cents=st.sampled_from([1, 777, 50_000, 299_000, 1_499_990]),
    when=st.sampled_from(["before", "selling", "drawing"]),
)
ball_limits = st.one_of(st.just(0), st.integers(42, 90))


@st.composite
def game_plans(draw: st.DrawFn, rules: PrizeRules, last: bool) -> GamePlan:
    bought = draw(st.lists(purchases, max_size=3))
    fail_terminal = bool(bought) and draw(st.integers(0, 4)) == 0
    # A game with no card left after a terminal failure would be refunded; such a game keeps a paper card.
    paper = draw(st.integers(0 if bought and not fail_terminal else 1, 14))
    superbingo = draw(ball_limits) if rules.superbingo_bp else 0
    return GamePlan(
        paper=paper,
        purchases=bought,
        superbingo_limit=superbingo,
        grand_superbingo_limit=0 if superbingo else draw(ball_limits),
        jackpot_threshold=draw(st.sampled_from([0, 40, 41, 42])) if rules.jackpot else 0,
        contributions=draw(st.lists(contributions, max_size=2)),
        quick=draw(st.booleans()),
        seed=draw(st.integers(0, 2**32)),
        fail_terminal=fail_terminal,
        # The announced last game is played to its end (R93.15), so a day has a game to export.
        refund=not last and draw(st.integers(0, 5)) == 0,
        last=last,
        boost=draw(st.sampled_from([(0, 0), (0, 0), (1, 0), (0, 40), (25, 25), (1_000_000, 0)])) if rules.jackpot
        else (0, 0),
    )


@dataclass
class DayPlan:
    date: str
    games: list[GamePlan]


@st.composite
def hall_days(draw: st.DrawFn, rules: PrizeRules) -> list[DayPlan]:
    days = []
    for date in DATES[: draw(st.integers(1, len(DATES)))]:
        count = draw(st.integers(1, 4))
        games = [draw(game_plans(rules, last=k == count - 1)) for k in range(count)]
        days.append(DayPlan(date, games))
    if rules.megabingo:
        # Announced at the end of a day for the next (R90), played in one of its games.
        for day in days[1:]:
            if draw(st.booleans()):
                day.games[draw(st.integers(0, len(day.games) - 1))].megabingo = True
    return days


def play(hall: AuditHall, days: list[DayPlan]) -> None:
    hall.prepare()
    for index, day in enumerate(days):
        hall.open_day(day.date)
        for plan in day.games:
            play_game(hall, plan)
        if index + 1 < len(days) and hall.rules.megabingo:
            # The next day's megabingo pays its whole fund, the fund now being its least (R90).
            hall.attempt(hall.games.announce_megabingo(CHIEF, days[index + 1].date, "21:00"))
        hall.close_day()


def exported_and_replayed(rules: PrizeRules, days: list[DayPlan]) -> None:
    """Play ``days`` in a hall folder, export each day with the command, replay its scenario."""
    home = fast_folder()
    try:
        play(stored_hall(home, new_clock(), rules), days)
        for day in days:
            out = home / "exports" / day.date
            done = CliRunner().invoke(
                main, ["audit", "export", "--day", day.date, "--out", str(out)], env={"BINGO_HOME": str(home)}
            )
            assert done.exit_code == 0, (day.date, done.output)
            replayed = replay_json((out / "scenario.json").read_bytes())
            assert replayed == (out / "result.json").read_text(), day.date
            # The export holds together with nothing but its files (bingo audit verify, R92.3).
            verified = CliRunner().invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
            assert verified.exit_code == 0, (day.date, verified.output)
    finally:
        shutil.rmtree(home, ignore_errors=True)


EXAMPLES = int(os.environ.get("SETTLEMENT_EXAMPLES", "40"))


@pytest.mark.req(*REQUIREMENTS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_hall_days_exported_and_replayed_agree_to_the_cent(data: st.DataObject) -> None:
    rules = data.draw(prize_rules(), label="rules")
    exported_and_replayed(rules, data.draw(hall_days(rules), label="days"))

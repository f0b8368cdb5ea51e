"""Network games exported as audit replay facts agree with the replay (FORMATS.md 2-3, R92.3)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central_server.domain.export import ExportRefused, result, scenario
from central_server.domain.game import FINAL_PHASES, TerminalFailure
from protocol.patterns import BINGO, LINE, TWO_LINES
from protocol.replay import replay_json
from tests.central.conftest import HALLS, LIBRARY, FakeBallSource, Played, config

DAY = "2026-12-01"


def day_of_games(rng: random.Random, games: int) -> list[Played]:
    played_games: list[Played] = []
    carries = {"line": rng.randint(0, 50), "bingo": rng.randint(0, 50)}
    for n in range(games):
        played = Played(config(game_id=f"net-{n}", carries=carries, price_cents=rng.choice([1, 10, 100, 150]))).open()
        for i in range(rng.randint(1, 40)):
            played.buy(f"r{i}", hall=rng.choice(HALLS), terminal=f"t{rng.randint(1, 4)}", player=f"p{rng.randint(1, 5)}",
                       count=rng.randint(1, 8), pct=rng.choice([100, 50, 33, 7]))  # fmt: skip
        if rng.random() < 0.3:  # a terminal fails during the sale: its cards are not in the game
            hall = rng.choice(HALLS)
            played.record(played.game.declare_terminal_failed(TerminalFailure("f", hall, "t1", "dead", "chief"), from_hall=hall, now_ms=played.now))
        played.close()
        order = list(range(1, 91))
        random.Random(rng.randint(0, 10**6)).shuffle(order)
        source = FakeBallSource(order)
        if rng.random() < 0.4:
            # A terminal fails after the close, declared before the first ball and decided a few balls
            # later (R96.3): the house refunds its cards that won nothing meanwhile; the prizes stand.
            received = played.now
            for _ in range(rng.randint(0, 6)):
                if played.game.next_ball_due_ms is not None:
                    played.now = max(played.now, played.game.next_ball_due_ms)
                    played.record(played.game.draw_next(source, played.now))
            hall, terminal = rng.choice(HALLS), f"t{rng.randint(1, 4)}"
            if (hall, terminal) not in played.game.failed_terminals and played.game.phase not in FINAL_PHASES:
                played.record(played.game.declare_terminal_failed(
                    TerminalFailure("g", hall, terminal, "dead", "chief"), from_hall=hall, now_ms=received))
        played.draw_all(source)
        if played.game.sale is not None and played.game.sale.cards_in_play:
            played_games.append(played)
            carries = dict(played.game.carries or {})
    return played_games


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), games=st.integers(1, 3))
@pytest.mark.req("R92.3", "R93.13", "R88.4-5", "R96.3")
def test_the_replay_of_the_exported_facts_equals_what_the_games_recorded(seed: int, games: int) -> None:
    played = day_of_games(random.Random(seed), games)
    if not played:
        return
    facts = scenario(DAY, [p.game for p in played], LIBRARY)
    recorded = result(DAY, [p.game for p in played])
    assert json.loads(replay_json(json.dumps(facts))) == recorded
    ids = [c["id"] for c in facts["sessions"][0]["games"][0]["cards"]]
    assert all(i.split("/")[0] in HALLS and i.split("/")[1].startswith("V1-") for i in ids)


def test_games_the_format_cannot_express_are_refused_with_the_reason() -> None:
    extra = Played(config(patterns=((LINE, 2000), (TWO_LINES, 500), (BINGO, 5000)))).open()
    extra.buy("a", count=10)
    extra.close().draw_all()
    with pytest.raises(ExportRefused, match="net-1 cannot be exported: it plays the pattern\\(s\\) two_lines"):
        scenario(DAY, [extra.game], LIBRARY)
    stopped = Played().open()
    stopped.buy("a")
    stopped.record(stopped.game.declare_not_played("storm", "operator", 0))
    with pytest.raises(ExportRefused, match="declared not played"):
        result(DAY, [stopped.game])
    late = Played().open()
    late.buy("a", count=5)
    late.buy("b", terminal="t2", count=5)
    late.close()
    late.record(late.game.declare_terminal_failed(TerminalFailure("f", "hall-1", "t1", "dead", "chief"), from_hall="hall-1", now_ms=late.now))
    with pytest.raises(ExportRefused, match="has not been played to its bingo"):
        scenario(DAY, [late.game], LIBRARY)
    with pytest.raises(ExportRefused, match="no network game"):
        scenario(DAY, [], LIBRARY)


@pytest.mark.req("R96.3", "R92.3")
def test_N6_a_game_whose_cards_the_house_refunded_after_the_close_stays_in_the_export_and_replays() -> None:
    """Every card of the game refunded by the house after the close (before the first ball): the
    game is in the export with those cards as refunded_after_close, its prizes carry whole, and the
    next game that takes those carries replays too."""
    first = Played(config(game_id="net-1")).open()
    first.buy("a", terminal="t1", count=10)
    first.close()
    first.record(first.game.declare_terminal_failed(
        TerminalFailure("f", "hall-1", "t1", "dead", "chief"), from_hall="hall-1", now_ms=first.now))
    assert first.game.phase.value == "closed" and first.game.cards_in_play == 0
    second = Played(config(game_id="net-2", carries=dict(first.game.carries or {}))).open()
    second.buy("b", terminal="t2", count=6)
    second.close().draw_all(seed=3)
    facts = scenario(DAY, [first.game, second.game], LIBRARY)
    recorded = result(DAY, [first.game, second.game])
    game = facts["sessions"][0]["games"][0]
    assert game["cards"] == [] and len(game["refunded_after_close"]) == 10
    assert game["refunded_after_close"][0] == {"id": "hall-1/V1-1", "stake_pct": 100}
    assert recorded["games"][0]["refunded_after_close_cents"] == 1000
    assert recorded["games"][0]["prizes"]["bingo"]["carry_cents"] == recorded["games"][0]["prizes"]["bingo"]["amount_cents"]
    assert "refunded_after_close_cents" not in recorded["games"][1]
    assert json.loads(replay_json(json.dumps(facts))) == recorded

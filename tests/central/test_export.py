"""Network games exported as audit replay facts agree with the replay (FORMATS.md 2-3, R92.3)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central_server.domain.export import ExportRefused, result, scenario
from central_server.domain.game import FINAL_PHASES, TerminalFailure
from protocol.patterns import BINGO, FOUR_CORNERS, LINE, TWO_LINES, CellsPattern
from protocol.replay import replay_json
from tests.central.conftest import HALLS, LIBRARY, FakeBallSource, Played, config

DAY = "2026-12-01"
#: A day's patterns: the line and the bingo alone, or with others (bingo-replay/4): two lines, the four
#: corners, and a single cell of the grid, a blank on many cards, which is often not won by the bingo.
PATTERN_DAYS = (
    ((LINE, 2000), (BINGO, 5000)),
    ((LINE, 1500), (TWO_LINES, 500), (BINGO, 5000), (FOUR_CORNERS, 1000), (CellsPattern("cell_13", frozenset({13})), 100)),
)


def day_of_games(rng: random.Random, games: int) -> list[Played]:
    played_games: list[Played] = []
    patterns = rng.choice(PATTERN_DAYS)
    carries = {pattern.name: rng.randint(0, 50) for pattern, _ in patterns}
    for n in range(games):
        played = Played(config(game_id=f"net-{n}", carries=carries, patterns=patterns,
                               price_cents=rng.choice([1, 10, 100, 150]))).open()
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
@pytest.mark.req("R92.3", "R93.11", "R93.13", "R88.4-5", "R96.3", "R98")
def test_the_replay_of_the_exported_facts_equals_what_the_games_recorded(seed: int, games: int) -> None:
    played = day_of_games(random.Random(seed), games)
    if not played:
        return
    facts = scenario(DAY, [p.game for p in played], LIBRARY)
    recorded = result(DAY, [p.game for p in played])
    assert json.loads(replay_json(json.dumps(facts))) == recorded
    ids = [c["id"] for c in facts["sessions"][0]["games"][0]["cards"]]
    assert all(i.split("/")[0] in HALLS and i.split("/")[1].startswith("V1-") for i in ids)


@pytest.mark.req("R93.11", "R93.13", "R92.3")
def test_a_day_of_games_with_other_patterns_exports_in_version_4_and_replays_to_what_they_recorded() -> None:
    """Two lines and the four corners beside the line and the bingo (R93.11): the export writes each with
    its share and shape in ``rules.patterns`` and its carry in the opening and the pots, and the replay of the
    facts is the games' own record, prize by prize."""
    patterns = ((LINE, 1500), (TWO_LINES, 500), (BINGO, 5000), (FOUR_CORNERS, 1000))
    first = Played(config(game_id="net-1", patterns=patterns, carries={"four_corners": 7})).open()
    first.buy("a", count=10)
    first.buy("b", hall="hall-2", terminal="t2", count=6, pct=50)
    first.close().draw_all(seed=5)
    second = Played(config(game_id="net-2", patterns=patterns, carries=dict(first.game.carries or {}))).open()
    second.buy("c", count=4)
    second.close().draw_all(seed=9)
    facts = scenario(DAY, [first.game, second.game], LIBRARY)
    recorded = result(DAY, [first.game, second.game])
    assert facts["format"] == "bingo-replay/4" and recorded["format"] == "bingo-replay-result/4"
    assert facts["rules"]["patterns"] == [
        {"name": "two_lines", "bp": 500, "rows": 2},
        {"name": "four_corners", "bp": 1000, "positions": [[0, 0], [0, 4], [2, 0], [2, 4]]},
    ]
    assert facts["opening"] == {"carry_line": 0, "carry_bingo": 0, "carry_two_lines": 0, "carry_four_corners": 7}
    assert facts["sessions"][0]["session"] == 1
    won = recorded["games"][0]["prizes"]
    assert list(won) == ["line", "bingo", "two_lines", "four_corners"]
    assert won["four_corners"]["amount_cents"] == 1300 * 1000 // 10000 + 7 and won["four_corners"]["paid"]
    assert json.loads(replay_json(json.dumps(facts))) == recorded


def test_games_the_format_cannot_express_are_refused_with_the_reason() -> None:
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


@pytest.mark.req("R92.3")
def test_a_day_of_games_of_two_series_exports_each_card_with_its_series_numbers_and_replays() -> None:
    """Two games of the day sell two series of the library (V1, then V2 at another price): each card's id
    names its series and its numbers are that series', and the replay is what the games recorded."""
    second_series = LIBRARY[::-1].copy()
    first = Played(config(game_id="net-1")).open()
    first.buy("a", count=6)
    first.close().draw_all(seed=1)
    second = Played(config(second_series, game_id="net-2", series_label="V2", price_cents=150,
                           carries=dict(first.game.carries or {})), library=second_series).open()
    second.buy("b", count=5)
    second.close().draw_all(seed=2)
    facts = scenario(DAY, [first.game, second.game], {"V1": LIBRARY, "V2": second_series})
    one, two = facts["sessions"][0]["games"]
    assert one["cards"][0]["id"] == "hall-1/V1-1" and two["cards"][0]["id"] == "hall-1/V2-1"
    assert two["cards"][0]["rows"] == [[int(n) for n in row if n] for row in second_series[0].reshape(3, 9)]
    assert json.loads(replay_json(json.dumps(facts))) == result(DAY, [first.game, second.game])
    with pytest.raises(ExportRefused, match="net-2 cannot be exported: the library holds no series V2"):
        scenario(DAY, [first.game, second.game], {"V1": LIBRARY})

"""The demo game: the domain parts played together give the brute-force prizes."""

import random

import pytest

from hall_server.demo import play_demo_game
from protocol.balls import FakeBallSource
from protocol.cards import CARDS_PER_STRIP
from protocol.library import build_distinct_strips
from protocol.sale import Series
from protocol.wins import game_winners


@pytest.mark.req("R85", "R87.a", "R87.b", "R88.2", "R82.5")
@pytest.mark.parametrize("seed", range(6))
def test_the_demo_pays_what_brute_force_finds(seed: int) -> None:
    cells = build_distinct_strips(120 // CARDS_PER_STRIP)
    draw = list(range(1, 91))
    random.Random(seed).shuffle(draw)
    series = Series(7, "demo", 100, 120, last_sold=10)
    lines: list[str] = []
    result = play_demo_game(series, cells, FakeBallSource(draw), cards_wanted=60, say=lines.append)
    sold = cells[10:70]
    expected = game_winners(sold, draw)
    by_pattern = {p.pattern: p for p in result.prizes}
    for name, prize in (("line", expected.line), ("bingo", expected.bingo)):
        paid = by_pattern[name]
        assert paid.ball_count == prize.ball
        assert sorted(ref.number for ref, _ in paid.payments) == sorted(int(i) + 11 for i in prize.cards)
        assert sum(c for _, c in paid.payments) + paid.carry_cents == paid.amount_cents
    assert result.cards_sold == 60 and result.sales_cents == 6000
    assert result.series_after.last_sold == 70
    assert result.balls == tuple(draw[: expected.bingo.ball])
    assert any(line.startswith("Sale closed: 60 cards sold") for line in lines)

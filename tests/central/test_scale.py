"""A network game at a small scale: many halls, terminals and cards, the same answers (DESIGN.md, Scale).

The timed figures are in ``bench/bench_central_domain.py``; this checks only that a
game of 60,000 cards across 20 halls decides, detects and pays exactly as the
whole-game pass of :mod:`protocol.wins` says it should.
"""

from __future__ import annotations

import numpy as np
import pytest

from central_server.domain.money import check_conservation, money_of
from protocol.balls import FakeBallSource
from protocol.records.central import CentralPurchaseRefused
from protocol.strips import sample_strips
from protocol.wins import game_winners
from tests.central.conftest import Played, config

HALL_IDS = tuple(f"hall-{n}" for n in range(1, 21))


@pytest.mark.req("R93.6", "R93.12-13", "R92.11-12")
def test_sixty_thousand_cards_across_twenty_halls() -> None:
    rng = np.random.default_rng(2026)
    library = sample_strips(10_000, rng.bytes).reshape(-1, 27)  # 60,000 cards
    played = Played(config(library, halls=HALL_IDS), library).open()
    counts = rng.integers(1, 7, size=20_000)
    for i, count in enumerate(counts):
        hall = HALL_IDS[i % 20]
        outcome = played.buy(f"r{i}", hall=hall, terminal=f"T{i % 350}", player=f"p{i % 997}", count=int(count))
        assert outcome.decision.decision == i + 1
    sold = played.game.cards_assigned
    refused = [e for e in played.events if isinstance(e, CentralPurchaseRefused)]
    # More cards were asked for than the series holds: the last requests that did not fit were refused whole.
    assert refused and all(r.refusal_code == "series_exhausted" for r in refused)
    assert sold + played.game.cards_left == 60_000 and played.game.cards_left < min(r.card_count for r in refused)
    played.close()
    draw = rng.permutation(np.arange(1, 91)).tolist()
    played.draw_all(FakeBallSource(draw))
    expected = game_winners(library[:sold], draw)
    for name, prize in (("line", expected.line), ("bingo", expected.bingo)):
        won = played.game.prizes[name]
        assert won.ball_count == prize.ball
        assert [w.card_number for w in played.game.winners if w.pattern == name] == (prize.cards + 1).tolist()
    assert len(played.game.balls) == expected.bingo.ball
    check_conservation(money_of(played.events))
    assert played.replayed().snapshot() == played.game.snapshot()

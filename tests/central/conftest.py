"""Shared set-up of the central domain tests: a small virtual library and game builders."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from central_server.domain.config import NetworkGameConfig, PrizeShare, library_digest
from central_server.domain.game import CentralGame, Outcome, PurchaseRequest
from protocol.balls import BallSource, FakeBallSource
from protocol.patterns import BINGO, LINE, Pattern
from protocol.records.central import CentralRecord
from protocol.strips import sample_strips

#: 300 cards in 50 strips: a central library small enough to brute-force.
LIBRARY = sample_strips(50, random.Random(2026).randbytes).reshape(-1, 27)
HALLS = ("hall-1", "hall-2", "hall-3")
SALE_MS = 60_000
BALL_MS = 2_000


def config(
    library: np.ndarray = LIBRARY,
    *,
    patterns: tuple[tuple[Pattern, int], ...] = ((LINE, 2000), (BINGO, 5000)),
    carries: dict[str, int] | None = None,
    **changes: Any,
) -> NetworkGameConfig:
    """A valid network game's configuration; ``changes`` override its fields."""
    carries = carries or {}
    fields: dict[str, Any] = {
        "game_id": "net-1",
        "halls": HALLS,
        "price_cents": 100,
        "max_price_cents": 200,
        "prizes": tuple(PrizeShare(p, bp, carries.get(p.name, 0)) for p, bp in patterns),
        "sale_window_ms": SALE_MS,
        "ball_interval_ms": BALL_MS,
        "series_label": "V1",
        "series_cards": len(library),
        "library_digest": library_digest(library),
    }
    fields.update(changes)
    return NetworkGameConfig(**fields)


class Played:
    """A game and every event it emitted, driven by the tests' clock."""

    def __init__(self, game_config: NetworkGameConfig | None = None, library: np.ndarray = LIBRARY) -> None:
        self.library = library
        self.game, first = CentralGame.schedule(game_config or config(library), library)
        self.events: list[CentralRecord] = list(first)
        self.now = 0

    def record(self, events: Any) -> Any:
        if isinstance(events, Outcome):
            self.events += events.events
        else:
            self.events += events
        return events

    def open(self) -> "Played":
        self.record(self.game.open_sale(self.now))
        return self

    def buy(
        self,
        request_id: str,
        *,
        hall: str = "hall-1",
        terminal: str = "t1",
        player: str = "p1",
        count: int = 1,
        pct: int = 100,
        from_hall: str | None = None,
    ) -> Outcome:
        request = PurchaseRequest(request_id, hall, terminal, player, count, pct)
        return self.record(self.game.request_purchase(request, from_hall=from_hall or hall, now_ms=self.now))

    def close(self) -> "Played":
        assert self.game.closes_at_ms is not None
        self.now = max(self.now, self.game.closes_at_ms)
        self.record(self.game.close_sale(self.now))
        return self

    def ball(self, number: int) -> list[CentralRecord]:
        due = self.game.next_ball_due_ms
        assert due is not None
        self.now = max(self.now, due)
        return self.record(self.game.ball_drawn(number, self.now))

    def draw_all(self, source: BallSource | None = None, seed: int = 0) -> "Played":
        """Draw until the game ends, from ``source`` or a seeded shuffle of 1..90."""
        if source is None:
            order = list(range(1, 91))
            random.Random(seed).shuffle(order)
            source = FakeBallSource([b for b in order if b not in self.game.balls])
        while self.game.next_ball_due_ms is not None:
            self.now = max(self.now, self.game.next_ball_due_ms)
            self.record(self.game.draw_next(source, self.now))
        return self

    def replayed(self) -> CentralGame:
        return CentralGame.replay(self.events, self.library)

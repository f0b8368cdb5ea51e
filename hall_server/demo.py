"""A scripted traditional game, played by the real domain objects, for ``bingo demo``.

Sellers sell paper cards of one series in numbered ranges (:class:`GameSale`, R82.5);
the game machine (:class:`TraditionalGame`) takes every sale, ball and verified
claim; the software ball generator draws (R92.10); the per-ball detector spots the
cards that complete a row or the card, the table chief's check
(:func:`check_claim`) verifies each, the caller asks "another card?" and closes the prize
found (R85.6), and the prizes are shared exactly (R87, R88.2).
Nothing here decides a rule: it only plays the parts a hall's staff would play.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Callable

import numpy as np

from protocol.balls import BallSource
from protocol.cards import Card
from protocol.claims import CardRef, check_claim
from protocol.events import SaleClosed
from protocol.game import TraditionalGame
from protocol.money import format_cents
from protocol.sale import GameSale, Series
from protocol.settlement import Pots, PrizeRules, close_sale, split_prize
from protocol.wins import WinDetector

DEMO_RULES = PrizeRules(line_bp=1500, bingo_bp=5500)


@dataclass(frozen=True)
class PrizePaid:
    pattern: str
    ball_count: int
    amount_cents: int
    payments: tuple[tuple[CardRef, int], ...]
    carry_cents: int


@dataclass(frozen=True)
class DemoResult:
    cards_sold: int
    sales_cents: int
    balls: tuple[int, ...]
    prizes: tuple[PrizePaid, ...]
    tax_cents: int
    series_after: Series


def play_demo_game(
    series: Series,
    set_cells: np.ndarray,
    balls: BallSource,
    *,
    sellers: tuple[str, ...] = ("ana", "ben", "carla"),
    cards_wanted: int = 240,
    say: Callable[[str], None] = print,
    between_balls: Callable[[], None] = lambda: None,
) -> DemoResult:
    """Sell about ``cards_wanted`` cards of ``series``, draw to the bingo, pay the prizes."""
    DEMO_RULES.check()
    sale = GameSale.open(series, previous_game_collected=True)
    game = TraditionalGame("demo-1")
    first = sale.next_card(series.number)
    game.open_sale(series=series.number, first_card=first, price_cents=series.face_value_cents)
    say(
        f"Sale open: series {series.number}, {format_cents(series.face_value_cents)} a card, "
        f"first card {first}"
    )
    layouts: dict[CardRef, Card] = {}
    remaining = min(cards_wanted, series.card_count - series.last_sold)
    turn = 0
    while remaining > 0:
        seller = sellers[turn % len(sellers)]
        turn += 1
        count = min(remaining, 1 + secrets.randbelow(12))
        start = sale.next_card(series.number)
        sold = sale.sell(series.number, start, start + count - 1, seller)
        for number in range(sold.first, sold.last + 1):
            game.sell_card(
                series=series.number,
                card_number=number,
                stake_cents=series.face_value_cents,
                account=f"cash:{seller}",
            )
            ref = CardRef(series.number, number)
            layouts[ref] = Card.from_cells(int(x) for x in set_cells[number - 1])
        remaining -= count
    (series_after,) = sale.close()
    (closed,) = game.close_sale()
    assert isinstance(closed, SaleClosed)
    sales = closed.collection_cents
    figures = close_sale(DEMO_RULES, sales, Pots())  # a demo game starts with nothing carried
    line_amount, bingo_amount = figures.line_cents, figures.bingo_cents
    say(
        f"Sale closed: {sale.cards_sold} cards sold, {format_cents(sales)} collected; "
        f"line {format_cents(line_amount)}, bingo {format_cents(bingo_amount)}"
    )

    refs = list(layouts)
    detector = WinDetector(np.array([layouts[ref].cells for ref in refs], dtype=np.uint8))
    prizes: list[PrizePaid] = []
    amounts = {"line": line_amount, "bingo": bingo_amount}
    while "bingo" not in game.won:
        ball = balls.draw()
        game.draw_ball(ball)
        completed = detector.ball_drawn(ball)
        say(f"Ball {len(game.drawn):>2}: {ball}")
        between_balls()
        candidates = [refs[i] for i in np.union1d(completed.rows, completed.cards)]
        newly: dict[str, list[CardRef]] = {}
        for ref in candidates:
            verdict = check_claim(ref, layouts, game.drawn, game.won)
            if not verdict.valid:
                continue  # a row completed after the line was already won: nothing to claim
            game.claim_checked(verdict)
            for win in verdict.wins:
                newly.setdefault(win.pattern, []).append(ref)
        for pattern in ("line", "bingo"):
            if pattern not in newly:
                continue
            winners = sorted(newly[pattern], key=lambda r: r.number)
            split = split_prize(amounts[pattern], [100] * len(winners))
            paid = PrizePaid(
                pattern, len(game.drawn), split.amount, tuple(zip(winners, split.payments)), split.carry
            )
            prizes.append(paid)
            cards = ", ".join(f"{ref} ({format_cents(cents)})" for ref, cents in paid.payments)
            say(f"  {pattern.upper()} on ball {paid.ball_count}: {cards}")
            if split.carry:
                say(f"  {format_cents(split.carry)} carried to the next game's {pattern} (R88.5)")
        if closing := game.open_prizes:
            game.close_prizes(closed_by="the caller")
            say(f"  {' and '.join(closing).upper()}! Another card? - none: the caller closes the prize (R85.6)")
    game.close()
    say(f"Game closed after {len(game.drawn)} balls; tax base {format_cents(sales)}, tax {format_cents(figures.tax_cents)}")
    return DemoResult(
        cards_sold=sale.cards_sold,
        sales_cents=sales,
        balls=game.drawn,
        prizes=tuple(prizes),
        tax_cents=figures.tax_cents,
        series_after=series_after,
    )

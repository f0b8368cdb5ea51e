"""``bingo demo``: one whole traditional game in the terminal, on cards generated for it.

The demo plays the real domain parts (:mod:`hall_server.demo`) on 600 cards it generates
for the run; it stores nothing, so a hall's card registry, series and journal are the same
after it as before (the series numbers it could take, 9001 the terminals' virtual cards
among them, stay the hall's).
"""

from __future__ import annotations

import time

import click

from protocol.money import format_cents

DEMO_SET = "demo"
#: The demo's series: a number shown on the demo's screen only, never registered.
DEMO_SERIES = 1
DEMO_CARDS = 600
DEMO_FACE_VALUE_CENTS = 100


@click.command()
@click.option("--cards", "cards_wanted", type=click.IntRange(1, DEMO_CARDS), default=240, show_default=True,
              help="Paper cards to sell.")
@click.option("--pace", type=click.FloatRange(0, 5), default=0.05, show_default=True, help="Seconds between balls.")
def demo(cards_wanted: int, pace: float) -> None:
    """Play one game with simulated sellers on cards generated for it; nothing is stored."""
    from hall_server.demo import play_demo_game
    from protocol.balls import RandomBallGenerator
    from protocol.cards import CARDS_PER_STRIP
    from protocol.library import build_distinct_strips
    from protocol.sale import Series

    click.echo(f"Generating {DEMO_CARDS} cards from {DEMO_CARDS // CARDS_PER_STRIP} exactly uniform strips")
    cells = build_distinct_strips(DEMO_CARDS // CARDS_PER_STRIP)
    series = Series(DEMO_SERIES, DEMO_SET, DEMO_FACE_VALUE_CENTS, DEMO_CARDS, 0)
    result = play_demo_game(
        series,
        cells,
        RandomBallGenerator(),
        cards_wanted=cards_wanted,
        say=click.echo,
        between_balls=(lambda: time.sleep(pace)) if pace else (lambda: None),
    )
    paid = sum(cents for prize in result.prizes for _, cents in prize.payments)
    click.echo(
        f"Game over: {result.cards_sold} cards sold for {format_cents(result.sales_cents)}, "
        f"{len(result.balls)} balls drawn, {format_cents(paid)} paid in prizes."
    )

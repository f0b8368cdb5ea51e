"""``bingo demo``: a hall's card set and one whole traditional game in the terminal."""

from __future__ import annotations

import time

import click

from hall_server.cli.context import Hall
from hall_server.demo import play_demo_game
from hall_server.store import cards as store
from protocol.balls import RandomBallGenerator
from protocol.cards import CARDS_PER_STRIP
from protocol.library import build_distinct_strips
from protocol.sale import Series

DEMO_SET = "demo"
DEMO_SERIES = 9001


@click.command()
@click.option("--cards", "cards_wanted", type=click.IntRange(1, 600), default=240, show_default=True, help="Paper cards to sell.")
@click.option("--pace", type=click.FloatRange(0, 5), default=0.05, show_default=True, help="Seconds between balls.")
@click.pass_obj
def demo(hall: Hall, cards_wanted: int, pace: float) -> None:
    """Generate the demo card set (first run) and play one game with simulated sellers."""
    engine = hall.engine
    if DEMO_SET not in {s.name for s in store.list_sets(engine)}:
        click.echo("Generating the demo card set: 600 cards from 100 exactly uniform strips")
        cells = build_distinct_strips(600 // CARDS_PER_STRIP, store.registered_prints(engine))
        store.add_card_set(engine, DEMO_SET, cells, [str(k // 6 + 1) for k in range(600)], "generated")
        store.add_series(engine, DEMO_SET, DEMO_SERIES, 100, None)
    info = store.find_series(engine, DEMO_SERIES)
    _, cells = store.set_cards(engine, DEMO_SET)
    # Every run starts the series afresh: the demo keeps no sales between runs.
    series = Series(info.number, info.card_set, info.face_value_cents, info.card_count, 0)
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
        f"Done: {result.cards_sold} cards, {len(result.balls)} balls, "
        f"{paid} cents paid in prizes of {result.sales_cents} collected."
    )

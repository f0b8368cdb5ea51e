"""Paper-card sale numbering (R82.4, R82.5, R82.6)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from protocol.sale import GameSale, SaleRefused, Series, second_series_window

A = Series(number=101, card_set="blue", face_value_cents=200, card_count=50, last_sold=0)
B = Series(number=102, card_set="blue", face_value_cents=200, card_count=50, last_sold=0)


@pytest.mark.req("R82.4")
def test_no_sale_before_the_previous_games_cards_are_collected() -> None:
    with pytest.raises(SaleRefused, match="not been collected"):
        GameSale.open(A, previous_game_collected=False)


@pytest.mark.req("R82.5")
def test_a_fresh_series_starts_at_card_1_and_a_used_one_after_its_last_sale() -> None:
    assert GameSale.open(A, previous_game_collected=True).next_card(101) == 1
    used = Series(101, "blue", 200, 50, last_sold=37)
    assert GameSale.open(used, previous_game_collected=True).next_card(101) == 38


@pytest.mark.req("R82.5")
def test_sales_are_consecutive_and_resume_in_the_next_game() -> None:
    sale = GameSale.open(A, previous_game_collected=True)
    sale.sell(101, 1, 10, "ana")
    with pytest.raises(SaleRefused, match="next card of series 101 is 11, not 13"):
        sale.sell(101, 13, 14, "ben")
    sale.sell(101, 11, 12, "ben")
    (after,) = sale.close()
    assert after.last_sold == 12
    assert GameSale.open(after, previous_game_collected=True).next_card(101) == 13
    with pytest.raises(SaleRefused, match="sale is closed"):
        sale.sell(101, 13, 13, "ana")


@pytest.mark.req("R82.6")
def test_the_second_series_sells_from_1_to_the_card_before_the_first_series_start() -> None:
    used = Series(101, "blue", 200, 50, last_sold=30)
    sale = GameSale.open(used, previous_game_collected=True)
    with pytest.raises(SaleRefused, match="still has 20 card"):
        sale.add_second_series(B)
    sale.sell(101, 31, 50, "ana")
    window = sale.add_second_series(B)
    assert (window.first, window.last) == (1, 30)
    with pytest.raises(SaleRefused, match="may sell up to card 30"):
        sale.sell(102, 1, 31, "ana")
    sale.sell(102, 1, 30, "ana")
    with pytest.raises(SaleRefused, match="no card left"):
        sale.sell(102, 31, 31, "ana")
    numbers = [n for _, n in sale.sold_cards()]
    assert sorted(numbers) == list(range(1, 51)), "every layout of the set exactly once"
    first, second = sale.close()
    assert (first.last_sold, second.last_sold) == (50, 30)


@pytest.mark.req("R82.6")
@pytest.mark.parametrize(
    "second, reason",
    [
        (Series(102, "red", 200, 50), "belongs to card set 'red'"),
        (Series(102, "blue", 300, 50), "same face value"),
        (Series(102, "blue", 200, 50, last_sold=4), "must be a fresh series"),
        (Series(101, "blue", 200, 50), "already the game's first series"),
    ],
)
def test_a_second_series_that_could_repeat_cards_is_refused(second: Series, reason: str) -> None:
    sale = GameSale.open(Series(101, "blue", 200, 50, last_sold=30), previous_game_collected=True)
    sale.sell(101, 31, 50, "ana")
    with pytest.raises(SaleRefused, match=reason):
        sale.add_second_series(second)


@pytest.mark.req("R82.6")
def test_no_second_series_when_the_first_started_at_card_1() -> None:
    sale = GameSale.open(A, previous_game_collected=True)
    sale.sell(101, 1, 50, "ana")
    with pytest.raises(SaleRefused, match="every card of the set is already in play"):
        sale.add_second_series(B)


@pytest.mark.req("R82.5", "R82.6")
@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(1, 60),
    already=st.integers(0, 60),
    second_size=st.integers(1, 60),
)
def test_the_second_series_window_never_overlaps_the_first(
    size: int, already: int, second_size: int
) -> None:
    first = Series(1, "s", 100, size, last_sold=min(already, size - 1))
    sale = GameSale.open(first, previous_game_collected=True)
    start = sale.next_card(1)
    try:
        window = second_series_window(sale.windows[0], Series(2, "s", 100, second_size))
    except SaleRefused:
        assert start == 1
        return
    assert window.first == 1 and window.last < start and window.last <= second_size


class SaleMachine(RuleBasedStateMachine):
    """Random sequences of sales, refusals and second series: the numbering always holds."""

    def __init__(self) -> None:
        super().__init__()
        self.sale = GameSale.open(
            Series(7, "s", 100, 40, last_sold=17), previous_game_collected=True
        )

    @rule(series=st.sampled_from([7, 8]), first=st.integers(0, 45), length=st.integers(0, 8))
    def sell(self, series: int, first: int, length: int) -> None:
        before = list(self.sale.sold)
        try:
            self.sale.sell(series, first, first + length, "x")
        except SaleRefused:
            assert self.sale.sold == before

    @rule()
    def sell_next(self) -> None:
        for window in self.sale.windows:
            try:
                n = self.sale.next_card(window.series.number)
            except SaleRefused:
                continue
            self.sale.sell(window.series.number, n, n, "x")
            return

    @precondition(lambda self: len(self.sale.windows) == 1)
    @rule()
    def second_series(self) -> None:
        try:
            self.sale.add_second_series(Series(8, "s", 100, 40))
        except SaleRefused:
            pass

    @invariant()
    def no_layout_twice_and_each_series_consecutive(self) -> None:
        numbers = [n for _, n in self.sale.sold_cards()]
        assert len(numbers) == len(set(numbers))
        for window in self.sale.windows:
            sold = [n for s, n in self.sale.sold_cards() if s == window.series.number]
            assert sold == list(range(window.first, window.first + len(sold)))
            assert all(window.first <= n <= window.last for n in sold)


SaleMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestSaleNumbering = pytest.mark.req("R82.5", "R82.6")(SaleMachine.TestCase)

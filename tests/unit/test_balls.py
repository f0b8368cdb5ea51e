"""Ball sources: the random ball generator (R92.10), the fake, corrections (R85.5) and older recalls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from protocol.balls import (
    BallError,
    BallSource,
    FakeBallSource,
    RandomBallGenerator,
    check_recall,
)

#: A correct generator fails a chi-square test at this level once in 10,000 runs.
SIGNIFICANCE = 1e-4


@pytest.mark.req("R92.10")
def test_the_generator_draws_every_ball_once() -> None:
    rng = RandomBallGenerator()
    balls = [rng.draw() for _ in range(90)]
    assert sorted(balls) == list(range(1, 91))
    assert rng.drawn == tuple(balls)
    with pytest.raises(BallError, match="all 90 balls have been drawn"):
        rng.draw()


@settings(max_examples=50, deadline=None)
@given(st.permutations(range(1, 91)), st.integers(0, 90))
@pytest.mark.req("R92.10")
def test_after_a_restart_the_generator_continues_from_the_journal(order: list[int], k: int) -> None:
    """Built from the drawn list, it never repeats a ball and draws exactly the rest."""
    journal = order[:k]
    rng = RandomBallGenerator(journal)
    assert rng.remaining == tuple(sorted(order[k:]))
    rest = [rng.draw() for _ in range(90 - k)]
    assert sorted(journal + rest) == list(range(1, 91))
    assert rng.drawn == tuple(journal + rest)


@pytest.mark.parametrize("journal, message", [([5, 5], "already drawn"), ([0], "not a number"), ([True], "not a number")])
def test_a_corrupt_journal_is_refused(journal: list[int], message: str) -> None:
    with pytest.raises(BallError, match=message):
        RandomBallGenerator(journal)


@pytest.mark.req("R85.5", "R92.10")
def test_the_generators_ball_is_what_it_is_and_never_goes_back() -> None:
    rng = RandomBallGenerator(range(1, 89))  # 89 and 90 are left
    ball = rng.draw()
    assert not rng.reads_balls
    with pytest.raises(BallError, match="the software generator's ball is what it is"):
        rng.correct(ball, 179 - ball)
    assert rng.drawn == (*range(1, 89), ball) and rng.remaining == (179 - ball,)


@pytest.mark.req("R85.5")
def test_a_source_whose_balls_are_read_takes_the_correction_of_its_last_ball_only() -> None:
    fake = FakeBallSource([10, 20, 30, 40], reads_balls=True)
    assert [fake.draw(), fake.draw()] == [10, 20]
    with pytest.raises(BallError, match="only the last ball"):
        fake.correct(10, 11)
    with pytest.raises(BallError, match="drawn already"):
        fake.correct(20, 10)
    fake.correct(20, 30)  # read as 20, the ball on the rack is 30: 20 stays in the chamber
    assert fake.drawn == (10, 30)
    assert fake.draw() == 40, "a ball drawn by a correction is not drawn again"
    with pytest.raises(BallError, match="not read"):
        FakeBallSource([1]).correct(1, 2)


@pytest.mark.req("R92.10")
def test_the_generator_keeps_no_seed() -> None:
    """Nothing in the generator could be stored and replayed to predict it."""
    rng = RandomBallGenerator([1, 2])
    assert set(vars(rng)) == {"_drawn", "_pool"}


@pytest.mark.req("R92.10")
def test_the_first_ball_is_uniform_over_1_to_90() -> None:
    draws = 18_000  # 200 expected per ball
    counts = [0] * 90
    for _ in range(draws):
        counts[RandomBallGenerator().draw() - 1] += 1
    assert chisquare(counts).pvalue > SIGNIFICANCE


@pytest.mark.req("R92.10")
def test_the_draw_order_is_uniform() -> None:
    """Ball 1 is equally likely at every position of the draw; so is the ball drawn last."""
    games = 6_000  # 66.7 expected per position
    position_of_1 = [0] * 90
    last_ball = [0] * 90
    for _ in range(games):
        rng = RandomBallGenerator()
        order = [rng.draw() for _ in range(90)]
        position_of_1[order.index(1)] += 1
        last_ball[order[-1] - 1] += 1
    assert chisquare(position_of_1).pvalue > SIGNIFICANCE
    assert chisquare(last_ball).pvalue > SIGNIFICANCE


def test_the_chi_square_check_catches_a_biased_draw() -> None:
    """The test above has teeth: modulo bias of a byte over 90 balls is detected."""
    import secrets

    counts = [0] * 90
    for _ in range(18_000):
        counts[secrets.randbits(8) % 90] += 1  # balls 1-76 half again as likely as 77-90
    assert chisquare(counts).pvalue < SIGNIFICANCE


def test_the_fake_hands_out_its_script_each_ball_once() -> None:
    fake = FakeBallSource([10, 20, 30, 20])
    assert [fake.draw(), fake.draw(), fake.draw()] == [10, 20, 30]
    assert fake.drawn == (10, 20, 30)
    with pytest.raises(BallError, match="used up"):
        fake.draw()  # the second 20 is drawn already


def test_both_sources_implement_the_port() -> None:
    assert isinstance(RandomBallGenerator(), BallSource)
    assert isinstance(FakeBallSource([1]), BallSource)


@pytest.mark.req("R80")
@pytest.mark.parametrize(
    "drawn, ball, role, reason, message",
    [
        ([4, 9], 9, "seller_caller", "typo", "only the room chief or table chief may void"),
        ([4, 9], 9, "room_chief", "  ", "say why"),
        ([], 9, "room_chief", "typo", "nothing to void"),
        ([4, 9], 4, "room_chief", "typo", r"only the last ball \(9\)"),
        ([4, 9], 5, "room_chief", "typo", "5 has not been drawn"),
    ],
)
def test_a_recall_needs_an_authorised_role_a_reason_and_the_last_ball(
    drawn: list[int], ball: int, role: str, reason: str, message: str
) -> None:
    with pytest.raises(BallError, match=message):
        check_recall(drawn, ball, role, reason)


def test_an_authorised_recall_of_the_last_ball_passes() -> None:
    """Journals written before the ruling of R85.5 hold such recalls; they still read."""
    check_recall([4, 9], 9, "table_chief", "caller read 6 as 9")

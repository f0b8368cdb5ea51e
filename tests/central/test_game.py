"""The network game's lifecycle, one behaviour at a time (R93, R94, R96)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from central_server.domain.errors import (
    BadArgument,
    DrawStarted,
    EventError,
    HallMismatch,
    NotNow,
    RequestIdReused,
    TerminalAlreadyFailed,
    UnknownHall,
)
from central_server.domain.game import TABLE, CentralGame, Input, Phase, TerminalFailure
from central_server.domain.money import check_conservation, money_of
from protocol.balls import FakeBallSource, RandomBallGenerator
from protocol.cards import Card
from protocol.patterns import completion_ball
from protocol.records.central import (
    CentralBallDrawn,
    CentralCardWon,
    CentralGameClosed,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralPurchaseRefused,
    CentralStakeReturned,
)
from tests.central.conftest import LIBRARY, SALE_MS, Played, config


def card(number: int) -> Card:
    return Card.from_cells(int(x) for x in LIBRARY[number - 1])


def winning_draw(*numbers: int) -> list[int]:
    """A draw that completes card ``numbers[0]`` first: its 15 numbers, then the rest."""
    first = [n for row in card(numbers[0]).rows for n in row]
    return first + [b for b in range(1, 91) if b not in first]


def unchanged(game: CentralGame, before: dict) -> bool:
    return game.snapshot() == before


# --- The sale -----------------------------------------------------------------------


@pytest.mark.req("R93.1")
def test_the_sale_opens_with_a_deadline_that_terminals_count_down() -> None:
    played = Played()
    played.now = 5_000
    (opened,) = played.game.open_sale(5_000)
    assert (opened.opened_at_ms, opened.closes_at_ms) == (5_000, 5_000 + SALE_MS)
    assert played.game.phase is Phase.SELLING
    assert played.game.remaining_ms(20_000) == 5_000 + SALE_MS - 20_000
    assert played.game.remaining_ms(10**9) == 0


@pytest.mark.req("R93.6")
def test_requests_are_decided_in_arrival_order_and_cards_assigned_in_that_order() -> None:
    played = Played().open()
    a = played.buy("a", count=3)
    b = played.buy("b", hall="hall-2", terminal="t9", player="q", count=2, pct=50)
    c = played.buy("c", hall="hall-3", count=1)
    decisions = [o.decision for o in (a, b, c)]
    assert [d.decision for d in decisions] == [1, 2, 3]
    assert all(isinstance(d, CentralPurchaseConfirmed) for d in decisions)
    assert [(d.first_card, d.card_count) for d in decisions] == [(1, 3), (4, 2), (6, 1)]  # type: ignore[union-attr]
    assert (b.decision.stake_cents, b.decision.amount_cents) == (50, 100)  # type: ignore[union-attr]
    assert played.game.next_card == 7


@pytest.mark.req("R93.6", "R93.8")
def test_a_resent_request_gets_its_first_decision_and_changes_nothing() -> None:
    played = Played().open()
    first = played.buy("a", count=2)
    before = played.game.snapshot()
    again = played.buy("a", count=2)
    assert again.repeated and again.events == () and again.decision == first.decision
    assert unchanged(played.game, before)
    # Even after the sale closed: the first decision stands, the cards are not assigned twice.
    played.close()
    assert played.buy("a", count=2).decision == first.decision


def test_a_request_id_used_for_another_request_is_refused_and_changes_nothing() -> None:
    played = Played().open()
    played.buy("a", count=2)
    before = played.game.snapshot()
    with pytest.raises(RequestIdReused, match="already used for another request; the first one stands") as error:
        played.buy("a", count=3)
    assert error.value.code == "request_id_reused"
    assert unchanged(played.game, before)
    # Request ids belong to their hall: another hall may use the same one.
    assert isinstance(played.buy("a", hall="hall-2").decision, CentralPurchaseConfirmed)


@pytest.mark.req("R93.1", "R93.8")
def test_nothing_is_assigned_outside_the_sale_time() -> None:
    played = Played()
    early = played.buy("early")
    assert isinstance(early.decision, CentralPurchaseRefused) and early.decision.refusal_code == "sale_not_open"
    played.open()
    played.now = played.game.closes_at_ms - 1  # type: ignore[operator]
    assert isinstance(played.buy("last").decision, CentralPurchaseConfirmed)
    played.now += 1
    late = played.buy("late")
    assert isinstance(late.decision, CentralPurchaseRefused) and late.decision.refusal_code == "sale_over"
    assert late.decision.refusal_text == "The sale time is over; no card can be bought any more."
    played.close()
    after = played.buy("after")
    assert after.decision.refusal_code == "sale_over"  # type: ignore[union-attr]
    assert played.game.cards_assigned == 1
    # Refusals are decisions too: journaled, numbered, answered the same when resent.
    assert [d.decision for d in (early.decision, late.decision, after.decision)] == [1, 3, 4]
    assert played.buy("late").decision == late.decision


@pytest.mark.req("R93.6")
def test_a_request_the_series_cannot_fill_is_refused_whole() -> None:
    played = Played(config(first_card=295)).open()  # cards 295..300 left
    assert isinstance(played.buy("a", count=4).decision, CentralPurchaseConfirmed)
    refused = played.buy("b", player="p2", count=3).decision
    assert isinstance(refused, CentralPurchaseRefused) and refused.refusal_code == "series_exhausted"
    assert refused.refusal_text == "Only 2 card(s) are left in series V1."
    assert played.buy("c", player="p2", count=2).decision.first_card == 299  # type: ignore[union-attr]


@pytest.mark.req("R83.7")
def test_a_player_holds_at_most_96_cards_per_terminal_per_game() -> None:
    played = Played().open()
    played.buy("a", count=96)
    refused = played.buy("b", count=1).decision
    assert refused.refusal_code == "card_limit"  # type: ignore[union-attr]
    assert "holds 96 on this terminal, so may buy 0 more" in refused.refusal_text  # type: ignore[union-attr]
    assert isinstance(played.buy("c", terminal="t2", count=1).decision, CentralPurchaseConfirmed)


def test_a_stake_below_one_cent_is_refused() -> None:
    played = Played(config(price_cents=1)).open()
    assert played.buy("a", pct=99).decision.refusal_code == "stake_too_small"  # type: ignore[union-attr]
    assert isinstance(played.buy("b", pct=100).decision, CentralPurchaseConfirmed)


def test_a_hall_may_only_speak_for_itself_and_its_own_terminals() -> None:
    played = Played().open()
    before = played.game.snapshot()
    with pytest.raises(HallMismatch, match="hall hall-2 may only speak for itself") as error:
        played.buy("a", hall="hall-1", from_hall="hall-2")
    assert error.value.code == "hall_mismatch"
    with pytest.raises(UnknownHall, match="hall 'hall-9' does not take part"):
        played.buy("a", hall="hall-9")
    failure = TerminalFailure("f", "hall-1", "t1", "dead", "chief")
    with pytest.raises(HallMismatch):
        played.game.declare_terminal_failed(failure, from_hall="hall-2", now_ms=0)
    assert unchanged(played.game, before)


def test_bad_arguments_are_refused_with_a_message_naming_the_field() -> None:
    played = Played().open()
    with pytest.raises(BadArgument, match="card_count is 1 to 96, not 97"):
        played.buy("a", count=97)
    with pytest.raises(BadArgument, match="now_ms is a whole number"):
        Played().game.open_sale(1.5)  # type: ignore[arg-type]


@pytest.mark.req("R93.9")
def test_the_sale_closes_at_its_deadline_with_the_prizes_worked_out_from_the_sales() -> None:
    played = Played(config(carries={"line": 7, "bingo": 11})).open()
    played.buy("a", count=3)  # 300
    played.buy("b", hall="hall-2", count=2, pct=33)  # 2 x 33
    with pytest.raises(NotNow, match="the sale closes at its announced deadline, in 60000 ms"):
        played.game.close_sale(0)
    (closed,) = played.close().events[-1:]
    assert closed.sales_cents == 366 and closed.cards_in_play == 5
    assert closed.prize_amounts == {"line": 366 * 2000 // 10_000 + 7, "bingo": 366 * 5000 // 10_000 + 11}
    assert closed.house_share_cents == 366 - 73 - 183
    assert played.game.sales_by_hall() == {"hall-1": (3, 300), "hall-2": (2, 66), "hall-3": (0, 0)}


def test_a_sale_that_sold_nothing_ends_the_game_and_carries_everything() -> None:
    played = Played(config(carries={"bingo": 11})).open().close()
    assert played.game.phase is Phase.CLOSED
    assert played.events[-1] == CentralGameClosed(game_id="net-1", closed_at_ms=played.now, carries={"line": 0, "bingo": 11})


# --- The draw -----------------------------------------------------------------------


@pytest.mark.req("R92.10")
def test_balls_are_numbered_paced_and_drawn_once_from_the_injected_generator() -> None:
    played = Played().open()
    played.buy("a")
    played.close()
    with pytest.raises(NotNow, match="the next ball is due in 2000 ms"):
        played.game.ball_drawn(5, played.now)
    source = RandomBallGenerator()
    played.now += 2_000
    (ball,) = played.record(played.game.draw_next(source, played.now))
    assert isinstance(ball, CentralBallDrawn) and ball.ball_count == 1 and ball.ball == source.drawn[0]
    with pytest.raises(BadArgument, match=f"ball {ball.ball} was already drawn, as ball 1"):
        played.game.ball_drawn(ball.ball, played.now + 2_000)
    with pytest.raises(NotNow, match="cannot draw a ball while the sale is open"):
        Played().open().game.ball_drawn(1, 10**6)


@pytest.mark.req("R93.12-13", "R93.10")
def test_the_game_goes_on_after_the_line_and_ends_with_the_bingo() -> None:
    played = Played().open()
    played.buy("a", count=10)
    played.buy("b", hall="hall-2", terminal="t5", player="q", count=10)
    played.close()
    played.draw_all(FakeBallSource(winning_draw(4)))
    line, bingo = played.game.prizes["line"], played.game.prizes["bingo"]
    assert line.ball_count < bingo.ball_count == len(played.game.balls) == 15
    assert not line.final and bingo.final
    assert played.game.phase is Phase.CLOSED and played.game.next_ball_due_ms is None
    # Every card that completed on the prize's ball is a winner, and only those.
    for name, prize in played.game.prizes.items():
        pattern = played.game.config.patterns[name]
        winners = {w.card_number for w in played.game.winners if w.pattern == name}
        completing = {n for n in range(1, 21) if completion_ball(pattern, card(n), played.game.balls) == prize.ball_count}
        assert winners == completing and 4 in {w.card_number for w in played.game.winners if w.pattern == "bingo"}
    assert played.game.rows_missing(4) == (0, 0, 0)


def numbers(number: int) -> set[int]:
    return {n for row in card(number).rows for n in row}


@pytest.mark.req("R93.13", "R88.2")
def test_R93_13_a_shared_prize_goes_whole_to_its_winners_by_stake_and_nothing_carries() -> None:
    """R93.13: "le montant total de ce gain doit être réparti ... compte tenu du prix de chacun de ces
    cartons": a card at 100% and one at 50% share the bingo 2:1, every cent paid, nothing carried."""
    # Card 1 and a card of another strip that shares a number x with it: draw every
    # other number of both, then x, and both complete the bingo on that ball.
    other = next(k for k in range(7, 301) if numbers(1) & numbers(k))
    shared = min(numbers(1) & numbers(other))
    both = sorted((numbers(1) | numbers(other)) - {shared})
    order = both + [shared] + [b for b in range(1, 91) if b not in both and b != shared]
    played = Played().open()
    played.buy("a", pct=100)  # card 1
    played.buy("fill", terminal="t2", player="q", count=other - 2, pct=100)
    played.buy("c", hall="hall-2", terminal="t3", player="r", pct=50)  # card `other`
    played.close().draw_all(FakeBallSource(order))
    assert played.game.sale.sharing == "by_stake"
    bingo = played.game.prizes["bingo"]
    assert bingo.ball_count == len(both) + 1
    winners = [w for w in played.game.winners if w.pattern == "bingo"]
    assert {1, other} <= {w.card_number for w in winners}
    stakes = {w.card_number: played.game.config.price_cents * w.stake_pct // 100 for w in winners}
    exact = {n: Fraction(bingo.amount_cents * stake, sum(stakes.values())) for n, stake in stakes.items()}
    for w in winners:  # each within a cent of its exact share, the cents summing to the prize
        assert exact[w.card_number] - 1 < w.payment_cents < exact[w.card_number] + 1
    assert sum(w.payment_cents for w in winners) == bingo.amount_cents == bingo.paid_cents
    if len(winners) == 2:
        assert next(w for w in winners if w.card_number == 1).payment_cents == 2 * bingo.amount_cents // 3 + (
            1 if bingo.amount_cents % 3 == 1 else 0)
    assert next(w for w in winners if w.card_number == other).stake_pct == 50
    assert bingo.carry_cents == 0 and played.game.prizes["line"].carry_cents == 0
    assert played.game.carries == {"line": 0, "bingo": 0}


@pytest.mark.req("R85.9", "R92.11-12")
def test_each_hall_learns_which_of_its_players_to_credit_and_where_the_card_was_bought() -> None:
    played = Played().open()
    for i in range(30):
        hall = ("hall-1", "hall-2", "hall-3")[i % 3]
        played.buy(f"r{i}", hall=hall, terminal=f"T{i % 4}", player=f"p{i % 5}", count=3)
    played.close().draw_all(seed=7)
    for hall in played.game.config.halls:
        credits = played.game.credits(hall, 0, limit=10_000).items
        assert [c.credit_seq for c in credits] == list(range(1, len(credits) + 1))
        for credit in credits:
            assert isinstance(credit, CentralCardWon) and credit.hall_id == hall
            purchase = next(p for p in played.game.purchases if p.request_id == credit.purchase_request_id and p.hall_id == hall)
            assert (credit.terminal_id, credit.player_ref) == (purchase.terminal_id, purchase.player_ref)
            assert purchase.first_card <= credit.card_number < purchase.first_card + purchase.card_count
    everyone = [w for hall in played.game.config.halls for w in played.game.credits(hall, 0, 10_000).items]
    assert sorted(w.winner_seq for w in everyone) == [w.winner_seq for w in played.game.winners]  # type: ignore[union-attr]
    page = played.game.winners_page(0, limit=1)
    assert len(page.items) == 1 and page.more == (len(played.game.winners) > 1)


def test_a_hall_that_lost_its_link_keeps_its_cards_in_play_and_its_credits_wait() -> None:
    """A dropped link is not an input: the game has none, and the hall's winners are kept for it."""
    assert not any("link" in str(i) or "disconnect" in str(i) for i in Input)
    played = Played().open()
    played.buy("a", hall="hall-2", count=20)  # hall-2 then goes silent
    played.close().draw_all(seed=3)
    assert played.game.cards_in_play == 20
    waiting = played.game.credits("hall-2", 0, 10_000).items
    assert waiting and {c.hall_id for c in waiting} == {"hall-2"}
    assert played.game.credits("hall-2", len(waiting)).items == ()


# --- Failures -----------------------------------------------------------------------


@pytest.mark.req("R96.3")
def test_a_failed_terminal_before_the_close_returns_its_stakes_out_of_the_collection() -> None:
    played = Played().open()
    played.buy("a", terminal="t1", count=2)
    played.buy("b", terminal="t2", player="q", count=3)
    played.buy("c", terminal="t1", player="r", count=1, pct=50)
    failure = TerminalFailure("f1", "hall-1", "t1", "screen broken", "room chief")
    outcome = played.record(played.game.declare_terminal_failed(failure, from_hall="hall-1", now_ms=played.now))
    head, *returns = outcome.events
    assert (head.refunded_cards, head.refunded_cents, head.paid_by) == (3, 250, "stakes")
    assert [(r.player_ref, r.card_numbers, r.amount_cents) for r in returns] == [("p1", (1, 2), 200), ("r", (6,), 50)]
    assert played.buy("d", terminal="t1").decision.refusal_code == "terminal_failed"  # type: ignore[union-attr]
    played.close()
    assert played.game.sale.sales_cents == 300 and played.game.sale.cards_in_play == 3  # type: ignore[union-attr]


@pytest.mark.req("R96.3")
def test_a_failed_terminal_after_the_close_refunds_only_its_unwon_cards_once_from_the_house() -> None:
    """Declared after the close and before the first ball, decided only once balls had come (it waited
    its turn): the cards that won meanwhile keep their prizes, the others are refunded by the house."""
    played = Played().open()
    played.buy("a", terminal="t1", count=20)
    played.buy("b", terminal="t2", player="q", count=20)
    played.close()
    received = played.now  # before the first ball
    source = FakeBallSource(winning_draw(3))
    while "line" not in played.game.prizes:
        played.now = played.game.next_ball_due_ms  # type: ignore[assignment]
        played.record(played.game.draw_next(source, played.now))
    won = {w.card_number for w in played.game.winners}
    sales = played.game.sale.sales_cents  # type: ignore[union-attr]
    failure = TerminalFailure("f1", "hall-1", "t1", "no power", "room chief")
    outcome = played.record(played.game.declare_terminal_failed(failure, from_hall="hall-1", now_ms=received))
    refunded = {n for e in outcome.events if isinstance(e, CentralStakeReturned) for n in e.card_numbers}
    assert refunded == set(range(1, 21)) - won and outcome.decision.paid_by == "house"
    assert played.game.sale.sales_cents == sales  # the prizes announced stand
    # Once: the same request is answered again; another declaration is refused.
    again = played.game.declare_terminal_failed(failure, from_hall="hall-1", now_ms=played.now)
    assert again.repeated and again.decision == outcome.decision
    before = played.game.snapshot()
    with pytest.raises(TerminalAlreadyFailed, match="already declared failed in this game and refunded once"):
        played.game.declare_terminal_failed(TerminalFailure("f2", "hall-1", "t1", "again", "x"), from_hall="hall-1", now_ms=0)
    assert unchanged(played.game, before)
    # Refunded cards no longer win.
    played.draw_all(source)
    assert not {w.card_number for w in played.game.winners if w.pattern != "line"} & refunded
    check_conservation(money_of(played.events))


@pytest.mark.req("R96.3")
def test_a_failure_declared_once_a_ball_is_known_refunds_nothing_and_the_cards_play_on() -> None:
    """R96.3 ruling: a refund asked once balls are known would let a player keep the winning chances and
    recover the losing stakes; the cards stay in play (held by the central server) and win as any other."""
    played = Played().open()
    played.buy("a", terminal="t1", count=20)
    played.buy("b", terminal="t2", player="q", count=20)
    played.close()
    source = FakeBallSource(winning_draw(3))
    played.now = played.game.next_ball_due_ms  # type: ignore[assignment]
    played.record(played.game.draw_next(source, played.now))
    before = played.game.snapshot()
    failure = TerminalFailure("f1", "hall-1", "t1", "no power", "room chief")
    with pytest.raises(DrawStarted, match="its draw had started when the failure was declared") as refused:
        played.game.declare_terminal_failed(failure, from_hall="hall-1", now_ms=played.now)
    assert refused.value.code == "not_now"  # the hall closes its report: nothing to refund
    assert unchanged(played.game, before) and played.game.cards_in_play == 40
    played.draw_all(source)
    assert played.game.phase is Phase.CLOSED and not played.game.refunded_cards
    check_conservation(money_of(played.events))


def test_when_every_card_in_play_is_refunded_the_game_closes() -> None:
    played = Played().open()
    played.buy("a", terminal="t1", count=2)
    played.close()
    played.record(played.game.declare_terminal_failed(TerminalFailure("f", "hall-1", "t1", "fire", "chief"), from_hall="hall-1", now_ms=played.now))
    assert played.game.phase is Phase.CLOSED and played.game.cards_in_play == 0
    check_conservation(money_of(played.events))


@pytest.mark.req("R96.2")
def test_force_majeure_declares_the_game_not_played_and_returns_every_stake() -> None:
    played = Played(config(carries={"line": 5, "bingo": 9})).open()
    played.buy("a", count=10)
    played.buy("b", hall="hall-3", terminal="t3", player="z", count=5, pct=40)
    played.close()
    source = FakeBallSource(winning_draw(2))
    while "line" not in played.game.prizes:
        played.now = played.game.next_ball_due_ms  # type: ignore[assignment]
        played.record(played.game.draw_next(source, played.now))
    line = played.game.prizes["line"]
    events = played.record(played.game.declare_not_played("the generator failed its self-test", "operator", played.now))
    assert played.game.phase is Phase.NOT_PLAYED
    returned = sum(e.amount_cents for e in events if isinstance(e, CentralStakeReturned))
    assert returned == 10 * 100 + 5 * 40
    # The line already won stands; the bingo's carry-in passes to the next game untouched.
    assert played.game.carries == {"line": line.carry_cents, "bingo": 9}
    money = money_of(played.events)
    check_conservation(money)
    assert money.house_cents == -(line.amount_cents - 5)
    assert played.buy("late").decision.refusal_code == "not_played"  # type: ignore[union-attr]
    with pytest.raises(NotNow, match="cannot draw a ball once the game is declared not played"):
        played.game.ball_drawn(1, 10**9)


# --- The machine --------------------------------------------------------------------


def test_every_event_is_applied_through_the_table_and_a_corrupt_journal_is_refused() -> None:
    played = Played().open()
    played.buy("a")
    assert played.replayed().snapshot() == played.game.snapshot()
    with pytest.raises(EventError, match="central_ball_drawn cannot happen while the sale is open"):
        CentralGame.replay([*played.events, CentralBallDrawn(game_id="net-1", ball=5, ball_count=1, drawn_at_ms=0)], LIBRARY)
    with pytest.raises(EventError, match="does not follow the event it belongs to"):
        stray = CentralStakeReturned(
            game_id="net-1", hall_id="hall-1", credit_seq=1, purchase_request_id="a", terminal_id="t1",
            player_ref="p1", card_numbers=(1,), amount_cents=100, paid_by="stakes", cause="terminal_failed",
        )
        CentralGame.replay([*played.events, stray], LIBRARY)
    with pytest.raises(EventError, match="starts with central_game_scheduled"):
        CentralGame.replay(played.events[1:], LIBRARY)
    with pytest.raises(EventError, match="belongs to game other"):
        played.game.apply(CentralPrizeWon(
            game_id="other", pattern="line", ball_count=5, amount_cents=1, winner_count=1, paid_cents=1,
            carry_cents=0, final=False,
        ))


def test_the_table_has_a_refusal_for_purchases_in_every_phase_and_nothing_leaves_a_final_phase() -> None:
    for phase in Phase:
        assert (phase, Input.PURCHASE_REFUSED) in TABLE
    for (phase, input), (target, _) in TABLE.items():
        if phase in (Phase.CLOSED, Phase.NOT_PLAYED):
            assert input is Input.PURCHASE_REFUSED and target is phase

"""Game lifecycles (R85, R86, R93.9-13, R94.2, R96.3) and, driven together, the ledger."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from protocol.balls import BallError, FakeBallSource, RandomBallGenerator
from protocol.cards import Card
from protocol.claims import CardRef, ClaimVerdict, Win, check_claim
from protocol.errors import DomainError
from protocol.events import (
    BallCorrected,
    BallDrawn,
    BallVoided,
    CardRefused,
    CardSold,
    Event,
    GameSuspended,
    PrizeClosed,
    PrizeWon,
)
from protocol.game import (
    FINAL_STATES,
    SUSPENDED_FROM,
    TRADITIONAL_TABLE,
    GameError,
    Input,
    InvalidTransition,
    State,
    TraditionalGame,
    describe,
    render_table,
    settlement_after_failure,
)
from protocol.ledger import Ledger, Overdraft, Posting, Reference, account_kind
from protocol.settlement.refunds import (
    GAME_REFUND,
    RefundError,
    refund_game,
    refund_terminal,
    refunded_cards,
    stakes_account,
)
from protocol.strips import sample_strips

DOCS = Path(__file__).resolve().parents[2] / "docs" / "game-engine.md"


def cards_of(seed: int, strips: int = 2) -> dict[CardRef, Card]:
    """Random valid cards, sold as series 1, cards 1..6n."""
    cells = sample_strips(strips, random.Random(seed).randbytes).reshape(-1, 27)
    return {CardRef(1, i + 1): Card.from_cells(int(n) for n in row) for i, row in enumerate(cells)}


CARDS = cards_of(2026)


def selling_game(cards: int = 6, terminal: str | None = "t1") -> TraditionalGame:
    game = TraditionalGame("g1")
    game.open_sale(series=1, first_card=1, price_cents=100)
    for ref in list(CARDS)[:cards]:
        game.sell_card(series=1, card_number=ref.number, stake_cents=100, account="player:ana", terminal_id=terminal)
    return game


def play_until(game: TraditionalGame, balls: FakeBallSource | RandomBallGenerator, stop: State) -> None:
    """Draw balls, verify every winning card after each one and close the prizes found, until
    the game reaches ``stop``."""
    while game.state != stop:
        game.draw_ball(balls.draw())
        sold = {ref: CARDS[ref] for ref in game.in_play}
        for ref in sorted(sold):
            verdict = check_claim(ref, sold, game.drawn, game.won)
            if verdict.valid:
                game.claim_checked(verdict)
        if game.state in (State.LINE_FOUND, State.BINGO_FOUND) and game.state != stop:
            game.close_prizes(closed_by="ana")


# --- The tables -----------------------------------------------------------------------


def test_the_tables_are_rendered_in_the_docs() -> None:
    """docs/game-engine.md shows the tables the code runs."""
    text = DOCS.read_text()
    assert render_table(TRADITIONAL_TABLE) in text


@pytest.mark.parametrize("table", [TRADITIONAL_TABLE])
def test_final_states_accept_nothing_and_every_state_is_reachable(table: dict) -> None:
    assert not [key for key in table if key[0] in FINAL_STATES]
    reached, frontier = {State.SCHEDULED}, [State.SCHEDULED]
    while frontier:
        state = frontier.pop()
        for (source, _), (target, _) in table.items():
            if source == state and target != SUSPENDED_FROM and State(target) not in reached:
                reached.add(State(target))
                frontier.append(State(target))
    used = {s for s, _ in table} | {State(t) for t, _ in table.values() if t != SUSPENDED_FROM}
    assert used == reached


def traditional_inputs() -> dict[Input, Callable[[TraditionalGame], object]]:
    """One call per input, with arguments that would be fine in the right state."""
    ref = CardRef(1, 1)
    return {
        Input.SALE_OPENED: lambda g: g.open_sale(series=1, first_card=1, price_cents=100),
        Input.CARD_SOLD: lambda g: g.sell_card(series=1, card_number=99, stake_cents=100, account="player:x"),
        Input.SALE_CLOSED: lambda g: g.close_sale(),
        Input.BALL_DRAWN: lambda g: g.draw_ball(90),
        Input.BALL_VOIDED: lambda g: g.void_ball(90, voided_by="eve", role="room_chief", reason="typo"),
        Input.BALL_CORRECTED: lambda g: g.correct_ball(90, 89, reason="read 89 as 90", signed_by=("eve", "teo")),
        Input.CARD_REFUSED: lambda g: g.refuse_card(ref, reason="numbers scratched", refused_by="teo"),
        Input.PRIZE_CLOSED: lambda g: g.close_prizes(closed_by="ana"),
        Input.LINE_VERIFIED: lambda g: g.claim_checked(ClaimVerdict(ref, len(g.drawn), (Win("line", 1),))),
        Input.BINGO_VERIFIED: lambda g: g.claim_checked(ClaimVerdict(ref, len(g.drawn), (Win("bingo", 1),))),
        Input.CLAIM_REJECTED: lambda g: g.claim_checked(ClaimVerdict(ref, len(g.drawn), (), "no")),
        Input.GAME_CLOSED: lambda g: g.close(),
        Input.TERMINAL_FAILED: lambda g: g.terminal_failed("t9"),
        Input.FAILURE_REPORTED: lambda g: g.report_failure("power cut"),
        Input.FAILURE_RESOLVED: lambda g: g.resolve_failure(),
        Input.FAILURE_UNRESOLVED: lambda g: g.give_up("power still out"),
        Input.REFUND_DUE: lambda g: g.refund(),
        Input.MANUAL_FINISH_DUE: lambda g: g.finish_by_hand(authorised_by="eve"),
        Input.BALL_ENTERED: lambda g: g.enter_ball(90, entered_by="eve"),
        Input.GAME_FINISHED: lambda g: g.finish(finished_by="eve"),
    }


@pytest.mark.req("R85")
@pytest.mark.parametrize("state", list(State))
def test_an_input_outside_the_table_is_refused_with_a_message_and_changes_nothing(state: State) -> None:
    for input, call in traditional_inputs().items():
        if (state, input) in TRADITIONAL_TABLE:
            continue
        game = TraditionalGame("g1")
        game.state = state
        with pytest.raises(InvalidTransition) as refused:
            call(game)
        assert str(refused.value).endswith(describe(state))
        assert str(refused.value).startswith("cannot ")
        assert (game.state, game.steps, game.drawn, game.sales) == (state, [], (), {})


@pytest.mark.req("R85")
def test_no_ball_is_drawn_while_the_sale_is_open() -> None:
    game = selling_game()
    with pytest.raises(InvalidTransition, match="^cannot draw a ball while the sale is open$"):
        game.draw_ball(7)


# --- The traditional game -------------------------------------------------------------


@pytest.mark.req("R85", "R87.a", "R87.b")
def test_a_traditional_game_from_sale_to_close() -> None:
    game = selling_game()
    (closed,) = game.close_sale()
    assert (closed.cards_sold, closed.collection_cents) == (6, 600)
    play_until(game, RandomBallGenerator(), State.BINGO_WON)
    assert set(game.won) == {"line", "bingo"}
    assert game.won["line"].ball_count <= game.won["bingo"].ball_count == len(game.drawn)
    with pytest.raises(InvalidTransition, match="cannot draw a ball once the bingo is won"):
        game.draw_ball(next(b for b in range(1, 91) if b not in game.drawn))
    game.close()
    assert game.state == State.CLOSED
    assert [s.after for s in game.steps if s.before != s.after] == [
        State.SELLING, State.SALE_CLOSED, State.DRAWING, State.LINE_FOUND, State.LINE_WON, State.BINGO_FOUND,
        State.BINGO_WON, State.CLOSED,
    ]


@pytest.mark.req("R85.11")
def test_a_rejected_claim_is_recorded_and_the_game_goes_on() -> None:
    game = selling_game()
    game.close_sale()
    game.draw_ball(1)
    verdict = check_claim(CardRef(1, 1), CARDS, game.drawn, game.won)
    (event,) = game.claim_checked(verdict)
    assert event.type == "claim_rejected" and "has not completed a line" in event.reason
    assert game.state == State.DRAWING


@pytest.mark.req("R87.a")
def test_a_verdict_from_before_the_last_ball_is_refused() -> None:
    game = selling_game()
    game.close_sale()
    game.draw_ball(1)
    stale = check_claim(CardRef(1, 1), CARDS, game.drawn, game.won)
    game.draw_ball(2)
    with pytest.raises(GameError, match="check it again"):
        game.claim_checked(stale)


@pytest.mark.req("R87.a")
def test_the_machine_refuses_a_line_on_another_ball_than_the_winning_one() -> None:
    game = selling_game()
    game.close_sale()
    for ball in (1, 2, 3):
        game.draw_ball(ball)
    game.claim_checked(ClaimVerdict(CardRef(1, 1), 3, (Win("line", 3),)))
    with pytest.raises(GameError, match="the line was won on ball 3"):
        game.claim_checked(ClaimVerdict(CardRef(1, 2), 3, (Win("line", 2),)))
    with pytest.raises(GameError, match="already won the line"):
        game.claim_checked(ClaimVerdict(CardRef(1, 1), 3, (Win("line", 3),)))
    game.close_prizes(closed_by="ana")
    game.draw_ball(4)
    with pytest.raises(InvalidTransition, match="cannot award the line while drawing for the bingo"):
        game.claim_checked(ClaimVerdict(CardRef(1, 2), 4, (Win("line", 3),)))
    assert list(game.won["line"].cards) == [CardRef(1, 1)]


@pytest.mark.req("R82.13-16")
def test_sales_are_checked() -> None:
    game = selling_game(cards=1)
    with pytest.raises(GameError, match="already sold"):
        game.sell_card(series=1, card_number=1, stake_cents=100, account="player:bo")
    with pytest.raises(GameError, match="at most the card's price"):
        game.sell_card(series=1, card_number=2, stake_cents=101, account="player:bo")
    with pytest.raises(GameError, match="more than nothing"):
        game.sell_card(series=1, card_number=2, stake_cents=0, account="player:bo")
    with pytest.raises(GameError, match="player's account or a cash desk"):
        game.sell_card(series=1, card_number=2, stake_cents=50, account="house")
    with pytest.raises(GameError, match="unknown account"):
        game.sell_card(series=1, card_number=2, stake_cents=50, account="wallet:bo")
    (sold,) = game.sell_card(series=1, card_number=2, stake_cents=50, account="cash:desk1")
    assert sold == CardSold("g1", 1, 2, 100, 50, "cash:desk1", None)
    game.close_sale()
    with pytest.raises(InvalidTransition, match="cannot sell a card before the first ball"):
        game.sell_card(series=1, card_number=3, stake_cents=100, account="player:bo")


@pytest.mark.req("R85.5")
def test_a_ball_is_drawn_once() -> None:
    game = selling_game()
    game.close_sale()
    game.draw_ball(17)
    with pytest.raises(GameError, match="17 has already been drawn, as ball 1"):
        game.draw_ball(17)
    with pytest.raises(GameError, match="from 1 to 90"):
        game.draw_ball(91)


def test_an_older_journals_voided_ball_still_folds() -> None:
    """Journals written before the ruling of R85.5 recorded ball recalls; they read as they were."""
    game = selling_game()
    game.close_sale()
    game.draw_ball(66)
    game.draw_ball(89)
    (voided,) = game.void_ball(89, voided_by="eve", role="room_chief", reason="read 68 as 89")
    assert voided == BallVoided("g1", 89, 2, "eve", "room_chief", "read 68 as 89")
    assert game.drawn == (66,)
    with pytest.raises(BallError, match="5 has not been drawn"):
        game.void_ball(5, voided_by="eve", role="room_chief", reason="x")


@pytest.mark.req("R85.5")
def test_the_last_ball_misread_is_replaced_by_the_ball_drawn_before_any_claim_on_it() -> None:
    game = selling_game()
    game.close_sale()
    game.draw_ball(6)
    game.draw_ball(9)  # announced as 9; the ball on the rack is 8
    with pytest.raises(GameError, match="only the last ball \\(9\\)"):
        game.check_correction(6, 8)
    with pytest.raises(GameError, match="6 has already been drawn, as ball 1"):
        game.check_correction(9, 6)
    with pytest.raises(GameError, match="names another number"):
        game.check_correction(9, 9)
    with pytest.raises(GameError, match="signed by two staff members"):
        game.correct_ball(9, 8, reason="read 8 as 9", signed_by=("eve", "eve"))
    (corrected,) = game.correct_ball(9, 8, reason="read 8 as 9", signed_by=("eve", "teo"))
    assert (corrected.misread, corrected.ball, corrected.ball_count, corrected.signed_by) == (9, 8, 2, ("eve", "teo"))
    assert game.drawn == (6, 8), "the corrected number replaces the announced one; 9 was never drawn"
    game.draw_ball(9)  # the ball still in the chamber may come later
    game.claim_checked(check_claim(CardRef(1, 1), CARDS, game.drawn, game.won))
    with pytest.raises(GameError, match="the announced number stands"):
        game.correct_ball(9, 10, reason="x", signed_by=("eve", "teo"))
    assert game.drawn == (6, 8, 9)


def line_cards() -> tuple[list[int], CardRef, CardRef]:
    """Balls on whose last two cards of ``CARDS`` complete a row together, the first rows complete."""
    rows = [(ref, set(row) - {0}) for ref, card in CARDS.items() for row in card.rows]
    for a, row_a in rows:
        for b, row_b in rows:
            if a < b and len(row_a & row_b) == 1:
                union = row_a | row_b
                if sorted({r for r, row in rows if row <= union}) == [a, b]:
                    (last,) = row_a & row_b
                    return sorted(union - {last}) + [last], a, b
    raise AssertionError("no two rows share one number")


@pytest.mark.req("R85.6", "R87.a")
def test_a_line_found_stops_the_draw_until_its_prize_closes_and_then_takes_no_other_card() -> None:
    balls, first, second = line_cards()
    game = selling_game(cards=12)
    game.close_sale()
    for ball in balls:
        game.draw_ball(ball)
    game.claim_checked(check_claim(first, CARDS, game.drawn, game.won))
    assert game.state == State.LINE_FOUND and game.open_prizes == ("line",)
    with pytest.raises(InvalidTransition, match="cannot draw a ball while the line is open"):
        game.draw_ball(next(b for b in range(1, 91) if b not in game.drawn))
    with pytest.raises(InvalidTransition, match="cannot close the game while the line is open"):
        game.close()
    (closed,) = game.close_prizes(closed_by="ana")
    assert (closed.patterns, closed.ball_count, closed.closed_by) == (("line",), len(balls), "ana")
    assert game.state == State.LINE_WON and game.won["line"].closed
    late = check_claim(second, CARDS, game.drawn, game.won)
    assert not late.valid and late.reason == f"the line of ball {len(balls)} is closed; card {second} was not claimed before it closed"
    with pytest.raises(InvalidTransition, match="cannot award the line while drawing for the bingo"):
        game.claim_checked(ClaimVerdict(second, len(balls), (Win("line", len(balls)),)))
    with pytest.raises(InvalidTransition, match="cannot close a prize while drawing for the bingo"):
        game.close_prizes(closed_by="ana")


@pytest.mark.req("R82.8")
def test_a_refused_card_wins_nothing_and_a_verified_card_stands() -> None:
    balls, first, second = line_cards()
    game = selling_game(cards=12)
    game.close_sale()
    for ball in balls:
        game.draw_ball(ball)
    (refused,) = game.refuse_card(second, reason="numbers scratched out", refused_by="teo")
    assert (refused.series, refused.card_number, refused.reason) == (second.series, second.number, "numbers scratched out")
    verdict = check_claim(second, CARDS, game.drawn, game.won, refused=game.refused)
    assert verdict.reason == f"card {second} was refused as invalid: numbers scratched out"
    with pytest.raises(GameError, match="refused as invalid"):
        game.claim_checked(ClaimVerdict(second, len(balls), (Win("line", len(balls)),)))
    game.claim_checked(check_claim(first, CARDS, game.drawn, game.won, refused=game.refused))
    with pytest.raises(GameError, match="verified as winning the line; a verified card stands"):
        game.refuse_card(first, reason="late second look", refused_by="teo")
    with pytest.raises(GameError, match="already refused"):
        game.refuse_card(second, reason="again", refused_by="teo")
    assert game.won["line"].cards == frozenset({first})


@pytest.mark.req("R86.1-2")
@pytest.mark.parametrize("where", [State.SELLING, State.SALE_CLOSED, State.DRAWING, State.LINE_FOUND, State.LINE_WON])
def test_a_suspended_game_resumes_where_it_stopped(where: State) -> None:
    game = selling_game()
    if where != State.SELLING:
        game.close_sale()
    if where in (State.DRAWING, State.LINE_FOUND, State.LINE_WON):
        game.draw_ball(1)
    if where in (State.LINE_FOUND, State.LINE_WON):
        game.claim_checked(ClaimVerdict(CardRef(1, 1), 1, (Win("line", 1),)))
    if where == State.LINE_WON:
        game.close_prizes(closed_by="ana")
    assert game.state == where
    (suspended,) = game.report_failure("blower air pressure low")
    assert suspended == GameSuspended("g1", where, "blower air pressure low")
    with pytest.raises(InvalidTransition, match="cannot draw a ball while the game is suspended"):
        game.draw_ball(2)
    (resumed,) = game.resolve_failure()
    assert game.state == resumed.state == where


@pytest.mark.req("R86.1-2")
def test_suspended_for_good_before_a_prize_the_game_is_refunded() -> None:
    game = selling_game()
    game.close_sale()
    game.draw_ball(1)
    game.report_failure("server down")
    game.give_up("still down after 30 minutes")
    assert settlement_after_failure(game.won) == Input.REFUND_DUE
    with pytest.raises(GameError, match="no prize has been won"):
        game.finish_by_hand(authorised_by="eve")
    game.refund()
    assert game.state == State.REFUNDED


@pytest.mark.req("R86.1-2")
def test_suspended_for_good_after_a_prize_the_game_is_finished_by_hand() -> None:
    game = selling_game()
    game.close_sale()
    balls = FakeBallSource(random.Random(1).sample(range(1, 91), 90))
    play_until(game, balls, State.LINE_WON)
    game.report_failure("blower jammed")
    game.give_up("no reserve machine")
    assert settlement_after_failure(game.won) == Input.MANUAL_FINISH_DUE
    with pytest.raises(GameError, match="finished by hand, not refunded"):
        game.refund()
    game.finish_by_hand(authorised_by="room chief Eve")
    with pytest.raises(InvalidTransition, match="cannot draw a ball while the game is being finished by hand"):
        game.draw_ball(balls.draw())
    while game.state == State.FINISHING_BY_HAND:
        (entered,) = game.enter_ball(balls.draw(), entered_by="room chief Eve")
        assert isinstance(entered, BallDrawn) and entered.entered_by == "room chief Eve"
        sold = {ref: CARDS[ref] for ref in game.in_play}
        for ref in sorted(sold):
            verdict = check_claim(ref, sold, game.drawn, game.won)
            if verdict.valid:
                game.claim_checked(verdict)
    assert game.state == State.WON_BY_HAND
    with pytest.raises(GameError, match="the bingo found on ball .* is open; close it before the game is finished"):
        game.finish(finished_by="room chief Eve")
    game.close_prizes(closed_by="room chief Eve")
    game.finish(finished_by="room chief Eve")
    assert game.state == State.FINISHED


@pytest.mark.req("R96.3")
def test_a_failed_terminals_cards_leave_the_game() -> None:
    game = selling_game(cards=2, terminal="t1")
    game.sell_card(series=1, card_number=3, stake_cents=100, account="player:bo", terminal_id="t2")
    game.terminal_failed("t1")
    assert game.in_play == {CardRef(1, 3)}
    with pytest.raises(GameError, match="stays disconnected"):
        game.sell_card(series=1, card_number=4, stake_cents=100, account="player:ana", terminal_id="t1")
    with pytest.raises(GameError, match="already failed"):
        game.terminal_failed("t1")
    (closed,) = game.close_sale()
    assert (closed.cards_sold, closed.collection_cents) == (1, 100)
    game.draw_ball(1)
    with pytest.raises(GameError, match="refunded with its failed terminal"):
        game.claim_checked(ClaimVerdict(CardRef(1, 1), 1, (Win("line", 1),)))


# --- A sale that closes at a time ---------------------------------------------------------


@pytest.mark.req("R93.1", "R93.8")
def test_no_card_is_sold_outside_the_sale_time() -> None:
    """A sale given its closing time (the terminals' sale) sells no card at or after it, nor one sold
    without the time it was asked at."""
    game = TraditionalGame("g7")
    game.open_sale(series=40, first_card=1, price_cents=200, closes_at_ms=60_000)
    game.sell_card(series=40, card_number=1, stake_cents=200, account="player:a", terminal_id="h1/t1", at_ms=59_999)
    with pytest.raises(GameError, match="sale time is over"):
        game.sell_card(series=40, card_number=2, stake_cents=200, account="player:a", terminal_id="h1/t1", at_ms=60_000)
    with pytest.raises(GameError, match="give the time"):
        game.sell_card(series=40, card_number=2, stake_cents=200, account="player:a")


def test_the_hall_game_awards_only_its_own_patterns() -> None:
    game = selling_game()
    game.close_sale()
    game.draw_ball(1)
    with pytest.raises(GameError, match="not 'two_lines'"):
        game.claim_checked(ClaimVerdict(CardRef(1, 1), 1, (Win("two_lines", 1),)))


# --- The traditional game and the ledger, driven together -----------------------------

PLAYERS = ("player:ana", "player:bo")
TERMINALS = {"player:ana": "t1", "player:bo": "t2", "cash:desk1": None}
LOAD = 2_000
PRICE = 100


class HallGame(RuleBasedStateMachine):
    """Sales, balls, claims, prizes, failures and refunds of one game, against the ledger.

    The test keeps its own account of what every account should hold (``expected``)
    and compares it with the ledger after every step.
    """

    @initialize()
    def open(self) -> None:
        self.game = TraditionalGame("g1")
        self.ledger = Ledger()
        self.journal: list[Event] = []
        self.expected: dict[str, int] = {}
        for player in PLAYERS:
            self.move(LOAD, "cash:desk1", player, "load")
        self.journal += self.game.open_sale(series=1, first_card=1, price_cents=PRICE)

    def move(self, amount: int, debit: str, credit: str, reason: str, card: str | None = None) -> None:
        self.track(
            self.ledger.post(
                Posting.transfer(amount, debit=debit, credit=credit, reason=reason,
                                 reference=Reference("g1", card, len(self.journal)))
            )
        )

    def track(self, posting: Posting) -> None:
        """Update what each account should hold, on its own side (cash: what the drawer holds)."""
        for legs, sign in ((posting.debits, +1), (posting.credits, -1)):
            for leg in legs:
                side = sign if account_kind(leg.account).normal == "debit" else -sign
                self.expected[leg.account] = self.expected.get(leg.account, 0) + side * leg.amount

    def record(self, events: list[Event]) -> list[Event]:
        self.journal += events
        return events

    @property
    def sales(self) -> list[CardSold]:
        return [e for e in self.journal if isinstance(e, CardSold)]

    # --- rules ------------------------------------------------------------------------

    @precondition(lambda self: self.game.accepts(Input.CARD_SOLD))
    @rule(orders=st.lists(
        st.tuples(st.integers(1, len(CARDS)), st.sampled_from(sorted(TERMINALS)), st.integers(1, PRICE)),
        min_size=1, max_size=6,
    ))
    def sell(self, orders: list[tuple[int, str, int]]) -> None:
        for number, payer, stake in orders:
            if CardRef(1, number) in self.game.sales or TERMINALS[payer] in self.game.failed_terminals:
                continue
            if payer != "cash:desk1" and self.ledger.balance(payer) < stake:
                with pytest.raises(Overdraft):
                    self.ledger.post(Posting.transfer(stake, debit=payer, credit=stakes_account("g1"), reason="sale"))
                continue
            self.record(self.game.sell_card(series=1, card_number=number, stake_cents=stake, account=payer,
                                            terminal_id=TERMINALS[payer]))
            self.move(stake, payer, stakes_account("g1"), "sale", f"1-{number}")

    @precondition(lambda self: self.game.accepts(Input.SALE_CLOSED))
    @rule()
    def close_sale(self) -> None:
        self.record(self.game.close_sale())

    @precondition(lambda self: self.game.accepts(Input.BALL_DRAWN) or self.game.accepts(Input.BALL_ENTERED))
    @rule(data=st.data(), count=st.integers(1, 30))
    def draw(self, data: st.DataObject, count: int) -> None:
        """Draw up to ``count`` balls; after each, the players holding a winner claim it."""
        for _ in range(count):
            manual = self.game.accepts(Input.BALL_ENTERED)
            if len(self.game.drawn) == 90 or not (manual or self.game.accepts(Input.BALL_DRAWN)):
                return  # a prize found stops the draw (R85.6)
            ball = data.draw(st.sampled_from([b for b in range(1, 91) if b not in self.game.drawn]))
            if manual:
                if self.game.open_prizes:  # the room chief's next ball closes the prize found
                    self.record(self.game.close_prizes(closed_by="eve"))
                self.record(self.game.enter_ball(ball, entered_by="eve"))
            else:
                self.record(self.game.draw_ball(ball))
            sold = {r: CARDS[r] for r in self.game.in_play}
            for ref in sorted(sold):
                verdict = check_claim(ref, sold, self.game.drawn, self.game.won)
                if verdict.valid:
                    self.claim(ref.number)

    @precondition(lambda self: self.game.accepts(Input.BALL_VOIDED) and self.game.drawn)
    @rule(role=st.sampled_from(["room_chief", "cashier"]))
    def void_last_ball(self, role: str) -> None:
        try:
            self.record(self.game.void_ball(self.game.drawn[-1], voided_by="eve", role=role, reason="misread"))
        except DomainError:
            pass  # wrong role or a prize on that ball: refused, and the invariants show nothing moved

    @precondition(lambda self: self.game.accepts(Input.BALL_CORRECTED) and self.game.drawn)
    @rule(corrected=st.integers(1, 90))
    def correct_last_ball(self, corrected: int) -> None:
        try:
            self.record(self.game.correct_ball(self.game.drawn[-1], corrected, reason="misread",
                                               signed_by=("eve", "teo")))
        except DomainError:
            pass  # claimed on, or a number drawn already: refused, and the invariants show nothing moved

    @precondition(lambda self: self.game.accepts(Input.PRIZE_CLOSED) and self.game.open_prizes)
    @rule()
    def close_prize(self) -> None:
        self.record(self.game.close_prizes(closed_by="ana"))

    @precondition(lambda self: self.game.accepts(Input.CARD_REFUSED))
    @rule(number=st.integers(1, len(CARDS)))
    def refuse(self, number: int) -> None:
        try:
            self.record(self.game.refuse_card(CardRef(1, number), reason="tampered", refused_by="teo"))
        except GameError:
            pass  # not sold, refunded, a winner or refused already: refused, nothing moved

    @precondition(lambda self: self.game.accepts(Input.CLAIM_REJECTED))
    @rule(number=st.integers(1, len(CARDS) + 2))
    def claim(self, number: int) -> None:
        ref = CardRef(1, number)
        sold = {r: CARDS[r] for r in self.game.in_play}
        verdict = check_claim(ref, sold, self.game.drawn, self.game.won, refused=self.game.refused)
        try:
            events = self.record(self.game.claim_checked(verdict))
        except InvalidTransition:
            return  # e.g. a late line claim once the bingo is won by hand
        for prize in events:
            if isinstance(prize, PrizeWon):
                self.pay(prize)

    def pay(self, prize: PrizeWon) -> None:
        """A toy prize: half a card's price for the line, three for the bingo, while the collection lasts."""
        sale = self.game.sales[CardRef(prize.series, prize.card_number)]
        amount = min(PRICE // 2 if prize.pattern == "line" else 3 * PRICE, self.ledger.balance(stakes_account("g1")))
        if amount:
            self.move(amount, stakes_account("g1"), sale.account, f"prize:{prize.pattern}", f"{prize.series}-{prize.card_number}")

    @precondition(lambda self: self.game.accepts(Input.TERMINAL_FAILED))
    @rule(terminal=st.sampled_from(["t1", "t2"]))
    def terminal_fails(self, terminal: str) -> None:
        if terminal in self.game.failed_terminals:
            with pytest.raises(GameError):
                self.game.terminal_failed(terminal)
            return
        self.record(self.game.terminal_failed(terminal))
        try:
            postings = refund_terminal(self.ledger, self.sales, "g1", terminal, len(self.journal))
        except RefundError:
            # The collection no longer covers these stakes (prizes were paid from it).
            assert self.ledger.balance(stakes_account("g1")) < sum(
                s.stake_cents for s in self.sales if s.terminal_id == terminal)
            return
        for p in postings:
            self.track(p)

    @precondition(lambda self: self.game.accepts(Input.FAILURE_REPORTED))
    @rule(dice=st.integers(1, 8))
    def fail(self, dice: int) -> None:
        if dice == 1:  # failures are rarer than the rest, so games also get to their prizes
            self.record(self.game.report_failure("power cut"))

    @precondition(lambda self: self.game.accepts(Input.FAILURE_RESOLVED))
    @rule(dice=st.integers(1, 3))
    def after_failure(self, dice: int) -> None:
        if dice > 1:  # most failures are repaired
            self.record(self.game.resolve_failure())
        else:
            self.record(self.game.give_up("no repair in time"))

    @precondition(lambda self: self.game.state == State.SUSPENDED_FOR_GOOD)
    @rule()
    def settle(self) -> None:
        if settlement_after_failure(self.game.won) == Input.REFUND_DUE:
            self.record(self.game.refund())
            for p in refund_game(self.ledger, self.sales, "g1", len(self.journal)):
                self.track(p)
            if self.ledger.postings_for("g1", GAME_REFUND):
                with pytest.raises(RefundError):
                    refund_game(self.ledger, self.sales, "g1", len(self.journal))
        else:
            self.record(self.game.finish_by_hand(authorised_by="eve"))

    @precondition(lambda self: self.game.accepts(Input.GAME_CLOSED) or self.game.accepts(Input.GAME_FINISHED))
    @rule()
    def end(self) -> None:
        if self.game.accepts(Input.GAME_CLOSED):
            self.record(self.game.close())
        else:
            if self.game.open_prizes:
                self.record(self.game.close_prizes(closed_by="eve"))
            self.record(self.game.finish(finished_by="eve"))

    @rule(input=st.sampled_from(list(Input)))
    def anything(self, input: Input) -> None:
        """Any input at any time: outside the table it is refused and changes nothing."""
        call = traditional_inputs().get(input)
        if call is None or self.game.accepts(input):
            return
        before = (self.game.state, len(self.game.steps), self.game.drawn, dict(self.game.sales))
        with pytest.raises(InvalidTransition):
            call(self.game)  # type: ignore[arg-type]
        assert before == (self.game.state, len(self.game.steps), self.game.drawn, dict(self.game.sales))

    # --- invariants -------------------------------------------------------------------

    @invariant()
    def the_ledger_sums_to_zero(self) -> None:
        assert self.ledger.total() == 0

    @invariant()
    def no_cent_is_created_or_lost(self) -> None:
        assert {a: b for a, b in self.ledger.balances().items() if b} == {a: b for a, b in self.expected.items() if b}
        assert sum(self.ledger.balance(p) for p in PLAYERS) + self.ledger.balance(stakes_account("g1")) == (
            2 * LOAD + sum(s.stake_cents for s in self.sales if s.account == "cash:desk1")
            - sum(p.amount for p in self.ledger.postings if p.credits[0].account == "cash:desk1" and p.reason != "load")
        )

    @invariant()
    def no_player_is_negative(self) -> None:
        assert all(self.ledger.balance(p) >= 0 for p in PLAYERS)

    @invariant()
    def states_change_only_through_the_table(self) -> None:
        for step in self.game.steps:
            target, _ = TRADITIONAL_TABLE[(step.before, step.input)]
            if target == SUSPENDED_FROM:
                assert step.before == State.SUSPENDED
            else:
                assert step.after == target

    @invariant()
    def a_refunded_game_pays_no_prize(self) -> None:
        if self.game.state == State.REFUNDED:
            assert not any(isinstance(e, PrizeWon) for e in self.journal)
            assert not any(p.reason.startswith("prize:") for p in self.ledger.postings)
            assert self.ledger.balance(stakes_account("g1")) == 0
            assert refunded_cards(self.ledger, "g1") == {f"1-{s.card_number}" for s in self.sales}

    @invariant()
    def balls_never_repeat(self) -> None:
        assert len(set(self.game.drawn)) == len(self.game.drawn)
        replayed: list[int] = []
        for event in self.journal:
            if isinstance(event, BallDrawn):
                assert event.ball_count == len(replayed) + 1
                replayed.append(event.ball)
            elif isinstance(event, BallVoided):
                assert replayed.pop() == event.ball
            elif isinstance(event, BallCorrected):
                assert replayed[-1] == event.misread
                replayed[-1] = event.ball
        assert tuple(replayed) == self.game.drawn

    @invariant()
    def a_refused_card_wins_nothing_and_a_closed_prize_takes_no_card(self) -> None:
        closed_at: dict[str, int] = {}
        for position, event in enumerate(self.journal):
            if isinstance(event, PrizeWon):
                ref = CardRef(event.series, event.card_number)
                assert event.pattern not in closed_at, f"{ref} won the {event.pattern} after it closed"
                assert ref not in self.game.refused or position < [
                    i for i, e in enumerate(self.journal) if isinstance(e, CardRefused) and
                    (e.series, e.card_number) == (ref.series, ref.number)][0]
            elif isinstance(event, PrizeClosed):
                closed_at.update(dict.fromkeys(event.patterns, position))


HallGame.TestCase.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)
test_hall_game_and_ledger = pytest.mark.req("R85", "R86.1-2", "R96.3", "R87.a", "R87.b")(HallGame.TestCase)

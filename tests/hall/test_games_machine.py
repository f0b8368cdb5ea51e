"""Random command sequences against the hall game, with restarts (R82.5, R82.6, R85.5, R85.6, R82.8, R86, R87, R96.4).

A hypothesis rule-based machine gives the game's commands in any order, by any staff
member, with arguments in and out of range, and now and then restarts the hall from its
journal as a ``kill -9`` would.  After every step: the ledger sums to zero, no card is
sold twice in a game, the paper numbering holds, no ball repeats, a hall rebuilt from
the journal has exactly the live state, and a refused command wrote nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from twisted.internet.task import Clock

from hall_server.hall.roles import Role
from hall_server.store.database import open_database
from protocol.chain import Record
from protocol.errors import DomainError
from server_kit.core import Actor
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_games import CASHIER, POT_RULES, SELLER, SELLER_2, TABLE, Hall, ScriptedBalls, fund_drawer
from tests.hall.test_session import ADMIN, CHIEF, open_session

STAFF = [SELLER, SELLER_2, TABLE, CASHIER, CHIEF, ADMIN, Actor("hall-server", Role.SYSTEM)]
staff = st.sampled_from(STAFF)


class HallGameCommands(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="hall-game-"))
        engine = open_database(f"sqlite:///{self.home / 'hall.sqlite3'}")
        self.journal = Journal(engine, Ed25519PrivateKey.generate(), head=self.home / "journal.head")
        self.clock = Clock()
        self.clock.advance(1_780_000_000)
        self.hall = Hall(self.journal, self.clock, rules=POT_RULES, balls=ScriptedBalls(reads_balls=True))
        open_session(self.hall.session)
        fund_drawer(self.hall, "safe", 10_000_000)
        self.refusals = 0

    def teardown(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    # --- Running a command ----------------------------------------------------------------

    def run(self, command: Callable[[], Any]) -> list[Record] | None:
        """The command's records, or None when it was refused: then the journal is unchanged."""
        before = self.hall.core.seq
        try:
            return result(command())
        except DomainError as error:
            assert str(error), "a refusal says why"
            assert self.hall.core.seq == before and self.journal.last.seq == before
            self.refusals += 1
            return None

    @property
    def games(self):  # type: ignore[no-untyped-def]
        return self.hall.games

    def next_card(self, series: int) -> int:
        game = self.games.current
        try:
            return game.sale.next_card(series) if game else 1
        except DomainError:
            return 1

    # --- Rules ------------------------------------------------------------------------------

    @rule(actor=staff, series=st.sampled_from([7, 8, 9, 11, 99]))
    def announce_sale(self, actor: Actor, series: int) -> None:
        self.run(lambda: self.games.announce_sale(actor, series))

    @rule(actor=st.sampled_from([SELLER, SELLER_2, CHIEF]), series=st.sampled_from([7, 8]),
          offset=st.sampled_from([0, 0, 0, -1, 1]), count=st.integers(1, 12))
    def sell_cards(self, actor: Actor, series: int, offset: int, count: int) -> None:
        first = self.next_card(series) + offset
        self.run(lambda: self.games.sell_cards(actor, series, first, first + count - 1))

    @rule(actor=st.sampled_from([SELLER, CHIEF]), series=st.sampled_from([8, 9, 11]))
    def open_second_series(self, actor: Actor, series: int) -> None:
        self.run(lambda: self.games.open_second_series(actor, series))

    @rule(actor=st.sampled_from([CHIEF, SELLER]), superbingo=st.sampled_from([0, 41, 42, 60]),
          grand=st.sampled_from([0, 0, 50]), threshold=st.sampled_from([0, 40, 43]), megabingo=st.booleans())
    def announce_pots(self, actor: Actor, superbingo: int, grand: int, threshold: int, megabingo: bool) -> None:
        self.run(lambda: self.games.announce_pots(actor, superbingo, grand, threshold, megabingo))

    @rule(actor=st.sampled_from([ADMIN, CHIEF, CASHIER]), pot=st.sampled_from(["superbingo", "grand_superbingo", "jackpot", "tax"]),
          amount=st.sampled_from([1, 5_000, 400_001]))
    def contribute_to_pot(self, actor: Actor, pot: str, amount: int) -> None:
        self.run(lambda: self.games.contribute_to_pot(actor, pot, amount))

    @rule(actor=st.sampled_from([CHIEF, SELLER]))
    def close_sale(self, actor: Actor) -> None:
        self.run(lambda: self.games.close_sale(actor))

    @rule(actor=st.sampled_from([SELLER, SELLER, TABLE]), balls=st.integers(1, 25))
    def draw_and_verify(self, actor: Actor, balls: int) -> None:
        """Draw balls; the table chief verifies every card a ball completes."""
        for _ in range(balls):
            records = self.run(lambda: self.games.draw_ball(actor))
            if not records:
                return
            (ball,) = records
            for label in ball.payload["completed_line"] + ball.payload["completed_bingo"]:
                series, number = (int(x) for x in label.split("-"))
                self.run(lambda: self.games.verify_claim(TABLE, series, number))

    @rule(actor=st.sampled_from([TABLE, TABLE, CHIEF]), series=st.sampled_from([7, 8]), number=st.integers(0, 61))
    def verify_claim(self, actor: Actor, series: int, number: int) -> None:
        self.run(lambda: self.games.verify_claim(actor, series, number))

    @rule(actor=st.sampled_from([CHIEF, TABLE, TABLE, SELLER]), last=st.booleans(), corrected=st.integers(0, 91))
    def correct_ball(self, actor: Actor, last: bool, corrected: int) -> None:
        game = self.games.current
        drawn = game.machine.drawn if game else ()
        ball = drawn[-1] if drawn and last else (drawn[0] if drawn else 1)
        self.run(lambda: self.games.correct_ball(actor, ball, corrected, "misread"))

    @rule(actor=st.sampled_from([CHIEF, TABLE, SELLER]))
    def cancel_ball_correction(self, actor: Actor) -> None:
        self.run(lambda: self.games.cancel_ball_correction(actor))

    @rule(actor=st.sampled_from([TABLE, TABLE, CHIEF]), series=st.sampled_from([7, 8]), number=st.integers(0, 61))
    def refuse_card(self, actor: Actor, series: int, number: int) -> None:
        self.run(lambda: self.games.refuse_card(actor, series, number, "numbers scratched"))

    @rule(actor=st.sampled_from([SELLER, SELLER, TABLE]))
    def close_prize(self, actor: Actor) -> None:
        self.run(lambda: self.games.close_prize(actor))

    @rule(seconds=st.sampled_from([3, 9, 10, 30]))
    def wait(self, seconds: int) -> None:
        """Time passes: a prize found with no new claim for the configured wait closes by itself (R85.6)."""
        before = self.games.current.machine.state if self.games.current else None
        self.clock.advance(seconds)
        game = self.games.current
        if before in ("line_found", "bingo_found") and seconds >= 10 and game is not None:
            assert game.machine.state in ("line_won", "bingo_won"), "the wait closed the prize"

    @rule(actor=st.sampled_from([CASHIER, CHIEF, SELLER]), desk=st.sampled_from(["safe", "safe", "ana", "nobody"]))
    def pay_prizes(self, actor: Actor, desk: str) -> None:
        self.run(lambda: self.games.pay_prizes(actor, desk))

    @rule(cents=st.integers(1, 3_000))
    def hand_in_takings(self, cents: int) -> None:
        """A seller's takings into the paying desk: never those a refund would pay back."""
        self.run(lambda: self.hall.cashier.hand_in_takings(CASHIER, "ana", "safe", cents))

    @invariant()
    def a_refundable_game_keeps_its_paper_stakes_in_the_sellers_drawers(self) -> None:
        game = self.games.current
        if game is not None and not game.over and not game.machine.won:
            for seller in ("ana", "ben"):
                drawer = f"cash:{seller}"
                stakes = sum(s.stake_cents for s in game.machine.sales.values() if s.account == drawer)
                assert self.hall.ledger.balance(drawer) >= stakes

    @rule(actor=st.sampled_from([CHIEF, SELLER]))
    def close_game(self, actor: Actor) -> None:
        self.run(lambda: self.games.close_game(actor))

    @rule(actor=st.sampled_from([CHIEF, SELLER]))
    def collect_cards(self, actor: Actor) -> None:
        self.run(lambda: self.games.collect_cards(actor))

    @rule(actor=st.sampled_from([CHIEF, STAFF[-1], TABLE]))
    def suspend_game(self, actor: Actor) -> None:
        self.run(lambda: self.games.suspend_game(actor, "blower fault"))

    @rule()
    def resume_game(self) -> None:
        self.run(lambda: self.games.resume_game(CHIEF))

    @rule()
    def suspend_game_for_good(self) -> None:
        self.run(lambda: self.games.suspend_game_for_good(CHIEF, "no spare blower"))

    @rule(ball=st.integers(0, 91))
    def enter_ball(self, ball: int) -> None:
        records = self.run(lambda: self.games.enter_ball(CHIEF, ball))
        for label in (records[0].payload["completed_bingo"] if records else []):
            series, number = (int(x) for x in label.split("-"))
            self.run(lambda: self.games.verify_claim(TABLE, series, number))

    @rule()
    def finish_game(self) -> None:
        self.run(lambda: self.games.finish_game(CHIEF))

    @rule(actor=st.sampled_from([CHIEF, ADMIN]))
    def announce_last_game(self, actor: Actor) -> None:
        self.run(lambda: self.games.announce_last_game(actor))

    @rule(steps=st.integers(1, 40), cards=st.integers(1, 15), desk=st.sampled_from(["safe", "ana"]))
    def advance(self, steps: int, cards: int, desk: str) -> None:
        """What the staff would do next, ``steps`` times: so that whole games get played."""
        for _ in range(steps):
            game = self.games.current
            if game is None:
                series = next((s for s in (7, 8) if self.games.last_sold(self.hall.games.catalog.series(s)) < 60), None)
                if series is None:
                    return
                self.run(lambda: self.games.announce_sale(SELLER, series))
                continue
            state = game.machine.state
            if state == "selling":
                if len(game.machine.sales) < cards:
                    window = game.sale.windows[-1]
                    first = self.next_card(window.series.number)
                    self.run(lambda: self.games.sell_cards(SELLER, window.series.number, first,
                                                           min(first + 4, window.last)))
                    if game.sale.windows[-1].last < self.next_card(window.series.number):
                        self.run(lambda: self.games.open_second_series(SELLER, 8))
                if len(game.machine.sales) >= cards or self.next_card(game.sale.windows[-1].series.number) == 1:
                    self.run(lambda: self.games.close_sale(CHIEF))
            elif state in ("sale_closed", "drawing", "line_won"):
                if self.games.due_prizes(game):
                    self.run(lambda: self.games.pay_prizes(CASHIER, desk))
                if game.correction is not None:
                    self.run(lambda: self.games.cancel_ball_correction(CHIEF))
                self.draw_and_verify(SELLER, 1)
            elif state in ("line_found", "bingo_found"):
                self.run(lambda: self.games.close_prize(SELLER))
            elif state in ("bingo_won", "won_by_hand"):
                self.run(lambda: self.games.close_game(CHIEF) if state == "bingo_won" else self.games.finish_game(CHIEF))
            elif state == "suspended":
                self.run(lambda: self.games.resume_game(CHIEF))
            elif state == "finishing_by_hand":
                left = [b for b in range(1, 91) if b not in game.machine.drawn]
                self.enter_ball(left[0])
            elif self.games.unpaid(game):
                if not self.run(lambda: self.games.pay_prizes(CASHIER, desk)):
                    self.run(lambda: self.games.pay_prizes(CASHIER, "safe"))
            else:
                self.run(lambda: self.games.collect_cards(CHIEF))

    @rule()
    def restart(self) -> None:
        """The server is killed and started again: everything comes back from the journal, and the
        wait of a prize found starts again (the killed server's timer dies with it)."""
        waiting = self.games._wait_call
        if waiting is not None and waiting.active():
            waiting.cancel()
        self.hall = self.hall.reopened()
        self.games.arm_prize_wait()

    # --- Invariants ---------------------------------------------------------------------

    @invariant()
    def the_ledger_sums_to_zero(self) -> None:
        assert self.hall.ledger.ledger.total() == 0

    @invariant()
    def cards_balls_and_numbering_hold(self) -> None:
        sold: dict[str, set[tuple[int, int]]] = {}
        ranges: dict[tuple[str, int], list[tuple[int, int]]] = {}
        first_of_game: dict[str, dict[str, Any]] = {}
        for record in self.journal.records():
            p = record.payload
            if record.type == "card_sold":
                card = (p["series"], p["card_number"])
                assert card not in sold.setdefault(p["game_id"], set()), f"{card} sold twice in {p['game_id']}"
                sold[p["game_id"]].add(card)
            elif record.type == "paper_cards_sold":
                ranges.setdefault((p["game_id"], p["series"]), []).append((p["first"], p["last"]))
                for number in range(p["first"], p["last"] + 1):  # the range is its cards
                    card = (p["series"], number)
                    assert card not in sold.setdefault(p["game_id"], set()), f"{card} sold twice in {p['game_id']}"
                    sold[p["game_id"]].add(card)
            elif record.type in ("sale_opened", "second_series_opened"):
                first_of_game.setdefault(p["game_id"], {})[p["series"]] = p.get("first_card", p.get("first"))
        for (game_id, series), sold_ranges in ranges.items():
            expected = first_of_game[game_id][series]
            for first, last in sold_ranges:
                assert first == expected and last >= first, "paper cards are sold consecutively (R82.5)"
                expected = last + 1
        for game in self.games.state.games:
            drawn = game.machine.drawn
            assert len(set(drawn)) == len(drawn)
            if game.detector is not None:
                assert game.detector.drawn == drawn
            windows = game.sale.windows
            if len(windows) == 2:
                assert windows[1].first == 1 and windows[1].last < windows[0].first, "R82.6"

    @invariant()
    def a_prize_found_stops_the_draw_and_a_closed_one_takes_no_card(self) -> None:
        """R85.6: no ball between a prize found and its close; no card wins a closed prize;
        no refused card wins (R82.8); no ball corrected after a claim on it (R85.5)."""
        open_: set[str] = set()
        closed: set[str] = set()
        refused: set[tuple[int, int]] = set()
        claimed_on_last = False
        for record in self.journal.records():
            p = record.payload
            if record.type == "sale_opened":
                open_, closed, refused, claimed_on_last = set(), set(), set(), False
            elif record.type == "ball_drawn":
                assert not open_ or p.get("entered_by"), f"ball {p['ball_count']} drawn while {open_} open"
                claimed_on_last = False
            elif record.type == "prize_won":
                assert p["pattern"] not in closed, f"the {p['pattern']} was won after it closed"
                assert (p["series"], p["card_number"]) not in refused, "a refused card won"
                open_.add(p["pattern"])
                claimed_on_last = True
            elif record.type in ("claim_rejected", "card_refused"):
                claimed_on_last = True
                if record.type == "card_refused":
                    refused.add((p["series"], p["card_number"]))
            elif record.type == "prize_closed":
                open_ -= set(p["patterns"])
                closed |= set(p["patterns"])
            elif record.type == "ball_corrected":
                assert not claimed_on_last, "a ball claimed on was corrected"

    @invariant()
    def a_restarted_hall_has_the_same_state(self) -> None:
        again = self.hall.reopened()
        assert again.games.snapshot() == self.games.snapshot()
        assert again.ledger.ledger.balances() == self.hall.ledger.ledger.balances()
        assert again.session.state == self.hall.session.state


TestHallGameCommands = pytest.mark.req("R82.5", "R82.6", "R86", "R96.4")(HallGameCommands.TestCase)
TestHallGameCommands.settings = settings(
    max_examples=40,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

"""Sessions played through the real hall modules, for the minutes to be made from.

Session 1 (2026-12-01), with the pots of ``POT_RULES`` and an operator's jackpot:

* game 1: series 7 cards 1-40 by two sellers; line and bingo won, paid and collected;
* game 2: series 7 cards 41-60, then the second series 8 cards 1-10 (R82.6); the
  jackpot in play within 40 balls and won by card 7-41 on ball 15 (R91);
* game 3: series 8 cards 11-20, suspended for good before any prize: refunded (R86.2);
* game 4: series 8 cards 21-30, announced as the session's last (R93.15): its bingo takes
  the superbingo fund (R89), which never outlives the session;

with a visitor, an incident, a complaint and an extra ball check, the day's jackpot
deposit from desk 1 (R91.11), and the closing.
Session 2 (2027-01-04) plays one game of series 9 (2.00 EUR) cards 1-20 and stays open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hall_server.hall.admission import AdmissionModule, StaffIdentity
from hall_server.hall.roles import Role
from protocol.chain import Record
from server_kit.core import Actor
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.hall.test_games import (
    CASHIER,
    POT_RULES,
    SELLER,
    SELLER_2,
    Hall,
    ScriptedBalls,
    card_first,
    fund_drawer,
    pay,
    sell,
)
from tests.hall.test_session import ADMIN, ALL_BALLS, CHIEF, open_session, verify_passed

DOOR = Actor("lluis", Role.ADMISSION)
WITNESS = "Marta Soler (public)"
INCIDENT = "Visitor 1 argued with a seller at table 4"
COMPLAINT = "The caller read ball 33 too fast"
EXTRA_CHECK = "Ball 7 looks chipped"
OPERATOR_JACKPOT = 50_000


@dataclass
class Played:
    """The hall after the scenario, and what the minutes must show of it."""

    hall: Hall
    admission: AdmissionModule
    game_ids: list[str] = field(default_factory=list)
    after_first_game: int = 0  # the journal's last seq once game 1 was collected
    last_game_id: str = ""  # session 1's game 4, its last, which takes the superbingo fund (R89)

    def records(self) -> list[Record]:
        return self.hall.records()

    def of_game(self, game_id: str, type: str) -> list[Record]:
        return [r for r in self.records() if r.type == type and r.payload.get("game_id") == game_id]


def _draw_to_the_end(hall: Hall, desk: str = "desk1") -> None:
    hall.draw_until("line")
    hall.draw()
    pay(hall, desk)
    hall.draw_until("bingo")
    result(hall.games.close_game(CHIEF))
    pay(hall, desk)
    result(hall.games.collect_cards(CHIEF))


def play(journal: Journal, clock: Any) -> Played:
    balls = ScriptedBalls()
    card_first(balls, "7-41")  # card 7-41 completes its card on ball 15 of every game it plays
    hall = Hall(journal, clock, rules=POT_RULES, balls=balls, staff=[StaffIdentity("Rui Costa", "P 2222222")])
    admission = hall.admission
    played = Played(hall, admission)
    open_session(hall.session)
    result(hall.cashier.open_desk(CASHIER, "desk1", 0))
    result(admission.import_banned_list(ADMIN, "document,name,until\nB1000001,Joan Banned,\n", "craj.csv"))
    result(admission.admit_visitor(DOOR, "Anna Vidal", "12345678A"))
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", OPERATOR_JACKPOT))

    # Game 1: one series, two sellers.
    clock.advance(60)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    played.game_ids.append(opened.payload["game_id"])
    sell(hall, 7, 1, 25)
    sell(hall, 7, 26, 40, SELLER_2)
    result(hall.games.close_sale(CHIEF))
    _draw_to_the_end(hall)
    played.after_first_game = hall.core.seq
    result(admission.record_incident(CHIEF, INCIDENT, [1]))

    # Game 2: the second series, and the jackpot in play.
    clock.advance(600)
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    played.game_ids.append(opened.payload["game_id"])
    sell(hall, 7, 41, 60)
    result(hall.games.open_second_series(SELLER, 8))
    sell(hall, 8, 1, 10, SELLER_2)
    result(hall.games.announce_pots(CHIEF, jackpot_threshold=40))
    result(hall.games.close_sale(CHIEF))
    fund_drawer(hall, "safe", 100_000)
    _draw_to_the_end(hall, desk="safe")
    result(admission.record_complaint(DOOR, "Pere Mas", COMPLAINT))
    result(hall.session.request_extra_check(CHIEF, [f"player {n}" for n in range(10)], EXTRA_CHECK))
    result(hall.session.count_balls(CHIEF, "extra", ALL_BALLS, [WITNESS]))

    # Game 3: refunded after a failure before any prize.
    clock.advance(600)
    (opened,) = result(hall.games.announce_sale(SELLER, 8))
    played.game_ids.append(opened.payload["game_id"])
    sell(hall, 8, 11, 20)
    result(hall.games.close_sale(CHIEF))
    hall.draw()
    result(hall.games.suspend_game(CHIEF, "blower pump stopped"))
    result(hall.games.suspend_game_for_good(CHIEF, "no spare pump"))
    result(hall.games.collect_cards(CHIEF))

    # Game 4: the session's last, whose bingo takes the superbingo fund (R89).
    clock.advance(600)
    (opened,) = result(hall.games.announce_sale(SELLER, 8))
    played.last_game_id = opened.payload["game_id"]
    sell(hall, 8, 21, 30)
    result(hall.games.announce_last_game(CHIEF))
    result(hall.games.close_sale(CHIEF))
    _draw_to_the_end(hall)

    # The day's jackpot money goes to its bank account (R91.11).
    result(hall.cashier.deposit_jackpot(CASHIER, "desk1", hall.cashier.jackpot_deposit_due(), "slip-0001"))
    result(hall.session.count_balls(CHIEF, "closing", ALL_BALLS, [WITNESS]))
    result(hall.session.sign_closing(ADMIN))
    result(hall.session.sign_closing(CHIEF))

    # Session 2, next month, one game under way.
    clock.advance(3 * 24 * 3600)
    verify_passed(hall.session, "2027-01-04")
    result(hall.session.count_balls(CHIEF, "opening", ALL_BALLS, ["Jordi Pons (public)"]))
    result(hall.session.sign_opening(ADMIN))
    result(hall.session.sign_opening(CHIEF))
    (opened,) = result(hall.games.announce_sale(SELLER, 9))
    played.game_ids.append(opened.payload["game_id"])
    sell(hall, 9, 1, 20)
    result(hall.games.close_sale(CHIEF))
    return played

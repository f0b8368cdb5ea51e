"""Answers and announcements are valid protocol messages; errors carry declared codes (R92.5)."""

from __future__ import annotations

import random

import pytest

from central_server.domain import errors as domain_errors
from central_server.domain.errors import CentralError
from central_server.domain.export import ExportRefused
from central_server.domain.money import MoneyError
from central_server.domain.wire import UnknownGame, announcements, answer_hello, respond
from protocol import central_messages as m
from protocol.balls import FakeBallSource
from protocol.central_messages import ERRORS
from tests.central.conftest import HALLS, Played


def ask(played: Played, name: str, from_hall: str = "hall-1", **arguments: object) -> dict:
    arguments.setdefault("game_id", "net-1")
    arguments.setdefault("hall_id", from_hall)
    response = respond(lambda g: played.game if g == played.game.game_id else None, name, arguments, from_hall=from_hall, now_ms=played.now)
    played.events += response.events
    return response.answer


def test_every_error_of_the_domain_has_a_declared_wire_code() -> None:
    classes = [c for c in vars(domain_errors).values() if isinstance(c, type) and issubclass(c, CentralError)]
    for cls in [*classes, UnknownGame, ExportRefused, MoneyError]:
        assert cls.code in ERRORS, cls


def test_hello_agrees_on_a_version_for_a_member_speaking_for_itself() -> None:
    hello = {"hall_id": "hall-1", "versions": [1, 2], "software": "bingo-hall 0.1.0"}
    assert answer_hello(hello, from_hall="hall-1", members=HALLS, central_id="central") == {"version": 2, "central_id": "central"}
    with pytest.raises(CentralError) as error:
        answer_hello({**hello, "versions": [1]}, from_hall="hall-1", members=HALLS, central_id="central")
    assert error.value.code == "version_unsupported"
    with pytest.raises(CentralError) as refused:
        answer_hello(hello, from_hall="hall-2", members=HALLS, central_id="central")
    assert refused.value.code == "hall_mismatch"
    with pytest.raises(CentralError) as refused:
        answer_hello({**hello, "hall_id": "hall-9"}, from_hall="hall-9", members=HALLS, central_id="central")
    assert refused.value.code == "unknown_hall"


@pytest.mark.req("R93.6", "R93.10")
def test_buy_cards_answers_the_decision_with_the_cards_numbers_and_the_same_answer_when_resent() -> None:
    played = Played().open()
    buy = {"request_id": "r1", "terminal_id": "T1", "player_ref": "p1", "card_count": 3, "stake_pct": 50}
    first = ask(played, "buy_cards", **buy)
    cells = bytes(int(n) for n in played.library[0:3].reshape(-1))  # the series' cards 1-3, row by row, a byte each
    assert first == {"request_id": "r1", "status": "confirmed", "decision": 1, "series": "V1", "first_card": 1,
                     "card_count": 3, "stake_cents": 50, "amount_cents": 150, "cells": cells}  # fmt: skip
    assert len(cells) == 3 * 27 and all(sum(1 for n in cells[i : i + 27] if n) == 15 for i in (0, 27, 54))
    second = ask(played, "buy_cards", **{**buy, "request_id": "r1b", "card_count": 2})
    assert second["first_card"] == 4 and list(second["cells"]) == [int(n) for n in played.library[3:5].reshape(-1)]
    events = len(played.events)
    assert ask(played, "buy_cards", **buy) == first and len(played.events) == events
    played.now = played.game.closes_at_ms  # type: ignore[assignment]
    late = ask(played, "buy_cards", **{**buy, "request_id": "r2"})
    assert late["status"] == "refused" and late["refusal_code"] == "sale_over" and "first_card" not in late


@pytest.mark.parametrize(
    "name, arguments, code",
    [
        ("buy_cards", {"request_id": "r", "terminal_id": "T", "player_ref": "p", "card_count": 0, "stake_pct": 1}, "bad_argument"),
        ("buy_cards", {"request_id": "r", "terminal_id": "T", "player_ref": "p", "card_count": 1, "stake_pct": 1, "hall_id": "hall-2"}, "hall_mismatch"),
        ("get_balls", {"after_count": 0, "game_id": "net-9"}, "unknown_game"),
        ("get_balls", {"after_count": 0, "hall_id": "hall-9"}, "hall_mismatch"),
        ("sale_opened", {}, "bad_argument"),
        ("drop_table", {}, "bad_argument"),
    ],
)
def test_bad_input_is_refused_with_its_code_and_changes_nothing(name: str, arguments: dict, code: str) -> None:
    played = Played().open()
    before = played.game.snapshot()
    with pytest.raises(CentralError) as error:
        ask(played, name, **arguments)
    assert error.value.code == code and str(error.value)
    assert played.game.snapshot() == before


def test_announcements_follow_the_game_and_every_one_is_a_valid_message() -> None:
    played = Played()
    sent = announcements(played.game, played.game.open_sale(0), now_ms=1_000)
    assert [(a.hall_id, a.message.name) for a in sent] == [(h, "sale_opened") for h in HALLS]
    assert sent[0].arguments["remaining_ms"] == 59_000
    for i in range(9):
        played.buy(f"r{i}", hall=HALLS[i % 3], count=i + 1)
    played.now = 60_000
    closed = announcements(played.game, played.game.close_sale(60_000), now_ms=60_000)
    mine = {a.hall_id: (a.arguments["hall_cards_sold"], a.arguments["hall_sales_cents"]) for a in closed}
    assert mine == {h: (c, c * 100) for h, c in zip(HALLS, (12, 15, 18))}
    source = FakeBallSource(random.Random(8).sample(range(1, 91), 90))
    names: list[str] = []
    while played.game.next_ball_due_ms is not None:
        played.now = played.game.next_ball_due_ms
        last = announcements(played.game, played.game.draw_next(source, played.now), now_ms=played.now)
        names += [a.message.name for a in last]
    assert names.count("ball_drawn") == 3 * len(played.game.balls)
    assert names.count("prize_won") == 3 * len(played.game.prizes)
    winning_halls = {w.hall_id for w in played.game.winners if w.ball_count == len(played.game.balls)}
    assert [(a.hall_id, a.message.name) for a in last][-3 - len(winning_halls):] == [
        *((h, "game_closed") for h in HALLS), *((h, "credits_available") for h in sorted(winning_halls, key=HALLS.index))
    ]
    for hall in HALLS:
        credits = ask(played, "get_credits", from_hall=hall, after=0)
        assert credits["last_seq"] == len(credits["credits"]) and not credits["more"]
    balls = ask(played, "get_balls", after_count=5)
    assert balls == {"balls": played.game.balls[5:], "ball_count": len(played.game.balls)}
    game = ask(played, "get_game")
    assert game["phase"] == "closed" and game["cards_sold"] == 45 and "remaining_ms" not in game


@pytest.mark.req("R96.2")
def test_long_lists_come_in_pages_and_every_credit_is_read_once() -> None:
    played = Played().open()
    for i in range(250):
        played.buy(f"r{i}", hall="hall-2", terminal=f"T{i % 3}", player=f"p{i}")
    events = played.game.declare_not_played("fire in the central site", "operator", played.now)
    sent = announcements(played.game, events, now_ms=played.now)
    assert {(a.hall_id, a.message.name) for a in sent} >= {("hall-2", "game_not_played"), ("hall-2", "credits_available")}
    seen, after, pages = [], 0, 0
    while True:
        page = ask(played, "get_credits", from_hall="hall-2", after=after)
        pages += 1
        seen += [c["seq"] for c in page["credits"]]
        assert len(page["credits"]) <= m.PAGE_ITEMS
        if not page["more"]:
            break
        after = page["credits"][-1]["seq"]
    assert seen == list(range(1, 251)) and pages == 3
    assert sum(c["amount_cents"] for c in ask(played, "get_credits", from_hall="hall-2", after=0)["credits"]) == 100 * 100

"""Virtual cards in the hall game: terminals, the sale window, purchases in request order,
automatic wins credited at once, terminal failures (R82.9-16, R83.7, R85.9, R88.4-5, R93, R96.3)."""

from __future__ import annotations

import itertools
import re

import pytest

from hall_server.hall.cashier import player_account
from hall_server.hall.games import GameModuleError
from hall_server.hall.virtual import PurchaseRefused, PurchaseRequest, TerminalRefused, VirtualError
from protocol.claims import CardRef
from protocol.settlement import share_of_sales
from tests.hall.conftest import result
from tests.hall.test_games import RULES, sell
from tests.terminals.conftest import CASHIER as CASHIER_ACTOR
from tests.terminals.conftest import CHIEF, SELLER, VIRTUAL_NUMBER, VirtualHall, draw, layout


REQUEST_IDS = itertools.count(1)


def buy(hall: VirtualHall, terminal: str, number: str, quantity: object, stake_pct: object = 100,
        account: str | None = None, request: str | None = None) -> list:
    """A purchase on ``terminal`` for ``number`` signed in, under a new request id unless ``request``."""
    asked = PurchaseRequest(terminal, number, account or number, quantity, stake_pct,
                            request or f"r{next(REQUEST_IDS)}")
    return result(hall.virtual.request_purchase(asked))


def on_sale(hall: VirtualHall, seconds: int = 60) -> None:
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, seconds))


def refused(hall: VirtualHall, match: str, *args: object, **kwargs: object) -> None:
    """The purchase is refused with ``match``; only the refusal is journaled, nothing else changes."""
    before = hall.records()
    balances = hall.ledger.ledger.balances()
    sold = dict(hall.games.current.machine.sales) if hall.games.current else {}
    with pytest.raises(PurchaseRefused, match=match):
        buy(hall, *args, **kwargs)  # type: ignore[arg-type]
    after = hall.records()
    assert [r.type for r in after[len(before):]] == ["terminal_request_refused"]
    assert re.search(match, after[-1].payload["reason"])
    assert (dict(hall.games.current.machine.sales) if hall.games.current else {}) == sold
    assert hall.ledger.ledger.balances() == balances


@pytest.mark.req("R82.13-16", "R93.2-4", "R93.6", "R93.8")
def test_cards_are_assigned_in_request_order_from_the_virtual_series_and_paid_from_credit(hall: VirtualHall) -> None:
    anna, bea = hall.player("11111111A", 1_000), hall.player("22222222B", 1_000)
    hall.terminal("T1"), hall.terminal("T2")
    on_sale(hall)
    first = buy(hall, "T1", anna, 3)
    second = buy(hall, "T2", bea, 2, 50)
    assert [c.ref for c in first] == [CardRef(VIRTUAL_NUMBER, n) for n in (1, 2, 3)]
    assert [c.ref for c in second] == [CardRef(VIRTUAL_NUMBER, n) for n in (4, 5)]
    assert [c.label for c in second] == ["V1-4", "V1-5"]
    assert second[0].cells == tuple(int(n) for n in layout(4)) and len(second[0].code) == 16
    assert (hall.balance(anna), hall.balance(bea)) == (700, 900)
    assert hall.ledger.balance(f"stakes:{hall.games.current.game_id}") == 400
    sold = hall.games.current.machine.sales
    assert sold[CardRef(VIRTUAL_NUMBER, 4)].stake_cents == 50
    assert sold[CardRef(VIRTUAL_NUMBER, 1)].account == player_account(anna)
    assert sold[CardRef(VIRTUAL_NUMBER, 1)].terminal_id == "T1"


@pytest.mark.req("R93.1", "R93.8", "R82.13-16")
def test_no_card_is_sold_before_the_window_after_it_or_after_the_sale_closed(hall: VirtualHall) -> None:
    anna = hall.player("11111111A", 1_000)
    hall.terminal("T1")
    result(hall.games.announce_sale(SELLER, 7))
    refused(hall, "sale time for terminals is over or has not begun", "T1", anna, 1)
    result(hall.virtual.open_sale(SELLER, 30))
    hall.clock.advance(29.9)
    assert len(buy(hall, "T1", anna, 1)) == 1
    hall.clock.advance(0.1)
    refused(hall, "sale time for terminals is over", "T1", anna, 1)
    result(hall.virtual.open_sale(SELLER, 30))  # extended
    assert len(buy(hall, "T1", anna, 1)) == 1
    result(hall.games.close_sale(CHIEF))
    refused(hall, "no sale is open", "T1", anna, 1)
    assert hall.balance(anna) == 800


@pytest.mark.req("R93.1", "R93.8")
def test_F6_a_purchase_received_in_the_sale_time_and_decided_after_it_is_bought_as_of_its_arrival(
    hall: VirtualHall,
) -> None:
    anna = hall.player("11111111A", 1_000)
    hall.terminal("T1")
    result(hall.games.announce_sale(SELLER, 7))
    (opened,) = result(hall.virtual.open_sale(SELLER, 30))
    closes_at = opened.payload["closes_at_ms"]
    hall.clock.advance(40)  # the hall was paused across the close; it reads the requests now
    in_time = PurchaseRequest("T1", anna, anna, 2, 100, "paused-1", received_ms=closes_at - 1)
    assert len(result(hall.virtual.request_purchase(in_time))) == 2
    bought = hall.records()[-2]
    assert bought.type == "virtual_cards_bought" and bought.payload["received_ms"] == closes_at - 1
    assert bought.time_ms >= closes_at
    late = PurchaseRequest("T1", anna, anna, 1, 100, "paused-2", received_ms=closes_at)
    with pytest.raises(PurchaseRefused, match="sale time for terminals is over"):
        result(hall.virtual.request_purchase(late))
    # A stamp from the future (it cannot be) is taken as now.
    future = PurchaseRequest("T1", anna, anna, 1, 100, "paused-3", received_ms=closes_at + 10**9)
    with pytest.raises(PurchaseRefused, match="sale time for terminals is over"):
        result(hall.virtual.request_purchase(future))
    assert hall.balance(anna) == 800


@pytest.mark.req("R93.1", "R93.8")
def test_a_purchase_decided_in_the_sale_time_does_not_say_when_it_was_received(hall: VirtualHall) -> None:
    anna = hall.player("11111111A", 1_000)
    hall.terminal("T1")
    on_sale(hall)
    hall.clock.advance(1)
    now = int(hall.clock.seconds() * 1000)
    asked = PurchaseRequest("T1", anna, anna, 1, 100, "r-stamped", received_ms=now - 3)
    assert len(result(hall.virtual.request_purchase(asked))) == 1
    assert "received_ms" not in hall.records()[-2].payload


@pytest.mark.req("R93.6", "R93.2-4", "R82.13-16")
def test_a_purchase_beyond_the_credit_is_refused_and_later_requests_still_served(hall: VirtualHall) -> None:
    anna = hall.player("11111111A", 250)
    hall.terminal("T1")
    on_sale(hall)
    refused(hall, "your credit is 2.50 EUR", "T1", anna, 3)
    assert len(buy(hall, "T1", anna, 2)) == 2
    refused(hall, "your credit is 0.50 EUR", "T1", anna, 1)
    assert len(buy(hall, "T1", anna, 1, 50)) == 1
    assert hall.balance(anna) == 0


@pytest.mark.req("R83.7")
def test_at_most_96_cards_per_player_per_terminal_per_game(hall: VirtualHall) -> None:
    anna = hall.player("11111111A", 100_000)
    hall.terminal("T1"), hall.terminal("T2")
    on_sale(hall)
    assert len(buy(hall, "T1", anna, 90)) == 90
    refused(hall, "at most 96 cards per player on one terminal", "T1", anna, 7)
    assert len(buy(hall, "T1", anna, 6)) == 6
    refused(hall, "you may buy 0 more", "T1", anna, 1)
    assert len(buy(hall, "T2", anna, 1)) == 1  # another terminal is another auxiliary computer
    refused(hall, "the number of cards is 1 to 96", "T2", anna, 97)


@pytest.mark.req("R82.13-16")
def test_bad_requests_are_refused_with_a_reason_and_journaled(hall: VirtualHall) -> None:
    anna, bea = hall.player("11111111A", 1_000), hall.player("22222222B", 1_000)
    hall.terminal("T1")
    on_sale(hall)
    refused(hall, "only for the account signed in", "T1", anna, 1, account=bea)
    refused(hall, "not authorised", "T9", anna, 1)
    refused(hall, "whole number", "T1", anna, 1.0)
    refused(hall, "whole number", "T1", anna, True)
    refused(hall, "stake .* is 1 to 100", "T1", anna, 1, 101)
    refused(hall, "sign in", "T1", None, 1, account=anna)
    result(hall.virtual.revoke_terminal(CHIEF, "T1", "stolen"))
    refused(hall, "not authorised", "T1", anna, 1)


@pytest.mark.req("R82.13-16")
def test_terminals_authenticate_with_their_own_token_until_revoked(hall: VirtualHall) -> None:
    token = hall.terminal("T1")
    other = hall.terminal("T2")
    assert hall.virtual.authenticate("T1", token).terminal_id == "T1"
    assert token not in str([r.payload for r in hall.records()])  # only its hash is kept
    for terminal, presented in (("T1", other), ("T3", token), ("T1", None)):
        with pytest.raises(TerminalRefused, match="not enrolled, or its token is wrong"):
            hall.virtual.authenticate(terminal, presented)
    with pytest.raises(VirtualError, match="already enrolled"):
        hall.terminal("T1")
    result(hall.virtual.revoke_terminal(CHIEF, "T1", "lost"))
    with pytest.raises(TerminalRefused, match="revoked"):
        hall.virtual.authenticate("T1", token)


def test_a_virtual_series_may_not_take_a_paper_series_number(hall: VirtualHall) -> None:
    with pytest.raises(GameModuleError, match="series 7 is a paper series"):
        hall.games.add_virtual_series(7, layout(1)[None, :])


@pytest.mark.req("R93.10", "R85.9", "R88.4-5", "R87.a")
def test_virtual_cards_win_without_a_claim_and_the_line_is_credited_when_its_prize_closes(hall: VirtualHall) -> None:
    anna, bea = hall.player("11111111A", 10_000), hall.player("22222222B", 10_000)
    hall.terminal("T1"), hall.terminal("T2")
    row = [int(n) for n in layout(1).reshape(3, 9)[0] if n]
    hall.balls.put_first(row)  # card V1-1 completes its first row on ball 5
    on_sale(hall)
    buy(hall, "T1", anna, 1, 50)  # V1-1 staked at 50%
    buy(hall, "T2", bea, 9)
    sell(hall, 7, 1, 10)  # paper cards in the same game, whose players call nothing
    result(hall.games.close_sale(CHIEF))
    game = hall.games.current
    line_cents = game.settlement.line_cents
    assert line_cents == share_of_sales(50 + 900 + 1000, RULES.line_bp)
    for _ in range(4):
        result(hall.games.draw_ball(SELLER))
    records = result(hall.games.draw_ball(SELLER))
    winners = sorted(r.payload["card_number"] for r in records if r.type == "prize_won" and r.payload["series"] == VIRTUAL_NUMBER)
    assert 1 in winners and all(r.payload["pattern"] == "line" for r in records if r.type == "prize_won")
    assert not [r for r in records if r.type == "prize_paid"], "the line waits for other cards (R85.6)"
    before = hall.balance(anna)
    closing = result(hall.games.close_prize(SELLER))
    (paid,) = [r.payload for r in closing if r.type == "prize_paid"]  # only virtual cards won: credited at once
    assert paid["prize"] == "line" and paid["desk"] is None
    assert sorted(int(card.split("-")[1]) for card, _ in paid["payments"]) == winners
    share = line_cents * 50 // (100 * len(winners))
    assert dict(paid["payments"])[f"{VIRTUAL_NUMBER}-1"] == share
    assert hall.balance(anna) == before + share
    assert paid["carry_cents"] == line_cents - sum(c for _, c in paid["payments"]) > 0  # the unstaked half carries


@pytest.mark.req("R96.3")
def test_a_failed_terminal_refunds_its_cards_leaves_the_game_and_stays_out_until_checked(hall: VirtualHall) -> None:
    anna, bea = hall.player("11111111A", 1_000), hall.player("22222222B", 1_000)
    token = hall.terminal("T1")
    hall.terminal("T2")
    on_sale(hall)
    buy(hall, "T1", anna, 4)
    buy(hall, "T2", bea, 2)
    records = result(hall.virtual.declare_failed(CHIEF, "T1", "screen dead"))
    assert [r.type for r in records][:2] == ["terminal_out_of_service", "terminal_failed"]
    assert hall.balance(anna) == 1_000 and hall.balance(bea) == 800
    game = hall.games.current
    assert {r.number for r in game.machine.in_play} == {5, 6}
    assert hall.virtual.cards(game.game_id, player_account(anna)) == []
    with pytest.raises(TerminalRefused, match="out of service"):
        hall.virtual.authenticate("T1", token)
    result(hall.games.close_sale(CHIEF))
    assert game.settlement.sales_cents == 200
    result(hall.virtual.return_to_service(CHIEF, "T1"))
    assert hall.virtual.authenticate("T1", token).terminal_id == "T1"


@pytest.mark.req("R96.3")
def test_a_terminal_failing_after_the_close_is_refunded_by_the_house_and_its_cards_stop_winning(hall: VirtualHall) -> None:
    anna, bea = hall.player("11111111A", 5_000), hall.player("22222222B", 1_000)
    hall.terminal("T1"), hall.terminal("T2")
    on_sale(hall)
    buy(hall, "T1", anna, 30)
    buy(hall, "T2", bea, 1)
    result(hall.games.close_sale(CHIEF))
    house = hall.ledger.balance("house")
    result(hall.virtual.declare_failed(CHIEF, "T1", "network cable cut"))
    assert hall.balance(anna) == 5_000 and hall.ledger.balance("house") == house - 3_000
    for _ in range(30):
        records = draw(hall)
        completed = records[0].payload["completed_line"] + records[0].payload["completed_bingo"]
        assert all(label == f"{VIRTUAL_NUMBER}-31" for label in completed)
        if hall.games.current.machine.won:
            break


@pytest.mark.req("R96.3")
def test_R96_3_a_terminal_declared_failed_once_a_ball_is_drawn_refunds_nothing_and_its_cards_play_on(
    hall: VirtualHall,
) -> None:
    """The central server's rule in the hall's own game: a failure declared once the game's first ball
    is known would let the room chief and the player take back the stakes of the cards that turned out
    losing, the house paying them while the prizes announced on them stand.  So the room chief's
    declaration takes the terminal out of service and refunds nothing: its cards stay in play, held by
    the server, and their wins are credited to the account, as for a dropped connection."""
    from server_kit.web.channel import CommandChannel, SeenRequests, parse_request

    anna, bea = hall.player("11111111A", 5_000), hall.player("22222222B", 1_000)
    token = hall.terminal("T1")
    hall.terminal("T2")
    on_sale(hall)
    buy(hall, "T1", anna, 30)
    buy(hall, "T2", bea, 1)
    result(hall.games.close_sale(CHIEF))
    result(hall.games.draw_ball(SELLER))
    game = hall.games.current
    balances = hall.ledger.ledger.balances()
    in_play = set(game.machine.in_play)
    before = len(hall.records())
    answers: list = []
    request = parse_request('{"id": "fail-1", "command": "declare_terminal_failed", '
                            '"args": {"terminal": "T1", "reason": "screen dead"}}')
    CommandChannel(hall.core).submit(CHIEF, request, SeenRequests()).addBoth(answers.append)
    assert answers[0]["ok"] is True, answers
    (out,) = hall.records()[before:]
    assert out.type == "terminal_out_of_service"
    assert out.payload["kept_in_play"] == [f"{VIRTUAL_NUMBER}-{n}" for n in range(1, 31)]
    assert hall.ledger.ledger.balances() == balances  # nobody refunded, the house pays nothing
    assert set(game.machine.in_play) == in_play and not game.machine.failed_terminals
    with pytest.raises(TerminalRefused, match="out of service"):
        hall.virtual.authenticate("T1", token)
    # The cards play on: the first prize is paid to the cards that won it, anna's (T1) as well as bea's,
    # into their accounts.
    while not any(r.type == "prize_paid" for r in hall.records()[before:]):
        draw(hall)
    (paid,) = [r.payload for r in hall.records()[before:] if r.type == "prize_paid"]
    on_t1 = sum(c for card, c in paid["payments"] if int(card.split("-")[1]) <= 30)
    on_t2 = sum(c for card, c in paid["payments"] if int(card.split("-")[1]) == 31)
    assert (hall.balance(anna), hall.balance(bea)) == (2_000 + on_t1, 900 + on_t2)
    assert on_t1 + on_t2 + paid["carry_cents"] == paid["amount_cents"] > 0
    again = hall.reopened()
    assert set(again.games.current.machine.in_play) == in_play


@pytest.mark.req("R98", "R96.3")
def test_the_tax_leaves_out_the_stakes_a_failed_terminal_was_refunded_after_the_close(hall: VirtualHall) -> None:
    """R98: the tax is 10% of the amounts staked; a failed terminal's cards refunded by the
    house after the sale's close were not staked, so the game's tax base is the collection less them."""
    anna, bea = hall.player("11111111A", 5_000), hall.player("22222222B", 1_000)
    hall.terminal("T1"), hall.terminal("T2")
    on_sale(hall)
    buy(hall, "T1", anna, 30)
    buy(hall, "T2", bea, 1)
    (closed, *_) = result(hall.games.close_sale(CHIEF))
    assert closed.payload["collection_cents"] == 3_100 and closed.payload["tax_cents"] == 310
    result(hall.virtual.declare_failed(CHIEF, "T1", "network cable cut"))
    again = hall.reopened()
    assert again.games.current.refunded_after_close_cents == hall.games.current.refunded_after_close_cents == 3_000
    while "bingo" not in hall.games.current.machine.won:
        draw(hall)
    result(hall.games.close_prize(SELLER))
    (ended, *postings) = result(hall.games.close_game(CHIEF))
    assert ended.type == "game_closed"
    assert (ended.payload["tax_base_cents"], ended.payload["tax_cents"]) == (100, 10)
    assert [p.payload["credits"] for p in postings if p.payload.get("reason") == "tax:bingo"] == [[["tax", 10]]]
    assert hall.ledger.balance("tax") == 10 and hall.ledger.ledger.total() == 0


@pytest.mark.req("R92.3", "R96.4")
def test_the_virtual_state_is_rebuilt_from_the_journal(hall: VirtualHall) -> None:
    anna = hall.player("11111111A", 1_000)
    token = hall.terminal("T1")
    on_sale(hall)
    buy(hall, "T1", anna, 5, 40)
    again = hall.reopened()
    game_id = hall.games.current.game_id
    assert again.virtual.cards(game_id, player_account(anna)) == hall.virtual.cards(game_id, player_account(anna))
    assert again.games.snapshot() == hall.games.snapshot()
    assert again.virtual.authenticate("T1", token).terminal_id == "T1"
    assert again.virtual.window(again.games.current) == hall.virtual.window(hall.games.current)



def as_written_before_virtual_range_records(records: list) -> list[tuple[int, str, dict]]:
    """``records`` as journals were written before a purchase was one record: a
    ``virtual_cards_bought`` without ``price_cents``, then one ``card_sold`` per card."""
    old = []
    for record in records:
        p = dict(record.payload)
        if record.type != "virtual_cards_bought":
            old.append((record.time_ms, record.type, p))
            continue
        price = p.pop("price_cents")
        old.append((record.time_ms, record.type, p))
        for number in range(p["first"], p["last"] + 1):
            old.append((record.time_ms, "card_sold", {
                "type": "card_sold", "game_id": p["game_id"], "series": p["series"], "card_number": number, "price_cents": price,
                "stake_cents": p["stake_cents"], "account": p["account"], "terminal_id": p["terminal"],
                "stake_pct": p["stake_pct"], "actor": p["actor"],
            }))
    return old


@pytest.mark.req("R83.3-4", "R93.8")
def test_a_purchase_is_one_record_holding_its_range_and_journals_of_one_record_per_card_still_load(
    hall: VirtualHall, tmp_path
) -> None:
    from hall_server.store.database import open_database
    from hall_server.web.view import HallView
    from server_kit.journal.sql import Journal
    from tests.terminals.conftest import build_hall

    anna, bea = hall.player("11111111A", 10_000), hall.player("22222222B", 10_000)
    hall.terminal("T1"), hall.terminal("T2")
    on_sale(hall)
    before = len(hall.records())
    buy(hall, "T1", anna, 4, 50)
    assert [r.type for r in hall.records()[before:]] == ["virtual_cards_bought", "posting"]
    buy(hall, "T2", bea, 6)
    sell(hall, 7, 1, 10)
    result(hall.games.close_sale(CHIEF))
    for _ in range(30):
        draw(hall)
    assert not [r for r in hall.records() if r.type == "card_sold"]

    older = Journal(open_database(f"sqlite:///{tmp_path / 'older.sqlite3'}"), hall.journal.key, head=tmp_path / "older.head")
    for time_ms, kind, payload in as_written_before_virtual_range_records(hall.records()):
        older.append(time_ms, [(kind, payload)])
    assert sum(r.type == "card_sold" for r in older.records()) == 10
    pictures = []
    for source in (hall.journal, older):
        again = build_hall(source, hall.clock, hall.balls)
        view = HallView("Sala")
        again.core.add_view(view)
        again.core.recover()
        game_id = again.games.current.game_id
        assert again.games.snapshot() == hall.games.snapshot()  # each card, its stake, terminal and account
        assert again.virtual.cards(game_id, player_account(anna)) == hall.virtual.cards(game_id, player_account(anna))
        assert (again.balance(anna), again.balance(bea)) == (hall.balance(anna), hall.balance(bea))
        pictures.append(view.console()["game"])
    assert pictures[0] == pictures[1] and pictures[0]["cards_sold"] == 20
    assert pictures[0]["collection_cents"] == 200 + 600 + 1000

"""The hall-annex game at one hall (R3.5.b): the partner's stream taken once and in order, the roles kept,
the two rooms' cards checked against each other (R82.6), virtual cards sold on each room's terminals,
found at their ball and credited (R82.13-16, R83.7, R93.10, R85.9), one room's paper cards at a time (R82.4).

The first tests run one hall's module on a real SQLite journal with the core's inline
runner, the partner's items being what the central server would deliver
(``annex_delivered``); the others run both halls of a pair in process, each on its own
journal, the central server's relay between them (:mod:`tests.network.joint_halls`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hall_server.annex.module import AnnexError, AnnexGap, AnnexModule
from hall_server.hall.games import GameModuleError
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.virtual import PurchaseRefused, PurchaseRequest
from hall_server.hall.session import SessionError
from protocol.annex import CardRun, declaration_parts
from protocol.cards import fingerprints
from protocol.library import build_distinct_strips
from protocol.settlement import PrizeRules, split_prize
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.sql import Journal
from tests.audit.halls import SELLERS, TABLE, TERMINALS, VIRTUAL_NUMBER, Purchase
from tests.hall.conftest import clock, journal, result  # noqa: F401  (fixtures)
from tests.hall.test_games import CATALOG, CLASSIC, OTHER, RULES, ScriptedBalls
from tests.network.joint_halls import (
    ANNEX,
    ANNEX_SET,
    MAIN,
    MAIN_LIBRARY,
    MAIN_SET,
    JointHall,
    JointPlan,
    open_pair,
    play_joint_game,
    sell,
)


CHIEF = Actor("rui", Role.ROOM_CHIEF)
SELLER = Actor("sam", Role.SELLER_CALLER)
GAME = "hall-1.j9"
#: The main hall's cards as its declaration says them: none of them is one of CATALOG's.
MAIN_CARDS = build_distinct_strips(5, fingerprints(np.concatenate([CLASSIC, OTHER])),
                                   random_bytes=random.Random(11).randbytes)


def annex_hall(journal: Journal, clock: Any) -> AnnexModule:
    core = CommandCore(journal, clock, run_inline)
    module = AnnexModule(core, LedgerModule(core), CATALOG, ScriptedBalls(), RULES, hall_id="hall-2", role="annex",
                         partner="hall-1")
    core.recover()
    return module


def item(seq: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "from_hall": "hall-1", "game_id": GAME, "kind": kind, **fields}


def declared(annex: AnnexModule, cells: np.ndarray = MAIN_CARDS) -> int:
    """The main hall's declaration of ``cells`` delivered to ``annex``; the number of its last item."""
    for part in declaration_parts([CardRun("set hall", 1, fingerprints(cells))]):
        result(annex.take(item(annex.state.last_relay_seq + 1, "cards", **{**part, "game_id": "hall-1.cards"})))
    return annex.state.last_relay_seq


def failure(deferred: Any) -> BaseException:
    with pytest.raises(Exception) as raised:
        result(deferred)
    return raised.value


def test_the_partner_s_items_are_taken_once_in_order_and_a_gap_is_refused(journal: Journal, clock: Any) -> None:
    annex = annex_hall(journal, clock)
    result(annex.take(item(1, "opened", cents=100, line_bp=1500, bingo_bp=5500)))
    game = annex.game(GAME)
    assert game is not None and (game.main, game.annex, game.price_cents) == ("hall-1", "hall-2", 100)
    before = journal.last.seq
    assert result(annex.take(item(1, "opened", cents=100, line_bp=1500, bingo_bp=5500))) == []  # again: nothing
    assert isinstance(failure(annex.take(item(3, "ball", ball=17, ball_count=1))), AnnexGap)
    assert journal.last.seq == before, "a gap journals nothing: the hall fetches what it lacks"
    (ignored,) = result(annex.take(item(2, "ball", ball=17, ball_count=1)))
    assert ignored.type == "annex_item_ignored", "no ball before both sales are in"
    assert annex.state.last_relay_seq == 2


def test_the_annex_neither_opens_nor_draws_and_its_sales_make_the_pool_with_the_main_hall_s(
        journal: Journal, clock: Any) -> None:
    annex = annex_hall(journal, clock)
    assert "only the main hall" in str(failure(annex.open_game(CHIEF)))
    seq = declared(annex)
    result(annex.take(item(seq + 1, "opened", cents=100, line_bp=1500, bingo_bp=5500)))
    result(annex.sell_cards(SELLER, 7, 1, 10))
    with pytest.raises(AnnexError, match="card 11 of series 7 is the next one"):
        result(annex.sell_cards(SELLER, 7, 12, 13))
    with pytest.raises(AnnexError, match="series 9 is worth"):
        result(annex.sell_cards(SELLER, 9, 1, 2))
    result(annex.close_sale(CHIEF))
    assert [seq for seq, _ in annex.pending()] and annex.pending()[-1][1] == {
        "game_id": GAME, "kind": "sales", "cards": 10, "cents": 1000}
    records = result(annex.take(item(seq + 2, "sales", cards=30, cents=3000)))
    assert [r.type for r in records] == ["annex_sales_reported", "annex_pool"]
    pool = annex.game(GAME).pool
    assert (pool.sales_cents, pool.line_cents, pool.bingo_cents, pool.main_line_cents) == (4000, 600, 2200, 450)
    assert "only the main hall" in str(failure(annex.draw_ball(SELLER)))
    result(annex.take(item(seq + 3, "ball", ball=17, ball_count=1)))
    assert annex.game(GAME).balls == [17]


def test_a_restarted_hall_holds_the_stream_and_what_it_has_not_posted(journal: Journal, clock: Any) -> None:
    annex = annex_hall(journal, clock)
    seq = declared(annex)
    result(annex.take(item(seq + 1, "opened", cents=100, line_bp=1500, bingo_bp=5500)))
    result(annex.sell_cards(SELLER, 7, 1, 4))
    result(annex.close_sale(CHIEF))
    (waiting, _), = annex.pending()
    again = annex_hall(journal, clock)
    assert again.state.last_relay_seq == seq + 1 and [s for s, _ in again.pending()] == [waiting]
    assert again.state.partner_cards is not None, "the partner's declaration is folded from the journal"
    result(again.posted(waiting, f"hall-2.{waiting}", 1))
    assert again.pending() == [] and annex_hall(journal, clock).pending() == []


# --- The two rooms' cards (R82.6) ----------------------------------------------------------


@pytest.mark.req("R82.6")
def test_R82_6_each_hall_declares_its_cards_once_and_again_only_when_they_changed(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    parts = [r.payload for r in main.of("annex_cards_declared") if r.payload["hall_id"] == MAIN]
    assert [(p["label"], p["first"], p["cards"], p["part"], p["parts"]) for p in parts] == [
        ("set hall", 1, 30, 1, 2), ("library V1", 1, 120, 2, 2)], "the cards its series print, and its library"
    assert annex.annex.state.partner_cards is not None and annex.annex.state.partner_cards.digest == parts[0]["digest"]
    assert main.annex.state.partner_cards is not None, "each hall holds the other's whole declaration"
    assert result(main.annex.declare_cards()) == [], "the same cards are not declared again"


@pytest.mark.req("R82.6")
def test_R82_6_the_main_hall_refuses_to_open_a_game_on_a_card_the_annex_may_sell_too_naming_both(
        tmp_path: Path) -> None:
    # The annex's library ends with a strip of the main hall's set: its card 115 is the main hall's card 13.
    clashing_library = np.concatenate([build_distinct_strips(
        19, fingerprints(np.concatenate([MAIN_SET, MAIN_LIBRARY, ANNEX_SET])),
        random_bytes=random.Random(5).randbytes), MAIN_SET[12:18]])
    main, annex, relay = open_pair(tmp_path, RULES, annex_cards=(ANNEX_SET, clashing_library))
    before = main.journal.last.seq
    with pytest.raises(AnnexError) as refused:
        result(main.annex.open_game(CHIEF))
    assert str(refused.value) == (
        "the hall-annex game does not open: card 13 of this hall's set hall has the same numbers as card 115 of "
        "hall-2's library V1: no two identical cards in one game (R82.6); give one of the halls other cards")
    assert main.journal.last.seq == before, "a refused opening records nothing"


@pytest.mark.req("R82.6")
def test_R82_6_no_game_opens_before_the_annex_has_declared_its_cards(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    main.annex.state.partner_cards = None  # as if the annex's declaration had not come yet
    with pytest.raises(AnnexError, match="hall-2 has not declared the cards it may sell yet"):
        result(main.annex.open_game(CHIEF))


@pytest.mark.req("R82.6")
def test_R82_6_an_annex_whose_cards_changed_since_the_main_hall_checked_them_sells_nothing_in_the_game(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    # The annex starts again with the main hall's cards in its library; the main hall opens before it hears of it.
    changed = JointHall(annex.journal, annex.clock, RULES, hall_id=ANNEX, role="annex", partner=MAIN,
                        set_cells=ANNEX_SET, library_cells=np.concatenate([MAIN_SET[:6], MAIN_LIBRARY[6:]]))
    changed.core.recover()
    changed.accounts = annex.accounts
    (opened,) = result(main.annex.open_game(CHIEF))
    relay.halls[ANNEX] = changed
    relay.pump()
    game = changed.game()
    assert game.clash is not None and "card 1 of this hall's library V1 has the same numbers as card 1 of hall-1's" \
        in game.clash
    with pytest.raises(AnnexError, match="this room sells nothing in hall-annex game"):
        result(changed.annex.sell_cards(SELLERS[0], 1001, 1, 3))
    with pytest.raises(PurchaseRefused, match="no hall-annex game is on sale in this room"):
        result(changed.joint.request_purchase(
            PurchaseRequest(TERMINALS[0], changed.accounts[0], changed.accounts[0], 1, 100, "x"), game.game_id))
    result(changed.annex.close_sale(Actor("rui", Role.ROOM_CHIEF)))  # nothing sold: the game is the main hall's room's
    assert changed.of("annex_sales_reported")[-1].payload["cards"] == 0


# --- The rules a joint game is played under --------------------------------------------------


@pytest.mark.req("R88.1")
def test_R88_1_no_joint_game_on_prize_rules_whose_line_and_bingo_pay_less_than_70_percent(tmp_path: Path) -> None:
    rules = PrizeRules(line_bp=1500, bingo_bp=4500, jackpot=True)  # 70% with the jackpot's share, 60% without
    main, annex, relay = open_pair(tmp_path, rules)
    with pytest.raises(AnnexError, match="the line and the bingo take 6000 basis points .* at least 7000 "
                                         r"\(70%, R88.1\)"):
        result(main.annex.open_game(CHIEF))


@pytest.mark.req("R82.4")
def test_R82_4_one_game_s_paper_cards_at_a_time_in_a_room(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    result(main.games.announce_sale(SELLERS[0], 1001))
    with pytest.raises(AnnexError, match=r"this hall's own game .* is under way .*\(R82.4"):
        result(main.annex.open_game(CHIEF))
    main.games.state.games[-1].collected = True  # as if played and collected
    result(main.annex.open_game(CHIEF))
    relay.pump()
    with pytest.raises(GameModuleError, match=r"hall-annex game hall-1.j.* is under way in this room.*\(R82.4"):
        result(annex.games.announce_sale(SELLERS[0], 1001))
    result(annex.session.count_balls(CHIEF, "closing", list(range(1, 91)), ["Marta Soler (public)"]))
    with pytest.raises(SessionError, match="hall-annex game .* its prizes are paid before the session closes"):
        result(annex.session.sign_closing(Actor("ines", Role.ADMINISTRATOR)))


# --- Virtual cards on the room's terminals ---------------------------------------------------


@pytest.mark.req("R82.13-16", "R83.7", "R93.1", "R93.6", "R93.8")
def test_each_room_sells_virtual_cards_of_the_joint_game_on_its_terminals_by_its_own_rules(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    (opened,) = result(main.annex.open_game(CHIEF))
    relay.pump()
    game_id = opened.payload["game_id"]
    player, terminal = annex.accounts[0], TERMINALS[0]

    def buy(quantity: int, stake_pct: int = 100, request: str = "r1", hall: JointHall = annex) -> Any:
        return hall.joint.request_purchase(
            PurchaseRequest(terminal, player, player, quantity, stake_pct, request), game_id)

    with pytest.raises(PurchaseRefused, match="sale time for terminals is over or has not begun") as early:
        result(buy(2))
    assert early.value.reason == "sale_time"  # the kiosk says it in the player's language, as the hall game's
    assert annex.of("terminal_request_refused")[-1].payload["what"] == "joint_buy", "a refusal is journaled"
    result(annex.joint.open_sale(SELLERS[0], 60))
    before = annex.balance(player)
    cards = result(buy(4, 75, "r2"))
    assert [c.label for c in cards] == ["V1-1", "V1-2", "V1-3", "V1-4"]
    assert [c.stake_cents for c in cards] == [112] * 4 and annex.balance(player) == before - 448  # 75% of 1.50 EUR
    again = result(buy(4, 75, "r2"))
    assert [c.label for c in again] == ["V1-1", "V1-2", "V1-3", "V1-4"] and annex.balance(player) == before - 448, \
        "the same request again: the same cards, charged once"
    with pytest.raises(PurchaseRefused, match=r"at most 96 cards .* you hold 4, so you may buy 92 more") as most:
        result(buy(93, 100, "r3"))
    assert (most.value.reason, most.value.params) == ("cards_max", {"max": 96, "held": 4, "left": 92})
    result(annex.annex.sell_cards(SELLERS[0], 1001, 1, 2))
    result(annex.annex.close_sale(CHIEF))
    with pytest.raises(PurchaseRefused, match="the sale of hall-annex game .* is closed in this room"):
        result(buy(1, 100, "r4"))
    relay.pump()
    reported = annex.of("annex_sales_reported")[-1].payload
    assert (reported["cards"], reported["cents"]) == (6, 2 * 150 + 448), "the room's sales: paper and virtual"
    assert annex.balances()[f"stakes:{game_id}"] == 748


@pytest.mark.req("R93.10", "R85.9", "R88.4-5", "R87.b")
def test_R93_10_a_virtual_card_wins_on_its_ball_in_either_room_and_is_credited_to_its_account(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    (opened,) = result(main.annex.open_game(CHIEF))
    relay.pump()
    game_id = opened.payload["game_id"]
    for hall, stake in ((main, 100), (annex, 50)):
        result(hall.joint.open_sale(SELLERS[0], 60))
        account = hall.accounts[0]
        result(hall.joint.request_purchase(PurchaseRequest(TERMINALS[1], account, account, 1, stake, "q"), game_id))
        result(hall.annex.sell_cards(SELLERS[0], 1001, 1, 3))
        result(hall.annex.close_sale(CHIEF))
        relay.pump()
    # Both rooms' card V1-1 complete their bingo on the same ball: the main hall draws the numbers of both,
    # a number they share last.
    shared = int(np.intersect1d(main.cells("9001-1")[main.cells("9001-1") > 0], annex.cells("9001-1"))[0])
    numbers = [int(n) for n in np.union1d(main.cells("9001-1"), annex.cells("9001-1")) if n and n != shared] + [shared]
    main.balls.script = numbers + [b for b in range(1, 91) if b not in numbers]
    credit = {hall.hall_id: hall.balance(hall.accounts[0]) for hall in (main, annex)}
    while not main.game().bingo_won or not annex.game().bingo_won:
        result(main.annex.draw_ball(SELLERS[0]))
        relay.pump()
    bingo = [r.payload for r in main.of("annex_claim_verified") if r.payload["pattern"] == "bingo"]
    assert {(c["hall_id"], c["label"], c["ball_count"]) for c in bingo} == {
        (MAIN, "V1-1", len(numbers)), (ANNEX, "V1-1", len(numbers))}, "found by each room at its ball, no claim"
    assert {c["terminal"] for c in bingo} == {TERMINALS[1]}
    result(main.annex.close_game(CHIEF))
    relay.pump()
    pool = main.game().pool
    split = split_prize(pool.bingo_cents, [100, 50])  # each card its share at its stake (R88.4)
    for hall, cents in ((main, split.payments[0]), (annex, split.payments[1])):
        (paid,) = hall.of("annex_prizes_paid")
        assert paid.payload["desk"] is None, "no paper winner in the room: settled with the close, no desk"
        credited = [r.payload for r in hall.of("posting") if r.payload["reason"] == "prize:bingo"]
        assert [(c["credits"], c["reference"]["card"]) for c in credited] == [
            ([[f"player:{hall.accounts[0]}", cents]], "9001-1")], "credited once, to the card's account (R85.9)"
        line = sum(c for r in hall.of("posting") if r.payload["reason"] == "prize:line"
                   for a, c in r.payload["credits"] if a == f"player:{hall.accounts[0]}")
        assert hall.balance(hall.accounts[0]) - credit[hall.hall_id] == cents + line
        assert hall.balances()[f"stakes:{game_id}"] == 0


def test_a_paper_card_and_a_virtual_card_of_the_other_room_on_the_same_ball_share_the_prize(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    plan = JointPlan(main_paper=30, annex_paper=0, annex_purchases=[Purchase(0, 0, 60, 100)], seed=12)
    game_id = play_joint_game(main, annex, relay, plan)
    winners = {tuple(w) for r in main.of("annex_prizes_paid") for p in r.payload["prizes"] for w in p["winners"]}
    assert winners == {tuple(w) for r in annex.of("annex_prizes_paid") for p in r.payload["prizes"]
                       for w in p["winners"]}
    for hall in (main, annex):
        assert hall.balances()[f"stakes:{game_id}"] == 0
    assert main.balances().get(f"interhall:{ANNEX}", 0) == -annex.balances().get(f"interhall:{MAIN}", 0)


def test_a_virtual_card_is_not_claimed_at_the_table(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    plan = JointPlan(main_paper=3, annex_paper=3, main_purchases=[Purchase(0, 0, 2, 100)])
    (opened,) = result(main.annex.open_game(CHIEF))
    relay.pump()
    sell(main, plan.main_paper, plan.main_purchases, random.Random(1))
    sell(annex, plan.annex_paper, (), random.Random(2))
    for hall in (main, annex):
        result(hall.annex.close_sale(CHIEF))
        relay.pump()
    result(main.annex.draw_ball(SELLERS[0]))
    (rejected,) = result(main.annex.verify_claim(TABLE, VIRTUAL_NUMBER, 1))
    assert "virtual card: the system checks every virtual card at each ball" in rejected.payload["reason"]


@pytest.mark.req("R82.6")
def test_R82_6_a_room_sells_no_card_of_one_series_that_another_series_of_its_set_sold_in_the_game(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    result(main.annex.open_game(CHIEF))
    result(main.annex.sell_cards(SELLERS[0], 1001, 1, 10))
    with pytest.raises(AnnexError, match=r"cards 5..10 of series 1002 print the same numbers as those of series 1001 "
                                         r"sold in this game \(card set hall\): no two identical cards in one game"):
        result(main.annex.sell_cards(SELLERS[0], 1002, 5, 12))
    result(main.annex.sell_cards(SELLERS[0], 1002, 11, 12))  # cards the first series did not sell

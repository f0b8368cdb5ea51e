"""The hall-annex game when something fails (R3.5.b): force majeure (R96.2) and a failed terminal (R96.3).

Both halls of a pair run in process, each on its own SQLite journal, the central server's relay
between them (:mod:`tests.network.joint_halls`), as in ``test_annex_module``; the last test runs
the halls the server composes (card store, configuration) and exports, replays and verifies
their day with ``bingo audit``.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hall_server.annex.module import AnnexError
from hall_server.cli import main as bingo
from hall_server.hall.cashier import player_account
from hall_server.hall.virtual import PurchaseRequest
from protocol.replay import replay_json
from protocol.settlement import PrizeRules
from tests.audit.conftest import fast_folder
from tests.audit.halls import CASHIER, SAFE, SELLERS, TABLE, TERMINALS, GamePlan, Purchase, play_game
from tests.hall.conftest import result
from tests.network.joint_halls import (
    ANNEX,
    DAY,
    MAIN,
    JointHall,
    Relay,
    finish_joint_game,
    open_pair,
    paper_calls,
    sell,
)
from tests.network.test_annex_module import CHIEF

RULES = PrizeRules(line_bp=2000, bingo_bp=5500)
REASON = "the blower's compressor failed"


def nonzero(balances: dict[str, int]) -> dict[str, int]:
    return {account: cents for account, cents in balances.items() if cents}


def postings(hall: JointHall, game_id: str, reason: str) -> list[dict[str, Any]]:
    return [r.payload for r in hall.of("posting")
            if r.payload["reason"] == reason and r.payload["reference"]["game_id"] == game_id]


def buy(hall: JointHall, game_id: str, player: int, terminal: str, quantity: int, stake_pct: int, request: str) -> Any:
    account = hall.accounts[player]
    return result(hall.joint.request_purchase(
        PurchaseRequest(terminal, account, account, quantity, stake_pct, request), game_id))


def opened_game(main: JointHall, relay: Relay) -> str:
    (opened,) = result(main.annex.open_game(CHIEF))
    relay.pump()
    return str(opened.payload["game_id"])


@pytest.mark.req("R96.2")
def test_R96_2_the_main_hall_declares_a_joint_game_not_played_and_every_stake_goes_back_in_both_rooms(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    before = {hall.hall_id: nonzero(hall.balances()) for hall in (main, annex)}
    game_id = opened_game(main, relay)
    rng = random.Random(5)
    sell(main, 12, [Purchase(0, 0, 3, 100), Purchase(1, 1, 2, 40)], rng)
    sell(annex, 9, [Purchase(0, 1, 4, 75)], rng)
    for hall in (main, annex):
        result(hall.annex.close_sale(CHIEF))
        relay.pump()
    main.balls.script = rng.sample(range(1, 91), 90)
    for _ in range(6):
        result(main.annex.draw_ball(SELLERS[0]))
        relay.pump()
    taken = {hall.hall_id: hall.balances()[f"stakes:{game_id}"] for hall in (main, annex)}
    assert taken[MAIN] == 12 * 150 + 3 * 150 + 2 * 60 and taken[ANNEX] == 9 * 150 + 4 * 112

    with pytest.raises(AnnexError, match="only the main hall"):
        result(annex.annex.declare_not_played(CHIEF, REASON))
    with pytest.raises(AnnexError, match="say why the game cannot run"):
        result(main.annex.declare_not_played(CHIEF, "  "))
    result(main.annex.declare_not_played(CHIEF, REASON))
    relay.pump()

    for hall, declared_by in ((main, CHIEF.name), (annex, MAIN)):
        (declared,) = hall.of("annex_game_not_played")
        assert {k: declared.payload[k] for k in ("game_id", "hall_id", "reason", "declared_by", "refunded_cents")} \
            == {"game_id": game_id, "hall_id": MAIN, "reason": REASON, "declared_by": declared_by,
                "refunded_cents": taken[hall.hall_id]}
        assert nonzero(hall.balances()) == before[hall.hall_id], \
            "every stake is back where it came from: the ledger is as it was before the game"
        refunds = postings(hall, game_id, "refund:game")
        to_drawers = {account: cents for p in refunds for account, cents in p["credits"] if account.startswith("cash:")}
        assert sum(to_drawers.values()) == sum(r.payload["amount_cents"] for r in hall.of("annex_cards_sold")), \
            "paper: to the sellers' drawers"
        to_players = sum(cents for p in refunds for account, cents in p["credits"] if account.startswith("player:"))
        assert to_players == sum(r.payload["amount_cents"] for r in hall.of("annex_virtual_cards_bought"))
        assert not [p for p in hall.of("posting") if p.payload["reason"].startswith("prize:")], "no prize is paid"
        game = hall.game()
        assert game.phase == "not_played" and game.over
        assert hall.annex.own_game_refusal() is None and hall.annex.closing_refusal() is None
        with pytest.raises(AnnexError, match="was declared not played"):
            result(hall.annex.pay_prizes(CASHIER, SAFE))
    with pytest.raises(AnnexError, match="was declared not played"):
        result(main.annex.draw_ball(SELLERS[0]))
    with pytest.raises(AnnexError, match="was declared not played"):
        result(main.annex.declare_not_played(CHIEF, REASON))
    before_next = len(annex.records())
    next_id = opened_game(main, relay)  # the main hall plays on: the next joint game opens in both rooms
    assert next_id != game_id and annex.game().game_id == next_id and len(annex.records()) > before_next


@pytest.mark.req("R96.2")
def test_R96_2_a_closed_joint_game_cannot_be_declared_not_played_its_prizes_are_won(tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    game_id = opened_game(main, relay)
    rng = random.Random(8)
    sell(main, 10, [], rng)
    sell(annex, 10, [], rng)
    finish_joint_game(main, annex, relay, rng)
    with pytest.raises(AnnexError, match="is over in this room"):
        result(main.annex.declare_not_played(CHIEF, REASON))
    assert not main.of("annex_game_not_played") and main.balances()[f"stakes:{game_id}"] == 0


@pytest.mark.req("R96.3")
def test_R96_3_a_failed_terminal_s_joint_cards_are_refunded_once_before_the_first_ball_and_kept_in_play_after(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    game_id = opened_game(main, relay)
    for hall in (main, annex):
        result(hall.joint.open_sale(SELLERS[0], 60))
    buy(annex, game_id, 0, TERMINALS[0], 3, 100, "a1")  # V1-1..3 on T1
    buy(annex, game_id, 1, TERMINALS[1], 2, 50, "a2")  # V1-4..5 on T2, 75 cents each
    buy(main, game_id, 0, TERMINALS[0], 2, 100, "m1")  # V1-1..2 on the main hall's T1
    result(annex.annex.sell_cards(SELLERS[0], 1001, 1, 5))
    result(main.annex.sell_cards(SELLERS[0], 1001, 1, 5))
    assert len(annex.joint.cards(game_id, player_account(annex.accounts[0]))) == 3

    # 1. The annex's T1 fails while its room's sale is open: refunded from the game's collection, out of the sale.
    player = annex.accounts[0]
    credit = annex.balance(player)
    result(annex.virtual.declare_failed(CHIEF, TERMINALS[0], "screen dead"))
    (failed,) = annex.of("annex_terminal_failed")
    assert {k: failed.payload[k] for k in ("terminal", "refunded", "refunded_cents", "source", "kept_in_play")} == {
        "terminal": TERMINALS[0], "refunded": ["9001-1", "9001-2", "9001-3"], "refunded_cents": 450,
        "source": "stakes", "kept_in_play": []}
    assert annex.balance(player) == credit + 450 and annex.joint.cards(game_id, player_account(player)) == []
    (refund,) = postings(annex, game_id, "refund:terminal")[:1]
    assert refund["debits"] == [[f"stakes:{game_id}", 150]] and refund["credits"] == [[f"player:{player}", 150]]
    result(annex.annex.close_sale(CHIEF))
    relay.pump()
    reported = annex.of("annex_sales_reported")[-1].payload
    assert (reported["cards"], reported["cents"]) == (5 + 2, 5 * 150 + 2 * 75), "the sale counts them no more"

    # 2. The main hall's T1 fails after its room's sale closed, before the first ball: the house refunds them,
    #    and the pool announced on them stands.
    result(main.annex.close_sale(CHIEF))
    relay.pump()
    pool = main.game().pool
    assert pool is not None and pool.main_sales_cents == 5 * 150 + 2 * 150
    house, stakes = main.balances().get("house", 0), main.balances()[f"stakes:{game_id}"]
    result(main.virtual.declare_failed(CHIEF, TERMINALS[0], "card reader broken"))
    (failed,) = main.of("annex_terminal_failed")
    assert (failed.payload["refunded"], failed.payload["source"], failed.payload["refunded_cents"]) == (
        ["9001-1", "9001-2"], "house", 300)
    assert main.balances().get("house", 0) == house - 300 and main.balances()[f"stakes:{game_id}"] == stakes
    assert main.game().pool == pool

    # 3. After the first ball the annex's T2 fails: its cards stay in play, nothing is refunded.
    main.balls.script = random.Random(3).sample(range(1, 91), 90)
    result(main.annex.draw_ball(SELLERS[0]))
    relay.pump()
    refunds_before = len(annex.of("posting"))
    result(annex.virtual.declare_failed(CHIEF, TERMINALS[1], "frozen"))
    kept = annex.of("annex_terminal_failed")[-1].payload
    assert (kept["refunded"], kept["kept_in_play"], kept["source"]) == ([], ["9001-4", "9001-5"], None)
    assert len(annex.of("posting")) == refunds_before
    assert [c.label for c in annex.joint.cards(game_id, player_account(annex.accounts[1]))] == ["V1-4", "V1-5"]

    # 4. Once: T1 back in service and failed again refunds nothing more.
    result(annex.virtual.return_to_service(CHIEF, TERMINALS[0]))
    result(annex.virtual.declare_failed(CHIEF, TERMINALS[0], "again"))
    assert len(annex.of("annex_terminal_failed")) == 2 and len(annex.of("posting")) == refunds_before

    # The game plays to its end: a refunded card wins nothing, and each room's collection ends at zero.
    while not main.game().bingo_won:
        result(main.annex.draw_ball(SELLERS[0]))
        relay.pump()
        for hall in (main, annex):
            for series, number in paper_calls(hall):
                result(hall.annex.verify_claim(TABLE, series, number))
        relay.pump()
    result(main.annex.close_game(CHIEF))
    relay.pump()
    for hall, refunded in ((main, {"9001-1", "9001-2"}), (annex, {"9001-1", "9001-2", "9001-3"})):
        if not hall.game().paid:
            result(hall.annex.pay_prizes(CASHIER, SAFE))
        won_here = {c.card for c in hall.game().claims if c.hall_id == hall.hall_id}
        assert not won_here & refunded, "a refunded card left the game"
        assert hall.balances()[f"stakes:{game_id}"] == 0


@pytest.mark.req("R96.2", "R96.3", "R96.4")
def test_a_day_with_a_joint_game_not_played_and_a_terminal_refunded_exports_replays_and_verifies() -> None:
    folder = fast_folder()
    try:
        main, annex, relay = open_pair(folder, RULES, stored=True)
        not_played = opened_game(main, relay)
        rng = random.Random(21)
        sell(main, 6, [Purchase(0, 0, 2, 100)], rng)
        sell(annex, 4, [], rng)
        result(main.annex.declare_not_played(CHIEF, REASON))
        relay.pump()
        played = opened_game(main, relay)
        sell(main, 8, [Purchase(1, 1, 3, 60)], rng)
        sell(annex, 7, [Purchase(0, 0, 4, 100), Purchase(2, 1, 2, 30)], rng)
        result(annex.virtual.declare_failed(CHIEF, TERMINALS[0], "screen dead"))  # refunded, its room still selling
        result(annex.virtual.return_to_service(CHIEF, TERMINALS[0]))
        finish_joint_game(main, annex, relay, rng)
        for hall in (main, annex):
            play_game(hall, GamePlan(paper=1, last=True))
            hall.close_day()
        runner = CliRunner()
        for hall in (main, annex):
            out = folder / f"export-{hall.hall_id}"
            exported = runner.invoke(bingo, ["audit", "export", "--day", DAY, "--out", str(out)],
                                     env={"BINGO_HOME": str(folder / hall.hall_id)})
            assert exported.exit_code == 0, exported.output
            assert "1 joint game(s) with the partner hall" in exported.output
            assert not_played in exported.output, "the game not played is named as left out"
            assert played in (out / "scenario.json").read_text() and not_played not in (out / "result.json").read_text()
            assert replay_json((out / "scenario.json").read_text()) == (out / "result.json").read_text(), hall.hall_id
            verified = runner.invoke(bingo, ["audit", "verify", str(out)])
            assert verified.exit_code == 0, verified.output
    finally:
        shutil.rmtree(folder, ignore_errors=True)

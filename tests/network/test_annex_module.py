"""The hall-annex game at one hall (R3.5.b): the partner's stream taken once and in order, the roles kept.

The module runs on a real SQLite journal with the core's inline runner; the partner's
items are what the central server would deliver (``annex_delivered``).
"""

from __future__ import annotations

from typing import Any

import pytest

from hall_server.annex.module import AnnexError, AnnexGap, AnnexModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from server_kit.core import Actor, CommandCore, run_inline
from server_kit.journal.sql import Journal
from tests.hall.conftest import clock, journal, result  # noqa: F401  (fixtures)
from tests.hall.test_games import CATALOG, RULES, ScriptedBalls

pytestmark = pytest.mark.req("R3.5.b")

CHIEF = Actor("rui", Role.ROOM_CHIEF)
SELLER = Actor("sam", Role.SELLER_CALLER)
GAME = "hall-1.j9"


def annex_hall(journal: Journal, clock: Any) -> AnnexModule:
    core = CommandCore(journal, clock, run_inline)
    module = AnnexModule(core, LedgerModule(core), CATALOG, ScriptedBalls(), RULES, hall_id="hall-2", role="annex",
                         partner="hall-1")
    core.recover()
    return module


def item(seq: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "from_hall": "hall-1", "game_id": GAME, "kind": kind, **fields}


def failure(deferred: Any) -> BaseException:
    with pytest.raises(Exception) as raised:
        result(deferred)
    return raised.value


def test_R3_5_b_the_partner_s_items_are_taken_once_in_order_and_a_gap_is_refused(journal: Journal, clock: Any) -> None:
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


def test_R3_5_b_the_annex_neither_opens_nor_draws_and_its_sales_make_the_pool_with_the_main_hall_s(
        journal: Journal, clock: Any) -> None:
    annex = annex_hall(journal, clock)
    assert "only the main hall" in str(failure(annex.open_game(CHIEF)))
    result(annex.take(item(1, "opened", cents=100, line_bp=1500, bingo_bp=5500)))
    result(annex.sell_cards(SELLER, 7, 1, 10))
    with pytest.raises(AnnexError, match="card 11 of series 7 is the next one"):
        result(annex.sell_cards(SELLER, 7, 12, 13))
    with pytest.raises(AnnexError, match="series 9 is worth"):
        result(annex.sell_cards(SELLER, 9, 1, 2))
    result(annex.close_sale(CHIEF))
    assert [seq for seq, _ in annex.pending()] and annex.pending()[-1][1] == {
        "game_id": GAME, "kind": "sales", "cards": 10, "cents": 1000}
    records = result(annex.take(item(2, "sales", cards=30, cents=3000)))
    assert [r.type for r in records] == ["annex_sales_reported", "annex_pool"]
    pool = annex.game(GAME).pool
    assert (pool.sales_cents, pool.line_cents, pool.bingo_cents, pool.main_line_cents) == (4000, 600, 2200, 450)
    assert "only the main hall" in str(failure(annex.draw_ball(SELLER)))
    result(annex.take(item(3, "ball", ball=17, ball_count=1)))
    assert annex.game(GAME).balls == [17]


def test_R3_5_b_a_restarted_hall_holds_the_stream_and_what_it_has_not_posted(journal: Journal, clock: Any) -> None:
    annex = annex_hall(journal, clock)
    result(annex.take(item(1, "opened", cents=100, line_bp=1500, bingo_bp=5500)))
    result(annex.sell_cards(SELLER, 7, 1, 4))
    result(annex.close_sale(CHIEF))
    (waiting, _), = annex.pending()
    again = annex_hall(journal, clock)
    assert again.state.last_relay_seq == 1 and [seq for seq, _ in again.pending()] == [waiting]
    result(again.posted(waiting, f"hall-2.{waiting}", 1))
    assert again.pending() == [] and annex_hall(journal, clock).pending() == []

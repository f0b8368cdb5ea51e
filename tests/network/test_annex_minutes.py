"""The minutes book lists the games played with the partner hall (R3.5.b, R77.1, R83.3-5).

Both halls of a pair play a joint game in process (paper and virtual cards in both rooms);
each hall's minutes, made from its own journal, list the game in the session's minutes and
as a game report of its own: both rooms' sales, the joint prizes, the main hall's balls in
order, the winning cards of both rooms with their ball, and who paid each winning card
what, in the CSV and in the PDF.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.reports.minutes import build
from hall_server.reports.publish import make_report
from server_kit.reports.render import to_csv, to_pdf
from tests.audit.halls import Purchase
from tests.hall.test_games import RULES
from tests.network.joint_halls import ANNEX, MAIN, JointPlan, open_pair, play_joint_game
from tests.reports.conftest import csv_tables, pdf_strings


@pytest.mark.req("R83.3-4")
def test_R77_1_each_hall_s_minutes_list_the_joint_game_with_both_rooms_sales_the_balls_the_winners_and_who_paid(
        tmp_path: Path) -> None:
    main, annex, relay = open_pair(tmp_path, RULES)
    plan = JointPlan(main_paper=12, annex_paper=9, main_purchases=[Purchase(0, 0, 5, 100)],
                     annex_purchases=[Purchase(1, 1, 7, 50)], seed=4)
    game_id = play_joint_game(main, annex, relay, plan)
    pool = main.of("annex_pool")[0].payload
    for hall in (main, annex):
        book = build(hall.records())
        session = csv_tables(to_csv(make_report(book, "session", "1", hall.hall_id, DEFAULT_TIMEZONE)))
        (listed,) = session["joint_games"]
        assert (listed["game_id"], listed["partner"]) == (game_id, ANNEX if hall is main else MAIN)
        assert int(listed["line_prize_cents"]) == pool["line_cents"]
        own = pool["main_sales_cents"] if hall is main else pool["annex_sales_cents"]
        assert int(listed["collection_cents"]) == own
        assert int(listed["partner_collection_cents"]) == pool["sales_cents"] - own
        rooms = {row["hall"]: row for row in session["joint_1.rooms"]}
        assert int(rooms[MAIN]["amount_cents"]) == pool["main_sales_cents"]
        assert int(rooms[ANNEX]["amount_cents"]) == pool["annex_sales_cents"]
        balls = [r.payload["ball"] for r in hall.of("annex_ball_drawn")]
        assert [int(e["ball"]) for e in session["joint_1.draw"] if e["event"] == "ball drawn"] == balls
        paid = hall.of("annex_prizes_paid")[0].payload
        winners = [(h, cents) for prize in paid["prizes"] for h, _, cents in prize["winners"]]
        assert [(row["hall"], int(row["paid_cents"])) for row in session["joint_1.prizes"]] == winners
        for row in session["joint_1.prizes"]:
            expected = ("player's account", "desk safe") if row["hall"] == hall.hall_id else (row["hall"],)
            assert row["paid_by"] in expected, row
        assert {row["hall"] for row in session["joint_1.winners"]} <= {MAIN, ANNEX}
        assert int(session["joint_1.game"][0]["owed_to_partner_cents"]) == paid["owed_to_partner_cents"]
        # The game's own report, under its id, in both renderings.
        report = make_report(book, "game", game_id, hall.hall_id, DEFAULT_TIMEZONE)
        assert report.stem == f"minutes-game-{game_id}"
        tables = csv_tables(to_csv(report))
        assert int(tables["game"][0]["pool_sales_cents"]) == pool["sales_cents"]
        shown = pdf_strings(to_pdf(report))
        assert f"Game with the partner hall {game_id}" in shown
        assert "Winning cards of both rooms, with the ball they won on" in shown

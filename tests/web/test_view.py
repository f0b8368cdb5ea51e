"""The consoles' and boards' picture copies the records, and the board shows no staff data."""

import pytest

from hall_server.web.view import HallView
from protocol.chain import Record

GAME = "2026-11-29-s1-g1"


def records(*entries: tuple[str, dict]) -> list[Record]:
    return [Record(seq, 1_000 * seq, type, payload, "0" * 64, "h", "s") for seq, (type, payload) in enumerate(entries, 1)]


@pytest.mark.req("R85.5", "R92.11-12")
def test_the_picture_follows_sale_draw_void_claims_and_payments() -> None:
    view = HallView("Sala")
    actor = {"actor": {"name": "sam", "role": "seller_caller"}}
    for record in records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100, **actor}),
        ("card_sold", {"game_id": GAME, "series": 7, "card_number": 1, "stake_cents": 100, "account": "cash:sam"}),
        ("card_sold", {"game_id": GAME, "series": 7, "card_number": 2, "stake_cents": 100, "account": "cash:sam"}),
        ("sale_closed", {"game_id": GAME, "cards_sold": 2, "collection_cents": 200, "line_cents": 30, "bingo_cents": 110}),
        ("ball_drawn", {"game_id": GAME, "ball": 5, "ball_count": 1, "completed_line": [], "completed_bingo": []}),
        ("ball_drawn", {"game_id": GAME, "ball": 17, "ball_count": 2, "completed_line": ["7-2"], "completed_bingo": []}),
        ("ball_voided", {"game_id": GAME, "ball": 17, "ball_count": 2}),
        ("ball_drawn", {"game_id": GAME, "ball": 18, "ball_count": 2, "completed_line": ["7-1"], "completed_bingo": ["7-2"]}),
        ("claim_rejected", {"game_id": GAME, "series": 7, "card_number": 9, "reason": "not sold"}),
        ("prize_won", {"game_id": GAME, "pattern": "line", "series": 7, "card_number": 1, "ball_count": 2}),
        ("prize_paid", {"game_id": GAME, "prize": "line", "amount_cents": 30, "payments": [["7-1", 30]]}),
    ):
        view.apply(record)
    game = view.board()["game"]
    assert game["balls"] == [5, 18] and game["last_ball"] == 18
    assert game["cards_sold"] == 2 and game["prizes"] == {"line": 30, "bingo": 110}
    assert game["completed"] == [
        {"series": 7, "card_number": 2, "pattern": "bingo", "ball_count": 2},
        {"series": 7, "card_number": 1, "pattern": "line", "ball_count": 2},
    ]
    assert game["winners"] == [{"series": 7, "card_number": 1, "pattern": "line", "ball_count": 2, "stake_pct": 100}]
    assert game["paid"] == [{"prize": "line", "amount_cents": 30, "carry_cents": 0,
                             "payments": [{"series": 7, "card_number": 1, "cents": 30}]}]
    assert "rejected" not in game and "sam" not in str(view.board())
    console = view.console()
    assert console["game"]["rejected"] == [{"series": 7, "card_number": 9, "reason": "not sold"}]
    assert console["recent"][0]["type"] == "prize_paid" and view.seq == 11


def test_board_1920x1080_the_picture_gives_each_winners_stake_and_what_the_split_left_to_carry() -> None:
    """The board shows a share beside its card's stake and what went to no card, so the amounts add up."""
    view = HallView("Sala")
    for record in records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100}),
        ("paper_cards_sold", {"game_id": GAME, "series": 7, "first": 1, "last": 10, "count": 10, "price_cents": 100,
                              "amount_cents": 1_000, "seller": "sam"}),
        ("virtual_cards_bought", {"game_id": GAME, "series": 9001, "series_label": "V1", "first": 4, "last": 6,
                                  "quantity": 3, "stake_pct": 50, "stake_cents": 50, "price_cents": 100,
                                  "amount_cents": 150}),
        ("sale_closed", {"game_id": GAME, "cards_sold": 13, "collection_cents": 1_150, "line_cents": 9_597,
                         "bingo_cents": 500}),
        ("ball_drawn", {"game_id": GAME, "ball": 5, "ball_count": 1, "completed_line": [], "completed_bingo": []}),
        ("prize_won", {"game_id": GAME, "pattern": "line", "series": 7, "card_number": 5, "ball_count": 1}),
        ("prize_won", {"game_id": GAME, "pattern": "line", "series": 9001, "card_number": 5, "ball_count": 1}),
        ("prize_paid", {"game_id": GAME, "prize": "line", "amount_cents": 9_597, "carry_cents": 2_400,
                        "payments": [["7-5", 4_798], ["9001-5", 2_399]]}),
    ):
        view.apply(record)
    game = view.board()["game"]
    assert [(w["series"], w["card_number"], w["stake_pct"]) for w in game["winners"]] == [(7, 5, 100), (9001, 5, 50)]
    (paid,) = game["paid"]
    assert paid["carry_cents"] + sum(p["cents"] for p in paid["payments"]) == paid["amount_cents"] == 9_597


@pytest.mark.req("R85.6", "R85.5", "R82.8")
def test_the_picture_shows_the_claim_pause_a_correction_waiting_and_done_and_a_refused_card() -> None:
    view = HallView("Sala", claim_wait_s=12)
    chief, table = {"actor": {"name": "rui", "role": "room_chief"}}, {"actor": {"name": "teo", "role": "table_chief"}}
    steps = records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100}),
        ("sale_closed", {"game_id": GAME, "cards_sold": 2, "collection_cents": 200, "line_cents": 30, "bingo_cents": 110}),
        ("ball_drawn", {"game_id": GAME, "ball": 5, "ball_count": 1, "completed_line": [], "completed_bingo": []}),
        ("ball_correction_signed", {"game_id": GAME, "ball_count": 1, "misread": 5, "corrected": 50, "reason": "read 50 as 5",
                                    "signer": "rui", "role": "room_chief", **chief}),
        ("ball_corrected", {"game_id": GAME, "misread": 5, "ball": 50, "ball_count": 1, "reason": "read 50 as 5",
                            "signed_by": ["rui", "teo"], "completed_line": ["7-1"], "completed_bingo": [], **table}),
        ("card_refused", {"game_id": GAME, "series": 7, "card_number": 2, "reason": "torn", "refused_by": "teo",
                          "ball_count": 1}),
        ("prize_won", {"game_id": GAME, "pattern": "line", "series": 7, "card_number": 1, "ball_count": 1}),
        ("prize_closed", {"game_id": GAME, "patterns": ["line"], "ball_count": 1, "closed_by": "sam"}),
    )
    for record in steps[:4]:
        view.apply(record)
    assert view.console()["game"]["correction"] == {"ball_count": 1, "misread": 5, "corrected": 50,
                                                    "reason": "read 50 as 5", "signer": "rui", "role": "room_chief"}
    assert "correction" not in view.board()["game"], "a correction waiting is for the staff"
    view.apply(steps[4])
    game = view.console()["game"]
    assert game["balls"] == [50] and game["correction"] is None and game["corrections"][0]["signed_by"] == ["rui", "teo"]
    assert game["completed"] == [{"series": 7, "card_number": 1, "pattern": "line", "ball_count": 1}]
    view.apply(steps[5])
    view.apply(steps[6])
    board = view.board()["game"]
    assert board["pause"] == {"patterns": ["line"], "ball_count": 1, "balls_drawn": 1, "since_ms": 7_000}
    assert view.console()["claim_wait_s"] == 12
    assert view.console()["game"]["refused"] == [{"series": 7, "card_number": 2, "reason": "torn", "refused_by": "teo"}]
    view.apply(steps[7])
    assert view.board()["game"]["pause"] is None


def test_records_of_another_game_or_module_leave_the_game_alone() -> None:
    view = HallView("Sala")
    for record in records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100}),
        ("ball_drawn", {"game_id": "another", "ball": 5, "ball_count": 1}),
        ("posting", {"amount": 100}),
    ):
        view.apply(record)
    assert view.board()["game"]["balls"] == [] and view.seq == 3


@pytest.mark.req("R91")
def test_the_board_tells_the_players_of_a_reserve_boost_and_a_later_announcement_replaces_it() -> None:
    view = HallView("Sala")
    boost = {"allowance_cents": 300, "boosted_before_cents": 0, "reserve_cents": 1_000}
    for record in records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100}),
        ("reserve_boost_announced", {"game_id": GAME, "line_cents": 200, "bingo_cents": 100, **boost}),
        ("reserve_boost_announced", {"game_id": "another", "line_cents": 5, "bingo_cents": 5, **boost}),
        ("reserve_boost_announced", {"game_id": GAME, "line_cents": 100, "bingo_cents": 150, **boost}),
    ):
        view.apply(record)
    assert view.board()["game"]["reserve_boost"] == {"line_cents": 100, "bingo_cents": 150}


@pytest.mark.req("R82.4", "R82.5")
def test_the_series_cards_sold_are_those_of_committed_records_over_the_catalogs_count() -> None:
    """A picture sent after record N showed a series' cards sold by a command decided and not yet committed
    (the games module counts those): a hall killed then restarted showed fewer.  The picture now takes the
    count from the records it folded, over the catalog's count of cards sold before the hall kept the series."""
    catalog = [{"series": 7, "card_set": "classic", "price_cents": 100, "card_count": 60, "last_sold": 0},
               {"series": 8, "card_set": "classic", "price_cents": 100, "card_count": 60, "last_sold": 12}]
    view = HallView("Sala", series=lambda: [dict(one) for one in catalog])
    for record in records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100}),
        ("paper_cards_sold", {"game_id": GAME, "series": 7, "first": 1, "last": 6, "count": 6, "seller": "sam",
                              "price_cents": 100, "amount_cents": 600}),
        ("paper_cards_sold", {"game_id": GAME, "series": 7, "first": 7, "last": 9, "count": 3, "seller": "sam",
                              "price_cents": 100, "amount_cents": 300}),
    ):
        view.apply(record)
    assert [(one["series"], one["last_sold"]) for one in view.console()["series"]] == [(7, 9), (8, 12)]


@pytest.mark.req("R87.a")
def test_desk_row_chips_end_when_the_line_is_won() -> None:
    """Once the line is won, a row completed by a later ball is no prize: the desks list no ROW."""
    view = HallView("Sala")
    steps = records(
        ("sale_opened", {"game_id": GAME, "series": 7, "first_card": 1, "price_cents": 100}),
        ("sale_closed", {"game_id": GAME, "cards_sold": 3, "collection_cents": 300, "line_cents": 30, "bingo_cents": 110}),
        ("ball_drawn", {"game_id": GAME, "ball": 5, "ball_count": 1, "completed_line": ["7-1"], "completed_bingo": []}),
        ("prize_won", {"game_id": GAME, "pattern": "line", "series": 7, "card_number": 1, "ball_count": 1}),
        ("prize_closed", {"game_id": GAME, "patterns": ["line"], "ball_count": 1, "closed_by": "sam"}),
        ("ball_drawn", {"game_id": GAME, "ball": 6, "ball_count": 2, "completed_line": ["7-2"], "completed_bingo": ["7-3"]}),
        ("ball_corrected", {"game_id": GAME, "misread": 6, "ball": 60, "ball_count": 2, "reason": "read 60 as 6",
                            "signed_by": ["rui", "teo"], "completed_line": ["7-2"], "completed_bingo": []}),
    )
    for record in steps[:5]:
        view.apply(record)
    assert [c["pattern"] for c in view.console()["game"]["completed"]] == ["line"], "the line's own ball lists it"
    view.apply(steps[5])
    assert view.console()["game"]["completed"] == [{"series": 7, "card_number": 3, "pattern": "bingo", "ball_count": 2}]
    view.apply(steps[6])
    assert view.console()["game"]["completed"] == [], "a corrected ball lists no row either"


def test_desk_faults_of_session_1_are_not_listed_in_session_2() -> None:
    view = HallView("Sala")
    for record in records(
        ("balls_counted", {"stage": "opening", "missing": [], "repeated": []}),
        ("session_opened", {"session": 1, "date": "2026-11-29"}),
        ("game_suspended", {"game_id": GAME, "reason": "blower jammed"}),
        ("session_closed", {"session": 1, "games": 1}),
        ("system_verified", {"date": "2026-11-30", "passed": False, "results": {"clock": "behind"}}),
        ("balls_counted", {"stage": "opening", "missing": [], "repeated": []}),
        ("session_opened", {"session": 2, "date": "2026-11-30"}),
    ):
        view.apply(record)
    faults = view.console()["faults"]
    assert view.console()["session"]["number"] == 2
    assert [f["type"] for f in faults] == ["system_verified"], "only the fault since session 1 closed"

"""The day's export from journal records made in process: what the day is, what each
document holds, where it comes from, and every day the replay format cannot express."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from protocol.audit.hall_day import AuditError, DayExport, DayFold, build_day
from protocol.cards import Card
from protocol.chain import Record
from protocol.settlement import PrizeRules
from protocol.replay import parse_scenario, replay
from tests.audit.conftest import POT_RULES, first, new_hall
from tests.audit.halls import (
    ADMIN,
    CHIEF,
    LIBRARY_CELLS,
    SELLERS,
    SET_CELLS,
    AuditHall,
    Contribution,
    GamePlan,
    Layouts,
    Purchase,
    play_game,
)
from tests.hall.conftest import result

DAY_1, DAY_2 = "2026-12-01", "2026-12-02"


@dataclass
class TwoDays:
    hall: AuditHall
    records: list[Record]
    day_1: DayExport
    day_2: DayExport


@pytest.fixture(scope="module")
def two_days(module_folder: Path) -> TwoDays:
    """Day 1: a superbingo game, a refunded game, a jackpot game announced last; day 2: a
    megabingo game and a game still under way, the session open."""
    hall = new_hall(module_folder)
    hall.open_day(DAY_1)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 40_000))
    play_game(hall, GamePlan(paper=8, purchases=[Purchase(0, 0, 3, 50), Purchase(1, 1, 2, 100)],
                             superbingo_limit=42, seed=11))
    play_game(hall, GamePlan(paper=5, contributions=[Contribution("superbingo", 500, "selling")], refund=True))
    play_game(hall, GamePlan(paper=6, purchases=[Purchase(2, 0, 1, 7)], jackpot_threshold=42, quick=True,
                             seed=3, last=True))
    result(hall.games.contribute_to_pot(ADMIN, "grand_superbingo", 1_000))  # after the day's last game
    result(hall.games.announce_megabingo(CHIEF, DAY_2, "21:00"))
    hall.close_day()
    hall.open_day(DAY_2)
    play_game(hall, GamePlan(paper=6, megabingo=True, seed=5))
    result(hall.games.announce_sale(SELLERS[0], 1001))
    result(hall.games.sell_cards(SELLERS[0], 1001, hall.games.current.sale.windows[0].first,
                                 hall.games.current.sale.windows[0].first + 3))
    result(hall.games.close_sale(CHIEF))
    for _ in range(3):
        result(hall.games.draw_ball(SELLERS[0]))
    records = hall.records()
    return TwoDays(hall, records, build_day(records, DAY_1, POT_RULES, Layouts()),
                   build_day(records, DAY_2, POT_RULES, Layouts()))


def games_of(made: DayExport) -> list[dict]:
    return made.scenario["sessions"][0]["games"]


# --- What the day is --------------------------------------------------------------------


@pytest.mark.req("R92.3", "R96.4")
def test_the_day_is_a_session_date_from_its_verification_to_its_closing(two_days: TwoDays) -> None:
    day_1, day_2 = two_days.day_1, two_days.day_2
    assert day_1.records[0].type == "system_verified" and day_1.records[0].payload["date"] == DAY_1
    assert day_1.records[-1].type == "session_closed" and day_1.session_closed
    assert [r.seq for r in day_1.records] == list(range(day_1.records[0].seq, day_1.records[-1].seq + 1))
    # Day 2's session is still open: its segment runs to the journal's end.
    assert day_2.records[0].seq == day_1.records[-1].seq + 1
    assert day_2.records[-1] == two_days.records[-1] and not day_2.session_closed
    assert all(game.startswith(f"{DAY_1}-s1-") for game in day_1.games)
    assert all(game.startswith(f"{DAY_2}-s2-") for game in day_2.games)
    assert [s["date"] for s in day_1.scenario["sessions"]] == [DAY_1]


@pytest.mark.req("R92.3", "R96.4", "R86.1-2")
def test_refunded_games_and_a_game_under_way_are_left_out(two_days: TwoDays) -> None:
    assert two_days.day_1.games == (f"{DAY_1}-s1-g1", f"{DAY_1}-s1-g3")
    assert two_days.day_1.left_out == (f"{DAY_1}-s1-g2",)
    assert [g["game"] for g in games_of(two_days.day_1)] == [1, 3]
    assert two_days.day_2.games == (f"{DAY_2}-s2-g1",) and two_days.day_2.left_out == (f"{DAY_2}-s2-g2",)


# --- The scenario: raw facts -------------------------------------------------------------


@pytest.mark.req("R92.3", "R82.13-16", "R88.4-5")
def test_every_card_in_play_is_named_by_where_it_came_from_with_its_stake(two_days: TwoDays) -> None:
    game_1 = games_of(two_days.day_1)[0]
    cards = {card["id"]: card for card in game_1["cards"]}
    of_game = [r for r in two_days.records if r.payload.get("game_id") == f"{DAY_1}-s1-g1"]
    sold = [
        n for r in of_game if r.type in ("paper_cards_sold", "virtual_cards_bought")
        for n in range(r.payload["first"], r.payload["last"] + 1)
    ]
    assert len(cards) == len(sold) == 13
    assert [c for c in cards if c.startswith("V1-")] == ["V1-1", "V1-2", "V1-3", "V1-4", "V1-5"]
    assert [cards[f"V1-{n}"]["stake_pct"] for n in range(1, 6)] == [50, 50, 50, 100, 100]
    paper = [c for c in cards if not c.startswith("V1-")]
    assert paper == [f"1001-{n}" for n in range(1, 9)] and {cards[c]["stake_pct"] for c in paper} == {100}
    assert Card.from_rows(cards["1001-2"]["rows"]).cells == tuple(int(n) for n in SET_CELLS[1])
    assert Card.from_rows(cards["V1-4"]["rows"]).cells == tuple(int(n) for n in LIBRARY_CELLS[3])
    drawn = [r.payload["ball"] for r in two_days.records
             if r.type == "ball_drawn" and r.payload["game_id"] == f"{DAY_1}-s1-g1"]
    assert game_1["draw"] == drawn and game_1["price_cents"] == 150 and game_1["superbingo_limit"] == 42


@pytest.mark.req("R89.5", "R91.9", "R90")
def test_operator_money_counts_for_the_game_it_reached_and_the_pots_open_where_the_last_day_left_them(
    two_days: TwoDays,
) -> None:
    game_1, game_3 = games_of(two_days.day_1)
    assert game_1["operator"] == {"superbingo": 0, "grand_superbingo": 0, "jackpot": 40_000}
    # Paid in during the refunded game 2: it stayed in the pot, for game 3.
    assert game_3["operator"] == {"superbingo": 500, "grand_superbingo": 0, "jackpot": 0}
    assert two_days.day_1.scenario["opening"] == dict.fromkeys(two_days.day_1.scenario["opening"], 0)
    # After day 1's last game the operator paid 1,000 into the grand superbingo: day 2 opens with it.
    after_day_1 = two_days.day_1.result["games"][-1]["pots"]
    assert two_days.day_2.scenario["opening"] == {**after_day_1, "grand_superbingo": 1_000}
    (megabingo_game,) = games_of(two_days.day_2)
    announced = first(two_days.records, "megabingo_announced")
    assert megabingo_game["megabingo_cents"] == announced.payload["amount_cents"]
    assert megabingo_game["megabingo_announced"] == announced.payload["announced_on"] == "2026-05-28"


# --- The result: what the hall recorded ---------------------------------------------------


@pytest.mark.req("R92.3", "R96.4", "R88.4-5", "R89", "R90", "R91", "R98")
def test_the_replay_of_the_scenario_finds_what_the_hall_recorded(two_days: TwoDays) -> None:
    for made in (two_days.day_1, two_days.day_2):
        assert replay(parse_scenario(made.scenario)) == made.result
    day_1 = two_days.day_1.result["games"]
    assert list(day_1[0]["prizes"]) == ["line", "bingo"]  # the superbingo was not won within 42 balls
    assert list(day_1[1]["prizes"]) == ["line", "bingo", "jackpot", "superbingo_last_game"]
    assert list(two_days.day_2.result["games"][0]["prizes"]) == ["line", "bingo", "megabingo"]


@pytest.mark.req("R92.3", "R96.4")
def test_the_result_is_taken_from_the_journal_not_computed(two_days: TwoDays) -> None:
    """A payment posting altered in the records shows in the result, and the replay disagrees."""
    game = f"{DAY_1}-s1-g3"
    paid = first(two_days.records, "prize_paid", game_id=game, prize="jackpot")
    card = paid.payload["payments"][0][0]
    posting = next(r for r in two_days.records if r.type == "posting" and r.payload["reason"] == "prize:jackpot"
                   and r.payload["reference"] == {"game_id": game, "card": card, "event_seq": paid.seq})
    (debit,), (credit,) = posting.payload["debits"], posting.payload["credits"]
    short = {**posting.payload, "debits": [[debit[0], debit[1] - 1]], "credits": [[credit[0], credit[1] - 1]]}
    altered = [dataclasses.replace(r, payload=short) if r is posting else r for r in two_days.records]
    made = build_day(altered, DAY_1, POT_RULES, Layouts())
    jackpot = made.result["games"][1]["prizes"]["jackpot"]
    recorded = two_days.day_1.result["games"][1]["prizes"]["jackpot"]
    assert [p["cents"] for p in jackpot["paid"]] == [p["cents"] - (p["card"] == recorded["paid"][0]["card"])
                                                     for p in recorded["paid"]]
    assert made.result["totals"]["paid_cents"] == two_days.day_1.result["totals"]["paid_cents"] - 1
    assert replay(parse_scenario(made.scenario)) != made.result


# --- Days the export refuses ------------------------------------------------------------


def refused(records: list[Record], day: str, match: str, rules: PrizeRules = POT_RULES) -> str:
    with pytest.raises(AuditError, match=match) as caught:
        build_day(records, day, rules, Layouts())
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_unknown_day_and_a_day_with_no_game_played_to_its_end_are_refused(two_days: TwoDays) -> None:
    refused(two_days.records, "2026-11-30", "no session of this hall is dated 2026-11-30")
    cut = [r for r in two_days.records if r.seq < two_days.day_2.records[0].seq + 20]
    refused(cut, DAY_2, f"the session of {DAY_2} has no game played to its end")


@pytest.mark.req("R89", "R89.5", "R92.3")
def test_days_the_regulator_cannot_replay_two_sessions_on_one_date_export_in_version_3(hall: AuditHall) -> None:
    """The README's path (a session played, then the demo the same day) makes two sessions of one date."""
    hall.open_day(DAY_1)
    play_game(hall, GamePlan(paper=4, purchases=[Purchase(0, 0, 2, 50)], superbingo_limit=42, seed=1, last=True))
    hall.close_day()
    hall.open_day(DAY_1)
    # Operator money in the second session counts towards the date's R89.5 limit, as the hall counts it.
    result(hall.games.contribute_to_pot(ADMIN, "superbingo", 2_000))
    play_game(hall, GamePlan(paper=3, seed=2))
    play_game(hall, GamePlan(paper=3, seed=3, last=True))
    hall.close_day()
    made = build_day(hall.records(), DAY_1, POT_RULES, Layouts())
    scenario = made.scenario
    assert scenario["format"] == "bingo-replay/3" and made.result["format"] == "bingo-replay-result/3"
    assert [(s["date"], s["session"], [g["game"] for g in s["games"]]) for s in scenario["sessions"]] == [
        (DAY_1, 1, [1]), (DAY_1, 2, [1, 2])]
    assert made.games == (f"{DAY_1}-s1-g1", f"{DAY_1}-s2-g1", f"{DAY_1}-s2-g2")
    assert [(g["session"], g["game"]) for g in made.result["games"]] == [(1, 1), (2, 1), (2, 2)]
    # Each session's last game takes its own superbingo fund (R89).
    assert [g["last_game"] for s in scenario["sessions"] for g in s["games"]] == [True, False, True]
    assert scenario["sessions"][1]["games"][0]["operator"]["superbingo"] == 2_000
    assert replay(parse_scenario(scenario)) == made.result
    # The segment runs from the first session's verification to the second's close, unbroken.
    seqs = [r.seq for r in made.records]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    assert made.records[0].type == "system_verified" and made.records[-1].type == "session_closed"
    assert sum(r.type == "session_closed" for r in made.records) == 2 and made.session_closed
    # Asked for in version 2 (an export of that version rebuilt), the date is refused as before.
    with pytest.raises(AuditError, match=rf"^{DAY_1} holds sessions 1 and 2; the replay format \(bingo-replay/2\) "
                                         "plays one session a date"):
        DayFold(DAY_1).feed_all(hall.records()).export(POT_RULES, Layouts(), format="bingo-replay/2")


@pytest.mark.req("R88.3")
def test_days_the_regulator_cannot_replay_a_prize_raised_to_its_fixed_sum_is_expressed(folder: Path) -> None:
    """The house tops the line up to its fixed sum: the scenario's rules say the sum (bingo-replay/3), the replay
    pays it, and the top-up posted is held to what the rules give."""
    rules = PrizeRules(line_bp=1500, bingo_bp=5500, line_minimum_cents=5_000)
    hall = new_hall(folder, rules)
    hall.open_day(DAY_1)
    play_game(hall, GamePlan(paper=4, seed=2, last=True))
    hall.close_day()
    made = build_day(hall.records(), DAY_1, rules, Layouts())
    assert made.scenario["format"] == "bingo-replay/3"
    assert made.scenario["rules"]["line_minimum_cents"] == 5_000 and "bingo_minimum_cents" not in made.scenario["rules"]
    top_up = first(hall.records(), "posting", reason="prizes:fixed sum top-up")
    assert top_up.payload["debits"][0][0] == "house"
    line = made.result["games"][0]["prizes"]["line"]
    assert line["amount_cents"] == 5_000 > made.result["games"][0]["sales_cents"] * 1500 // 10000
    assert replay(parse_scenario(made.scenario)) == made.result
    # The top-up posted is held to the rules: other fixed sums are another day's rules.
    refused(hall.records(), DAY_1, rf"^game {DAY_1}-s1-g1: its sale closed with a line prize of 5000 where the "
                                   r"configuration's \[prizes\] give 6000",
            dataclasses.replace(rules, line_minimum_cents=6_000))


def test_prize_rules_other_than_the_games_were_played_under_are_refused(two_days: TwoDays) -> None:
    other = dataclasses.replace(POT_RULES, line_bp=1400, bingo_bp=4200)
    refused(two_days.records, DAY_1, rf"^game {DAY_1}-s1-g1: its sale closed with a line prize of \d+ where the "
                                     r"configuration's \[prizes\] give \d+", other)
    refused(two_days.records, DAY_1, "pot contributions", dataclasses.replace(POT_RULES, superbingo_bp=200))


def test_a_pattern_other_than_the_line_and_the_bingo_is_refused(two_days: TwoDays) -> None:
    won = first(two_days.records, "prize_won", game_id=f"{DAY_1}-s1-g3", pattern="bingo")
    altered = [dataclasses.replace(r, payload={**r.payload, "pattern": "four_corners"}) if r is won else r
               for r in two_days.records]
    refused(altered, DAY_1, rf"^game {DAY_1}-s1-g3: it awards the pattern four_corners; the replay format "
                            r"\(bingo-replay/2\) cannot express it$")


@pytest.mark.req("R96.3")
def test_days_the_regulator_cannot_replay_cards_refunded_after_the_close_are_expressed(hall: AuditHall) -> None:
    """Before the close a failed terminal's cards simply leave the game; after it they leave the draw and
    stay in the sales, the prizes standing on the whole collection, and the house's refund is their own
    movement (``refunded_after_close``)."""
    hall.open_day(DAY_1)
    play_game(hall, GamePlan(paper=3, purchases=[Purchase(0, 0, 2, 100)], fail_terminal=True, seed=4))
    made = build_day(hall.records(), DAY_1, POT_RULES, Layouts())
    # Before the close the failed terminal's cards left the game: the replay plays without them.
    assert [card["id"] for card in games_of(made)[0]["cards"]] == ["1001-1", "1001-2", "1001-3"]
    assert "refunded_after_close" not in games_of(made)[0]
    assert replay(parse_scenario(made.scenario)) == made.result
    play_game(hall, GamePlan(paper=3, purchases=[Purchase(1, 0, 2, 50), Purchase(0, 1, 1, 100)],
                             fail_terminal_after_close=True, seed=4, last=True))
    hall.close_day()
    made = build_day(hall.records(), DAY_1, POT_RULES, Layouts())
    game = games_of(made)[1]
    failed = first(hall.records(), "terminal_failed", game_id=f"{DAY_1}-s1-g2")
    assert failed.seq > first(hall.records(), "sale_closed", game_id=f"{DAY_1}-s1-g2").seq
    assert game["refunded_after_close"] == [{"id": f"V1-{label.split('-')[1]}", "stake_pct": 50}
                                            for label in failed.payload["refunded"]]
    assert len(game["refunded_after_close"]) == 2
    assert not {c["id"] for c in game["refunded_after_close"]} & {c["id"] for c in game["cards"]}
    recorded = made.result["games"][1]
    closed = first(hall.records(), "sale_closed", game_id=f"{DAY_1}-s1-g2")
    # The sales are the whole collection of the close; the refund is the house's, card by card.
    price = game["price_cents"]
    assert recorded["sales_cents"] == closed.payload["collection_cents"] == 3 * price + 2 * (price // 2) + price
    refunds = [r for r in hall.records() if r.type == "posting" and r.payload["reason"] == "refund:terminal"
               and r.payload["reference"]["game_id"] == f"{DAY_1}-s1-g2"]
    assert [leg[0] for r in refunds for leg in r.payload["debits"]] == ["house", "house"]
    assert recorded["refunded_after_close_cents"] == sum(c for r in refunds for _, c in r.payload["credits"]) \
        == 2 * (price * 50 // 100)
    assert replay(parse_scenario(made.scenario)) == made.result
    assert made.scenario["format"] == "bingo-replay/3" and recorded["tax_cents"] == (closed.payload["collection_cents"] - 2 * (price * 50 // 100)) // 10

@pytest.mark.req("R91.9")
def test_days_the_regulator_cannot_replay_a_pot_moved_between_two_sessions_of_one_date_is_refused(
    hall: AuditHall,
) -> None:
    """The replay carries the pots from one session to the next: money taken out of the jackpot between two
    sessions of one date (the operator taking back its contributions, R91.9) is refused, naming the record."""
    for seed in (1, 2):
        hall.open_day(DAY_1)
        play_game(hall, GamePlan(paper=3, seed=seed, last=True))
        hall.close_day()
    records = hall.records()
    closed = next(r for r in records if r.type == "session_closed")
    taken = dataclasses.replace(closed, type="posting", payload={
        "debits": [["pot:jackpot_accumulated", 1_000]], "credits": [["house", 1_000]],
        "reason": "operator:jackpot taken back", "reference": {"game_id": None, "card": None, "event_seq": closed.seq}})
    at = records.index(closed) + 1
    refused([*records[:at], taken, *records[at:]], DAY_1,
            rf"^record {closed.seq} \(operator:jackpot taken back\) moves the carries or pots between two sessions "
            rf"of {DAY_1}; the replay format \(bingo-replay/3\) cannot express it$")

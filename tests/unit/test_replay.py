"""The audit replay (FORMATS.md section 2): hand-computed scenarios, run in-process.

Most scenarios are ``bingo-replay/1`` files, whose pots are paid as the first ruling
read R89 and R90 (the days they record were paid so); the section "bingo-replay/2"
proves the pots as the rulings read now, which the hall's export writes.

The cards below are chosen so the winners are easy to follow by hand:

* ``A``: the card of the format's example.
* ``B``: ``A`` with 4 in place of 3, so ``A`` and ``B`` complete their middle row and
  their whole card on the same balls when 3 and 4 are both drawn.
* ``C``: no number in common with ``A`` or ``B``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from protocol.replay import ReplayError, replay_json

A = [[3, 15, 32, 61, 80], [7, 28, 44, 76, 85], [9, 29, 57, 68, 90]]
B = [[4, 15, 32, 61, 80], [7, 28, 44, 76, 85], [9, 29, 57, 68, 90]]
C = [[1, 10, 20, 30, 40], [5, 51, 62, 71, 81], [8, 23, 55, 66, 88]]
ON_CARDS = {n for card in (A, B, C) for row in card for n in row}
FILLER = [n for n in range(1, 91) if n not in ON_CARDS]  # 44 numbers on none of them

# A and B: the middle row on ball 5 (line), the whole card on ball 16 (bingo).
DRAW_AB = [7, 28, 44, 76, 85, 3, 4, 15, 32, 61, 80, 9, 29, 57, 68, 90]
# C alone: its top row on ball 5, the whole card on ball 15.
DRAW_C = [1, 10, 20, 30, 40, 5, 51, 62, 71, 81, 8, 23, 55, 66, 88]


def late(draw: list[int], balls_before: int) -> list[int]:
    """``draw`` after ``balls_before`` balls that are on no card: the bingo comes later."""
    return FILLER[:balls_before] + draw


def card(card_id: str, rows: list[list[int]], stake_pct: int = 100) -> dict[str, Any]:
    return {"id": card_id, "stake_pct": stake_pct, "rows": rows}


def game(number: int, cards: list[dict], draw: list[int], price: int = 100, **extra: Any) -> dict:
    return {"game": number, "price_cents": price, "cards": cards, "draw": draw, **extra}


def scenario(sessions: list[tuple[str, list[dict]]], rules: dict | None = None, **opening: int) -> dict:
    return {
        "format": "bingo-replay/1",
        "rules": rules or {"line_bp": 2000, "bingo_bp": 5000},
        "opening": opening,
        "sessions": [{"date": date, "games": games} for date, games in sessions],
    }


def run(data: dict) -> dict:
    return json.loads(replay_json(json.dumps(data)))


def test_helpers_do_not_share_lists() -> None:
    """Scenarios are built from module constants; a test mutating one must not leak."""
    assert len(DRAW_AB) == 16 and DRAW_AB[3] == 76


def fault(data: dict | str) -> str:
    with pytest.raises(ReplayError) as caught:
        replay_json(data if isinstance(data, str) else json.dumps(data))
    message = str(caught.value)
    assert "\n" not in message
    return message


def prize(ball: int, amount: int, paid: dict[str, int]) -> dict:
    return {
        "ball": ball,
        "amount_cents": amount,
        "carry_cents": amount - sum(paid.values()),
        "paid": [{"card": k, "cents": v} for k, v in paid.items()],
    }


def pots(**levels: int) -> dict[str, int]:
    names = ("carry_line", "carry_bingo", "superbingo", "grand_superbingo", "megabingo",
             "jackpot_accumulated", "jackpot_reserve")
    return {name: levels.get(name, 0) for name in names}


# --- Line and bingo, shared, staked below 100%, carried ---------------------------


@pytest.mark.req("R87.a", "R87.b", "R88.2", "R88.4-5", "R98")
def test_shared_prizes_with_a_half_stake_carry_into_the_next_game() -> None:
    """Game 1: A (100%) and B (50%) share line 50 and bingo 125; 13 and 32 carry.

    Game 2: C wins alone; line 80 + 13 = 93, bingo 200 + 32 = 232, nothing carries.
    """
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A), card("B", B, 50), card("C", C)], DRAW_AB),
        game(2, [card("A", A), card("C", C)], DRAW_C, price=200),
    ])]))
    first, second = result["games"]
    assert first == {
        "date": "2026-12-01", "game": 1, "sales_cents": 250, "tax_cents": 25, "balls_drawn": 16,
        "prizes": {"line": prize(5, 50, {"A": 25, "B": 12}),
                   "bingo": prize(16, 125, {"A": 62, "B": 31})},
        "pots": pots(carry_line=13, carry_bingo=32),
    }
    assert second["prizes"] == {"line": prize(5, 93, {"C": 93}), "bingo": prize(15, 232, {"C": 232})}
    assert second["pots"] == pots()
    assert (second["sales_cents"], second["tax_cents"], second["balls_drawn"]) == (400, 40, 15)
    assert result["totals"] == {"sales_cents": 650, "paid_cents": 455, "tax_cents": 65}
    assert result["format"] == "bingo-replay-result/1"


@pytest.mark.req("R93.13", "R88.2")
def test_R93_13_version_2_by_stake_shares_each_whole_prize_by_stake_and_carries_nothing() -> None:
    """The network game's sharing (``rules.sharing: by_stake``): A (100 cents) and B (50 cents) share
    line 50 and bingo 125 two to one, the cents by the largest remainder; nothing carries, so game 2
    plays its own shares only."""
    data = scenario([("2026-12-01", [
        game(1, [card("A", A), card("B", B, 50), card("C", C)], DRAW_AB),
        game(2, [card("A", A), card("C", C)], DRAW_C, price=200),
    ])], rules={"line_bp": 2000, "bingo_bp": 5000, "sharing": "by_stake"}, carry_line=1)
    data["format"] = "bingo-replay/2"
    result = run(data)
    first, second = result["games"]
    # Line 50 + 1 carried in = 51: 34 and 17 exactly.  Bingo 125: 83.33 and 41.67, the cent to B.
    assert first["prizes"] == {"line": prize(5, 51, {"A": 34, "B": 17}), "bingo": prize(16, 125, {"A": 83, "B": 42})}
    assert first["pots"] == pots()
    assert second["prizes"] == {"line": prize(5, 80, {"C": 80}), "bingo": prize(15, 200, {"C": 200})}
    assert result["format"] == "bingo-replay-result/2"
    assert result["totals"] == {"sales_cents": 650, "paid_cents": 456, "tax_cents": 65}
    # Version 2 without the key shares the hall's way, as version 1 does.
    del data["rules"]["sharing"]
    as_hall = run(data)
    assert as_hall["games"][0]["prizes"]["line"] == prize(5, 51, {"A": 25, "B": 12})
    assert as_hall["format"] == "bingo-replay-result/2"


@pytest.mark.req("R93.13")
def test_version_2_refuses_a_sharing_it_does_not_know_and_pots_with_the_network_sharing() -> None:
    data = scenario([("2026-12-01", [game(1, [card("A", A)], DRAW_AB)])],
                    rules={"line_bp": 2000, "bingo_bp": 5000, "sharing": "evenly"})
    data["format"] = "bingo-replay/2"
    assert fault(data) == 'rules.sharing: is "hall" or "by_stake", not the string "evenly"'
    data["rules"] = {"line_bp": 2000, "bingo_bp": 5000, "jackpot": True, "sharing": "by_stake"}
    assert fault(data).startswith("rules.sharing: the network game's sharing (by_stake) plays no pot")
    data["rules"] = {"line_bp": 2000, "bingo_bp": 5000, "sharing": "by_stake"}
    data["sessions"][0]["games"][0]["cards"][0]["stake_pct"] = 1  # 1 cent of a 100-cent card: still a stake
    data["sessions"][0]["games"][0]["price_cents"] = 50  # half a cent: no stake
    assert fault(data).startswith("session 2026-12-01, game 1, field cards: a winning card's stake is a whole number")


@pytest.mark.req("R88.4-5")
def test_carries_cross_sessions() -> None:
    """The remainder of the last game of a day goes to the first game of the next day."""
    result = run(scenario([
        ("2026-12-01", [game(1, [card("A", A, 1)], DRAW_AB)]),
        ("2026-12-02", [game(1, [card("A", A)], DRAW_AB)]),
    ], carry_line=7))
    first, second = result["games"]
    # Day 1: stake 1 cent; line 0 + 7 carried in, A paid 7 // 100 = 0; bingo 0.
    assert first["prizes"]["line"] == prize(5, 7, {"A": 0})
    assert first["pots"]["carry_line"] == 7
    assert second["prizes"]["line"] == prize(5, 27, {"A": 27})


@pytest.mark.req("R88.2")
def test_paid_lists_cards_in_code_point_order() -> None:
    """Ids sort by code point: "B" < "a" < "é", whatever the order of the cards."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("é", A), card("a", B), card("C", C)], DRAW_AB),
    ])]))
    assert [p["card"] for p in result["games"][0]["prizes"]["bingo"]["paid"]] == ["a", "é"]
    swapped = run(scenario([("2026-12-01", [game(1, [card("a", A), card("B", B)], DRAW_AB)])]))
    assert [p["card"] for p in swapped["games"][0]["prizes"]["line"]["paid"]] == ["B", "a"]


def test_balls_after_the_bingo_are_checked_but_not_drawn() -> None:
    result = run(scenario([("2026-12-01", [game(1, [card("A", A)], DRAW_AB + [1, 2])])]))
    assert result["games"][0]["balls_drawn"] == 16
    assert "draw[17]" in fault(scenario([("2026-12-01", [game(1, [card("A", A)], DRAW_AB + [1, 1])])]))


# --- Superbingo and grand superbingo ------------------------------------------------

SUPER_RULES = {"line_bp": 2000, "bingo_bp": 5000, "superbingo_bp": 300}


@pytest.mark.req("R89")
def test_superbingo_won_within_the_limit_pays_the_whole_fund() -> None:
    """Fund 1000 + 3% of 100 = 1003, bingo on ball 16 <= 42: A takes all of it."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, superbingo_limit=42),
        game(2, [card("A", A)], DRAW_AB),
    ])], rules=SUPER_RULES, superbingo=1000))
    first, second = result["games"]
    assert first["prizes"]["superbingo"] == prize(16, 1003, {"A": 1003})
    assert first["pots"]["superbingo"] == 0
    assert "superbingo_last_game" not in second["prizes"]
    assert second["pots"]["superbingo"] == 3


@pytest.mark.req("R89")
def test_v1_unwon_superbingo_goes_to_the_bingo_winners_of_the_sessions_last_game() -> None:
    """Game 1's bingo falls on ball 46 > 42: not won; game 2 (the last) takes 1007."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], late(DRAW_AB, 30), superbingo_limit=42),
        game(2, [card("A", A), card("C", C, 50)], DRAW_C),
    ])], rules=SUPER_RULES, superbingo=1000))
    first, second = result["games"]
    assert first["balls_drawn"] == 46
    assert "superbingo" not in first["prizes"]
    assert first["pots"]["superbingo"] == 1003
    # Sales 150 add 4; C staked 50% alone: paid 1007 * 50 // 100 = 503; 504 stay.
    assert second["prizes"]["superbingo_last_game"] == prize(15, 1007, {"C": 503})
    assert second["pots"]["superbingo"] == 504
    assert list(second["prizes"]) == ["line", "bingo", "superbingo_last_game"]


@pytest.mark.req("R89")
def test_v1_only_the_last_superbingo_game_of_the_session_counts() -> None:
    """An early unwon superbingo game is followed by a won one: no last-game prize (the first ruling)."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], late(DRAW_AB, 30), superbingo_limit=42),
        game(2, [card("A", A)], DRAW_AB, superbingo_limit=42),
        game(3, [card("A", A)], DRAW_AB),
    ])], rules=SUPER_RULES))
    assert result["games"][1]["prizes"]["superbingo"]["amount_cents"] == 6
    assert "superbingo_last_game" not in result["games"][2]["prizes"]


@pytest.mark.req("R89")
def test_unwon_superbingo_in_the_last_game_itself_goes_to_its_bingo_winners() -> None:
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], late(DRAW_AB, 30), superbingo_limit=45),
    ])], rules=SUPER_RULES, superbingo=500))
    prizes = result["games"][0]["prizes"]
    assert "superbingo" not in prizes
    assert prizes["superbingo_last_game"] == prize(46, 503, {"A": 503})


@pytest.mark.req("R89")
def test_v1_no_superbingo_game_in_a_session_meant_no_last_game_prize() -> None:
    result = run(scenario([("2026-12-01", [game(1, [card("A", A)], DRAW_AB)])],
                          rules=SUPER_RULES, superbingo=500))
    assert list(result["games"][0]["prizes"]) == ["line", "bingo"]
    assert result["games"][0]["pots"]["superbingo"] == 503


@pytest.mark.req("R89", "R89.5")
def test_grand_superbingo_is_funded_by_the_operator_and_stays_when_unwon() -> None:
    """Unwon on day 1 (ball 46 > 45) it stays; won on day 2 it pays 1000 + 500."""
    result = run(scenario([
        ("2026-12-01", [game(1, [card("A", A)], late(DRAW_AB, 30), grand_superbingo_limit=45,
                             operator={"grand_superbingo": 1000})]),
        ("2026-12-02", [game(1, [card("A", A), card("B", B)], DRAW_AB, grand_superbingo_limit=45,
                             operator={"grand_superbingo": 500})]),
    ]))
    first, second = result["games"]
    assert "grand_superbingo" not in first["prizes"]
    assert "superbingo_last_game" not in first["prizes"]
    assert first["pots"]["grand_superbingo"] == 1000
    assert second["prizes"]["grand_superbingo"] == prize(16, 1500, {"A": 750, "B": 750})
    assert second["pots"]["grand_superbingo"] == 0


# --- Megabingo ----------------------------------------------------------------------

MEGA_RULES = {"line_bp": 2000, "bingo_bp": 4900, "megabingo": True}


@pytest.mark.req("R90")
def test_v1_megabingo_paid_the_announced_amount_and_the_rest_of_the_fund_stayed() -> None:
    """Fund 10000 + 1% of 200 = 10002; 5001 announced, shared by A and B at 100% and 50%."""
    result = run(scenario([("2026-12-11", [
        game(1, [card("A", A), card("B", B, 50), card("C", C, 50)], DRAW_AB, price=100,
             megabingo_cents=5001, megabingo_announced="2026-12-01"),
    ])], rules=MEGA_RULES, megabingo=10_000))
    only = result["games"][0]
    # A: 5001 * 100 // 200 = 2500; B: 5001 * 50 // 200 = 1250.
    assert only["prizes"]["megabingo"] == prize(16, 5001, {"A": 2500, "B": 1250})
    assert only["pots"]["megabingo"] == 10_002 - 3750


@pytest.mark.req("R90")
def test_megabingo_of_zero_is_still_reported() -> None:
    result = run(scenario([("2026-12-11", [
        game(1, [card("A", A)], DRAW_AB, megabingo_cents=0, megabingo_announced="2026-11-01"),
    ])], rules=MEGA_RULES))
    assert result["games"][0]["prizes"]["megabingo"] == prize(16, 0, {"A": 0})
    assert result["games"][0]["pots"]["megabingo"] == 1


# --- Jackpot ------------------------------------------------------------------------

JACKPOT_RULES = {"line_bp": 2000, "bingo_bp": 4000, "jackpot": True}


@pytest.mark.req("R91")
def test_jackpot_won_pays_the_accumulated_part_then_the_reserve_refills_it() -> None:
    """Sales 1000: J = 100, 70 to 100000 accumulated, 30 to 50000 reserve.

    Won on ball 16 <= 40: A takes 100070; then 50030 * 70 // 100 = 35021 moves up.
    """
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, price=1000, jackpot_threshold=40),
    ])], rules=JACKPOT_RULES, jackpot_accumulated=100_000, jackpot_reserve=50_000))
    only = result["games"][0]
    assert only["prizes"]["jackpot"] == prize(16, 100_070, {"A": 100_070})
    assert only["pots"] == pots(jackpot_accumulated=35_021, jackpot_reserve=15_009)
    assert result["totals"]["paid_cents"] == 200 + 400 + 100_070


@pytest.mark.req("R91")
def test_jackpot_not_won_past_the_threshold_keeps_growing_without_a_transfer() -> None:
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], late(DRAW_AB, 30), price=1000, jackpot_threshold=42),
    ])], rules=JACKPOT_RULES, jackpot_accumulated=100_000, jackpot_reserve=50_000))
    only = result["games"][0]
    assert "jackpot" not in only["prizes"]
    assert only["pots"] == pots(jackpot_accumulated=100_070, jackpot_reserve=50_030)


@pytest.mark.req("R91")
def test_jackpot_unpaid_share_stays_and_the_transfer_respects_the_cap() -> None:
    """B staked 50% alone: half the 1,499,970 stays; the reserve only tops it up to the cap."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("B", B, 50)], DRAW_AB, price=100, jackpot_threshold=41),
    ])], rules=JACKPOT_RULES, jackpot_accumulated=1_499_970, jackpot_reserve=2_000_000))
    only = result["games"][0]
    # Sales 50: J = 5, a = 3 -> accumulated 1,499,973, reserve 2,000,002.
    assert only["prizes"]["jackpot"] == prize(16, 1_499_973, {"B": 749_986})
    assert only["pots"]["jackpot_accumulated"] == 1_500_000
    assert only["pots"]["jackpot_reserve"] == 2_000_002 - (1_500_000 - 749_987)


@pytest.mark.req("R91")
def test_jackpot_share_over_the_cap_goes_to_the_reserve() -> None:
    result = run(scenario([("2026-12-01", [game(1, [card("A", A)], DRAW_AB, price=10_000)])],
                          rules=JACKPOT_RULES, jackpot_accumulated=1_499_900))
    assert result["games"][0]["pots"] == pots(jackpot_accumulated=1_500_000, jackpot_reserve=900)


@pytest.mark.req("R91")
def test_reserve_boost_adds_to_the_prizes_within_30_percent_of_the_session_start() -> None:
    """Reserve 10000 at the session's start: 3000 may be added; 1000 + 1000 then 1000."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, reserve_boost={"line": 1000, "bingo": 1000}),
        game(2, [card("A", A)], DRAW_AB, reserve_boost={"line": 1000}),
    ])], rules=JACKPOT_RULES, jackpot_reserve=10_000))
    first, second = result["games"]
    # Sales 100: J = 10 -> 7 accumulated, 3 reserve; line 20 + 1000, bingo 40 + 1000.
    assert first["prizes"]["line"]["amount_cents"] == 1020
    assert first["prizes"]["bingo"]["amount_cents"] == 1040
    assert first["pots"]["jackpot_reserve"] == 10_003 - 2000
    assert second["pots"]["jackpot_reserve"] == 8006 - 1000
    message = fault(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, reserve_boost={"line": 1000, "bingo": 1000}),
        game(2, [card("A", A)], DRAW_AB, reserve_boost={"line": 1000, "bingo": 1}),
    ])], rules=JACKPOT_RULES, jackpot_reserve=10_000))
    assert message.startswith("session 2026-12-01, game 2, field reserve_boost.bingo:")
    assert "3001" in message and "R91.7" in message


@pytest.mark.req("R91")
def test_a_new_session_recomputes_the_boost_allowance() -> None:
    result = run(scenario([
        ("2026-12-01", [game(1, [card("A", A)], DRAW_AB, reserve_boost={"line": 3000})]),
        ("2026-12-02", [game(1, [card("A", A)], DRAW_AB, reserve_boost={"bingo": 2100})]),
    ], rules=JACKPOT_RULES, jackpot_reserve=10_000))
    # Day 2 starts with 10000 + 3 - 3000 = 7003: 30% is 2100.
    assert result["games"][1]["prizes"]["bingo"]["amount_cents"] == 40 + 2100


@pytest.mark.req("R91")
def test_a_boost_never_exceeds_what_the_reserve_holds() -> None:
    """Two jackpot wins drain the reserve to 900: a boost of 1000 is refused."""
    message = fault(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, price=1, jackpot_threshold=40),
        game(2, [card("A", A)], DRAW_AB, price=1, jackpot_threshold=40),
        game(3, [card("A", A)], DRAW_AB, price=1, reserve_boost={"line": 1000}),
    ])], rules=JACKPOT_RULES, jackpot_reserve=10_000))
    assert message == (
        "session 2026-12-01, game 3, field reserve_boost.line: "
        "a boost of 1000 cents exceeds the reserve's 900 cents"
    )


# --- Operator contributions -----------------------------------------------------------


@pytest.mark.req("R89.5", "R91")
def test_operator_contributions_feed_the_funds() -> None:
    """The jackpot contribution fills the accumulated part to the cap; the rest is reserve."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB,
             operator={"superbingo": 200_000, "grand_superbingo": 100_000, "jackpot": 200_000}),
    ])], rules={**SUPER_RULES, "jackpot": True}, jackpot_accumulated=1_400_000))
    assert result["games"][0]["pots"] == pots(
        superbingo=200_003, grand_superbingo=100_000,
        jackpot_accumulated=1_500_000, jackpot_reserve=100_010,
    )


@pytest.mark.req("R89.5")
def test_operator_superbingo_contributions_are_limited_per_day() -> None:
    over = scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, operator={"superbingo": 200_000}),
        game(2, [card("A", A)], DRAW_AB, operator={"grand_superbingo": 100_000}),
        game(3, [card("A", A)], DRAW_AB, operator={"superbingo": 1}),
    ])], rules=SUPER_RULES)
    assert fault(over).startswith("session 2026-12-01, game 3, field operator.superbingo: ")
    next_day = copy.deepcopy(over)
    third = next_day["sessions"][0]["games"].pop()
    next_day["sessions"].append({"date": "2026-12-02", "games": [third]})
    # 200000 + 1 from the operator, 3 from the sales of each game.
    assert run(next_day)["games"][2]["pots"]["superbingo"] == 200_010


@pytest.mark.req("R89")
def test_grand_superbingo_fund_is_capped_at_400000() -> None:
    message = fault(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, operator={"grand_superbingo": 50_001}),
    ])], grand_superbingo=350_000))
    assert message.startswith("session 2026-12-01, game 1, field operator.grand_superbingo: ")
    assert "400001" in message


@pytest.mark.req("R91")
def test_operator_jackpot_contributions_are_limited_per_calendar_month() -> None:
    def month(second_date: str) -> dict:
        return scenario([
            ("2026-12-01", [game(1, [card("A", A)], DRAW_AB, operator={"jackpot": 1_000_000})]),
            (second_date, [game(1, [card("A", A)], DRAW_AB, operator={"jackpot": 500_001})]),
        ], rules=JACKPOT_RULES)

    assert fault(month("2026-12-31")).startswith(
        "session 2026-12-31, game 1, field operator.jackpot: ")
    # January: 499,993 of the 500,001 fit under the cap (1,000,007 accumulated), 8 go to
    # the reserve, and the whole 10 of the sales too: 3 + 8 + 10.
    assert run(month("2027-01-01"))["games"][1]["pots"] == pots(
        jackpot_accumulated=1_500_000, jackpot_reserve=21)


# --- Invalid inputs -----------------------------------------------------------------


def valid() -> dict:
    return copy.deepcopy(scenario([("2026-12-11", [
        game(1, [card("A", A), card("C", C)], DRAW_AB, superbingo_limit=50,
             jackpot_threshold=40, megabingo_cents=0, megabingo_announced="2026-12-01",
             operator={"superbingo": 0, "grand_superbingo": 0, "jackpot": 0},
             reserve_boost={"line": 0, "bingo": 0}),
        game(2, [card("A", A)], DRAW_AB),
    ])], rules={"line_bp": 1500, "bingo_bp": 4500, "superbingo_bp": 300, "megabingo": True,
                "jackpot": True}))


def test_the_base_of_the_invalid_cases_is_valid() -> None:
    assert len(run(valid())["games"]) == 2


def _set(path: str, value: Any) -> dict:
    """A copy of :func:`valid` with ``value`` at ``path`` (dots and [i]); ``...`` deletes."""
    data = valid()
    keys: list[str | int] = []
    for part in path.replace("[", ".[").split("."):
        keys.append(int(part[1:-1]) if part.startswith("[") else part)
    target: Any = data
    for key in keys[:-1]:
        target = target[key]
    if value is ...:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return data


G = "sessions[0].games[0]."
WHERE = "session 2026-12-11, game 1, field "

INVALID = [
    # (path, value, start of the message)
    ("format", "bingo-replay/5", "format: must be \"bingo-replay/1\" or \"bingo-replay/2\" or \"bingo-replay/3\" or \"bingo-replay/4\""),
    ("rules.sharing", "by_stake", "rules.sharing: is not a key of this format (misspelt?); it is a key of bingo-replay/2"),
    ("format", ..., "format: is missing"),
    ("rules.line_bp", ..., "rules.line_bp: is missing"),
    ("rules.line_bp", 1500.0, "rules.line_bp: must be a JSON integer, got the non-integer number"),
    ("rules.line_bp", "1500", "rules.line_bp: must be a JSON integer, got the string"),
    ("rules.line_bp", True, "rules.line_bp: must be a JSON integer, got true"),
    ("rules.line_bp", -1, "rules.line_bp: must be at least 0"),
    ("rules.line_bp", 1000, "rules: "),
    ("rules.bingo_bp", 9000, "rules: "),
    ("rules.superbingo_bp", 100, "rules.superbingo_bp: must be 0 (no superbingo) or 200..500"),
    ("rules.megabingo", 1, "rules.megabingo: must be true or false"),
    ("rules.jackpot", None, "rules.jackpot: must be true or false, got null"),
    ("rules.linebp", 1, "rules.linebp: is not a key of this format"),
    ("opening", {"jackpot_accumulated": 1_500_001}, "opening.jackpot_accumulated: must be at most"),
    ("opening", {"grand_superbingo": 400_001}, "opening.grand_superbingo: must be at most"),
    ("opening", {"superbingo": -1}, "opening.superbingo: must be at least 0"),
    ("opening", {"reserve": 1}, "opening.reserve: is not a key"),
    ("opening", [], "opening: must be an object"),
    ("sessions", [], "sessions: a scenario needs at least one session"),
    ("sessions", {}, "sessions: must be an array"),
    ("sessions[0].date", "2026-12-1", "sessions[0].date: must be a YYYY-MM-DD date"),
    ("sessions[0].date", "2026-02-30", "sessions[0].date: 2026-02-30 is not a calendar date"),
    ("sessions[0].date", 20261211, "sessions[0].date: must be a YYYY-MM-DD date"),
    ("sessions[0].games", [], "session 2026-12-11, field games: a session needs at least one game"),
    (G + "game", 0, "session 2026-12-11, games[0], field game: must be at least 1"),
    (G + "game", 2, "session 2026-12-11, games[1], field game: 2 is not after the previous game 2"),
    (G + "game", 1.0, "session 2026-12-11, games[0], field game: must be a JSON integer"),
    (G + "price_cents", 0, WHERE + "price_cents: must be at least 1"),
    (G + "price_cents", ..., WHERE + "price_cents: is missing"),
    (G + "draw", ..., WHERE + "draw: is missing"),
    (G + "colour", "red", WHERE + "colour: is not a key"),
    (G + "game", ..., "session 2026-12-11, games[0], field game: is missing"),
    ("sessions[0].games[0]", [], "session 2026-12-11, games[0]: must be an object, got an array"),
    (G + "superbingo_limit", 41, WHERE + "superbingo_limit: must be at least 42"),
    (G + "superbingo_limit", 91, WHERE + "superbingo_limit: must be at most 90"),
    (G + "grand_superbingo_limit", 60, WHERE + "grand_superbingo_limit: superbingo and grand"),
    (G + "jackpot_threshold", 43, WHERE + "jackpot_threshold: must be 40, 41 or 42"),
    (G + "jackpot_threshold", "40", WHERE + "jackpot_threshold: must be a JSON integer"),
    (G + "megabingo_announced", ..., WHERE + "megabingo_announced: megabingo_cents and"),
    (G + "megabingo_announced", "2026-12-02", WHERE + "megabingo_announced: 2026-12-02 is less than 10 days"),
    (G + "megabingo_cents", -1, WHERE + "megabingo_cents: must be at least 0"),
    (G + "megabingo_cents", 3, WHERE + "megabingo_cents: the announced 3 cents exceed the megabingo fund's 2"),
    (G + "operator.superbingo", -5, WHERE + "operator.superbingo: must be at least 0"),
    (G + "operator.bonus", 5, WHERE + "operator.bonus: is not a key"),
    (G + "operator", 5, WHERE + "operator: must be an object"),
    (G + "reserve_boost.line", False, WHERE + "reserve_boost.line: must be a JSON integer, got false"),
    (G + "reserve_boost.line", 1, WHERE + "reserve_boost.line: the session's reserve boosts"),
    (G + "cards", [], WHERE + "cards: a game needs at least one card"),
    (G + "cards[1].id", "A", WHERE + "cards[1].id: \"A\" is already the id of cards[0]"),
    (G + "cards[1].id", "", WHERE + "cards[1].id: must be a non-empty string"),
    (G + "cards[1].id", 7, WHERE + "cards[1].id: must be a non-empty string"),
    (G + "cards[1].stake_pct", 0, WHERE + "cards[1].stake_pct: must be at least 1"),
    (G + "cards[1].stake_pct", 101, WHERE + "cards[1].stake_pct: must be at most 100"),
    (G + "cards[1].stake_pct", 50.0, WHERE + "cards[1].stake_pct: must be a JSON integer"),
    (G + "cards[1].stake_pct", ..., WHERE + "cards[1].stake_pct: is missing"),
    (G + "cards[1].rows", C[:2], WHERE + "cards[1].rows: not a valid card: a card has 3 rows"),
    (G + "cards[1].rows[0][0]", 11, WHERE + "cards[1].rows: not a valid card: row 1 holds 11 and 10"),
    (G + "cards[1].rows[0][0]", "1", WHERE + "cards[1].rows[0][0]: must be a JSON integer"),
    (G + "cards[1].rows[0][0]", 91, WHERE + "cards[1].rows: not a valid card: row 1 holds 91"),
    (G + "cards[1].rows", [A[2], A[1], A[0]], WHERE + "cards[1].rows: not a valid card: column 1 is not ascending"),
    (G + "cards[1].rows", [A[0], A[1], [9, 29, 57, 68, 90]], WHERE + "cards[1].rows: the same numbers as cards[0] (\"A\")"),
    (G + "draw[3]", 0, WHERE + "draw[3]: must be at least 1"),
    (G + "draw[3]", 91, WHERE + "draw[3]: must be at most 90"),
    (G + "draw[3]", 7, WHERE + "draw[3]: 7 was already drawn as draw[0]"),
    (G + "draw[3]", 76.0, WHERE + "draw[3]: must be a JSON integer"),
    (G + "draw", DRAW_AB[:-1], WHERE + "draw: no card is complete after all 15 balls"),
    (G + "draw", [], WHERE + "draw: no card is complete after all 0 balls"),
]


@pytest.mark.req("R88.1", "R94.1", "R89", "R90", "R91", "R89.5")
@pytest.mark.parametrize(("path", "value", "message"), INVALID, ids=[f"{p}={v!r}" for p, v, _ in INVALID])
def test_invalid_input_names_the_session_game_and_field(path: str, value: Any, message: str) -> None:
    data = _set(path, value)
    if "field game: 2 is not after" in message:
        data["sessions"][0]["games"].insert(0, copy.deepcopy(data["sessions"][0]["games"][1]))
        data["sessions"][0]["games"][1]["game"] = 2
    assert fault(data).startswith(message)


def test_rules_limits_outside_sessions_and_game_rules_needing_the_rules() -> None:
    data = valid()
    data["rules"]["superbingo_bp"] = 0
    assert fault(data).startswith(WHERE + "superbingo_limit: a superbingo game needs rules.superbingo_bp")
    data = valid()
    data["rules"]["jackpot"] = False
    data["rules"]["line_bp"] = 2500
    assert fault(data).startswith(WHERE + "jackpot_threshold: a jackpot game needs rules.jackpot")
    data = valid()
    data["rules"]["megabingo"] = False
    data["rules"]["line_bp"] = 1600
    assert fault(data).startswith(WHERE + "megabingo_cents: a megabingo game needs rules.megabingo")


def test_session_dates_must_strictly_ascend() -> None:
    data = valid()
    data["sessions"].append(copy.deepcopy(data["sessions"][0]))
    assert fault(data) == (
        "sessions[1].date: 2026-12-11 is not after the previous session's date 2026-12-11"
    )


def test_null_means_absent_for_optional_game_keys_only() -> None:
    data = valid()
    for key in ("superbingo_limit", "jackpot_threshold", "megabingo_cents", "megabingo_announced",
                "operator", "reserve_boost", "grand_superbingo_limit"):
        data["sessions"][0]["games"][0][key] = None
    assert list(run(data)["games"][0]["prizes"]) == ["line", "bingo"]
    data["opening"] = {"megabingo": None}
    assert fault(data).startswith("opening.megabingo: must be a JSON integer, got null")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "(file): not valid JSON"),
        ("[]", "(top level): must be an object, got an array"),
        ('{"format": "bingo-replay/1", "format": "bingo-replay/1"}', "(file): the key \"format\" appears twice"),
        ('{"format": NaN}', "(file): NaN is not a JSON number"),
        ('{"format": 1e999, "rules": {}, "sessions": []}', "format: must be \"bingo-replay/1\" or \"bingo-replay/2\" or \"bingo-replay/3\" or \"bingo-replay/4\", got the non-integer number inf"),
        ("\ufeff{}", "(file): not valid JSON"),
        ("1" * 5000, "(file): not a usable JSON document"),
        ("[" * 100_000 + "]" * 100_000, "(file): not a usable JSON document"),
    ],
)
def test_malformed_json_is_invalid_input(text: str, message: str) -> None:
    assert fault(text).startswith(message)


def test_invalid_utf8_is_invalid_input() -> None:
    with pytest.raises(ReplayError, match="not valid JSON"):
        replay_json(b'{"format": "\xff"}')


# --- Refunds after the close (a failed terminal, R96.3) ----------------------------------


@pytest.mark.req("R96.3", "R88.4-5")
def test_cards_refunded_after_the_close_count_in_the_sales_and_play_no_part_in_the_draw() -> None:
    """A and B (half stake) were refunded by the house after the close: the prizes stand on 250 cents of
    sales, C alone plays and wins them; a game with no card left carries both prizes whole."""
    result = run(scenario([("2026-12-01", [
        game(1, [card("C", C)], DRAW_C,
             refunded_after_close=[{"id": "A", "stake_pct": 100}, {"id": "B", "stake_pct": 50}]),
        game(2, [], [7, 28], refunded_after_close=[{"id": "A", "stake_pct": 100}]),
    ])]))
    first, second = result["games"]
    assert (first["sales_cents"], first["refunded_after_close_cents"]) == (250, 150)
    assert first["prizes"] == {"line": prize(5, 50, {"C": 50}), "bingo": prize(15, 125, {"C": 125})}
    assert second == {
        "date": "2026-12-01", "game": 2, "sales_cents": 100, "tax_cents": 10, "balls_drawn": 2,
        "prizes": {"line": prize(0, 20, {}), "bingo": prize(0, 50, {})}, "refunded_after_close_cents": 100,
        "pots": pots(carry_line=20, carry_bingo=50),
    }
    assert list(second) == ["date", "game", "sales_cents", "tax_cents", "balls_drawn", "prizes",
                            "refunded_after_close_cents", "pots"]


@pytest.mark.parametrize("refunded, cards, extra, said", [
    ([], [card("C", C)], {}, "refunded_after_close: lists at least one card when it is given"),
    ([{"id": "A", "stake_pct": 100}, {"id": "A", "stake_pct": 50}], [card("C", C)], {},
     'refunded_after_close[1].id: "A" is already the id of refunded_after_close[0]'),
    ([{"id": "C", "stake_pct": 100}], [card("C", C)], {}, 'cards[0].id: "C" is also a card of refunded_after_close'),
    ([{"id": "A", "stake_pct": 0}], [card("C", C)], {}, "refunded_after_close[0].stake_pct: must be at least 1"),
    ([{"id": "A", "stake_pct": 100, "rows": A}], [card("C", C)], {}, "refunded_after_close[0].rows: is not a key"),
    ([{"id": "A", "stake_pct": 100}], [], {"jackpot_threshold": 41},
     "jackpot_threshold: a game with no card left in play (every one refunded) has no pot in play"),
])
def test_a_refund_after_the_close_that_does_not_hold_is_refused_naming_the_field(
        refunded: list, cards: list, extra: dict, said: str) -> None:
    rules = {"line_bp": 2000, "bingo_bp": 5000, "jackpot": True}
    message = fault(scenario([("2026-12-01", [game(1, cards, DRAW_C, refunded_after_close=refunded, **extra)])],
                             rules=rules))
    assert message.startswith("session 2026-12-01, game 1, field ") and said in message, message


def test_a_game_with_no_card_needs_its_refunds_after_the_close() -> None:
    assert "cards: a game needs at least one card" in fault(scenario([("2026-12-01", [game(1, [], [])])]))


# --- bingo-replay/2: the pots as the rulings read now -------------------------------


def scenario_2(sessions: list[tuple[str, list[dict]]], rules: dict | None = None, **opening: int) -> dict:
    return {**scenario(sessions, rules, **opening), "format": "bingo-replay/2"}


@pytest.mark.req("R89")
def test_v2_the_last_game_takes_the_superbingo_fund_when_no_superbingo_game_was_played() -> None:
    """No superbingo game in the session: the fund (500 + 3% of 100 twice) still goes to the last game."""
    result = run(scenario_2([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB),
        game(2, [card("C", C)], DRAW_C, last_game=True),
    ])], rules=SUPER_RULES, superbingo=500))
    assert result["format"] == "bingo-replay-result/2"
    first, second = result["games"]
    assert list(first["prizes"]) == ["line", "bingo"] and first["pots"]["superbingo"] == 503
    assert second["prizes"]["superbingo_last_game"] == prize(15, 506, {"C": 506})
    assert second["pots"]["superbingo"] == 0


@pytest.mark.req("R89")
def test_v2_the_last_game_takes_what_the_fund_gathered_after_a_won_superbingo() -> None:
    """Game 1 wins its superbingo; games 2 and 3 add 3 cents each, which the last game takes."""
    result = run(scenario_2([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, superbingo_limit=42),
        game(2, [card("A", A)], DRAW_AB),
        game(3, [card("A", A)], DRAW_AB, last_game=True),
    ])], rules=SUPER_RULES, superbingo=1000))
    first, second, third = result["games"]
    assert first["prizes"]["superbingo"] == prize(16, 1003, {"A": 1003})
    assert "superbingo_last_game" not in second["prizes"]
    assert third["prizes"]["superbingo_last_game"] == prize(16, 6, {"A": 6})
    assert third["pots"]["superbingo"] == 0


@pytest.mark.req("R89")
def test_v2_a_last_game_that_wins_its_own_superbingo_keeps_the_splits_remainder_in_the_fund() -> None:
    result = run(scenario_2([("2026-12-01", [
        game(1, [card("A", A), card("B", B, 50)], DRAW_AB, superbingo_limit=42, last_game=True),
    ])], rules=SUPER_RULES, superbingo=1000))
    only = result["games"][0]
    # 1000 + 3% of 150 = 1004; A 1004 // 2 = 502, B at 50% 251; 251 stay (R88.4-5).
    assert only["prizes"]["superbingo"] == prize(16, 1004, {"A": 502, "B": 251})
    assert "superbingo_last_game" not in only["prizes"]
    assert only["pots"]["superbingo"] == 251


@pytest.mark.req("R89")
def test_v2_without_a_game_marked_last_the_fund_waits() -> None:
    """A day exported while its session is open: no game is its last yet, nothing is taken."""
    result = run(scenario_2([("2026-12-01", [game(1, [card("A", A)], late(DRAW_AB, 30), superbingo_limit=42)])],
                            rules=SUPER_RULES, superbingo=500))
    assert list(result["games"][0]["prizes"]) == ["line", "bingo"]
    assert result["games"][0]["pots"]["superbingo"] == 503


@pytest.mark.req("R90")
def test_v2_the_megabingo_pays_its_whole_fund_the_announced_amount_being_its_least() -> None:
    """Fund 10000 + 1% of 200 = 10002, announced at 5001: A and B (50%) share all 10002."""
    result = run(scenario_2([("2026-12-11", [
        game(1, [card("A", A), card("B", B, 50), card("C", C, 50)], DRAW_AB, price=100,
             megabingo_cents=5001, megabingo_announced="2026-12-01"),
    ])], rules=MEGA_RULES, megabingo=10_000))
    only = result["games"][0]
    # A: 10002 * 100 // 200 = 5001; B: 10002 * 50 // 200 = 2500; the 2501 B did not stake stay.
    assert only["prizes"]["megabingo"] == prize(16, 10_002, {"A": 5001, "B": 2500})
    assert only["pots"]["megabingo"] == 2501


@pytest.mark.req("R90")
def test_v2_a_megabingo_fund_below_its_announced_amount_is_refused() -> None:
    message = fault(scenario_2([("2026-12-11", [
        game(1, [card("A", A)], DRAW_AB, megabingo_cents=5001, megabingo_announced="2026-12-01"),
    ])], rules=MEGA_RULES, megabingo=4_000))
    assert message == ("session 2026-12-11, game 1, field megabingo_cents: the announced 5001 cents exceed the "
                       "megabingo fund's 4001 cents (R90)")


def test_v2_last_game_is_a_boolean_on_the_sessions_last_game_and_v1_knows_no_such_key() -> None:
    games = [game(1, [card("A", A)], DRAW_AB, last_game=True), game(2, [card("A", A)], DRAW_AB)]
    assert fault(scenario_2([("2026-12-01", games)])) == (
        "session 2026-12-01, game 1, field last_game: the session's last game (R93.15) is its last in the file; "
        "game 2 follows it")
    assert fault(scenario_2([("2026-12-01", [game(1, [card("A", A)], DRAW_AB, last_game=1)])])) == (
        "session 2026-12-01, game 1, field last_game: must be true or false, got 1")
    assert fault(scenario([("2026-12-01", [game(1, [card("A", A)], DRAW_AB, last_game=True)])])) == (
        "session 2026-12-01, game 1, field last_game: is not a key of this format (misspelt?)")


# --- Version 2: the claim pause (R85.6) and corrected balls (R85.5) ----------------------------


def scenario_v2(games: list[dict]) -> dict:
    data = scenario([("2026-12-01", games)])
    data["format"] = "bingo-replay/2"
    return data


def paper(card_id: str, rows: list[list[int]]) -> dict[str, Any]:
    return {**card(card_id, rows), "paper": True}


@pytest.mark.req("R85.6", "R87.a")
def test_v2_a_paper_card_shares_only_a_prize_it_was_claimed_for_in_time() -> None:
    """A (virtual) and B (paper) complete the line on ball 5 and the card on ball 16. B's player
    calls the line in time, not the bingo: A and B share the line, A takes the bingo alone."""
    claimed = run(scenario_v2([game(1, [card("A", A), paper("B", B), card("C", C)], DRAW_AB,
                                    claims=[{"card": "B", "pattern": "line"}])]))
    assert claimed["format"] == "bingo-replay-result/2"
    (played,) = claimed["games"]
    assert played["prizes"] == {"line": prize(5, 60, {"A": 30, "B": 30}), "bingo": prize(16, 150, {"A": 150})}
    assert played["balls_drawn"] == 16
    # Never called: B shares nothing. Version 1 of the same day shares both (every card found).
    uncalled = run(scenario_v2([game(1, [card("A", A), paper("B", B), card("C", C)], DRAW_AB)]))
    assert uncalled["games"][0]["prizes"]["line"] == prize(5, 60, {"A": 60})
    v1 = run(scenario([("2026-12-01", [game(1, [card("A", A), card("B", B), card("C", C)], DRAW_AB)])]))
    assert v1["games"][0]["prizes"]["line"] == prize(5, 60, {"A": 30, "B": 30})


@pytest.mark.req("R85.6", "R87.a")
def test_v2_a_paper_card_claimed_late_wins_on_its_ball_when_no_card_was_found_before_and_every_ball_counts() -> None:
    """C (paper) completes its top row on ball 5 and its card on ball 15; its player calls the bingo
    after ball 17: both prizes are C's, on balls 5 and 15, and the game drew 17 balls."""
    draw = DRAW_C + FILLER[:2]
    result = run(scenario_v2([game(1, [paper("C", C), card("A", A)], draw,
                                   claims=[{"card": "C", "pattern": "line"}, {"card": "C", "pattern": "bingo"}])]))
    (played,) = result["games"]
    assert played["prizes"]["line"]["ball"] == 5 and played["prizes"]["bingo"]["ball"] == 15
    assert played["balls_drawn"] == 17


@pytest.mark.parametrize("claims, message", [
    ([{"card": "A", "pattern": "line"}], "\"A\" is not a paper card"),
    ([{"card": "Z", "pattern": "line"}], "claims[0].card: \"Z\" is not a card of this game"),
    ([{"card": "B", "pattern": "corner"}], "claims[0].pattern: is \"line\" or \"bingo\""),
    ([{"card": "B", "pattern": "line"}, {"card": "B", "pattern": "line"}], "already claimed for the line"),
    ([{"card": "C", "pattern": "line"}], "\"C\" is claimed for the line, won on ball 5, but never completes it"),
])
def test_v2_a_claim_that_does_not_win_is_invalid(claims: list[dict], message: str) -> None:
    data = scenario_v2([game(1, [card("A", A), paper("B", B), paper("C", C)], DRAW_AB, claims=claims)])
    assert message in fault(data)


def test_v2_keys_and_corrections_are_checked() -> None:
    assert "a draw must reach a bingo" in fault(scenario_v2([game(1, [paper("A", A)], DRAW_AB)]))
    assert "cards[0].paper: is not a key of this format" in fault(scenario([("2026-12-01", [
        game(1, [paper("A", A)], DRAW_AB)])]))
    assert "claims: is not a key of this format" in fault(scenario([("2026-12-01", [
        game(1, [card("A", A)], DRAW_AB, claims=[])])]))
    assert "a paper card stakes its whole price" in fault(scenario_v2([game(1, [{**paper("A", A), "stake_pct": 50}],
                                                                              DRAW_AB)]))
    corrected = game(1, [card("A", A)], DRAW_AB, corrections=[{"ball": 2, "misread": 82}])
    assert run(scenario_v2([corrected]))["games"][0]["balls_drawn"] == 16
    same = game(1, [card("A", A)], DRAW_AB, corrections=[{"ball": 2, "misread": 28}])
    assert "corrections[0].misread: ball 2 is 28 in the draw" in fault(scenario_v2([same]))
    beyond = game(1, [card("A", A)], DRAW_AB, corrections=[{"ball": 17, "misread": 1}])
    assert "corrections[0].ball: must be at most 16" in fault(scenario_v2([beyond]))


# --- Version 3: sessions numbered, the tax net of refunds after the close, fixed sums -----------


def scenario_3(sessions: list[tuple[str, int, list[dict]]], rules: dict | None = None, **opening: int) -> dict:
    return {
        "format": "bingo-replay/3",
        "rules": rules or {"line_bp": 2000, "bingo_bp": 5000},
        "opening": opening,
        "sessions": [{"date": date, "session": number, "games": games} for date, number, games in sessions],
    }


def test_days_the_regulator_cannot_replay_v3_plays_two_sessions_of_one_date_each_game_saying_its_session() -> None:
    two = scenario_3([("2026-12-01", 1, [game(1, [card("A", A)], DRAW_AB, last_game=True)]),
                      ("2026-12-01", 2, [game(1, [card("B", B)], DRAW_AB, last_game=True)])])
    result = run(two)
    assert result["format"] == "bingo-replay-result/3"
    assert [(g["date"], g["session"], g["game"]) for g in result["games"]] == [
        ("2026-12-01", 1, 1), ("2026-12-01", 2, 1)]
    assert list(result["games"][0])[:3] == ["date", "session", "game"]
    # The same two sessions in version 2 are refused, as ever; in version 3 they must ascend.
    assert fault({**two, "format": "bingo-replay/2", "sessions": [
        {"date": s["date"], "games": s["games"]} for s in two["sessions"]]}) == (
        "sessions[1].date: 2026-12-01 is not after the previous session's date 2026-12-01")
    backwards = scenario_3([("2026-12-01", 2, [game(1, [card("A", A)], DRAW_AB)]),
                            ("2026-12-01", 1, [game(1, [card("B", B)], DRAW_AB)])])
    assert fault(backwards) == "sessions[1].session: 1 is not after the previous session 2 of 2026-12-01"
    missing = scenario_3([("2026-12-01", 1, [game(1, [card("A", A)], DRAW_AB)])])
    del missing["sessions"][0]["session"]
    assert fault(missing) == "sessions[0].session: is missing"
    named = scenario_3([("2026-12-01", 1, [game(1, [card("A", A)], DRAW_AB)]),
                        ("2026-12-01", 2, [game(1, [card("B", B, 120)], DRAW_AB)])])
    assert fault(named).startswith("session 2026-12-01-s2, game 1, field cards[0].stake_pct: must be at most 100")


@pytest.mark.req("R89.5")
def test_days_the_regulator_cannot_replay_v3_counts_r89_5_over_every_session_of_the_date() -> None:
    """200,000 cents in each of two sessions of one date: 400,000 over the date's 300,000 (R89.5)."""
    rules = {"line_bp": 2000, "bingo_bp": 5000, "superbingo_bp": 300}
    message = fault(scenario_3([
        ("2026-12-01", 1, [game(1, [card("A", A)], DRAW_AB, operator={"superbingo": 200_000})]),
        ("2026-12-01", 2, [game(1, [card("B", B)], DRAW_AB, operator={"superbingo": 200_000})]),
    ], rules))
    assert message.startswith("session 2026-12-01-s2, game 1, field operator.superbingo:"), message
    # On two dates each has its own limit.
    run(scenario_3([
        ("2026-12-01", 1, [game(1, [card("A", A)], DRAW_AB, operator={"superbingo": 200_000})]),
        ("2026-12-02", 1, [game(1, [card("B", B)], DRAW_AB, operator={"superbingo": 200_000})]),
    ], rules))


@pytest.mark.req("R96.3", "R98")
def test_days_the_regulator_cannot_replay_v3_taxes_the_amounts_staked_net_of_refunds_after_the_close() -> None:
    refunded = [{"id": "V1-9", "stake_pct": 50}, {"id": "V1-10", "stake_pct": 100}]
    played = game(1, [card("A", A), card("B", B)], DRAW_AB, price=150, refunded_after_close=refunded)
    v3 = run(scenario_3([("2026-12-01", 1, [played])]))["games"][0]
    v2 = run(scenario_2([("2026-12-01", [played])]))["games"][0]
    # Sales S = 150 + 150 + 75 + 150 = 525 (the prizes on S); refunds R = 75 + 150 = 225.
    assert v3["sales_cents"] == v2["sales_cents"] == 525
    assert v3["prizes"]["bingo"]["amount_cents"] == v2["prizes"]["bingo"]["amount_cents"] == 525 * 5000 // 10000
    assert v3["refunded_after_close_cents"] == v2["refunded_after_close_cents"] == 225
    assert (v3["tax_cents"], v2["tax_cents"]) == ((525 - 225) * 10 // 100, 525 * 10 // 100)


@pytest.mark.req("R88.3")
def test_days_the_regulator_cannot_replay_v3_rules_say_the_fixed_sums_of_the_line_and_the_bingo() -> None:
    rules = {"line_bp": 2000, "bingo_bp": 5000, "line_minimum_cents": 500}
    result = run(scenario_3([("2026-12-01", 1, [game(1, [card("A", A), card("B", B)], DRAW_AB)])], rules))
    assert result["games"][0]["prizes"]["line"]["amount_cents"] == 500  # 20% of 200 is 40: the fixed sum
    assert result["games"][0]["prizes"]["bingo"]["amount_cents"] == 100
    assert fault(scenario_2([("2026-12-01", [game(1, [card("A", A)], DRAW_AB)])], rules)).startswith(
        "rules.line_minimum_cents: is not a key of this format")
    assert fault(scenario_3([("2026-12-01", 1, [game(1, [card("A", A)], DRAW_AB)])],
                            {**rules, "line_minimum_cents": -1})) == "rules.line_minimum_cents: must be at least 0, got -1"

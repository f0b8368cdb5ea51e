"""The audit replay on random scenarios: no cent is created or lost, no pot above its cap.

The conservation identity, per game, from the format's steps 1-12 (all in cents)::

    pots before + sales + operator contributions
        = payments of every prize + pots after + house share

where *pots* is the sum of the seven levels of ``pots`` (carries included), the
*operator contributions* are ``operator.superbingo + grand_superbingo + jackpot``, and
the *house share* is what the rules send to no prize or pot: sales minus
``sales * line_bp // 10000``, ``sales * bingo_bp // 10000``,
``sales * superbingo_bp // 10000``, ``sales // 100`` (megabingo) and ``sales // 10``
(jackpot).  Reserve boosts, the reserve transfer and unpaid remainders only move money
between pots and prizes, so they do not appear.  The tax is owed on the sales
(``sales // 10``) by the house and moves no pot, so it is checked on its own.
Summed over the games, the same identity links the opening levels, the last game's
levels and the totals.
"""

from __future__ import annotations

import datetime
import json
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from protocol.cards import fingerprint
from protocol.settlement import GRAND_SUPERBINGO_CAP, JACKPOT_CAP, PrizeRules, house_share
from protocol.replay import ReplayError, replay_json
from protocol.strips import sample_strips


def rows_of(cells: list[int]) -> list[list[int]]:
    return [[n for n in cells[r * 9 : (r + 1) * 9] if n] for r in range(3)]


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    megabingo = draw(st.booleans())
    jackpot = draw(st.booleans())
    superbingo_bp = draw(st.sampled_from([0, 200, 300, 500]))
    pots = superbingo_bp + 100 * megabingo + 1000 * jackpot
    line_bp = draw(st.integers(0, 3000))
    bingo_bp = draw(st.integers(max(0, 7000 - pots - line_bp), 10_000 - pots - line_bp))
    return {"line_bp": line_bp, "bingo_bp": bingo_bp, "superbingo_bp": superbingo_bp,
            "megabingo": megabingo, "jackpot": jackpot}


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """Up to 3 sessions of up to 3 games, every pot possibly in play, limits respected.

    Operator contributions stay well inside their daily, monthly and fund limits; the
    megabingo is announced small against a large opening fund.  Reserve boosts may
    exceed what a drained reserve holds: such scenarios are invalid and discarded.
    """
    rule = draw(rules())
    pool = sample_strips(4, random.Random(draw(st.integers(0, 2**32))).randbytes).reshape(-1, 27)
    cents = st.integers(0, 3000)
    opening = {
        "carry_line": draw(cents), "carry_bingo": draw(cents), "superbingo": draw(cents),
        "grand_superbingo": draw(st.integers(0, 100_000)), "megabingo": draw(st.integers(20_000, 40_000)),
        "jackpot_accumulated": draw(st.integers(0, JACKPOT_CAP)),
        "jackpot_reserve": draw(st.integers(50_000, 3_000_000)),
    }
    boosts = st.integers(0, 1000) | st.just(0)
    sessions = []
    date = datetime.date(2026, 12, 1)
    for _ in range(draw(st.integers(1, 3))):
        date += datetime.timedelta(days=draw(st.integers(1, 40)))
        games = []
        for number in range(1, draw(st.integers(1, 3)) + 1):
            picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=12, unique=True))
            cards = [pool[i].tolist() for i in picks]
            assume(len({fingerprint(c) for c in cards}) == len(cards))
            game: dict[str, Any] = {
                "game": number,
                "price_cents": draw(st.integers(1, 5000)),
                "cards": [{"id": f"c{draw(st.integers(0, 9))}-{i}", "stake_pct": draw(st.integers(1, 100)),
                           "rows": rows_of(c)} for i, c in enumerate(cards)],
                "draw": list(draw(st.permutations(range(1, 91)))),
                "operator": {"superbingo": draw(st.integers(0, 40_000)),
                             "grand_superbingo": draw(st.integers(0, 40_000)),
                             "jackpot": draw(st.integers(0, 100_000))},
                "reserve_boost": {"line": draw(boosts), "bingo": draw(boosts)},
            }
            pot = draw(st.sampled_from(["superbingo", "grand", None]))
            if pot == "superbingo" and rule["superbingo_bp"]:
                game["superbingo_limit"] = draw(st.integers(42, 90))
            elif pot == "grand":
                game["grand_superbingo_limit"] = draw(st.integers(42, 90))
            if rule["jackpot"] and draw(st.booleans()):
                game["jackpot_threshold"] = draw(st.sampled_from([40, 41, 42]))
            if rule["megabingo"] and draw(st.booleans()):
                game["megabingo_cents"] = draw(st.integers(0, 2000))
                game["megabingo_announced"] = (date - datetime.timedelta(days=10)).isoformat()
            games.append(game)
        sessions.append({"date": date.isoformat(), "games": games})
    return {"format": "bingo-replay/1", "rules": rule, "opening": opening, "sessions": sessions}


POT_NAMES = ("carry_line", "carry_bingo", "superbingo", "grand_superbingo", "megabingo",
             "jackpot_accumulated", "jackpot_reserve")


@pytest.mark.req("R88.4-5", "R89", "R90", "R91", "R98")
@settings(max_examples=40, deadline=None)
@given(scenarios())
def test_no_cent_is_created_or_lost_and_no_pot_exceeds_its_cap(data: dict[str, Any]) -> None:
    try:
        result = json.loads(replay_json(json.dumps(data)))
    except ReplayError as error:
        assume("reserve_boost" not in str(error))
        raise
    rule = PrizeRules(**data["rules"])
    games_in = [g for s in data["sessions"] for g in s["games"]]
    before = sum(data["opening"].values())
    total_paid = total_house = total_operator = 0
    for game_in, game_out in zip(games_in, result["games"], strict=True):
        sales = game_out["sales_cents"]
        assert sales == sum(game_in["price_cents"] * c["stake_pct"] // 100 for c in game_in["cards"])
        assert game_out["tax_cents"] == sales // 10
        operator = sum(game_in["operator"].values())
        paid = 0
        for prize in game_out["prizes"].values():
            payments = sum(p["cents"] for p in prize["paid"])
            assert prize["carry_cents"] == prize["amount_cents"] - payments >= 0
            assert [p["card"] for p in prize["paid"]] == sorted(p["card"] for p in prize["paid"])
            assert all(p["cents"] >= 0 for p in prize["paid"])
            paid += payments
        pots = game_out["pots"]
        assert list(pots) == list(POT_NAMES)
        assert all(level >= 0 for level in pots.values())
        assert pots["jackpot_accumulated"] <= JACKPOT_CAP
        assert pots["grand_superbingo"] <= GRAND_SUPERBINGO_CAP
        after = sum(pots.values())
        house = house_share(rule, sales)
        assert before + sales + operator == paid + after + house
        assert game_out["prizes"]["line"]["ball"] < game_out["balls_drawn"]
        before = after
        total_paid += paid
        total_house += house
        total_operator += operator
    totals = result["totals"]
    assert totals["paid_cents"] == total_paid
    assert totals["sales_cents"] == sum(g["sales_cents"] for g in result["games"])
    assert totals["tax_cents"] == sum(g["tax_cents"] for g in result["games"])
    opening, closing = sum(data["opening"].values()), sum(result["games"][-1]["pots"].values())
    assert opening + totals["sales_cents"] + total_operator == total_paid + closing + total_house

"""``bingo-replay/4``: the network game's other winning patterns replayed (R93.11-13, R94.1-2).

Each of ``rules.patterns`` is a shape with its share of the sales: found by the system on every card,
won on the first ball a card completes it if that ball is not after the bingo's (the game ends with its
bingo, R93.12), shared whole by stake (R93.13), and carried whole into the next game's prize of the
same name when no card completes it in time.  The figures below are worked by hand.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from protocol.replay import replay_json
from tests.unit.test_replay import A, B, C, DRAW_AB, DRAW_C, card, fault, game, prize, pots

RULES: dict[str, Any] = {
    "line_bp": 1500, "bingo_bp": 5000, "sharing": "by_stake",
    "patterns": [
        {"name": "two_lines", "bp": 500, "rows": 2},
        {"name": "four_corners", "bp": 1000, "positions": [[0, 0], [0, 4], [2, 0], [2, 4]]},
        # The third cell of the top row: a blank on A and B, 20 on C.
        {"name": "third", "bp": 100, "cells": [2]},
    ],
}


def day() -> dict[str, Any]:
    return {
        "format": "bingo-replay/4",
        "rules": copy.deepcopy(RULES),
        "opening": {"carry_four_corners": 5},
        "sessions": [{"date": "2026-12-01", "session": 1, "games": [
            game(1, [card("A", A), card("B", B, 50), card("C", C)], DRAW_AB),
            game(2, [card("A", A), card("C", C)], DRAW_C, price=200),
            game(3, [card("A", A), card("C", C)], [*DRAW_AB, 20]),
        ]}],
    }


def run(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(replay_json(json.dumps(data)))


def levels(**carries: int) -> dict[str, int]:
    """The result's pots: the pot levels (all 0 but the line's and the bingo's carries), then each pattern's carry."""
    extras = ("two_lines", "four_corners", "third")
    return {**pots(**{k: v for k, v in carries.items() if k not in extras}),
            **{f"carry_{name}": carries.get(name, 0) for name in extras}}


@pytest.mark.req("R93.11", "R93.12-13", "R93.13", "R94.2")
def test_R93_11_each_other_pattern_is_won_whole_by_stake_or_carried_whole_to_the_next_game() -> None:
    result = run(day())
    first, second, third = result["games"]
    # Game 1 sells 250: A (100 cents) and B (50) win the line on ball 5, two lines on ball 11, the four
    # corners (25 + the 5 carried in) and the bingo on ball 16, two to one, a cent by the largest remainder.
    # No card completes the third cell (a blank on A and B, C's 20 is not drawn): its 2 cents carry.
    assert first["prizes"] == {
        "line": prize(5, 37, {"A": 25, "B": 12}),
        "bingo": prize(16, 125, {"A": 83, "B": 42}),
        "two_lines": prize(11, 12, {"A": 8, "B": 4}),
        "four_corners": prize(16, 30, {"A": 20, "B": 10}),
        "third": prize(0, 2, {}),
    }
    assert first["pots"] == levels(third=2)
    assert (first["session"], first["sales_cents"], first["tax_cents"]) == (1, 250, 25)
    # Game 2 sells 400; C wins everything: the third cell on ball 3 (4 + the 2 carried), two lines on ball 10,
    # the four corners with the bingo on ball 15.
    assert second["prizes"] == {
        "line": prize(5, 60, {"C": 60}),
        "bingo": prize(15, 200, {"C": 200}),
        "two_lines": prize(10, 20, {"C": 20}),
        "four_corners": prize(15, 40, {"C": 40}),
        "third": prize(3, 6, {"C": 6}),
    }
    assert second["pots"] == levels()
    # Game 3: A's bingo on ball 16 ends the game; C completes the third cell on ball 17, after it: not won.
    assert third["prizes"]["third"] == prize(0, 2, {})
    assert third["prizes"]["four_corners"] == prize(16, 20, {"A": 20})
    assert third["pots"] == levels(third=2)
    assert result["totals"] == {"sales_cents": 850, "paid_cents": 690, "tax_cents": 85}
    assert result["format"] == "bingo-replay-result/4"
    assert list(first["pots"])[-3:] == ["carry_two_lines", "carry_four_corners", "carry_third"]


@pytest.mark.req("R93.13")
def test_a_game_with_no_card_left_in_play_carries_every_other_pattern_whole() -> None:
    data = day()
    games = data["sessions"][0]["games"]
    games[1] = game(2, [], DRAW_C, price=200, refunded_after_close=[{"id": "A", "stake_pct": 100},
                                                                    {"id": "C", "stake_pct": 100}])
    _, second, third = run(data)["games"]
    assert second["prizes"]["third"] == prize(0, 6, {}) and second["prizes"]["two_lines"] == prize(0, 20, {})
    assert second["pots"] == levels(carry_line=60, carry_bingo=200, two_lines=20, four_corners=40, third=6)
    # Tax on the amounts staked, net of the refunds after the close (R98), as in version 3.
    assert second["tax_cents"] == 0 and second["refunded_after_close_cents"] == 400
    # Game 3 plays what game 2 carried: A wins all but the third cell, which carries 2 + 6.
    assert third["prizes"]["two_lines"] == prize(11, 30, {"A": 30})
    assert third["prizes"]["four_corners"] == prize(16, 60, {"A": 60})
    assert third["prizes"]["line"] == prize(5, 90, {"A": 90}) and third["pots"] == levels(third=8)


def with_rules(change: dict[str, Any], *, format: str = "bingo-replay/4") -> dict[str, Any]:
    data = day()
    data["format"] = format
    data["rules"].update(change)
    return data


@pytest.mark.req("R94.1", "R94.2")
@pytest.mark.parametrize(("data", "message"), [
    (with_rules({}, format="bingo-replay/3"),
     "rules.patterns: is not a key of this format (misspelt?); it is a key of bingo-replay/4"),
    (with_rules({"sharing": "hall"}), 'rules.patterns: the other patterns are the network game\'s: rules.sharing is "by_stake"'),
    (with_rules({"patterns": [{"name": "line", "bp": 100, "rows": 1}]}),
     'rules.patterns[0].name: "line" is always played; rules.patterns lists the others'),
    (with_rules({"patterns": [{"name": "x", "bp": 100, "rows": 2}, {"name": "x", "bp": 100, "rows": 1}]}),
     'rules.patterns[1].name: "x" is already the name of rules.patterns[0]'),
    (with_rules({"patterns": [{"name": "x", "bp": 0, "rows": 2}]}), "rules.patterns[0].bp: "),
    (with_rules({"patterns": [{"name": "x", "bp": 10, "rows": 2, "cells": [1]}]}),
     "rules.patterns[0]: a pattern has a name and exactly one of 'rows', 'cells' or 'positions'"),
    (with_rules({"patterns": [{"name": "x", "bp": 10, "cells": [27]}]}),
     "rules.patterns[0]: pattern 'x' lists cell 27, outside 0-26"),
    (with_rules({"patterns": [{"name": "x", "bp": 3600, "rows": 2}]}),
     "rules: line, bingo and the other patterns total 10100 basis points of sales, more than the 10000 (100%)"),
    (with_rules({"line_bp": 1000, "patterns": [{"name": "x", "bp": 900, "rows": 2}]}),
     "rules: line, bingo and the other patterns total 6900 basis points of sales; prizes must take at least 7000"),
])
def test_rules_patterns_refused_naming_the_field(data: dict[str, Any], message: str) -> None:
    got = fault(data)
    assert got.startswith(message) or message in got, got


@pytest.mark.req("R94.1")
def test_the_other_patterns_count_in_the_70_percent_floor() -> None:
    """Line 10% and bingo 50% are below the floor alone; with a pattern of 10% the prizes take 70%."""
    data = with_rules({"line_bp": 1000, "patterns": [{"name": "two_lines", "bp": 1000, "rows": 2}]})
    data["opening"] = {}
    assert run(data)["games"][0]["prizes"]["two_lines"] == prize(11, 25, {"A": 17, "B": 8})


def test_opening_carries_name_a_pattern_of_the_rules_and_paper_cards_are_refused() -> None:
    data = day()
    data["opening"] = {"carry_five_corners": 5}
    assert fault(data).startswith("opening.carry_five_corners: is not a key")
    data = day()
    data["sessions"][0]["games"][0]["cards"][0]["paper"] = True
    assert "a game of rules.patterns is a network game, whose cards are virtual" in fault(data)

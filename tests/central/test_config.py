"""A network game's configuration is checked against the regulation, with clear messages."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central_server.domain.config import (
    NetworkGameConfig,
    card_label,
    export_card_id,
    library_digest,
)
from central_server.domain.errors import ConfigError
from protocol.patterns import BINGO, FOUR_CORNERS, LINE, TWO_LINES, CellsPattern, RowsPattern
from tests.central.conftest import LIBRARY, config


def refused(**changes: object) -> str:
    with pytest.raises(ConfigError) as error:
        config(**changes)  # type: ignore[arg-type]
    assert error.value.code == "bad_config"
    return str(error.value)


@pytest.mark.req("R93.5")
def test_the_card_price_is_at_most_the_approved_maximum() -> None:
    assert config(price_cents=200, max_price_cents=200).price_cents == 200
    assert refused(price_cents=201, max_price_cents=200) == (
        "price_cents: 201 cents is above the maximum price the regulator approved, 200 cents (R93.5)"
    )
    assert refused(price_cents=0).startswith("price_cents: is 1 to")
    assert refused(price_cents=True).startswith("price_cents: is a whole number of cents, not True")


@pytest.mark.req("R94.1")
def test_at_least_70_percent_of_the_sales_go_to_prizes() -> None:
    assert config(patterns=((LINE, 2000), (BINGO, 5000))).prizes[1].basis_points == 5000
    message = refused(patterns=((LINE, 1999), (BINGO, 5000)))
    assert message == (
        "prizes: the prizes take 6999 basis points of the sales; at least 7000 (70%) must go to prizes (R94.1)"
    )
    assert "more than the 10000 (100%)" in refused(patterns=((LINE, 5001), (BINGO, 5000)))


@pytest.mark.req("R94.2")
def test_every_game_has_a_line_and_a_bingo_prize() -> None:
    assert "every game plays the line (R94.2)" in refused(patterns=((TWO_LINES, 2000), (BINGO, 5000)))
    assert "every game plays the bingo (R94.2)" in refused(patterns=((LINE, 7000),))
    assert "redefined" in refused(patterns=((RowsPattern("line", 2), 2000), (BINGO, 5000)))
    assert "prizes[0].basis_points: is 1 to 10000" in refused(patterns=((LINE, 0), (BINGO, 7000)))


@pytest.mark.req("R93.11")
def test_the_operators_extra_patterns_are_configured_with_their_shares() -> None:
    corners = CellsPattern("corners", frozenset({0, 8, 18, 26}))
    game = config(patterns=((LINE, 1500), (TWO_LINES, 1000), (FOUR_CORNERS, 500), (corners, 500), (BINGO, 4000)))
    assert game.patterns.names == ("line", "two_lines", "four_corners", "corners", "bingo")
    assert "two winning patterns of a game share a name" in refused(
        patterns=((LINE, 2000), (TWO_LINES, 500), (RowsPattern("two_lines", 2), 500), (BINGO, 5000))
    )


def test_windows_series_and_halls_have_bounds() -> None:
    assert refused(sale_window_ms=9_999) == "sale_window_ms: is 10000 to 3600000 milliseconds, not 9999"
    assert refused(ball_interval_ms=60_001) == "ball_interval_ms: is 1000 to 60000 milliseconds, not 60001"
    assert refused(halls=("hall-1",)) == "halls: a network game runs across 2 to 1000 halls (R92.5b), not 1"
    assert refused(halls=("hall-1", "hall-1")) == "halls: names a hall twice"
    assert refused(halls=("hall/1", "hall-2")) == "halls[0]: may not hold '/'"
    assert refused(series_label="V-1") == "series_label: may not hold '-'"
    assert refused(first_card=301) == "first_card: is 1 to 300 (series of 300 cards), not 301"
    assert refused(library_digest="ab").startswith("library_digest: is the SHA-256")


def test_the_layouts_must_be_the_series_the_game_was_set_up_with() -> None:
    game = config()
    game.check_library(LIBRARY)
    other = LIBRARY.copy()
    other[[0, 1]] = other[[1, 0]]
    with pytest.raises(ConfigError, match="are not those of series V1"):
        game.check_library(other)
    with pytest.raises(ConfigError, match="series of 300 cards; the layouts hold 299"):
        game.check_library(LIBRARY[:299])


def test_card_ids_in_the_export_name_the_hall_series_and_number() -> None:
    """FORMATS.md section 3: on the central server a virtual card is ``HALL/V1-13``."""
    assert card_label("V1", 13) == "V1-13"
    assert export_card_id("hall-2", "V1", 13) == "hall-2/V1-13"


def test_the_dict_form_names_the_field_at_fault() -> None:
    good = config(carries={"bingo": 17}).to_dict()
    assert NetworkGameConfig.from_dict(good) == config(carries={"bingo": 17})
    cases = [
        ({k: v for k, v in good.items() if k != "prizes"}, "prizes: is missing"),
        ({**good, "colour": "red"}, "colour: is not a setting of a network game"),
        ({**good, "halls": "hall-1"}, "halls: is a list of hall ids"),
        ({**good, "prizes": [{"pattern": {"name": "line", "rows": 1}}]}, "prizes[0]: has a pattern, its basis_points"),
        ({**good, "prizes": [{"pattern": {"name": "line"}, "basis_points": 1}]}, "prizes[0].pattern: a pattern has a name"),
    ]
    for data, message in cases:
        with pytest.raises(ConfigError) as error:
            NetworkGameConfig.from_dict(data)
        assert str(error.value).startswith(message), str(error.value)


@settings(deadline=None)
@given(
    line=st.integers(1, 10_000),
    bingo=st.integers(1, 10_000),
    carry=st.integers(0, 10**9),
    price=st.integers(1, 500),
    cap=st.integers(1, 500),
)
@pytest.mark.req("R93.5", "R94.1")
def test_a_configuration_is_accepted_exactly_when_the_rules_hold(line: int, bingo: int, carry: int, price: int, cap: int) -> None:
    ok = 7000 <= line + bingo <= 10_000 and price <= cap
    try:
        game = config(patterns=((LINE, line), (BINGO, bingo)), carries={"line": carry}, price_cents=price, max_price_cents=cap)
    except ConfigError:
        assert not ok
    else:
        assert ok
        assert NetworkGameConfig.from_dict(game.to_dict()) == game
        assert dataclasses.replace(game) == game


def test_the_digest_covers_every_cell_and_the_size() -> None:
    base = library_digest(LIBRARY)
    changed = LIBRARY.copy()
    changed[299, 26] ^= 1
    assert library_digest(changed) != base
    assert library_digest(np.vstack([LIBRARY, LIBRARY[:6]])) != base
    with pytest.raises(ConfigError, match="layouts are an"):
        library_digest(LIBRARY[:, :26])

"""``[annex]`` in hall.toml and ``[[annex]]`` in central.toml: the hall-annex pair (R3.5.b), checked at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from central_server.config import ConfigError as CentralConfigError
from central_server.config import parse_config as parse_central
from central_server.domain.annex import AnnexPair
from hall_server.config import ConfigError, parse_config


BASE = {"hall": {"name": "Sala"}, "central": {"host": "central.acme.net", "port": 7310, "hall_id": "hall-1"}}


def test_annex_names_the_role_and_the_partner() -> None:
    config = parse_config({**BASE, "annex": {"role": "main", "partner": "hall-2"}})
    assert config.annex is not None and (config.annex.role, config.annex.partner) == ("main", "hall-2")
    assert parse_config(BASE).annex is None


@pytest.mark.parametrize("data, message", [
    ({"hall": {"name": "Sala"}, "annex": {"role": "main", "partner": "hall-2"}}, "annex: needs \\[central\\]"),
    ({**BASE, "annex": {"role": "boss", "partner": "hall-2"}}, 'annex.role: is "main"'),
    ({**BASE, "annex": {"role": "annex"}}, "annex.partner: is required"),
    ({**BASE, "annex": {"role": "annex", "partner": "hall-1"}}, "annex.partner: is another hall than this one"),
    ({**BASE, "annex": {"role": "annex", "partner": "hall 2"}}, "annex.partner: is the partner hall's id"),
    ({**BASE, "annex": {"role": "annex", "partner": "hall-2", "draw": "rng"}}, "annex.draw: is not a setting"),
])
def test_a_bad_annex_setting_stops_the_start_naming_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


CENTRAL = {"central": {"id": "central-a"}, "network": {"halls": ["hall-1", "hall-2", "hall-3"]}}


def test_the_central_server_knows_its_pairs() -> None:
    config = parse_central({**CENTRAL, "annex": [{"main": "hall-1", "annex": "hall-2"}]}, base=Path("/srv"))
    assert config.annex_pairs == (AnnexPair("hall-1", "hall-2"),)
    assert parse_central(CENTRAL, base=Path("/srv")).annex_pairs == ()


@pytest.mark.parametrize("pairs, message", [
    ([{"main": "hall-1", "annex": "hall-9"}], "annex\\[0\\].annex: hall-9 is not a member hall"),
    ([{"main": "hall-1", "annex": "hall-1"}], "annex\\[0\\].annex: is another hall than the main hall"),
    ([{"main": "hall-1", "annex": "hall-2"}, {"main": "hall-3", "annex": "hall-2"}], "annex: names a hall in two pairs"),
    ([{"main": "hall-1"}], "annex\\[0\\].annex: is required"),
    ([{"main": "hall-1", "annex": "hall-2", "draw": "x"}], "annex\\[0\\].draw: is not a setting"),
])
def test_a_bad_pair_stops_the_central_server_naming_the_key(pairs: list, message: str) -> None:
    with pytest.raises(CentralConfigError, match=message):
        parse_central({**CENTRAL, "annex": pairs}, base=Path("/srv"))

"""``[central]`` in hall.toml: where the central server is and who the hall is to it; absent, no network games."""

from __future__ import annotations

from pathlib import Path

import pytest

from hall_server.config import ConfigError, parse_config

BASE = {"hall": {"name": "Sala"}}


def test_without_central_the_hall_plays_no_network_game() -> None:
    assert parse_config(BASE).central is None


def test_central_names_the_server_the_hall_id_and_defaults_to_the_hall_pki() -> None:
    config = parse_config({**BASE, "central": {"host": "central.acme.net", "port": 7310, "hall_id": "hall-1"}},
                          base=Path("/srv/hall"))
    central = config.central
    assert central is not None
    assert (central.host, central.port, central.hall_id, central.server_name) == ("central.acme.net", 7310, "hall-1",
                                                                                   "central.acme.net")
    assert central.pki_dir == config.tls.pki_dir


@pytest.mark.parametrize("table, message", [
    ({"port": 7310, "hall_id": "hall-1"}, "central.host: is required"),
    ({"host": "c", "port": 0, "hall_id": "hall-1"}, "central.port: a port is 1-65535, not 0"),
    ({"host": "c", "port": 7310, "hall_id": "hall/1"}, "central.hall_id: is 1-32 letters"),
    ({"host": "c", "port": 7310, "hall_id": "hall-1", "hall": "x"}, "central.hall: is not a setting"),
    ({"host": "c", "port": "7310", "hall_id": "hall-1"}, "central.port: is int"),
])
def test_a_bad_central_setting_stops_the_start_naming_the_key(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**BASE, "central": table})


def test_regulator_defaults_to_the_central_hall_id_the_host_as_name_and_the_hall_pki() -> None:
    config = parse_config({**BASE, "central": {"host": "central.acme.net", "port": 7310, "hall_id": "hall-1"},
                           "regulator": {"host": "feed.regulator.example", "port": 8700}}, base=Path("/srv/hall"))
    feed = config.regulator
    assert feed is not None
    assert (feed.host, feed.port, feed.hall_id, feed.server_name) == ("feed.regulator.example", 8700, "hall-1",
                                                                      "feed.regulator.example")
    assert feed.pki_dir == config.tls.pki_dir
    assert parse_config(BASE).regulator is None


@pytest.mark.req("R92.7")
@pytest.mark.parametrize("table, message", [
    ({"port": 8700, "hall_id": "hall-1"}, "regulator.host: is required"),
    ({"host": " ", "port": 8700, "hall_id": "hall-1"}, "regulator.host: names the regulator's feed receiver's host"),
    ({"host": "r", "port": 70000, "hall_id": "hall-1"}, "regulator.port: a port is 1-65535, not 70000"),
    ({"host": "r", "port": 8700}, "regulator.hall_id: is required"),
    ({"host": "r", "port": 8700, "hall_id": "../etc"}, "regulator.hall_id: is 1-32 letters"),
    ({"host": "r", "port": 8700, "hall_id": "hall-1", "url": "x"}, "regulator.url: is not a setting"),
])
def test_a_bad_regulator_setting_stops_the_start_naming_the_key(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**BASE, "regulator": table})


CENTRAL = {"central": {"id": "central-a"}, "network": {"halls": ["hall-1"]}}


@pytest.mark.req("R92.7")
def test_the_central_server_feeds_the_regulator_of_its_regulator_section() -> None:
    from central_server.config import parse_config as parse_central

    assert parse_central(CENTRAL).regulator is None
    config = parse_central({**CENTRAL, "regulator": {"host": "feed.regulator.example", "port": 8700}},
                           base=Path("/srv/central"))
    assert config.regulator is not None
    assert (config.regulator.host, config.regulator.port, config.regulator.server_name) == (
        "feed.regulator.example", 8700, "feed.regulator.example")
    assert config.regulator.pki_dir == config.pki_dir


@pytest.mark.req("R92.7")
@pytest.mark.parametrize("table, message", [
    ({"port": 8700}, "regulator.host: is required"),
    ({"host": "r", "port": 0}, "regulator.port: is a TCP port, 1-65535, not 0"),
    ({"host": "r", "port": 8700, "hall_id": "x"}, "regulator.hall_id: is not a setting here"),
])
def test_a_bad_regulator_setting_stops_the_central_server_naming_the_key(table: dict, message: str) -> None:
    from central_server.config import ConfigError as CentralConfigError
    from central_server.config import parse_config as parse_central

    with pytest.raises(CentralConfigError, match=message):
        parse_central({**CENTRAL, "regulator": table})

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

"""The central server's configuration file: read and checked, with errors naming the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from central_server.config import ConfigError, load_config
from tests.central_server.support import config_text, programme_text


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "central.toml"
    path.write_text(text)
    return path


def valid(tmp_path: Path) -> str:
    return config_text(tmp_path, tmp_path / "pki", f"sqlite:///{tmp_path / 'c.sqlite3'}")


def test_a_valid_file_gives_every_setting(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, valid(tmp_path)))
    assert (config.central_id, config.interface, config.port) == ("central-a", "127.0.0.1", 0)
    assert config.halls == ("hall-1", "hall-2") and config.series[0].cards == 60
    (plan,) = config.games
    assert plan.opens_after_ms == 1_000
    game = plan.config("a" * 64)
    assert (game.price_cents, game.halls, game.series_cards) == (100, ("hall-1", "hall-2"), 60)
    assert config.journal_key == tmp_path / "keys" / "journal-signing.pem"
    assert config.timezone == "UTC"
    zoned = load_config(write(tmp_path, valid(tmp_path).replace('id = "central-a"', 'id = "central-a"\ntimezone = "Europe/Madrid"')))
    assert zoned.timezone == "Europe/Madrid"


@pytest.mark.req("R93.5", "R94.1")
@pytest.mark.parametrize(
    "change, key, message",
    [
        (('id = "central-a"', 'id = "central/a"'), "central.id", "may not hold '/'"),
        (('id = "central-a"', ''), "central.id", "is required"),
        (("port = 0", "port = 70000"), "listen.port", "0-65535"),
        (("port = 0", 'port = "7310"'), "listen.port", "a whole number"),
        (('halls = ["hall-1", "hall-2"]', 'halls = []'), "network.halls", "member hall ids"),
        (("cards = 60", "cards = 61"), "series[0].cards", "whole strips of 6"),
        (("price_cents = 100", "price_cents = 201"), "games[0].price_cents", "maximum price the regulator approved"),
        (("basis_points = 5000", "basis_points = 4000"), "games[0].prizes", "at least 7000"),
        (('series_label = "V1"', 'series_label = "V2"'), "games[0].series_label", "names no series"),
        (("sale_window_ms = 10000", "sale_window_ms = 10000\nhalls = [\"hall-7\", \"hall-1\"]"), "games[0].halls",
         "hall-7 is not a member hall"),
        (("sale_window_ms = 10000", "sale_window_ms = 10000\nlibrary_digest = \"00\""), "games[0].library_digest",
         "comes from the central library"),
        (("[listen]", "[listen]\nhost = \"x\""), "listen.host", "is not a setting here"),
        (("opens_after_ms = 1000", "opens_after_ms = -5"), "games[0].opens_after_ms", "0 or more"),
        (('id = "central-a"', 'id = "central-a"\ntimezone = "Mars/Olympus"'), "central.timezone",
         "is a time zone name such as Europe/Madrid or UTC, not 'Mars/Olympus'"),
        (("[listen]", "[connections]\nhandshake_timeout_s = 0\n[listen]"), "connections.handshake_timeout_s",
         "above 0"),
        (("[listen]", "[connections]\nper_address = 2.5\n[listen]"), "connections.per_address", "a whole number"),
        (("[listen]", "[connections]\nbacklog = 5\n[listen]"), "connections.backlog", "is not a setting here"),
    ],
)
def test_a_bad_value_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, change: tuple[str, str], key: str, message: str
) -> None:
    text = valid(tmp_path)
    assert change[0] in text
    path = write(tmp_path, text.replace(change[0], change[1], 1))
    with pytest.raises(ConfigError, match=f"{re.escape(f'{path}: {key}: ')}.*{re.escape(message)}"):
        load_config(path)


def test_a_file_that_is_not_toml_or_missing_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[central\n"))


def with_programme(tmp_path: Path, **options: object) -> str:
    return config_text(tmp_path, tmp_path / "pki", f"sqlite:///{tmp_path / 'c.sqlite3'}", games=(),
                       programme=programme_text(**options))  # type: ignore[arg-type]


@pytest.mark.req("R88.4-5")
def test_a_programme_gives_its_template_its_id_scheme_its_pause_its_hours_and_its_games(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, with_programme(tmp_path, opens_after_ms=30_000, games=12,
                                                        hours="10:00-23:30", line_carry=14)))
    programme = config.programme
    assert programme is not None and config.games == ()
    assert (programme.id_prefix, programme.opens_after_ms, programme.games, str(programme.hours)) == (
        "net", 30_000, 12, "10:00-23:30")
    game = programme.game_config("net-2026-12-03-1", "a" * 64)
    assert (game.price_cents, game.halls, game.series_cards, game.sale_window_ms) == (100, ("hall-1", "hall-2"), 60,
                                                                                    10_000)
    assert programme.first_carries == {"line": 14, "bingo": 0}
    assert load_config(write(tmp_path, valid(tmp_path))).programme is None


@pytest.mark.req("R88.4-5", "R93.5", "R94.1")
@pytest.mark.parametrize(
    "change, key, message",
    [
        (("opens_after_ms = 1000", "opens_after_ms = -1"), "programme.opens_after_ms", "0 to 86400000"),
        (("opens_after_ms = 1000", 'opens_after_ms = "soon"'), "programme.opens_after_ms", "a whole number"),
        (('id_prefix = "net"', 'id_prefix = "net 1"'), "programme.id_prefix", "may not hold ' '"),
        (("opens_after_ms = 1000", "opens_after_ms = 1000\ngames = 0"), "programme.games", "1 or more"),
        (("opens_after_ms = 1000", 'opens_after_ms = 1000\nhours = "10-23"'), "programme.hours", "HH:MM-HH:MM"),
        (("opens_after_ms = 1000", "opens_after_ms = 1000\nevery = 3"), "programme.every", "is not a setting here"),
        (("price_cents = 100", "price_cents = 201"), "programme.game.price_cents", "maximum price"),
        (("basis_points = 5000", "basis_points = 4000"), "programme.game.prizes", "at least 7000"),
        (('series_label = "V1"', 'series_label = "V9"'), "programme.game.series_label", "names no series"),
        (("price_cents = 100", 'price_cents = 100\ngame_id = "x"'), "programme.game.game_id", "id scheme"),
        (("price_cents = 100", "price_cents = 100\nopens_after_ms = 5"), "programme.game.opens_after_ms",
         "programme.opens_after_ms says it"),
        (("price_cents = 100", 'price_cents = 100\nhalls = ["hall-1", "hall-8"]'), "programme.game.halls",
         "hall-8 is not a member hall"),
        (("[programme.game]", "[programme.x]"), "programme.x", "is not a table here"),
    ],
)
def test_a_bad_programme_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, change: tuple[str, str], key: str, message: str
) -> None:
    text = with_programme(tmp_path)
    assert change[0] in text
    path = write(tmp_path, text.replace(change[0], change[1], 1))
    with pytest.raises(ConfigError, match=re.escape(f"{path}: {key}: ") + ".*" + re.escape(message)):
        load_config(path)


def test_a_programme_without_its_template_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, valid(tmp_path) + '\n[programme]\nopens_after_ms = 1000\n')
    with pytest.raises(ConfigError, match=re.escape(f"{path}: programme.game: is the template")):
        load_config(path)

"""The hall's configuration file and staff passwords."""

from pathlib import Path

import pytest

from hall_server.config import (
    ConfigError,
    check_password,
    ensure_config,
    hash_password,
    load_config,
    parse_config,
)
from hall_server.hall.core import Role


def test_a_password_checks_against_its_hash_and_nothing_else() -> None:
    hashed = hash_password("open sesame")
    assert hashed.startswith("scrypt$") and "open sesame" not in hashed
    assert check_password("open sesame", hashed)
    assert not check_password("open sesame!", hashed)
    assert hash_password("open sesame") != hashed  # a fresh salt every time


@pytest.mark.req("R80")
def test_the_default_config_gives_one_login_per_role_shown_once_and_stored_hashed(tmp_path: Path) -> None:
    path = tmp_path / "var" / "hall.toml"
    config, logins = ensure_config(path)
    assert {role for _, role, _ in logins} == set(Role) - {Role.SYSTEM}
    text = path.read_text()
    for name, role, password in logins:
        assert password not in text
        member = config.staff_member(name)
        assert member is not None and member.role is role and check_password(password, member.password_hash)
    again, second = ensure_config(path)
    assert second == [] and again.staff == config.staff  # never rewritten
    assert config.home == tmp_path / "var" and config.tls.pki_dir == tmp_path / "var" / "pki"
    assert config.database_url == f"sqlite:///{tmp_path / 'var' / 'hall.sqlite3'}"


def _config(**tables: object) -> dict:
    data: dict = {"hall": {"name": "Sala"}}
    data.update(tables)
    return data


@pytest.mark.parametrize(
    "tables, message",
    [
        ({"hall": {}}, "hall.name: is required"),
        ({"listen": {"port": 70000}}, "a port is 0-65535"),
        ({"listen": {"port": True}}, "listen.port: is int"),
        ({"prizes": {"line_bp": 1000, "bingo_bp": 1000}}, "at least 7000"),
        ({"staff": [{"name": "x", "role": "system", "password_hash": hash_password("p")}]}, "not a staff role"),
        ({"staff": [{"name": "x", "role": "croupier", "password_hash": hash_password("p")}]}, "not a staff role"),
        ({"staff": [{"name": "x", "role": "cashier", "password_hash": "plain"}]}, "scrypt$n$r$p$salt$hash"),
        ({"series": [{"number": 1, "face_value_cents": 100, "card_count": 0}]}, "positive"),
        ({"series": "1001"}, "array of tables"),
    ],
)
def test_a_bad_configuration_is_refused_with_the_key_named(tables: dict, message: str) -> None:
    data = _config(**tables)
    if "hall" in tables:
        data["hall"] = tables["hall"]
    with pytest.raises(ConfigError, match=message.replace("$", r"\$")):
        parse_config(data)


@pytest.mark.req("R88.1")
def test_prize_rules_below_the_payout_floor_are_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "hall.toml"
    path.write_text('[hall]\nname = "Sala"\n[prizes]\nline_bp = 1000\nbingo_bp = 5000\n')
    with pytest.raises(ConfigError, match=r"hall.toml: prizes: .*70%"):
        load_config(path)


def test_a_file_that_is_not_toml_says_so(tmp_path: Path) -> None:
    path = tmp_path / "hall.toml"
    path.write_text("[hall\nname=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_the_example_configuration_reads() -> None:
    example = Path(__file__).parents[2] / "docs" / "examples" / "hall.toml"
    config = load_config(example)
    assert config.name and config.series and config.staff

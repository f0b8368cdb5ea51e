"""The hall's configuration file and staff passwords."""

from pathlib import Path

import pytest

from hall_server.config import (
    MIN_PASSWORD_LENGTH,
    ConfigError,
    check_password,
    check_password_policy,
    ensure_config,
    generate_password,
    hash_password,
    load_config,
    parse_config,
    weak_hash,
)
from hall_server.hall.roles import Role
from server_kit.limits import ConnectionLimits


def test_a_password_checks_against_its_hash_and_nothing_else() -> None:
    hashed = hash_password("open sesame now")
    assert hashed.startswith("scrypt$") and "open sesame now" not in hashed
    assert check_password("open sesame now", hashed)
    assert not check_password("open sesame now!", hashed)
    assert hash_password("open sesame now") != hashed  # a fresh salt every time


@pytest.mark.req("R80")
def test_the_default_config_gives_one_login_per_role_shown_once_and_stored_hashed(tmp_path: Path) -> None:
    path = tmp_path / "var" / "hall.toml"
    config, logins = ensure_config(path)
    assert {role for _, role, _ in logins} == set(Role) - {Role.SYSTEM}
    text = path.read_text()
    for name, role, password in logins:
        check_password_policy(password)  # generated passwords follow the policy (pentest finding 9)
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
        ({"staff": [{"name": "x", "role": "system", "password_hash": hash_password("long enough password")}]}, "not a staff role"),
        ({"staff": [{"name": "x", "role": "croupier", "password_hash": hash_password("long enough password")}]}, "not a staff role"),
        ({"staff": [{"name": "x", "role": "cashier", "password_hash": "plain"}]}, "scrypt$n$r$p$salt$hash"),
        ({"series": [{"number": 1, "face_value_cents": 100, "card_count": 0}]}, "positive"),
        ({"series": "1001"}, "array of tables"),
        ({"connections": {"idle_timeout_s": -1}}, "connections.idle_timeout_s: is a number of seconds above 0"),
        ({"connections": {"per_certificate": 0}}, "connections.per_certificate: is a whole number from 1"),
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
    assert config.connections == ConnectionLimits()  # the example says the defaults


@pytest.mark.parametrize(
    "password, fragment",
    [("1", "at least 12"), ("", "at least 12"), ("short words", "at least 12"), ("123456789012", "not all digits"),
     ("x" * 1001, "at most 1000"), ("\ud800" * 12, "is text")],
)
def test_pentest_9_a_new_password_below_the_policy_is_refused(password: str, fragment: str) -> None:
    """The password ``1`` was accepted; a new password has 12 characters or more, not all digits."""
    with pytest.raises(ConfigError, match=fragment):
        hash_password(password)


def test_pentest_9_generated_passwords_follow_the_policy() -> None:
    for _ in range(200):
        password = generate_password()
        check_password_policy(password)
        assert len(password) >= MIN_PASSWORD_LENGTH


def test_pentest_9_a_config_with_weak_hashes_still_loads_and_the_weakness_is_named(tmp_path: Path) -> None:
    """A hash made before the policy (a short password, a cheap scrypt cost) is not a broken file."""
    import base64
    import hashlib

    salt = b"s" * 16
    cheap = hashlib.scrypt(b"1", salt=salt, n=2**10, r=8, p=1, dklen=32)
    weak = "$".join(["scrypt", str(2**10), "8", "1", base64.b64encode(salt).decode(), base64.b64encode(cheap).decode()])
    config = parse_config(_config(staff=[{"name": "old", "role": "cashier", "password_hash": weak}]))
    member = config.staff_member("old")
    assert member is not None and check_password("1", member.password_hash)
    assert "n=1024" in (weak_hash(weak) or "")
    assert weak_hash(hash_password("long enough password")) is None

"""``bingo hall init-config``, ``hash-password`` and ``add-staff``."""

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hall_server.cli import main
from hall_server.config import check_password, load_config
from server_kit.settings import toml_string


@pytest.mark.req("R80")
def test_init_config_shows_the_logins_once_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "hall.toml"
    first = CliRunner().invoke(main, ["hall", "init-config", "--config", str(path), "--name", "Sala Nord"])
    assert first.exit_code == 0, first.output
    config = load_config(path)
    assert config.name == "Sala Nord"
    rosa_line = next(line for line in first.output.splitlines() if line.strip().startswith("rosa"))
    password = rosa_line.split("password: ")[1]
    member = config.staff_member("rosa")
    assert member is not None and check_password(password, member.password_hash)
    again = CliRunner().invoke(main, ["hall", "init-config", "--config", str(path)])
    assert again.exit_code != 0 and "left as it is" in again.output
    assert load_config(path).staff == config.staff


def test_add_staff_appends_a_hashed_login_and_refuses_a_second_of_the_same_name(tmp_path: Path) -> None:
    path = tmp_path / "hall.toml"
    CliRunner().invoke(main, ["hall", "init-config", "--config", str(path)])
    added = CliRunner().invoke(
        main, ["hall", "add-staff", "lucia", "table_chief", "--licence", "I-AD-7781", "--valid-until", "2030-06-30",
               "--document", "X123", "--config", str(path)],
        input="s3cret passphrase\ns3cret passphrase\n",
    )
    assert added.exit_code == 0, added.output
    member = load_config(path).staff_member("lucia")
    assert member is not None and member.role == "table_chief" and member.document == "X123"
    assert member.licence is not None and (member.licence.number, member.licence.valid_until.isoformat()) == (
        "I-AD-7781", "2030-06-30")
    assert check_password("s3cret passphrase", member.password_hash) and "s3cret" not in path.read_text()
    twice = CliRunner().invoke(main, ["hall", "add-staff", "lucia", "cashier", "--licence", "I-2", "--valid-until",
                                      "2030-01-01", "--config", str(path)], input="x\nx\n")
    assert twice.exit_code != 0 and "exists already" in twice.output
    wrong_role = CliRunner().invoke(main, ["hall", "add-staff", "max", "system", "--licence", "I-3", "--valid-until",
                                           "2030-01-01", "--config", str(path)], input="x\nx\n")
    assert wrong_role.exit_code != 0
    no_licence = CliRunner().invoke(main, ["hall", "add-staff", "max", "cashier", "--config", str(path)],
                                    input="long enough password\nlong enough password\n")
    assert no_licence.exit_code != 0 and "--licence" in no_licence.output and load_config(path).staff_member("max") is None


@pytest.mark.parametrize("name, said", [
    ('mallory"\nrole = "administrator', "without line breaks"),
    ("eve\n[[staff]]\nname = \"root\"", "without line breaks"),
    ("tab\there", "without line breaks"),
    ("del\x7fname", "without line breaks"),
])
def test_add_staff_refuses_a_name_that_is_not_printable_and_leaves_the_file_as_it_was(
        name: str, said: str, tmp_path: Path) -> None:
    """A name the file would have to carry across lines, or with a control character, cannot add a
    login, nor a role, nor break the file: the new file is read as the server reads it before it
    replaces the old one, which stays byte for byte."""
    path = tmp_path / "hall.toml"
    CliRunner().invoke(main, ["hall", "init-config", "--config", str(path)])
    before = path.read_bytes()
    added = CliRunner().invoke(main, ["hall", "add-staff", name, "cashier", "--licence", "I-9", "--valid-until",
                                      "2030-01-01", "--config", str(path)],
                               input="long enough password\nlong enough password\n")
    assert added.exit_code != 0 and said in added.output and str(path) in added.output, added.output
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["hall.toml"]


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_a_toml_string_reads_back_as_the_text_it_was_made_of(text: str) -> None:
    assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in text))  # no lone surrogate is text of a file
    assert tomllib.loads(f"key = {toml_string(text)}")["key"] == text


def test_hash_password_prints_a_hash_that_checks() -> None:
    result = CliRunner().invoke(main, ["hall", "hash-password"], input="three words here\nthree words here\n")
    assert result.exit_code == 0
    assert check_password("three words here", result.output.strip().splitlines()[-1])


@pytest.mark.parametrize("command", [["hash-password"], ["add-staff", "lucia", "cashier", "--licence", "I-1",
                                                         "--valid-until", "2030-01-01"]])
def test_pentest_9_the_commands_refuse_a_password_below_the_policy(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "hall.toml"
    CliRunner().invoke(main, ["hall", "init-config", "--config", str(path)])
    before = path.read_text()
    extra = ["--config", str(path)] if command[0] == "add-staff" else []
    result = CliRunner().invoke(main, ["hall", *command, *extra], input="1\n1\n")
    assert result.exit_code != 0 and "at least 12 characters" in result.output
    assert "scrypt$" not in result.output.split("Repeat for confirmation:")[-1]
    assert path.read_text() == before


def test_serve_with_a_missing_config_file_says_how_to_make_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["hall", "serve", "--config", str(tmp_path / "none.toml")])
    assert result.exit_code != 0 and "init-config" in result.output

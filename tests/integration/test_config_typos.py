"""A misspelt key stops every server that reads it, in one line naming the key and its near miss.

Before, the hall took ``[tls] require_client_certficate = true`` silently and left client
certificates optional, ran on SQLite for a ``[databse]`` meant to name PostgreSQL, and
ignored ``[hall] tiemzone`` and ``[prizes] jackpto``; the regulator's receiver started on
a misspelt register of senders and refused every sender at its hello.  Each file is read
against its declared keys (server_kit/settings.py) before anything is made: the process
prints one line on stderr, no traceback, exits 1 and leaves the folder as it was.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from central_server.config import ConfigError as CentralConfigError
from central_server.config import load_config as load_central
from hall_server.config import DEFAULT_STAFF, ConfigError, default_config_text, hash_password, load_config
from regulator.senders import RegistryError, SenderRegistry
from server_kit.settings import toml_string
from tests.central_server.support import config_text

REPOSITORY = Path(__file__).resolve().parents[2]
_HASH = hash_password("a long enough staff passphrase")

#: The operator's typos: (what is written instead of what, the key's path, the near miss).
HALL_TYPOS = {
    "tls": (("require_client_certificate = false", "require_client_certficate = true"),
            "tls.require_client_certficate", "did you mean require_client_certificate?"),
    "database": (("[listen]", '[databse]\nurl = "postgresql://hall@127.0.0.1:1/hall"\n\n[listen]'),
                 "databse", "did you mean database?"),
    "timezone": (('timezone = "Europe/Andorra"', 'tiemzone = "Europe/Madrid"'), "hall.tiemzone",
                 "did you mean timezone?"),
    "jackpot": (("line_bp = 1500", "line_bp = 1500\njackpto = true"), "prizes.jackpto", "did you mean jackpot?"),
}
CENTRAL_TYPOS = {
    "tls": (("[listen]", "[tls]\nrequire_client_certficate = true\n\n[listen]"), "tls", "is not a table here"),
    "database": (("[database]", "[databse]"), "databse", "did you mean database?"),
    "timezone": (("pki_dir =", 'tiemzone = "Europe/Madrid"\npki_dir ='), "central.tiemzone",
                 "did you mean timezone?"),
    "jackpot": (("basis_points = 2000", "basis_points = 2000\njackpto = true"), "games[0].prizes[0].jackpto",
                "is not a setting here"),
}


def hall_config(folder: Path, typo: str) -> Path:
    (old, new), _, _ = HALL_TYPOS[typo]
    text = default_config_text("Misspelt hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    assert old in text
    path = folder / "hall.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def central_config(folder: Path, typo: str) -> Path:
    (old, new), _, _ = CENTRAL_TYPOS[typo]
    text = config_text(folder, folder / "pki", f"sqlite:///{folder / 'central.sqlite3'}")
    assert old in text
    path = folder / "central.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def senders_file(folder: Path, old: str, new: str) -> Path:
    SenderRegistry(folder).register("hall:hall-1", Ed25519PrivateKey.generate().public_key())
    path = folder / "senders.toml"
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    return path


@pytest.mark.parametrize("typo", HALL_TYPOS)
def test_the_hall_refuses_each_typo_naming_the_key_and_its_near_miss(typo: str, tmp_path: Path) -> None:
    path = hall_config(tmp_path, typo)
    _, key, near = HALL_TYPOS[typo]
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == f"{path}: {key}: is not {'a table' if key == 'databse' else 'a setting'} here; {near}"


@pytest.mark.parametrize(("name", "length"), [("x" * 2_000_000, 2_000_000), ("Sala\nrole = 1", 13)])
def test_a_hall_name_too_long_for_the_board_or_with_a_line_break_is_refused(name: str, length: int,
                                                                            tmp_path: Path) -> None:
    text = default_config_text("Sala", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    path = tmp_path / "hall.toml"
    path.write_text(text.replace('name = "Sala"', f"name = {toml_string(name)}", 1))
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == (f"{path}: hall.name: is printable text of at most 80 characters, without line breaks "
                                  f"or tabs ({length} characters given)")
    path.write_text(text.replace('name = "Sala"', f"name = {toml_string('x' * 80)}", 1))
    assert load_config(path).name == "x" * 80


@pytest.mark.parametrize("typo", CENTRAL_TYPOS)
def test_the_central_server_refuses_each_typo_naming_the_key(typo: str, tmp_path: Path) -> None:
    path = central_config(tmp_path, typo)
    _, key, said = CENTRAL_TYPOS[typo]
    with pytest.raises(CentralConfigError) as refused:
        load_central(path)
    assert str(refused.value).startswith(f"{path}: {key}: ") and said in str(refused.value)


@pytest.mark.parametrize("old, new, key, near", [
    ("[senders.", "[sender.", "sender", "did you mean senders?"),
    ("journal_key =", "jurnal_key =", 'senders."hall:hall-1".jurnal_key', "did you mean journal_key?"),
    ("report_signers =", "report_signer =", 'senders."hall:hall-1".report_signer', "did you mean report_signers?"),
])
def test_the_register_of_senders_refuses_a_typo_naming_the_key_and_its_near_miss(
    old: str, new: str, key: str, near: str, tmp_path: Path
) -> None:
    path = senders_file(tmp_path, old, new)
    with pytest.raises(RegistryError) as refused:
        SenderRegistry(tmp_path).senders()
    assert str(refused.value).startswith(f"{path}: {key}: ") and str(refused.value).endswith(near)


# --- Through the real command line ---------------------------------------------------------


def refused_start(folder: Path, *command: str) -> str:
    """The one line ``command`` (run in ``folder``) printed on stderr when it refused to start."""
    before = sorted(p.name for p in folder.iterdir())
    env = {**os.environ, "BINGO_HOME": str(folder), "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run([sys.executable, *command], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == before, "the refused start made files"
    return lines[0]


BINGO = ("-c", "from hall_server.cli import main; main()")


# One typo a process: the four are read by the same load_config as above, and a start costs seconds.


@pytest.mark.integration
def test_bingo_hall_serve_stops_at_a_typo_in_one_line(tmp_path: Path) -> None:
    path = hall_config(tmp_path, "tls")
    line = refused_start(tmp_path, *BINGO, "hall", "serve", "--config", str(path))
    assert line == (f"Error: {path}: tls.require_client_certficate: is not a setting here; "
                    "did you mean require_client_certificate?")


@pytest.mark.integration
def test_twist_bingo_hall_stops_at_a_typo_in_one_line(tmp_path: Path) -> None:
    path = hall_config(tmp_path, "database")
    line = refused_start(tmp_path, "-m", "twisted", "bingo-hall", "--config", str(path))
    assert line == f"the hall server cannot start: {path}: databse: is not a table here; did you mean database?"


@pytest.mark.integration
def test_bingo_central_serve_stops_at_a_typo_in_one_line(tmp_path: Path) -> None:
    path = central_config(tmp_path, "database")
    line = refused_start(tmp_path, *BINGO, "central", "serve", "--config", str(path))
    assert line == f"Error: the central server cannot start: {path}: databse: is not a table here; did you mean database?"


@pytest.mark.integration
def test_bingo_regulator_serve_stops_at_a_typo_in_its_register_of_senders(tmp_path: Path) -> None:
    home, pki = tmp_path / "regulator", tmp_path / "pki"
    pki.mkdir()
    path = senders_file(home, "journal_key =", "jurnal_key =")
    line = refused_start(home, *BINGO, "regulator", "serve", "--dir", str(home), "--pki", str(pki), "--port", "0",
                         "--no-page")
    assert line == (f'Error: the receiver cannot start: {path}: senders."hall:hall-1".jurnal_key: is not a setting '
                    "here; did you mean journal_key?")


# --- bingo config check: the same readers, before a start ------------------------------------


def config_check(*args: str) -> tuple[int, str]:
    """``bingo config check ARGS`` in this process: its exit code and what it printed."""
    from click.testing import CliRunner

    from hall_server.cli import main

    done = CliRunner().invoke(main, ["config", "check", *args])
    return done.exit_code, done.output.strip()


def test_config_check_passes_each_servers_file_as_its_start_reads_it(tmp_path: Path) -> None:
    hall = tmp_path / "hall.toml"
    hall.write_text(default_config_text("Checked hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0))
    assert config_check(str(hall)) == (0, f"{hall}: a hall configuration: hall 'Checked hall', "
                                          f"{len(DEFAULT_STAFF)} staff logins, database sqlite, listening on 127.0.0.1:0")
    central = tmp_path / "central.toml"
    central.write_text(config_text(tmp_path, tmp_path / "pki", f"sqlite:///{tmp_path / 'central.sqlite3'}"))
    code, said = config_check(str(central))
    assert code == 0 and said.startswith(f"{central}: a central server configuration: "), said
    home = tmp_path / "regulator"
    SenderRegistry(home).register("hall:hall-1", Ed25519PrivateKey.generate().public_key())
    assert config_check(str(home / "senders.toml")) == (
        0, f"{home / 'senders.toml'}: the regulator's receiver's senders: 1 registered (hall:hall-1)")


@pytest.mark.parametrize("typo", HALL_TYPOS)
def test_config_check_refuses_each_hall_typo_with_the_servers_own_line(typo: str, tmp_path: Path) -> None:
    path = hall_config(tmp_path, typo)
    _, key, near = HALL_TYPOS[typo]
    code, said = config_check(str(path))
    assert code == 1 and said == f"Error: {path}: {key}: is not {'a table' if key == 'databse' else 'a setting'} here; {near}"


@pytest.mark.parametrize("typo", CENTRAL_TYPOS)
def test_config_check_refuses_each_central_typo_naming_the_key(typo: str, tmp_path: Path) -> None:
    path = central_config(tmp_path, typo)
    _, key, near = CENTRAL_TYPOS[typo]
    code, said = config_check(str(path))
    assert code == 1 and said.startswith(f"Error: {path}: {key}: ") and near in said, said


def test_config_check_refuses_a_typo_in_the_register_of_senders_and_what_it_cannot_tell(tmp_path: Path) -> None:
    path = senders_file(tmp_path, "journal_key =", "jurnal_key =")
    code, said = config_check(str(path))
    assert code == 1 and said.endswith("did you mean journal_key?"), said
    # Another name: the server is named with --server, and the file is read as that server reads it.
    other = tmp_path / "nord.toml"
    other.write_text('[listen]\nport = 1\n')
    code, said = config_check(str(other))
    assert code == 1 and "name it with --server central or hall or regulator" in said, said
    code, said = config_check("--server", "hall", str(other))
    assert code == 1 and said.startswith(f"Error: {other}: "), said
    code, said = config_check("--server", "casino", str(other))
    assert code == 1 and "there is no 'casino' server installed here" in said, said
    missing = tmp_path / "hall.toml"
    code, said = config_check(str(missing))
    assert code == 1 and str(missing) in said and "no such" in said.lower(), said
    other.write_text("[hall\n")
    code, said = config_check("--server", "central", str(other))
    assert code == 1 and "not valid TOML" in said, said
    assert config_check(str(tmp_path)) == (1, f"Error: {tmp_path}: a folder, not a configuration file")


@pytest.mark.parametrize("name", ["hall.toml", "central.toml", "senders.toml"])
@pytest.mark.parametrize("content, said", [
    (b"\xff\xfe[hall]\n", "not UTF-8 text"),
    (b"a = " + b"[" * 5_000, "nested too deeply"),
])
def test_a_file_of_garbage_stops_each_reader_with_one_line(name: str, content: bytes, said: str, tmp_path: Path) -> None:
    """Not UTF-8, or nested deeper than the parser goes: the start's reader says so in one line,
    never an internal fault with a traceback."""
    path = tmp_path / name
    path.write_bytes(content)
    code, output = config_check(str(path))
    assert code == 1 and said in output and "internal fault" not in output, output
    assert len(output.splitlines()) == 1

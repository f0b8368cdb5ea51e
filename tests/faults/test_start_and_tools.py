"""Starts that are refused make nothing, tools that read make nothing, files that would kill the
process are refused first, and a lost link is not called a refusal.

* ``[database] url`` naming a folder that does not exist is refused, and the folder is not made;
* a start refused after it began making things (a database server that does not answer on a
  first start) removes what it made: no keys, no authority, no certificates;
* an immutable ``-shm`` (or database, or ``-wal``) is refused at the start with the file named,
  and no connection is ever made to it: SQLite maps the ``-shm``, and touching the mapping of an
  immutable file ends the process with SIGBUS;
* ``bingo journal verify`` in a folder that holds no hall (a central server's) says so and
  leaves no ``hall.sqlite3`` behind;
* a connection to the central server lost before it answered ``hello`` is logged as what it is,
  not as "the central server refused this hall's hello" at error level.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from twisted.internet import defer
from twisted.internet.error import ConnectionDone
from twisted.internet.testing import MemoryReactorClock
from twisted.logger import LogLevel, capturedLogs

from hall_server.cli import main
from hall_server.config import DEFAULT_STAFF, default_config_text, load_config
from hall_server.provision import preflight
from hall_server.tap import build_hall
from server_kit.db.database import DatabaseError
from server_kit.keys import load_journal_key
from server_kit.ports import reserve_port
from tests.faults.support import chattr
from tests.web.conftest import _HASH

pytestmark = pytest.mark.integration


def hall_config(folder: Path, url: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = default_config_text("Start hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    if url is not None:
        text += f'\n[database]\nurl = "{url}"\n'
    path = folder / "hall.toml"
    path.write_text(text)
    return path


def everything(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


def test_N7_a_database_url_naming_a_missing_folder_is_refused_and_the_folder_is_not_made(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "hall.sqlite3"
    config = load_config(hall_config(tmp_path / "hall", f"sqlite:///{missing}"))
    with pytest.raises(DatabaseError, match=f"the folder {missing.parent} does not exist"):
        build_hall(config, MemoryReactorClock())
    assert not missing.parent.exists()
    assert everything(tmp_path / "hall") == [tmp_path / "hall" / "hall.toml"]


def test_N7_a_first_start_refused_half_way_removes_what_it_made(tmp_path: Path) -> None:
    port = reserve_port()  # nothing listens there: the database server does not answer
    config = load_config(hall_config(tmp_path / "hall", f"postgresql+psycopg://bingo@127.0.0.1:{port}/hall"
                                                        "?connect_timeout=5"))
    with pytest.raises(DatabaseError, match=f"127.0.0.1:{port}"):
        build_hall(config, MemoryReactorClock())
    # The authority, the certificates and the release manifest it made first are gone again.
    assert everything(tmp_path / "hall") == [tmp_path / "hall" / "hall.toml"]


def test_N3_an_immutable_shared_memory_file_is_refused_at_start_with_the_file_named(tmp_path: Path) -> None:
    import sqlite3

    folder = tmp_path / "hall"
    config = load_config(hall_config(folder))
    database = folder / "hall.sqlite3"
    keeper = sqlite3.connect(database)
    keeper.execute("PRAGMA journal_mode=WAL")
    keeper.execute("CREATE TABLE t (x)")  # the -wal and -shm files exist while a connection is open
    shm = folder / "hall.sqlite3-shm"
    assert shm.exists()
    chattr("+i", shm)
    try:
        with pytest.raises(DatabaseError, match=f"{shm} is immutable"):
            preflight(config)
        # No connection is made to it either (this would end the process with SIGBUS): in a child process.
        probe = subprocess.run(
            [sys.executable, "-c", "import sys\nfrom server_kit.db.database import create\n"
             "from server_kit.db.faults import StorageUnavailable\n"
             f"engine = create({f'sqlite:///{database}'!r})\n"
             "try:\n    engine.connect()\nexcept StorageUnavailable as fault:\n    print(fault)\n    sys.exit(3)\n"],
            capture_output=True, text=True, timeout=60)
        assert probe.returncode == 3 and f"{shm} is immutable" in probe.stdout, (probe.returncode, probe.stderr)
    finally:
        chattr("-i", shm)
        keeper.close()


def test_N7_journal_verify_in_a_central_servers_folder_says_it_holds_no_hall_and_makes_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    central = tmp_path / "central"
    load_journal_key(central / "keys" / "journal-signing.pem", create=True)
    (central / "central.sqlite3").write_bytes(b"")
    monkeypatch.setenv("BINGO_HOME", str(central))
    monkeypatch.delenv("BINGO_DB", raising=False)
    before = everything(central)
    verified = CliRunner().invoke(main, ["journal", "verify"])
    assert verified.exit_code == 1, verified.output
    assert f"there is no hall database in {central}" in verified.output
    assert everything(central) == before


def test_N7_a_link_lost_before_the_hello_was_answered_is_no_refusal() -> None:
    from hall_server.network.relay import NetworkRelay

    class Module:
        relay_hold: Any = None
        relay_failure: Any = None
        link_up: Any = None
        core = type("Core", (), {"after_commit": [], "observers": [], "journal": type("J", (), {"last": None})(),
                                 "now_ms": lambda self: 1_780_000_000_000})()

    class LostPort:
        def call(self, name: str, arguments: Any) -> defer.Deferred[Any]:
            return defer.fail(ConnectionDone("Connection was closed cleanly."))

        def close(self) -> None:
            pass

    relay = NetworkRelay(Module(), "hall-1", MemoryReactorClock(), software="test")  # type: ignore[arg-type]
    with capturedLogs() as events:
        failed: list[Any] = []
        relay.connected(LostPort()).addErrback(failed.append)
    assert failed and failed[0].check(ConnectionDone)
    said = [(event["log_level"], event["log_format"]) for event in events]
    assert not any("refused" in text for _, text in said), said
    assert [level for level, text in said if "before it answered hello" in text] == [LogLevel.info]


def test_N7_a_central_server_whose_database_does_not_answer_makes_nothing_not_even_its_key(tmp_path: Path) -> None:
    from central_server.config import load_config as load_central
    from central_server.tap import build_central
    from tests.central_server.support import config_text, make_pki

    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    port = reserve_port()
    url = f"postgresql+psycopg://bingo@127.0.0.1:{port}/central?connect_timeout=5"
    (home / "central.toml").write_text(config_text(home, pki_dir, url))
    with pytest.raises(DatabaseError, match=f"127.0.0.1:{port}"):
        build_central(load_central(home / "central.toml"), MemoryReactorClock())
    assert everything(home) == [home / "central.toml"]

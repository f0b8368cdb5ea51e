"""What the hall server checks before it serves (pentest findings 4, 5 and 14): the
journal whole against its signed head, a new journal only on a fresh hall, the hall's
folder private to the server, and the certificate authority's key kept out of the
server's PKI folder."""

from __future__ import annotations

from contextlib import closing
import json
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.testing import MemoryReactorClock

from hall_server.config import load_config
from hall_server.store.database import open_database
from hall_server.tap import build_hall
from server_kit.boot import StartRefused
from protocol.chain import canonical_json, head_body, seal, sign_head
from protocol.records.game import BallDrawn
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from tests.web.conftest import ALL_BALLS, REPO, HallProcess
from tests.web.test_server_process import Staff

pytestmark = [pytest.mark.integration]


def _serve(folder: Path) -> subprocess.CompletedProcess[str]:
    """``bingo hall serve`` on ``folder``, expected to stop by itself."""
    command = [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve",
               "--config", str(folder / "hall.toml")]
    return subprocess.run(command, cwd=folder, env={"BINGO_HOME": str(folder), "PYTHONPATH": str(REPO),
                                                    "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.req("R92.3")
def test_pentest_4_an_altered_posting_stops_the_start_with_one_line_naming_the_record(tmp_path: Path) -> None:
    """The attack: a posting's amount raised in the database, then the server served on it.

    The server is killed, so no checkpoint stands after the posting: the start verifies
    it (a posting before a checkpoint is the pre-session verification's to find, below)."""
    hall = HallProcess(tmp_path).start()
    try:
        staff = Staff(hall)
        staff("admin", "run_verification", date="2026-11-29")
        staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
        staff("rosa", "sign_session_opening")
        staff("admin", "sign_session_opening")
        records = staff("carla", "open_cash_desk", desk="desk-1", float_cents=8_000)["records"]
    finally:
        hall.kill()
    (posting,) = [r["seq"] for r in records if r["type"] == "posting"]
    with closing(sqlite3.connect(tmp_path / "hall.sqlite3")) as database, database:
        database.execute("UPDATE journal SET payload = replace(payload, '8000', '80000') WHERE seq = ?", (posting,))
    refused = _serve(tmp_path)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"Error: the journal does not verify: record {posting}: its content does not match its hash (altered); "
        "the hall server does not serve on a broken journal (bingo journal verify; docs/journal.md)\n"
    )
    assert "Caller console at" not in refused.stdout


# --- start-up against the signed head, in process -------------------------------------------


@pytest.fixture
def started(tmp_path: Path) -> Path:
    """A hall folder after a first start, its journal grown to 10 records."""
    HallProcess(tmp_path)  # writes the small test configuration
    build_hall(load_config(tmp_path / "hall.toml"), MemoryReactorClock())
    journal = _journal(tmp_path)
    for n in range(2, 11):
        journal.append(1_790_000_000_000 + n, [BallDrawn("g1", n, n)])
    return tmp_path


def _journal(folder: Path) -> Journal:
    engine = open_database(f"sqlite:///{folder / 'hall.sqlite3'}")
    return Journal(engine, load_journal_key(folder / "keys" / "journal-signing.pem"), head=folder / "journal.head")


def _start(folder: Path) -> str:
    with pytest.raises(StartRefused) as refused:
        build_hall(load_config(folder / "hall.toml"), MemoryReactorClock())
    return str(refused.value)


def _cut(folder: Path, first: int) -> None:
    with closing(sqlite3.connect(folder / "hall.sqlite3")) as database, database:
        database.execute("DELETE FROM journal WHERE seq >= ?", (first,))


@pytest.mark.req("R92.3")
def test_the_first_start_opens_the_journal_and_later_starts_verify_it(started: Path) -> None:
    (opening,) = [r for r in _journal(started).records() if r.seq == 1]
    assert opening.type == "journal_opened" and opening.payload["hall"] == "Loopback hall"
    hall = build_hall(load_config(started / "hall.toml"), MemoryReactorClock())
    assert hall.core.seq == 10


@pytest.mark.req("R92.3")
def test_pentest_5_records_cut_from_the_end_stop_the_start(started: Path) -> None:
    _cut(started, 8)
    assert "record 8: is missing: the journal ends at 7 but its head says 10" in _start(started)


@pytest.mark.req("R92.3")
def test_pentest_5_a_deleted_head_stops_the_start_instead_of_a_fresh_journal(started: Path) -> None:
    _cut(started, 8)
    (started / "journal.head").unlink()
    assert f"the journal head file {started / 'journal.head'} is missing but the journal holds 7 records" in _start(started)
    assert len(list(_journal(started).records())) == 7  # nothing written


@pytest.mark.req("R92.3")
def test_pentest_5_a_head_rewritten_with_an_old_seq_or_another_key_stops_the_start(started: Path) -> None:
    seven = next(r for r in _journal(started).records() if r.seq == 7)
    _cut(started, 8)
    head = started / "journal.head"
    head.write_text(json.dumps({"seq": 7, "hash": seven.hash}))
    assert "is not a signed head (unsigned, or rewritten by hand)" in _start(started)
    forged = Ed25519PrivateKey.generate().sign(head_body(7, seven.hash)).hex()
    head.write_text(json.dumps({"format": "bingo-journal-head/1", "seq": 7, "hash": seven.hash, "signature": forged}))
    assert "(record 7) is not signed by the journal's key (rewritten or forged)" in _start(started)


@pytest.mark.req("R92.3")
def test_pentest_5_an_emptied_journal_with_its_head_is_not_started_afresh(started: Path) -> None:
    _cut(started, 1)
    assert "record 1: is missing: the journal ends at 0 but its head says 10" in _start(started)
    assert list(_journal(started).records()) == []


# --- the hall's folder (finding 14) ----------------------------------------------------------


@pytest.mark.req("R92.3")
def test_pentest_14_after_a_first_start_the_hall_folder_is_the_servers_alone(tmp_path: Path) -> None:
    folder = tmp_path / "var"
    folder.mkdir(mode=0o755)
    hall = HallProcess(folder)
    (folder / "hall.toml").chmod(0o644)  # as an editor would leave it
    hall.start()
    hall.stop()
    modes = {path.relative_to(folder).as_posix(): stat.S_IMODE(path.stat().st_mode) for path in folder.rglob("*")}
    for name in ("hall.toml", "hall.sqlite3", "journal.head", "keys/journal-signing.pem", "keys/card-code.key",
                 "pki/keys/hall-server.key", "operator-ca/ca.key", "terminal-certs/terminal-1/keys/terminal-1.key"):
        assert modes[name] == 0o600, name
    loose = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o700 if (folder / name).is_dir() else 0o600)}
    assert loose == {} and stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.req("R92.3")
def test_pentest_14_the_ca_key_stays_out_of_the_servers_pki_folder_and_the_log_says_where(tmp_path: Path) -> None:
    hall = HallProcess(tmp_path).start()
    hall.stop()
    assert not (tmp_path / "pki" / "ca.key").exists()
    assert (tmp_path / "operator-ca" / "ca.key").exists()
    log = hall.output.decode()
    assert f"THE CERTIFICATE AUTHORITY'S PRIVATE KEY IS ON THIS SERVER: {tmp_path / 'operator-ca' / 'ca.key'}" in log
    assert "Move the folder" in log and "offline machine" in log


# --- every record read through its declaration (protocol/records) --------------------------------


def _write_past_the_declarations(folder: Path, type: str, payload: dict[str, object]) -> int:
    """A record sealed with the hall's own key and put straight into the table, with its head:
    the chain verifies, only the declaration can tell it is wrong."""
    journal = _journal(folder)
    assert journal.last is not None
    record = seal(journal.key, journal.last, journal.last.time_ms + 1, type, payload)
    with closing(sqlite3.connect(folder / "hall.sqlite3")) as database, database:
        database.execute(
            "INSERT INTO journal (seq, time_ms, type, payload, prev, hash, signature) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (record.seq, record.time_ms, record.type, canonical_json(record.payload).decode(), record.prev,
             record.hash, record.signature),
        )
    (folder / "journal.head").write_text(json.dumps(sign_head(journal.key, record).to_dict()))
    assert _journal(folder).verify() == record.seq
    return record.seq


@pytest.mark.parametrize(
    ("type", "payload", "reason"),
    [
        ("ball_drawn", {"type": "ball_drawn", "game_id": "g1", "ball": "11", "ball_count": 11},
         'ball: is a whole number, not the string "11"'),
        ("ball_drawn", {"type": "ball_drawn", "game_id": "g1", "ball": 11, "ball_count": 11, "bal": 3},
         "bal: is not a field of this record type"),
        ("cash_paid_in", {"amount": 100}, "no such record type is declared"),
    ],
)
def test_a_signed_record_that_does_not_parse_stops_the_start_naming_its_seq(
    started: Path, type: str, payload: dict[str, object], reason: str
) -> None:
    seq = _write_past_the_declarations(started, type, payload)
    refused = _start(started)
    assert refused.startswith(f"the journal does not parse: record {seq} ({type}): {reason}")
    assert refused.endswith("; the hall server does not serve on a journal it cannot read (docs/journal.md)")


def test_a_signed_record_with_a_bad_field_makes_the_server_exit_1_with_one_line(started: Path) -> None:
    seq = _write_past_the_declarations(started, "session_opened", {"session": 1, "date": "2026-12-01", "dtae": "x"})
    refused = _serve(started)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f"Error: the journal does not parse: record {seq} (session_opened): dtae: is not a field of this record type"
    )
    assert refused.stderr.count("\n") == 1 and "Caller console at" not in refused.stdout

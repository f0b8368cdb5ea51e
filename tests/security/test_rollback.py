"""A hall rolled back (pentest finding N7): its journal verifies, but what it reported to the
outside cannot be rolled back with it.

Real processes: a hall server (``bingo hall serve``) feeding the reference receiver
(``bingo regulator serve``) over mutual TLS, and a hall linked to a central server
(``bingo central serve``).  A hall started on an earlier copy of its folder, or on its
journal cut back with the head signed again by the hall's own key and the checkpoints
deleted, or rewritten from a record on, stops with one sentence once the receiver or the
central server says it holds more (docs/security.md, "A hall rolled back")."""

from __future__ import annotations

from contextlib import closing
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text
from protocol.chain import Record, canonical_json, seal, sign_head
from protocol.records.game import BallDrawn
from server_kit.keys import journal_key_path, load_journal_key
from server_kit.pki import export_bundle, init_authority, issue_certificate
from server_kit.ports import reserve_port
from tests.central_server.support import CentralProcess, config_text
from tests.network.processes import hall_toml
from tests.regulator.registration import register_in
from tests.regulator.test_feed_processes import ReceiverProcess, journal_of
from tests.support.waiting import START, WAIT, wait_until
from tests.web.conftest import _HASH, PASSWORD, HallProcess, HttpClient

pytestmark = [pytest.mark.integration]
SENDER = "hall:hall-server"


def command(hall: HallProcess, name: str, command: str, **args: object) -> None:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": PASSWORD})
    assert status == 200, answer
    status, answer = client.call("POST", "/api/command", {"id": f"{command}-{os.urandom(4).hex()}", "command": command,
                                                          "args": args})
    assert status == 200 and answer["ok"], answer


def refused_start(folder: Path) -> str:
    """``bingo hall serve`` on ``folder``, which must end by itself with status 1; what it said."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve", "--config",
         str(folder / "hall.toml")],
        cwd=folder, env={**os.environ, "BINGO_HOME": str(folder)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        output, _ = process.communicate(timeout=START)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"the hall server served on and did not stop by itself:\n{output.decode()}") from None
    assert process.returncode == 1, output.decode()
    return output.decode()


def register_with_receiver(home: Path, folder: Path) -> None:
    """The regulator registers the hall's journal key with its receiver."""
    register_in(home, SENDER, load_journal_key(journal_key_path(folder)))


def error_line(output: str) -> str:
    (line,) = [line for line in output.splitlines() if line.startswith("Error: ")]
    return line


def cut_and_sign(folder: Path, last: int) -> None:
    """Records after ``last`` cut, the head signed again with the hall's own key, the checkpoints deleted."""
    with closing(sqlite3.connect(folder / "hall.sqlite3")) as database, database:
        database.execute("DELETE FROM journal WHERE seq > ?", (last,))
        row = database.execute("SELECT seq, time_ms, type, payload, prev, hash, signature FROM journal WHERE seq = ?",
                               (last,)).fetchone()
    record = Record(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])
    key = load_journal_key(folder / "keys" / "journal-signing.pem")
    (folder / "journal.head").write_text(json.dumps(sign_head(key, record).to_dict()))
    shutil.rmtree(folder / "checkpoints", ignore_errors=True)


# --- the regulator's receiver --------------------------------------------------------------------


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, ReceiverProcess]]:
    """A hall whose receiver acknowledged its whole journal, and an earlier copy of its folder."""
    root = tmp_path_factory.mktemp("rollback")
    port = reserve_port()
    folder = root / "hall"
    folder.mkdir()
    config = default_config_text("Fed hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    config = config.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    (folder / "hall.toml").write_text(config + f'\n[regulator]\nhost = "localhost"\nport = {port}\nhall_id = "hall-server"\n')
    hall = HallProcess(folder).start()  # its first start makes the authority the receiver's certificate comes from
    hall.certificate("regulator", "regulator")
    export_bundle(folder / "operator-ca", "regulator", root / "regulator-pki")
    register_with_receiver(root / "regulator", folder)
    receiver = ReceiverProcess(root / "regulator", root / "regulator-pki", port).start()
    try:
        command(hall, "carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
        wait_until(lambda: receiver.held() == journal_of(hall), WAIT, "the receiver to hold the hall's journal")
        hall.stop()
        early = root / "early"
        shutil.copytree(folder, early)  # a copy of the folder, as a backup would keep it
        hall.start()
        command(hall, "carla", "top_up_float", desk="desk-1", amount_cents=10_000)
        command(hall, "carla", "top_up_float", desk="desk-1", amount_cents=20_000)
        wait_until(lambda: receiver.held() == journal_of(hall), WAIT, "the receiver to hold the records after the copy")
        hall.stop()
        assert len(journal_of(HallProcess(early))) < len(receiver.held())
        yield folder, early, receiver
    finally:
        hall.stop()
        receiver.kill()


@pytest.mark.req("R92.3")
def test_N7_an_earlier_copy_of_the_folder_stops_once_the_receiver_says_it_holds_more(
    reported: tuple[Path, Path, ReceiverProcess], tmp_path: Path
) -> None:
    folder, early, receiver = reported
    copy = tmp_path / "hall"
    shutil.copytree(early, copy)
    held = receiver.held()
    ends = len(journal_of(HallProcess(copy)))
    said = refused_start(copy)
    port = re.search(r'port = (\d+)\nhall_id = "hall-server"', (copy / "hall.toml").read_text()).group(1)  # type: ignore[union-attr]
    assert error_line(said) == (
        f"Error: the regulator's receiver at localhost:{port} holds {len(held)} records of this journal, reported to "
        f"it before, but the journal here ends at record {ends}: the folder was rolled back (an earlier copy of it, or "
        "records cut from its end); the hall server does not serve on it (docs/security.md)"
    )
    assert receiver.held() == held and receiver.alerts() == []  # nothing of the copy was sent


@pytest.mark.req("R92.3")
def test_N7_records_cut_the_head_signed_again_and_the_checkpoints_deleted_stop_the_start(
    reported: tuple[Path, Path, ReceiverProcess], tmp_path: Path
) -> None:
    folder, _, receiver = reported
    copy = tmp_path / "hall"
    shutil.copytree(folder, copy)
    held = receiver.held()
    cut_and_sign(copy, len(held) - 3)  # a float topped up, forgotten
    said = refused_start(copy)
    assert f"holds {len(held)} records of this journal, reported to it before, but the journal here ends at record " \
           f"{len(held) - 3}: the folder was rolled back" in error_line(said)
    assert receiver.held() == held and receiver.alerts() == []


@pytest.mark.req("R92.3")
def test_N7_a_journal_rewritten_from_a_record_on_stops_the_start(
    reported: tuple[Path, Path, ReceiverProcess], tmp_path: Path
) -> None:
    """As long as the journal the receiver holds, signed with the hall's key, and different from a record on."""
    folder, _, receiver = reported
    copy = tmp_path / "hall"
    shutil.copytree(folder, copy)
    held = receiver.held()
    cut_and_sign(copy, len(held) - 3)
    key = load_journal_key(copy / "keys" / "journal-signing.pem")
    with closing(sqlite3.connect(copy / "hall.sqlite3")) as database, database:
        row = database.execute("SELECT seq, time_ms, type, payload, prev, hash, signature FROM journal ORDER BY seq DESC "
                               "LIMIT 1").fetchone()
        last = Record(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])
        for ball in (1, 2, 3):
            last = seal(key, last, last.time_ms + 1, "ball_drawn", BallDrawn("g1", ball, ball).to_payload())
            database.execute("INSERT INTO journal (seq, time_ms, type, payload, prev, hash, signature) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", (last.seq, last.time_ms, last.type,
                                                              canonical_json(last.payload).decode(), last.prev,
                                                              last.hash, last.signature))
    (copy / "journal.head").write_text(json.dumps(sign_head(key, last).to_dict()))
    said = refused_start(copy)
    assert f"holds record {len(held)} of this journal with another hash than the record here: the journal was " \
           "rewritten from there" in error_line(said)
    assert receiver.held() == held and receiver.alerts() == []


# --- the central server ---------------------------------------------------------------------------


@pytest.mark.req("R92.3")
def test_N7_a_hall_cut_back_stops_once_the_central_server_says_what_the_hall_said_before(tmp_path: Path) -> None:
    operator = tmp_path / "operator-pki"
    init_authority(operator, "Acme Bingo Network")
    issue_certificate(operator, "central", "central-a")
    issue_certificate(operator, "server", "hall-1")
    central_home = tmp_path / "central"
    export_bundle(operator, "central-a", central_home / "pki")
    (central_home / "central.toml").write_text(config_text(
        central_home, central_home / "pki", f"sqlite:///{central_home / 'central.sqlite3'}", games=(),
        halls=("hall-1",)))
    folder = tmp_path / "hall-1"
    export_bundle(operator, "hall-1", folder / "pki")
    central = CentralProcess(central_home / "central.toml").start()
    hall = HallProcess(folder)
    try:
        (folder / "hall.toml").write_text(hall_toml("hall-1", central.port))
        hall.start()
        command(hall, "carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
        hall.stop()
        said = len(journal_of(hall))
        hall.start()  # its hello says the journal's last record
        heard = re.compile(rf"Hall hall-1 said hello \(.*\), protocol version \d+, its journal at record {said}\b".encode())
        wait_until(lambda: heard.search(central.output), WAIT, "the central server to hear the hall's journal")
        hall.stop()
        cut_and_sign(folder, said - 2)
        refused = refused_start(folder)
        assert error_line(refused) == (
            f"Error: the central server central-a holds {said} records of this journal, reported to it before, but the "
            f"journal here ends at record {said - 2}: the folder was rolled back (an earlier copy of it, or records cut "
            "from its end); the hall server does not serve on it (docs/security.md)"
        )
    finally:
        hall.stop()
        central.stop()

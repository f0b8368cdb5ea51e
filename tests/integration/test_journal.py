"""The journal: every alteration, removal, insertion or reordering is found and named."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

from hall_server.cli import main
from hall_server.store.database import open_database
from protocol.chain import ChainError, head_body
from protocol.records import RecordError
from protocol.records.game import BallDrawn
from server_kit.journal.sql import Journal, JournalStateError
from server_kit.keys import load_journal_key, public_pem

pytestmark = [pytest.mark.integration]


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Journal:
    monkeypatch.setenv("BINGO_HOME", str(tmp_path / "var"))
    engine = open_database(f"sqlite:///{tmp_path / 'var' / 'hall.sqlite3'}")
    home = tmp_path / "var"
    j = Journal(engine, load_journal_key(home / "keys" / "journal-signing.pem", create=True), head=home / "journal.head")
    for n in range(1, 11):
        j.append(1_700_000_000_000 + n, [BallDrawn("g1", n, n)])
    return j


def sql(journal: Journal, statement: str) -> None:
    with journal.engine.begin() as connection:
        connection.exec_driver_sql(statement)


def test_an_untouched_journal_verifies(journal: Journal) -> None:
    assert journal.verify() == 10
    records = list(journal.records())
    assert [r.seq for r in records] == list(range(1, 11))
    assert all(b.prev == a.hash for a, b in zip(records, records[1:]))


def test_records_appended_together_commit_together(journal: Journal) -> None:
    with pytest.raises(Exception):
        journal.append(5, [BallDrawn("g1", 11, 11)], extra=lambda connection: connection.execute(text("SELECT * FROM nowhere")))
    assert journal.verify() == 10 and journal.last.seq == 10


@pytest.mark.req("R92.3")
@pytest.mark.parametrize(
    "tamper, message",
    [
        ("UPDATE journal SET payload = replace(payload, '\"ball\":4', '\"ball\":44') WHERE seq = 4", "record 4: its content does not match its hash"),
        ("DELETE FROM journal WHERE seq = 6", "record 6: is missing: the journal jumps from 5 to 7"),
        ("UPDATE journal SET seq = 100 WHERE seq = 3", "record 3: is missing"),
        ("UPDATE journal SET seq = -seq WHERE seq IN (7, 8); UPDATE journal SET seq = 8 WHERE seq = -7; UPDATE journal SET seq = 7 WHERE seq = -8", "record 7: its content does not match its hash"),
        ("DELETE FROM journal WHERE seq = 10", "record 10: is missing: the journal ends at 9 but its head says 10"),
    ],
)
def test_tampering_is_found_and_named(journal: Journal, tamper: str, message: str) -> None:
    for statement in tamper.split("; "):
        sql(journal, statement)
    with pytest.raises(ChainError) as error:
        journal.verify()
    assert str(error.value).startswith(message)


@pytest.mark.req("R92.3")
def test_a_resealed_record_fails_its_signature(journal: Journal) -> None:
    """An attacker who recomputes the hash still cannot sign without the key."""
    import hashlib

    record = next(r for r in journal.records() if r.seq == 5)
    forged_body = record.body.replace(b'"ball":5', b'"ball":55')
    forged_hash = hashlib.sha256(forged_body).hexdigest()
    sql(journal, f"UPDATE journal SET payload = replace(payload, '\"ball\":5', '\"ball\":55'), hash = '{forged_hash}' WHERE seq = 5")
    with pytest.raises(ChainError, match="record 5: its signature does not verify"):
        journal.verify()


@pytest.mark.req("R92.3")
def test_an_inserted_record_breaks_the_chain(journal: Journal) -> None:
    """Make room at 5 and insert a validly signed record sealed after record 4."""
    from protocol.chain import seal

    for seq in range(10, 4, -1):
        sql(journal, f"UPDATE journal SET seq = {seq + 1} WHERE seq = {seq}")
    four = next(r for r in journal.records() if r.seq == 4)
    forged = seal(journal.key, four, four.time_ms, "ball_drawn", {"game_id": "g1", "ball": 77, "count": 5})
    sql(
        journal,
        "INSERT INTO journal (seq, time_ms, type, payload, prev, hash, signature) VALUES "
        f"(5, {forged.time_ms}, 'ball_drawn', '{{\"ball\":77,\"count\":5,\"game_id\":\"g1\"}}', "
        f"'{forged.prev}', '{forged.hash}', '{forged.signature}')",
    )
    with pytest.raises(ChainError, match="record 6: its content does not match its hash"):
        journal.verify()


@pytest.mark.req("R92.3")
def test_a_record_verifies_with_stock_openssl(journal: Journal, tmp_path: Path) -> None:
    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'var' / 'hall.sqlite3'}"
    result = runner.invoke(main, ["--db", url, "journal", "verify"])
    assert result.exit_code == 0 and "10 record(s) verified" in result.output
    result = runner.invoke(main, ["--db", url, "journal", "export-record", "7", "--dir", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    (tmp_path / "pub.pem").write_bytes(public_pem(journal.key))
    check = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(tmp_path / "pub.pem"), "-rawin",
         "-in", str(tmp_path / "out" / "record-7.body"), "-sigfile", str(tmp_path / "out" / "record-7.sig")],
        capture_output=True, text=True,
    )
    assert check.returncode == 0 and "Signature Verified Successfully" in check.stdout
    body = (tmp_path / "out" / "record-7.body").read_bytes()
    (tmp_path / "out" / "record-7.body").write_bytes(body.replace(b'"ball":7', b'"ball":8'))
    forged = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(tmp_path / "pub.pem"), "-rawin",
         "-in", str(tmp_path / "out" / "record-7.body"), "-sigfile", str(tmp_path / "out" / "record-7.sig")],
        capture_output=True, text=True,
    )
    assert forged.returncode != 0
    sql(journal, "DELETE FROM journal WHERE seq = 2")
    result = runner.invoke(main, ["--db", url, "journal", "verify"])
    assert result.exit_code == 1 and "record 2: is missing" in result.output


# --- The signed head (pentest finding 5) ---------------------------------------------------


def cut_from_end(journal: Journal, first: int) -> None:
    """Records ``first``.. removed, as the attacker removed a payment and a cash-out."""
    sql(journal, f"DELETE FROM journal WHERE seq >= {first}")


def verify_cli(tmp_path: Path) -> Any:
    return CliRunner().invoke(main, ["--db", f"sqlite:///{tmp_path / 'var' / 'hall.sqlite3'}", "journal", "verify"])


@pytest.mark.req("R92.3")
def test_pentest_5_records_cut_from_the_end_are_found_against_the_head(journal: Journal, tmp_path: Path) -> None:
    cut_from_end(journal, 8)
    with pytest.raises(ChainError, match="record 8: is missing: the journal ends at 7 but its head says 10"):
        journal.verify()
    outcome = verify_cli(tmp_path)
    assert outcome.exit_code == 1 and "record 8: is missing: the journal ends at 7 but its head says 10" in outcome.output


@pytest.mark.req("R92.3")
def test_pentest_5_a_deleted_head_is_an_error_not_a_fresh_start(journal: Journal, tmp_path: Path) -> None:
    cut_from_end(journal, 8)
    journal.head.unlink()
    message = f"the journal head file {journal.head} is missing but the journal holds 7 records"
    with pytest.raises(ChainError, match=message):
        journal.verify()
    outcome = verify_cli(tmp_path)
    assert outcome.exit_code == 1 and message in outcome.output and outcome.output.count("\n") == 1


def _old_head_unsigned(journal: Journal, seven: Any) -> str:
    return json.dumps({"seq": seven.seq, "hash": seven.hash})


def _old_head_signed_by_another_key(journal: Journal, seven: Any) -> str:
    signature = Ed25519PrivateKey.generate().sign(head_body(seven.seq, seven.hash)).hex()
    return json.dumps({"format": "bingo-journal-head/1", "seq": seven.seq, "hash": seven.hash, "signature": signature})


def _old_head_with_the_current_signature(journal: Journal, seven: Any) -> str:
    current = json.loads(journal.head.read_text())
    return json.dumps({**current, "seq": seven.seq, "hash": seven.hash})


@pytest.mark.req("R92.3")
@pytest.mark.parametrize(
    "rewrite, message",
    [
        (_old_head_unsigned, "is not a signed head (unsigned, or rewritten by hand)"),
        (_old_head_signed_by_another_key, "(record 7) is not signed by the journal's key (rewritten or forged)"),
        (_old_head_with_the_current_signature, "(record 7) is not signed by the journal's key (rewritten or forged)"),
        (lambda journal, seven: "{not json", "is unreadable"),
    ],
)
def test_pentest_5_a_rewritten_head_does_not_hide_records_cut_from_the_end(
    journal: Journal, tmp_path: Path, rewrite: Any, message: str
) -> None:
    seven = next(r for r in journal.records() if r.seq == 7)
    cut_from_end(journal, 8)
    journal.head.write_text(rewrite(journal, seven))
    with pytest.raises(ChainError) as error:
        journal.verify()
    assert f"the journal head file {journal.head} " in str(error.value) and message in str(error.value)
    outcome = verify_cli(tmp_path)
    assert outcome.exit_code == 1 and message in outcome.output


@pytest.mark.req("R92.3")
def test_the_head_is_signed_verifiable_with_stock_openssl_and_private(journal: Journal, tmp_path: Path) -> None:
    assert journal.head.stat().st_mode & 0o777 == 0o600
    head = json.loads(journal.head.read_text())
    assert head["seq"] == 10 and head["format"] == "bingo-journal-head/1"
    runner = CliRunner()
    assert runner.invoke(main, ["journal", "public-key", "--out", str(tmp_path / "pub.pem")]).exit_code == 0
    exported = runner.invoke(main, ["journal", "export-head", "--dir", str(tmp_path / "out")])
    assert exported.exit_code == 0, exported.output
    check = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(tmp_path / "pub.pem"), "-rawin",
         "-in", str(tmp_path / "out" / "head.body"), "-sigfile", str(tmp_path / "out" / "head.sig")],
        capture_output=True, text=True,
    )
    assert check.returncode == 0 and "Signature Verified Successfully" in check.stdout


@pytest.mark.req("R92.3")
def test_pentest_5_only_an_explicit_initialisation_starts_a_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINGO_HOME", str(tmp_path / "var"))
    url = f"sqlite:///{tmp_path / 'var' / 'hall.sqlite3'}"
    runner = CliRunner()
    key_path = tmp_path / "var" / "keys" / "journal-signing.pem"
    load_journal_key(key_path, create=True)
    empty = runner.invoke(main, ["--db", url, "journal", "verify"])
    assert empty.exit_code == 0 and "never started" in empty.output
    started = runner.invoke(main, ["--db", url, "journal", "init", "--hall-name", "Sala Sol"])
    assert started.exit_code == 0 and "record 1 (journal_opened)" in started.output, started.output
    again = runner.invoke(main, ["--db", url, "journal", "init"])
    assert again.exit_code == 1 and "already holds records (up to 1)" in again.output
    journal = Journal(open_database(url), load_journal_key(key_path), head=tmp_path / "var" / "journal.head")
    (opening,) = journal.records()
    assert opening.type == "journal_opened" and opening.payload == {"hall": "Sala Sol"}
    assert journal.verify() == 1
    # Every record removed but the head kept: not a new journal, and verify says so.
    sql(journal, "DELETE FROM journal")
    with pytest.raises(JournalStateError, match="the journal is empty but its head file .* exists: records were removed"):
        Journal(journal.engine, journal.key, journal.head).initialise(1, {})
    refused = runner.invoke(main, ["--db", url, "journal", "init"])
    assert refused.exit_code == 1 and "records were removed" in refused.output
    assert "record 1: is missing: the journal ends at 0 but its head says 1" in runner.invoke(
        main, ["--db", url, "journal", "verify"]).output


# --- written through the declarations (protocol/records) ---------------------------------------


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (("ball_drwan", {"game_id": "g1", "ball": 11, "ball_count": 11}), "a 'ball_drwan' record: no such record type"),
        (("ball_drawn", {"type": "ball_drawn", "game_id": "g1", "ball": "11", "ball_count": 11}),
         "a 'ball_drawn' record: ball: is a whole number"),
        (("ball_drawn", {"type": "ball_drawn", "game_id": "g1", "ball": 11, "ball_count": 11, "count": 11}),
         "a 'ball_drawn' record: count: is not a field of this record type"),
        (("session_opened", {"session": 1}), "a 'session_opened' record: date: is missing"),
    ],
)
def test_an_undeclared_type_or_a_bad_field_is_refused_before_anything_is_written(
    journal: Journal, entry: Any, reason: str
) -> None:
    head = journal.head.read_bytes()
    with pytest.raises(RecordError) as refused:
        journal.append(1_700_000_000_011, [BallDrawn("g1", 11, 11), entry])
    assert str(refused.value).startswith(reason)
    assert journal.last is not None and journal.last.seq == 10
    assert [r.seq for r in journal.records()][-1] == 10, "not even the good entry before it is written"
    assert journal.head.read_bytes() == head
    assert journal.verify() == 10


def test_the_payload_sealed_is_the_declared_records(journal: Journal) -> None:
    (record,) = journal.append(1_700_000_000_011, [("ball_drawn", {"type": "ball_drawn", "game_id": "g1",
                                                                    "ball": 11, "ball_count": 11})])
    assert record.payload == BallDrawn("g1", 11, 11).to_payload()
    assert record.payload["completed_line"] == [] and record.payload["entered_by"] is None


@pytest.mark.req("R92.3")
def test_records_are_sealed_unsigned_and_signed_as_they_are_stored_with_the_same_signature_as_openssl(
    journal: Journal,
) -> None:
    """The deciding thread hashes and links; the commit signs (libsodium), never storing an unsigned record."""
    (sealed,) = journal.seal(1_700_000_000_100, [BallDrawn("g1", 11, 11)], journal.last)
    assert sealed.signature == "" and sealed.prev == journal.last.hash
    (stored,) = journal.commit([sealed])
    assert (stored.seq, stored.hash) == (sealed.seq, sealed.hash)
    assert stored.signature == journal.key.sign(stored.body).hex()  # Ed25519 is deterministic: OpenSSL agrees
    assert journal.record(11) == stored and journal.last == stored and journal.verify() == 11


# --- the link check of the records under a checkpoint (pentest finding N17) ------------------


@pytest.mark.req("R92.3")
@pytest.mark.parametrize(
    "tamper, message",
    [
        ("UPDATE journal SET payload = replace(payload, '\"ball\":4', '\"ball\":44') WHERE seq = 4", "record 4: its content does not match its hash"),
        ("UPDATE journal SET type = 'ball_drawn2' WHERE seq = 4", "record 4: its content does not match its hash"),
        ("DELETE FROM journal WHERE seq = 6", "record 6: is missing: the journal jumps from 5 to 7"),
        ("UPDATE journal SET seq = -seq WHERE seq IN (7, 8); UPDATE journal SET seq = 8 WHERE seq = -7; UPDATE journal SET seq = 7 WHERE seq = -8", "record 7: its content does not match its hash"),
        ("DELETE FROM journal WHERE seq > 8", "record 9: is missing: the journal ends at 8 before record 10"),
    ],
)
def test_N17_the_link_check_under_a_checkpoint_finds_and_names_each_fault(journal: Journal, tamper: str, message: str) -> None:
    """Records 1 to a checkpoint's are checked by hash and link, without their signatures."""
    anchor = (10, journal.last.hash)
    assert journal.verify_links(anchor) == 10
    for statement in tamper.split("; "):
        sql(journal, statement)
    with pytest.raises(ChainError) as error:
        journal.verify_links(anchor, "the checkpoint here")
    assert str(error.value).startswith(message)


@pytest.mark.req("R92.3")
def test_N17_the_link_check_finds_a_chain_hashed_again_to_its_end_without_the_key(journal: Journal) -> None:
    """Hashes and links can be made again by anyone; the last hash is the checkpoint's, signed."""
    from protocol.chain import canonical_json, seal

    anchor = (10, journal.last.hash)
    records = list(journal.records())
    previous = records[3]
    for record in records[4:]:
        payload = {**record.payload, "ball": 55} if record.seq == 5 else dict(record.payload)
        previous = seal(None, previous, record.time_ms, record.type, payload)  # hashed and linked, not signed
        sql(journal, f"UPDATE journal SET payload = '{canonical_json(payload).decode()}', prev = '{previous.prev}', "
                     f"hash = '{previous.hash}' WHERE seq = {record.seq}")
    with pytest.raises(ChainError, match="record 10: differs from the record the checkpoint here names"):
        journal.verify_links(anchor, "the checkpoint here")


def test_N17_a_payload_stored_with_other_spacing_still_links(journal: Journal) -> None:
    """The quick check puts the body together from the stored text; a text that is the same JSON
    with other spacing is read through its JSON, as the whole verification reads it."""
    sql(journal, "UPDATE journal SET payload = replace(payload, ',', ', ') WHERE seq = 4")
    assert journal.verify_links((10, journal.last.hash)) == 10
    assert journal.verify() == 10


def test_N17_the_link_check_reads_the_journal_as_stored_on_each_backend(database_url: str, tmp_path: Path) -> None:
    """The rows are read through the driver's own cursor (SQLite, psycopg), in batches."""
    from server_kit.journal import table

    j = Journal(open_database(database_url), Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    for n in range(1, 26):
        j.append(1_700_000_000_000 + n, [BallDrawn("g1", n % 90 + 1, n)])
    assert [row[0] for row in table.stored_rows(j.engine, 25, batch=7)] == list(range(1, 26))
    assert j.verify_links((25, j.last.hash)) == 25
    with j.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE journal SET time_ms = time_ms + 1 WHERE seq = 17")
    with pytest.raises(ChainError, match="record 17: its content does not match its hash"):
        j.verify_links((25, j.last.hash))
    j.engine.dispose()


def test_the_writer_signs_as_ed25519_does_with_the_interpreter_held() -> None:
    """The writer's signer is libsodium called with the interpreter held (server_kit.journal.sql.journal_signer)."""
    from server_kit.journal.sql import _held_signer, journal_signer

    key = Ed25519PrivateKey.generate()
    sign = journal_signer(key)
    assert sign.__qualname__.startswith("_held_signer")  # PyNaCl's library shows the function
    for data in (b"", b"x", bytes(range(256)) * 40):
        assert sign(data) == key.sign(data)
    assert _held_signer(b"\0" * 64) is not None


def test_a_commit_of_more_rows_than_a_statement_takes_is_stored_whole_and_verifies(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    from protocol.chain import canonical_json
    from protocol.records.cashier import PlayerAccountOpened
    from server_kit.journal import table

    monkeypatch.setattr(table, "ROWS_A_STATEMENT", 3)
    entries = [BallDrawn("g2", n, n) for n in range(1, 9)]
    opened = PlayerAccountOpened(account="A-1", medium="card", visitor=1, pin_hash="scrypt$secret")
    journal.append(1_700_000_000_100, [*entries, opened])  # 9 rows: statements of 3
    assert journal.verify() == 19 and journal.last is not None and journal.last.seq == 19
    with journal.engine.connect() as connection:
        stored = dict(connection.exec_driver_sql("SELECT seq, payload FROM journal WHERE seq > 10").all())
    for record in journal.records(after=10):
        assert stored[record.seq] == canonical_json(record.payload).decode()
    secret = json.loads(stored[19])  # a record that seals a secret stores it with its nonce, not its commitment
    assert secret["pin_hash"] == "scrypt$secret" and set(secret["sealed"]) == {"pin_hash"}


def test_a_committed_record_kept_in_memory_is_its_stored_row_and_reads_back_as_the_journal_reads_it(
    journal: Journal,
) -> None:
    """The command core keeps committed records as their stored columns (``protocol.chain.as_kept``):
    plain strings and integers the collector leaves be, read again only when a failed commit folds them."""
    import gc

    from protocol.chain import as_kept, from_kept, sign_head, verify_chain
    from protocol.records.cashier import PlayerAccountOpened

    opened = PlayerAccountOpened(account="A-2", medium="card", visitor=2, pin_hash="scrypt$other")
    sealed = journal.seal(1_700_000_000_200, [BallDrawn("g3", 1, 1), opened], journal.last)
    committed = journal.commit(sealed)
    rows = [as_kept(record) for record in committed]
    with journal.engine.connect() as connection:
        stored = connection.exec_driver_sql(
            "SELECT seq, time_ms, type, payload, prev, hash, signature FROM journal WHERE seq > 10 ORDER BY seq").all()
    assert rows == [tuple(row) for row in stored]  # the journal's row, column for column
    assert [from_kept(row) for row in rows] == list(journal.records(after=10))
    verify_chain([*list(journal.records())[:10], *map(from_kept, rows)], journal.key.public_key(),
                 head=sign_head(journal.key, committed[-1]))  # the records as they were signed
    gc.collect()
    assert not any(gc.is_tracked(row) for row in rows)


@pytest.mark.parametrize("migrations, before", [
    ("hall_server:migrations", "0002"), ("central_server:migrations", "0003"), ("regulator:migrations", "0003"),
])
def test_N17_a_journal_written_with_its_hashes_indexed_verifies_whole_once_the_index_is_dropped(
        tmp_path: Path, migrations: str, before: str) -> None:
    """Each server's migration drops the hash index of a journal already written: on SQLite the
    table is rebuilt, and every record is still there, byte for byte, and verifies."""
    from sqlalchemy import inspect

    from server_kit.db.database import create, upgrade
    from server_kit.journal.sql import verified_records

    engine = create(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    upgrade(engine, migrations, before)
    assert [c["name"] for c in inspect(engine).get_unique_constraints("journal")] == ["uq_journal_hash"]
    key = Ed25519PrivateKey.generate()
    journal = Journal(engine, key, head=tmp_path / "journal.head")
    for n in range(1, 31):
        journal.append(1_700_000_000_000 + n, [BallDrawn("g1", n, n)])
    with engine.connect() as connection:
        rows = connection.exec_driver_sql("SELECT * FROM journal ORDER BY seq").fetchall()

    upgrade(engine, migrations)

    assert inspect(engine).get_unique_constraints("journal") == []
    assert "ix_journal_type" in {index["name"] for index in inspect(engine).get_indexes("journal")}
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT * FROM journal ORDER BY seq").fetchall() == rows
    assert len(verified_records(engine, key.public_key(), tmp_path / "journal.head")) == 30
    engine.dispose()

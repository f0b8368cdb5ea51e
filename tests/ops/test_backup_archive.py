"""The backup archive and its restore, without a running server: what goes in, what stays out, what a
restore refuses (server_kit/backup.py, docs/backup.md).

Each test builds a hall's folder as a hall leaves it (its SQLite database migrated, a signed journal, its
head, a checkpoint, its keys and PKI, the local authority a first start makes, a receiver's folder inside
it as ``bingo regulator demo`` makes one) and backs it up with the kit's own functions.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hall_server.backup import hall_folder
from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password, load_config
from hall_server.store.database import open_database
from protocol.chain import Record, sealed_form
from protocol.records.game import BallDrawn
from protocol.records.terminals import TerminalEnrolled
from server_kit import backup
from server_kit.audit_folder import journal_line
from server_kit.backup import BackupError, ServerFolder
from server_kit.journal.checkpoints import CheckpointStore
from server_kit.journal.sql import Journal, read_head
from server_kit.keys import journal_key_path, load_card_key, load_journal_key
from tests.support.postgres import PostgresCluster

PASSPHRASE = b"correct horse battery staple"
SECRETS = {"keys/journal-signing.pem", "keys/card-code.key", "pki/keys/hall-server.key"}
STAFF_HASH = hash_password("correct horse")
CERTIFICATE = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def make_hall(folder: Path, records: int = 6, database_url: str | None = None) -> ServerFolder:
    """A hall's folder with ``records`` journal records and a checkpoint at the fourth (its database
    SQLite in the folder, or at ``database_url``)."""
    folder.mkdir()
    database_url = database_url or f"sqlite:///{folder}/hall.sqlite3"
    text = default_config_text("Test hall", [(n, r, STAFF_HASH) for n, r in DEFAULT_STAFF], port=0)
    text = text.replace('home = "."', f'home = "{folder}"') + f'\n[database]\nurl = "{database_url}"\n'
    (folder / "hall.toml").write_text(text)
    key = load_journal_key(journal_key_path(folder), create=True)
    load_card_key(folder / "keys" / "card-code.key", create=True)
    (folder / "keys" / "report-signing.pem").write_bytes(CERTIFICATE)
    for relative, content in {"pki/ca.pem": CERTIFICATE, "pki/certs/hall-server.pem": CERTIFICATE,
                              "pki/keys/hall-server.key": b"-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n",
                              "operator-ca/ca.key": b"-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n",
                              "pki/ca.key": b"-----BEGIN PRIVATE KEY-----\nMC4C\n-----END PRIVATE KEY-----\n",
                              "operator-ca/ca.pem": CERTIFICATE, "regulator/journal.head": b"{}",
                              "regulator/regulator.sqlite3": b"SQLite format 3\0", "reports/daily.json": b"{}"}.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(content)
    engine = open_database(database_url)
    try:
        journal = Journal(engine, key, folder / "journal.head")
        journal.initialise(1_000, {"hall": "Test hall"})
        for ball in range(1, records):
            journal.append(1_000 + ball, [BallDrawn("g1", ball, ball)])
            if ball == 3:
                assert journal.last is not None
                CheckpointStore(folder / "checkpoints", key, "r").write(journal.last.seq, journal.last.hash, 0,
                                                                         {"folded": journal.last.seq})
    finally:
        engine.dispose()
    return hall_folder(load_config(folder / "hall.toml"))


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:*") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]


def journal_rows(database: Path) -> list[tuple[int, str]]:
    connection = sqlite3.connect(database)
    try:
        return list(connection.execute("SELECT seq, hash FROM journal ORDER BY seq"))
    finally:
        connection.close()


def test_the_archive_holds_the_folder_with_its_keys_left_out_and_a_restore_puts_it_back_verified(tmp_path: Path) -> None:
    folder = make_hall(tmp_path / "hall")
    made = backup.backup(folder, tmp_path / "hall.tar.gz")
    held = members(made.archive)
    names = {name.removeprefix("bingo-backup/") for name in held}
    assert {"manifest.json", "manifest.sig", "SHA256SUMS", "database.sqlite3", "files/hall.toml", "files/journal.head",
            "files/checkpoints/checkpoint-000000000004.ckpt", "files/keys/report-signing.pem",
            "files/reports/daily.json", "files/pki/ca.pem"} <= names
    assert not any(b"PRIVATE KEY" in content for content in held.values())
    assert not [name for name in names if "operator-ca" in name or "regulator/" in name or name.endswith(".key")]
    manifest = made.manifest
    assert {entry["path"] for entry in manifest["secrets"]["files"]} == SECRETS
    assert manifest["secrets"]["stored"] == "left out"
    assert set(manifest["left_out"]) == {"operator-ca", "pki/ca.key", "regulator/"}
    assert manifest["journal"]["last_seq"] == 6 and manifest["checkpoints"] == [
        {"path": "checkpoints/checkpoint-000000000004.ckpt", "seq": 4}]
    sums = {name: digest for digest, name in (line.split("  ") for line in held["bingo-backup/SHA256SUMS"].decode()
                                                .splitlines())}
    assert set(sums) == names - {"SHA256SUMS"}  # what `sha256sum -c SHA256SUMS` checks

    restored = backup.restore(made.archive, tmp_path / "new", keys=tmp_path / "hall")
    home = tmp_path / "new"
    assert restored.verified == 6 and restored.checkpoints == [4]
    assert journal_rows(home / "hall.sqlite3") == journal_rows(tmp_path / "hall" / "hall.sqlite3")
    assert all((home / relative).read_bytes() == (tmp_path / "hall" / relative).read_bytes() for relative in SECRETS)
    assert oct((home / "keys" / "journal-signing.pem").stat().st_mode & 0o777) == "0o600"
    assert not (home / "operator-ca").exists() and not (home / "regulator").exists()
    assert not (home / "pki" / "ca.key").exists() and (home / "pki" / "certs" / "hall-server.pem").exists()
    config = load_config(home / "hall.toml")  # moved: the new folder and its database
    assert config.home.resolve() == home and config.database_url == f"sqlite:///{home / 'hall.sqlite3'}"
    assert restored.start == f"BINGO_HOME={home} bingo hall serve --config {home / 'hall.toml'}"


def test_a_commit_between_the_head_and_the_snapshot_is_restored_and_the_head_made_to_name_it(tmp_path: Path) -> None:
    folder = make_hall(tmp_path / "hall")

    def after_a_commit(url: str, target: Path) -> backup.Snapshot:
        engine = open_database(url)
        try:
            Journal(engine, load_journal_key(folder.journal_key), folder.journal_head).append(
                2_000, [BallDrawn("g1", 9, 6)])
        finally:
            engine.dispose()
        return backup.database_snapshot(url, target)

    made = backup.backup(folder, tmp_path / "hall.tar.gz", snapshot=after_a_commit)
    assert (made.manifest["journal"]["head"]["seq"], made.manifest["journal"]["last_seq"]) == (6, 7)
    restored = backup.restore(made.archive, tmp_path / "new", keys=tmp_path / "hall")
    assert restored.verified == 7 and read_head(tmp_path / "new" / "journal.head").seq == 7  # type: ignore[union-attr]


def test_the_keys_travel_encrypted_with_a_passphrase_and_open_with_it_only(tmp_path: Path) -> None:
    folder = make_hall(tmp_path / "hall")
    made = backup.backup(folder, tmp_path / "hall.tar.gz", passphrase=PASSPHRASE)
    held = members(made.archive)
    assert "bingo-backup/secrets.enc" in held and not any(b"PRIVATE KEY" in c for c in held.values())
    header = json.loads(held["bingo-backup/secrets.enc"].partition(b"\n")[0])
    assert header["cipher"] == "AES-256-GCM" and header["kdf"]["name"] == "scrypt" and header["kdf"]["n"] == 2**17

    with pytest.raises(BackupError, match="give the passphrase"):
        backup.restore(made.archive, tmp_path / "a")
    with pytest.raises(BackupError, match="does not open with this passphrase"):
        backup.restore(made.archive, tmp_path / "b", passphrase=b"not the passphrase at all")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # nothing left of a refused restore
    restored = backup.restore(made.archive, tmp_path / "new", passphrase=PASSPHRASE)
    assert restored.verified == 6 and "opened with the passphrase" in restored.secrets_from
    assert (tmp_path / "new" / "keys" / "card-code.key").read_bytes() == (
        tmp_path / "hall" / "keys" / "card-code.key").read_bytes()


def test_a_restore_refuses_a_folder_that_is_not_empty_and_touches_nothing_in_it(tmp_path: Path) -> None:
    made = backup.backup(make_hall(tmp_path / "hall"), tmp_path / "hall.tar.gz")
    home = tmp_path / "new"
    home.mkdir()
    (home / "hall.sqlite3").write_bytes(b"a server's database")
    with pytest.raises(BackupError, match="is not an empty folder"):
        backup.restore(made.archive, home, keys=tmp_path / "hall")
    assert [p.name for p in home.iterdir()] == ["hall.sqlite3"]
    assert (home / "hall.sqlite3").read_bytes() == b"a server's database"


def test_a_restore_names_a_damaged_member_and_leaves_the_folder_empty(tmp_path: Path) -> None:
    made = backup.backup(make_hall(tmp_path / "hall"), tmp_path / "hall.tar.gz")
    damaged = tmp_path / "damaged.tar.gz"
    with tarfile.open(made.archive, "r:*") as source, tarfile.open(damaged, "w:gz") as target:
        for member in source:
            content = source.extractfile(member).read()  # type: ignore[union-attr]
            if member.name.endswith("files/reports/daily.json"):
                content = b'{"altered": 1}'
                member.size = len(content)
            target.addfile(member, io.BytesIO(content))
    home = tmp_path / "new"
    home.mkdir()
    with pytest.raises(BackupError, match=r"bingo-backup/files/reports/daily.json does not match its SHA-256"):
        backup.restore(damaged, home, keys=tmp_path / "hall")
    assert list(home.iterdir()) == []


def test_a_restore_refuses_keys_that_are_not_the_folders_and_says_which(tmp_path: Path) -> None:
    made = backup.backup(make_hall(tmp_path / "hall"), tmp_path / "hall.tar.gz")
    other = make_hall(tmp_path / "other")
    with pytest.raises(BackupError, match=r"card-code.key from the keys folder .* is not the one"):
        backup.restore(made.archive, tmp_path / "a", keys=other.home)
    (tmp_path / "kept").mkdir()
    with pytest.raises(BackupError, match=r"has no keys/card-code.key"):
        backup.restore(made.archive, tmp_path / "b", keys=tmp_path / "kept")
    with pytest.raises(BackupError, match=r"they were left out.*--keys DIR"):
        backup.restore(made.archive, tmp_path / "c")


def test_a_manifest_changed_after_it_was_signed_is_refused(tmp_path: Path) -> None:
    """Even with SHA256SUMS made to match it: the journal key's signature covers the manifest."""
    made = backup.backup(make_hall(tmp_path / "hall"), tmp_path / "hall.tar.gz")
    forged = tmp_path / "forged.tar.gz"
    held = members(made.archive)
    manifest = json.loads(held["bingo-backup/manifest.json"])
    manifest["name"] = "Another hall"
    held["bingo-backup/manifest.json"] = json.dumps(manifest).encode()
    sums = held["bingo-backup/SHA256SUMS"].decode().splitlines()
    sums[0] = f"{hashlib.sha256(held['bingo-backup/manifest.json']).hexdigest()}  manifest.json"
    held["bingo-backup/SHA256SUMS"] = ("\n".join(sums) + "\n").encode()
    with tarfile.open(forged, "w:gz") as tar:
        for name, content in held.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    with pytest.raises(BackupError, match="not signed by the journal key"):
        backup.restore(forged, tmp_path / "new", keys=tmp_path / "hall")


def test_a_backup_never_overwrites_a_file_and_leaves_nothing_when_refused(tmp_path: Path) -> None:
    folder = make_hall(tmp_path / "hall")
    out = tmp_path / "hall.tar.gz"
    out.write_bytes(b"yesterday's backup")
    with pytest.raises(BackupError, match="exists; a backup never overwrites"):
        backup.backup(folder, out)
    assert out.read_bytes() == b"yesterday's backup"
    (tmp_path / "hall" / "journal.head").unlink()
    with pytest.raises(BackupError, match="there is no journal head"):
        backup.backup(folder, tmp_path / "second.tar.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hall", "hall.tar.gz"]


def test_a_short_passphrase_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pass").write_text("short\n")
    with pytest.raises(BackupError, match="5 characters long; at least 12"):
        backup.read_passphrase(tmp_path / "pass")


@pytest.mark.parametrize(("relative", "content", "secret"), [
    ("keys/journal-signing.pem", b"-----BEGIN PRIVATE KEY-----", True),
    ("keys/report-signing.pem", CERTIFICATE, False),
    ("keys/card-code.key", b"ab12", True),
    ("keys/anything", b"0011", True),
    ("terminal-certs/k1/k1.p12", b"\x30\x82", True),
    ("page-certificate/regulator-staff.pem", b"x\n-----BEGIN EC PRIVATE KEY-----\n", True),
    ("pki/certs/hall-server.pem", CERTIFICATE, False),
    ("hall.toml", b'[hall]\nname = "x"\n', False),
])
def test_what_counts_as_a_secret(relative: str, content: bytes, secret: bool) -> None:
    assert backup.is_secret(relative, content) is secret


def test_toml_set_replaces_or_adds_a_key_of_a_table() -> None:
    text = '[hall]\nname = "x"\nhome = "/old"\n\n[[series]]\nnumber = 1\n'
    assert backup.toml_set(text, "hall", "home", ".") == '[hall]\nname = "x"\nhome = "."\n\n[[series]]\nnumber = 1\n'
    assert backup.toml_set(text, "database", "url", "postgresql://a@b/c").endswith(
        '\n[database]\nurl = "postgresql://a@b/c"\n')
    assert backup.toml_set("[central]\nid = \"c\"\n", "central", "home", ".") == '[central]\nhome = "."\nid = "c"\n'


def test_a_receivers_folder_is_backed_up_and_restored_through_its_commands(tmp_path: Path) -> None:
    from hall_server.cli import main
    from regulator.store import open_database as receiver_database

    home = tmp_path / "receiver"
    home.mkdir()
    engine = receiver_database(f"sqlite:///{home / 'regulator.sqlite3'}")
    key = load_journal_key(home / "keys" / "journal-signing.pem", create=True)
    try:
        opened = Journal(engine, key, home / "journal.head").initialise(1_000, {"receiver": "regulator"})
    finally:
        engine.dispose()
    # Its checkpoint of the journal's end (regulator/service.py), taken apart as a hall's are.
    CheckpointStore(home / "checkpoints", key, "").write(1, opened.hash, 1_000,
                                                          {"seq": 1, "folded": 1, "modules": {}, "requests": []})
    (home / "senders.toml").write_text('[senders."hall:hall-1"]\njournal_key = "x"\n')
    runner = CliRunner()
    made = runner.invoke(main, ["regulator", "backup", "--dir", str(home), "--out", str(tmp_path / "r.tar.gz")])
    assert made.exit_code == 0, made.output
    assert "a backup of the regulator server 'regulator'" in made.output
    assert "checkpoints: 1 (records 1)" in made.output
    restored = runner.invoke(main, ["restore", str(tmp_path / "r.tar.gz"), "--home", str(tmp_path / "new"),
                                    "--keys", str(home)])
    assert restored.exit_code == 0, restored.output
    assert f"start it: bingo regulator serve --dir {tmp_path / 'new'} --pki PKI-FOLDER" in restored.output
    assert (tmp_path / "new" / "senders.toml").read_text() == (home / "senders.toml").read_text()
    assert journal_rows(tmp_path / "new" / "regulator.sqlite3") == journal_rows(home / "regulator.sqlite3")
    assert [p.name for p in (tmp_path / "new" / "checkpoints").iterdir()] == ["checkpoint-000000000001.ckpt"]
    refused = runner.invoke(main, ["restore", str(tmp_path / "r.tar.gz"), "--home", str(tmp_path / "new"),
                                   "--keys", str(home)])
    assert refused.exit_code == 1 and "is not an empty folder" in refused.output
    assert os.listdir(tmp_path / "new")


def test_a_hall_on_postgresql_is_dumped_in_one_snapshot_and_restored_into_an_empty_database_only(
    tmp_path: Path, postgres_cluster: PostgresCluster
) -> None:
    folder = make_hall(tmp_path / "hall", database_url=postgres_cluster.create_database())
    made = backup.backup(folder, tmp_path / "hall.tar.gz")
    assert made.manifest["database"]["kind"] == "postgresql" and made.manifest["journal"]["last_seq"] == 6
    assert "bingo-backup/database.pgdump" in members(made.archive)
    with pytest.raises(BackupError, match="give the new, empty database"):
        backup.restore(made.archive, tmp_path / "a", keys=tmp_path / "hall")
    with pytest.raises(BackupError, match=r"is not empty \(it holds \d+ tables: "):
        backup.restore(made.archive, tmp_path / "b", keys=tmp_path / "hall", database_url=folder.database_url)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    target = postgres_cluster.create_database()
    restored = backup.restore(made.archive, tmp_path / "new", keys=tmp_path / "hall", database_url=target)
    assert restored.verified == 6 and restored.tables == made.manifest["database"]["tables"]
    assert load_config(tmp_path / "new" / "hall.toml").database_url == target


def played_on(folder: ServerFolder, *entries: Any) -> list[Record]:
    """``entries`` appended to the hall's journal after its backup; the records, as the receiver holds them."""
    engine = open_database(folder.database_url)
    try:
        journal = Journal(engine, load_journal_key(folder.journal_key), folder.journal_head)
        return [sealed_form(record) for entry in entries for record in journal.append(3_000, [entry])]
    finally:
        engine.dispose()


def test_the_records_the_receiver_holds_after_the_backup_are_taken_back_each_checked(tmp_path: Path) -> None:
    folder = make_hall(tmp_path / "hall")
    made = backup.backup(folder, tmp_path / "hall.tar.gz")
    later = played_on(folder, BallDrawn("g1", 7, 6), BallDrawn("g1", 8, 7))
    exported = tmp_path / "records.jsonl"
    exported.write_text("".join(journal_line(r) + "\n" for r in later))
    restored = backup.restore(made.archive, tmp_path / "new", keys=folder.home, records=exported)
    assert restored.taken_back == (exported, 7, 8)
    assert journal_rows(tmp_path / "new" / "hall.sqlite3") == journal_rows(folder.home / "hall.sqlite3")
    assert read_head(tmp_path / "new" / "journal.head").seq == 8  # type: ignore[union-attr]
    assert "taken back: records 7 to 8 from " in "\n".join(backup.restore_lines(restored))


def test_records_taken_back_must_follow_the_journal_be_signed_by_its_key_and_hold_no_sealed_secret(
    tmp_path: Path
) -> None:
    folder = make_hall(tmp_path / "hall")
    made = backup.backup(folder, tmp_path / "hall.tar.gz")
    later = played_on(folder, BallDrawn("g1", 7, 6), TerminalEnrolled(terminal="K1", token_hash="ab" * 32, place="bar"),
                      BallDrawn("g1", 8, 7))
    exported = tmp_path / "records.jsonl"

    def refused(records: list[Record], reason: str, home: str) -> None:
        exported.write_text("".join(journal_line(r) + "\n" for r in records))
        with pytest.raises(BackupError, match=reason):
            backup.restore(made.archive, tmp_path / home, keys=folder.home, records=exported)
        assert not (tmp_path / home).exists()

    refused(later[1:], "its record 8 does not follow the restored journal's last record \\(6\\)", "gap")
    forged = Record(7, later[0].time_ms, "ball_drawn", {**later[0].payload, "ball": 9}, later[0].prev,
                    "", later[0].signature)
    refused([replace(forged, hash=hashlib.sha256(forged.body).hexdigest())],
            "record 7: its signature does not verify", "forged")
    refused(later, "record 8 \\(terminal_enrolled\\) holds a secret in its sealed form", "sealed")

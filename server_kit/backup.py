"""``bingo backup`` and ``bingo restore``: a running server's folder and database as one archive, and back.

**What a backup is.**  A tar archive (gzip) of one folder, ``bingo-backup/``, holding
``manifest.json`` (what server, which release, the journal's last record and its hash,
its signed head, the checkpoints, every member with its SHA-256 and size, each table's
rows), ``manifest.sig`` (the manifest signed with the server's journal key, Ed25519),
``SHA256SUMS`` (every other member's SHA-256, as ``sha256sum -c`` reads them), the
database (``database.sqlite3``: SQLite's own online backup; ``database.pgdump``:
``pg_dump``'s custom format, :mod:`server_kit.backup_postgres`), the files of the
server's folder under ``files/``, and, when a passphrase is given, ``secrets.enc``.

**Consistent while the server runs.**  The journal is three things that must agree: the
records in the database, the signed head (``journal.head``, rewritten after each commit,
so it may lag the table and never run ahead of it) and the checkpoints (each the state at
a committed record; a start refuses one past the journal's end).  Each of them only ever
names records that are already committed, so whatever is read *before* the database's
snapshot names records the snapshot holds.  The backup therefore reads, in this order:

1. the checkpoints, each file whole (one removed meanwhile is passed over);
2. the signed head;
3. the database, in one snapshot: SQLite's online backup API (one read transaction,
   so one committed state while the server goes on writing), or ``pg_dump`` in the
   snapshot of a transaction that also reads the journal's last record and every
   table's rows;
4. the other files.

A copy of the folder file by file in name order (as ``rsync`` does) reads the database
before the head: a commit between the two leaves a head past the copied journal's end,
and a copy of a SQLite database whose ``-wal`` file is read after its main file may not
even be one database (docs/backup.md).

**Secrets.**  A certificate authority's key (``ca.key``, wherever it lies) never goes into
a backup: it belongs offline (a hall also leaves out the whole ``operator-ca/`` a first
start makes).  The server's private keys (journal signing, card code,
report signing, TLS; every file under a ``keys/`` folder that is not a certificate,
every ``*.key``, ``*.p12`` and any file holding a PEM private key) are never in the
archive in clear: by default they are left out and listed in the manifest with their
SHA-256, and ``restore`` takes them from a folder the operator keeps apart (``--keys``,
laid out as the server's folder); with a passphrase they travel in ``secrets.enc``, a
tar of them encrypted with AES-256-GCM under a key derived from the passphrase by
scrypt (``cryptography``), the archive's identity and the header authenticated with it.

**Restore** (:func:`restore`) refuses a home that is not empty, checks every member
against ``SHA256SUMS`` and the manifest, takes the secrets, checks the manifest's
signature with the journal key it restored, puts the files in place, restores the
database (SQLite: the file; PostgreSQL: ``pg_restore`` into an empty database it is
given), verifies the whole journal (every hash, link and signature, and the signed head)
and that it ends at the manifest's record, checks every checkpoint against it and every
table's rows, writes the head of the last record, and says what it restored.  Given the
records the regulator's receiver holds after the archive's last (``bingo regulator
export-records``), it takes them back, each following the one before and signed by the
journal key (:func:`take_back`).

The kit knows no server: each server says where its parts are (:class:`ServerFolder`,
for a backup) and how its configuration is moved to a new home (:class:`ServerKind`,
found by ``restore`` through the ``bingo.backup`` entry point group).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import io
import json
import os
import re
import shutil
import socket
import sqlite3
import tarfile
import tempfile
import time
import tomllib
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from secrets import token_bytes, token_hex
from typing import Any, Callable, Mapping

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from sqlalchemy.engine import make_url

from protocol.chain import ChainError, canonical_json, head_file, head_from_dict, is_commitment
from protocol.errors import DomainError
from server_kit.private import make_private
from server_kit.release import SOFTWARE
from server_kit.settings import toml_string

FORMAT = "bingo-backup/1"
SECRETS_FORMAT = "bingo-backup-secrets/1"
#: The one folder every member of an archive is in.
ROOT = "bingo-backup"
MANIFEST, SIGNATURE, SUMS, SECRETS = "manifest.json", "manifest.sig", "SHA256SUMS", "secrets.enc"
FILES = "files"
CONFIG = "config"
#: The entry point group each server's :class:`ServerKind` is found through.
ENTRY_POINTS = "bingo.backup"
#: scrypt's cost for the secrets' key (OWASP's for a password: N = 2^17, r = 8, p = 1; 128 MiB, well under a second).
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
#: The most a restore spends on an archive's scrypt (an archive is not trusted before its secrets open).
SCRYPT_MAX_N = 2**20
#: The shortest passphrase taken.
PASSPHRASE_MIN = 12
#: How much of a file is looked at for a PEM private key.
SNIFF = 1 << 20
_PRIVATE_PEM = b"PRIVATE KEY-----"
_SECRET_SUFFIXES = (".key", ".p12", ".pfx")
#: The file name of a certificate authority's private key (server_kit.pki): never in a backup.
AUTHORITY_KEY = "ca.key"
_CHUNK = 1 << 20


class BackupError(DomainError):
    """A backup or a restore that cannot be made; the message says why and what to do."""


# --- What a server says of itself ------------------------------------------------------


@dataclass(frozen=True)
class ServerFolder:
    """What a backup reads of one server, as the server's own adapter reads its configuration."""

    #: ``hall``, ``central`` or ``regulator``: the :class:`ServerKind` that restores it.
    server: str
    #: The server's name (the hall's, the central id, the receiver's certificate name).
    name: str
    home: Path
    #: The database's SQLAlchemy URL (SQLite or PostgreSQL), the one to take the snapshot from.
    database_url: str
    journal_key: Path
    journal_head: Path
    #: The checkpoints' folder (``None``: the server writes none).
    checkpoints: Path | None = None
    #: The configuration file, restored into the new home under its name (``None``: none).
    config: Path | None = None
    #: Files and folders of the home (relative paths) left out, each with why.
    left_out: Mapping[str, str] = field(default_factory=dict)
    #: Paths outside the home the server uses (and the backup therefore does not hold), each with what it is.
    outside: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerKind:
    """How a server's archive is restored into a new home (each server declares one)."""

    server: str
    #: The configuration's name in the new home (``None``: the server has none).
    config_name: str | None
    #: The database's file name in the new home when the archive's was not in its home.
    database_name: str
    #: ``(table, key)`` of the home in the configuration, set to ``"."`` (the configuration's folder).
    home_key: tuple[str, str] | None
    #: ``(table, key)`` of the database URL in the configuration.
    database_key: tuple[str, str] | None
    #: The home and database URL the configuration at a path resolves to (the server's own reader).
    read_config: Callable[[Path], tuple[Path, str]] | None
    #: The command that starts the restored server (home, configuration, database URL).
    start_command: Callable[[Path, Path | None, str], str]


def kind_of(server: str) -> ServerKind:
    """The :class:`ServerKind` of ``server``, from the installed ``bingo.backup`` entry points."""
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINTS):
        if entry.name == server:
            kind = entry.load()
            if not isinstance(kind, ServerKind):
                raise BackupError(f"the {ENTRY_POINTS} entry point {entry.value} is not a server kind")
            return kind
    raise BackupError(f"the archive is of a {server!r} server, which this installation does not know "
                      f"(no {ENTRY_POINTS} entry point {server!r}; is the project installed?)")


# --- Small helpers -----------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_hashing(source: Any, target: Path) -> tuple[str, int]:
    """Copy the stream ``source`` into a new file ``target`` (0600); its SHA-256 and size."""
    digest, size = hashlib.sha256(), 0
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return digest.hexdigest(), size


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL, or ``None`` for any other database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    if not parsed.database or parsed.database == ":memory:":
        raise BackupError(f"the database {url} is held in memory: there is nothing to back up")
    return Path(parsed.database)


def shown_url(url: str) -> str:
    """``url`` as a person may see it: never with its password."""
    return make_url(url).render_as_string(hide_password=True)


def _when(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _inside(path: Path, home: Path) -> str | None:
    """``path`` relative to ``home`` (as a POSIX path), or ``None`` when it is outside it."""
    try:
        return path.resolve().relative_to(home.resolve()).as_posix()
    except ValueError:
        return None


# --- The folder: what is a file, a secret, or left out ----------------------------------


def _only_certificates(content: bytes) -> bool:
    return b"-----BEGIN CERTIFICATE-----" in content and _PRIVATE_PEM not in content


def is_secret(relative: str, content: bytes) -> bool:
    """Whether a file of a server's folder is a secret (a private key, or what holds one)."""
    parts = PurePosixPath(relative).parts
    if relative.endswith(_SECRET_SUFFIXES) or _PRIVATE_PEM in content:
        return True
    return "keys" in parts[:-1] and not _only_certificates(content)


@dataclass
class Survey:
    files: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)


def survey(folder: ServerFolder) -> Survey:
    """The files of ``folder.home``: those to archive, the secrets, and what is left out and why.

    The database's own files, the head and the checkpoints are taken apart (:func:`backup`).
    """
    home = folder.home.resolve()
    found = Survey(left_out={path: why for path, why in folder.left_out.items() if (home / path).exists()})
    taken_apart = {folder.journal_head.resolve()}
    database = sqlite_path(folder.database_url)
    if database is not None:
        taken_apart |= {database.resolve().with_name(database.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")}
    checkpoints = folder.checkpoints.resolve() if folder.checkpoints is not None else None
    for top, folders, names in os.walk(home, followlinks=False):
        here = Path(top)
        kept = []
        for name in sorted(folders):
            path = here / name
            relative = path.relative_to(home).as_posix()
            if relative in folder.left_out or path == checkpoints:
                continue
            if path.is_symlink():
                found.left_out[relative + "/"] = "a symbolic link: not followed"
            elif (path / "journal.head").exists():
                found.left_out[relative + "/"] = "another server's folder: back it up with its own server's command"
            else:
                kept.append(name)
        folders[:] = kept
        for name in sorted(names):
            path = here / name
            relative = path.relative_to(home).as_posix()
            if relative in folder.left_out or path.resolve() in taken_apart or ".partial" in name:
                continue
            if name == AUTHORITY_KEY:
                found.left_out[relative] = "a certificate authority's key: it belongs offline, never in a backup"
                continue
            if path.is_symlink() or not path.is_file():
                found.left_out[relative] = "not a regular file (a link, a socket): not followed"
                continue
            with open(path, "rb") as stream:
                content = stream.read(SNIFF)
            (found.secrets if is_secret(relative, content) else found.files).append(relative)
    return found


# --- The database's snapshot -------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """One consistent state of a server's database, staged as a file."""

    kind: str  # "sqlite" or "postgresql"
    path: Path
    #: The journal's last record in the snapshot: (seq, hash, time_ms), or ``None`` for an empty journal.
    last: tuple[int, str, int] | None
    #: Every table's rows in the snapshot.
    tables: dict[str, int]

    @property
    def member(self) -> str:
        return "database.sqlite3" if self.kind == "sqlite" else "database.pgdump"


def sqlite_counts(connection: sqlite3.Connection) -> tuple[tuple[int, str, int] | None, dict[str, int]]:
    """The journal's last record and every table's rows, read on ``connection``."""
    names = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    tables = {name: int(connection.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]) for name in names}
    last = None
    if "journal" in tables:
        row = connection.execute("SELECT seq, hash, time_ms FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        last = (int(row[0]), str(row[1]), int(row[2])) if row else None
    return last, tables


def _read_only(path: Path) -> str:
    """A SQLite URI opening ``path`` read-only: the backup never writes, nor checkpoints, the server's database."""
    return path.resolve().as_uri() + "?mode=ro"


def sqlite_snapshot(url: str, target: Path) -> Snapshot:
    """The SQLite database at ``url`` copied into ``target`` by SQLite's online backup, in one step.

    One step is one read transaction on the source: the copy is one committed state,
    whatever the server commits meanwhile (WAL lets it go on writing).  The copy is made
    a single file (rollback journal mode); the server switches it to WAL at its start.
    """
    path = sqlite_path(url)
    assert path is not None
    if not path.is_file():
        raise BackupError(f"there is no database at {path}")
    source = sqlite3.connect(_read_only(path), uri=True, timeout=60)
    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)  # pages=-1: every page in one step, one read transaction
            copy.execute("PRAGMA journal_mode=DELETE")
            last, tables = sqlite_counts(copy)
        finally:
            copy.close()
    except sqlite3.DatabaseError as error:
        raise BackupError(f"the database {path} cannot be read: {error}") from None
    finally:
        source.close()
    return Snapshot("sqlite", target, last, tables)


def database_snapshot(url: str, target_folder: Path) -> Snapshot:
    """The database at ``url`` in one snapshot, staged in ``target_folder``."""
    if sqlite_path(url) is not None:
        return sqlite_snapshot(url, target_folder / "database.sqlite3")
    from server_kit import backup_postgres

    return backup_postgres.snapshot(url, target_folder / "database.pgdump")


# --- The secrets' encryption -------------------------------------------------------------


def read_passphrase(path: Path) -> bytes:
    """The passphrase in the file at ``path`` (its one line; the line's end is not part of it)."""
    try:
        text = path.read_bytes()
    except OSError as error:
        raise BackupError(f"the passphrase file {path} cannot be read: {error.strerror or error}") from None
    passphrase = text.removesuffix(b"\n").removesuffix(b"\r")
    if len(passphrase) < PASSPHRASE_MIN:
        raise BackupError(f"the passphrase in {path} is {len(passphrase)} characters long; at least "
                          f"{PASSPHRASE_MIN} are needed")
    return passphrase


def _secrets_key(passphrase: bytes, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase)


def seal_secrets(data: bytes, passphrase: bytes, archive: str) -> bytes:
    """``data`` encrypted for the archive ``archive``: a header line (JSON), then AES-256-GCM's output.

    The key is scrypt's of the passphrase with a random salt; the header (which names the
    archive, the salt, the cost and the nonce) is the authenticated data, so neither can
    be changed or the secrets moved to another archive unnoticed.
    """
    salt, nonce = token_bytes(16), token_bytes(12)
    header = canonical_json({"format": SECRETS_FORMAT, "archive": archive, "cipher": "AES-256-GCM",
                             "kdf": {"name": "scrypt", "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P, "salt": salt.hex()},
                             "nonce": nonce.hex()}) + b"\n"
    return header + AESGCM(_secrets_key(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)).encrypt(nonce, data, header)


def open_secrets(sealed: bytes, passphrase: bytes, archive: str) -> bytes:
    """What :func:`seal_secrets` encrypted, or :class:`BackupError` (wrong passphrase, altered, another archive's)."""
    line, newline, ciphertext = sealed.partition(b"\n")
    unreadable = BackupError(f"{SECRETS} is not a {SECRETS_FORMAT} file")
    try:
        header: dict[str, Any] = json.loads(line)
        kdf = header["kdf"]
        n, r, p = int(kdf["n"]), int(kdf["r"]), int(kdf["p"])
        salt, nonce = bytes.fromhex(kdf["salt"]), bytes.fromhex(header["nonce"])
        ok = (header["format"] == SECRETS_FORMAT and kdf["name"] == "scrypt" and header["cipher"] == "AES-256-GCM"
              and 2 <= n <= SCRYPT_MAX_N and 1 <= r <= 32 and 1 <= p <= 16 and len(nonce) == 12)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise unreadable from None
    if not newline or not ok:
        raise unreadable
    if header["archive"] != archive:
        raise BackupError(f"{SECRETS} belongs to another archive ({header['archive']}, not {archive})")
    try:
        return AESGCM(_secrets_key(passphrase, salt, n, r, p)).decrypt(nonce, ciphertext, line + b"\n")
    except InvalidTag:
        raise BackupError(f"{SECRETS} does not open with this passphrase (another passphrase, or the file was "
                          "altered)") from None


def _tar_of(files: Mapping[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), 0o600
            tar.addfile(info, io.BytesIO(content))
    return out.getvalue()


def _untar(data: bytes) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        for member in tar:
            if not member.isfile() or not _safe_name(member.name):
                raise BackupError(f"{SECRETS} holds {member.name!r}, which is not a file of a server's folder")
            stream = tar.extractfile(member)
            assert stream is not None
            files[member.name] = stream.read()
    return files


def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


# --- Backup ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BackupMade:
    """What :func:`backup` wrote."""

    archive: Path
    manifest: dict[str, Any]
    size: int


def _member(name: str, digest: str, size: int, **more: Any) -> dict[str, Any]:
    return {"member": name, "sha256": digest, "size": size, **more}


def backup(folder: ServerFolder, out: Path, *, passphrase: bytes | None = None,
           snapshot: Callable[[str, Path], Snapshot] = database_snapshot) -> BackupMade:
    """Back ``folder``'s server up into the new archive ``out`` while it runs (see the module).

    ``passphrase``: the secrets travel encrypted in the archive; ``None``: they are left out.
    """
    if out.exists():
        raise BackupError(f"{out} exists; a backup never overwrites a file: name a new one")
    if not out.parent.is_dir():
        raise BackupError(f"the folder {out.parent} does not exist")
    if not folder.home.is_dir():
        raise BackupError(f"there is no server folder at {folder.home}")
    from server_kit.keys import load_journal_key, public_pem

    home = folder.home.resolve()
    journal_key = _inside(folder.journal_key, home)
    if journal_key is None:
        raise BackupError(f"the journal key {folder.journal_key} is not in the server's folder {home}: a backup "
                          "signs with the folder's own key (keys/journal-signing.pem)")
    key = load_journal_key(folder.journal_key)
    made_ms = time.time_ns() // 1_000_000
    archive_id = f"{folder.server}-{made_ms}-{token_hex(4)}"
    staging = Path(tempfile.mkdtemp(prefix=".bingo-backup-", dir=out.parent))
    try:
        files_dir = staging / FILES
        files_dir.mkdir(mode=0o700)
        members: list[dict[str, Any]] = []

        def stage(relative: str, content: bytes, **more: Any) -> None:
            target = files_dir / relative
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(content)
            members.append(_member(f"{FILES}/{relative}", hashlib.sha256(content).hexdigest(), len(content),
                                   path=relative, **more))

        # 1. The checkpoints, each read whole: each stands at a committed record.
        checkpoints: list[dict[str, Any]] = []
        if folder.checkpoints is not None and folder.checkpoints.is_dir():
            where = _inside(folder.checkpoints, home)
            if where is None:
                raise BackupError(f"the checkpoints' folder {folder.checkpoints} is not in the server's folder {home}")
            for path in sorted(folder.checkpoints.iterdir()):
                if not path.name.endswith(".ckpt"):
                    continue
                try:
                    content = path.read_bytes()
                except FileNotFoundError:  # removed meanwhile: a newer one was written
                    continue
                try:
                    seq = int(json.loads(content.partition(b"\n")[0])["seq"])
                except (ValueError, KeyError, TypeError):
                    raise BackupError(f"{path} is not a checkpoint (its header is unreadable)") from None
                stage(f"{where}/{path.name}", content, role="checkpoint", seq=seq)
                checkpoints.append({"path": f"{where}/{path.name}", "seq": seq})
        # 2. The signed head: it names a committed record, never one past the table's end.
        head_at = _inside(folder.journal_head, home)
        if head_at is None:
            raise BackupError(f"the journal head {folder.journal_head} is not in the server's folder {home}")
        try:
            head_bytes = folder.journal_head.read_bytes()  # read once: what is stored is what is named
        except FileNotFoundError:
            raise BackupError(f"there is no journal head at {folder.journal_head}: the journal was never started, "
                              "or its head was removed (bingo journal verify)") from None
        try:
            head = head_from_dict(json.loads(head_bytes), head_file(folder.journal_head))
        except (ValueError, ChainError) as error:
            raise BackupError(f"the journal head cannot be backed up: {error}") from None
        stage(head_at, head_bytes, role="head", seq=head.seq)
        # 3. The database, in one snapshot, after both.
        taken = snapshot(folder.database_url, staging)
        if taken.last is None or taken.last[0] < head.seq or any(c["seq"] > taken.last[0] for c in checkpoints):
            end = taken.last[0] if taken.last else 0
            raise BackupError(f"the database's snapshot ends at record {end}, before the head ({head.seq}) or a "
                              "checkpoint read before it: the folder and the database are not the same server's")
        database: dict[str, Any] = _member(taken.member, sha256_file(taken.path), taken.path.stat().st_size,
                                           kind=taken.kind, tables=taken.tables)
        source = sqlite_path(folder.database_url)
        if source is not None:
            database["path"] = _inside(source, home)
        # 4. Everything else of the folder, and the secrets apart.
        found = survey(folder)
        secret_files: dict[str, bytes] = {}
        for relative in found.secrets:
            secret_files[relative] = (home / relative).read_bytes()
        for relative in found.files:
            try:
                content = (home / relative).read_bytes()
            except FileNotFoundError:
                continue  # removed meanwhile
            stage(relative, content, role="config" if folder.config is not None
                  and _inside(folder.config, home) == relative else "file")
        config: dict[str, Any] | None = None
        if folder.config is not None:
            inside = _inside(folder.config, home)
            if inside is None:  # a configuration kept elsewhere travels with the folder all the same
                content = folder.config.read_bytes()
                name = f"{CONFIG}/{folder.config.name}"
                (staging / CONFIG).mkdir(mode=0o700)
                (staging / name).write_bytes(content)
                members.append(_member(name, hashlib.sha256(content).hexdigest(), len(content), role="config"))
                config = {"member": name, "path": None, "name": folder.config.name}
            else:
                config = {"member": f"{FILES}/{inside}", "path": inside, "name": folder.config.name}
        secrets: dict[str, Any] = {
            "stored": "left out" if passphrase is None else "encrypted",
            "files": [{"path": relative, "sha256": hashlib.sha256(content).hexdigest()}
                      for relative, content in sorted(secret_files.items())],
        }
        if passphrase is not None and secret_files:
            sealed = seal_secrets(_tar_of(secret_files), passphrase, archive_id)
            (staging / SECRETS).write_bytes(sealed)
            secrets["member"] = SECRETS
            members.append(_member(SECRETS, hashlib.sha256(sealed).hexdigest(), len(sealed), role="secrets"))
        if journal_key not in secret_files:
            raise BackupError(f"the journal key {folder.journal_key} is not a private key")
        seq, hash, time_ms = taken.last
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "archive": archive_id,
            "server": folder.server,
            "name": folder.name,
            "release": SOFTWARE,
            "made_ms": made_ms,
            "host": socket.gethostname(),
            "home": str(home),
            "journal": {"last_seq": seq, "last_hash": hash, "last_time_ms": time_ms,
                        "head": {"path": head_at, "seq": head.seq, "hash": head.hash},
                        "key": journal_key, "public_key": public_pem(key).decode()},
            "checkpoints": checkpoints,
            "database": database,
            "config": config,
            "files": sorted(members, key=lambda m: m["member"]),
            "secrets": secrets,
            "left_out": dict(sorted(found.left_out.items())),
            "outside": dict(folder.outside),
        }
        _write_archive(out, staging, manifest, key, taken)
        return BackupMade(out, manifest, out.stat().st_size)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_archive(out: Path, staging: Path, manifest: dict[str, Any], key: Ed25519PrivateKey,
                   taken: Snapshot) -> None:
    manifest_bytes = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
    signature = key.sign(manifest_bytes).hex().encode() + b"\n"
    database = manifest["database"]
    listed = [(MANIFEST, hashlib.sha256(manifest_bytes).hexdigest()),
              (SIGNATURE, hashlib.sha256(signature).hexdigest()),
              (database["member"], database["sha256"]),
              *((m["member"], m["sha256"]) for m in manifest["files"])]
    sums = "".join(f"{digest}  {name}\n" for name, digest in listed).encode()
    partial = out.with_name(out.name + ".partial")
    mtime = manifest["made_ms"] // 1000

    def info(name: str, size: int) -> tarfile.TarInfo:
        entry = tarfile.TarInfo(f"{ROOT}/{name}")
        entry.size, entry.mode, entry.mtime = size, 0o600, mtime
        return entry

    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as raw:
            with tarfile.open(fileobj=raw, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT) as tar:
                for name, content in ((MANIFEST, manifest_bytes), (SIGNATURE, signature), (SUMS, sums)):
                    tar.addfile(info(name, len(content)), io.BytesIO(content))
                with open(taken.path, "rb") as stream:
                    tar.addfile(info(database["member"], database["size"]), stream)
                for member in manifest["files"]:
                    with open(staging / member["member"], "rb") as stream:
                        tar.addfile(info(member["member"], member["size"]), stream)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


# --- Restore -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Restored:
    """What :func:`restore` put in place and checked."""

    home: Path
    manifest: dict[str, Any]
    database_url: str
    config: Path | None
    verified: int
    last_type: str
    checkpoints: list[int]
    tables: dict[str, int]
    secrets_from: str
    start: str
    #: The records taken back after the archive's last, from the file and up to the record (``take_back``).
    taken_back: tuple[Path, int, int] | None = None


def _read_archive(archive: Path, staging: Path) -> tuple[dict[str, Any], bytes]:
    """Every member of ``archive`` extracted into ``staging`` and checked; the manifest and its signature."""
    try:
        tar = tarfile.open(archive, "r:*")
    except (OSError, tarfile.TarError) as error:
        raise BackupError(f"{archive} is not a backup archive: {error}") from None
    digests: dict[str, tuple[str, int]] = {}
    try:
        with tar:
            for member in tar:
                name = member.name
                if not name.startswith(ROOT + "/") or not _safe_name(name.removeprefix(ROOT + "/")):
                    raise BackupError(f"{archive} holds {name!r}, which is not a member of a backup archive")
                relative = name.removeprefix(ROOT + "/")
                if member.isdir():
                    continue
                if not member.isfile():
                    raise BackupError(f"{archive} holds {name!r}, which is not a regular file")
                if relative in digests:
                    raise BackupError(f"{archive} holds {name!r} twice")
                target = staging / relative
                target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                stream = tar.extractfile(member)
                assert stream is not None
                digests[relative] = _copy_hashing(stream, target)
    except (OSError, EOFError, tarfile.TarError, zlib.error) as error:
        raise BackupError(f"{archive} cannot be read to its end (cut short, or not a backup): {error}") from None
    for name in (MANIFEST, SIGNATURE, SUMS):
        if name not in digests:
            raise BackupError(f"{archive} holds no {ROOT}/{name}: it is not a backup archive")
    try:
        manifest = json.loads((staging / MANIFEST).read_bytes())
    except ValueError:
        raise BackupError(f"{archive}: its manifest is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not _well_formed(manifest):
        raise BackupError(f"{archive}: its manifest is not a {FORMAT} manifest")
    sums: dict[str, str] = {}
    for line in (staging / SUMS).read_text().splitlines():
        digest, _, name = line.partition("  ")
        sums[name] = digest
    expected: dict[str, str | None] = {MANIFEST: sums.get(MANIFEST), SIGNATURE: sums.get(SIGNATURE)}
    try:
        database = manifest["database"]
        listed = [database, *manifest["files"]]
        for member in listed:
            expected[member["member"]] = member["sha256"]
            if sums.get(member["member"]) != member["sha256"]:
                raise BackupError(f"{archive}: {member['member']} has another SHA-256 in {SUMS} than in the manifest")
    except (KeyError, TypeError):
        raise BackupError(f"{archive}: its manifest does not list its members") from None
    for name, wanted in expected.items():
        if name not in digests:
            raise BackupError(f"{archive} lacks {ROOT}/{name}, which its manifest lists")
        if digests[name][0] != wanted:
            raise BackupError(f"{archive}: {ROOT}/{name} does not match its SHA-256 (the archive is damaged or "
                              "was altered)")
    unlisted = sorted(set(digests) - set(expected) - {SUMS})
    if unlisted:
        raise BackupError(f"{archive} holds {ROOT}/{unlisted[0]}, which its manifest does not list")
    return manifest, (staging / SIGNATURE).read_bytes()


def _has(value: Any, fields: Mapping[str, Any]) -> bool:
    """Whether ``value`` is a dict whose ``fields`` have their types (a tuple of types, or a nested shape)."""
    if not isinstance(value, dict):
        return False
    for name, shape in fields.items():
        if name not in value:
            return False
        if isinstance(shape, dict):
            if not _has(value[name], shape):
                return False
        elif not isinstance(value[name], shape) or isinstance(value[name], bool) and bool not in shape:
            return False
    return True


def _well_formed(manifest: Mapping[str, Any]) -> bool:
    """The manifest holds every field a restore reads, each of its type."""
    text, number = (str,), (int,)
    member = {"member": text, "sha256": text, "size": number}
    return (
        _has(manifest, {"archive": text, "server": text, "name": text, "release": text, "made_ms": number,
                        "host": text, "home": text, "left_out": (dict,), "outside": (dict,),
                        "checkpoints": (list,), "files": (list,),
                        "journal": {"last_seq": number, "last_hash": text, "last_time_ms": number, "key": text,
                                    "head": {"path": text}},
                        "database": {**member, "kind": text, "tables": (dict,)},
                        "secrets": {"stored": text, "files": (list,)}})
        and manifest["database"]["kind"] in ("sqlite", "postgresql")
        and manifest["secrets"]["stored"] in ("left out", "encrypted")
        and all(_has(entry, member) for entry in manifest["files"])
        and all(_has(entry, {"path": text, "seq": number}) for entry in manifest["checkpoints"])
        and all(_has(entry, {"path": text, "sha256": text}) for entry in manifest["secrets"]["files"])
        and (manifest.get("config") is None or _has(manifest["config"], {"member": text, "path": (str, type(None))}))
    )


def _secrets(manifest: Mapping[str, Any], staging: Path, keys: Path | None,
             passphrase: bytes | None) -> tuple[dict[str, bytes], str]:
    """The secret files the manifest lists, each checked against its SHA-256; and where they came from."""
    listed = {entry["path"]: entry["sha256"] for entry in manifest["secrets"]["files"]}
    if not all(isinstance(path, str) and _safe_name(path) for path in listed):
        raise BackupError("the manifest lists a secret outside the server's folder")
    if manifest["secrets"]["stored"] == "encrypted":
        if passphrase is None:
            raise BackupError("the archive's keys are encrypted in it: give the passphrase (--passphrase-file)")
        files = _untar(open_secrets((staging / SECRETS).read_bytes(), passphrase, manifest["archive"]))
        source = f"{SECRETS}, opened with the passphrase"
    else:
        if keys is None:
            raise BackupError("the archive holds no keys (they were left out): give the folder that holds them, "
                              "laid out as the server's folder (--keys DIR): " + ", ".join(sorted(listed)))
        files = {}
        for relative in listed:
            try:
                files[relative] = (keys / relative).read_bytes()
            except OSError:
                raise BackupError(f"the keys folder {keys} has no {relative}, which the server's folder held "
                                  "when it was backed up") from None
        source = f"the keys folder {keys}"
    for relative, digest in listed.items():
        if relative not in files:
            raise BackupError(f"{source} lacks {relative}")
        if hashlib.sha256(files[relative]).hexdigest() != digest:
            raise BackupError(f"{relative} from {source} is not the one the server's folder held when it was "
                              "backed up (another key)")
    return {relative: files[relative] for relative in listed}, source


def _check_signature(manifest: Mapping[str, Any], signature: bytes, manifest_bytes: bytes,
                     secret_files: Mapping[str, bytes]) -> Ed25519PrivateKey:
    relative = manifest["journal"]["key"]
    try:
        key = serialization.load_pem_private_key(secret_files[relative], password=None)
    except (KeyError, ValueError):
        raise BackupError(f"the journal key {relative} is missing or not a PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BackupError(f"the journal key {relative} is not an Ed25519 key")
    public: Ed25519PublicKey = key.public_key()
    try:
        public.verify(bytes.fromhex(signature.decode().strip()), manifest_bytes)
    except (InvalidSignature, ValueError, UnicodeDecodeError):
        raise BackupError("the archive's manifest is not signed by the journal key restored with it (another "
                          "server's key, or the manifest was altered)") from None
    return key


def _write_private(path: Path, content: bytes) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(content)


def restore(archive: Path, home: Path, *, database_url: str | None = None, keys: Path | None = None,
            passphrase: bytes | None = None, records: Path | None = None,
            kind_for: Callable[[str], ServerKind] = kind_of) -> Restored:
    """Restore ``archive`` into the new (absent or empty) folder ``home``, verify it, and say what it holds.

    ``database_url``: the empty PostgreSQL database to restore a PostgreSQL archive into
    (a SQLite archive's database goes into ``home``).  ``keys`` or ``passphrase``: where
    the server's keys come from (left out of the archive, or encrypted in it).
    ``records``: the server's records after the archive's last, as the regulator's
    receiver holds them (``bingo regulator export-records``), taken back (:func:`take_back`).
    """
    if home.exists() and (not home.is_dir() or any(home.iterdir())):
        raise BackupError(f"{home} is not an empty folder: a restore goes into a new or empty folder only")
    if not archive.is_file():
        raise BackupError(f"there is no archive at {archive}")
    created = not home.exists()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    home = home.resolve()
    staging = Path(tempfile.mkdtemp(prefix=".restoring-", dir=home))
    filled: str | None = None  # a PostgreSQL database restored into, once it is
    try:
        manifest, signature = _read_archive(archive, staging)
        kind = kind_for(str(manifest["server"]))
        secret_files, secrets_from = _secrets(manifest, staging, keys, passphrase)
        key = _check_signature(manifest, signature, (staging / MANIFEST).read_bytes(), secret_files)
        url = _put_in_place(manifest, kind, staging, home, secret_files, database_url)
        filled = url if sqlite_path(url) is None else None
        result = _verify(manifest, kind, home, key, url, secrets_from)
        if records is not None:
            taken = take_back(url, key, _within(home, manifest["journal"]["head"]["path"]), records)
            result = dataclasses.replace(result, taken_back=taken)
        shutil.rmtree(staging)
        make_private(home)
        return result
    except BaseException as error:
        if created:
            shutil.rmtree(home, ignore_errors=True)
        else:
            for child in list(home.iterdir()):
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        if filled is not None and isinstance(error, BackupError):
            raise BackupError(f"{error}; the database {shown_url(filled)} holds what was restored into it: drop it "
                              "and create it again, empty, before another restore") from None
        raise


def _within(home: Path, relative: Any) -> Path:
    """``home / relative``, a path the manifest names, which must lie in the server's folder."""
    if not isinstance(relative, str) or not _safe_name(relative):
        raise BackupError(f"the manifest names {relative!r}, which is not a file of a server's folder")
    return home / relative


def _put_in_place(manifest: Mapping[str, Any], kind: ServerKind, staging: Path, home: Path,
                  secret_files: Mapping[str, bytes], database_url: str | None) -> str:
    """Every file and secret in ``home``, the configuration moved, then the database restored; its URL.

    The database comes last: whatever is refused before it leaves a PostgreSQL database untouched.
    """
    for member in manifest["files"]:
        if "path" not in member:  # the secrets, and a configuration kept outside the old folder
            continue
        target = _within(home, member["path"])
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.replace(staging / member["member"], target)
    for relative, content in secret_files.items():
        _write_private(_within(home, relative), content)
    database = manifest["database"]
    if database["kind"] == "sqlite":
        if database_url is not None:
            raise BackupError("the archive's database is SQLite: it is restored into the new folder; --db is for a "
                              "PostgreSQL archive")
        target = _within(home, database.get("path") or kind.database_name)
        url = f"sqlite:///{target}"
    else:
        if database_url is None:
            raise BackupError("the archive's database is PostgreSQL: give the new, empty database to restore it "
                              "into (--db postgresql://USER@HOST:PORT/NAME)")
        if sqlite_path(database_url) is not None:
            raise BackupError("the archive's database is PostgreSQL: --db names a PostgreSQL database")
        url = database_url
    config = manifest.get("config")
    if config is not None and kind.config_name is not None:
        path = _within(home, config["path"] or kind.config_name)
        if config["path"] is None:  # kept outside the old folder: it comes into the new one
            _write_private(path, (staging / config["member"]).read_bytes())
        _relocate_config(path, kind, manifest["home"], home, url)
    if database["kind"] == "sqlite":
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.replace(staging / database["member"], target)
    else:
        from server_kit import backup_postgres

        backup_postgres.restore(staging / database["member"], url)
    return url


def _verify(manifest: Mapping[str, Any], kind: ServerKind, home: Path, key: Ed25519PrivateKey, url: str,
            secrets_from: str) -> Restored:
    from server_kit.db.database import create
    from server_kit.journal.checkpoints import CheckpointError, CheckpointStore
    from server_kit.journal.sql import Journal

    journal_info = manifest["journal"]
    head = _within(home, journal_info["head"]["path"])
    engine = create(url, create_folder=False)
    try:
        journal = Journal(engine, key, head)
        try:
            verified = journal.verify()
        except ChainError as error:
            raise BackupError(f"the restored journal does not verify: {error}") from None
        last = journal.last
        if last is None or verified != journal_info["last_seq"] or last.hash != journal_info["last_hash"]:
            raise BackupError(f"the restored journal ends at record {verified}, not at the manifest's "
                              f"{journal_info['last_seq']} ({journal_info['last_hash']})")
        journal.repair_head()  # the head taken before the snapshot may lag it: it names the last record now
        seqs = []
        for entry in manifest["checkpoints"]:
            path = _within(home, entry["path"])
            store = CheckpointStore(path.parent, key, release="")
            try:
                checkpoint = store.read(path)
            except CheckpointError as error:
                raise BackupError(f"a restored checkpoint is not whole: {error}") from None
            record = journal.record(checkpoint.seq)
            if record is None or record.hash != checkpoint.hash:
                raise BackupError(f"the restored checkpoint {entry['path']} stands at record {checkpoint.seq}, which "
                                  "the restored journal does not hold as it was")
            seqs.append(checkpoint.seq)
        tables = _tables(url)
        expected = manifest["database"]["tables"]
        if tables != expected:
            differing = sorted(name for name in set(tables) | set(expected) if tables.get(name) != expected.get(name))
            raise BackupError("the restored database does not hold what was backed up: " + ", ".join(
                f"{name} {tables.get(name, 'none')} rows, not {expected.get(name, 'none')}" for name in differing))
    finally:
        engine.dispose()
    config = home / (manifest["config"]["path"] or kind.config_name) if manifest.get("config") and kind.config_name \
        else None
    return Restored(home, dict(manifest), url, config, verified, last.type, sorted(seqs), tables, secrets_from,
                    kind.start_command(home, config, url))


def _holds_commitment(value: Any) -> bool:
    if is_commitment(value):
        return True
    if isinstance(value, dict):
        return any(_holds_commitment(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_commitment(item) for item in value)
    return False


def take_back(url: str, key: Ed25519PrivateKey, head: Path, path: Path) -> tuple[Path, int, int]:
    """The records in ``path`` (``journal.jsonl`` lines) after the journal's last, appended; (path, first, last).

    They are what the server reported after its backup, as the regulator's receiver holds
    them (``bingo regulator export-records``): each must follow the one before (the first,
    the restored journal's last record), match its hash and carry the journal key's
    signature, or nothing is appended.  A record the receiver holds in its sealed form (a
    PIN's hash or a terminal's token replaced by its commitment) cannot give the server its
    secret back: it is refused, named.  Records the file holds up to the journal's last
    must be the journal's own.  The head then names the last record taken back.
    """
    from server_kit.audit_folder import read_journal, verify_segment
    from server_kit.db.database import create
    from server_kit.journal import table
    from server_kit.journal.sql import Journal

    try:
        given = list(read_journal(path))
    except OSError as error:
        raise BackupError(f"the records file {path} cannot be read: {error.strerror or error}") from None
    except ChainError as error:
        raise BackupError(str(error)) from None
    engine = create(url, create_folder=False)
    try:
        journal = Journal(engine, key, head)
        last = journal.last
        assert last is not None  # a restored journal is verified, never empty
        for record in (r for r in given if r.seq <= last.seq):
            held = journal.record(record.seq)
            if held is None or held.hash != record.hash:
                raise BackupError(f"{path}: record {record.seq} is not the restored journal's record {record.seq}: "
                                  "these are not this server's records")
        after = [r for r in given if r.seq > last.seq]
        if not after:
            raise BackupError(f"{path} holds no record after the restored journal's last ({last.seq})")
        if after[0].seq != last.seq + 1 or after[0].prev != last.hash:
            raise BackupError(f"{path}: its record {after[0].seq} does not follow the restored journal's last record "
                              f"({last.seq}): records are missing between them")
        try:
            verify_segment(after, key.public_key())
        except ChainError as error:
            raise BackupError(f"{path}: {error}; nothing was taken back") from None
        sealed = next((r for r in after if _holds_commitment(r.payload)), None)
        if sealed is not None:
            raise BackupError(
                f"{path}: record {sealed.seq} ({sealed.type}) holds a secret in its sealed form (its commitment, not "
                "the PIN's hash or the token's): the receiver's copy cannot give it back; nothing was taken back "
                "(docs/backup.md, \"After a restore\")")
        table.append(engine, after)
        journal.last = after[-1]
        journal.write_head()
        try:
            journal.verify(after=(last.seq, last.hash))
        except ChainError as error:
            raise BackupError(f"the journal with the records taken back does not verify: {error}") from None
        return path, after[0].seq, after[-1].seq
    finally:
        engine.dispose()


def _tables(url: str) -> dict[str, int]:
    path = sqlite_path(url)
    if path is None:
        from server_kit import backup_postgres

        return backup_postgres.table_counts(url)
    connection = sqlite3.connect(_read_only(path), uri=True)
    try:
        return sqlite_counts(connection)[1]
    finally:
        connection.close()


# --- The configuration, moved to the new home -------------------------------------------

_UNSAFE_PATH = re.compile(r"[\"'\\\x00-\x1f]")


def toml_set(text: str, table: str, key: str, value: str) -> str:
    """``text`` with ``[table] key`` set to the string ``value`` (the line replaced, or added)."""
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]\s*(#.*)?$")
    any_header = re.compile(r"^\s*\[")
    assignment = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
    line = f"{key} = {toml_string(value)}\n"
    for index, current in enumerate(lines):
        if header.match(current):
            end = next((k for k in range(index + 1, len(lines)) if any_header.match(lines[k])), len(lines))
            for k in range(index + 1, end):
                if assignment.match(lines[k]):
                    lines[k] = line
                    return "".join(lines)
            lines.insert(index + 1, line)
            return "".join(lines)
    ending = "" if not lines or lines[-1].endswith("\n") else "\n"
    return "".join(lines) + f"{ending}\n[{table}]\n{line}"


def _relocate_config(path: Path, kind: ServerKind, old_home: str, home: Path, url: str) -> None:
    """The restored configuration at ``path`` made to name ``home`` and the restored database.

    Its home becomes its own folder (``"."``), every path under the old folder is moved
    under the new one, and the database URL is set when the configuration would
    otherwise name another; it is then read back with the server's own reader.
    """
    if _UNSAFE_PATH.search(str(home)):
        raise BackupError(f"{home}: a folder whose name has a quote, a backslash or a control character cannot be "
                          "named in a configuration; choose another")
    text = path.read_text()
    text = re.sub(r"(?<=[\"'])" + re.escape(old_home) + r"(?=[/\"'])", str(home), text)
    text = re.sub(r"(?<=sqlite:///)" + re.escape(old_home) + r"(?=[/\"'])", str(home), text)
    if kind.home_key is not None:
        text = toml_set(text, *kind.home_key, ".")
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BackupError(f"the configuration {path} could not be moved to {home} ({error}): edit its home and "
                          "database by hand") from None
    path.write_text(text)
    if kind.read_config is None:
        return
    found_home, found_url = kind.read_config(path)
    if kind.database_key is not None and not _same_database(found_url, url):
        text = toml_set(text, *kind.database_key, url)
        path.write_text(text)
        found_home, found_url = kind.read_config(path)
    if found_home.resolve() != home or not _same_database(found_url, url):
        raise BackupError(f"the configuration {path} names the folder {found_home} and the database "
                          f"{shown_url(found_url)} after it was moved, not {home} and {shown_url(url)}: edit it")


def _same_database(one: str, other: str) -> bool:
    first, second = sqlite_path(one), sqlite_path(other)
    if first is not None or second is not None:
        return first is not None and second is not None and first.resolve() == second.resolve()
    return make_url(one).render_as_string(hide_password=False) == make_url(other).render_as_string(hide_password=False)


# --- What a person is told ---------------------------------------------------------------


def backup_lines(made: BackupMade) -> list[str]:
    """What ``bingo backup`` prints of the archive it wrote."""
    manifest = made.manifest
    journal, secrets = manifest["journal"], manifest["secrets"]
    database = manifest["database"]
    lines = [
        f"{made.archive}: a backup of the {manifest['server']} server {manifest['name']!r} ({manifest['release']}), "
        f"{made.size:,} bytes",
        f"journal: records 1 to {journal['last_seq']} (last hash {journal['last_hash']}, {_when(journal['last_time_ms'])}); "
        f"its signed head at record {journal['head']['seq']}, read before the database",
        f"database: {database['kind']}, one snapshot: " + ", ".join(
            f"{name} {rows}" for name, rows in sorted(database["tables"].items()) if rows) + " rows",
        f"checkpoints: {len(manifest['checkpoints'])}" + (
            " (records " + ", ".join(str(c["seq"]) for c in manifest["checkpoints"]) + ")" if manifest["checkpoints"]
            else ""),
        f"files: {sum(1 for m in manifest['files'] if m.get('role') in ('file', 'config'))}, each with its SHA-256 "
        f"in the manifest, which the journal key signs",
    ]
    names = ", ".join(entry["path"] for entry in secrets["files"])
    if secrets["stored"] == "encrypted":
        lines.append(f"keys: encrypted in {SECRETS} with the passphrase ({names})")
    else:
        lines.append(f"keys: left out ({names}); `bingo restore` takes them from a folder you keep apart (--keys)")
    for path, why in manifest["left_out"].items():
        lines.append(f"left out: {path}: {why}")
    for path, what in manifest["outside"].items():
        lines.append(f"not in the backup: {path} ({what}), outside the server's folder")
    return lines


def restore_lines(restored: Restored) -> list[str]:
    """What ``bingo restore`` prints of what it restored."""
    manifest = restored.manifest
    journal = manifest["journal"]
    lines = [
        f"restored the {manifest['server']} server {manifest['name']!r} into {restored.home}: backed up "
        f"{_when(manifest['made_ms'])} on {manifest['host']} by {manifest['release']}",
        f"journal: {restored.verified} records verified (each hash, link and signature, and the signed head); last "
        f"record {journal['last_seq']} ({restored.last_type}, {_when(journal['last_time_ms'])}), hash "
        f"{journal['last_hash']}; the head now names it",
        f"database: {shown_url(restored.database_url)}: " + ", ".join(
            f"{name} {rows}" for name, rows in sorted(restored.tables.items()) if rows) + " rows, as backed up",
        f"checkpoints: {len(restored.checkpoints)}" + (
            " (records " + ", ".join(map(str, restored.checkpoints)) + "), each signed and on the journal"
            if restored.checkpoints else ""),
        f"files: {sum(1 for m in manifest['files'] if m.get('role') in ('file', 'config', 'head', 'checkpoint'))}, "
        f"each matching its SHA-256; the manifest's signature checked with the journal key",
        f"keys: {len(manifest['secrets']['files'])} from {restored.secrets_from}, each matching its SHA-256",
    ]
    if restored.config is not None:
        lines.append(f"configuration: {restored.config}, moved to this folder and this database")
    if manifest["release"] != SOFTWARE:
        lines.append(f"release: the backup was made by {manifest['release']}, this is {SOFTWARE}: starting it here "
                     "upgrades the folder (the start applies the migrations)")
    for path, what in manifest["outside"].items():
        lines.append(f"not restored: {path} ({what}) was outside the server's folder: put it back as it was")
    last = journal["last_seq"]
    if restored.taken_back is not None:
        path, first, last = restored.taken_back
        lines.append(f"taken back: records {first} to {last} from {path}, each following the one before and signed by "
                     f"the journal key; the head now names record {last}")
    lines.append(f"start it: {restored.start}")
    lines.append(f"the regulator's receiver and the central server may hold records after {last}: the server stops "
                 "when they do (docs/backup.md, \"After a restore\")")
    return lines


__all__ = [
    "BackupError", "BackupMade", "Restored", "ServerFolder", "ServerKind", "Snapshot", "backup", "backup_lines",
    "database_snapshot", "is_secret", "kind_of", "open_secrets", "read_passphrase", "restore", "restore_lines",
    "seal_secrets", "sqlite_snapshot", "survey", "take_back", "toml_set",
]


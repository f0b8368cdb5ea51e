"""What a hall's start makes and checks before its journal is opened.

A first start on the embedded default makes what is missing, never overwriting: the
release manifest the verification checks, a local certificate authority *beside* the
server's PKI folder (``operator-ca/``: its key belongs to the operator, and every start
says so until it is moved), the server's certificate, one terminal's certificate bundle
(``terminal-certs/terminal-1/``), the report-signing certificate and the configured card
set with its series.  :func:`preflight` checks what can be checked before anything is
made; :class:`CreatedByStart` removes what a refused start made before its journal held
a record; :func:`make_private` makes the hall's folder and files its user's alone
(folders 0700, files 0600) at every start; :func:`hand_over_logins` gives the passwords
of new staff logins once, never to a log.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from twisted.logger import Logger

from hall_server.config import ConfigError, HallConfig
from hall_server.hall.videobingo import VbConfigError, load_machines
from hall_server.store import cards as card_store
from protocol.cards import CARDS_PER_STRIP
from protocol.library import build_distinct_strips
from protocol.videobingo.errors import PaytableError
from protocol.videobingo.paytable import MAX_PAYTABLE_BYTES, load_paytable
from server_kit import pki, private
from server_kit.boot import StartRefused
from server_kit.db.database import check_sqlite_files, sqlite_files
from server_kit.journal import table
from server_kit.journal.sql import head_path
from server_kit.keys import report_cert_path
from server_kit.verification import write_manifest

log = Logger()
#: The local certificate authority a first start creates, beside the server's PKI folder.
OPERATOR_CA = "operator-ca"
#: The terminal whose certificate bundle a first start writes, under ``terminal-certs/``.
FIRST_TERMINAL = "terminal-1"
#: The free space a start asks of each disk it writes to (keys, certificates, the card set,
#: the first records): below it the start is refused before it creates anything.
START_FREE_BYTES = 16 * 1024 * 1024


def provision(config: HallConfig) -> None:
    """Make what a first start needs and lacks: PKI, release manifest (never overwriting)."""
    provision_release(config)
    if config.tls.enabled:
        provision_pki(config)
    else:
        log.warn("TLS is off ([tls] enabled = false): nothing is encrypted and terminals are known by their "
                 "token alone; use this on a test bench only")


def operator_ca_dir(config: HallConfig) -> Path:
    return config.home / OPERATOR_CA


def terminal_bundle_dir(config: HallConfig, name: str = FIRST_TERMINAL) -> Path:
    return config.home / "terminal-certs" / name


def provision_pki(config: HallConfig) -> None:
    """The server's certificate in its PKI folder; on a first start, from a local authority.

    The authority's key never enters the server's folder: a first start creates it in
    ``operator-ca/`` beside it, copies out what the server needs (``ca.pem``,
    ``crl.pem``, the server's certificate and key) and one terminal's bundle, and every
    start warns while a CA key is on this machine.
    """
    tls = config.tls
    served = pki.PkiFolder(tls.pki_dir)
    operator = pki.PkiFolder(operator_ca_dir(config))
    if not served.cert(tls.server_name).exists():
        created = False
        if not operator.ca_key.exists():
            if served.ca_cert.exists() or operator.ca_cert.exists():
                raise StartRefused(
                    f"there is no server certificate {tls.server_name} in {tls.pki_dir}: issue it on the operator's "
                    f"machine (`bingo pki issue server {tls.server_name} --host ...`) and copy it here (docs/pki.md)"
                )
            log.info("Creating a local certificate authority in {dir}", dir=str(operator.root))
            pki.init_authority(operator.root, config.name)
            created = True
        log.info("Issuing the server certificate {name}", name=tls.server_name)
        pki.issue_certificate(operator.root, "server", tls.server_name)
        pki.export_bundle(operator.root, tls.server_name, served.root)
        if created:
            pki.issue_certificate(operator.root, "terminal", FIRST_TERMINAL)
            bundle = pki.export_bundle(operator.root, FIRST_TERMINAL, terminal_bundle_dir(config))
            log.info(
                "Terminal certificate {name} written to {dir}: copy it to the kiosk, and enrol that terminal "
                "as {name}; issue more with `bingo pki issue terminal NAME --dir {ca}` (docs/pki.md)",
                name=FIRST_TERMINAL, dir=str(bundle.root), ca=str(operator.root),
            )
    if operator.ca_key.exists():
        provision_report_signing(config, operator)
    for key in (operator.ca_key, served.ca_key):
        if key.exists():
            log.warn(
                "THE CERTIFICATE AUTHORITY'S PRIVATE KEY IS ON THIS SERVER: {key}. Whoever holds it can issue "
                "certificates every hall server accepts. Move the folder {dir} to the operator's offline machine "
                "(docs/pki.md) and keep only ca.pem, crl.pem and the server's own certificate here.",
                key=str(key), dir=str(key.parent),
            )


def provision_report_signing(config: HallConfig, operator: pki.PkiFolder) -> None:
    """With the local authority of a first start, the hall's report-signing certificate in ``keys/``
    (docs/reports.md): its daily reports are signed from the first session's close."""
    if report_cert_path(config.home).exists():
        return
    name = f"{config.tls.server_name}-reports"
    if not operator.cert(name).exists():
        log.info("Issuing the report-signing certificate {name}", name=name)
        pki.issue_certificate(operator.root, "report-signing", name)
    pki.install_report_signing(operator.root, name, config.home)


def make_private(config: HallConfig) -> None:
    """Folders 0700 and files 0600: the configuration (staff hashes), the database (PIN
    hashes, identity documents), the journal head, the keys, the PKI and its bundles."""
    owned = [config.home, config.home / "keys", head_path(config.home), operator_ca_dir(config),
             config.home / "terminal-certs", release_manifest(config)]
    if config.source is not None:
        owned.append(config.source)
    if config.tls.enabled:
        owned.append(config.tls.pki_dir)
    owned += sqlite_files(config.database_url)
    if config.home.exists():
        config.home.chmod(0o700)
    for path in owned:
        private.make_private(path)


def release_fingerprint(config: HallConfig) -> str:
    """What a checkpoint is bound to besides the chain: the installed release (its manifest's hash)."""
    try:
        return hashlib.sha256(release_manifest(config).read_bytes()).hexdigest()
    except FileNotFoundError:
        return "no release manifest"


def release_manifest(config: HallConfig) -> Path:
    return config.home / "release-manifest.json"


def provision_release(config: HallConfig) -> None:
    """On a first start the installed files become the release the verification checks."""
    manifest = release_manifest(config)
    if not manifest.exists():
        count = write_manifest(manifest)
        log.info("Recorded the release manifest of {n} installed files in {path}", n=count, path=str(manifest))


def provision_cards(config: HallConfig, engine: Any) -> None:
    """The configured card set (generated if missing and allowed) and its series."""
    sets = {s.name: s for s in card_store.list_sets(engine)}
    if config.card_set not in sets and config.generate_strips and config.series:
        log.info(
            "Generating card set {name}: {n} strips of {k} cards",
            name=config.card_set, n=config.generate_strips, k=CARDS_PER_STRIP,
        )
        cells = build_distinct_strips(config.generate_strips, card_store.registered_prints(engine))
        labels = [str(k // CARDS_PER_STRIP + 1) for k in range(len(cells))]
        card_store.add_card_set(engine, config.card_set, cells, labels, "generated")
    known = {s.number for card_set in card_store.list_sets(engine) for s in card_set.series}
    for series in config.series:
        if series.number not in known:
            card_store.add_series(engine, config.card_set, series.number, series.face_value_cents, series.card_count)


def _existing(path: Path) -> Path:
    """``path`` or its nearest folder that exists (where a file to be made would go)."""
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def preflight(config: HallConfig) -> None:
    """Check what a start can check before it creates anything; :class:`StartRefused` saying what to do.

    The database's folder must exist when ``[database] url`` names one (a typed folder is
    never made); its files and the hall's folder must be writable, none of them immutable
    (SQLite maps its ``-shm`` file: writing through the mapping of an immutable file ends
    the process with SIGBUS), and each disk must have :data:`START_FREE_BYTES` free; the
    blower link's key file and the video bingo paytables must read.
    """
    folders = [_existing(config.home)]
    check_sqlite_files(config.database_url)
    folders += [database.parent for database in sqlite_files(config.database_url)[:1]]
    for folder in folders:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise StartRefused(f"{folder} cannot be written by this user: the hall keeps its files there")
        free = shutil.disk_usage(folder).free
        if free < START_FREE_BYTES:
            raise StartRefused(f"the disk holding {folder} is full ({free // 1024} KB free; a start needs "
                               f"{START_FREE_BYTES // 2**20} MB): free space on it and start again")
    if config.draw.blower:
        blower_link_key(config)
    if config.videobingo is not None:
        load_videobingo(config)


class CreatedByStart:
    """What a start creates before its journal holds a record, removed again if the start is refused.

    The paths under the hall's folder, its PKI folder and the SQLite database's files that
    did not exist when the start began.  Once the journal holds its first record the
    start's files are the journal's and stay.
    """

    def __init__(self, config: HallConfig) -> None:
        self.roots = [config.home, config.tls.pki_dir, operator_ca_dir(config), *sqlite_files(config.database_url)]
        self.before = {path for root in self.roots for path in self._paths(root)}

    @staticmethod
    def _paths(root: Path) -> list[Path]:
        if not root.exists() and not root.is_symlink():
            return []
        if root.is_dir() and not root.is_symlink():
            return [root, *root.rglob("*")]
        return [root]

    def refused(self, engine: Any) -> None:
        """The start was refused: what it made goes, unless the database it opened (``engine``, or
        None) holds a journal record: a journal with a record keeps its key and head."""
        if not _holds_records(engine):
            self.remove()

    def remove(self) -> None:
        made = sorted({path for root in self.roots for path in self._paths(root)} - self.before,
                      key=lambda p: len(p.parts), reverse=True)
        for path in made:
            try:
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                else:
                    path.unlink()
            except OSError as error:
                log.warn("The refused start could not remove {path}, which it made: {error}", path=str(path),
                         error=str(error))
        if made:
            log.info("The refused start removed the {n} files and folders it had made", n=len(made))


def load_videobingo(config: HallConfig) -> Any:
    """The machines of ``[videobingo]`` with their paytables read and certified; :class:`StartRefused` if one cannot be."""
    assert config.videobingo is not None
    paytables = {}
    for machine in config.videobingo.machines:
        try:
            with open(machine.paytable, "rb") as stream:
                paytables[machine.machine_id] = load_paytable(stream.read(MAX_PAYTABLE_BYTES + 1))
        except OSError as error:
            raise StartRefused(f"video bingo machine {machine.machine_id}: {machine.paytable}: cannot be read: "
                               f"{error.strerror}") from None
        except PaytableError as error:
            raise StartRefused(f"video bingo machine {machine.machine_id}: {machine.paytable}: {error}") from None
    try:
        return load_machines(config.videobingo, paytables)
    except VbConfigError as error:
        raise StartRefused(str(error)) from None


def blower_link_key(config: HallConfig) -> bytes:
    """The blower link's key from ``[draw] key_file`` (empty without one); :class:`ConfigError` if it does not read."""
    key_file = config.draw.key_file
    if key_file is None:
        return b""
    try:
        return bytes.fromhex(key_file.read_text().strip())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{key_file}: the blower link key is one line of hex ({error})") from None


LOGINS_FILE = "new-staff-logins.txt"


def hand_over_logins(logins: list[tuple[str, Any, str]], config_path: Path) -> None:
    """The passwords of new staff logins, once, to the terminal that started the hall; never to a log.

    Where the hall was started without a terminal (a service manager, whose output is a
    log), they go to a file beside the configuration that only this user can read, and
    the log says where it is.
    """
    lines = [f"Wrote {config_path} with these staff logins (shown only now; only their hashes are kept):"]
    lines += [f"  {name:<8} {str(role).replace('_', ' '):<15} password: {password}" for name, role, password in logins]
    text = "\n".join(lines) + "\n"
    try:
        with open("/dev/tty", "w") as terminal:
            terminal.write(text)
        return
    except OSError:
        pass  # no controlling terminal
    path = config_path.parent / LOGINS_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as stream:
        stream.write(text)
    os.chmod(path, 0o600)
    log.warn(
        "New staff logins were written to {path} (readable by this user only): give each login to its "
        "person, then delete the file",
        path=str(path),
    )


def _holds_records(engine: Any) -> bool:
    """Whether the database a refused start opened holds journal records (when in doubt, it does)."""
    try:
        return engine is not None and table.last_record(engine) is not None
    except Exception:
        return True

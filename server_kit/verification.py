"""The checks a server runs on itself before it trusts its state (R84.1, R92.5e).

Each check gives ``None`` (passed) or the fault in words:

* ``journal`` - every record's hash, link and signature, and the head kept outside the
  database (:meth:`Journal.verify`);
* ``database`` - the database's own integrity check (SQLite ``PRAGMA
  integrity_check``; a round trip elsewhere) and its schema at the newest migration;
* ``clock`` - the server clock may not stand before the last journal record (a clock
  set back would stamp facts out of order) nor before this software's release;
* ``software`` - every installed file of the system hashed, and every installed
  distribution (Twisted, cryptography, numpy, ...: its name, version and the SHA-256
  of its ``RECORD``, which lists each of its files with its hash) compared with the
  release manifest written when the release was installed (``bingo release
  manifest``); a file or distribution added, removed or changed since is named.

The checks read and hash files and the database, so they run on a worker thread; a
server composes them with checks of its own (the hall adds its draw device's) and
journals the outcome.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping

from sqlalchemy import Engine, text

from protocol.errors import N_, DomainError, Phrase
from server_kit.db.database import is_current
from server_kit.journal.port import JournalPort

#: The packages whose files make up the installed system (one release for every server).
PACKAGES = ("protocol", "server_kit", "hall_server", "central_server", "terminals", "ball_blower_fw")
#: No clock reading before this is plausible for this release.
EARLIEST_PLAUSIBLE_MS = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp() * 1000)
MANIFEST_FORMAT = "bingo-release-manifest/2"
#: Manifests of earlier releases name only the system's files.
FILES_ONLY_FORMAT = "bingo-release-manifest/1"


class ManifestError(DomainError):
    pass


def installed_files(root: Path) -> dict[str, str]:
    """SHA-256 of every source and data file of the system's packages under ``root``."""
    hashes: dict[str, str] = {}
    for package in PACKAGES:
        folder = root / package
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            hashes[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def installed_distributions() -> dict[str, dict[str, str]]:
    """Every distribution installed beside the system: its version and the SHA-256 of its
    ``RECORD`` (each installed file with its own hash; ``METADATA`` where there is no RECORD)."""
    found: dict[str, dict[str, str]] = {}
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if not name:
            continue
        listing = distribution.read_text("RECORD") or distribution.read_text("METADATA") or ""
        found[_normalised(name)] = {
            "version": distribution.version,
            "sha256": hashlib.sha256(listing.encode()).hexdigest(),
        }
    return dict(sorted(found.items()))


def _normalised(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``PyNaCl`` and ``pynacl`` are one)."""
    return "-".join(part for part in name.lower().replace("_", "-").replace(".", "-").split("-") if part)


def source_root() -> Path:
    """The folder that holds the installed packages (the repository with an editable install)."""
    return Path(__file__).resolve().parents[1]


def write_manifest(path: Path, root: Path | None = None) -> int:
    """Write the release manifest of the files installed under ``root``; their count."""
    from server_kit.release import release_version

    files = installed_files(root or source_root())
    manifest = {
        "format": MANIFEST_FORMAT,
        "release": release_version(),
        "files": files,
        "distributions": installed_distributions(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    partial.replace(path)
    return len(files)


def check_software(manifest: Path, root: Path | None = None) -> str | None:
    if not manifest.exists():
        return Phrase(N_("no release manifest at {manifest}; install the release with `bingo release manifest`"),
                      manifest=manifest)
    try:
        data = json.loads(manifest.read_text())
        expected = data["files"]
        libraries = data.get("distributions", {}) if data.get("format") == MANIFEST_FORMAT else None
        if data.get("format") not in (MANIFEST_FORMAT, FILES_ONLY_FORMAT) or not isinstance(expected, dict):
            raise ValueError
        if libraries is not None and not isinstance(libraries, dict):
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return Phrase(N_("the release manifest {manifest} is unreadable"), manifest=manifest)
    faults = _differences(expected, installed_files(root or source_root()), "")
    if libraries is not None:
        faults += _differences(libraries, installed_distributions(), "library ")
    if not faults:
        return None
    return Phrase(N_("installed software differs from the release manifest ({faults})"), faults="; ".join(faults))


def _differences(expected: Mapping[str, object], actual: Mapping[str, object], kind: str) -> list[str]:
    """What was changed, added and is missing, each with up to five names."""
    changed = sorted(name for name in expected.keys() & actual.keys() if expected[name] != actual[name])
    added = sorted(actual.keys() - expected.keys())
    removed = sorted(expected.keys() - actual.keys())
    faults = []
    for label, names in (("changed", changed), ("added", added), ("missing", removed)):
        if names:
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            faults.append(f"{kind}{label}: {shown}")
    return faults


def check_journal(journal: JournalPort) -> str | None:
    try:
        journal.verify()
    except DomainError as error:  # a fault worded from the catalogs keeps its template for the console
        return Phrase(error.template, **error.template_params) if error.template is not None else str(error)
    return None


def check_database(engine: Engine, migrations: str) -> str | None:
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            outcome = connection.execute(text("PRAGMA integrity_check")).scalar()
            if outcome != "ok":
                return Phrase(N_("the database's integrity check failed: {outcome}"), outcome=outcome)
        else:
            connection.execute(text("SELECT 1"))
    if not is_current(engine, migrations):
        return Phrase(N_("the database schema is not at the newest migration"))
    return None


def check_clock(wall_ms: Callable[[], int], journal: JournalPort) -> str | None:
    """Whether the wall clock (``wall_ms``, read here) stands before the journal's last record.

    The last record is taken first and the clock read after it: a record committed while the
    other checks ran (a ball of a network game) is no clock set back.
    """
    last = journal.last
    now_ms = wall_ms()
    if now_ms < EARLIEST_PLAUSIBLE_MS:
        return Phrase(N_("the server clock stands before this software's release; set the clock"))
    if last is not None and now_ms < last.time_ms:
        behind = (last.time_ms - now_ms) // 1000
        return Phrase(N_("the server clock is {behind} s behind the last journal record; it was set back"),
                      behind=behind)
    return None

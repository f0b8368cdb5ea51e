"""The pre-session verification checks the real system (R84.1, R92.5e)."""

import json
import shutil
from pathlib import Path

import pytest

from hall_server.hall.roles import Role
from hall_server.hall.session import CHECKS, SessionError, SessionModule
from hall_server.store.database import MIGRATIONS
from hall_server.verification import verify_system
from server_kit.core import Actor, CommandCore, NotAllowed
from server_kit.journal.sql import Journal
from server_kit.verification import (
    check_clock,
    check_database,
    check_software,
    installed_files,
    source_root,
    write_manifest,
)
from protocol.ledger import Posting
from protocol.records.game import BallDrawn
from tests.hall.conftest import result

ADMIN = Actor("ines", Role.ADMINISTRATOR)
CHIEF = Actor("rui", Role.ROOM_CHIEF)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A copy of the installed packages, so a test may alter files."""
    root = tmp_path / "release"
    for package in ("protocol", "hall_server"):
        shutil.copytree(source_root() / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.req("R92.5e")
def test_the_software_check_names_changed_added_and_missing_files(release: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    count = write_manifest(manifest, release)
    assert count == len(installed_files(release)) > 50
    assert check_software(manifest, release) is None
    (release / "protocol" / "replay.py").write_text("# altered\n")
    (release / "hall_server" / "extra.py").write_text("x = 1\n")
    (release / "protocol" / "money.py").unlink()
    fault = check_software(manifest, release)
    assert fault == (
        "installed software differs from the release manifest (changed: protocol/replay.py; "
        "added: hall_server/extra.py; missing: protocol/money.py)"
    )
    assert "no release manifest" in check_software(tmp_path / "none.json", release)


@pytest.mark.req("R92.5e")
def test_the_manifest_names_every_installed_library_and_a_changed_one_is_named(tmp_path: Path) -> None:
    """The release identifies Twisted, cryptography, numpy... too: name, version, and the
    hash of the list of its files with their hashes (RECORD)."""
    manifest = tmp_path / "manifest.json"
    write_manifest(manifest)
    data = json.loads(manifest.read_text())
    assert data["format"] == "bingo-release-manifest/2" and data["release"]
    for name in ("twisted", "cryptography", "numpy", "sqlalchemy", "reportlab", "tzdata"):
        entry = data["distributions"][name]
        assert entry["version"] and len(entry["sha256"]) == 64
    assert check_software(manifest) is None
    data["distributions"]["twisted"]["version"] = "1.0"
    data["distributions"]["not-installed"] = {"version": "1", "sha256": "0" * 64}
    del data["distributions"]["numpy"]
    manifest.write_text(json.dumps(data))
    assert check_software(manifest) == (
        "installed software differs from the release manifest (library changed: twisted; "
        "library added: numpy; library missing: not-installed)"
    )


def test_an_earlier_releases_manifest_of_files_only_is_still_read(release: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    write_manifest(manifest, release)
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({"format": "bingo-release-manifest/1", "files": data["files"]}))
    assert check_software(manifest, release) is None


@pytest.mark.req("R92.5e")
def test_the_clock_may_not_stand_before_the_journal(journal: Journal) -> None:
    journal.append(1_790_000_000_000, [BallDrawn("g1", 1, 1)])
    assert check_clock(lambda: 1_790_000_005_000, journal) is None
    assert check_clock(lambda: 1_789_999_990_000, journal) == (
        "the server clock is 10 s behind the last journal record; it was set back"
    )
    assert "before this software's release" in check_clock(lambda: 1_000, journal)


@pytest.mark.req("R92.5e")
def test_a_record_committed_while_the_checks_run_is_no_clock_set_back(journal: Journal) -> None:
    """The last record is taken before the clock is read: one committed during the verification (a network
    game's ball) is not later than the clock read after it."""
    journal.append(1_790_000_000_000, [BallDrawn("g1", 1, 1)])

    def wall_ms() -> int:
        journal.append(1_790_000_000_500, [BallDrawn("g1", 2, 2)])  # came while the checks ran
        return 1_790_000_000_400

    assert check_clock(wall_ms, journal) is None


@pytest.mark.req("R84.1", "R92.5e")
def test_a_whole_verification_passes_on_a_sound_hall_and_fails_on_a_damaged_journal(
    journal: Journal, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.json"
    write_manifest(manifest)
    assert check_database(journal.engine, MIGRATIONS) is None
    results = verify_system(journal, journal.engine, lambda: 1_790_000_000_000, manifest)
    assert results == dict.fromkeys(("journal", "database", "draw_device", "clock", "software", "terminals", "links"))
    journal.append(1_790_000_000_000, [BallDrawn("g1", 1, 1)])
    with journal.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE journal SET payload = replace(payload, '\"ball\":1', '\"ball\":2') WHERE seq = 1")
    results = verify_system(journal, journal.engine, lambda: 1_790_000_000_000, manifest)
    assert results["journal"] == "record 1: its content does not match its hash (altered)"


@pytest.mark.req("R84.1", "R92.5e")
def test_the_administrator_runs_the_checks_and_only_a_pass_opens_the_session(
    core: CommandCore, journal: Journal, tmp_path: Path
) -> None:
    findings = dict.fromkeys(CHECKS)
    session = SessionModule(core, lambda now: dict(findings))
    with pytest.raises(NotAllowed):
        result(session.run_verification(Actor("teo", Role.TABLE_CHIEF), "2026-12-01"))
    findings["software"] = "installed software differs from the release manifest (changed: protocol/replay.py)"
    result(session.run_verification(ADMIN, "2026-12-01"))
    with pytest.raises(SessionError, match="has not passed its verification"):
        result(session.count_balls(CHIEF, "opening", list(range(1, 91)), ["a player"]))
    findings["software"] = None
    result(session.run_verification(ADMIN, "2026-12-01"))
    result(session.count_balls(CHIEF, "opening", list(range(1, 91)), ["a player"]))
    kinds = [(r.type, r.payload.get("passed")) for r in journal.records()]
    assert kinds == [("system_verified", False), ("system_verified", True), ("balls_counted", None)]
    with pytest.raises(SessionError, match="no verification configured"):
        result(SessionModule(CommandCore(journal, core.clock, core.run_blocking)).run_verification(ADMIN, "2026-12-01"))


@pytest.mark.req("R84.1", "R92.5e")
def test_pentest_4_the_administrator_cannot_record_a_verification_by_hand(core: CommandCore, journal: Journal) -> None:
    """The attack: ``record_verification`` with every check null opened the session."""
    from server_kit.web.channel import CommandChannel, SeenRequests, parse_request

    SessionModule(core, lambda now: dict.fromkeys(CHECKS))
    channel = CommandChannel(core)
    request = parse_request(json.dumps({"id": "v1", "command": "record_verification",
                                        "args": {"date": "2026-12-01", "results": dict.fromkeys(CHECKS)}}))
    outcome: list = []
    channel.submit(ADMIN, request, SeenRequests()).addBoth(outcome.append)
    assert outcome == [{"id": "v1", "ok": False, "error": {
        "code": "unknown_command", "message": "there is no command 'record_verification'"}}]
    assert "record_verification" not in core.commands and "record_verification" not in core.permissions
    assert list(journal.records()) == []


@pytest.mark.req("R84.1", "R92.5e")
def test_pentest_4_the_verification_runs_the_real_checks_and_an_altered_posting_blocks_the_opening(
    core: CommandCore, journal: Journal, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.json"
    write_manifest(manifest)
    session = SessionModule(core, lambda now_ms: verify_system(journal, journal.engine, lambda: now_ms, manifest=manifest))
    load = Posting.transfer(8000, debit="cash:desk1", credit="player:1", reason="credit:load")
    journal.append(core.now_ms(), [("posting", load.to_dict())])
    with journal.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE journal SET payload = replace(payload, '8000', '80000') WHERE seq = 1")
    (record,) = result(session.run_verification(ADMIN, "2026-12-01"))
    assert record.payload["passed"] is False
    assert record.payload["results"]["journal"] == "record 1: its content does not match its hash (altered)"
    with pytest.raises(SessionError, match="has not passed its verification"):
        result(session.count_balls(CHIEF, "opening", list(range(1, 91)), ["a player"]))

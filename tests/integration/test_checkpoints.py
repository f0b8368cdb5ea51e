"""Checkpoints of a real hall: a start from the newest trusted checkpoint gives the state
the whole journal gives; a checkpoint that fails a check is passed over, never trusted;
one past the journal's end refuses the start (docs/journal.md, "Checkpoints")."""

from __future__ import annotations

from contextlib import closing
import shutil
import sqlite3
import threading
import zlib
from pathlib import Path

import pytest
import pytest_twisted
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.logger import LogLevel, formatEvent, globalLogPublisher

from bench.bench_restart import generate, prepare, start, write_checkpoint
from server_kit.boot import StartRefused
from hall_server.hall.roles import Role
from server_kit.core import Actor, run_inline
from server_kit.journal.checkpoints import CheckpointStore
from tests.support.waiting import WAIT, wait_until_in_reactor

pytestmark = [pytest.mark.integration]
ADMIN = Actor("admin", Role.ADMINISTRATOR)
CHIEF = Actor("rosa", Role.ROOM_CHIEF)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hall folder after days of play (sessions verified, games played, paid, collected)."""
    folder = tmp_path_factory.mktemp("played")
    config = prepare(folder, strips=100)
    generate(config, 1_500)
    return folder


@pytest.fixture
def hall_folder(played: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "hall"
    shutil.copytree(played, folder)
    return folder


def _checkpoint(folder: Path) -> Path:
    (path,) = sorted((folder / "checkpoints").iterdir())
    return path


def _replayed(folder: Path):  # type: ignore[no-untyped-def]
    """The hall started with no checkpoint: the whole journal verified and replayed."""
    aside = folder / "checkpoints"
    kept = folder.parent / "kept-checkpoints"
    if aside.exists():
        aside.rename(kept)
    try:
        hall = start(folder / "hall.toml")
    finally:
        if kept.exists():
            shutil.rmtree(aside, ignore_errors=True)
            kept.rename(aside)
    assert hall.recovered_from == 0
    return hall


@pytest.mark.req("R96.4")
def test_a_restart_from_the_checkpoint_of_20000_records_equals_the_whole_replay(tmp_path: Path) -> None:
    """The benchmark's path, small: the hall's own checkpoint, the real start from it."""
    config = prepare(tmp_path, strips=100)
    count = generate(config, 20_000)
    replayed = start(config)
    assert replayed.recovered_from == 0 and replayed.core.seq == count
    write_checkpoint(replayed)
    restored = start(config)
    assert restored.recovered_from == count
    assert restored.core.checkpoint() == replayed.core.checkpoint()
    assert restored.view.console() == replayed.view.console()
    assert restored.ledger.ledger.balances() == replayed.ledger.ledger.balances()


@pytest.mark.req("R96.4")
def test_records_after_the_checkpoint_are_verified_and_replayed_onto_it(hall_folder: Path) -> None:
    config = hall_folder / "hall.toml"
    write_checkpoint(start(config))
    at = int(_checkpoint(hall_folder).name.split("-")[1].split(".")[0])
    generate(config, at + 1_000)  # more days of play, from the checkpoint
    restored = start(config)
    assert restored.recovered_from == at and restored.core.seq > at + 1_000
    assert restored.core.checkpoint() == _replayed(hall_folder).core.checkpoint()


@pytest.mark.req("R92.3")
def test_a_record_altered_after_the_checkpoint_stops_the_start(hall_folder: Path) -> None:
    config = hall_folder / "hall.toml"
    write_checkpoint(start(config))
    at = int(_checkpoint(hall_folder).name.split("-")[1].split(".")[0])
    generate(config, at + 300)
    with closing(sqlite3.connect(hall_folder / "hall.sqlite3")) as database, database:
        database.execute("UPDATE journal SET time_ms = time_ms + 1 WHERE seq = ?", (at + 5,))
    with pytest.raises(StartRefused, match=f"record {at + 5}: its content does not match its hash"):
        start(config)


@pytest.mark.req("R92.3")
def test_N17_a_record_altered_before_the_checkpoint_stops_the_start(hall_folder: Path) -> None:
    """The checkpoint stands for the records before it, and the start checks that they are
    the ones it stands for: each hash and link up to the checkpoint's record."""
    config = hall_folder / "hall.toml"
    write_checkpoint(start(config))
    with closing(sqlite3.connect(hall_folder / "hall.sqlite3")) as database, database:
        (posting,) = database.execute("SELECT min(seq) FROM journal WHERE type = 'posting'").fetchone()
        database.execute("UPDATE journal SET payload = replace(payload, '0]', '1]') WHERE seq = ?", (posting,))
    with pytest.raises(StartRefused, match=f"record {posting}: its content does not match its hash"):
        start(config)


@pytest.mark.req("R84.1", "R92.3")
def test_pentest_4_a_record_altered_while_the_hall_serves_fails_the_pre_session_verification(
    hall_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole chain, signatures included, is verified before every session, which names
    the record, and no session opens on it."""
    config = hall_folder / "hall.toml"
    write_checkpoint(start(config))
    hall = start(config)
    assert hall.recovered_from == hall.core.seq
    with closing(sqlite3.connect(hall_folder / "hall.sqlite3")) as database, database:
        (posting,) = database.execute("SELECT min(seq) FROM journal WHERE type = 'posting'").fetchone()
        database.execute("UPDATE journal SET payload = replace(payload, '0]', '1]') WHERE seq = ?", (posting,))
    hall.core.run_blocking = run_inline
    hall.session.run_checks = run_inline
    # The checks run inline, on this thread, which stands for the reactor's: what they read of the
    # reactor's state (terminals, links) they read directly.
    monkeypatch.setattr("hall_server.modules.blockingCallFromThread", lambda reactor, read, *a, **k: read(*a, **k))
    outcome: list = []
    hall.session.run_verification(ADMIN, "2027-03-01").addBoth(outcome.append)
    ((verified,),) = outcome
    assert verified.payload["passed"] is False
    assert verified.payload["results"]["journal"] == f"record {posting}: its content does not match its hash (altered)"
    refused: list = []
    hall.session.count_balls(CHIEF, "opening", list(range(1, 91)), ["A witness"]).addBoth(refused.append)
    assert "has not passed its verification" in refused[0].getErrorMessage()


@pytest.mark.req("R92.3")
@pytest.mark.parametrize("where", ["state", "header"])
def test_a_tampered_checkpoint_is_passed_over_for_the_whole_replay(hall_folder: Path, where: str) -> None:
    config = hall_folder / "hall.toml"
    write_checkpoint(start(config))
    path = _checkpoint(hall_folder)
    header, _, data = path.read_bytes().partition(b"\n")
    if where == "state":  # a balance raised in the state, the state's hash left as signed
        data = zlib.compress(zlib.decompress(data).replace(b'"house"', b'"house2"', 1))
    else:  # the checkpoint moved to another record
        header = header.replace(b'"seq": ', b'"seq": 1', 1)
    path.write_bytes(header + b"\n" + data)
    hall = start(config)
    assert hall.recovered_from == 0
    assert hall.core.checkpoint() == _replayed(hall_folder).core.checkpoint()


@pytest.mark.req("R92.3")
@pytest.mark.parametrize("why", ["foreign key", "other release", "other record's hash", "unfit state"])
def test_a_checkpoint_that_does_not_check_out_is_passed_over(hall_folder: Path, why: str) -> None:
    """Signed by another key, written by another release, bound to a hash the journal does
    not have at that record, or holding a state the modules cannot take: never trusted."""
    config = hall_folder / "hall.toml"
    replayed = start(config)
    key = replayed.core.journal.key  # type: ignore[attr-defined]
    release = replayed.checkpoints.store.release  # type: ignore[union-attr]
    seq, hash, state = replayed.core.seq, replayed.core.last_hash, replayed.core.checkpoint()
    if why == "foreign key":
        key = Ed25519PrivateKey.generate()
    elif why == "other release":
        release = "another release"
    elif why == "other record's hash":
        hash = "0" * 64
    else:
        state = {"seq": seq, "modules": {name: {"t": []} for name in state["modules"]}, "requests": []}
    CheckpointStore(hall_folder / "checkpoints", key, release).write(seq, hash, 1_790_000_000_000, state)
    hall = start(config)
    assert hall.recovered_from == 0
    assert hall.core.checkpoint() == replayed.core.checkpoint()


@pytest.mark.req("R92.3")
@pytest.mark.parametrize("folded", ["said", "not said"])
def test_faults_1_a_checkpoint_whose_state_the_journal_did_not_build_is_passed_over_with_a_warning(
    hall_folder: Path, folded: str
) -> None:
    """Signed, bound to the journal's last record and its hash, but holding a state built from
    fewer records (modules emptied by a failed commit, then the next commits folded onto
    them): passed over with a warning, and the journal replayed.  Written by this release it
    says how many records built it; by a release before, it does not say (and is not trusted)."""
    config = hall_folder / "hall.toml"
    early = start(config)
    stale = early.core.checkpoint()
    generate(config, early.core.seq + 300)
    replayed = start(config)
    state = {**stale, "seq": replayed.core.seq}
    if folded == "not said":
        del state["folded"]
    key = replayed.core.journal.key  # type: ignore[attr-defined]
    store = CheckpointStore(hall_folder / "checkpoints", key, replayed.checkpoints.store.release)  # type: ignore[union-attr]
    store.write(replayed.core.seq, replayed.core.last_hash or "", 1_790_000_000_000, state)
    warnings: list[str] = []

    def observe(event: dict) -> None:  # type: ignore[type-arg]
        if event.get("log_level") == LogLevel.warn:
            warnings.append(formatEvent(event))

    globalLogPublisher.addObserver(observe)
    try:
        hall = start(config)
    finally:
        globalLogPublisher.removeObserver(observe)
    assert hall.recovered_from == 0
    assert hall.core.checkpoint() == replayed.core.checkpoint()
    said = early.core.seq if folded == "said" else "an unknown number"
    assert f"Checkpoint passed over: {_checkpoint(hall_folder)} (record {replayed.core.seq}) holds a state built from " \
           f"{said} of the {replayed.core.seq} records it stands for: it was not built from the journal" in warnings


@pytest.mark.req("R92.3")
def test_a_checkpoint_past_the_journal_end_refuses_the_start(hall_folder: Path) -> None:
    """A journal cut back to an old head copied with it: the head alone cannot tell; the
    checkpoint, signed at a later record, does."""
    config = hall_folder / "hall.toml"
    early = start(config).core.seq
    old_head = (hall_folder / "journal.head").read_bytes()
    generate(config, early + 200)
    later = start(config)
    write_checkpoint(later)
    with closing(sqlite3.connect(hall_folder / "hall.sqlite3")) as database, database:
        database.execute("DELETE FROM journal WHERE seq > ?", (early,))
    (hall_folder / "journal.head").write_bytes(old_head)
    with pytest.raises(StartRefused) as refused:
        start(config)
    assert str(refused.value).startswith(
        f"the journal does not verify: record {early + 1}: is missing: the journal ends at {early} but its "
        f"checkpoint {_checkpoint(hall_folder)} stands at record {later.core.seq}"
    )


# --- the pre-session verification off the database writer ----------------------------


@pytest.mark.req("R84.1")
@pytest_twisted.inlineCallbacks
def test_a_commit_completes_while_the_pre_session_verification_is_running(hall_folder: Path):  # type: ignore[no-untyped-def]
    """The verification hashes the whole journal; held up on purpose, it must not hold the
    database's single writer: a command given meanwhile commits, and the verification's
    outcome is recorded once it is done."""
    from twisted.internet import reactor

    from hall_server.config import load_config
    from hall_server.tap import build_hall

    hall = build_hall(load_config(hall_folder / "hall.toml"), reactor)
    hall.service.startService()
    running, release = threading.Event(), threading.Event()
    checks = hall.session.verifier

    def slowed(now_ms: int):  # type: ignore[no-untyped-def]
        running.set()
        release.wait(WAIT)  # held until the commit below is in
        return checks(now_ms)

    hall.session.verifier = slowed
    try:
        verified = hall.session.run_verification(ADMIN, "2027-02-01")
        yield wait_until_in_reactor(reactor, running.is_set, what="the verification to start")
        replaced = hall.session.replace_ball_set(CHIEF, "set-new", "a chipped ball")
        replaced.addTimeout(WAIT, reactor)
        (record,) = yield replaced
        assert record.type == "ball_set_replaced" and not verified.called
        release.set()
        (outcome,) = yield verified
        assert outcome.type == "system_verified" and outcome.seq == record.seq + 1
    finally:
        release.set()
        yield hall.service.stopService()

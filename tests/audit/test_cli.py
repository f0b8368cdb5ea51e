"""``bingo audit export`` on a hall folder: the four files, their checks, and every refusal
(exit status 2, one line, nothing written)."""

from __future__ import annotations

from contextlib import closing
import json
import re
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from hall_server.audit.folder import FILES, read_journal, verify_segment
from hall_server.cli import main
from hall_server.store.database import open_database
from protocol.chain import ChainError
from protocol.settlement import PrizeRules
from server_kit.journal import table as table
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import GamePlan, Purchase, play_game, stored_hall

DAY_1, DAY_2 = "2026-12-01", "2026-12-02"


@dataclass
class Home:
    path: Path
    out: Path  # an empty place for export folders, beside nothing else

    def bingo(self, *args: str) -> Result:
        return CliRunner().invoke(main, list(args), env={"BINGO_HOME": str(self.path)})

    def export(self, day: str, out: Path) -> Result:
        return self.bingo("audit", "export", "--day", day, "--out", str(out))


def played_home(rules: PrizeRules, plans: list[GamePlan]) -> Home:
    path = fast_folder()
    hall = stored_hall(path, new_clock(), rules)
    hall.prepare()
    hall.open_day(DAY_1)
    for plan in plans:
        play_game(hall, plan)
    hall.close_day()
    out = path / "exports"
    out.mkdir()
    return Home(path, out)


@pytest.fixture(scope="module")
def home() -> Iterator[Home]:
    made = played_home(POT_RULES, [
        GamePlan(paper=6, purchases=[Purchase(0, 0, 2, 40)], superbingo_limit=60, seed=7),
        GamePlan(paper=5, purchases=[Purchase(1, 1, 3, 100)], jackpot_threshold=41, quick=True, last=True),
    ])
    yield made
    shutil.rmtree(made.path, ignore_errors=True)


def public_key(folder: Path) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key((folder / "public-key.pem").read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    return key


@pytest.mark.req("R92.3", "R95.3", "R96.4")
def test_the_export_writes_four_files_whose_scenario_replays_to_its_result(home: Home) -> None:
    out = home.out / "day-1"
    done = home.export(DAY_1, out)
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    replayed = home.bingo("replay", str(out / "scenario.json"))
    assert replayed.exit_code == 0, replayed.output
    assert replayed.stdout == (out / "result.json").read_text()  # byte for byte
    assert json.loads((out / "scenario.json").read_text())["format"] == "bingo-replay/2"

    # The segment verifies against the key beside it and ties into the hall's journal.
    records = list(read_journal(out / "journal.jsonl"))
    assert verify_segment(records, public_key(out)) == len(records)
    stored = {r.seq: r for r in table.read(open_database(f"sqlite:///{home.path / 'hall.sqlite3'}"))}
    assert records == [stored[r.seq] for r in records]
    assert records[0].prev == stored[records[0].seq - 1].hash
    assert records[0].type == "system_verified" and records[-1].type == "session_closed"
    assert f"journal records {records[0].seq} to {records[-1].seq} (last hash {records[-1].hash})" in done.stdout


def test_an_empty_folder_is_taken(home: Home) -> None:
    out = home.out / "empty"
    out.mkdir()
    assert home.export(DAY_1, out).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)


@pytest.mark.req("R92.3", "R96.4")
def test_a_journal_segment_altered_removed_from_or_reordered_is_caught(home: Home) -> None:
    out = home.out / "to-alter"
    assert home.export(DAY_1, out).exit_code == 0
    records = list(read_journal(out / "journal.jsonl"))
    key = public_key(out)
    lines = (out / "journal.jsonl").read_text().splitlines()
    victim = next(i for i, line in enumerate(lines) if '"collection_cents":' in line)
    forged = json.loads(lines[victim])
    forged["payload"]["collection_cents"] += 1
    (out / "journal.jsonl").write_text("\n".join([*lines[:victim], json.dumps(forged), *lines[victim + 1:]]) + "\n")
    with pytest.raises(ChainError, match=f"record {records[victim].seq}: its content does not match its hash"):
        verify_segment(read_journal(out / "journal.jsonl"), key)
    with pytest.raises(ChainError, match=f"record {records[3].seq}: does not follow record {records[1].seq}"):
        verify_segment([*records[:2], *records[3:]], key)
    with pytest.raises(ChainError, match=f"record {records[2].seq}: does not follow record {records[0].seq}"):
        verify_segment([records[0], records[2], records[1]], key)


# --- Refusals: exit status 2, one line, nothing written ------------------------------------


def refused(home: Home, day: str, out: Path, match: str) -> None:
    before = sorted(p.name for p in out.parent.iterdir())
    contents = sorted(p.name for p in out.iterdir()) if out.is_dir() else None
    done = home.export(day, out)
    assert done.exit_code == 2, done.output
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.endswith("\n")
    assert match in done.stderr, done.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == before  # no folder, no partial one
    assert (sorted(p.name for p in out.iterdir()) if out.is_dir() else None) == contents


def test_an_unknown_day_is_refused(home: Home) -> None:
    refused(home, "2026-11-30", home.out / "nope", "no session of this hall is dated 2026-11-30")
    refused(home, "2026-13-01", home.out / "nope", "--day is a session date, YYYY-MM-DD, not '2026-13-01'")
    refused(home, "1 Dec 2026", home.out / "nope", "--day is a session date")


def test_a_folder_that_holds_anything_is_refused(home: Home) -> None:
    taken = home.out / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    refused(home, DAY_1, taken, f"{taken} is not empty; name a new or empty folder")
    assert (taken / "notes.txt").read_text() == "mine"
    a_file = home.out / "a-file"
    a_file.write_text("x")
    refused(home, DAY_1, a_file, f"{a_file} exists and is not a folder")


@pytest.mark.req("R88.3")
def test_days_the_regulator_cannot_replay_a_day_with_a_prize_raised_to_its_fixed_sum_exports_verifies_and_replays(
) -> None:
    rules = PrizeRules(line_bp=1500, bingo_bp=5500, bingo_minimum_cents=10_000)
    fixed = played_home(rules, [GamePlan(paper=3, seed=1), GamePlan(paper=3, seed=2, last=True)])
    try:
        out = fixed.out / "day"
        done = fixed.export(DAY_1, out)
        assert done.exit_code == 0, done.output
        scenario = json.loads((out / "scenario.json").read_text())
        assert scenario["format"] == "bingo-replay/3" and scenario["rules"]["bingo_minimum_cents"] == 10_000
        replayed = fixed.bingo("replay", str(out / "scenario.json"))
        assert replayed.exit_code == 0 and replayed.stdout == (out / "result.json").read_text()
        assert all(g["prizes"]["bingo"]["amount_cents"] >= 10_000 for g in json.loads(replayed.stdout)["games"])
        verified = CliRunner().invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
        assert verified.exit_code == 0, verified.output
        # A fixed sum changed in the scenario is not what the records' top-ups say.
        scenario["rules"]["bingo_minimum_cents"] = 9_000
        (out / "scenario.json").write_text(json.dumps(scenario))
        caught = CliRunner().invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
        assert caught.exit_code == 1 and "bingo prize of 10000 where scenario.json's rules give 9000" in caught.stderr, \
            caught.output
    finally:
        shutil.rmtree(fixed.path, ignore_errors=True)


def test_a_journal_that_does_not_verify_is_refused(home: Home) -> None:
    copy = Home(fast_folder(), Path())
    try:
        shutil.copytree(home.path, copy.path, dirs_exist_ok=True)
        copy.out = copy.path / "exports"
        with closing(sqlite3.connect(copy.path / "hall.sqlite3")) as db, db:
            seq, payload = db.execute(
                "SELECT seq, payload FROM journal WHERE type = 'sale_closed' ORDER BY seq LIMIT 1"
            ).fetchone()
            db.execute("UPDATE journal SET payload = ? WHERE seq = ?",
                       (payload.replace('"collection_cents":', '"collection_cents":9', 1), seq))
        refused(copy, DAY_1, copy.out / "day", f"record {seq}: its content does not match its hash")
    finally:
        shutil.rmtree(copy.path, ignore_errors=True)


@pytest.mark.req("R85.6", "R92.3", "R96.4")
def test_a_day_of_a_journal_written_before_the_claim_pause_exports_in_version_2_verifies_and_replays(
    tmp_path: Path,
) -> None:
    """Release 0.1.0's demo day (docs: tests/data/release-0.1.0) knows no prize_closed record: its
    prizes closed with the next ball. Its day exports as bingo-replay/2, verifies and replays."""
    import tarfile

    with tarfile.open(Path(__file__).parents[1] / "data" / "release-0.1.0" / "hall-var.tar.xz") as archive:
        archive.extractall(tmp_path, filter="data")
    config = tmp_path / "var" / "hall.toml"
    licensed = iter(range(1, 100))  # 0.2.0 asks every login's class I licence (R79; CHANGELOG.md, upgrading)
    config.write_text(re.sub(r'(password_hash = "[^"]*"\n)', lambda m: m.group(1) + (
        f'licence = "AND-{next(licensed):04d}"\nlicence_valid_until = "2030-12-31"\n'), config.read_text()))
    home = Home(tmp_path / "var", tmp_path)
    out = tmp_path / "export"
    done = home.export("2026-12-05", out)
    assert done.exit_code == 0, done.output
    scenario = json.loads((out / "scenario.json").read_text())
    assert scenario["format"] == "bingo-replay/2"
    assert all(game["claims"] for game in scenario["sessions"][0]["games"])
    verified = CliRunner().invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
    assert verified.exit_code == 0, verified.output
    replayed = CliRunner().invoke(main, ["replay", str(out / "scenario.json")])
    assert replayed.exit_code == 0 and replayed.stdout == (out / "result.json").read_text()


@pytest.mark.req("R92.3", "R96.4")
def test_days_the_regulator_cannot_replay_two_sessions_on_one_date_export_verify_and_replay() -> None:
    """A session played, closed, and another opened the same date (the README's `./run.sh`, then
    `./run.sh --demo`): one export in bingo-replay/3 that verifies and replays; a result that moves a
    game to the other session is caught naming it."""
    path = fast_folder()
    try:
        hall = stored_hall(path, new_clock(), POT_RULES)
        hall.prepare()
        for seed in (1, 2):
            hall.open_day(DAY_1)
            play_game(hall, GamePlan(paper=4, purchases=[Purchase(0, 0, 2, 50)], superbingo_limit=42, seed=seed,
                                     last=True))
            hall.close_day()
        home = Home(path, path / "exports")
        home.out.mkdir()
        out = home.out / "day"
        done = home.export(DAY_1, out)
        assert done.exit_code == 0, done.output
        assert f"{out}: {DAY_1}, 2 game(s), journal records " in done.stdout, done.stdout
        scenario = json.loads((out / "scenario.json").read_text())
        assert scenario["format"] == "bingo-replay/3"
        assert [(s["date"], s["session"]) for s in scenario["sessions"]] == [(DAY_1, 1), (DAY_1, 2)]
        replayed = home.bingo("replay", str(out / "scenario.json"))
        assert replayed.exit_code == 0, replayed.output
        assert replayed.stdout == (out / "result.json").read_text()  # byte for byte
        records = list(read_journal(out / "journal.jsonl"))
        assert verify_segment(records, public_key(out)) == len(records)
        assert [r.type for r in records].count("system_verified") == 2

        verified = CliRunner().invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
        assert verified.exit_code == 0, verified.output
        assert f"(hall export of {DAY_1}): {len(records)} journal records" in verified.stdout
        assert "2 game(s)" in verified.stdout

        result = json.loads((out / "result.json").read_text())
        result["games"][1]["session"] = 1
        (out / "result.json").write_text(json.dumps(result))
        caught = CliRunner().invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
        assert caught.exit_code == 1, caught.output
        assert f"result.json: game 1 of {DAY_1}-s2: session is 1; the records say 2" in caught.stderr, caught.stderr
    finally:
        shutil.rmtree(path, ignore_errors=True)

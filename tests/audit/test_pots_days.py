"""Two hall days with the pots in play, exported by ``bingo audit export``, replayed by ``bingo replay``,
verified by ``bingo audit verify`` and reported by ``bingo report daily`` (R88.1, R89, R90, R91.9).

Day 1: the operator pays 400.00 EUR into the jackpot; a jackpot game not won, then the session's
last game, whose bingo takes the superbingo fund no superbingo game put in play; a megabingo is
announced for day 2.  Between the days the operator takes back 200.00 EUR of its contribution.
Day 2: the megabingo game, which pays its whole fund, and the jackpot won; its last game.

The documents are ``bingo-replay/2``; an export written in ``bingo-replay/1`` by the software
before (of a day the two versions read alike) still verifies and replays.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner, Result

from hall_server.cli import main
from hall_server.i18n import DEFAULT_LANGUAGE, translate
from protocol.chain import Record
from protocol.replay import replay_json
from protocol.settlement import POT_ACCOUNTS, PrizeRules
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import ADMIN, CHIEF, AuditHall, GamePlan, Purchase, play_game, stored_hall
from tests.hall.conftest import result
from tests.reports.conftest import csv_tables, pdf_strings
from tests.reports.test_daily_report import issue_signer

DAY_1, DAY_2 = "2026-05-28", "2026-06-08"  # the clock's day, and the megabingo's (eleven days later)
TAKEN_BACK = 20_000


@dataclass
class Days:
    home: Path
    hall: AuditHall
    exports: dict[str, Path]

    def bingo(self, *args: str, home: Path | None = None) -> Result:
        return CliRunner().invoke(main, list(args), env={"BINGO_HOME": str(home or self.home)})

    def records(self) -> list[Record]:
        return self.hall.records()

    def documents(self, day: str) -> tuple[dict[str, Any], dict[str, Any]]:
        folder = self.exports[day]
        return (json.loads((folder / "scenario.json").read_text()), json.loads((folder / "result.json").read_text()))


@pytest.fixture(scope="module")
def days() -> Iterator[Days]:
    home = fast_folder()
    issue_signer(home / "operator-ca", "pots-hall-reports", home)
    hall = stored_hall(home, new_clock(), POT_RULES)
    hall.prepare()
    hall.open_day(DAY_1)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 40_000))
    play_game(hall, GamePlan(paper=8, purchases=[Purchase(0, 0, 3, 50), Purchase(1, 1, 2, 100)],
                             jackpot_threshold=40, seed=21))
    play_game(hall, GamePlan(paper=6, purchases=[Purchase(2, 0, 1, 100)], seed=22, last=True))
    result(hall.games.announce_megabingo(CHIEF, DAY_2, "21:00"))
    hall.close_day()
    hall.clock.advance(11 * 24 * 3600)  # the morning of day 2, before its session
    result(hall.games.recover_jackpot_contribution(ADMIN, TAKEN_BACK))
    hall.open_day(DAY_2)
    play_game(hall, GamePlan(paper=6, purchases=[Purchase(0, 1, 2, 50)], megabingo=True, jackpot_threshold=42,
                             quick=True, seed=23))
    play_game(hall, GamePlan(paper=6, seed=24, last=True))
    hall.close_day()
    made = Days(home, hall, {})
    for day in (DAY_1, DAY_2):
        out = home / "exports" / day
        done = made.bingo("audit", "export", "--day", day, "--out", str(out))
        assert done.exit_code == 0, done.output
        made.exports[day] = out
    yield made
    shutil.rmtree(home, ignore_errors=True)


def paid(result_document: dict[str, Any], prize: str) -> list[dict[str, Any]]:
    return [game["prizes"][prize] for game in result_document["games"] if prize in game["prizes"]]


@pytest.mark.req("R89", "R90", "R91.9", "R92.3")
def test_days_with_the_pots_in_play_export_replay_and_verify_to_what_the_hall_paid(days: Days) -> None:
    for day in (DAY_1, DAY_2):
        scenario, recorded = days.documents(day)
        assert scenario["format"] == "bingo-replay/2" and recorded["format"] == "bingo-replay-result/2"
        assert replay_json((days.exports[day] / "scenario.json").read_bytes()) == (
            days.exports[day] / "result.json").read_text()
        verified = days.bingo("audit", "verify", str(days.exports[day]))
        assert verified.exit_code == 0, verified.output
        # The session's last game is marked in the scenario: its bingo takes the superbingo fund (R89).
        assert [game["last_game"] for game in scenario["sessions"][0]["games"]] == [False, True]

    first, recorded_1 = days.documents(DAY_1)
    # No superbingo game on day 1: the last game's bingo took the whole fund all the same.
    assert all(game["superbingo_limit"] is None for game in first["sessions"][0]["games"])
    (last_game,) = paid(recorded_1, "superbingo_last_game")
    assert last_game["amount_cents"] > 0
    assert recorded_1["games"][-1]["pots"]["superbingo"] == last_game["carry_cents"]

    second, recorded_2 = days.documents(DAY_2)
    # The megabingo paid its whole fund: what day 2 opened with and the game's own 1% (R90), more than
    # the least announced.
    (megabingo,) = paid(recorded_2, "megabingo")
    closing_1 = recorded_1["games"][-1]["pots"]
    game = second["sessions"][0]["games"][0]
    assert megabingo["amount_cents"] == second["opening"]["megabingo"] + recorded_2["games"][0]["sales_cents"] // 100
    assert game["megabingo_cents"] <= closing_1["megabingo"] < megabingo["amount_cents"]
    assert recorded_2["games"][0]["pots"]["megabingo"] == megabingo["carry_cents"]
    # What the operator took back between the days left the jackpot before day 2 opened (R91.9).
    opening_2 = second["opening"]
    assert (opening_2["jackpot_accumulated"] + opening_2["jackpot_reserve"]
            == closing_1["jackpot_accumulated"] + closing_1["jackpot_reserve"] - TAKEN_BACK)
    assert opening_2["superbingo"] == closing_1["superbingo"]


@pytest.mark.req("R90")
def test_the_megabingo_of_day_2_is_the_whole_fund_the_ledger_held_at_its_game(days: Days) -> None:
    """The fund the hall's records held when the megabingo game's bingo was paid went whole to the winners."""
    records = days.records()
    (megabingo,) = [r for r in records if r.type == "prize_paid" and r.payload["prize"] == "megabingo"]
    held = 0
    for record in records:
        if record.seq >= megabingo.seq:
            break
        if record.type == "posting":
            held += sum(c for a, c in record.payload["credits"] if a == "pot:megabingo")
            held -= sum(c for a, c in record.payload["debits"] if a == "pot:megabingo")
    assert megabingo.payload["amount_cents"] == held


def pot_levels_through(records: list[Record], last_seq: int) -> dict[str, int]:
    """Every pot as the raw postings leave it at record ``last_seq``."""
    levels = dict.fromkeys(POT_ACCOUNTS, 0)
    names = {account: name for name, account in POT_ACCOUNTS.items()}
    for record in records:
        if record.seq > last_seq:
            break
        if record.type == "posting":
            for account, cents in record.payload["credits"]:
                if account in names:
                    levels[names[account]] += cents
            for account, cents in record.payload["debits"]:
                if account in names:
                    levels[names[account]] -= cents
    return levels


@pytest.mark.req("R88.1")
def test_R88_1_the_daily_report_shows_prizes_paid_against_the_collection_and_every_pots_balance(
    days: Days, tmp_path: Path
) -> None:
    """Per day: the prizes paid over the collection as a percentage beside the 70% minimum, and every
    pot's balance at the day's start and end with what went in and out, as the raw records say."""
    records = days.records()
    closed = [r.seq for r in records if r.type == "session_closed"]
    tables = {}
    for day in (DAY_1, DAY_2):
        out = tmp_path / day
        done = days.bingo("report", "daily", "--day", day, "--out", str(out))
        assert done.exit_code == 0, done.output
        report = json.loads((out / "report.json").read_text())
        tables[day] = {key: table["rows"] for key, table in report["tables"].items()}
        assert csv_tables((out / "report.csv").read_bytes())["pots"]
        shown = pdf_strings((out / "report.pdf").read_bytes())
        # The folder has no hall.toml: the PDF speaks the hall's default language.
        assert translate(DEFAULT_LANGUAGE, "Prizes paid / collection") in shown
        assert translate(DEFAULT_LANGUAGE, "jackpot_reserve") in shown

    for day, end in zip((DAY_1, DAY_2), closed):
        (payout,) = tables[day]["payout"]
        games = {r.payload["game_id"] for r in records if r.type == "sale_opened" and r.payload["game_id"].startswith(day)}
        collection = sum(r.payload["collection_cents"] for r in records
                         if r.type == "sale_closed" and r.payload["game_id"] in games)
        prizes = sum(c for r in records if r.type == "prize_paid" and r.payload["game_id"] in games
                     for _, c in r.payload["payments"])
        assert (payout["collection_cents"], payout["prizes_paid_cents"]) == (collection, prizes)
        hundredths = prizes * 10_000 // collection
        assert payout["paid_pct"] == f"{hundredths // 100}.{hundredths % 100:02d}%"
        assert payout["minimum_pct"] == "70.00%"
        closing = {row["pot"]: row["closing_cents"] for row in tables[day]["pots"]}
        assert closing == pot_levels_through(records, end)
        for row in tables[day]["pots"]:
            assert row["opening_cents"] + row["paid_in_cents"] - row["paid_out_cents"] == row["closing_cents"]

    # Day 2 opens where day 1 closed; the operator's taking back shows as money out of the jackpot.
    day_1 = {row["pot"]: row for row in tables[DAY_1]["pots"]}
    day_2 = {row["pot"]: row for row in tables[DAY_2]["pots"]}
    assert {pot: row["opening_cents"] for pot, row in day_2.items()} == {
        pot: row["closing_cents"] for pot, row in day_1.items()}
    assert day_1["superbingo"]["closing_cents"] < day_1["superbingo"]["paid_in_cents"]  # the last game took it
    assert day_2["megabingo"]["paid_out_cents"] > day_1["megabingo"]["closing_cents"]  # the whole fund, grown


def test_a_day_played_under_the_rulings_of_today_does_not_pass_as_a_bingo_replay_1_file(
    days: Days, tmp_path: Path
) -> None:
    """The first format's last game took only an unwon superbingo: day 1 written in it no longer verifies."""
    old = tmp_path / "as-v1"
    shutil.copytree(days.exports[DAY_1], old)
    as_first_format(old)
    verified = days.bingo("audit", "verify", str(old))
    assert verified.exit_code != 0
    assert "superbingo_last_game" in verified.output, verified.output


def as_first_format(folder: Path) -> None:
    """Rewrite an export's documents as the software wrote them in ``bingo-replay/1``."""
    scenario = json.loads((folder / "scenario.json").read_text())
    scenario["format"] = "bingo-replay/1"
    for session in scenario["sessions"]:
        for game in session["games"]:
            for key in ("last_game", "claims", "corrections"):
                game.pop(key, None)
            for card in game["cards"]:
                card.pop("paper", None)
    recorded = json.loads((folder / "result.json").read_text())
    recorded["format"] = "bingo-replay-result/1"
    (folder / "scenario.json").write_text(json.dumps(scenario))
    (folder / "result.json").write_text(json.dumps(recorded, indent=2) + "\n")


def test_an_export_written_in_bingo_replay_1_still_verifies_and_replays(tmp_path: Path) -> None:
    """A day without pots reads alike in both versions: its first-format export, as the software wrote it
    before, verifies and replays to its result."""
    home = tmp_path / "hall"
    home.mkdir()
    rules = PrizeRules(line_bp=1500, bingo_bp=5500)
    hall = stored_hall(home, new_clock(), rules)
    hall.prepare()
    hall.open_day(DAY_1)
    play_game(hall, GamePlan(paper=8, purchases=[Purchase(0, 0, 2, 50)], seed=31))
    play_game(hall, GamePlan(paper=6, seed=32, last=True))
    hall.close_day()
    out = tmp_path / "export"
    runner = CliRunner()
    assert runner.invoke(main, ["audit", "export", "--day", DAY_1, "--out", str(out)],
                         env={"BINGO_HOME": str(home)}).exit_code == 0
    as_first_format(out)
    verified = runner.invoke(main, ["audit", "verify", str(out)], env={"BINGO_HOME": None})
    assert verified.exit_code == 0, verified.output
    replayed = json.loads(replay_json((out / "scenario.json").read_bytes()))
    assert replayed["format"] == "bingo-replay-result/1"
    assert replayed == json.loads((out / "result.json").read_text())


@pytest.mark.req("R91.8")
def test_R91_8_the_jackpots_money_serves_no_other_prize(days: Days) -> None:
    """Whatever leaves the jackpot (accumulated or reserve) goes to the jackpot's own winners, moves between
    its two parts, goes back with a refunded game's shares, or is the operator's own contribution taken back
    (never more than it paid in); no other prize is paid from it (R91.8, and R89.5's ruling: the superbingo
    contributions never touch it)."""
    jackpot = {"pot:jackpot_accumulated", "pot:jackpot_reserve"}
    allowed = {"prize:jackpot", "jackpot:reserve transfer", "jackpot:reserve boost", "pots:contribution returned",
               "operator:jackpot taken back"}
    reasons: dict[str, int] = {}
    for record in days.records():
        if record.type == "posting" and any(account in jackpot for account, _ in record.payload["debits"]):
            reason = record.payload["reason"]
            reasons[reason] = reasons.get(reason, 0) + sum(c for a, c in record.payload["debits"] if a in jackpot)
    assert set(reasons) <= allowed, reasons
    assert reasons["prize:jackpot"] > 0 and reasons["operator:jackpot taken back"] == TAKEN_BACK
    paid_in = sum(r.payload["amount_cents"] for r in days.records()
                  if r.type == "operator_contribution" and r.payload["pot"] == "jackpot")
    assert reasons["operator:jackpot taken back"] <= paid_in

"""The receiver replays each day's audit export card by card on the records it holds (R92.7, R95.3, R95.4;
the prizes of R88.2, R88.4-5, R89, R90, R91).

Three hall days are played through the real hall modules on a real SQLite journal: pots carried from the
first day into the second, a megabingo announced on the first for the second, virtual cards at every stake;
the third day has two sessions (bingo-replay/3).  At each session's close the hall writes the day's
audit export as a signed report, as the server does (CMS by its report-signing certificate of the operator's
authority).  A real receiver (its SQLite store, its own signed journal, stock ``openssl cms`` for the
signatures) is fed the hall's records and the reports: an honest day is replayed card by card and each of its
games marked; a hall that signs a lying export - a winning card given other numbers, a payment changed, a
segment whose last hash is not the records' - is an ``audit_differs`` alert naming the day and the game and
field, raised once; the hall's other day and another hall's same day stand.  A day the hall could not export
is an ``audit_not_replayed`` alert."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import defer

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.reports.daily_files import DailyReporter
from protocol.audit.report import SEGMENT, AuditReport, report_name
from protocol.cards import Card
from protocol.chain import Record, sealed_form
from protocol.regulator_feed import MAX_BATCH, Batch, Hello, Report
from protocol.replay import parse_scenario, render, replay
from regulator import store as regulator_store
from regulator.cli import regulator as regulator_command
from regulator.days import AUDIT_DIFFERS, AUDIT_NOT_REPLAYED, DIFFERS, REFUSED, VERIFIED
from regulator.receiver import Receiver
from regulator.reports import ReportInbox
from regulator.web import checked, page, read_held, status
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from server_kit.reports.cms import ReportSigner
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import ADMIN, CHIEF, LIBRARY_CELLS, GamePlan, Purchase, play_game, stored_hall
from tests.hall.conftest import result
from tests.regulator.test_receiver import pem
from tests.reports.test_daily_report import issue_signer
from tests.regulator.registration import register

DAY_1, DAY_2, DAY_3 = "2026-12-01", "2026-12-02", "2026-12-03"
HALL, OTHER_HALL = "hall:h1", "hall:h2"


@dataclass
class HallDays:
    home: Path
    records: list[Record]
    games: dict[str, list[str]]  # day -> the ids of its games played to their end

    @property
    def ca(self) -> Path:
        return self.home / "operator-ca" / "ca.pem"

    def folder(self, day: str) -> Path:
        return self.home / "reports" / report_name(day)

    def files(self, day: str) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.folder(day).iterdir()) if not p.name.startswith(".")}

    def segment(self, day: str) -> dict[str, Any]:
        return json.loads(self.files(day)[SEGMENT])

    def report(self, day: str, sender: str = HALL, change: Callable[[dict[str, Any]], None] | None = None,
               file: str = "result.json") -> Report:
        """The day's audit report as the hall sent it; with ``change`` made to ``file``, signed again by the
        hall's own report-signing certificate: a lie the hall signs."""
        files = self.files(day)
        if change is not None:
            document = json.loads(files[file])
            change(document)
            files[file] = json.dumps(document).encode()
            files[f"{file}.p7s"] = ReportSigner.of_server(self.home).sign(files[file])
        return Report(sender, report_name(day), files)


@pytest.fixture(scope="module")
def hall_days() -> Iterator[HallDays]:
    home = fast_folder()
    issue_signer(home / "operator-ca", "audit-hall-reports", home)
    hall = stored_hall(home, new_clock(), POT_RULES)
    reporter = DailyReporter(hall.journal, home, "Audit hall", DEFAULT_TIMEZONE, defer.maybeDeferred, POT_RULES)
    hall.core.observers.append(reporter.record_committed)
    hall.prepare()
    games: dict[str, list[str]] = {}

    def played(day: str, *plans: GamePlan) -> None:
        for plan in plans:
            game_id = play_game(hall, plan)
            if game_id is not None and not plan.refund:
                games.setdefault(day, []).append(game_id)

    hall.open_day(DAY_1)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 40_000))
    played(DAY_1, GamePlan(paper=8, purchases=[Purchase(0, 0, 3, 50), Purchase(1, 1, 2, 100)], superbingo_limit=42,
                           seed=11),
           GamePlan(paper=5, refund=True),
           GamePlan(paper=6, purchases=[Purchase(2, 0, 1, 7)], jackpot_threshold=42, quick=True, seed=3, last=True))
    result(hall.games.announce_megabingo(CHIEF, DAY_2, "21:00"))
    hall.close_day()
    hall.open_day(DAY_2)
    played(DAY_2, GamePlan(paper=6, purchases=[Purchase(0, 1, 4, 25)], megabingo=True, seed=5),
           GamePlan(paper=7, purchases=[Purchase(1, 0, 2, 100)], superbingo_limit=60, seed=8, last=True))
    hall.close_day()
    for _ in range(2):  # two sessions on one date, as the README's path makes them: one export of both
        hall.open_day(DAY_3)
        played(DAY_3, GamePlan(paper=3, seed=1, last=True))
        hall.close_day()
    assert [folder.name for folder in reporter.audits] == [report_name(d) for d in (DAY_1, DAY_2, DAY_3, DAY_3)]
    yield HallDays(home, hall.records(), games)
    shutil.rmtree(home, ignore_errors=True)


@dataclass
class Regulator:
    receiver: Receiver
    inbox: ReportInbox
    journal: Journal
    hall_key: str  # the hall's journal key, as its hello says it

    def feed(self, sender: str, records: list[Record]) -> None:
        """``records`` as the hall's feed sends them: in their sealed forms, a batch at a time."""
        self.receiver.hello(Hello(sender, self.hall_key), sender)
        sent = [sealed_form(r) for r in records]
        for at in range(0, len(sent), MAX_BATCH):
            self.receiver.batch(Batch(sender, tuple(sent[at:at + MAX_BATCH])), sender)

    def verdicts(self) -> dict[tuple[str, str], tuple[str, str]]:
        return {(v.sender, v.day): (v.verdict, v.detail) for v in self.receiver.days.verdicts()}

    def differs(self) -> list[tuple[str, int, str]]:
        return [(a.sender, a.seq, a.detail) for a in self.receiver.store.alerts() if a.kind == AUDIT_DIFFERS]


def regulator_at(folder: Path, hall_days: HallDays, journal: Journal | None = None) -> Regulator:
    """A receiver in ``folder`` (started again on ``journal``'s database when given), its inbox trusting the
    operator's authority."""
    if journal is None:
        engine = regulator_store.open_database(f"sqlite:///{folder / 'regulator.sqlite3'}")
        journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head")
        journal.initialise(1_000, {"receiver": "regulator"})
    receiver = Receiver(regulator_store.Store(journal.engine), clock=lambda: 9_000, journal=journal, home=folder)
    inbox = ReportInbox(folder, hall_days.ca, journal, lambda: 9_000, receiver.alert, receiver.days)
    hall_key = load_journal_key(hall_days.home / "keys" / "journal-signing.pem")
    for sender in (HALL, OTHER_HALL):  # one hall's signer signs both halls' reports here
        register(receiver, sender, hall_key, "audit-hall-reports")
        register(inbox, sender, hall_key, "audit-hall-reports")
    return Regulator(receiver, inbox, journal, pem(hall_key))


@pytest.mark.req("R92.7", "R95.3")
def test_each_hall_day_is_replayed_card_by_card_and_its_games_marked(hall_days: HallDays, tmp_path: Path) -> None:
    """R92.7: the days whose exports verify are replayed card by card and each of their games is marked on the
    page, in /api/status and in the journal, a date of two sessions included; no alert."""
    regulator = regulator_at(tmp_path, hall_days)
    regulator.feed(HALL, hall_days.records)
    for day in (DAY_1, DAY_2, DAY_3):
        regulator.inbox.take(hall_days.report(day), HALL)
    verdicts = regulator.verdicts()
    assert all(verdicts[(HALL, day)][0] == VERIFIED for day in (DAY_1, DAY_2, DAY_3)), verdicts
    assert regulator.receiver.store.alerts() == []
    days = {v.day: v for v in regulator.receiver.days.verdicts()}
    assert all(list(days[day].games) == hall_days.games[day] for day in (DAY_1, DAY_2, DAY_3))
    assert hall_days.games[DAY_3] == [f"{DAY_3}-s3-g1", f"{DAY_3}-s4-g1"]
    segment = hall_days.segment(DAY_2)
    assert (days[DAY_2].first_seq, days[DAY_2].last_seq) == (segment["first_seq"], segment["last_seq"])
    assert hall_days.records[segment["last_seq"] - 1].type == "session_closed"
    # The report's files are the export's documents: `bingo replay scenario.json | cmp - result.json`.
    for day in (DAY_2, DAY_3):
        files = hall_days.files(day)
        assert render(replay(parse_scenario(json.loads(files["scenario.json"])))).encode() == files["result.json"]
    two = json.loads(hall_days.files(DAY_3)["scenario.json"])
    assert two["format"] == "bingo-replay/3" and [s["session"] for s in two["sessions"]] == [3, 4]

    held = read_held(regulator.receiver.store, regulator.receiver, regulator.inbox)
    plain = status(held, checked(regulator.receiver))
    marked = {g["game_id"]: g["replayed_card_by_card"] for g in plain["games"][HALL]}
    assert marked and all(marked[g] == report_name(DAY_2) for g in hall_days.games[DAY_2])
    assert all(marked[g] == report_name(DAY_3) for g in hall_days.games[DAY_3])
    assert [(d["day"], d["verdict"]) for d in plain["days"]] == [(DAY_3, VERIFIED), (DAY_2, VERIFIED), (DAY_1, VERIFIED)]
    shown = page(held, checked(regulator.receiver), 9_000)
    assert "replayed card by card: 2 game(s) verified" in shown and "not replayed card by card" not in shown
    assert f"verified; replayed card by card ({report_name(DAY_2)})" in shown
    kept = [r.payload for r in regulator.journal.records() if r.type == "feed_day_replayed"]
    assert [(p["day"], p["verdict"]) for p in kept] == [(DAY_1, VERIFIED), (DAY_2, VERIFIED), (DAY_3, VERIFIED)]
    # `bingo regulator status` reads the same from the receiver's folder.
    lines = CliRunner().invoke(regulator_command, ["status", "--dir", str(tmp_path)]).output.splitlines()
    replayed_day = (f"{HALL} day {DAY_2} (records {segment['first_seq']} to {segment['last_seq']}): replayed card by "
                    f"card, 2 game(s) verified: {', '.join(hall_days.games[DAY_2])}")
    assert replayed_day in lines, lines
    assert any(line.startswith(f"{HALL} day {DAY_3} (records ") and line.endswith(
        f"replayed card by card, 2 game(s) verified: {', '.join(hall_days.games[DAY_3])}") for line in lines), lines
    assert any(line.startswith(f"{HALL} game {hall_days.games[DAY_2][-1]}: ") and
               line.endswith(f"; verified, and replayed card by card ({report_name(DAY_2)})") for line in lines)
    assert lines[-1] == "0 alert(s)"


@pytest.mark.req("R92.7")
def test_days_the_regulator_cannot_replay_a_day_the_sender_could_not_export_is_an_alert(
    hall_days: HallDays, tmp_path: Path
) -> None:
    """A day sent as refused is not replayed card by card: an ``audit_not_replayed`` alert naming the day and the
    reason, on the page, in /api/status and in ``bingo regulator status``, raised once; the verdict stays shown."""
    regulator = regulator_at(tmp_path, hall_days)
    regulator.feed(HALL, hall_days.records)
    segment = hall_days.segment(DAY_2)
    named = [r for r in hall_days.records if segment["first_seq"] <= r.seq <= segment["last_seq"]]
    why = f"game {DAY_2}-s2-g1: it awards the pattern four_corners; the replay format cannot express it"
    signer = ReportSigner.of_server(hall_days.home)
    files = AuditReport.refused(DAY_2, why, named).files()
    files.update({f"{name}.p7s": signer.sign(data) for name, data in list(files.items())})
    refused = Report(HALL, report_name(DAY_2), files)
    regulator.inbox.take(refused, HALL)
    regulator.inbox.take(hall_days.report(DAY_1), HALL)

    verdicts = regulator.verdicts()
    assert verdicts[(HALL, DAY_2)] == (REFUSED, why) and verdicts[(HALL, DAY_1)][0] == VERIFIED
    (alert,) = regulator.receiver.store.alerts()
    assert (alert.kind, alert.sender, alert.seq) == (AUDIT_NOT_REPLAYED, HALL, segment["last_seq"])
    assert alert.detail == (f"{report_name(DAY_2)} (records {segment['first_seq']} to {segment['last_seq']}): not "
                            f"replayed card by card: the sender could not export the day: {why}")
    held = read_held(regulator.receiver.store, regulator.receiver, regulator.inbox)
    plain = status(held, checked(regulator.receiver))
    assert [(a["kind"], a["sender"]) for a in plain["alerts"]] == [(AUDIT_NOT_REPLAYED, HALL)]
    shown = page(held, checked(regulator.receiver), 9_000)
    alerts = shown[shown.index("<table id=alerts>"):]
    assert "<tr class=alert>" in alerts and "<td>audit not replayed</td>" in alerts and "1 alert(s)" in shown
    assert "not replayed card by card: the sender could not export the day: " in alerts
    lines = CliRunner().invoke(regulator_command, ["status", "--dir", str(tmp_path)]).output.splitlines()
    assert f"ALERT {AUDIT_NOT_REPLAYED} {HALL} record {segment['last_seq']} at " in "\n".join(lines)
    assert lines[-1] == "1 alert(s)"

    regulator.inbox.take(refused, HALL)  # sent again: not news
    again = regulator_at(tmp_path, hall_days, regulator.journal)  # the receiver started again
    again.feed(HALL, hall_days.records)
    raised = [r for r in regulator.journal.records() if r.type == "feed_alert_raised"]
    assert [r.payload["kind"] for r in raised] == [AUDIT_NOT_REPLAYED]


def other_numbers(scenario: dict[str, Any]) -> None:
    """The first game's bingo winner given the numbers of a library card no game of the day holds."""
    games = scenario["sessions"][0]["games"]
    in_use = {json.dumps(c["rows"]) for g in games for c in g["cards"]}
    other = next(rows for rows in ([list(r) for r in Card.from_cells(int(n) for n in cells).rows]
                                   for cells in LIBRARY_CELLS[::-1]) if json.dumps(rows) not in in_use)
    winners = replay(parse_scenario(scenario))["games"][0]["prizes"]["bingo"]["paid"]
    next(c for c in games[0]["cards"] if c["id"] == winners[0]["card"])["rows"] = other


def paid_more(recorded: dict[str, Any]) -> None:
    recorded["games"][1]["prizes"]["line"]["paid"][0]["cents"] += 100


def other_hash(segment: dict[str, Any]) -> None:
    segment["last_hash"] = "ab" * 32


@pytest.mark.req("R88.2", "R88.4-5", "R89", "R90", "R92.7")
@pytest.mark.parametrize(("file", "change", "said"), [
    ("scenario.json", other_numbers, "result.json: game 1 of {day}: "),
    ("result.json", paid_more, "result.json: game 2 of {day}: prizes.line.paid.card "),
    (SEGMENT, other_hash, "segment.json: it names record {last} with the hash abab"),
], ids=["winning-card-numbers", "payment", "segment-hash"])
def test_a_lying_export_the_hall_signs_raises_audit_differs_once_and_nothing_else(
    hall_days: HallDays, tmp_path: Path, file: str, change: Callable[[dict[str, Any]], None], said: str
) -> None:
    """R92.7: the lie is named (the day, the file, the game and field); the hall's other day and another hall's
    same day are replayed as ever; the same files sent again, or a receiver started again, raise nothing more."""
    regulator = regulator_at(tmp_path, hall_days)
    regulator.feed(HALL, hall_days.records)
    regulator.feed(OTHER_HALL, hall_days.records)
    lie = hall_days.report(DAY_2, change=change, file=file)
    regulator.inbox.take(hall_days.report(DAY_1), HALL)
    regulator.inbox.take(lie, HALL)
    regulator.inbox.take(hall_days.report(DAY_2, OTHER_HALL), OTHER_HALL)
    last = hall_days.segment(DAY_2)["last_seq"]
    ((sender, seq, detail),) = regulator.differs()
    assert (sender, seq) == (HALL, last)
    assert detail.startswith(f"{report_name(DAY_2)} (records ")
    assert said.format(day=DAY_2, last=last) in detail, detail
    if file == "scenario.json":
        assert "the replay of scenario.json gives" in detail  # the records agree with the file: the replay does not
    if file == "result.json":
        assert "the records say" in detail
    verdicts = regulator.verdicts()
    assert verdicts[(HALL, DAY_1)][0] == VERIFIED and verdicts[(OTHER_HALL, DAY_2)][0] == VERIFIED
    assert verdicts[(HALL, DAY_2)] == (DIFFERS, detail)
    assert regulator.receiver.store.alerts()[0].kind == AUDIT_DIFFERS and len(regulator.receiver.store.alerts()) == 1
    replayed = regulator.receiver.days.replayed()
    assert all((HALL, g) not in replayed and (OTHER_HALL, g) in replayed for g in hall_days.games[DAY_2])

    regulator.inbox.take(lie, HALL)  # its ack lost: held already
    again = regulator_at(tmp_path, hall_days, regulator.journal)  # the receiver started again
    again.feed(HALL, hall_days.records)
    assert again.differs() == regulator.differs()
    raised = [r for r in regulator.journal.records() if r.type == "feed_alert_raised"]
    assert len(raised) == 1 and raised[0].payload["kind"] == AUDIT_DIFFERS


@pytest.mark.req("R92.7", "R95.4")
def test_a_day_whose_records_are_not_held_yet_is_checked_once_they_arrive_even_after_a_restart(
    hall_days: HallDays, tmp_path: Path
) -> None:
    """R92.7: the report waits, kept on disk, for the records it names; a receiver started again takes it from
    there and replays it once the sender's records reach it."""
    last = hall_days.segment(DAY_2)["last_seq"]
    regulator = regulator_at(tmp_path, hall_days)
    regulator.feed(HALL, hall_days.records[:last - 5])
    regulator.inbox.take(hall_days.report(DAY_2), HALL)
    assert regulator.verdicts() == {}
    (waiting,) = regulator.receiver.days.awaited()
    assert (waiting.sender, waiting.day, waiting.last_seq) == (HALL, DAY_2, last)
    held = read_held(regulator.receiver.store, regulator.receiver, regulator.inbox)
    assert f"waiting for its records (held up to {last - 5})" in page(held, checked(regulator.receiver), 9_000)

    again = regulator_at(tmp_path, hall_days, regulator.journal)  # the receiver started again
    assert [a.day for a in again.receiver.days.awaited()] == [DAY_2]
    again.feed(HALL, hall_days.records)
    assert again.verdicts()[(HALL, DAY_2)][0] == VERIFIED
    assert again.receiver.days.awaited() == [] and again.receiver.store.alerts() == []

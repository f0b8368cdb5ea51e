"""``bingo report daily`` (R95.4 a-f, R83.5): a hall's day played through the real modules, its
report written by the command, every file checked by stock ``openssl cms -verify`` against the
operator's certificate authority, and its figures against the journal's own records."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner, Result
from twisted.internet import defer

from hall_server.cli import main
from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.reports.daily_files import DailyReporter, day_folder
from hall_server.store.database import open_database
from protocol.chain import Record
from protocol.money import format_cents
from server_kit.reports.document import Cents
from server_kit import pki
from server_kit.journal import table
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import GamePlan, Purchase, play_game, stored_hall
from hall_server.i18n import DEFAULT_LANGUAGE, money
from tests.reports.conftest import csv_tables, pdf_strings

DAY, EMPTY_DAY = "2026-11-02", "2026-11-01"
FILES = ("report.json", "report.csv", "report.pdf")
SIGNER = "audit-hall-reports"


@dataclass
class Home:
    path: Path
    ca: Path  # the operator's authority: ca.pem is what the regulator trusts

    def bingo(self, *args: str, home: Path | None = None) -> Result:
        return CliRunner().invoke(main, list(args), env={"BINGO_HOME": str(home or self.path)})

    def daily(self, day: str, out: Path, home: Path | None = None) -> Result:
        return self.bingo("report", "daily", "--day", day, "--out", str(out), home=home)

    def records(self) -> list[Record]:
        return list(table.read(open_database(f"sqlite:///{self.path / 'hall.sqlite3'}")))


def issue_signer(ca: Path, name: str, home: Path) -> None:
    """The operator's authority issues the server a report-signing certificate, kept in its key folder."""
    if not (ca / "ca.pem").exists():
        pki.init_authority(ca, "Audit operator")
    done = CliRunner().invoke(main, ["pki", "issue", "report-signing", name, "--dir", str(ca), "--home", str(home)])
    assert done.exit_code == 0, done.output
    keys = home / "keys"
    assert (keys / "report-signing.pem").exists() and (keys / "report-signing.key").stat().st_mode & 0o077 == 0


@pytest.fixture(scope="module")
def home() -> Iterator[Home]:
    path = fast_folder()
    made = Home(path, path / "operator-ca")
    issue_signer(made.ca, SIGNER, path)
    hall = stored_hall(path, new_clock(), POT_RULES)
    # The folder has no hall.toml: the command prints in the hall's default language, as the close does here.
    reporter = DailyReporter(hall.journal, path, "Audit hall", DEFAULT_TIMEZONE, defer.maybeDeferred,
                             language=DEFAULT_LANGUAGE)
    told: list[int] = []
    reporter.listeners.append(lambda: told.append(1))  # the regulator's feed sends what is written
    hall.core.observers.append(reporter.record_committed)
    hall.prepare()
    hall.open_day(DAY)
    play_game(hall, GamePlan(paper=7, purchases=[Purchase(0, 0, 3, 100), Purchase(1, 1, 2, 50)], superbingo_limit=60,
                             seed=3))
    play_game(hall, GamePlan(paper=4, purchases=[Purchase(2, 1, 2, 100)], seed=4, refund=True))
    play_game(hall, GamePlan(paper=5, purchases=[Purchase(1, 0, 4, 100)], jackpot_threshold=41, quick=True, seed=5,
                             last=True))
    hall.close_day()
    assert reporter.written == [day_folder(path, DAY)] and told == [1]
    yield made
    shutil.rmtree(path, ignore_errors=True)


def openssl_verify(file: Path, ca_pem: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["openssl", "cms", "-verify", "-binary", "-inform", "DER", "-in", f"{file}.p7s", "-content", str(file),
         "-CAfile", str(ca_pem), "-purpose", "any", "-out", "/dev/null"],
        capture_output=True, text=True, timeout=60,
    )


def journal_figures(records: list[Record]) -> dict[str, Any]:
    """What the journal itself says of the day, read from the raw records, not through the report's fold."""
    refunded = {r.payload["game_id"] for r in records if r.type == "game_refunded"}
    games = [r.payload["game_id"] for r in records if r.type == "sale_opened" and "card_set" in r.payload]
    kept = [g for g in games if g not in refunded]
    cards = sum(r.payload["count"] for r in records if r.type == "paper_cards_sold" and r.payload["game_id"] in kept)
    cards += sum(r.payload["quantity"] for r in records
                 if r.type == "virtual_cards_bought" and r.payload["game_id"] in kept)
    sales = sum(r.payload["collection_cents"] for r in records
                if r.type == "sale_closed" and r.payload["game_id"] in kept)
    paid = [(r.payload["game_id"], r.payload["prize"], card, cents)
            for r in records if r.type == "prize_paid" for card, cents in r.payload["payments"]]
    balls = {g: [r.payload["ball"] for r in records if r.type == "ball_drawn" and r.payload["game_id"] == g]
             for g in games}
    terminal_of = {(r.payload["game_id"], f"{r.payload['series']}-{n}"): r.payload["terminal"]
                   for r in records if r.type == "virtual_cards_bought"
                   for n in range(r.payload["first"], r.payload["last"] + 1)}
    return {"games": games, "refunded": refunded, "cards": cards, "sales": sales, "paid": paid, "balls": balls,
            "terminal_of": terminal_of}


@pytest.mark.req("R95.4", "R83.5")
def test_the_daily_report_verifies_with_stock_openssl_and_a_changed_byte_fails(home: Home, tmp_path: Path) -> None:
    """R95.4: report.json, report.csv and report.pdf each verify with openssl cms -verify against the
    operator's ca.pem; one changed byte, or another authority, fails."""
    out = tmp_path / "daily"
    done = home.daily(DAY, out)
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, *(f"{f}.p7s" for f in FILES)])
    assert "verify: openssl cms -verify -binary -inform DER" in done.stdout
    for name in FILES:
        checked = openssl_verify(out / name, home.ca / "ca.pem")
        assert checked.returncode == 0, checked.stderr
        assert "Verification successful" in checked.stderr
        data = bytearray((out / name).read_bytes())
        data[len(data) // 2] ^= 0x01
        changed = tmp_path / f"changed-{name}"
        changed.write_bytes(bytes(data))
        shutil.copy(out / f"{name}.p7s", f"{changed}.p7s")
        refused = openssl_verify(changed, home.ca / "ca.pem")
        assert refused.returncode != 0 and "Verification failure" in refused.stderr, refused.stderr
    other = tmp_path / "other-ca"
    pki.init_authority(other, "Someone else")
    assert openssl_verify(out / "report.json", other / "ca.pem").returncode != 0


@pytest.mark.req("R95.4", "R83.5")
def test_the_daily_reports_figures_are_the_journals(home: Home, tmp_path: Path) -> None:
    """R95.4 a-f, R83.5: cards with series and numbers, sales, balls, winners with their terminals, prizes
    and running totals in the JSON are what the journal's own records say; CSV and PDF agree."""
    out = tmp_path / "daily"
    assert home.daily(DAY, out).exit_code == 0
    report = json.loads((out / "report.json").read_text())
    tables = {key: table["rows"] for key, table in report["tables"].items()}
    records = home.records()
    facts = journal_figures(records)
    assert len(facts["games"]) == 3 and len(facts["refunded"]) == 1

    (totals,) = tables["totals"]
    assert totals == {"games": 3, "cards_sold": facts["cards"], "prizes_paid_cents": sum(p[3] for p in facts["paid"]),
                      "collection_cents": facts["sales"], "machines_revenue_cents": 0}
    assert tables["machines"] == []  # this hall has no video bingo machine
    assert facts["cards"] > 0 and facts["sales"] > 0 and facts["paid"]

    # The games with the running totals after each, and their balls in order (R83.5, R95.4 b, c).
    assert [g["game_id"] for g in tables["games"]] == facts["games"]
    assert [g["game_id"] for g in tables["balls"]] == facts["games"]
    for game in tables["balls"]:
        assert game["balls"] == " ".join(map(str, facts["balls"][game["game_id"]]))
        assert game["ball_count"] == len(facts["balls"][game["game_id"]])
    last = tables["games"][-1]
    assert (last["total_games"], last["total_cards_sold"], last["total_collection_cents"],
            last["total_prizes_paid_cents"]) == (3, facts["cards"], facts["sales"], totals["prizes_paid_cents"])
    refunded = next(g for g in tables["games"] if g["game_id"] in facts["refunded"])
    assert refunded["state"] == "refunded" and refunded["cards_sold"] == 0 and refunded["collection_cents"] == 0

    # Every card bought, by series and number, with its value and where (R95.4 a, c, d).
    bought = {(r.payload["game_id"], str(r.payload["series"]), n)
              for r in records if r.type == "paper_cards_sold"
              for n in range(r.payload["first"], r.payload["last"] + 1)}
    bought |= {(game, label.split("-")[0], int(label.split("-")[1])) for game, label in facts["terminal_of"]}
    listed = {(c["game_id"], c["series"], n) for c in tables["cards"] for n in range(c["first"], c["last"] + 1)}
    assert listed == bought
    assert all(c["value_cents"] == 150 for c in tables["cards"])
    assert {c["where"] for c in tables["cards"] if c["kind"] == "virtual"} == {"T1", "T2"}
    paid_virtual = sum(r.payload["amount_cents"] for r in records if r.type == "virtual_cards_bought")
    assert sum(c["amount_cents"] for c in tables["cards"] if c["kind"] == "virtual") == paid_virtual
    assert sum(t["cards"] for t in tables["terminals"]) == facts["cards"]

    # Each winning card, the prize it was paid and where it was bought (R95.4 b, e, f).
    winners = sorted((w["game_id"], w["prize"], w["card"], w["paid_cents"]) for w in tables["winners"])
    assert winners == sorted(facts["paid"])
    for win in tables["winners"]:
        assert win["where"] == facts["terminal_of"].get((win["game_id"], win["card"]), "paper")
    assert sum(p["paid_cents"] for p in tables["prizes"]) == totals["prizes_paid_cents"]

    # The report names the day's last journal record: the session's closing.
    closed = next(r for r in records if r.type == "session_closed")
    assert report["journal"]["last_seq"] == closed.seq and report["journal"]["last_hash"] == closed.hash
    assert tables["journal"] == [{"journal_first_seq": report["journal"]["first_seq"], "journal_last_seq": closed.seq,
                                  "journal_last_hash": closed.hash}]

    # The CSV holds the same cents; the PDF shows them in euros, as the hall's language writes them.
    csv = csv_tables((out / "report.csv").read_bytes())
    assert csv["totals"] == [{k: str(v) for k, v in totals.items()}]
    shown = [text.replace("\xa0", " ") for text in pdf_strings((out / "report.pdf").read_bytes())]
    for cents in (facts["sales"], totals["prizes_paid_cents"]):
        assert money(cents, DEFAULT_LANGUAGE).replace("\xa0", " ") in shown, "a no-break space reads as a space"


@pytest.mark.req("R83.5", "R95.4")
def test_the_session_close_writes_the_days_report_that_the_command_writes_again(home: Home, tmp_path: Path) -> None:
    """R83.5: at the session's close the hall writes the day's signed report into reports/daily-DAY;
    made again later by the command from the same journal, it is the same bytes."""
    at_close = day_folder(home.path, DAY)
    for name in FILES:
        assert openssl_verify(at_close / name, home.ca / "ca.pem").returncode == 0
    out = tmp_path / "again"
    assert home.daily(DAY, out).exit_code == 0
    for name in FILES:
        assert (out / name).read_bytes() == (at_close / name).read_bytes(), name


def test_a_hall_without_a_report_signing_certificate_closes_its_session_and_writes_no_report(
    home: Home, tmp_path: Path
) -> None:
    journal = Journal(open_database(f"sqlite:///{home.path / 'hall.sqlite3'}"),
                      load_journal_key(home.path / "keys" / "journal-signing.pem"), head=home.path / "journal.head")
    closed = next(r for r in home.records() if r.type == "session_closed")
    reporter = DailyReporter(journal, tmp_path, "Audit hall", DEFAULT_TIMEZONE, defer.maybeDeferred)
    assert reporter.write(closed.seq) is None
    assert list(tmp_path.iterdir()) == []
    assert DailyReporter(journal, home.path, "Audit hall", DEFAULT_TIMEZONE,
                         defer.maybeDeferred).write(closed.seq) == day_folder(home.path, DAY)


@pytest.mark.req("R95.4")
def test_a_day_without_games_is_a_valid_empty_report(home: Home, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    done = home.daily(EMPTY_DAY, out)
    assert done.exit_code == 0, done.output
    report = json.loads((out / "report.json").read_text())
    assert report["tables"]["totals"]["rows"] == [
        {"games": 0, "cards_sold": 0, "prizes_paid_cents": 0, "collection_cents": 0, "machines_revenue_cents": 0}]
    assert report["tables"]["games"]["rows"] == [] and report["tables"]["cards"]["rows"] == []
    assert report["journal"]["last_seq"] == home.records()[-1].seq  # what the journal held by that day's end
    for name in FILES:
        assert openssl_verify(out / name, home.ca / "ca.pem").returncode == 0


@pytest.mark.req("R95.4")
@pytest.mark.parametrize("day, message", [
    ("2026-02-30", "--day is a date, YYYY-MM-DD, not '2026-02-30'"),
    ("1 Nov 2026", "--day is a date, YYYY-MM-DD"),
    ("2999-01-01", "--day 2999-01-01 is in the future: today is "),
])
def test_a_malformed_or_future_day_is_one_clear_error(home: Home, tmp_path: Path, day: str, message: str) -> None:
    out = tmp_path / "refused"
    done = home.daily(day, out)
    assert done.exit_code == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
    assert not out.exists()


def test_a_server_without_a_report_signing_certificate_is_told_how_to_get_one(home: Home, tmp_path: Path) -> None:
    out = tmp_path / "refused"
    done = home.daily(DAY, out, home=tmp_path)
    assert done.exit_code == 2 and not out.exists()
    assert "no report-signing certificate at" in done.stderr
    assert "bingo pki issue report-signing NAME --home" in done.stderr


def test_a_report_signing_certificate_signs_documents_only(tmp_path: Path) -> None:
    """Its role and usages keep it out of every TLS link; a TLS certificate cannot sign reports."""
    ca, server = tmp_path / "ca", tmp_path / "server"
    issue_signer(ca, "central-reports", server)
    text = subprocess.run(["openssl", "x509", "-in", str(server / "keys" / "report-signing.pem"), "-noout", "-text"],
                          capture_output=True, text=True, check=True).stdout
    assert "OU = report-signing" in text and "Digital Signature, Non Repudiation" in text
    assert "TLS Web" not in text and ("1.3.6.1.5.5.7.3.36" in text or "Document Signing" in text)
    refused = CliRunner().invoke(main, ["pki", "issue", "server", "hall", "--dir", str(ca), "--home", str(server)])
    assert refused.exit_code != 0 and "--home is for report-signing certificates" in refused.output


# --- The central server's day: interconnected games ---------------------------------------

CENTRAL_DAY = "2026-11-03"
#: Every purchase of net-1: (hall, terminal, player, cards, stake percentage).
NETWORK_PURCHASES = [("hall-1", "T1", "p1", 6, 100), ("hall-1", "T2", "p2", 4, 50), ("hall-2", "T7", "q1", 5, 100)]


def played_central(tmp_path: Path) -> Path:
    """A central server's folder whose journal holds net-1 played to its end on CENTRAL_DAY, with a terminal
    of hall-2 declared failed during the sale, and net-2 declared not played (R96.2): the real central
    module on its real database, its timers on a test clock."""
    import datetime

    from twisted.internet import task

    from central_server import store
    from central_server.config import load_config
    from central_server.domain.config import library_digest
    from central_server.module import CentralModule
    from server_kit.core import Actor, CommandCore, run_inline
    from server_kit.journal.sql import Journal
    from server_kit.keys import load_journal_key
    from tests.central_server.support import config_text
    from tests.hall.conftest import result

    home = tmp_path / "central"
    home.mkdir()
    (home / "central.toml").write_text(config_text(home, tmp_path / "pki", f"sqlite:///{home / 'central.sqlite3'}",
                                                   opens_after_ms=None, games=("net-1", "net-2")))
    config = load_config(home / "central.toml")
    engine = store.open_database(config.database_url)
    library = store.add_series(engine, "V1", config.series_of("V1").cards)
    journal = Journal(engine, load_journal_key(config.journal_key, create=True), head=config.journal_head)
    clock = task.Clock()
    clock.advance(datetime.datetime(2026, 11, 3, 10, tzinfo=datetime.timezone.utc).timestamp())
    core = CommandCore(journal, clock, run_inline)
    module = CentralModule(core, {"V1": library}, clock)
    core.recover()
    module.start_timers()
    for plan in config.games:
        result(module.schedule(plan.config(library_digest(library))))
        result(module.open_sale(plan.game_id))
    for n, (hall, terminal, player, count, pct) in enumerate(NETWORK_PURCHASES):
        bought = result(module.hall_command("buy_cards", {
            "request_id": f"r{n}", "game_id": "net-1", "hall_id": hall, "terminal_id": terminal,
            "player_ref": player, "card_count": count, "stake_pct": pct}, hall))
        assert bought["status"] == "confirmed", bought
    result(module.hall_command("buy_cards", {
        "request_id": "r9", "game_id": "net-2", "hall_id": "hall-1", "terminal_id": "T1", "player_ref": "p1",
        "card_count": 3, "stake_pct": 100}, "hall-1"))
    result(module.hall_command("terminal_failed", {
        "request_id": "f1", "game_id": "net-1", "hall_id": "hall-2", "terminal_id": "T7", "reason": "screen dead",
        "declared_by": "rui"}, "hall-2"))
    result(module.declare_not_played("net-2", "the studio is flooded", Actor("olga.weber", "operator")))
    for _ in range(400):
        if module.games["net-1"].phase == "closed":
            break
        clock.advance(1.0)
    assert module.games["net-1"].phase == "closed"
    module.stop_timers()
    engine.dispose()
    return home


@pytest.mark.req("R95.4", "R83.5")
def test_the_central_servers_daily_report_holds_the_interconnected_games(tmp_path: Path) -> None:
    """R95.4 a-f: `bingo report daily` on a central server's folder reports its network games: the cards
    by hall and terminal, the halls and terminals where prizes were won; openssl verifies every file."""
    from tests.central_server.support import bingo_central

    home = played_central(tmp_path)
    ca = tmp_path / "operator-ca"
    issue_signer(ca, "central-reports", home)
    out = tmp_path / "daily"
    done = bingo_central("report", "daily", "--day", CENTRAL_DAY, "--out", str(out), tmp_path=tmp_path,
                         env={"BINGO_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    for name in FILES:
        checked = openssl_verify(out / name, ca / "ca.pem")
        assert checked.returncode == 0, checked.stderr

    from server_kit.db.database import create

    records = list(table.read(create(f"sqlite:///{home / 'central.sqlite3'}", create_folder=False)))
    report = json.loads((out / "report.json").read_text())
    tables = {key: t["rows"] for key, t in report["tables"].items()}
    assert tables["report"][0]["origin"] == "central server"
    assert [g["game_id"] for g in tables["games"]] == ["net-1", "net-2"]
    net_1, net_2 = tables["games"]
    assert net_2["state"] == "not played" and net_2["cards_sold"] == 0 and net_2["collection_cents"] == 0

    (closed,) = [r.payload for r in records if r.type == "central_sale_closed" and r.payload["game_id"] == "net-1"]
    returned = [r.payload for r in records if r.type == "central_stake_returned"]
    bought = [r.payload for r in records if r.type == "central_purchase_confirmed"]
    won = [r.payload for r in records if r.type == "central_card_won"]
    assert closed["sales_cents"] == 6 * 100 + 4 * 50 and net_1["collection_cents"] == closed["sales_cents"]
    assert net_1["cards_sold"] == 10 and net_1["refunded_cards"] == 5
    assert tables["balls"][0]["balls"] == " ".join(str(r.payload["ball"]) for r in records
                                      if r.type == "central_ball_drawn" and r.payload["game_id"] == "net-1")
    (totals,) = tables["totals"]
    assert totals == {"games": 2, "cards_sold": 10, "collection_cents": closed["sales_cents"],
                      "prizes_paid_cents": sum(w["payment_cents"] for w in won), "machines_revenue_cents": 0}
    assert sum(g["refunded_cents"] for g in tables["games"]) == sum(r["amount_cents"] for r in returned)

    # Every card by series and number, with the hall and terminal it was bought on (R95.4 a, d).
    cards = {(c["game_id"], c["series"], n, c["hall"], c["where"]) for c in tables["cards"]
             for n in range(c["first"], c["last"] + 1)}
    assert cards == {(b["game_id"], "V1", n, b["hall_id"], b["terminal_id"]) for b in bought
                     for n in range(b["first_card"], b["first_card"] + b["card_count"])}
    assert {(t["hall"], t["where"]) for t in tables["terminals"]} == {("hall-1", "T1"), ("hall-1", "T2")}
    # The winners with the halls and terminals where the prizes were won (R95.4 f).
    assert won and sorted((w["game_id"], w["prize"], w["card"], w["paid_cents"], w["hall"], w["where"])
                          for w in tables["winners"]) == sorted(
        (p["game_id"], p["pattern"], f"V1-{p['card_number']}", p["payment_cents"], p["hall_id"], p["terminal_id"])
        for p in won)
    last = max((r for r in records if r.payload.get("game_id") in ("net-1", "net-2")), key=lambda r: r.seq)
    assert (report["journal"]["last_seq"], report["journal"]["last_hash"]) == (last.seq, last.hash)

    # The tax year to date (R98.2): the stakes of net-1 (net-2 was not played); no machines here.
    (tax,) = tables["tax"]
    assert (tax["year"], tax["bingo_stakes_to_date_cents"], tax["bingo_tax_to_date_cents"]) == (
        2026, closed["sales_cents"], closed["sales_cents"] // 10)
    assert tax["bingo_share_cents"] == closed["sales_cents"] // 10 and tax["machines_tax_to_date_cents"] == 0
    yearly = tmp_path / "yearly"
    done = bingo_central("report", "yearly", "--year", "2026", "--out", str(yearly), tmp_path=tmp_path,
                         env={"BINGO_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    for name in YEARLY:
        assert openssl_verify(yearly / name, ca / "ca.pem").returncode == 0
    year = {key: t["rows"] for key, t in json.loads((yearly / "tax-year.json").read_text())["tables"].items()}
    (totals,) = year["totals"]
    assert (totals["bingo_stakes_cents"], totals["bingo_tax_cents"], totals["tax_cents"]) == (
        closed["sales_cents"], closed["sales_cents"] // 10, closed["sales_cents"] // 10)
    assert year["report"][0]["origin"] == "central server"
    assert [d["day"] for d in year["days"]] == [CENTRAL_DAY]


# --- The tax year (R98.2) -----------------------------------------------------------------------

YEARLY = ("tax-year.json", "tax-year.csv", "tax-year.pdf")


@pytest.mark.req("R98.2")
def test_R98_2_bingo_report_yearly_gives_the_years_stakes_and_tax_rounded_once_signed(home: Home,
                                                                                       tmp_path: Path) -> None:
    """R98.2: `bingo report yearly --year Y` writes the year's bingo stakes and their 10% rounded once, beside
    the games' own rounded shares, signed like the daily report; the daily report shows the year to date."""
    out = tmp_path / "yearly"
    done = home.bingo("report", "yearly", "--year", DAY[:4], "--out", str(out))
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == sorted([*YEARLY, *(f"{f}.p7s" for f in YEARLY)])
    for name in YEARLY:
        checked = openssl_verify(out / name, home.ca / "ca.pem")
        assert checked.returncode == 0, checked.stderr
    records = home.records()
    ended = [r.payload for r in records if r.type in ("game_closed", "game_finished")]
    stakes = sum(p["tax_base_cents"] for p in ended)
    assert stakes > 0 and len(ended) == 2  # the third game was refunded: nothing staked
    tables = {key: t["rows"] for key, t in json.loads((out / "tax-year.json").read_text())["tables"].items()}
    (totals,) = tables["totals"]
    assert totals == {
        "bingo_stakes_cents": stakes, "bingo_tax_cents": stakes // 10,
        "games_tax_cents": sum(p["tax_cents"] for p in ended),
        "rounding_cents": stakes // 10 - sum(p["tax_cents"] for p in ended),
        "machines_revenue_cents": 0, "machines_tax_cents": 0, "tax_cents": stakes // 10}
    assert tables["days"] == [{
        "day": DAY, "bingo_stakes_cents": stakes, "bingo_share_cents": stakes // 10, "machines_revenue_cents": 0,
        "machines_share_cents": 0, "bingo_stakes_to_date_cents": stakes, "machines_revenue_to_date_cents": 0}]
    assert tables["report"][0]["through"] == f"{DAY[:4]}-12-31" or tables["report"][0]["through"] >= DAY
    assert f"tax year {DAY[:4]} through" in done.stdout and format_cents(stakes // 10) in done.stdout

    daily = tmp_path / "daily"
    assert home.daily(DAY, daily).exit_code == 0
    (tax,) = json.loads((daily / "report.json").read_text())["tables"]["tax"]["rows"]
    assert (tax["bingo_stakes_to_date_cents"], tax["bingo_tax_to_date_cents"], tax["bingo_share_cents"]) == (
        stakes, stakes // 10, stakes // 10)


@pytest.mark.req("R98.2")
@pytest.mark.parametrize("year, message", [
    ("26", "--year is a year, YYYY, not '26'"),
    ("2999", "--year 2999 is in the future: this year is "),
])
def test_a_malformed_or_future_year_is_one_clear_error(home: Home, tmp_path: Path, year: str, message: str) -> None:
    out = tmp_path / "refused"
    done = home.bingo("report", "yearly", "--year", year, "--out", str(out))
    assert done.exit_code == 2 and done.stdout == "" and message in done.stderr, done.stderr
    assert not out.exists()


# --- The monthly list of cards sold (R77.4) and the large wins (R75.6) ---------------------------

MONTHLY = ("cards-sold.json", "cards-sold.csv", "cards-sold.pdf")


@pytest.mark.req("R77.4")
def test_the_monthly_list_of_cards_sold_is_signed_and_lists_every_purchase_of_the_days(
    home: Home, tmp_path: Path
) -> None:
    """R77.4: the month's physical and virtual cards, each purchase with its series and numbers, as the
    day's report has them; every file verifies with stock openssl against the operator's ca.pem."""
    out, daily = tmp_path / "monthly", tmp_path / "daily"
    done = home.bingo("report", "monthly", "--month", DAY[:7], "--out", str(out))
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == sorted([*MONTHLY, *(f"{f}.p7s" for f in MONTHLY)])
    for name in MONTHLY:
        checked = openssl_verify(out / name, home.ca / "ca.pem")
        assert checked.returncode == 0, checked.stderr
    assert home.daily(DAY, daily).exit_code == 0
    day_cards = json.loads((daily / "report.json").read_text())["tables"]["cards"]["rows"]
    month = json.loads((out / "cards-sold.json").read_text())["tables"]
    assert [{k: v for k, v in row.items() if k != "day"} for row in month["cards"]["rows"]] == day_cards
    assert {row["day"] for row in month["cards"]["rows"]} == {DAY}
    kept = [row for row in day_cards if row["refunded"] == "no"]
    (totals,) = month["totals"]["rows"]
    assert totals["paper_cards"] == sum(r["count"] for r in kept if r["kind"] == "paper") > 0
    assert totals["virtual_cards"] == sum(r["count"] for r in kept if r["kind"] == "virtual") > 0
    assert totals["paper_cents"] + totals["virtual_cents"] == sum(r["amount_cents"] for r in kept)
    assert [row["day"] for row in month["days"]["rows"]] == [DAY]
    assert month["large_wins"]["rows"] == []  # nobody won 15,000 EUR on a 1 EUR card
    assert f"cards sold in {DAY[:7]}: {totals['paper_cards'] + totals['virtual_cards']} card(s)" in done.stdout


@pytest.mark.req("R77.4")
@pytest.mark.parametrize("month, message", [
    ("2026-13", "--month is a month, YYYY-MM, not '2026-13'"),
    ("2026-1", "--month is a month, YYYY-MM, not '2026-1'"),
    ("2999-01", "--month 2999-01 is in the future: this month is "),
])
def test_a_malformed_or_future_month_is_one_clear_error(home: Home, tmp_path: Path, month: str, message: str) -> None:
    out = tmp_path / "refused"
    done = home.bingo("report", "monthly", "--month", month, "--out", str(out))
    assert done.exit_code == 2 and done.stdout == "" and message in done.stderr, done.stderr
    assert not out.exists()


@pytest.mark.req("R75.6")
def test_R75_6_prizes_are_summed_per_beneficiary_an_account_over_the_day_anyone_else_within_a_game() -> None:
    """R75.6: an account's prizes of the day add up across games; a paper winner's within one game; the
    daily report and the month list each sum with the prizes that make it."""
    from protocol.daily import (
        ACCOUNT, HALL_GAME, PAPER_CARD, PAPER_WINNER, VIDEO_BINGO, Beneficiary, BeneficiaryPrize, DailyReport,
    )
    from server_kit.reports.daily import daily_report
    from server_kit.reports.monthly import monthly_report

    account = Beneficiary(ACCOUNT, "607201020601", visitor=4)
    person = Beneficiary(PAPER_WINNER, "identity record 30", identity_seq=30)
    card = Beneficiary(PAPER_CARD, "g1/1-9")
    prizes = (
        BeneficiaryPrize(account, HALL_GAME, "g1", "line", "9001-3", 700_000, 20),
        BeneficiaryPrize(person, HALL_GAME, "g1", "bingo", "1-7", 300_000, 31),
        BeneficiaryPrize(person, HALL_GAME, "g1", "jackpot", "1-8", 1_400_000, 32),
        BeneficiaryPrize(card, HALL_GAME, "g1", "bingo", "1-9", 1_499_999, 33),  # one cent short
        BeneficiaryPrize(person, HALL_GAME, "g2", "line", "2-1", 1_000_000, 40),  # another game: not added
        BeneficiaryPrize(account, VIDEO_BINGO, "vb-1#4", "play", "vb-1.1", 800_000, 50),
    )
    day = DailyReport("hall", "Hall", "2026-11-20", "Europe/Andorra", (), (), (), (), 10, 90, "ab" * 32,
                      beneficiary_prizes=prizes)
    wins = day.large_wins()
    assert [(w.beneficiary, w.game_id, w.total_cents) for w in wins] == [
        (account, None, 1_500_000), (person, "g1", 1_700_000)]
    tables = {t.key: t for t in daily_report(day).tables}
    assert [r[2:] for r in tables["large_wins"].rows] == [
        ("account", "607201020601", None, 4, "", 2, Cents(1_500_000)),
        ("paper winner", "identity record 30", 30, None, "g1", 2, Cents(1_700_000))]
    assert [(r[1], r[3], r[4], r[6]) for r in tables["large_win_prizes"].rows] == [
        (1, "g1", "line", Cents(700_000)), (1, "vb-1#4", "play", Cents(800_000)),
        (2, "g1", "bingo", Cents(300_000)), (2, "g1", "jackpot", Cents(1_400_000))]
    month = {t.key: t for t in monthly_report("2026-11", [day]).tables}
    assert month["large_wins"].rows == tables["large_wins"].rows

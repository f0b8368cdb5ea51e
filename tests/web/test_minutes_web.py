"""The minutes book from the console: ``/api/minutes/...`` on the fake browser, over a
hall that played the report tests' sessions.  The files are the ones ``bingo minutes``
writes (the same code, byte for byte), signed with the journal key; only the
administrator and the room chief may read them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.config import StaffMember
from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.reports.minutes import build
from hall_server.reports.printed import wording
from hall_server.reports.publish import make_report, render_signed
from hall_server.store.database import open_database
from hall_server.web.auth import SignIns, StaffDirectory
from hall_server.web.live import LiveHub
from hall_server.web.minutes import MinutesDesk
from hall_server.web.site import build_site, inline_authenticate
from hall_server.web.view import HallView
from server_kit.core import run_inline
from server_kit.journal.sql import Journal
from server_kit.reports.signing import verify
from server_kit.web.channel import CommandChannel
from tests.reports.conftest import csv_tables, pdf_strings
from tests.reports.scenario import Played, play
from tests.web.conftest import _HASH, STAFF, FakeBrowser

HALL = "Minutes hall"


@dataclass
class MinutesHall:
    played: Played
    journal: Journal
    key: Ed25519PrivateKey
    view: HallView
    site: object

    def browser(self, name: str | None) -> FakeBrowser:
        browser = FakeBrowser(self.site)  # type: ignore[arg-type]
        if name is not None:
            assert browser.sign_in(name).status == 200
        return browser


@pytest.fixture(scope="module")
def minutes_hall(tmp_path_factory: pytest.TempPathFactory) -> MinutesHall:
    home = tmp_path_factory.mktemp("minutes-hall")
    key = Ed25519PrivateKey.generate()
    journal = Journal(open_database(f"sqlite:///{home / 'hall.sqlite3'}"), key, head=home / "journal.head")
    clock = Clock()
    clock.advance(1_780_000_000)
    played = play(journal, clock)
    core = played.hall.core
    view = HallView(HALL)
    for record in journal.records():
        view.apply(record)
    core.add_view(view)
    sign_ins = SignIns(StaffDirectory(StaffMember(n, r, _HASH) for n, r in STAFF.items()), clock)
    channel = CommandChannel(core)
    hub = LiveHub(view, channel, sign_ins)
    site = build_site(
        hub=hub, sign_ins=sign_ins, channel=channel, authenticate=inline_authenticate(sign_ins), secure_cookie=False,
        minutes=MinutesDesk(journal, HALL, DEFAULT_TIMEZONE, run_inline),
    )
    return MinutesHall(played, journal, key, view, site)


@pytest.mark.req("R77.1", "R77.3", "R83.5")
def test_the_administrator_prints_the_session_minutes_signed_as_bingo_minutes_makes_them(
    minutes_hall: MinutesHall,
) -> None:
    admin = minutes_hall.browser("admin")
    pdf = admin.request("GET", "/api/minutes/session/1.pdf")
    assert pdf.status == 200
    assert pdf.headers["content-type"] == "application/pdf"
    # Inline: the browser opens it in its viewer, to print.
    assert pdf.headers["content-disposition"] == 'inline; filename="minutes-session-1.pdf"'
    assert pdf.body.startswith(b"%PDF")

    # The same bytes as the command line's report from the same journal: one code path.
    book = build(minutes_hall.journal.records())
    words = wording("en")  # the desk's hall speaks English
    expected = render_signed(make_report(book, "session", "1", HALL, DEFAULT_TIMEZONE, words), "pdf", minutes_hall.key,
                             words)
    assert pdf.body == expected.data

    signature = admin.request("GET", "/api/minutes/session/1.pdf.sig")
    assert signature.status == 200 and len(signature.body) == 64
    assert signature.headers["content-disposition"] == 'attachment; filename="minutes-session-1.pdf.sig"'
    verify(minutes_hall.key.public_key(), pdf.body, signature.body)
    assert base64.b64decode(pdf.headers["x-signature"]) == signature.body
    span = book.session(1).journal_range
    assert pdf.headers["x-journal-range"] == f"{span.first_seq} {span.last_seq} {span.last_hash}"

    shown = " ".join(pdf_strings(pdf.body))
    for game_id in minutes_hall.played.game_ids[:3]:
        assert game_id in shown
    assert span.last_hash in shown
    assert "Signatures" in shown or "signatures" in shown


@pytest.mark.req("R77.1", "R83.3-4")
def test_the_room_chief_gets_a_games_minutes_as_csv_with_its_fields_and_signature(minutes_hall: MinutesHall) -> None:
    rosa = minutes_hall.browser("rosa")
    game_id = minutes_hall.played.game_ids[1]  # two series and the jackpot in play
    answer = rosa.request("GET", f"/api/minutes/game/{game_id}.csv")
    assert answer.status == 200 and answer.headers["content-type"] == "text/csv; charset=utf-8"
    verify(minutes_hall.key.public_key(), answer.body, base64.b64decode(answer.headers["x-signature"]))
    signature = rosa.request("GET", f"/api/minutes/game/{game_id}.csv.sig")
    verify(minutes_hall.key.public_key(), answer.body, signature.body)

    tables = csv_tables(answer.body)
    (game,) = tables["game"]
    assert game["game_id"] == game_id
    assert [(s["series"], s["first_card"], s["last_card"]) for s in tables["series"]] == [
        ("7", "41", "60"), ("8", "1", "10")]
    assert {w["prize"] for w in tables["winners"]} >= {"line", "bingo"}
    assert {p["prize"] for p in tables["prizes"]} >= {"line", "bingo", "jackpot"}
    assert "7-41" in {w["card"] for w in tables["winners"]}


@pytest.mark.req("R80")
@pytest.mark.parametrize("name", ["tomas", "sam", "carla", "adam"])
def test_other_roles_are_refused_the_minutes(minutes_hall: MinutesHall, name: str) -> None:
    answer = minutes_hall.browser(name).request("GET", "/api/minutes/session/1.pdf")
    assert answer.status == 403
    error = answer.json()["error"]
    assert error["code"] == "not_allowed" and "administrator and the room chief" in error["message"]


def test_the_minutes_need_a_sign_in(minutes_hall: MinutesHall) -> None:
    answer = minutes_hall.browser(None).request("GET", "/api/minutes/session/1.pdf")
    assert answer.status == 401 and answer.json()["error"]["code"] == "signed_out"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/api/minutes/session/99.pdf", "there is no session 99 in the journal; it holds sessions 1 to 2"),
        ("/api/minutes/game/2026-12-01-s1-g9.pdf", "there is no game '2026-12-01-s1-g9' in the journal"),
        ("/api/minutes/session/one.pdf", "/api/minutes/session/<number>.pdf"),
        ("/api/minutes/session/1.docx", "/api/minutes/session/<number>.pdf"),
        ("/api/minutes/month/2026-12.pdf", "/api/minutes/game/<game id>.pdf"),
        ("/api/minutes/session", "/api/minutes/session/<number>.pdf"),
    ],
)
def test_unknown_games_sessions_and_paths_are_refused_with_what_exists(
    minutes_hall: MinutesHall, path: str, message: str
) -> None:
    answer = minutes_hall.browser("admin").request("GET", path)
    assert answer.status == 404
    error = answer.json()["error"]
    assert error["code"] == "not_found" and message in error["message"]


def test_no_minutes_are_signed_over_a_journal_that_does_not_verify(minutes_hall: MinutesHall) -> None:
    head = minutes_hall.journal.head
    kept = head.read_bytes()
    # The head names a record the table does not hold: the journal was cut short.
    last = minutes_hall.journal.last
    assert last is not None
    head.write_text(f'{{"seq": {last.seq + 3}, "hash": "{"0" * 64}"}}')
    try:
        answer = minutes_hall.browser("admin").request("GET", "/api/minutes/session/1.pdf")
    finally:
        head.write_bytes(kept)
    assert answer.status == 500
    error = answer.json()["error"]
    assert error["code"] == "journal_invalid" and "does not verify" in error["message"]
    assert minutes_hall.browser("admin").request("GET", "/api/minutes/session/1.pdf").status == 200


def test_the_console_offers_the_minutes_to_their_readers_with_the_sessions_games(minutes_hall: MinutesHall) -> None:
    for name, offered in (("admin", True), ("rosa", True), ("tomas", False), ("sam", False)):
        state = minutes_hall.browser(name).request("GET", "/api/state").json()
        assert state["minutes"] is offered, name
    session = minutes_hall.view.console()["session"]
    assert session["number"] == 2  # the second session is open, with its one game
    assert session["games"] == [{"game_id": minutes_hall.played.game_ids[3], "number": 1}]

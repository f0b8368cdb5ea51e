"""Every document the hall prints speaks the hall's language: the ticket, the statement, the sheet of
paper cards, the minutes of a game, of a session and of a month, the daily, monthly and yearly reports.

Each is made through the code path the hall uses (the cashier's renderers, the minutes' ``publish``,
the daily reporter's and the commands' ``printed_pdf``, ``read_year``), read back with pypdf, and
must show its language's words and CLDR money; on a Catalan, Castilian or French document no
label of the ``reports`` catalog is left in English and no amount is written ``12.34 EUR``.
``PRINTED_PNG=folder`` writes the Catalan pages as PNG there (pdftoppm) to look at.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from reportlab.pdfbase import pdfmetrics

from hall_server import i18n
from hall_server.hall.cashier import Movement, Statement, Ticket
from hall_server.printing import card_sheet_pdf
from hall_server.reports.daily import hall_day
from hall_server.reports.daily_files import read_year
from hall_server.reports.printed import printed_pdf, wording
from hall_server.reports.publish import publish
from hall_server.statements import statement_pdf, ticket_pdf
from hall_server.store.database import open_database
from protocol.strips import sample_strips
from server_kit.keys import load_journal_key
from server_kit.reports.daily import daily_report
from server_kit.reports.document import Cents, Column, JournalRange, Report, Table
from server_kit.reports.monthly import monthly_report
from server_kit.reports import fonts
from server_kit.reports.render import to_pdf
from tests.reports.conftest import PlayedHall, pdf_strings
from tests.reports.test_statement_layout import placed_strings

ZONE = ZoneInfo("Europe/Andorra")
HALL = "Sala Ñandú"
LANGUAGES = i18n.LANGUAGES
#: An amount every document below shows: a card's price in the played hall (1.00 EUR) or the ticket's none.
CARD_PRICE = 100
#: The words each language must show, by the English msgid: the regulation's terms among them.
TERMS = {
    "ca": ("Cartró", "Sèrie", "acta", "Recaptació", "línia"),
    "es": ("Cartón", "Serie", "acta", "Recaudación", "línea"),
    "fr": ("Carton", "Série", "procès-verbal", "Recette", "ligne"),
}


def shown_text(data: bytes) -> list[str]:
    """The strings a PDF shows, a no-break space read as a space."""
    return [text.replace("\xa0", " ") for text in pdf_strings(data)]


def printed_money(cents: int, language: str) -> str:
    return i18n.money(cents, language).replace("\u202f", " ").replace("\xa0", " ")


def english_left(shown: list[str], language: str) -> list[str]:
    """The strings of ``shown`` that are a label of the reports catalog in English, not ``language``'s."""
    labels = {m.id for m in i18n.domain_catalog(language, "reports")
              if isinstance(m.id, str) and m.id and "{" not in m.id and m.string != m.id}
    return sorted({text for text in shown if text in labels})


def check(data: bytes, language: str, *msgids: str, cents: int | None = CARD_PRICE) -> list[str]:
    """``data`` shows each of ``msgids`` in ``language`` and, if given, ``cents`` as the language writes money;
    in ca, es and fr no English label and no ``EUR`` amount is left.  The strings shown."""
    shown = shown_text(data)
    text = " ".join(shown)
    for msgid in msgids:
        assert i18n.translate(language, msgid).replace("\xa0", " ") in text, f"{language}: {msgid!r} not shown"
    if cents is not None:
        assert printed_money(cents, language) in shown or printed_money(cents, language) in text, \
            f"{language}: {printed_money(cents, language)!r} not shown"
    if language != "en":
        assert not english_left(shown, language), f"{language}: left in English: {english_left(shown, language)}"
        assert not re.search(r"\d\.\d\d EUR", text), f"{language}: an amount in EUR is left"
    return shown


@pytest.fixture(scope="module")
def journal(hall_home: PlayedHall) -> Iterator[Any]:
    engine = open_database(hall_home.url)
    key = load_journal_key(hall_home.home / "keys" / "journal-signing.pem")
    yield engine, key, hall_home.home / "journal.head"
    engine.dispose()


def movements() -> tuple[Movement, ...]:
    reasons = ("credit loaded in cash at desk desk1", "sale:virtual", "prize:bingo",
               "cashed out by cheque 0012345 at desk desk1", "network:stake")
    return tuple(Movement(100 + i, 1_780_000_000_000 + i * 61_000, reasons[i % 5], (-1 if i % 2 else 1) * CARD_PRICE,
                          CARD_PRICE * (1 + i % 2), "carla") for i in range(30))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_ticket_and_the_statement_speak_the_halls_language(language: str) -> None:
    ticket = ticket_pdf(Ticket("607201020601", "ticket", 1_780_000_000_000), hall_name=HALL, timezone=ZONE,
                        language=language)
    shown = check(ticket, language, "Keep this ticket: it is your account.", cents=None)
    assert "6072 0102 0601" in shown and HALL in shown
    opened = i18n.translate(language, "Opened {time}", time=wording(language).moment(1_780_000_000_000, ZONE))
    assert opened in shown, f"{language}: the opening time in the language's short date, 24-hour: {opened!r}"
    statement = statement_pdf(Statement("607201020601", "ticket", 1_780_000_000_000, False, movements(), CARD_PRICE),
                              hall_name=HALL, printed_ms=1_780_000_100_000, timezone=ZONE, language=language)
    shown = check(statement, language, "Movement", "Balance", "Amount", "virtual cards bought")
    assert i18n.translate(language, "cashed out by {method} {reference} at desk {desk}",
                          method=i18n.translate(language, "cheque"), reference="0012345", desk="desk1") in shown
    assert i18n.translate(language, "Balance: {amount}", amount=i18n.money(CARD_PRICE, language)).replace(
        "\xa0", " ") in shown
    if language == "ca":
        keep_png("ticket", ticket)
        keep_png("statement", statement)
    # The movements' times: the language's short date, 24-hour, in the hall's zone (22:26 in Andorra).
    assert any("22:26:40" in text and "2026-05-28" not in text for text in shown)


def test_the_statement_columns_do_not_meet_in_the_longest_language() -> None:
    longest = max(("ca", "es", "fr"), key=lambda lang: sum(len(i18n.translate(lang, m)) for m in (
        "Record", "Time", "Movement", "Amount", "Balance", "cards bought in the game with the partner hall")))
    reasons = ("annex:sale", "credit loaded in cash at desk the desk by the long bar near the door",
               "cashed out by transfer ES12-3456-7890-1234 at desk desk1")
    moved = tuple(Movement(100_000 + i, 1_780_000_000_000 + i * 61_000, reasons[i % 3],
                           (-1 if i % 2 else 1) * 123_456_78, 9_876_543_21, "carla") for i in range(60))
    data = statement_pdf(Statement("607201020601", "ticket", 1_780_000_000_000, False, moved, 9_876_543_21),
                         hall_name=HALL, printed_ms=1_780_000_100_000, timezone=ZONE, language=longest)
    rows: dict[tuple[int, float], list[tuple[float, str, float]]] = {}
    for page, x, y, text, width in placed_strings(data):
        rows.setdefault((page, round(y, 1)), []).append((x, text, width))
    checked = 0
    for line in rows.values():
        line.sort()
        for (x, text, width), (next_x, next_text, _) in zip(line, line[1:]):
            assert x + width + 2 <= next_x, f"{longest}: {text!r} runs into {next_text!r}"
            checked += 1
    assert checked >= 60 * 4, "every movement's five cells were read back"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_sheet_of_paper_cards_speaks_the_halls_language(language: str, tmp_path: Path) -> None:
    path = tmp_path / "cards.pdf"
    card_sheet_pdf(path, set_name="S", series=7, face_value_cents=CARD_PRICE, series_size=6,
                   numbers=list(range(1, 7)), cells=np.asarray(sample_strips(1).reshape(-1, 27)), language=language)
    shown = check(path.read_bytes(), language, cents=None)
    assert i18n.translate(language, "Value {amount}", amount=printed_money(CARD_PRICE, language)) in shown
    assert i18n.translate(language, "Set {set}   Series {series}   Card {number} of {size}", set="S", series=7,
                          number=6, size=6) in shown
    if language == "ca":
        keep_png("cards", path.read_bytes())


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_minutes_of_a_game_a_session_and_a_month_speak_the_halls_language(
        language: str, hall_home: PlayedHall, journal: Any) -> None:
    engine, key, head = journal
    game = publish(engine, key, head, HALL, ZONE, "game", hall_home.played.game_ids[1], "pdf", language)
    check(game.data, language, "Series in play and physical cards sold", "Winning cards at each prize",
          "second series", "Balls drawn in order, with prizes and pots")
    session = publish(engine, key, head, HALL, ZONE, "session", "1", "pdf", language)
    shown = check(session.data, language, "Ball counts and witnesses (R84.2-4)", "Session totals (R83.5)",
                  "Incidents and complaints (R75.4, R75.5, R77.2, R84.3)", "closed")
    date = hall_home.book.session(1).date
    short = i18n.date_time(datetime.datetime.fromisoformat(f"{date}T12:00:00+00:00"), language, ZONE)
    assert any(short.split(" ")[0] in text for text in shown), f"{language}: the session's date in short form"
    if language != "en":
        for term in TERMS[language]:
            assert term.lower() in " ".join(shown).lower(), f"{language}: the regulation's {term!r}"
    month = publish(engine, key, head, HALL, ZONE, "month", date[:7], "pdf", language)
    check(month.data, language, "By series", "Physical cards sold", cents=None)
    # The CSV is the data's: English words, cents.
    csv = publish(engine, key, head, HALL, ZONE, "session", "1", "csv", language).data.decode()
    assert ",state,closed" in csv and "EUR" not in csv and "€" not in csv
    if language == "ca":
        for name, data in (("minutes-game", game.data), ("minutes-session", session.data)):
            keep_png(name, data)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_daily_monthly_and_yearly_reports_speak_the_halls_language(
        language: str, hall_home: PlayedHall, journal: Any) -> None:
    engine, key, head = journal
    records = hall_home.played.records()
    date = hall_home.book.session(1).date
    made = hall_day(records, date, HALL, ZONE, hall_home.book)
    daily = printed_pdf(lambda words: daily_report(made, words), language)
    check(daily, language, "Totals of the day (R83.5)", "Prizes paid against the collection (R88.1)",
          "Every pot's balance: money set aside for prizes, not yet paid (R88.1)", "Cards bought (R95.4 a, c, d)")
    monthly = printed_pdf(lambda words: monthly_report(date[:7], [made], words), language)
    check(monthly, language, "Cards sold in the month (R77.4)", "Every purchase of cards (R77.4)")
    year = int(date[:4])
    _, _, yearly = read_year(engine, key.public_key(), head, year, f"{year}-12-31", HALL, ZONE, language)
    check(yearly, language, "The year's tax (R98, R98.2)", "Tax of the year", cents=None)
    if language == "ca":
        for name, data in (("daily", daily), ("yearly", yearly)):
            keep_png(name, data)


def test_the_embedded_fonts_carry_every_letter_the_catalogs_print() -> None:
    """Each character of the reports catalog's translations (à, ç, l·l, ñ, é, n.º, €...) has a glyph in the
    embedded fonts, so no document shows an empty box."""
    fonts.register()
    used = {ch for lang in LANGUAGES for m in i18n.domain_catalog(lang, "reports") if m.id and isinstance(m.string, str)
            for ch in m.string} | set("€\xa0")
    for face in (fonts.SANS, fonts.SANS_BOLD):
        glyphs = pdfmetrics.getFont(face).face.charToGlyph
        missing = sorted(ch for ch in used if ord(ch) not in glyphs)
        assert not missing, f"{face} has no glyph for {missing}"
    # and an amount in French prints as the figure, its thousands kept apart (no narrow space the fonts lack)
    one = Report("game", "g", "g", JournalRange(1, 1, "a"), (Table("t", "t", (Column("a_cents", "a"),),
                                                                  ((Cents(123456),),)),))
    assert "1 234,56 €" in shown_text(to_pdf(one, wording("fr")))


def keep_png(name: str, data: bytes) -> None:
    """With ``PRINTED_PNG=folder``, the PDF's first pages as PNG (pdftoppm), to look at."""
    folder = os.environ.get("PRINTED_PNG")
    tool = shutil.which("pdftoppm")
    if not folder or tool is None:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    pdf = Path(folder) / f"{name}.pdf"
    pdf.write_bytes(data)
    subprocess.run([tool, "-png", "-r", "70", "-l", "2", str(pdf), str(Path(folder) / name)], check=True)

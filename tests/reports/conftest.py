"""One played hall for the report tests, made once per module (it takes seconds to play).

The journal key sits where the ``bingo`` command looks for it under ``BINGO_HOME``, so
the command-line tests read the same journal as the projection tests.
"""

from __future__ import annotations

import csv
import io

from dataclasses import dataclass
from pathlib import Path

import pytest
from pypdf import PdfReader
from twisted.internet.task import Clock

from hall_server.reports.minutes import MinutesBook, build
from hall_server.store.database import open_database
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from tests.reports.scenario import Played, play


@dataclass
class PlayedHall:
    home: Path
    url: str
    played: Played
    book: MinutesBook


@pytest.fixture(scope="module")
def hall_home(tmp_path_factory: pytest.TempPathFactory) -> PlayedHall:
    home = tmp_path_factory.mktemp("hall")
    url = f"sqlite:///{home / 'hall.sqlite3'}"
    key = load_journal_key(home / "keys" / "journal-signing.pem", create=True)
    journal = Journal(open_database(url), key, head=home / "journal.head")
    clock = Clock()
    clock.advance(1_780_000_000)
    played = play(journal, clock)
    return PlayedHall(home, url, played, build(played.records()))


def csv_tables(data: bytes) -> dict[str, list[dict[str, str]]]:
    """A report's CSV read back into tables of rows (field -> value)."""
    lines = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert lines[0] == ["table", "row", "field", "value"]
    tables: dict[str, list[dict[str, str]]] = {}
    for table, row, field, value in lines[1:]:
        rows = tables.setdefault(table, [])
        if len(rows) < int(row):
            rows.append({})
        rows[int(row) - 1][field] = value
    return tables




def pdf_strings(data: bytes) -> list[str]:
    """The strings a PDF shows, one per text-showing operation, in drawing order.

    The fonts are embedded subsets, so the text is read back through the fonts' own
    character maps (pypdf), as any viewer does, not from the raw page bytes.
    """
    shown: list[str] = []

    def visit(text: str, *_: object) -> None:
        if text.strip():
            shown.append(text.strip())

    for page in PdfReader(io.BytesIO(data)).pages:
        page.extract_text(visitor_text=visit)
    return shown


def pdf_fonts(data: bytes) -> dict[str, bool]:
    """Every font a PDF uses, and whether its glyphs are embedded in the file."""
    reader = PdfReader(io.BytesIO(data))
    found: dict[str, bool] = {}
    for page in reader.pages:
        resources = page.get("/Resources")
        fonts = resources.get_object().get("/Font") if resources is not None else None
        for ref in (fonts.get_object().values() if fonts is not None else ()):
            font = ref.get_object()
            descendants = font.get("/DescendantFonts")
            described = descendants.get_object()[0].get_object() if descendants is not None else font
            descriptor = described.get("/FontDescriptor")
            embedded = descriptor is not None and any(
                key in descriptor.get_object() for key in ("/FontFile", "/FontFile2", "/FontFile3")
            )
            found[str(font.get("/BaseFont"))] = embedded
    return found

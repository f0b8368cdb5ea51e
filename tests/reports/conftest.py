"""One played hall for the report tests, made once per module (it takes seconds to play).

The journal key sits where the ``bingo`` command looks for it under ``BINGO_HOME``, so
the command-line tests read the same journal as the projection tests.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from twisted.internet.task import Clock

from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from hall_server.reports.minutes import MinutesBook, build
from hall_server.store.database import open_database
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


_SHOWN = re.compile(rb"\(((?:\\.|[^\\)])*)\) Tj")
_ESCAPE = re.compile(rb"\\([0-7]{1,3}|.)")


def pdf_strings(data: bytes) -> list[str]:
    """The strings a PDF made with uncompressed pages shows, in drawing order."""

    def unescape(match: re.Match[bytes]) -> bytes:
        code = match[1]
        if code[:1].isdigit():
            return bytes([int(code, 8)])
        return {b"n": b"\n", b"r": b"\r", b"t": b"\t"}.get(code, code)

    return [_ESCAPE.sub(unescape, raw).decode("latin-1") for raw in _SHOWN.findall(data)]

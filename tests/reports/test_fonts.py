"""Every PDF the system makes embeds its fonts, so each viewer shows it as it was signed."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from hall_server.hall.cashier import Statement, Ticket
from hall_server.printing import card_sheet_pdf
from hall_server.statements import statement_pdf, ticket_pdf
from protocol.strips import sample_strips
from server_kit.reports.document import Cents, Column, JournalRange, Report, Table
from server_kit.reports.render import to_pdf
from tests.reports.conftest import pdf_fonts, pdf_strings

ZONE = ZoneInfo("Europe/Madrid")


def assert_all_embedded(data: bytes) -> None:
    fonts = pdf_fonts(data)
    assert fonts, "the PDF names no font"
    assert all(fonts.values()), f"fonts not embedded: {[name for name, embedded in fonts.items() if not embedded]}"


def test_a_report_embeds_its_fonts_and_still_reads_back_with_accents() -> None:
    table = Table("t", "Sala Peñíscola: caja", (Column("who", "Quién"), Column("amount_cents", "Importe")),
                  (("Begoña", Cents(1234)),))
    data = to_pdf(Report("game", "G-1", "Sala Peñíscola - minutes", JournalRange(1, 2, "ab" * 32), (table,)))
    assert_all_embedded(data)
    shown = pdf_strings(data)
    assert "Begoña" in shown and "12.34 EUR" in shown and "Sala Peñíscola - minutes" in shown


def test_a_ticket_and_a_statement_embed_their_fonts() -> None:
    assert_all_embedded(ticket_pdf(Ticket("000123", "ticket", 1_780_000_000_000), hall_name="Sala Ñ", timezone=ZONE))
    statement = Statement("000123", "ticket", 1_780_000_000_000, False, (), 0)
    assert_all_embedded(statement_pdf(statement, hall_name="Sala Ñ", printed_ms=1_780_000_100_000, timezone=ZONE))


def test_printed_card_sheets_embed_their_fonts(tmp_path: Path) -> None:
    cells = sample_strips(1).reshape(-1, 27)
    path = tmp_path / "cards.pdf"
    card_sheet_pdf(path, set_name="S", series=1, face_value_cents=100, series_size=6,
                   numbers=list(range(1, 7)), cells=np.asarray(cells))
    assert_all_embedded(path.read_bytes())

"""The statement's columns never meet: each is as wide as its widest cell, the movement wraps."""

from __future__ import annotations

import io
from zoneinfo import ZoneInfo

from pypdf import PdfReader
from reportlab.pdfbase.pdfmetrics import stringWidth

from hall_server.hall.cashier import Movement, Statement
from hall_server.statements import statement_pdf
from server_kit.reports import fonts

ZONE = ZoneInfo("Europe/Andorra")


def placed_strings(data: bytes) -> list[tuple[int, float, float, str, float]]:
    """Every string shown: (page, x, y, text, width in points), as a viewer places it."""
    shown: list[tuple[int, float, float, str, float]] = []
    for number, page in enumerate(PdfReader(io.BytesIO(data)).pages, 1):
        def visit(text: str, cm: list[float], tm: list[float], font: object, size: float, page: int = number) -> None:
            if text.strip():
                x = cm[0] * tm[4] + cm[2] * tm[5] + cm[4]
                y = cm[1] * tm[4] + cm[3] * tm[5] + cm[5]
                name = str((font or {}).get("/BaseFont", ""))  # type: ignore[attr-defined]
                face = fonts.SANS_BOLD if "Bold" in name else fonts.SANS
                shown.append((page, x, y, text.strip(), stringWidth(text.strip(), face, size * tm[0])))

        page.extract_text(visitor_text=visit)
    return shown


def test_desk_statement_pdf_time_and_movement_columns_do_not_collide() -> None:
    reasons = ("Loaded at desk1", "Stake: 12 cards of series 1001 in game 2026-11-29-s1-g3, terminal terminal-7 by the bar",
               "Prize paid: BINGO on card 1001-17 of game 2026-11-29-s1-g3, shared with three other cards in two halls")
    movements = tuple(
        Movement(100_000 + i, 1_780_000_000_000 + i * 61_000, reasons[i % 3], (-1 if i % 2 else 1) * 123_456_78,
                 9_876_543_21, "carla")
        for i in range(60)
    )
    statement = Statement("607201020601", "ticket", 1_780_000_000_000, False, movements, 9_876_543_21)
    data = statement_pdf(statement, hall_name="Sala Ñ", printed_ms=1_780_000_100_000, timezone=ZONE)
    shown = placed_strings(data)
    assert any(text == reasons[1].split(",")[0] or text.startswith("Stake: 12 cards") for _, _, _, text, _ in shown)
    words = " ".join(text for _, _, _, text, _ in shown)
    assert "terminal-7 by the bar" in words and "two halls" in words, "the movement is wrapped, not cut"
    rows: dict[tuple[int, float], list[tuple[float, str, float]]] = {}
    for page, x, y, text, width in shown:
        rows.setdefault((page, round(y, 1)), []).append((x, text, width))
    checked = 0
    for line in rows.values():
        line.sort()
        for (x, text, width), (next_x, next_text, _) in zip(line, line[1:]):
            assert x + width + 2 <= next_x, f"{text!r} runs into {next_text!r}"
            checked += 1
    assert checked >= 60 * 4, "every movement's five cells were read back"
    assert max(page for page, *_ in shown) >= 2, "the movements run onto a second page"

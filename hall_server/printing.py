"""Printable sheets of physical cards (R82.1) with reportlab.

Every card on a sheet shows what R82.1 asks of a physical card: its set, series,
card number, face value and the number of cards in its series.  Six cards a page,
each a 3 x 9 grid, in card-number order, in the hall's language
(:mod:`hall_server.reports.printed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from protocol.cards import COLUMNS, ROWS
from hall_server.reports.printed import wording
from server_kit.reports import fonts

fonts.register()

CARDS_PER_PAGE = 6


def card_sheet_pdf(
    path: Path,
    *,
    set_name: str,
    series: int,
    face_value_cents: int,
    series_size: int,
    numbers: Sequence[int],
    cells: np.ndarray,
    language: str = "en",
) -> int:
    """Write cards ``numbers`` (with their ``cells``) to a PDF; returns the page count."""
    words = wording(language)
    t = words.t
    canvas = Canvas(str(path), pagesize=A4, pageCompression=0)
    canvas.setTitle(t("Card set {set}, series {series}", set=set_name, series=series))
    width, height = A4
    margin = 15 * mm
    header, min_gap = 9 * mm, 6 * mm
    usable = height - 2 * margin - CARDS_PER_PAGE * header - (CARDS_PER_PAGE - 1) * min_gap
    cell = min((width - 2 * margin) / COLUMNS, usable / (CARDS_PER_PAGE * ROWS))
    left = (width - COLUMNS * cell) / 2
    card_height = ROWS * cell + header
    gap = (height - 2 * margin - CARDS_PER_PAGE * card_height) / (CARDS_PER_PAGE - 1)
    pages = 0
    for start in range(0, len(numbers), CARDS_PER_PAGE):
        pages += 1
        for slot, (number, card) in enumerate(
            zip(numbers[start : start + CARDS_PER_PAGE], cells[start : start + CARDS_PER_PAGE])
        ):
            top = height - margin - slot * (card_height + gap)
            canvas.setFont(fonts.SANS_BOLD, 8)
            canvas.drawString(
                left,
                top - 5 * mm,
                t("Set {set}   Series {series}   Card {number} of {size}", set=set_name, series=series,
                  number=number, size=series_size),
            )
            canvas.drawRightString(
                left + COLUMNS * cell, top - 5 * mm, t("Value {amount}", amount=words.money(face_value_cents))
            )
            grid_top = top - 8 * mm
            canvas.setFont(fonts.SANS_BOLD, 15)
            for r in range(ROWS):
                for c in range(COLUMNS):
                    x, y = left + c * cell, grid_top - (r + 1) * cell
                    value = int(card[r * COLUMNS + c])
                    if value:
                        canvas.rect(x, y, cell, cell)
                        canvas.drawCentredString(x + cell / 2, y + cell / 2 - 5, str(value))
                    else:
                        canvas.setFillGray(0.85)
                        canvas.rect(x, y, cell, cell, fill=1)
                        canvas.setFillGray(0)
        canvas.showPage()
    canvas.save()
    return pages

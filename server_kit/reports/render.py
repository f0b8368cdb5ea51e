"""A :class:`~server_kit.reports.document.Report` written as CSV, PDF and JSON, in bytes.

**CSV** (UTF-8, one header line): ``table,row,field,value``.  Every cell of every
table is one line, so the file has one shape whatever the report; amounts are integer
cents in fields ending with ``_cents``; a missing value is empty.  A spreadsheet
pivots it back into tables.  Text that a spreadsheet would take for a formula (it
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return: a name typed at a
desk, a name of the banned list) is written after an apostrophe, so it opens as text.

**PDF** (reportlab, A4 landscape): the same tables with their titles, amounts
formatted for reading, in the reader's :class:`~server_kit.reports.document.Wording`
(the report given is laid out in it already; the wording gives the money and the
page's own words).  Pages are uncompressed and the document *invariant* (no
creation time, fixed identifier), so the same report gives the same bytes: a report
made again later from the same journal records can be compared byte for byte.  The
journal range is also in the document's subject (``journal-range FIRST LAST HASH``)
for ``bingo minutes verify``.

**JSON** (UTF-8, ``"format": "bingo-report/1"``): the report's kind, subject, title
and journal range, then each table by its key with its title and its rows, a row an
object of field to value; amounts are integer cents in fields ending with ``_cents``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import KeepTogether, Paragraph, SimpleDocTemplate, Spacer
from reportlab.platypus import Table as PdfTable
from reportlab.platypus import TableStyle

from server_kit.reports import fonts
from server_kit.reports.document import DATA, Cell, Cents, Report, Table, Wording

CSV_HEADER = ("table", "row", "field", "value")
PAGE = landscape(A4)
MARGIN = 12 * mm
fonts.register()
FONT, BOLD, SIZE = fonts.SANS, fonts.SANS_BOLD, 7.5
PADDING = 3


#: What a spreadsheet takes for the start of a formula (or of a cell it would re-read as one):
#: a text cell beginning with one of them is written with a leading apostrophe.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_text(cell: Cell) -> str:
    """A cell as the CSV holds it: numbers as they are, text that a spreadsheet would run as a
    formula (``=HYPERLINK(...)``, ``@SUM(...)``) neutralised with a leading ``'``, shown as text."""
    if cell is None:
        return ""
    if isinstance(cell, Cents):
        return str(cell.value)
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return "'" + cell
    return str(cell)


def to_csv(report: Report) -> bytes:
    """The report as CSV: one ``table,row,field,value`` line per cell."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for table in report.tables:
        for number, row in enumerate(table.rows, start=1):
            for column, cell in zip(table.columns, row):
                writer.writerow((table.key, number, column.key, csv_text(cell)))
    return out.getvalue().encode("utf-8")


JSON_FORMAT = "bingo-report/1"


def _json_value(cell: Cell) -> str | int | None:
    return cell.value if isinstance(cell, Cents) else cell


def to_json(report: Report) -> bytes:
    """The report as JSON: its journal range, then every table's rows as objects."""
    span = report.journal_range
    document = {
        "format": JSON_FORMAT,
        "kind": report.kind,
        "subject": report.subject,
        "title": report.title,
        "journal": {"first_seq": span.first_seq, "last_seq": span.last_seq, "last_hash": span.last_hash},
        "tables": {
            table.key: {
                "title": table.title,
                "rows": [
                    {column.key: _json_value(cell) for column, cell in zip(table.columns, row)} for row in table.rows
                ],
            }
            for table in report.tables
        },
    }
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def pdf_text(cell: Cell, wording: Wording = DATA) -> str:
    if cell is None:
        return "-"
    if isinstance(cell, Cents):
        return wording.money(cell.value)
    return str(cell)


_STYLES = fonts.style_sheet()
_CELL = ParagraphStyle("cell", fontName=FONT, fontSize=SIZE, leading=SIZE * 1.2)
_HEAD = ParagraphStyle("head", parent=_CELL, fontName=BOLD)
_TITLE = ParagraphStyle("title", parent=_STYLES["Title"], fontSize=14, alignment=0)
_HEADING = ParagraphStyle("heading", parent=_STYLES["Heading3"], fontSize=10, spaceBefore=8, spaceAfter=3)
_NOTE = ParagraphStyle("note", parent=_CELL, textColor=colors.grey)


def _widths(texts: list[list[str]], available: float) -> list[float]:
    """Column widths: each its natural width, the widest shrunk to fit the page."""
    columns = list(zip(*texts))
    natural = [max(stringWidth(t, BOLD, SIZE) for t in column) + 2 * PADDING for column in columns]
    if sum(natural) <= available:
        return natural
    fair = available / len(natural)
    narrow = sum(w for w in natural if w <= fair)
    wide = sum(w for w in natural if w > fair)
    scale = (available - narrow) / wide
    return [w if w <= fair else w * scale for w in natural]


def _cell(text: str, width: float, style: ParagraphStyle) -> Any:
    """Plain text when it fits (one string in the page), else a wrapping paragraph."""
    if style is _CELL and stringWidth(text, FONT, SIZE) + 2 * PADDING <= width:
        return text
    return Paragraph(escape(text), style)


def _flowables(table: Table, available: float, wording: Wording) -> list[Any]:
    heading = Paragraph(escape(table.title), _HEADING)
    if table.vertical:
        (row,) = table.rows
        texts = [[c.title, pdf_text(v, wording)] for c, v in zip(table.columns, row)]
    elif not table.rows:
        return [KeepTogether([heading, Paragraph(escape(wording.t("None.")), _NOTE)])]
    else:
        texts = [[c.title for c in table.columns], *([pdf_text(v, wording) for v in row] for row in table.rows)]
    widths = _widths(texts, available)
    cells = [
        [_cell(text, width, _HEAD if (i == 0 and not table.vertical) or (j == 0 and table.vertical) else _CELL)
         for j, (text, width) in enumerate(zip(line, widths))]
        for i, line in enumerate(texts)
    ]
    # A row may split across pages: a complaint may be longer than a page is tall.
    grid = PdfTable(cells, colWidths=widths, repeatRows=0 if table.vertical else 1, hAlign="LEFT", splitInRow=1)
    grid.setStyle(
        TableStyle(
            [
                ("FONT", (0, 0), (-1, -1), FONT, SIZE),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
                ("LEFTPADDING", (0, 0), (-1, -1), PADDING),
                ("RIGHTPADDING", (0, 0), (-1, -1), PADDING),
                ("TOPPADDING", (0, 0), (-1, -1), 1),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
                ("BACKGROUND", (0, 0), (-1, 0) if not table.vertical else (0, -1), colors.whitesmoke),
            ]
        )
    )
    return [heading, grid]


def to_pdf(report: Report, wording: Wording = DATA) -> bytes:
    """The report as a PDF: its title, then each table with its title; amounts and the page's words in
    ``wording`` (``report`` is laid out in it)."""
    out = io.BytesIO()
    span = report.journal_range
    footer = wording.t("{title} - journal records {first} to {last}", title=report.title, first=span.first_seq,
                       last=span.last_seq)
    document = SimpleDocTemplate(
        out,
        pagesize=PAGE,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN,
        title=report.title,
        subject=f"journal-range {span.first_seq} {span.last_seq} {span.last_hash}",
        author="",
        creator="bingo",  # the command that wrote it: minutes, reports, statements alike
        pageCompression=0,
        invariant=1,
    )

    def on_page(canvas: Canvas, doc: SimpleDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont(FONT, 7)
        canvas.drawString(MARGIN, MARGIN / 2, footer)
        canvas.drawRightString(PAGE[0] - MARGIN, MARGIN / 2, wording.t("page {page}", page=doc.page))
        canvas.restoreState()

    available = PAGE[0] - 2 * MARGIN
    story: list[Any] = [Paragraph(escape(report.title), _TITLE), Spacer(1, 2 * mm)]
    for table in report.tables:
        story += _flowables(table, available, wording)
    document.build(story, onFirstPage=on_page, onLaterPages=on_page)
    return out.getvalue()

"""Printable player tickets and account statements (R93.7) with reportlab.

Both are rendered from the cashier's state (a projection of the journal), never
inside a decision, and returned as PDF bytes for the edge to send to a printer or a
browser.  Pages are written uncompressed, so their text can be searched as is.  They
speak the hall's language (:mod:`hall_server.reports.printed`): its words, its money
(``1.234,56 €``), its short dates and 24-hour times in the hall's zone; a movement's
reason, journaled in English, is printed in the language when it is one the hall writes
(:data:`hall_server.reports.printed.PHRASES`), as written otherwise.
"""

from __future__ import annotations

import io
from datetime import tzinfo
from typing import TYPE_CHECKING

from reportlab.graphics import renderPDF
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.shapes import Drawing
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from hall_server.reports.printed import wording
from server_kit.reports import fonts

fonts.register()

if TYPE_CHECKING:  # the cashier renders through this module, so only types come back
    from hall_server.hall.cashier import Statement, Ticket

#: A ticket printer's roll: 80 mm wide.
TICKET_SIZE = (80 * mm, 110 * mm)
QR_SIZE = 45 * mm
ROW_HEIGHT = 5.5 * mm


def format_account_number(number: str) -> str:
    """``123456789012`` -> ``1234 5678 9012``, as printed and read aloud."""
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


def ticket_qr(number: str) -> QrCodeWidget:
    """The QR code a terminal or the cashier scans: the bare account number."""
    return QrCodeWidget(number, barLevel="M")


def ticket_pdf(ticket: "Ticket", *, hall_name: str, timezone: tzinfo, language: str = "en") -> bytes:
    """One ticket: the hall, the account number as text and as a QR code, the opening time."""
    words = wording(language)
    t = words.t
    medium = t(ticket.medium)
    out = io.BytesIO()
    width, height = TICKET_SIZE
    canvas = Canvas(out, pagesize=TICKET_SIZE, pageCompression=0, invariant=True)
    canvas.setTitle(t("Player {medium} {number}", medium=medium, number=ticket.number))
    canvas.setFont(fonts.SANS_BOLD, 11)
    canvas.drawCentredString(width / 2, height - 10 * mm, hall_name)
    canvas.setFont(fonts.SANS, 9)
    canvas.drawCentredString(width / 2, height - 16 * mm, t("Player {medium}", medium=medium))
    widget = ticket_qr(ticket.number)
    x0, y0, x1, y1 = widget.getBounds()
    drawing = Drawing(QR_SIZE, QR_SIZE, transform=[QR_SIZE / (x1 - x0), 0, 0, QR_SIZE / (y1 - y0), 0, 0])
    drawing.add(widget)
    renderPDF.draw(drawing, canvas, (width - QR_SIZE) / 2, height - 20 * mm - QR_SIZE)
    canvas.setFont(fonts.SANS_BOLD, 14)
    canvas.drawCentredString(width / 2, height - 28 * mm - QR_SIZE, format_account_number(ticket.number))
    canvas.setFont(fonts.SANS, 7)
    lines = (
        t("Opened {time}", time=words.moment(ticket.opened_ms, timezone)),
        t("Keep this ticket: it is your account."),
        t("Your PIN opens it on the terminals; never write it here."),
        t("Cash out your credit at the cashier before you leave."),
    )
    for i, line in enumerate(lines):
        canvas.drawCentredString(width / 2, height - 36 * mm - QR_SIZE - i * 4 * mm, line)
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def statement_pdf(statement: "Statement", *, hall_name: str, printed_ms: int, timezone: tzinfo,
                  language: str = "en") -> bytes:
    """Every movement of an account with its journal record, time and running balance."""
    words = wording(language)
    t, money = words.t, words.money
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4, pageCompression=0, invariant=True)
    number = format_account_number(statement.number)
    canvas.setTitle(t("Statement of account {number}", number=number))
    width, height = A4
    margin = 15 * mm
    size = 9
    gap = 4 * mm

    def wide(texts: list[str]) -> float:
        return max(stringWidth(text, fonts.SANS, size) for text in texts)

    rows = [
        (str(m.seq), words.moment(m.time_ms, timezone), words.t(m.reason), money(m.amount),
         money(m.balance))
        for m in statement.movements
    ]
    # Each column as wide as its widest cell or title, so that no two ever meet; the
    # movement takes the room left between the time and the amounts, and wraps in it.
    headers = (t("Record"), t("Time"), t("Movement"), t("Amount"), t("Balance"))
    measured = [wide([row[i] for row in rows] + [""]) for i in range(5)]
    widths = [max(measured[i], stringWidth(title, fonts.SANS_BOLD, size)) for i, title in enumerate(headers)]
    record_x = margin
    time_x = record_x + widths[0] + gap
    movement_x = time_x + widths[1] + gap
    balance_right = width - margin
    amount_right = balance_right - widths[4] - gap
    movement_width = amount_right - widths[3] - gap - movement_x
    columns = (  # (x, header, right-aligned)
        (record_x, headers[0], False),
        (time_x, headers[1], False),
        (movement_x, headers[2], False),
        (amount_right, headers[3], True),
        (balance_right, headers[4], True),
    )

    def header(page: int) -> float:
        canvas.setFont(fonts.SANS_BOLD, 13)
        canvas.drawString(margin, height - margin, t("{hall} - statement of account {number}", hall=hall_name,
                                                      number=number))
        canvas.setFont(fonts.SANS, size)
        state = t("closed") if statement.closed else t("open")
        canvas.drawString(
            margin, height - margin - 6 * mm,
            t("Player {medium}, opened {opened}, {state}. Printed {printed}. Page {page}.",
              medium=t(statement.medium), opened=words.moment(statement.opened_ms, timezone), state=state,
              printed=words.moment(printed_ms, timezone), page=page),
        )
        y = height - margin - 15 * mm
        canvas.setFont(fonts.SANS_BOLD, size)
        for x, title, right in columns:
            (canvas.drawRightString if right else canvas.drawString)(x, y, title)
        canvas.line(margin, y - 1.5 * mm, width - margin, y - 1.5 * mm)
        canvas.setFont(fonts.SANS, size)
        return y - ROW_HEIGHT

    page = 1
    y = header(page)
    credited = debited = 0
    line_height = 4 * mm
    for movement, cells in zip(statement.movements, rows):
        reason = simpleSplit(cells[2], fonts.SANS, size, movement_width) or [""]
        if y - (len(reason) - 1) * line_height < margin + 3 * ROW_HEIGHT:
            canvas.showPage()
            page += 1
            y = header(page)
        if movement.amount > 0:
            credited += movement.amount
        else:
            debited -= movement.amount
        for column, ((x, _, right), text) in enumerate(zip(columns, cells)):
            if column == 2:
                for i, line in enumerate(reason):
                    canvas.drawString(x, y - i * line_height, line)
            else:
                (canvas.drawRightString if right else canvas.drawString)(x, y, text)
        y -= ROW_HEIGHT + (len(reason) - 1) * line_height
    if not statement.movements:
        canvas.drawString(margin, y, t("No movements."))
        y -= ROW_HEIGHT
    canvas.line(margin, y + 3 * mm, width - margin, y + 3 * mm)
    canvas.setFont(fonts.SANS_BOLD, 9)
    # The totals left to right, each after the one before; the balance at the right, on a
    # line of its own when they leave it no room.
    x = margin
    for offset, text in ((0, t("Movements: {count}", count=len(statement.movements))),
                         (40 * mm, t("Credited: {amount}", amount=money(credited))),
                         (90 * mm, t("Debited: {amount}", amount=money(debited)))):
        x = max(x, margin + offset)
        canvas.drawString(x, y - 2 * mm, text)
        x += stringWidth(text, fonts.SANS_BOLD, size) + gap
    balance = t("Balance: {amount}", amount=money(statement.balance))
    balance_y = y - 2 * mm if x + stringWidth(balance, fonts.SANS_BOLD, size) <= width - margin else y - 2 * mm - ROW_HEIGHT
    canvas.drawRightString(width - margin, balance_y, balance)
    canvas.showPage()
    canvas.save()
    return out.getvalue()

"""Making a signed report from the journal: what ``bingo minutes`` and the console share.

Both read the whole journal, refuse it unless it verifies (a report signed over an
altered journal would vouch for forged facts), fold it into the minutes book, lay out
the report asked for and render it as PDF or CSV with a detached Ed25519 signature
made with the journal key.  Only where the bytes go differs: files in a folder for
the command line, HTTP answers for the console.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy import Engine

from hall_server.reports.layout import game_report, joint_report, month_report, session_report
from hall_server.reports.minutes import MinutesBook, build
from server_kit.journal.sql import verified_records
from hall_server.reports.printed import wording
from server_kit.reports.document import DATA, Report, ReportError, Wording
from server_kit.reports.render import to_csv, to_pdf
from server_kit.reports.signing import SIGNATURE_SUFFIX, sign

KINDS = ("game", "session", "month")
FORMATS = {"pdf": "application/pdf", "csv": "text/csv; charset=utf-8"}


@dataclass(frozen=True)
class SignedFile:
    """One rendering of a report with its detached signature (raw 64 bytes)."""

    report: Report
    file_name: str  # e.g. minutes-session-1.pdf; the signature is file_name + ".sig"
    media_type: str
    data: bytes
    signature: bytes

    @property
    def signature_name(self) -> str:
        return self.file_name + SIGNATURE_SUFFIX


def read_book(engine: Engine, public_key: Ed25519PublicKey, head: Path) -> MinutesBook:
    """The minutes book of the whole journal, once the journal verifies.

    The head file is read before the records: a server may commit while the report
    is made, and the table may run past the head, never fall behind it.
    """
    return build(verified_records(engine, public_key, head))


def make_report(book: MinutesBook, kind: str, subject: str, hall_name: str, timezone: tzinfo,
                wording: Wording = DATA) -> Report:
    """The report of ``kind`` on ``subject``: a game id, a session number or a month, in ``wording``.

    Times are shown in the hall's ``timezone`` (``[hall] timezone``), which the report names.
    """
    if kind == "game":
        joint = book.joint_game(subject)
        if joint is not None:  # a game played with the partner hall (R3.5.b)
            return joint_report(joint, hall_name=hall_name, timezone=timezone, wording=wording)
        return game_report(book.game(subject), hall_name=hall_name, timezone=timezone, wording=wording)
    if kind == "session":
        if not subject.isdigit():
            raise ReportError(f"a session is named by its number, not {subject!r}")
        return session_report(book.session(int(subject)), hall_name=hall_name, timezone=timezone, wording=wording)
    if kind == "month":
        return month_report(book.month(subject), hall_name=hall_name, timezone=timezone, wording=wording)
    raise ReportError(f"the reports are {', '.join(KINDS)}, not {kind!r}")


def render_signed(report: Report, file_format: str, key: Ed25519PrivateKey, wording: Wording = DATA) -> SignedFile:
    """``report`` rendered as ``pdf`` or ``csv`` and signed with the journal key; a PDF's ``report`` is laid out in
    ``wording``, a CSV's in the data's."""
    if file_format == "pdf":
        data = to_pdf(report, wording)
    elif file_format == "csv":
        data = to_csv(report)
    else:
        raise ReportError(f"a report is written as {' or '.join(FORMATS)}, not {file_format!r}")
    return SignedFile(report, f"{report.file_stem}.{file_format}", FORMATS[file_format], data, sign(key, data))


def publish(
    engine: Engine, key: Ed25519PrivateKey, head: Path, hall_name: str, timezone: tzinfo,
    kind: str, subject: str, file_format: str, language: str = "en",
) -> SignedFile:
    """Read and verify the journal, then make one signed rendering of one report: the PDF in the hall's
    ``language``, the CSV in the data's words."""
    book = read_book(engine, key.public_key(), head)
    words = wording(language) if file_format == "pdf" else DATA
    return render_signed(make_report(book, kind, subject, hall_name, timezone, words), file_format, key, words)

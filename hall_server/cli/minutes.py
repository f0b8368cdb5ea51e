"""``bingo minutes``: the minutes book and the reports, made from the journal on request.

Each report is made from the whole journal at the moment it is asked for, so it is
always up to date (R77.3), and only from a journal that verifies: a report signed over
an altered journal would vouch for forged facts.  It is written as PDF and CSV, each
with a detached Ed25519 signature (``.sig``) made with the journal key, beside the
journal's public key (``hall-journal.pub.pem``) for ``openssl pkeyutl -verify``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from hall_server.cli.context import Hall

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PUBLIC_KEY_FILE = "hall-journal.pub.pem"

pass_hall = click.make_pass_decorator(Hall, ensure=True)
out_option = click.option(
    "--out", "folder", type=click.Path(file_okay=False, path_type=Path), required=True,
    help="Folder to write the PDF, the CSV, their signatures and the public key into.",
)


def _publish(hall: Hall, folder: Path, kind: str, subject: str) -> None:
    from hall_server.reports.printed import wording
    from hall_server.reports.publish import make_report, read_book, render_signed
    from server_kit.keys import public_pem
    from server_kit.reports.signing import SIGNATURE_SUFFIX

    key = hall.journal_key()
    book = read_book(hall.engine, key.public_key(), hall.head_path)
    report = make_report(book, kind, subject, hall.hall_name(), hall.timezone())
    words = wording(hall.language())
    printed = make_report(book, kind, subject, hall.hall_name(), hall.timezone(), words)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file_format in ("pdf", "csv"):
        signed = (render_signed(printed, file_format, key, words) if file_format == "pdf"
                  else render_signed(report, file_format, key))
        path = folder / signed.file_name
        path.write_bytes(signed.data)
        (folder / signed.signature_name).write_bytes(signed.signature)
        written.append(path)
    (folder / PUBLIC_KEY_FILE).write_bytes(public_pem(key))
    span = report.journal_range
    click.echo(f"{report.title}: journal records {span.first_seq} to {span.last_seq}, last hash {span.last_hash}")
    for path in written:
        click.echo(f"  {path} (signature {path.name}{SIGNATURE_SUFFIX})")
    click.echo(
        f"verify: openssl pkeyutl -verify -pubin -inkey {folder / PUBLIC_KEY_FILE} -rawin "
        f"-in {written[0]} -sigfile {written[0]}{SIGNATURE_SUFFIX}"
    )


@click.group()
def minutes() -> None:
    """The minutes book (R77, R83.3-5): signed PDF and CSV reports from the journal."""


@minutes.command("game")
@click.argument("game_id")
@out_option
@pass_hall
def game_command(hall: Hall, game_id: str, folder: Path) -> None:
    """The minutes of game GAME_ID (e.g. 2026-12-01-s1-g2): sales, balls, prizes, pots."""
    _publish(hall, folder, "game", game_id)


@minutes.command("session")
@click.argument("number", type=int)
@out_option
@pass_hall
def session_command(hall: Hall, number: int, folder: Path) -> None:
    """The minutes of session NUMBER: opening, every game, incidents, closing, daily summary."""
    _publish(hall, folder, "session", str(number))


@minutes.command("month")
@click.argument("month", metavar="YYYY-MM")
@out_option
@pass_hall
def month_command(hall: Hall, month: str, folder: Path) -> None:
    """The physical and virtual cards sold in a month, for the regulator (R77.4)."""
    _publish(hall, folder, "month", month)


def _public_key(hall: Hall, path: Path | None) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from server_kit.reports.document import ReportError

    if path is None:
        return hall.journal_key().public_key()
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except ValueError:
        raise ReportError(f"{path} is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ReportError(f"{path} is not an Ed25519 public key")
    return key


@minutes.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--public-key", "public_key", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Check with this PEM public key only (an inspector's copy); "
                   "by default the hall's journal key, and the report's range against the journal.")
@pass_hall
def verify_command(hall: Hall, file: Path, public_key: Path | None) -> None:
    """Check FILE against FILE.sig, and the journal records it names."""
    from server_kit.journal import table
    from server_kit.reports.document import ReportError
    from server_kit.reports.signing import SIGNATURE_SUFFIX, journal_range_of, verify

    data = file.read_bytes()
    signature_path = file.with_name(file.name + SIGNATURE_SUFFIX)
    if not signature_path.exists():
        raise ReportError(f"{file} has no signature: {signature_path} is missing")
    verify(_public_key(hall, public_key), data, signature_path.read_bytes(), str(file))
    span = journal_range_of(data)
    if public_key is not None or span is None:
        click.echo(f"{file}: signature verified")
        return
    record = next(table.read(hall.engine, after=span.last_seq - 1, batch=1), None)
    if record is None or record.seq != span.last_seq:
        raise ReportError(f"{file} names journal record {span.last_seq}, which this journal does not hold")
    if record.hash != span.last_hash:
        raise ReportError(
            f"{file} names journal record {span.last_seq} with another hash than this journal's: "
            "it was made from a different journal"
        )
    click.echo(
        f"{file}: signature verified; made from journal records {span.first_seq} to {span.last_seq}, "
        f"and this journal's record {span.last_seq} has the hash it names"
    )

"""``bingo report daily``, ``monthly`` and ``yearly``: the signed reports to the regulator.

``daily`` is the daily report (R95.4 a-f, R83.5); ``monthly`` the monthly list of
physical and virtual cards sold (R77.4) with the month's beneficiaries of 15,000 EUR or
more (R75.6), written the same way as ``cards-sold.json``, ``.csv`` and ``.pdf``;
``yearly`` the tax year's base and tax (R98.2) as ``tax-year.json``, ``.csv`` and ``.pdf``,
on a hall's folder and on a central server's (``bingo central yearly-report``).

``bingo report daily --day YYYY-MM-DD --out DIR`` writes ``report.json``,
``report.csv`` and ``report.pdf`` into DIR, each with its detached CMS signature
(``.p7s``, DER) by the server's report-signing certificate (``keys/report-signing.pem``
in its folder, issued with ``bingo pki issue report-signing``), and exits 0.  A
refusal - a malformed or future day, no report-signing certificate, a journal that
does not verify - prints one line on stderr, writes nothing and exits 2.

On a hall's folder the report holds the hall's games of the day; on a central
server's folder (its ``central.toml``, and no ``hall.toml``), the interconnected games,
made by ``bingo central daily-report`` as ``bingo audit export`` does.
``docs/reports.md`` says what each file holds and how to check it with ``openssl``.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import click

from hall_server.cli.audit import CENTRAL_CONFIG, central_command
from hall_server.cli.context import Hall
from protocol.errors import DomainError

REFUSED = 2

pass_hall = click.make_pass_decorator(Hall, ensure=True)


def on_the_central_server(ctx: click.Context, hall: Hall, name: str, **arguments: object) -> bool:
    """In a central server's folder: ``bingo central NAME`` carried out with ``arguments``; whether it was."""
    central = central_command(ctx, hall, name)
    if central is None:
        return False
    command, central_config = central
    ctx.invoke(command, **arguments, config_path=central_config)
    return True


@click.group()
def report() -> None:
    """Reports to the regulator, signed with the server's report-signing certificate."""


@report.command("daily")
@click.option("--day", required=True, metavar="YYYY-MM-DD", help="The day to report (today or before).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write report.json, report.csv, report.pdf and their .p7s signatures into.")
@pass_hall
@click.pass_context
def daily(ctx: click.Context, hall: Hall, day: str, out: Path) -> None:
    """Write the day's report as JSON, CSV and PDF, each with a detached CMS signature (.p7s)."""
    from hall_server.reports.daily_files import read_day
    from hall_server.reports.printed import printed_pdf
    from server_kit.audit_folder import one_line
    from server_kit.reports.cms import ReportSigner, write_signed
    from server_kit.reports.daily import checked_day, daily_report, written_lines

    try:
        if on_the_central_server(ctx, hall, "daily-report", day=day, out=out):
            return
        timezone = hall.timezone()
        day = checked_day(day, datetime.datetime.now(timezone).date())
        signer = ReportSigner.of_server(hall.home)
        made = read_day(hall.engine, hall.journal_key().public_key(), hall.head_path, day, hall.hall_name(), timezone)
        written = write_signed(daily_report(made), out, signer,
                               printed_pdf(lambda words: daily_report(made, words), hall.language()))
    except (DomainError, OSError) as error:
        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    for line in written_lines(made, written):
        click.echo(line)


@report.command("monthly")
@click.option("--month", required=True, metavar="YYYY-MM", help="The month to list (this month or before).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write cards-sold.json, .csv, .pdf and their .p7s signatures into.")
@pass_hall
def monthly(hall: Hall, month: str, out: Path) -> None:
    """Write the month's list of cards sold (R77.4) and its large wins (R75.6), each file with a .p7s signature."""
    from hall_server.reports.daily_files import read_month
    from hall_server.reports.printed import printed_pdf
    from server_kit.audit_folder import one_line
    from server_kit.reports.cms import ReportSigner, write_signed
    from server_kit.reports.document import ReportError
    from server_kit.reports.monthly import checked_month, month_days, monthly_report

    try:
        if not hall.config_path.exists() and (hall.home / CENTRAL_CONFIG).exists():
            raise ReportError("the monthly list of cards sold is a hall's (R77.4): run it on a hall's folder")
        timezone = hall.timezone()
        today = datetime.datetime.now(timezone).date()
        month = checked_month(month, today)
        signer = ReportSigner.of_server(hall.home)
        days = read_month(hall.engine, hall.journal_key().public_key(), hall.head_path, month_days(month, today),
                          hall.hall_name(), timezone)
        written = write_signed(monthly_report(month, days), out, signer,
                               printed_pdf(lambda words: monthly_report(month, days, words), hall.language()))
    except (DomainError, OSError) as error:
        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    cards = sum(c.count for d in days for c in d.cards if not c.refunded)
    large = sum(len(d.large_wins()) for d in days)
    click.echo(f"cards sold in {month}: {cards} card(s), {large} beneficiary(ies) of 15,000 EUR or more, "
               f"up to journal record {days[-1].last_seq}")
    for path in written:
        click.echo(f"  {path} (signature {path.name}.p7s)")


@report.command("yearly")
@click.option("--year", required=True, metavar="YYYY", help="The fiscal year (this year: to date).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write tax-year.json, .csv, .pdf and their .p7s signatures into.")
@pass_hall
@click.pass_context
def yearly(ctx: click.Context, hall: Hall, year: str, out: Path) -> None:
    """Write the tax year's base and tax (R98.2), each file with a detached CMS signature (.p7s)."""
    from hall_server.reports.daily_files import read_year
    from server_kit.audit_folder import one_line
    from server_kit.reports.cms import ReportSigner, write_signed
    from server_kit.reports.yearly import checked_year, written_lines

    try:
        if on_the_central_server(ctx, hall, "yearly-report", year=year, out=out):
            return
        timezone = hall.timezone()
        number, through = checked_year(year, datetime.datetime.now(timezone).date())
        signer = ReportSigner.of_server(hall.home)
        made, laid_out, pdf = read_year(hall.engine, hall.journal_key().public_key(), hall.head_path, number,
                                        through, hall.hall_name(), timezone, hall.language())
        written = write_signed(laid_out, out, signer, pdf)
    except (DomainError, OSError) as error:
        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    for line in written_lines(made, laid_out, written):
        click.echo(line)

"""``bingo report daily``: the signed daily report to the regulator (R95.4 a-f, R83.5).

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

from hall_server.cli.audit import central_command
from hall_server.cli.context import Hall
from hall_server.reports.daily_files import read_day
from protocol.errors import DomainError
from server_kit.audit_folder import one_line
from server_kit.reports.cms import ReportSigner, write_signed
from server_kit.reports.daily import checked_day, daily_report, written_lines

REFUSED = 2

pass_hall = click.make_pass_decorator(Hall, ensure=True)


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
    try:
        central = central_command(ctx, hall, "daily-report")
        if central is not None:
            command, central_config = central
            ctx.invoke(command, day=day, out=out, config_path=central_config)
            return
        timezone = hall.timezone()
        day = checked_day(day, datetime.datetime.now(timezone).date())
        signer = ReportSigner.of_server(hall.home)
        made = read_day(hall.engine, hall.journal_key().public_key(), hall.head_path, day, hall.hall_name(), timezone)
        written = write_signed(daily_report(made), out, signer)
    except (DomainError, OSError) as error:
        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    for line in written_lines(made, written):
        click.echo(line)

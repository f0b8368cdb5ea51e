"""``bingo audit export``: what an inspector needs to recompute a day (FORMATS.md section 3).

``bingo audit export --day YYYY-MM-DD --out DIR`` writes ``DIR/scenario.json``,
``DIR/result.json``, ``DIR/journal.jsonl`` and ``DIR/public-key.pem`` and exits 0.  A
refusal - an unknown day, a ``DIR`` that holds anything, a game the replay format
cannot express, a journal that does not verify - prints one line on stderr, writes
nothing and exits 2.  ``docs/audit.md`` says what each file holds.

``bingo audit verify DIR`` checks such a folder, a hall's or a central server's, with
nothing but its four files (:mod:`server_kit.audit_verify`).

A ``$BINGO_HOME`` that is a central server's folder (its ``central.toml``, and no
``hall.toml``) is exported by the central server's own command, ``bingo central
audit-export``: found on the ``bingo`` command, where the ``bingo.commands`` entry
point put it, never imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hall_server.cli.context import Hall
from protocol.errors import DomainError

REFUSED = 2
#: The configuration file that makes a folder a central server's (docs/central-server.md).
CENTRAL_CONFIG = "central.toml"

pass_hall = click.make_pass_decorator(Hall, ensure=True)


def _checked_day(day: str) -> str:
    from protocol.audit.hall_day import AuditError
    from server_kit.audit_folder import is_day

    if is_day(day):
        return day
    raise AuditError(f"--day is a session date, YYYY-MM-DD, not {day!r}")



def central_command(ctx: click.Context, hall: Hall, name: str = "audit-export") -> tuple[click.Command, Path] | None:
    """``bingo central NAME`` and the central configuration, when the home is a central server's."""
    from protocol.audit.hall_day import AuditError

    central_config = hall.home / CENTRAL_CONFIG
    if hall.config_path.exists() or not central_config.exists():
        return None
    root = ctx.find_root().command
    group = root.get_command(ctx, "central") if isinstance(root, click.Group) else None
    command = group.get_command(ctx, name) if isinstance(group, click.Group) else None
    if command is None:
        raise AuditError(
            f"{hall.home} is a central server's folder ({CENTRAL_CONFIG}), but the central server's commands "
            "are not installed (the bingo.commands entry point central)"
        )
    return command, central_config


@click.group()
def audit() -> None:
    """Audit exports: a day's raw facts and recorded money, for `bingo replay`, and their check."""


@audit.command("export")
@click.option("--day", required=True, metavar="YYYY-MM-DD", help="The session date to export.")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="A new or empty folder for the four files.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The hall's configuration, whose [prizes] are the rules in force (default: var/hall.toml).")
@pass_hall
@click.pass_context
def export(ctx: click.Context, hall: Hall, day: str, out: Path, config_path: Path | None) -> None:
    """Write the day's scenario, the hall's own result, the journal segment and its key into OUT."""
    from hall_server.audit.folder import check_out_folder, write_export
    from hall_server.audit.source import read_day
    from protocol.audit.hall_day import AuditError
    from server_kit.audit_folder import one_line
    from server_kit.keys import public_pem

    try:
        central = None if config_path is not None else central_command(ctx, hall)
        if central is not None:
            command, central_config = central
            ctx.invoke(command, day=day, out=out, config_path=central_config)
            return
        check_out_folder(out)
        day = _checked_day(day)
        path = config_path or hall.config_path
        if not path.exists():
            raise AuditError(f"no configuration at {path}; its [prizes] are the rules in force (--config FILE)")
        rules = hall.config(path).prize_rules
        key = hall.journal_key()
        made = read_day(hall.engine, key.public_key(), hall.head_path, day, rules)
        write_export(made, public_pem(key), out)
    except (DomainError, OSError) as error:
        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    first, last = made.records[0], made.records[-1]
    joint = f" and {len(made.joint_games)} joint game(s) with the partner hall" if made.joint_games else ""
    click.echo(
        f"{out}: {day}, {len(made.games)} game(s){joint}, journal records {first.seq} to {last.seq} "
        f"(last hash {last.hash})"
    )
    if made.left_out:
        click.echo(f"left out (refunded, or not yet paid in full): {', '.join(made.left_out)}")
    if not made.session_closed and made.games:
        click.echo(
            f"the session of {day} is still open: the replay takes game {made.games[-1]} as the "
            "session's last (R89); export again once the session is closed"
        )


@audit.command("verify")
@click.argument("folder", type=click.Path(path_type=Path), metavar="DIR")
@click.pass_context
def verify(ctx: click.Context, folder: Path) -> None:
    """Check an audit export with nothing but its files: signatures, chain, scenario, result, replay.

    Exit 0 with a summary when everything holds, 1 naming the first fault, 2 when a
    file is missing or cannot be read (docs/audit.md, "Verifying an export").  A central
    server's export is checked by ``bingo central audit-verify``, found like its export.
    """
    from protocol.audit.check import CENTRAL, HALL, ExportUnreadable, export_kind
    from protocol.audit.hall_rebuild import rebuild as rebuild_hall_day
    from server_kit.audit_folder import one_line
    from server_kit.audit_verify import read_export, verify_and_tell

    try:
        kind = export_kind(read_export(folder).records)
    except ExportUnreadable as error:
        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    if kind == CENTRAL:
        root = ctx.find_root().command
        group = root.get_command(ctx, "central") if isinstance(root, click.Group) else None
        command = group.get_command(ctx, "audit-verify") if isinstance(group, click.Group) else None
        if command is None:
            click.echo(f"{folder} is a central server's export, but the central server's commands are not "
                       "installed (the bingo.commands entry point central)", err=True)
            sys.exit(REFUSED)
        ctx.invoke(command, folder=folder)
        return
    sys.exit(verify_and_tell(folder, {HALL: rebuild_hall_day}, click.echo))

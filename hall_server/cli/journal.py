"""``bingo journal``: start, verify the hall's journal and export what stock tools need."""

from __future__ import annotations

import time
from pathlib import Path

import click

from hall_server.cli.context import Hall

pass_hall = click.make_pass_decorator(Hall, ensure=True)


@click.group()
def journal() -> None:
    """The append-only, signed journal of every fact."""


@journal.command()
@click.option("--hall-name", default="", help="The hall's name, written into the opening record.")
@pass_hall
def init(hall: Hall, hall_name: str) -> None:
    """Start a new journal: its opening record and signed head (an empty journal only)."""
    record = hall.journal(create_key=True).initialise(int(time.time() * 1000), {"hall": hall_name})
    click.echo(f"journal started: record {record.seq} ({record.type}), head written to {hall.head_path}")


@journal.command()
@pass_hall
def verify(hall: Hall) -> None:
    """Check every record's hash, link and signature, and the signed head file."""
    from server_kit.journal import table

    count = hall.journal().verify()
    last = table.last_record(hall.engine)
    if not count:
        click.echo("the journal is empty and has no head: it was never started (`bingo journal init`)")
        return
    click.echo(
        f"{count} record(s) verified" + (f"; last {last.seq}, hash {last.hash}" if last else "")
    )


@journal.command("public-key")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@pass_hall
def public_key(hall: Hall, out: Path) -> None:
    """Write the journal's public key (PEM) for auditors and openssl."""
    from server_kit.keys import public_pem

    out.write_bytes(public_pem(hall.journal_key()))
    click.echo(f"public key of {hall.journal_key_path} written to {out}")


@journal.command("export-record")
@click.argument("seq", type=click.IntRange(min=1))
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@pass_hall
def export_record(hall: Hall, seq: int, folder: Path) -> None:
    """Write record SEQ's signed body and raw signature, for openssl pkeyutl -verify."""
    from server_kit.journal import table

    record = next(table.read(hall.engine, after=seq - 1, batch=1), None)
    if record is None or record.seq != seq:
        raise click.ClickException(f"there is no record {seq} in the journal")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"record-{seq}.body").write_bytes(record.body)
    (folder / f"record-{seq}.sig").write_bytes(bytes.fromhex(record.signature))
    click.echo(f"{folder / f'record-{seq}.body'} and {folder / f'record-{seq}.sig'} written")
    click.echo(
        f"verify: openssl pkeyutl -verify -pubin -inkey hall-journal.pub.pem -rawin "
        f"-in {folder / f'record-{seq}.body'} -sigfile {folder / f'record-{seq}.sig'}"
    )


@journal.command("export-head")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@pass_hall
def export_head(hall: Hall, folder: Path) -> None:
    """Write the head's signed body and raw signature, for openssl pkeyutl -verify."""
    from server_kit.journal.sql import read_head

    head = read_head(hall.head_path)
    if head is None:
        raise click.ClickException(f"there is no journal head at {hall.head_path}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "head.body").write_bytes(head.body)
    (folder / "head.sig").write_bytes(bytes.fromhex(head.signature))
    click.echo(f"{folder / 'head.body'} and {folder / 'head.sig'} written (record {head.seq}, hash {head.hash})")
    click.echo(
        f"verify: openssl pkeyutl -verify -pubin -inkey hall-journal.pub.pem -rawin "
        f"-in {folder / 'head.body'} -sigfile {folder / 'head.sig'}"
    )

"""``bingo backup`` (the hall's) and ``bingo restore`` (any server's archive): docs/backup.md.

``bingo central backup`` and ``bingo regulator backup`` write the same archive of the
other servers; ``bingo restore`` reads the archive's manifest and restores whichever
server it holds, through that server's ``bingo.backup`` entry point.
"""

from __future__ import annotations

from pathlib import Path

import click

from hall_server.cli.context import Hall

pass_hall = click.make_pass_decorator(Hall, ensure=True)

PASSPHRASE = click.option(
    "--passphrase-file", "passphrase_file", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
    help="Encrypt the server's keys into the archive with the passphrase in this file (scrypt, AES-256-GCM); "
         "without it they are left out, to be kept apart.")
OUT = click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
                   help="The archive to write (a new file; .tar.gz).")


@click.command()
@OUT
@PASSPHRASE
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The hall's configuration (default: $BINGO_HOME/hall.toml).")
@pass_hall
def backup(hall: Hall, out: Path, passphrase_file: Path | None, config_path: Path | None) -> None:
    """Back the hall up while it runs: one archive, checked and signed.

    Its folder, its database in one snapshot, its journal's head and checkpoints taken
    before it, a manifest signed by the journal key and SHA256SUMS (docs/backup.md)."""
    from hall_server.backup import hall_folder
    from server_kit.backup import backup as take, backup_lines, read_passphrase

    config = hall.config(config_path)
    passphrase = read_passphrase(passphrase_file) if passphrase_file is not None else None
    made = take(hall_folder(config, hall.database_url, hall.card_key_path), out, passphrase=passphrase)
    for line in backup_lines(made):
        click.echo(line)


@click.command()
@click.argument("archive", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The new server folder to restore into (absent or empty).")
@click.option("--db", "database_url", default=None, metavar="URL",
              help="A PostgreSQL archive: the new, empty database to restore it into.")
@click.option("--keys", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Where the keys left out of the archive are: a folder laid out as the server's (keys/, pki/keys/).")
@PASSPHRASE
@click.option("--records", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Take back the server's records after the archive's last, from this file of the regulator's "
                   "receiver (bingo regulator export-records), each signature checked.")
def restore(archive: Path, home: Path, database_url: str | None, keys: Path | None,
            passphrase_file: Path | None, records: Path | None) -> None:
    """Restore a server's backup archive into a new folder, verified.

    A hall's, a central server's or a receiver's ARCHIVE: every checksum checked, the
    keys taken and checked, the journal verified (chain and signed head), ready to start
    (docs/backup.md)."""
    from server_kit.backup import read_passphrase, restore as put_back, restore_lines

    passphrase = read_passphrase(passphrase_file) if passphrase_file is not None else None
    restored = put_back(archive, home, database_url=database_url, keys=keys, passphrase=passphrase, records=records)
    for line in restore_lines(restored):
        click.echo(line)

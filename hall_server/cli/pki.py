"""``bingo pki``: the operator's certificate authority and the certificates it issues.

The commands only read and write files of the PKI folder (``pki/`` in the hall's folder by default); the
servers load what they need from a copy of it (see ``docs/pki.md``).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import click

from hall_server.cli.context import Hall
from server_kit.pki_defaults import CA_DAYS, LEAF_DAYS, REVOCATION_REASONS

pass_hall = click.make_pass_decorator(Hall, ensure=True)

dir_option = click.option(
    "--dir",
    "pki_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="PKI folder (default: var/pki, or $BINGO_HOME/pki).",
)


@click.group()
def pki() -> None:
    """The operator's certificate authority and the certificates of servers, staff and terminals."""


@pki.command()
@click.option("--operator", required=True, help="The operator's name, written into every certificate.")
@click.option("--days", type=int, default=CA_DAYS, show_default=True, help="Validity of the authority.")
@dir_option
@pass_hall
def init(hall: Hall, operator: str, days: int, pki_dir: Path | None) -> None:
    """Create the operator's certificate authority and an empty revocation list."""
    from server_kit import pki as library

    pki_dir = pki_dir or hall.pki_dir
    cert = library.init_authority(pki_dir, operator, days=days)
    folder = library.PkiFolder(pki_dir)
    click.echo(f"certificate authority {cert.subject.rfc4514_string()} valid until {cert.not_valid_after_utc:%Y-%m-%d}")
    click.echo(f"certificate: {folder.ca_cert}")
    click.echo(f"private key: {folder.ca_key} (keep it off the hall servers and back it up offline)")


@pki.command()
@click.argument("kind", metavar="KIND")
@click.argument("name")
@click.option(
    "--host",
    "hosts",
    multiple=True,
    help="Host name or IP address the server is reached at (repeatable; default: localhost and 127.0.0.1).",
)
@click.option("--days", type=int, default=LEAF_DAYS, show_default=True, help="Validity of the certificate.")
@click.option("--home", "server_home", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="report-signing only: also install it in this server folder's keys/ (report-signing.pem, .key).")
@dir_option
@pass_hall
def issue(hall: Hall, kind: str, name: str, hosts: tuple[str, ...], days: int, server_home: Path | None,
          pki_dir: Path | None) -> None:
    """Issue a key and certificate for NAME; KIND is server, staff, terminal, machine, central, regulator,
    operator or report-signing (a server's key for its signed daily reports)."""
    from server_kit import pki as library

    pki_dir = pki_dir or hall.pki_dir
    if server_home is not None and library.parse_role(kind) is not library.Role.report_signing:
        raise library.PkiError("--home is for report-signing certificates; copy other certificates with `bingo pki bundle`")
    issued = library.issue_certificate(pki_dir, kind, name, hosts=hosts, days=days)
    folder = library.PkiFolder(pki_dir)
    hosts_note = f" for {', '.join(issued.hosts)}" if issued.hosts else ""
    click.echo(f"{issued.role} certificate {name}{hosts_note}, valid until {issued.not_after:%Y-%m-%d}")
    click.echo(f"certificate: {folder.cert(name)}")
    click.echo(f"private key: {folder.key(name)}")
    if server_home is not None:
        cert_path, key_path = library.install_report_signing(pki_dir, name, server_home)
        click.echo(f"installed for the server in {server_home}: {cert_path} and {key_path}")


@pki.command()
@click.argument("name")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write NAME's bundle into (the same layout, only NAME's part).")
@dir_option
@pass_hall
def bundle(hall: Hall, name: str, out_dir: Path, pki_dir: Path | None) -> None:
    """Copy what the machine NAME needs (ca.pem, crl.pem, its certificate and key) to a folder."""
    from server_kit import pki as library

    pki_dir = pki_dir or hall.pki_dir
    target = library.export_bundle(pki_dir, name, out_dir)
    click.echo(f"bundle for {name} written to {target.root} (its key is in {target.key(name)}: keep it private)")


@pki.command("list")
@dir_option
@pass_hall
def list_issued(hall: Hall, pki_dir: Path | None) -> None:
    """Show the authority and every certificate issued, with its expiry and status."""
    from server_kit import pki as library

    pki_dir = pki_dir or hall.pki_dir
    authority = library.authority_certificate(pki_dir)
    issued = library.list_certificates(pki_dir)
    now = datetime.datetime.now(datetime.timezone.utc)
    click.echo(f"authority {authority.subject.rfc4514_string()}, expires {authority.not_valid_after_utc:%Y-%m-%d}")
    if not issued:
        click.echo("no certificates issued yet")
        return
    width = max(len(entry.name) for entry in issued)
    click.echo(f"{'name':<{width}}  {'role':<9}  {'expires':<10}  {'status':<7}  hosts")
    for entry in issued:
        status = entry.status(now)
        if entry.revoked_at is not None:
            status = f"revoked {entry.revoked_at:%Y-%m-%d}"
        click.echo(
            f"{entry.name:<{width}}  {entry.role:<9}  {entry.not_after:%Y-%m-%d}  {status:<7}  {' '.join(entry.hosts)}".rstrip()
        )


@pki.command()
@click.argument("name")
@click.option(
    "--reason",
    type=click.Choice(REVOCATION_REASONS),
    default="unspecified",
    show_default=True,
    help="Why, as recorded in the revocation list.",
)
@dir_option
@pass_hall
def revoke(hall: Hall, name: str, reason: str, pki_dir: Path | None) -> None:
    """Put NAME's certificate on the revocation list; servers refuse it from their next connection."""
    from server_kit import pki as library

    pki_dir = pki_dir or hall.pki_dir
    revoked = library.revoke_certificate(pki_dir, name, reason=reason)
    folder = library.PkiFolder(pki_dir)
    click.echo(f"{revoked.role} certificate {name} (serial {revoked.serial:x}) revoked: {reason}")
    click.echo(f"revocation list: {folder.crl} (copy it to every server and client)")

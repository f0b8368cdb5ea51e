"""``bingo release``: the manifest of the installed release, checked before every session."""

from __future__ import annotations

from pathlib import Path

import click

from hall_server.cli.context import Hall

MANIFEST = "release-manifest.json"


pass_hall = click.make_pass_decorator(Hall, ensure=True)


def _manifest(hall: Hall, path: Path | None) -> Path:
    """The manifest named, or the hall's own (``$BINGO_HOME/release-manifest.json``), which the server checks."""
    return path if path is not None else hall.home / MANIFEST


@click.group()
def release() -> None:
    """The installed release and its manifest (R92.5e software check)."""


@release.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Where to write it (default: $BINGO_HOME/{MANIFEST}, or var/{MANIFEST}).")
@pass_hall
def manifest(hall: Hall, out: Path | None) -> None:
    """Record the SHA-256 of every installed file as the release to check against."""
    from server_kit.verification import write_manifest

    out = _manifest(hall, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    count = write_manifest(out)
    click.echo(f"release manifest of {count} files written to {out}")


@release.command()
@click.option("--manifest", "path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"The manifest to check against (default: $BINGO_HOME/{MANIFEST}, or var/{MANIFEST}).")
@pass_hall
def check(hall: Hall, path: Path | None) -> None:
    """Compare the installed files with the release manifest."""
    from server_kit.verification import check_software

    path = _manifest(hall, path)
    fault = check_software(path)
    if fault:
        raise click.ClickException(fault)
    click.echo(f"installed software matches {path}")

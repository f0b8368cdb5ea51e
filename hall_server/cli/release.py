"""``bingo release``: the manifest of the installed release, checked before every session."""

from __future__ import annotations

from pathlib import Path

import click

from hall_server.verification import check_software, write_manifest


@click.group()
def release() -> None:
    """The installed release and its manifest (R92.5e software check)."""


@release.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("var/release-manifest.json"), show_default=True)
def manifest(out: Path) -> None:
    """Record the SHA-256 of every installed file as the release to check against."""
    count = write_manifest(out)
    click.echo(f"release manifest of {count} files written to {out}")


@release.command()
@click.option("--manifest", "path", type=click.Path(dir_okay=False, path_type=Path), default=Path("var/release-manifest.json"), show_default=True)
def check(path: Path) -> None:
    """Compare the installed files with the release manifest."""
    fault = check_software(path)
    if fault:
        raise click.ClickException(fault)
    click.echo(f"installed software matches {path}")

"""``bingo config check FILE``: a server's configuration read as its start reads it, before it starts.

Each server declares its file through the ``bingo.config`` entry point group
(:class:`server_kit.settings.ConfigFile`: the hall's ``hall.toml``, the central server's
``central.toml``, the regulator's receiver's ``senders.toml``), with a check that reads it
with the server's own reader, the same code ``serve`` runs.  So a file this command passes
is one the server takes, and a file it refuses stops the server with the same line: the
key's path and, for a misspelt key, the one meant (``tls.require_client_certficate: is not a
setting here; did you mean require_client_certificate?``).  The server is told by the
file's name, or by ``--server``.
"""

from __future__ import annotations

from pathlib import Path

import click

from protocol.errors import DomainError
from server_kit.settings import CONFIG_ENTRY_POINTS, ConfigFile


class ConfigCheckError(DomainError):
    """A configuration file whose server cannot be told or is not installed."""


def installed() -> dict[str, ConfigFile]:
    """Each installed server's configuration file, by server (the ``bingo.config`` entry points)."""
    from importlib.metadata import entry_points

    found: dict[str, ConfigFile] = {}
    for entry in entry_points(group=CONFIG_ENTRY_POINTS):
        declared = entry.load()
        if not isinstance(declared, ConfigFile):
            raise ConfigCheckError(f"the {CONFIG_ENTRY_POINTS} entry point {entry.value} declares no configuration file")
        found.setdefault(declared.server, declared)
    return found


def which(path: Path, server: str | None, files: dict[str, ConfigFile]) -> ConfigFile:
    """The configuration file ``path`` is: the one ``server`` names, else the one of its name."""
    if server is not None:
        if server not in files:
            raise ConfigCheckError(f"there is no {server!r} server installed here; the servers are "
                                   f"{', '.join(sorted(files))}")
        return files[server]
    named = [file for file in files.values() if file.name == path.name]
    if len(named) != 1:
        names = ", ".join(f"{file.name} ({file.server})" for file in sorted(files.values(), key=lambda f: f.server))
        raise ConfigCheckError(f"{path}: cannot tell which server reads it by its name (the files are {names}); "
                               f"name it with --server {' or '.join(sorted(files))}")
    return named[0]


@click.group()
def config() -> None:
    """Check a server's configuration file before it starts."""


@config.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--server", default=None, metavar="SERVER",
              help="Which server reads FILE: hall, central or regulator (default: told by the file's name).")
def check(file: Path, server: str | None) -> None:
    """Read FILE as its server's start does; exit 0 if the server would take it, else 1 with the reason.

    Every key must be a known one (a misspelt key is refused with the key meant), every
    value of its type and range, every file it names where it says.
    """
    if file.is_dir():
        raise ConfigCheckError(f"{file}: a folder, not a configuration file")
    declared = which(file, server, installed())
    click.echo(f"{file}: {declared.check(file)}")

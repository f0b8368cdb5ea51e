"""``bingo config check FILE``: a server's configuration read as its start reads it, before it starts.

The hall's ``hall.toml``, the central server's ``central.toml`` and the regulator's receiver's
``senders.toml`` are each read by their server's own reader (the same code ``serve`` runs), so a
file this command passes is one the server takes, and a file it refuses stops the server with the
same line: the key's path and, for a misspelt key, the one meant (``tls.require_client_certficate:
is not a setting here; did you mean require_client_certificate?``).  The kind of file is found from
its tables (``[hall]``, ``[central]``, ``[senders]``) unless ``--server`` names it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import click

from protocol.errors import DomainError

KINDS = ("hall", "central", "regulator")


class ConfigCheckError(DomainError):
    """A configuration file this command cannot read, or whose kind it cannot tell."""


def kind_of(path: Path) -> str:
    """Which server reads the file at ``path``, from its top-level tables."""
    try:
        with open(path, "rb") as stream:
            data = tomllib.load(stream)
    except FileNotFoundError:
        raise ConfigCheckError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigCheckError(f"{path}: a folder, not a configuration file") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigCheckError(f"{path}: not valid TOML: {error}") from None
    found = [kind for kind, table in (("hall", "hall"), ("central", "central"), ("regulator", "senders"))
             if table in data]
    if len(found) != 1:
        raise ConfigCheckError(
            f"{path}: cannot tell which server reads it (a hall's has [hall], a central server's [central], the "
            "regulator's receiver's [senders]); name it with --server hall, central or regulator")
    return found[0]


def check_file(path: Path, kind: str) -> str:
    """Read ``path`` as server ``kind`` reads it at start; what it describes, in one line."""
    if kind == "hall":
        from hall_server.config import load_config

        hall = load_config(path)
        database = hall.database_url.split(":", 1)[0].split("+", 1)[0]
        return (f"a hall configuration: hall {hall.name!r}, {len(hall.staff)} staff logins, "
                f"database {database}, listening on {hall.interface}:{hall.port}")
    if kind == "central":
        from central_server.config import load_config as load_central

        central = load_central(path)
        database = central.database_url.split(":", 1)[0].split("+", 1)[0]
        return (f"a central server configuration: {central.central_id!r}, {len(central.halls)} halls, "
                f"database {database}")
    from regulator.senders import read_senders

    if not path.is_file():
        raise ConfigCheckError(f"{path}: no such file")
    senders = read_senders(path)
    return f"the regulator's receiver's senders: {len(senders)} registered ({', '.join(sorted(senders)) or 'none'})"


@click.group()
def config() -> None:
    """Check a server's configuration file before it starts."""


@config.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--server", "kind", type=click.Choice(KINDS), default=None,
              help="Which server reads FILE (default: found from its tables: [hall], [central], [senders]).")
def check(file: Path, kind: str | None) -> None:
    """Read FILE as its server's start does; exit 0 if the server would take it, else 1 with the reason.

    Every key must be a known one (a misspelt key is refused with the key meant), every
    value of its type and range, every file it names where it says.
    """
    kind = kind or kind_of(file)
    click.echo(f"{file}: {check_file(file, kind)}")

"""``bingo hall``: run the hall server and manage its configuration.

``bingo hall serve`` starts the server built by :func:`hall_server.tap.makeService`
(the same as ``twist bingo-hall``) and runs the reactor; with no configuration it
writes the embedded default under ``var/`` first and shows the staff logins once.
A hall that cannot serve (a journal that does not verify, say) stops with one line
on stderr and exit status 1, before it listens.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hall_server.cli.context import Hall
from hall_server.hall.roles import STAFF_ROLES
from server_kit.settings import toml_string

if TYPE_CHECKING:
    from hall_server.hall.roles import Role

ROLE_NAMES = [str(role) for role in STAFF_ROLES]
pass_hall = click.make_pass_decorator(Hall, ensure=True)


def _show_logins(logins: list[tuple[str, Role, str]], path: Path) -> None:
    click.echo(f"Wrote {path} with these staff logins (shown only now; only their hashes are kept):")
    for name, role, password in logins:
        click.echo(f"  {name:<8} {str(role).replace('_', ' '):<15} password: {password}")


@click.group()
def hall() -> None:
    """The hall server: serve, configuration, staff passwords."""


@hall.command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Configuration file (default: var/hall.toml, written on first start).")
@click.option("--demo", is_flag=True, help="Fill the hall with a scripted session to watch.")
@click.option("--pace", type=click.FloatRange(0.05, 60), default=2.5, show_default=True,
              help="With --demo: seconds between the scripted steps (balls, claims).")
@click.option("--port", type=click.IntRange(0, 65535), default=None, help="Listen on this port instead.")
@click.option("--interface", default=None, help="Listen on this address instead (0.0.0.0: every interface).")
@click.option("--regulator", "regulator", default=None, metavar="HOST:PORT",
              help="Feed the journal to the regulator's receiver at HOST:PORT (instead of hall.toml's [regulator]).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How the log is written to standard output: lines for a person, or JSON lines for a collector.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warn", "error"]), default="info", show_default=True,
              help="The least serious events logged; debug adds a line for every web request (the access log).")
@pass_hall
def serve(
    hall: Hall, config_path: Path | None, demo: bool, pace: float, port: int | None, interface: str | None,
    regulator: str | None, log_format: str, log_level: str,
) -> None:
    """Run the hall server until interrupted (Ctrl-C)."""
    from server_kit.clock import install_unless_installed

    install_unless_installed()  # timers on the monotonic clock (server_kit/clock.py), before the reactor is imported
    from twisted.internet import reactor as global_reactor
    from hall_server.tap import makeService
    from server_kit.logs import begin_logging

    path = config_path or hall.config_path
    if config_path is not None and not path.exists():
        raise click.ClickException(f"no configuration at {path}; `bingo hall init-config --config {path}` writes one")
    reactor: Any = global_reactor  # the CLI runs the process's one reactor
    begin_logging(log_format, level=log_level)
    if regulator is not None:
        host, _, number = regulator.rpartition(":")
        if not host or not number.isdigit() or not 1 <= int(number) <= 65535:
            raise click.BadParameter(f"HOST:PORT of the regulator's receiver (localhost:8700), not {regulator!r}",
                                     param_hint="--regulator")
    options: dict[str, object] = {"config": str(path), "demo": demo, "demo_pace": pace, "port": port,
                                   "interface": interface, "regulator": regulator}
    database = hall.database_url
    if database:
        options["database_url"] = database
    service = makeService(options)  # a port that cannot be had ends the process with status 1
    reactor.callWhenRunning(service.startService)
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    reactor.run()


@hall.command("init-config")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write it (default: var/hall.toml).")
@click.option("--name", "hall_name", default="Demo hall", show_default=True, help="The hall's name.")
@click.option("--port", type=click.IntRange(1, 65535), default=8443, show_default=True)
@pass_hall
def init_config(hall: Hall, config_path: Path | None, hall_name: str, port: int) -> None:
    """Write a configuration with one login per staff role (never overwrites)."""
    path = config_path or hall.config_path
    if path.exists():
        raise click.ClickException(f"{path} exists; it is left as it is")
    _, logins = hall.write_config(path, hall_name=hall_name, port=port)
    path.chmod(0o600)  # the staff password hashes
    _show_logins(logins, path)


@hall.command("hash-password")
@click.password_option("--password", prompt="Password", help="The password (prompted, hidden, when omitted).")
def hash_password_command(password: str) -> None:
    """Print the scrypt hash of a password, for a [[staff]] entry's password_hash."""
    from hall_server.config import hash_password

    click.echo(hash_password(password))


@hall.command("add-staff")
@click.argument("name")
@click.argument("role", type=click.Choice(ROLE_NAMES))
@click.option("--licence", required=True, help="The member's class I licence number (R79).")
@click.option("--valid-until", "valid_until", required=True, type=click.DateTime(formats=["%Y-%m-%d"]),
              help="The last day the licence is valid (YYYY-MM-DD).")
@click.option("--valid-from", "valid_from", default=None, type=click.DateTime(formats=["%Y-%m-%d"]),
              help="The first day the licence is valid, when later than today (YYYY-MM-DD).")
@click.option("--document", default=None, help="Identity document number (staff may not play, R81.b).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Configuration file (default: var/hall.toml).")
@click.password_option("--password", prompt="Password", help="The password (prompted, hidden, when omitted).")
@pass_hall
def add_staff(hall: Hall, name: str, role: str, licence: str, valid_until: datetime, valid_from: datetime | None,
              document: str | None, config_path: Path | None, password: str) -> None:
    """Add a staff member with a role (R80) and a class I licence (R79) to the configuration; the
    password is stored hashed."""
    from hall_server.config import ConfigError, hash_password

    path = config_path or hall.config_path
    config = hall.config(path)
    if config.staff_member(name) is not None:
        raise ConfigError(f"{path}: a staff member named {name!r} exists already")
    block = ["", "[[staff]]", f"name = {toml_string(name)}", f'role = "{role}"',
             f"password_hash = {toml_string(hash_password(password))}"]
    block += [f"licence = {toml_string(licence)}", f"licence_valid_until = {valid_until.date().isoformat()}"]
    if valid_from is not None:
        block.append(f"licence_valid_from = {valid_from.date().isoformat()}")
    if document:
        block.append(f"document = {toml_string(document)}")
    # The new file is written beside the old one and read as the server reads it before it takes the
    # old one's place: a value the reader refuses (a licence's dates) leaves the file as it was, and a
    # server reading it meanwhile never sees half of it.
    candidate = path.with_name(f".{path.name}.adding")
    candidate.write_text(path.read_text() + "\n".join(block) + "\n")
    try:
        hall.config(candidate)
    except ConfigError as error:
        candidate.unlink()
        raise ConfigError(str(error).replace(str(candidate), str(path))) from None
    shutil.copymode(path, candidate)
    os.replace(candidate, path)
    click.echo(f"Added {name} ({role.replace('_', ' ')}, licence {licence} valid until "
               f"{valid_until.date().isoformat()}) to {path}; restart the server to use it.")

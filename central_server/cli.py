"""``bingo central``: the central server's commands, added to the ``bingo`` command.

The ``bingo`` command (``hall_server/cli``) does not import the central server: it
finds this module through the ``bingo.commands`` entry point group, which
``setup.cfg`` declares (``central = central_server.cli:register``), and calls
:func:`register` with its group.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import click


@click.group()
def central() -> None:
    """The central server of interconnected bingo: network games across halls."""


@central.command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Configuration file (default: $BINGO_HOME/central.toml, or var/central.toml).")
def serve(config_path: Path | None) -> None:
    """Run the central server until interrupted (Ctrl-C); the same as ``twist bingo-central``."""
    from twisted.internet import reactor as global_reactor
    from twisted.logger import globalLogBeginner, textFileLogObserver

    from central_server.tap import default_config_path, makeService

    path = config_path or default_config_path()
    if not path.exists():
        raise click.ClickException(f"no configuration at {path}; docs/central-server.md shows one")
    reactor: Any = global_reactor  # the CLI runs the process's one reactor
    globalLogBeginner.beginLoggingTo([cast(Any, textFileLogObserver(sys.stdout))], redirectStandardIO=False)
    service = makeService({"config": str(path)})
    reactor.callWhenRunning(service.startService)
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    reactor.run()
    if service.central.listener.failure is not None:
        raise click.ClickException(f"the central server could not serve: {service.central.listener.failure.getErrorMessage()}")


def register(main: click.Group) -> None:
    """Add ``bingo central`` to the ``bingo`` command (the ``bingo.commands`` entry point)."""
    main.add_command(central)

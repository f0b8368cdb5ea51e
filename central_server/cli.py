"""``bingo central``: the central server's commands, added to the ``bingo`` command.

The ``bingo`` command (``hall_server/cli``) does not import the central server: it
finds this module through the ``bingo.commands`` entry point group, which
``setup.cfg`` declares (``central = central_server.cli:register``), and calls
:func:`register` with its group.
"""

from __future__ import annotations

import json
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


@central.command()
@click.option("--halls", type=click.IntRange(2, 200), default=2, show_default=True, help="Hall server processes.")
@click.option("--terminals", type=click.IntRange(1, 1000), default=5, show_default=True, help="Terminals per hall.")
@click.option("--games", type=click.IntRange(1, 50), default=1, show_default=True, help="Network games to play.")
@click.option("--home", "home", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="A new folder for every server's home (DIR/central, DIR/hall-1, ...).")
@click.option("--seed", type=int, default=1, show_default=True, help="The terminals' random choices.")
@click.option("--burst", is_flag=True, help="Every terminal buys in the last 5 s of each sale.")
def simulate(halls: int, terminals: int, games: int, home: Path, seed: int, burst: bool) -> None:
    """Play network games on loopback: this central server, hall servers and headless terminals.

    Prints a JSON summary (purchases, cards, balls, winners and money per hall, CPU
    seconds); exit status 1 if the terminals, the halls and the central server disagree.
    """
    from simulation.network import Plan, SimulationError, simulate as run  # starts halls by their command line

    plan = Plan(home=home, halls=halls, terminals=terminals, games=games, seed=seed,
                mode="burst" if burst else "random")
    try:
        summary = run(plan, progress=lambda line: click.echo(f"simulate: {line}", err=True))
    except SimulationError as error:
        raise click.ClickException(str(error)) from None
    click.echo(json.dumps(summary, indent=2))
    if not summary["ok"]:
        raise click.ClickException("the simulation's checks failed: " + "; ".join(summary["problems"][:3]))


def register(main: click.Group) -> None:
    """Add ``bingo central`` to the ``bingo`` command (the ``bingo.commands`` entry point)."""
    main.add_command(central)

"""The ``bingo-central`` plugin: ``twist bingo-central [--config FILE]`` runs the central server.

The service itself is built by :func:`central_server.tap.makeService`, the process's one
composition root; this file only declares the plugin and its options.
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import IServiceMaker
from twisted.plugin import IPlugin
from twisted.python import usage
from zope.interface import implementer


class Options(usage.Options):
    optParameters = [
        ["config", "c", None, "The central server's configuration file (default: $BINGO_HOME/central.toml)."],
        ["monitor-port", None, None, "Serve /health, /ready and /metrics over HTTP on this loopback port.", int],
    ]

    def postOptions(self) -> None:
        # Parsed before twist installs its default reactor: unless ``--reactor`` chose one,
        # the process runs the one whose timers are on the monotonic clock (server_kit/clock.py).
        from server_kit.clock import install_unless_installed

        install_unless_installed()


@implementer(IServiceMaker, IPlugin)
class CentralServiceMaker:
    tapname = "bingo-central"
    description = "The central server of interconnected bingo: network games across halls (R92-R94)."
    options = Options

    def makeService(self, options: Options) -> Any:
        from central_server.tap import makeService  # imported late: plugin discovery stays cheap
        from protocol.errors import DomainError

        try:
            return makeService(options)
        except DomainError as error:
            # A start refused (a misspelt setting, a bad value) is one line a person can act on, and status 1.
            raise SystemExit(f"the central server cannot start: {error}") from None


serviceMaker = CentralServiceMaker()

"""The ``bingo-hall`` plugin: ``twist bingo-hall [--config FILE] [--demo]`` runs a hall server.

The service itself is built by :func:`hall_server.tap.makeService`, the process's one
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
        ["config", "c", None, "The hall's configuration file (default: var/hall.toml, created if missing)."],
        ["demo_pace", None, "2.5", "With --demo: seconds between the scripted steps."],
    ]
    optFlags = [
        ["demo", None, "Play a scripted session with simulated sellers and players."],
    ]

    def postOptions(self) -> None:
        # Parsed before twist installs its default reactor: unless ``--reactor`` chose one,
        # the process runs the one whose timers are on the monotonic clock (server_kit/clock.py).
        from server_kit.clock import install_unless_installed

        install_unless_installed()


@implementer(IServiceMaker, IPlugin)
class HallServiceMaker:
    tapname = "bingo-hall"
    description = "A licensed bingo hall's server: caller console, information board, hall core."
    options = Options

    def makeService(self, options: Options) -> Any:
        from hall_server.tap import makeService  # imported late: plugin discovery stays cheap
        from protocol.errors import DomainError

        try:
            return makeService(options)
        except DomainError as error:
            # A start refused (a misspelt setting, a bad value) is one line a person can act on, and status 1.
            raise SystemExit(f"the hall server cannot start: {error}") from None


serviceMaker = HallServiceMaker()

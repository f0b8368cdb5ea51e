"""The demo a hall serves with ``bingo hall serve --demo``: a scripted session, its terminals and machine.

:func:`add_demo` adds to a built hall the scripted session (the caller's steps every
``pace`` seconds, :class:`~hall_server.web.demo_session.DemoSession`), the demo's headless
terminals and the newcomer's kiosk (:mod:`hall_server.web.demo_terminals`), and the screen of
the demo's video bingo machine (:func:`demo_videobingo`) when the hall has no
``[videobingo]`` of its own.  Nothing here decides a rule: it plays the parts a hall's
staff would play, through the same commands.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twisted.logger import Logger

from hall_server.config import HallConfig
from hall_server.hall.catalog import StoreCardCatalog
from hall_server.hall.videobingo import MachineConfig, VideoBingoConfig
from hall_server.provision import FIRST_TERMINAL, operator_ca_dir
from hall_server.web import demo_terminals
from hall_server.web.demo_session import DemoSession

if TYPE_CHECKING:
    from hall_server.tap import HallServer

log = Logger()


#: The demo's video bingo machine (one station), when hall.toml has no ``[videobingo]``.
DEMO_MACHINE = "vb-1"
DEMO_PAYTABLE = Path(__file__).resolve().parents[1] / "protocol" / "videobingo" / "paytables" / "vb-classic-3x5.json"


def register_next_series(hall: HallServer) -> int | None:
    """The demo's staff register another series when every one is sold out (see
    :meth:`StoreCardCatalog.register_next`): its number, or None while one has cards left."""
    catalog = hall.games.catalog
    if not isinstance(catalog, StoreCardCatalog):
        return None
    added = catalog.register_next(hall.games.last_sold)
    if added is None:
        return None
    log.info("Every series is sold out: registered series {number} ({count} cards of set {card_set})",
             number=added.number, count=added.card_count, card_set=added.card_set)
    return added.number


def demo_videobingo() -> VideoBingoConfig | None:
    """The demo's video bingo machine, on the documented classic paytable (of a source checkout)."""
    paytable = DEMO_PAYTABLE
    if not paytable.is_file():
        log.warn("Demo: no video bingo machine: its paytable {path} is missing", path=str(paytable))
        return None
    machine = MachineConfig(DEMO_MACHINE, "classic", paytable, credit_cents=20, stations=1, zone="machines")
    return VideoBingoConfig(seats=40, room_zone="bingo room", machines=(machine,))


def with_demo(config: HallConfig) -> HallConfig:
    """``config`` for the demo: the demo's video bingo machine when it has no ``[videobingo]`` of its own."""
    return config if config.videobingo is not None else replace(config, videobingo=demo_videobingo())


def add_demo(hall: HallServer, reactor: Any, pace: float) -> None:
    """The scripted session, with virtual cards on the demo's terminals and the newcomer's kiosk
    (and the screen of the demo's video bingo machine, when the hall has its own or the demo's)."""
    config = hall.config
    bundles = config.home / "terminal-certs"
    names = [*demo_terminals.HEADLESS, FIRST_TERMINAL]
    stations = [(DEMO_MACHINE, 1)] if hall.videobingo is not None and DEMO_MACHINE in hall.videobingo.machines else []
    station_names = [f"{m}.{s}" for m, s in stations]
    if config.tls.enabled:
        ready = [*demo_terminals.provision(operator_ca_dir(config), bundles, names),
                 *demo_terminals.provision(operator_ca_dir(config), bundles, station_names, role="machine")]
        terminals = [n for n in ready if n in names]
        stations = [(m, s) for m, s in stations if f"{m}.{s}" in ready]
    else:
        terminals = names
    demo = DemoSession(
        hall.core, hall.view, hall.clock or reactor, [s.number for s in config.series], config.desks[0],
        pace=pace, timezone=config.timezone, terminals=terminals, stations=stations, balance=hall.cashier.balance,
        new_series=functools.partial(register_next_series, hall), rules=config.prize_rules,
    )
    demo.setServiceParent(hall.service)
    host = "localhost" if config.interface in ("", "0.0.0.0", "127.0.0.1", "::") else config.interface
    demo_terminals.DemoTerminals(
        reactor, demo, hall.web.listening, host=host, tls=config.tls.enabled, bundles=bundles,
        kiosk=FIRST_TERMINAL if FIRST_TERMINAL in terminals else None, note=config.home / demo_terminals.KIOSK_NOTE,
    ).setServiceParent(hall.service)

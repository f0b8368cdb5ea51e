"""The hall's modules, built over its command core and joined by the checks they ask of each other.

:func:`build_modules` makes, in the order they depend on each other: the session (with
the pre-session verification, R92.5e), the ledger, the opening hours (R74), the
admission desk (R73), the cashier, the traditional game (drawn by the blower or the
software generator, R83.6, R92.10), the virtual cards, the PIN lockouts, responsible
play (R97.2), the network games and the hall-annex game (with ``[central]``), the desks'
look-ups and the video bingo machines (with ``[videobingo]``).  Each module registers its
own commands with the core; what one module asks of another (a closing check, a sale
check) is joined here, where both exist.  The start-up (``hall_server/tap.py``) builds
the foundation and the endpoints around them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from twisted.internet.threads import blockingCallFromThread
from twisted.logger import Logger

from hall_server.annex.module import AnnexModule
from hall_server.annex.terminals import JointTerminalSales
from hall_server.blower import ApprovedFirmware, BlowerDriver
from hall_server.blower.hall import HallBlowers
from hall_server.config import HallConfig
from hall_server.hall.admission import AdmissionModule, StaffIdentity
from hall_server.hall.cashier import CashierModule
from hall_server.hall.catalog import StoreCardCatalog
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.lookups import LookupModule
from hall_server.hall.notices import OpeningHoursModule
from hall_server.hall.pins import PinGuard
from hall_server.hall.responsible import ResponsiblePlayModule
from hall_server.hall.session import SessionModule
from hall_server.hall.videobingo import VideoBingoModule
from hall_server.hall.virtual import VirtualModule
from hall_server.network.module import NetworkModule
from hall_server.provision import blower_link_key, load_videobingo, release_manifest
from hall_server.terminal_gateway.library import load_virtual_library
from hall_server.verification import check_library, check_terminals, verify_system
from protocol.balls import RandomBallGenerator
from protocol.errors import N_, Phrase, one_or_joined
from server_kit.boot import Foundation
from server_kit.core import CommandCore
from server_kit.keys import card_key_path

log = Logger()


@dataclass
class HallModules:
    """The modules of one hall, as :func:`build_modules` joined them."""

    session: SessionModule
    ledger: LedgerModule
    opening_hours: OpeningHoursModule
    admission: AdmissionModule
    cashier: CashierModule
    games: GamesModule
    virtual: VirtualModule
    pins: PinGuard
    responsible: ResponsiblePlayModule
    lookups: LookupModule
    library: Any
    blowers: HallBlowers | None = None
    network: NetworkModule | None = None
    annex: AnnexModule | None = None
    joint_sales: JointTerminalSales | None = None
    videobingo: VideoBingoModule | None = None


def build_modules(config: HallConfig, base: Foundation, live: Mapping[str, Any], run: Any) -> HallModules:
    """Every module of the hall over ``base``'s core (before recovery); ``live``: the parts the
    verification's terminal and link checks read once the endpoints are built; ``run``: the
    reactor's pool, for scrypt, PDF rendering and the look-ups' folds."""
    core, reactor, engine, zone = base.core, base.reactor, base.engine, config.timezone
    assert core is not None
    blowers = build_blowers(config, reactor, core) if config.draw.blower else None
    checks: dict[str, Any] = {"manifest": release_manifest(config)}
    if blowers is not None:
        # With the blower as the draw device, its self-test is the draw-device check (R84.1).
        checks["draw_device"] = blowers.draw_device_check(reactor)

    def verify(now_ms: int) -> Mapping[str, str | None]:
        # The clock's check reads the wall clock as it is: the records' time never goes back.
        return verify_system(base.journal, engine, base.clock.wall_ms, **checks, **verification_checks(reactor, live))

    # The pre-session verification hashes the whole journal: on a pool of its own, reading
    # only, so commits go on meanwhile on the writer.
    session = SessionModule(core, verify, run_checks=base.pool("verification"), timezone=zone)
    ledger = LedgerModule(core)
    # The hours last reported to the regulator and those in force (R74): a session opens inside them.
    opening_hours = OpeningHoursModule(core, zone)
    admission = AdmissionModule(
        core, [StaffIdentity(m.name, m.document) for m in config.staff if m.document], timezone=zone,
        capacity=config.capacity, counted_since=opening_hours.counted_since_ms,
    )
    session.closing_checks.append(admission.closing_refusal)  # no complaint left unwitnessed (R75.5)
    cashier = CashierModule(core, ledger, admission, config.desks, hall_name=config.name, timezone=zone,
                            work=run, staff={m.name: str(m.role) for m in config.staff},
                            language=config.language)
    # The software ball generator (R92.10) unless [draw] source = "blower" (R83.6).
    ball_sources = blowers if blowers is not None else RandomBallGenerator
    games = GamesModule(core, session, ledger, StoreCardCatalog(engine), ball_sources, config.prize_rules,
                        desks=cashier, prize_wait_s=config.draw.claim_wait_s)
    if blowers is not None:
        blowers.install(games, session)
    # Virtual cards on the player terminals (docs/terminals.md).
    library = load_virtual_library(engine, card_key_path(config.home))
    virtual = VirtualModule(core, games, ledger, cashier, library)
    pins = PinGuard(core, cashier)  # the terminals' PIN lockouts, rebuilt with the rest
    responsible = ResponsiblePlayModule(core, cashier, admission, virtual)  # limits and exclusions (R97.2)
    # The network games (docs/network-game.md), with their own checks of the player's limits.
    network = None
    if config.central is not None:
        network = NetworkModule(core, ledger, cashier, config.central.hall_id, purchase_checks=virtual.purchase_checks)
    # The hall-annex game with a partner hall (R3.5.b), over the link to the central server.
    annex = joint_sales = None
    if config.annex is not None and config.central is not None:
        annex = AnnexModule(core, ledger, StoreCardCatalog(engine), ball_sources, config.prize_rules,
                            hall_id=config.central.hall_id, role=config.annex.role, partner=config.annex.partner,
                            desks=cashier, library=library,
                            own_game=lambda: games.current.game_id if games.current is not None else None,
                            session_open=session.require_open)
        games.sale_checks.append(annex.own_game_refusal)  # one game's paper cards at a time in the room (R82.4)
        session.closing_checks.append(annex.closing_refusal)
        joint_sales = JointTerminalSales(core, annex, virtual, ledger, library)
    # The desks' look-ups: a claimed card, a player's account, the last games (folded off the reactor).
    lookups = LookupModule(core, games, cashier, run=run)
    videobingo = build_videobingo(config, core, ledger, cashier) if config.videobingo is not None else None
    if videobingo is not None:
        session.closing_checks.append(videobingo.closing_check)  # the day's close reconciles the meters
        videobingo.credit_checks.append(responsible.purchase_refusal)  # limits and exclusions (R97.2)
    opening_hours.enforce(session, videobingo)  # no session opens, no machine plays, outside the hours (R74.1)
    return HallModules(session, ledger, opening_hours, admission, cashier, games, virtual, pins, responsible, lookups,
                       library, blowers, network, annex, joint_sales, videobingo)


def report_opening_hours(config: HallConfig, opening_hours: Any) -> None:
    """Once the reactor runs: warn of what the configuration leaves out, and report the hours in force
    to the regulator when they changed (R74.1, R73.5)."""
    if config.opening_hours is None:
        log.warn("No [hall] opening_hours: sessions and video bingo machines are held to no opening hours "
                 "(R74.1); give the hours reported to the regulator")
    if config.capacity is None:
        log.warn("No [hall] capacity: the admission desk counts the people present but refuses nobody for "
                 "it (R73.5); give the hall's authorised capacity")
    reported = opening_hours.notify(config.opening_hours)
    if reported is not None:
        reported.addCallbacks(
            lambda _: log.info("Opening hours reported to the regulator: {hours}", hours=config.opening_hours),
            lambda failure: log.failure("reporting the opening hours", failure))


def verification_checks(reactor: Any, live: Mapping[str, Any]) -> dict[str, Any]:
    """The verification's ``terminals`` and ``links`` checks (R92.5e), run on its worker thread.

    What the gateway and the link hold is read on the reactor's thread; the library is
    read from the card store and its codes checked on the worker.
    """
    if not live:
        starting = Phrase(N_("the hall is still starting"))
        return {"terminals": lambda: starting, "links": lambda: starting}

    def terminals() -> str | None:
        fault = check_library(live["engine"], live["key"], live["library"])
        gateway, virtual = live["gateway"], live["virtual"]
        connected, known = blockingCallFromThread(reactor, lambda: (list(gateway.sessions), dict(virtual.state.terminals)))
        return one_or_joined([f for f in (fault, check_terminals(connected, known)) if f])

    def links() -> str | None:
        link = live["link"]
        if link is None:
            return None
        status = blockingCallFromThread(reactor, link.console_status)
        if status.get("up"):
            return None
        return Phrase(N_("{link}: the network games and the hall-annex game need it"), link=status["line"])

    return {"terminals": terminals, "links": links}




def build_videobingo(config: HallConfig, core: CommandCore, ledger: LedgerModule,
                     cashier: CashierModule) -> VideoBingoModule:
    """The video bingo machines of ``[videobingo]``, their paytables read and certified."""
    assert config.videobingo is not None
    machines = load_videobingo(config)
    for loaded in machines:
        if loaded.refused is not None:
            log.warn("Video bingo machine {machine} does not play: {why}", machine=loaded.machine_id,
                     why=loaded.refused[1])
        else:
            log.info("Video bingo machine {machine}: {paytable}, returning {rtp}%", machine=loaded.machine_id,
                     paytable=loaded.paytable.name, rtp=loaded.rtp.rtp_percent)
    return VideoBingoModule(core, ledger, cashier, config.videobingo, machines)


def build_blowers(config: HallConfig, reactor: Any, core: CommandCore) -> HallBlowers:
    """The main blower's driver and the reserve's (when configured), joined to the core."""
    draw = config.draw
    approved = ApprovedFirmware()
    for version, digest in draw.approved_firmware:
        approved = approved.with_release(version, bytes.fromhex(digest))
    key = blower_link_key(config)
    main = BlowerDriver(reactor, approved, name="main", key=key)
    reserve = BlowerDriver(reactor, approved, name="reserve", key=key) if draw.reserve else None
    log.info("Drawing with the ball blower on {main}{reserve}", main=draw.main,
             reserve=f", reserve on {draw.reserve}" if draw.reserve else " (no reserve configured)")
    return HallBlowers(core, main, reserve)

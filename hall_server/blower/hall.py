"""The blowers in the hall: ball source, faults, reserve switch and the draw-device check.

:class:`HallBlowers` joins the blower drivers to the hall core:

- it is the games module's ball-source factory: each source draws from the blower in
  use (:mod:`hall_server.blower.source`);
- it is the drivers' :class:`IBlowerObserver`: a fault becomes a ``blower_fault``
  record and suspends the game in progress (R86.1) as the server itself (``SYSTEM``);
  the link going down or coming up becomes a ``blower_link`` record.  Both are
  records, so the caller console shows them as it shows every commit;
- it registers the room chief's commands: ``clear_blower_fault``,
  ``switch_to_reserve_blower`` and ``retire_reserve_blower`` (R84.4: the reserve's 90
  balls are counted before and after, recorded as ``balls_counted`` at the stages
  ``reserve_before`` and ``reserve_after``);
- it gives the pre-session verification its ``draw_device`` check: the blowers'
  self-test (R84.1);
- it is a module of the core: which blower is in use is rebuilt from the journal's
  ``blower_switched`` records, so a restarted server draws from the same one.

Nothing here decides a game rule: the games and session modules do, through their
commands.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from twisted.internet.defer import Deferred, ensureDeferred, inlineCallbacks
from twisted.internet.threads import blockingCallFromThread
from twisted.logger import Logger
from zope.interface import implementer

from hall_server.blower.driver import BlowerDriver, CountReport, IBlowerObserver
from hall_server.blower.errors import BlowerError, BlowerFault
from hall_server.blower.pair import BlowerPair
from hall_server.blower.source import BlowerBallSource, game_code
from hall_server.hall.games import GamesModule
from hall_server.hall.roles import SYSTEM, Role
from hall_server.hall.session import SessionModule
from protocol import blower_messages as bm
from protocol.chain import Record
from protocol.errors import N_, DomainError, Phrase, one_or_joined
from protocol.game import Input, State
from protocol.records import declared
from protocol.records.blower import BlowerFault as BlowerFaultRecord
from protocol.records.blower import BlowerFaultCleared, BlowerLink, BlowerSwitched
from protocol.records.game import BallCorrected, BallDrawn, BallVoided
from server_kit.core import Actor, CommandCore, CommandSpec

PERMISSIONS = {
    "report_blower_fault": {Role.SYSTEM},
    "report_blower_link": {Role.SYSTEM},
    "clear_blower_fault": {Role.ROOM_CHIEF},
    "switch_to_reserve_blower": {Role.ROOM_CHIEF},
    "retire_reserve_blower": {Role.ROOM_CHIEF},
}
#: Game states in which the blower holds balls of the game (its draw has begun).
DRAWING_STATES = (State.DRAWING, State.LINE_FOUND, State.LINE_WON, State.SUSPENDED)


class BlowerCommandError(DomainError):
    """A blower command refused; the message says why."""


def balls_present(report: CountReport) -> list[int]:
    """The numbers a count read, as the session's ``count_balls`` takes them: every
    ball not missing, plus a second copy of each repeated one."""
    missing = set(report.missing)
    return [n for n in range(1, 91) if n not in missing] + list(report.repeated)


@implementer(IBlowerObserver)
class HallBlowers:
    """The hall's main blower and optional reserve; see the module docstring."""

    log = Logger()

    def __init__(self, core: CommandCore, main: BlowerDriver, reserve: BlowerDriver | None = None) -> None:
        self.core = core
        self.main = main
        self.reserve = reserve
        self._counts: list[tuple[str, CountReport]] = []
        self.pair = BlowerPair(main, reserve, self._counted) if reserve is not None else None
        self.games: GamesModule | None = None
        self.session: SessionModule | None = None
        for driver in self.drivers:
            driver.observer = self
        #: Journal writes started by the drivers' reports, kept so tests can wait for them.
        self.reports: list[Deferred[Any]] = []
        #: The game whose last ball was corrected with no ball drawn since (from the journal, R85.5).
        self._corrected_game: str | None = None
        core.add_module(self)
        core.allow(PERMISSIONS)

    @property
    def drivers(self) -> list[BlowerDriver]:
        return [self.main] + ([self.reserve] if self.reserve is not None else [])

    def in_use(self) -> BlowerDriver:
        return self.pair.active if self.pair is not None else self.main

    def install(self, games: GamesModule, session: SessionModule) -> None:
        """Register the room chief's commands; called once the modules exist."""
        self.games = games
        self.session = session
        for name, handler, params, summary in (
            ("clear_blower_fault", self.clear_fault, {},
             N_("the blower was repaired: clear its fault (then resume the game)")),
            ("switch_to_reserve_blower", self.switch_to_reserve, {"witnesses": list[str]},
             N_("count the reserve blower's balls and draw from it (R84.4)")),
            ("retire_reserve_blower", self.retire_reserve, {"witnesses": list[str]},
             N_("count the reserve blower's balls after use and go back to the main blower")),
        ):
            self.core.register(CommandSpec(name, handler, params, summary))

    # --- The ball source ----------------------------------------------------------------

    def __call__(self, drawn: Sequence[int]) -> BlowerBallSource:
        """The games module's ball-source factory: the game in progress's balls."""
        assert self.games is not None, "install() before drawing"
        return BlowerBallSource(self.in_use, self.games.require_game().game_id, drawn)

    def resume(self) -> None:
        """After recovery, before the ports open: the blower in use learns the game in
        progress and its committed balls, so a ball it presented that the hall did not
        commit comes back as the next ball ("draw n, last ball k")."""
        game = self.games.current if self.games is not None else None
        if game is not None and game.machine.state in DRAWING_STATES and game.machine.drawn:
            blower = self.in_use()
            blower.resume_game(game_code(game.game_id), list(game.machine.drawn))
            if self._corrected_game == game.game_id:
                # The last ball was misread and corrected: the blower, which counts the misread
                # number as drawn, learns the ball on its rack and that the other is in its chamber.
                blower.resynchronise(force=True).addErrback(
                    lambda failure: self.log.failure("the blower did not resynchronise after a correction", failure)
                )

    # --- What the drivers report ----------------------------------------------------------

    def blower_fault(self, name: str, fault: BlowerFault) -> None:
        written = self.core.execute(SYSTEM, "report_blower_fault", lambda now: [BlowerFaultRecord(
            blower=name, code=fault.code, fault=bm.FAULT_NAMES.get(fault.code, str(fault.code)), draw_no=fault.draw_no,
            ball=fault.ball or None, message=str(fault))])
        if name == self.in_use().name:
            written.addCallback(lambda records: self._suspend(f"{name} blower: {fault.detail}"))
        self._keep(written)

    def blower_link(self, name: str, up: bool, detail: str) -> None:
        self._keep(self.core.execute(SYSTEM, "report_blower_link",
                                     lambda now: [BlowerLink(blower=name, up=up, detail=detail)]))

    def blower_notice(self, name: str, reason: int, count: int) -> None:
        # Statistics of a noisy line: logged, not journaled (the frames were never acted on).
        self.log.info("{name} blower ignored {count} frames: {why}", name=name, count=count,
                      why=bm.NOTICE_NAMES.get(reason, str(reason)))

    def _suspend(self, reason: str) -> Deferred[Any] | None:
        game = self.games.current if self.games is not None else None
        if game is None or not game.machine.accepts(Input.FAILURE_REPORTED):
            return None  # no game to suspend, or it already is
        return self.games.suspend_game(SYSTEM, reason)  # type: ignore[union-attr]

    def _keep(self, written: Deferred[Any]) -> None:
        def failed(failure: Any) -> None:
            if failure.check(DomainError):
                self.log.warn("blower report refused: {why}", why=str(failure.value))
            else:
                self.log.failure("recording a blower report failed", failure)

        self.reports.append(written.addErrback(failed))
        self.reports = [d for d in self.reports if not d.called]

    # --- Commands ---------------------------------------------------------------------------

    def clear_fault(self, actor: Actor) -> Deferred[list[Record]]:
        """Staff repaired the blower in use: it returns the ball in the tube and goes idle."""
        return self._run(self._clear_fault(actor))

    @inlineCallbacks
    def _clear_fault(self, actor: Actor) -> Any:
        self.core.check_permission(actor, "clear_blower_fault")
        blower = self.in_use()
        yield blower.clear_fault()
        return (yield self.core.execute(actor, "clear_blower_fault",
                                        lambda now: [BlowerFaultCleared(blower=blower.name)]))

    def switch_to_reserve(self, actor: Actor, witnesses: Sequence[str]) -> Deferred[list[Record]]:
        """Count the reserve's balls (before use, R84.4); a whole set takes over the draw,
        continuing the game in progress."""
        return self._run(self._switch(actor, list(witnesses)))

    @inlineCallbacks
    def _switch(self, actor: Actor, witnesses: list[str]) -> Any:
        self.core.check_permission(actor, "switch_to_reserve_blower")
        pair = self._pair()
        if pair.active is pair.reserve:
            raise BlowerCommandError("the reserve blower is already in use")
        self._require_session()
        game = self.games.current if self.games is not None else None
        code, drawn = 0, []
        if game is not None and game.machine.state in DRAWING_STATES:
            code, drawn = game_code(game.game_id), list(game.machine.drawn)
        records = []
        try:
            yield pair.switch_to_reserve(code, drawn)
        finally:
            records += yield self._record_counts(actor, witnesses)
        switched = BlowerSwitched(to=pair.reserve.name, from_=pair.main.name, balls_drawn=len(drawn))
        records += yield self.core.execute(actor, "switch_to_reserve_blower", lambda now: [switched])
        return records

    def retire_reserve(self, actor: Actor, witnesses: Sequence[str]) -> Deferred[list[Record]]:
        """Count the reserve's balls after use (R84.4) and draw from the main blower again."""
        return self._run(self._retire(actor, list(witnesses)))

    @inlineCallbacks
    def _retire(self, actor: Actor, witnesses: list[str]) -> Any:
        self.core.check_permission(actor, "retire_reserve_blower")
        pair = self._pair()
        if pair.active is not pair.reserve:
            raise BlowerCommandError("the reserve blower is not in use")
        self._require_session()
        records: list[Record] = []
        try:
            yield pair.retire_reserve()  # the draw moves back, then the reserve counts
        finally:
            if pair.active is pair.main:
                switched = BlowerSwitched(to=pair.main.name, from_=pair.reserve.name)
                records += yield self.core.execute(actor, "retire_reserve_blower", lambda now: [switched])
            records += yield self._record_counts(actor, witnesses)
        return records

    def _pair(self) -> BlowerPair:
        if self.pair is None:
            raise BlowerCommandError("this hall has no reserve blower configured ([draw] reserve)")
        return self.pair

    def _require_session(self) -> None:
        assert self.session is not None, "install() before the commands"
        self.session.require_open()

    def _counted(self, name: str, when: str, report: CountReport) -> None:
        self._counts.append(("reserve_before" if when == "before use" else "reserve_after", report))

    @inlineCallbacks
    def _record_counts(self, actor: Actor, witnesses: list[str]) -> Any:
        """Journal the counts the pair made, complete or not (R84.4)."""
        assert self.session is not None
        counts, self._counts = self._counts, []
        records: list[Record] = []
        for stage, report in counts:
            records += yield self.session.count_balls(actor, stage, balls_present(report), witnesses)
        return records

    def _run(self, work: Deferred[Any]) -> Deferred[Any]:
        """A blower error reaches the console as a refusal with the blower's message."""

        def refused(failure: Any) -> Any:
            failure.trap(BlowerError)
            raise BlowerCommandError(str(failure.value))

        return work.addErrback(refused)

    # --- The pre-session verification (R84.1) ---------------------------------------------------

    def self_test(self) -> Deferred[str | None]:
        """``None`` when every blower passed its self-test, else what failed, in words."""
        return ensureDeferred(self._self_test())

    async def _self_test(self) -> str | None:
        faults: list[Phrase] = []
        for driver in self.drivers:
            if not driver.ready:
                faults.append(Phrase(N_("the {blower} blower is not connected"), blower=driver.name))
                continue
            try:
                report = await driver.self_test()
            except BlowerError as error:
                faults.append(Phrase(N_("{blower} blower: {error}"), blower=driver.name, error=error))
                continue
            if not report.passed:
                faults.append(Phrase(N_("{blower} blower self-test failed: {parts}"), blower=driver.name,
                                     parts=", ".join(report.failed_parts)))
        return one_or_joined(faults)  # one fault keeps its template for the console's language

    def draw_device_check(self, reactor: Any) -> Callable[[], str | None]:
        """The verification's ``draw_device`` check: it runs on a worker thread and waits
        there for the self-test, which runs on the reactor."""

        def check() -> str | None:
            # Twisted's annotation cannot bind the result type through Deferred[str | None].
            result: str | None = blockingCallFromThread(reactor, self.self_test)  # type: ignore[arg-type]
            return result

        return check

    # --- Projection ----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self._corrected_game = None
        if self.pair is not None:
            self.pair.active = self.pair.main

    def checkpoint(self) -> Any:
        return {"corrected_game": self._corrected_game, "active": self.pair.active.name if self.pair else None}

    def restore(self, data: Any) -> None:
        active, corrected = data["active"], data["corrected_game"]
        if self.pair is not None and active == self.pair.reserve.name:
            self.pair.active = self.pair.reserve
        elif self.pair is not None:
            self.pair.active = self.pair.main
        self._corrected_game = corrected

    def apply(self, record: Record) -> None:
        event = declared(record)
        match event:
            case BallCorrected() | BallVoided():  # ball_voided: journals before R85.5's ruling
                self._corrected_game = event.game_id
            case BallDrawn():
                self._corrected_game = None
            case BlowerSwitched() if self.pair is not None:
                self.pair.active = self.pair.reserve if event.to == self.pair.reserve.name else self.pair.main


__all__ = ["BlowerCommandError", "HallBlowers", "balls_present"]

"""The programme on the command core: the next game of the chain, scheduled once, and the operator's commands.

:class:`ProgrammeRunner` is a module of the central server's
:class:`~server_kit.core.CommandCore`.  It folds the chain of games
(:class:`~central_server.domain.programme.Chain`) from the journal like the games, and:

* when a committed record ends a game (``central_game_closed``, ``central_game_not_played``),
  and at every start, it runs one command, ``programme_schedule``, which decides on the
  state of that moment what comes next (:meth:`Chain.next_game`): the next game, with the
  carries of the chain's last game in its scheduling record (R88.5), or nothing.  Since
  every command is decided on the state the ones before it left, a second trigger finds
  the game already scheduled and decides nothing: after a ``kill -9`` at any moment and a
  restart, the next game is scheduled exactly once;
* outside the programme's hours it arms a timer for their opening, on the reactor clock;
* it answers the operator's ``operator_programme``, ``operator_schedule_game``,
  ``operator_pause_programme`` and ``operator_resume_programme``
  (:mod:`protocol.central_operator`), each journaled with the operator's name; a one-off game
  sent with the operator's request id runs through :meth:`CommandCore.once
  <server_kit.core.CommandCore.once>`, so the same id sent again (an answer lost) is answered
  with the game the first request made, remembered from the journal, and schedules nothing.

The prize terms (R94.3): at start the template's terms are notified when they are new
(:class:`~central_server.terms.PrizeTerms`); each game is then played on the terms in force
when it is scheduled, so a change of the percentages reaches the games five days after its
notice and not before, while the programme plays on.
"""

from __future__ import annotations

import copy

import datetime
import zoneinfo
from typing import Any

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from central_server.domain.config import PrizeShare, library_digest
from central_server.domain.errors import NotNow
from central_server.domain.programme import (
    BY_PROGRAMME,
    Chain,
    Local,
    OneOff,
    ProgrammeConfig,
    Wait,
    prizes_of_terms,
)
from central_server.module import RETRY_S, SYSTEM, CentralModule, game_record
from central_server.terms import PrizeTerms
from protocol.central_operator import (
    OPERATOR_PAUSE_PROGRAMME,
    OPERATOR_PROGRAMME,
    OPERATOR_RESUME_PROGRAMME,
    OPERATOR_SCHEDULE_GAME,
)
from protocol.chain import Record
from protocol.records import ACTOR_KEY
from protocol.records.central import (
    PROGRAMME_RECORDS,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameQueued,
    CentralGameScheduled,
)
from server_kit.core import Actor, CommandCore, Repeated
from server_kit.db.faults import StorageUnavailable
from server_kit.journal.projection import decode, encode

#: The records the chain folds.
_FOLDED = frozenset({CentralGameScheduled.type, CentralGameClosed.type, CentralGameNotPlayed.type, *PROGRAMME_RECORDS})
#: The records that make an operator's one-off game (scheduled at once, or queued).
_ONE_OFFS = frozenset({CentralGameScheduled.type, CentralGameQueued.type})
#: The records after whose commit the next game may be due.
_ENDS = frozenset({CentralGameClosed.type, CentralGameNotPlayed.type})

PERMISSIONS = {
    "programme_schedule": frozenset({"system", "operator"}),
    "programme_pause": frozenset({"operator"}),
    "programme_resume": frozenset({"operator"}),
}


def local_time(now_ms: int, zone: zoneinfo.ZoneInfo, programme: ProgrammeConfig | None) -> Local:
    """The day in ``zone`` and whether the programme's hours are open at ``now_ms``; if not, when they open."""
    local = datetime.datetime.fromtimestamp(now_ms / 1000, zone)
    day = local.date().isoformat()
    hours = programme.hours if programme is not None else None
    if hours is None or hours.open_at(local.hour * 60 + local.minute):
        return Local(day)
    minute = local.hour * 60 + local.minute
    date = local.date() if minute < hours.start else local.date() + datetime.timedelta(days=1)
    opens = datetime.datetime.combine(date, datetime.time(hours.start // 60, hours.start % 60), tzinfo=zone)
    return Local(day, in_hours=False, hours_open_ms=max(int(opens.timestamp() * 1000), now_ms + 1))


class ProgrammeRunner:
    """The chain of games folded from the journal; the programme's next game; the operator's commands."""

    log = Logger()

    def __init__(self, core: CommandCore, module: CentralModule, terms: PrizeTerms, clock: IReactorTime,
                 programme: ProgrammeConfig | None, timezone: str = "UTC") -> None:
        self.core = core
        self.module = module
        self.terms = terms
        self.clock = clock
        self.programme = programme
        self.zone = zoneinfo.ZoneInfo(timezone)
        self.chain = Chain()
        #: The one-off game each operator's request id made: ``(operator, request id) -> game``.
        self.requested: dict[tuple[str, str], str] = {}
        self.digest = ""
        self.running = False  # started: it schedules, and takes the operator's commands
        self._timer: IDelayedCall | None = None
        core.allow(PERMISSIONS)
        core.add_module(self)
        core.observers.append(self._committed)
        module.operator_commands.update({
            OPERATOR_PROGRAMME.name: self._status,
            OPERATOR_SCHEDULE_GAME.name: self._schedule_game,
            OPERATOR_PAUSE_PROGRAMME.name: self._pause,
            OPERATOR_RESUME_PROGRAMME.name: self._resume,
        })  # fmt: skip

    # --- The fold -------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        if record.type in _FOLDED:
            self.chain.apply(game_record(record))
        if record.type in _ONE_OFFS:
            stamp = record.payload.get(ACTOR_KEY)
            if isinstance(stamp, dict) and isinstance(stamp.get("request"), str):
                self.requested[(str(stamp.get("name")), stamp["request"])] = str(record.payload["game_id"])

    def reset(self) -> None:
        self.chain = Chain()
        self.requested = {}

    def savepoint(self) -> Any:
        """A copy of the chain, for the core's restore point (the chain is small: one link a game)."""
        return copy.deepcopy((self.chain, self.requested))

    def rollback(self, point: Any) -> None:
        # The point may be taken back again after another failed commit: a copy of it.
        self.chain, self.requested = copy.deepcopy(point)

    def checkpoint(self) -> Any:
        """The chain and the one-off games' request ids, for a checkpoint."""
        return encode({"chain": self.chain, "requested": self.requested})

    def restore(self, data: Any) -> None:
        state = decode(data)
        if not isinstance(state, dict) or not isinstance(state.get("chain"), Chain) \
                or not isinstance(state.get("requested"), dict):
            raise TypeError("the programme's checkpoint holds no chain")
        self.chain, self.requested = state["chain"], state["requested"]

    # --- Starting and stopping ----------------------------------------------------------

    @defer.inlineCallbacks
    def start(self):  # type: ignore[no-untyped-def]
        """Notify the template's terms if new (R94.3), then schedule what is due (after a kill: once)."""
        programme = self.programme
        if programme is not None:
            self.digest = library_digest(self.module.library[str(programme.template["series_label"])])
            template = programme.game_config(f"{programme.id_prefix}-programme", self.digest)
            admitted = yield self.terms.admit(template)
            if admitted.notified:
                self.log.info("The programme's prize terms are notified to the regulator")
            if not admitted.schedule:
                self.log.warn("The programme's prize percentages change, notified to the regulator; they apply from "
                              "{day} (R94.3), and until then its games play the terms in force",
                              day=_utc(admitted.applies_from_ms))
        self.running = True
        yield self.step()

    def stop(self) -> None:
        self.running = False
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    # --- The next game ----------------------------------------------------------------

    def _committed(self, record: Record) -> None:
        if self.running and record.type in _ENDS and self.chain.link(str(record.payload.get("game_id"))) is not None:
            self.clock.callLater(0, self.step)

    def _arm(self, delay_s: float) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = self.clock.callLater(delay_s, self.step)

    def _prizes(self, now_ms: int) -> tuple[PrizeShare, ...]:
        terms = self.terms.in_force(now_ms)
        if terms is None:  # no terms ever notified: the template's, which start() notifies first
            assert self.programme is not None
            return self.programme.game_config("x", self.digest).prizes
        return prizes_of_terms(terms)

    def _next(self, now_ms: int) -> CentralGameScheduled | Wait:
        """What the chain's next step is at ``now_ms``, on the state of this moment."""
        local = local_time(now_ms, self.zone, self.programme)
        prizes = self._prizes(now_ms) if self.programme is not None else ()
        return self.chain.next_game(self.programme, now_ms=now_ms, local=local, prizes=prizes, digest=self.digest)

    def step(self) -> defer.Deferred[CentralGameScheduled | Wait | None]:
        """Schedule the chain's next game if it is due now; fires with it, or with why not."""
        if not self.running:
            return defer.succeed(None)
        made: list[CentralGameScheduled | Wait] = []

        def decide(now_ms: int) -> list[Any]:
            decision = self._next(now_ms)
            made.append(decision)
            return [decision] if isinstance(decision, CentralGameScheduled) else []

        def done(_: Any) -> CentralGameScheduled | Wait:
            decision = made[0]
            if isinstance(decision, CentralGameScheduled):
                self._scheduled(decision)
            elif decision.until_ms is not None:
                self._arm(max(0, decision.until_ms - self.core.now_ms()) / 1000)
            return decision

        def failed(failure: Failure) -> None:
            if not failure.check(StorageUnavailable):  # that one raised its alarm already
                self.log.failure("The programme could not schedule its next game; trying again in {s} s", failure,
                                 s=RETRY_S)
            self._arm(RETRY_S)

        return self.core.execute(SYSTEM, "programme_schedule", decide).addCallbacks(done, failed)

    def _scheduled(self, event: CentralGameScheduled) -> None:
        self.module.reschedule(event.game_id)  # its sale opens opens_after_ms after the record
        carries = ", ".join(f"{p['pattern']['name']} {p['carry_in_cents']}" for p in event.config["prizes"])
        self.log.info("Scheduled network game {game} ({by}) after {after}, carrying in {carries} cents",
                      game=event.game_id, by="the programme" if event.chain == BY_PROGRAMME else "a one-off",
                      after=event.after_game or "no game (the chain's first)", carries=carries)

    # --- The operator's commands ------------------------------------------------------

    def _checked_running(self) -> None:
        if not self.running:
            raise NotNow("the central server is starting; send the command again in a moment")

    def _status(self, arguments: dict[str, Any], actor: Actor) -> defer.Deferred[dict[str, Any]]:
        chain, programme = self.chain, self.programme
        tail = chain.tail
        answer: dict[str, Any] = {
            "configured": programme is not None, "state": str(chain.phase), "reason": chain.paused_reason,
            "games_played": chain.programme_games, "games_limit": programme.games if programme else None,
            "queued_game": chain.queued.game_id if chain.queued else None,
            "storage_alarm": self.module.storage_alarm(),
        }  # fmt: skip
        if tail is not None:
            game = self.module.games.get(tail.game_id)
            answer.update(last_game=tail.game_id, last_phase=str(game.phase) if game else None)
            if tail.carries_out is not None:
                answer["carries"] = [{"pattern": k, "carry_cents": v} for k, v in tail.carries_out.items()]
        if not self.running:
            answer["waiting_for"] = "the central server is starting"
        else:
            decision = self._next(self.core.now_ms())
            answer["waiting_for"] = (decision.reason if isinstance(decision, Wait)
                                     else f"nothing: game {decision.game_id} is due now")[:200]
        return defer.succeed(answer)

    def _schedule_game(self, arguments: dict[str, Any], actor: Actor) -> defer.Deferred[dict[str, Any]]:
        try:
            self._checked_running()
            settings = {k: v for k, v in arguments.items() if k not in ("game_id", "request_id")}
            request = OneOff(arguments.get("game_id"), settings)
        except Exception as error:
            return defer.fail(error)
        request_id = arguments.get("request_id")
        if request_id is None:
            return self._one_off(request, actor)

        def answered(outcome: Any) -> dict[str, Any]:
            if not isinstance(outcome, Repeated):
                return outcome
            game_id = self.requested.get((actor.name, request_id))
            if game_id is None:  # its records are in the journal, and they made no game: cannot be
                raise NotNow(f"request {request_id} was carried out before, and scheduled no game")
            self.log.info("{name} sent request {request} again: it made {game} before; nothing more is scheduled",
                          name=actor.name, request=request_id, game=game_id)
            return {**self._game_answer(game_id), "repeated": True}

        return self.core.once(actor, request_id, lambda who: self._one_off(request, who)).addCallback(answered)

    def _one_off(self, request: OneOff, actor: Actor) -> defer.Deferred[dict[str, Any]]:
        made: list[CentralGameScheduled | CentralGameQueued] = []

        def decide(now_ms: int) -> list[Any]:
            local = local_time(now_ms, self.zone, self.programme)
            prizes = self._prizes(now_ms) if self.programme is not None else ()
            made.append(self.chain.one_off(self.programme, request, now_ms=now_ms, local=local, prizes=prizes,
                                           digest=self.digest))
            return list(made)

        def answered(records: list[Record]) -> dict[str, Any]:
            event = made[0]
            if isinstance(event, CentralGameScheduled):
                self._scheduled(event)
            return self._game_answer(event.game_id)

        return self.core.execute(actor, "programme_schedule", decide).addCallback(answered)

    def _game_answer(self, game_id: str) -> dict[str, Any]:
        """What the operator is told of a one-off game: queued, or scheduled with its opening and carries."""
        queued = self.chain.queued
        if queued is not None and queued.game_id == game_id:
            return {"game_id": game_id, "status": "queued", "after_game": queued.after_game}
        event = self.module.games[game_id].events[0]
        assert isinstance(event, CentralGameScheduled)
        opens = self.module.next_step(game_id)
        return {
            "game_id": game_id, "status": "scheduled", "after_game": event.after_game,
            "opens_at_ms": opens[0] if opens and opens[1] == "open_sale" else None,
            "carries": [{"pattern": p["pattern"]["name"], "carry_cents": p["carry_in_cents"]}
                        for p in event.config["prizes"]],
        }  # fmt: skip

    def _pause(self, arguments: dict[str, Any], actor: Actor) -> defer.Deferred[dict[str, Any]]:
        def decide(now_ms: int) -> list[Any]:
            self._checked_configured()
            return list(self.chain.pause(arguments["reason"]))

        def answered(_: Any) -> dict[str, Any]:
            tail = self.chain.tail
            self.log.info("The programme is paused by {name}: {reason}", name=actor.name, reason=arguments["reason"])
            return {"state": str(self.chain.phase), "last_game": tail.game_id if tail else None}

        return self.core.execute(actor, "programme_pause", decide).addCallback(answered)

    @defer.inlineCallbacks
    def _resume(self, arguments: dict[str, Any], actor: Actor):  # type: ignore[no-untyped-def]
        def decide(now_ms: int) -> list[Any]:
            self._checked_configured()
            return list(self.chain.resume())

        yield self.core.execute(actor, "programme_resume", decide)
        self.log.info("The programme is resumed by {name}", name=actor.name)
        next_step = yield self.step()
        answer: dict[str, Any] = {"state": str(self.chain.phase)}
        if isinstance(next_step, CentralGameScheduled):
            answer["next_game"] = next_step.game_id
        elif isinstance(next_step, Wait):
            answer["waiting_for"] = next_step.reason[:200]
        return answer

    def _checked_configured(self) -> None:
        self._checked_running()
        if self.programme is None:
            raise NotNow("this central server has no programme ([programme] in central.toml) to pause or resume")


def _utc(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


__all__ = ["ProgrammeRunner", "local_time"]

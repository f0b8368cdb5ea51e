"""The central server's network games on the command loop: decide, commit, then announce.

:class:`CentralModule` is the one module of the central server's
:class:`~server_kit.core.CommandCore`.  It folds the network games' records of the journal
(:mod:`protocol.records.central`) into :class:`~central_server.domain.game.CentralGame`
objects, so a restarted server holds every game exactly as its journal left it, and it
runs every change as a command of the core:

* the operator's and the clock's: ``schedule``, ``open_sale``, ``close_sale``, ``draw``,
  ``declare_not_played`` (R93.1, R93.9, R92.10, R96.2);
* a hall's (``buy_cards``, ``terminal_failed`` and the reads), decided by
  :func:`central_server.domain.wire.respond` with the hall the TLS certificate names,
  journaled with the hall's request id in the record's actor stamp;
* a hall's command that was refused: one ``central_command_refused`` record naming the
  peer, the command and the code, so the refusal is on file (the game is untouched); past
  the first few of a peer in an interval, refusals are counted and journaled as one
  ``central_refusals_counted`` record when the interval ends
  (:mod:`central_server.domain.refusals`), so no peer makes the journal grow at its
  sending rate.

The domain's commands apply their events to the live game as they decide (a million
cards cannot be copied per purchase), so the module counts the records of the command
being decided as already folded.  Commands are decided as they arrive, each on the
state the ones before it left, and the core commits those decided while a commit is in
flight together in the next transaction (the group commit): a purchase burst is a few
transactions, not one per purchase.  If a commit fails, the core rebuilds every module
from the journal, so the games drop what the failed batch decided; if a command's
records cannot even be sealed, its game is rebuilt at once from the records the core
holds.  What halls are told (:func:`central_server.domain.wire.announcements`) is
worked out when the events are decided and handed to :attr:`CentralModule.announce`
only after the commit, in the order of the commits.

A checkpoint (:meth:`CentralModule.checkpoint`) keeps each game as its events, and a
restore replays them against the library: the cards and their winners' detector are
rebuilt, never written out.

Timers run on the injected reactor clock: the opening of a sale (``opens_after_ms``
after the scheduling record), its deadline (``closes_at_ms``) and the next ball
(``next_ball_due_ms``) are all read from the journaled state, so a restart reschedules
each from the times in the journal.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from central_server.admission import Admission
from central_server.domain import wire
from central_server.domain.annex import AnnexPair, AnnexRelay, delivered
from central_server.domain.config import NetworkGameConfig
from central_server.domain.errors import BadArgument, EventError, NotNow
from central_server.domain.game import FINAL_PHASES, CentralGame, Phase
from central_server.domain.refusals import RefusalBudget, RefusalCount
from central_server.domain.wire import Announcement, UnknownGame
from protocol.balls import BallSource, RandomBallGenerator
from protocol import central_messages as m
from protocol.central_messages import CentralMessageError, Message, check_answer, check_arguments
from protocol.central_operator import (
    GAMES_PAGE,
    OPERATOR_GAMES,
    OPERATOR_MESSAGES,
    OPERATOR_NOT_PLAYED,
    OPERATOR_OPEN_SALE,
)
from protocol.chain import Record
from protocol.records import ACTOR_KEY, EPOCH_KEY, JournalRecord, build
from protocol.records.central import (
    GAME_RECORDS,
    CentralAnnexRelayed,
    CentralCommandRefused,
    CentralGameScheduled,
    CentralRecord,
    CentralRefusalsCounted,
    CentralStakeReturned,
)
from server_kit.core import Actor, CommandCore
from server_kit.db.faults import StorageUnavailable
from server_kit.journal.projection import decode, encode

#: The record of a hall's command that was refused with an error code.
REFUSED = CentralCommandRefused.type
#: The longest refusal message journaled: the code says what, this says the detail.
REFUSAL_TEXT = 300
#: After a timer's command failed (the database did not answer), try again this much later.
RETRY_S = 1.0

SYSTEM = Actor("central", "system")


def _counted(count: RefusalCount) -> CentralRefusalsCounted:
    return CentralRefusalsCounted(peer=count.peer, role=count.role, from_ms=count.from_ms, to_ms=count.to_ms,
                                  refused=count.refused, by_code=count.by_code, shown=count.shown)


#: The stamps the command core puts on every record: a game's fold needs none of them.
STAMPS = (ACTOR_KEY, EPOCH_KEY)


def game_record(record: Record) -> CentralRecord:
    """The network game's record a journaled one holds, without its actor and epoch stamps (as it was decided)."""
    payload = {key: value for key, value in record.payload.items() if key not in STAMPS}
    built = build(record.type, payload)
    assert isinstance(built, CentralRecord)
    return built


def _operator_answer(message: Message, answer: dict[str, Any]) -> dict[str, Any]:
    """An answer to the operator, checked against its declaration, without its empty fields."""
    shown = {k: v for k, v in answer.items() if v is not None}
    if "games" in shown:
        shown["games"] = [{k: v for k, v in row.items() if v is not None} for row in shown["games"]]
    check_answer(message, shown)
    return shown


#: Who may run which command: the clock (system), the operator, the halls.
PERMISSIONS: Mapping[str, frozenset[str]] = {
    "schedule": frozenset({"system", "operator"}),
    "open_sale": frozenset({"system", "operator"}),
    "close_sale": frozenset({"system"}),
    "draw": frozenset({"system"}),
    "declare_not_played": frozenset({"operator", "system"}),
    "hall_command": frozenset({"hall"}),
    "refused": frozenset({"hall", "operator"}),
    "refusals_counted": frozenset({"system"}),
}

Decided = tuple[list[CentralRecord], Any, str | None]


class CentralModule:
    """Every network game of the central server, folded from the journal and run by the core."""

    log = Logger()

    def __init__(
        self,
        core: CommandCore,
        library: Mapping[str, np.ndarray],
        clock: IReactorTime,
        *,
        opens_after: Mapping[str, int | None] | None = None,
        ball_source: Callable[[Sequence[int]], BallSource] = RandomBallGenerator,
        annex_pairs: Sequence[AnnexPair] = (),
    ) -> None:
        self.core = core
        self.library = dict(library)
        self.clock = clock
        self.opens_after = dict(opens_after or {})
        self._opens_configured = dict(self.opens_after)  # a restore starts from these, as a replay does
        self.ball_source = ball_source
        self.games: dict[str, CentralGame] = {}
        self.scheduled_at_ms: dict[str, int] = {}
        #: What the halls of each hall-annex pair told each other (R3.5.b).
        self.annex = AnnexRelay(tuple(annex_pairs))
        #: What the edge sends once a command committed; set by the composition root.
        self.announce: Callable[[Sequence[Announcement]], None] = lambda announcements: None
        #: Operator commands another part answers (the programme's), by name: ``(arguments, actor) -> answer``.
        self.operator_commands: dict[str, Callable[[dict[str, Any], Actor], defer.Deferred[dict[str, Any]]]] = {}
        self._committed: dict[str, int] = {}  # game -> events of it the core has folded
        self._ahead = 0  # records of the command being decided already applied by its decision
        self._timers: dict[str, IDelayedCall] = {}
        self.timers_running = False
        #: The halls' deciding commands received and not yet decided, when the endpoint queues
        #: them (set by the composition root): a sale closes once those received before its
        #: deadline are decided.
        self.admission: Admission | None = None
        #: Which refusals are journaled one by one, and the counts of the others.
        self.refusals = RefusalBudget()
        self._count_timer: IDelayedCall | None = None
        #: Why no sale may open now, told by the parts that know (play stopped after a stop of the
        #: central server, R92.5e): each returns the reason, or None.  A scheduled game's timer
        #: waits meanwhile; :meth:`start_timers` re-arms it.
        self.sale_checks: list[Callable[[], str | None]] = []
        #: Halls linked now in protocol version 3: each closes its own gate at a sale's deadline and says so
        #: (``gate_closed``); a sale closes once every one of its halls among them said it, or at the bound.
        self.gatekeepers: set[str] = set()
        #: Halls that ever linked in version 3 while this process ran: what one of them sends before its
        #: ``gate_closed`` it took before its gate closed.
        self.gated: set[str] = set()
        #: Of each game, the halls that said their gate closed.
        self.gates_closed: dict[str, set[str]] = {}
        #: Games whose sale's close waits for the halls' gates.
        self._closing: set[str] = set()
        core.allow(PERMISSIONS)
        core.add_module(self)

    # --- The fold -------------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.games, self.scheduled_at_ms, self._committed, self._ahead = {}, {}, {}, 0
        self.annex.reset()

    def savepoint(self) -> Any:
        """What the core's restore point keeps of the games (see :mod:`server_kit.core`): each
        game's events - journal records, never changed once made - and the folded tables.

        Copying the lists of events is cheap where a checkpoint of the games' arrays is not.
        """
        return ({game_id: list(game.events) for game_id, game in self.games.items()}, dict(self.scheduled_at_ms),
                dict(self.opens_after), dict(self._committed),
                ({hall: list(items) for hall, items in self.annex.streams.items()}, dict(self.annex.requests)))

    def rollback(self, point: Any) -> None:
        """The games as :meth:`savepoint` kept them: a game whose events grew since is replayed from them."""
        events, scheduled_at_ms, opens_after, committed, (streams, requests) = point
        games = {}
        for game_id, kept in events.items():
            game = self.games.get(game_id)
            if game is not None and len(game.events) == len(kept) and game.events[-1] is kept[-1]:
                games[game_id] = game  # nothing folded into it since
            else:
                games[game_id] = CentralGame.replay(kept, self._layouts(kept[0]))
        self.games, self.scheduled_at_ms, self._committed, self._ahead = games, dict(scheduled_at_ms), dict(committed), 0
        self.opens_after = dict(opens_after)
        self.annex.streams = {hall: list(items) for hall, items in streams.items()}
        self.annex.requests = dict(requests)

    def checkpoint(self) -> Any:
        """The games for a checkpoint (``server_kit/journal/checkpoints.py``): each game's events - its
        journal records -, when each was scheduled, and the items relayed between the halls of a pair.

        A game is kept as its events and replayed from them at :meth:`restore`, against the
        library: its cards and their winners' detector are the library's, rebuilt, never kept
        (a network game's detector over its cards is far larger than its records).
        """
        return encode({"games": {game_id: game.events for game_id, game in self.games.items()},
                       "scheduled_at_ms": self.scheduled_at_ms, "relayed": list(self.annex.requests.values())})

    def restore(self, data: Any) -> None:
        """The games as :meth:`checkpoint` kept them, each replayed from its events: the state a whole
        replay of the journal gives (raises before changing anything when ``data`` does not fit)."""
        state = decode(data)
        if not isinstance(state, dict) or sorted(state) != ["games", "relayed", "scheduled_at_ms"]:
            raise TypeError("the network games' checkpoint holds other fields")
        games, opens_after = {}, dict(self._opens_configured)
        for game_id, events in state["games"].items():
            scheduled = events[0] if isinstance(events, list) and events else None
            if not isinstance(scheduled, CentralGameScheduled) or scheduled.game_id != game_id:
                raise TypeError(f"the checkpoint's game {game_id} does not start with its scheduling")
            games[game_id] = CentralGame.replay(events, self._layouts(scheduled))
            if scheduled.opens_after_ms is not None:
                opens_after[game_id] = scheduled.opens_after_ms
        if sorted(state["scheduled_at_ms"]) != sorted(games):
            raise TypeError("the checkpoint's times of scheduling are not its games'")
        annex = AnnexRelay(self.annex.pairs)
        for relayed in state["relayed"]:
            if not isinstance(relayed, CentralAnnexRelayed):
                raise TypeError("the checkpoint's relayed items are not the relay's records")
            annex.apply(relayed)
        self.games, self.scheduled_at_ms, self.opens_after = games, dict(state["scheduled_at_ms"]), opens_after
        self.annex, self._ahead = annex, 0
        self._committed = {game_id: len(game.events) for game_id, game in games.items()}

    def apply(self, record: Record) -> None:
        if record.type == CentralAnnexRelayed.type:
            relayed = build(record.type, {k: v for k, v in record.payload.items() if k not in STAMPS})
            assert isinstance(relayed, CentralAnnexRelayed)
            self.annex.apply(relayed)  # a post decided here was folded when decided: not taken twice
            return
        if record.type not in GAME_RECORDS:
            return
        game_id = str(record.payload.get("game_id"))
        if self._ahead:
            self._ahead -= 1  # decided on the live game, now committed
            self._committed[game_id] += 1
            return
        event = game_record(record)
        if isinstance(event, CentralGameScheduled):
            if event.game_id in self.games:
                raise EventError(f"record {record.seq}: game {event.game_id} is scheduled twice")
            self.games[event.game_id] = CentralGame(event, self._layouts(event))
            self.scheduled_at_ms[event.game_id] = record.time_ms
            if event.opens_after_ms is not None:  # a game of the chain: its record says when its sale opens
                self.opens_after[event.game_id] = event.opens_after_ms
        else:
            game = self.games.get(game_id)
            if game is None:
                raise EventError(f"record {record.seq}: {event.type} of game {game_id}, which was never scheduled")
            game.apply(event)
        self._committed[game_id] = len(self.games[game_id].events)

    def _layouts(self, event: CentralGameScheduled) -> np.ndarray:
        label = event.config.get("series_label")
        layouts = self.library.get(str(label))
        if layouts is None:
            raise EventError(f"game {event.game_id} sells series {label}, which the central library does not hold")
        return layouts

    # --- Running a command ------------------------------------------------------------

    def _run(self, actor: Actor, command: str, decide: Callable[[CentralGame | None, int], Decided],
             game_id: str | None) -> defer.Deferred[Any]:
        """Run one command on the core: decided now, on the state the commands before it left."""
        made: list[tuple[Any, list[Announcement]]] = []

        def entries(now_ms: int) -> list[JournalRecord]:
            game = self.games.get(game_id) if game_id is not None else None
            events, result, touched = decide(game, now_ms)
            announcements: list[Announcement] = []
            if touched is not None and events:
                self._ahead = len(events)  # applied to the live game by the decision: apply() counts them
                announcements = wire.announcements(self.games[touched], events, now_ms=now_ms)
            made.append((result, announcements))
            return list(events)

        def committed(records: list[Record]) -> Any:
            result, announcements = made[0]
            if announcements:
                self.announce(announcements)
            if records and game_id is not None:
                self.reschedule(game_id)
            return result

        done = self.core.execute(actor, command, entries)
        if self._ahead:
            # The decision applied events whose records the core did not take (they could not
            # be sealed): the game goes back to the records it holds before the next command.
            self._ahead = 0
            if game_id is not None:
                self._rebuild(game_id)
        return done.addCallback(committed)

    def _rebuild(self, game_id: str) -> None:
        """The game as its records have it: what a decision applied without a record is forgotten (nobody saw it)."""
        kept = self.games[game_id].events[: self._committed[game_id]]
        assert isinstance(kept[0], CentralGameScheduled)
        self.games[game_id] = CentralGame.replay(kept, self._layouts(kept[0]))
        self.log.warn("A command's records of game {game} could not be sealed; the game is back at its records",
                      game=game_id)

    def _game(self, game: CentralGame | None, game_id: str) -> CentralGame:
        if game is None:
            raise UnknownGame(f"there is no network game {game_id}")
        return game

    # --- The operator's and the clock's commands ---------------------------------------

    def schedule(self, config: NetworkGameConfig, actor: Actor = SYSTEM) -> defer.Deferred[Any]:
        """Set a network game up (``central_game_scheduled``); refused if its id is taken."""

        def decide(_: CentralGame | None, now_ms: int) -> Decided:
            if config.game_id in self.games:
                raise BadArgument(f"game {config.game_id} is already scheduled")
            layouts = self.library.get(config.series_label)
            if layouts is None:
                raise BadArgument(f"the central library holds no series {config.series_label}")
            _, events = CentralGame.schedule(config, layouts)
            return events, None, None

        def scheduled(result: Any) -> Any:
            self.reschedule(config.game_id)
            return result

        return self._run(actor, "schedule", decide, None).addCallback(scheduled)

    def open_sale(self, game_id: str, actor: Actor = SYSTEM) -> defer.Deferred[Any]:
        """Open the game's sale for its window (R93.1); refused while play is stopped (R92.5e)."""

        def decide(game: CentralGame | None, now_ms: int) -> Decided:
            found = self._game(game, game_id)
            for check in self.sale_checks:
                if (refusal := check()) is not None:
                    raise NotNow(refusal)
            return found.open_sale(now_ms), None, game_id

        return self._run(actor, "open_sale", decide, game_id)

    def close_sale(self, game_id: str, actor: Actor = SYSTEM) -> defer.Deferred[Any]:
        """Close the sale at its deadline: the sales and the prizes (R93.9)."""
        return self._run(actor, "close_sale", lambda g, now: (self._game(g, game_id).close_sale(now), None, game_id),
                         game_id)

    def draw(self, game_id: str, actor: Actor = SYSTEM) -> defer.Deferred[Any]:
        """Draw the next ball with the random ball generator (R92.10), its winners and prizes."""

        def decide(game: CentralGame | None, now_ms: int) -> Decided:
            game = self._game(game, game_id)
            return game.draw_next(self.ball_source(game.balls), now_ms), None, game_id

        return self._run(actor, "draw", decide, game_id)

    def declare_not_played(self, game_id: str, reason: str, actor: Actor) -> defer.Deferred[Any]:
        """Force majeure (R96.2): the game is not played and every stake is returned.

        Fires with the refunds made: ``(cards, cents, halls)``.
        """

        def decide(game: CentralGame | None, now_ms: int) -> Decided:
            events = self._game(game, game_id).declare_not_played(reason, actor.name, now_ms)
            returned = [e for e in events if isinstance(e, CentralStakeReturned)]
            refunds = (sum(len(e.card_numbers) for e in returned), sum(e.amount_cents for e in returned),
                       len({e.hall_id for e in returned}))
            return events, refunds, game_id

        return self._run(actor, "declare_not_played", decide, game_id)

    # --- The operator's commands (protocol/central_operator.py) --------------------------

    def operator_command(self, name: str, arguments: Mapping[str, Any], operator: str) -> defer.Deferred[dict[str, Any]]:
        """Answer operator ``operator``'s command ``name``; fails with a :class:`CentralError`."""
        message = OPERATOR_MESSAGES.get(name)
        try:
            if message is None:
                raise BadArgument(f"there is no operator command {name!r}")
            args = check_arguments(message, arguments)
        except CentralMessageError as error:
            return defer.fail(BadArgument(str(error)))
        except BadArgument as error:
            return defer.fail(error)
        actor = Actor(operator, "operator")
        if message is OPERATOR_GAMES:
            return defer.succeed(self._games_page(args["after"]))
        answer = self.operator_commands.get(message.name)
        if answer is not None:
            return answer(args, actor).addCallback(lambda values: _operator_answer(message, values))
        if message.name not in (OPERATOR_OPEN_SALE.name, OPERATOR_NOT_PLAYED.name):
            return defer.fail(NotNow(f"this central server does not take {message.name} (it has no programme)"))
        game_id = args["game_id"]
        if game_id not in self.games:
            return defer.fail(UnknownGame(f"there is no network game {game_id}"))
        if message is OPERATOR_OPEN_SALE:

            def opened(_: Any) -> dict[str, Any]:
                game = self.games[game_id]
                assert game.closes_at_ms is not None
                return _operator_answer(message, {
                    "game_id": game_id, "closes_at_ms": game.closes_at_ms,
                    "remaining_ms": game.remaining_ms(self.core.now_ms()) or 0,
                })  # fmt: skip

            return self.open_sale(game_id, actor).addCallback(opened)

        def declared(refunds: tuple[int, int, int]) -> dict[str, Any]:
            cards, cents, halls = refunds
            return _operator_answer(message, {
                "game_id": game_id, "refunded_cards": cards, "refunded_cents": cents, "hall_count": halls,
            })  # fmt: skip

        return self.declare_not_played(game_id, args["reason"], actor).addCallback(declared)

    def _games_page(self, after: int) -> dict[str, Any]:
        games = list(self.games.values())
        rows = [self.game_row(game) for game in games[after : after + GAMES_PAGE]]
        return _operator_answer(OPERATOR_GAMES, {
            "games": rows, "more": len(games) > after + GAMES_PAGE, "game_count": len(games),
            "storage_alarm": self.storage_alarm(),
        })  # fmt: skip

    def storage_alarm(self) -> str | None:
        """Why every command is refused now, while the storage cannot take a commit (for the operator)."""
        fault = self.core.storage_fault
        return str(fault)[:600] if fault is not None else None

    def game_row(self, game: CentralGame) -> dict[str, Any]:
        """Where ``game`` stands, as the operator's list shows it."""
        opens_after = self.opens_after.get(game.game_id)
        sold = game.sales_by_hall().values()
        return {
            "game_id": game.game_id, "phase": str(game.phase), "series": game.config.series_label,
            "price_cents": game.config.price_cents, "hall_count": len(game.config.halls),
            "opens_at_ms": (self.scheduled_at_ms[game.game_id] + opens_after
                            if game.phase is Phase.SCHEDULED and opens_after is not None else None),
            "closes_at_ms": game.closes_at_ms,
            "cards_in_play": sum(cards for cards, _ in sold), "sales_cents": sum(cents for _, cents in sold),
            "ball_count": len(game.balls), "winner_count": len(game.winners),
        }  # fmt: skip

    # --- The halls' commands -------------------------------------------------------------

    def hall_command(self, name: str, arguments: Mapping[str, Any], from_hall: str,
                     received_ms: int | None = None) -> defer.Deferred[dict[str, Any]]:
        """Answer hall ``from_hall``'s command ``name`` (after ``hello``); fails with a :class:`CentralError`.

        ``received_ms``: when the endpoint received it (:mod:`central_server.admission`); a
        purchase is decided as of that time.  ``None``: as of now.
        """
        if name in (m.ANNEX_POST.name, m.ANNEX_FETCH.name):
            return self.annex_command(name, arguments, from_hall)
        if name == m.GATE_CLOSED.name:
            try:
                return defer.succeed(self.gate_closed(arguments, from_hall))
            except Exception as error:
                return defer.fail(error)
        request = arguments.get("request_id")
        actor = Actor(from_hall, "hall", request if isinstance(request, str) else None)
        game_id = arguments.get("game_id")
        key = game_id if isinstance(game_id, str) and game_id in self.games else None

        def decide(_: CentralGame | None, now_ms: int) -> Decided:
            as_of = now_ms if received_ms is None else min(received_ms, now_ms)
            gate_open = name == m.BUY_CARDS.name and key is not None and self._gate_open(key, from_hall, as_of)
            response = wire.respond(self.games.get, name, arguments, from_hall=from_hall, now_ms=as_of,
                                    gate_open=gate_open)
            return list(response.events), response.answer, key

        return self._run(actor, "hall_command", decide, key)

    # --- The halls' gates (protocol version 3) ---------------------------------------------

    def _gate_open(self, game_id: str, hall: str, as_of: int) -> bool:
        """Whether a purchase of ``hall`` received at ``as_of`` was taken before its gate closed: the hall keeps
        its gate (version 3), has not said it closed, and the bound after the deadline is not reached."""
        closes_at = self.games[game_id].closes_at_ms
        return (closes_at is not None and hall in self.gated and hall not in self.gates_closed.get(game_id, ())
                and as_of < closes_at + m.GATE_BOUND_MS)

    def gate_closed(self, arguments: Mapping[str, Any], from_hall: str) -> dict[str, Any]:
        """A hall's ``gate_closed``: noted (it comes after every purchase the hall took before its gate); a
        close waiting for the gates goes on once none is left."""
        try:
            args = check_arguments(m.GATE_CLOSED, arguments)
        except CentralMessageError as error:
            raise BadArgument(str(error)) from None
        game = self.games.get(args["game_id"])
        if game is None:
            raise UnknownGame(f"there is no network game {args['game_id']}")
        game.check_speaker(from_hall, args["hall_id"])
        closed = self.gates_closed.setdefault(game.game_id, set())
        if from_hall not in closed:
            closed.add(from_hall)
            self.log.info("Hall {hall}'s gate of {game} closed after {n} purchase(s)", hall=from_hall,
                          game=game.game_id, n=args["purchases"])
            self._gates_moved(game.game_id)
        return {}

    def gate_linked(self, hall: str) -> None:
        """``hall`` linked in protocol version 3: it keeps its gate at each deadline."""
        self.gatekeepers.add(hall)
        self.gated.add(hall)

    def gate_unlinked(self, hall: str) -> None:
        """``hall``'s link is lost: a close does not wait for its gate any more."""
        self.gatekeepers.discard(hall)
        for game_id in list(self._closing):
            self._gates_moved(game_id)

    def gates_waiting(self, game_id: str) -> list[str]:
        """The halls linked in version 3 whose gate of ``game_id`` has not closed yet."""
        game = self.games[game_id]
        closed = self.gates_closed.get(game_id, set())
        return sorted(h for h in self.gatekeepers if h in game.config.halls and h not in closed)

    def _gates_moved(self, game_id: str) -> None:
        if game_id in self._closing and self.timers_running:
            self.reschedule(game_id, 0)

    def annex_command(self, name: str, arguments: Mapping[str, Any], from_hall: str) -> defer.Deferred[dict[str, Any]]:
        """A hall-annex pair's post or fetch (R3.5.b): a post is journaled, answered after the commit,
        then pushed to the partner (``annex_delivered``)."""
        if name == m.ANNEX_FETCH.name:
            try:
                return defer.succeed(self.annex.fetch(from_hall, arguments))
            except Exception as error:
                return defer.fail(error)
        made: list[tuple[CentralAnnexRelayed | None, dict[str, Any]]] = []

        def entries(now_ms: int) -> list[JournalRecord]:
            relayed, answer = self.annex.post(from_hall, arguments)
            made.append((relayed, answer))
            return [relayed] if relayed is not None else []

        def committed(records: list[Record]) -> dict[str, Any]:
            relayed, answer = made[0]
            if relayed is not None:
                self.announce([Announcement(relayed.to_hall, m.ANNEX_DELIVERED, delivered(relayed))])
            return answer

        done = self.core.execute(Actor(from_hall, "hall"), "hall_command", entries)
        return done.addCallback(committed)

    def refused(self, peer: str, command: str, code: str, message: str, *, role: str = "hall") -> defer.Deferred[Any]:
        """Put a refused command of a hall (or an operator) on file: peer, command, code, the message it was told.

        Past the peer's refusals journaled one by one in this interval, it is only counted
        (fires at once with nothing written); the count is journaled when the interval ends.
        """
        text = message if len(message) <= REFUSAL_TEXT else message[: REFUSAL_TEXT - 3] + "..."
        if not self.refusals.take(peer, role, command[:64], code, text, self.core.now_ms()):
            self._arm_count_timer()
            return defer.succeed(None)
        refusal = CentralCommandRefused(peer=peer, command=command[:64], code=code, message=text)

        def entries(now_ms: int) -> list[JournalRecord]:
            return [refusal]

        return self.core.execute(Actor(peer, role), "refused", entries)

    def _arm_count_timer(self) -> None:
        due = self.refusals.next_due_ms()
        if due is None or (self._count_timer is not None and self._count_timer.active()):
            return
        self._count_timer = self.clock.callLater(max(0, due - self.core.now_ms() + 1) / 1000, self._journal_counts)

    def _journal_counts(self) -> None:
        """Journal the counts of the refusal intervals that have ended, one record a peer."""
        self._count_timer = None
        counts = self.refusals.due(self.core.now_ms())

        def entries(now_ms: int) -> list[JournalRecord]:
            return [_counted(count) for count in counts]

        def failed(failure: Failure) -> None:
            self.log.failure("Could not journal the count of {n} refused commands of {peers}", failure,
                             n=sum(c.refused for c in counts), peers=", ".join(c.peer for c in counts))

        if counts:
            self.core.execute(SYSTEM, "refusals_counted", entries).addErrback(failed)
        self._arm_count_timer()

    # --- Timers -----------------------------------------------------------------------

    def start_timers(self) -> None:
        """Schedule every game's next step from its journaled times (at start, after recovery)."""
        self.timers_running = True
        for game_id in list(self.games):
            self.reschedule(game_id)

    def stop_timers(self) -> None:
        self.timers_running = False
        if self._count_timer is not None and self._count_timer.active():
            self._count_timer.cancel()
        self._count_timer = None
        if self.refusals.pending():
            self.log.warn("Stopping with {n} refused commands counted and not yet journaled", n=self.refusals.pending())
        for call in self._timers.values():
            if call.active():
                call.cancel()
        self._timers.clear()

    def _wait_for_gates(self, game_id: str) -> bool:
        """Whether the sale's close waits for halls' gates (its timer set for the bound); logged once."""
        deadline = self.games[game_id].closes_at_ms
        assert deadline is not None
        waiting = self.gates_waiting(game_id)
        bound = deadline + m.GATE_BOUND_MS
        now = self.core.now_ms()
        if waiting and now < bound:
            if game_id not in self._closing:
                self.log.info("The sale of {game} closes once the gates of {halls} closed, at the latest {ms} ms "
                              "after its deadline", game=game_id, halls=", ".join(waiting), ms=m.GATE_BOUND_MS)
            self._closing.add(game_id)
            self._timers[game_id] = self.clock.callLater((bound - now + 1) / 1000, self._fire, game_id, "close_sale")
            return True
        if waiting:
            self.log.warn("The sale of {game} closes {ms} ms after its deadline without the gate of {halls}: what "
                          "they send now is refused", game=game_id, ms=m.GATE_BOUND_MS, halls=", ".join(waiting))
        self._closing.discard(game_id)
        return False

    def armed(self, game_id: str) -> bool:
        """Whether the game's timer is set for its next step (nothing of it is in flight)."""
        call = self._timers.get(game_id)
        return call is not None and call.active()

    def next_step(self, game_id: str) -> tuple[int, str] | None:
        """When the game's next timed step is due (central clock, ms) and which, or ``None``."""
        game = self.games[game_id]
        if game.phase is Phase.SCHEDULED:
            after = self.opens_after.get(game_id)
            if after is None or any(check() is not None for check in self.sale_checks):
                return None
            return self.scheduled_at_ms[game_id] + after, "open_sale"
        if game.phase is Phase.SELLING:
            assert game.closes_at_ms is not None
            return game.closes_at_ms, "close_sale"
        if game.phase in FINAL_PHASES:
            return None
        due = game.next_ball_due_ms
        return (due, "draw") if due is not None else None

    def reschedule(self, game_id: str, delay_s: float | None = None) -> None:
        """(Re)arm the game's one timer for its next step."""
        old = self._timers.pop(game_id, None)
        if old is not None and old.active():
            old.cancel()
        if not self.timers_running or game_id not in self.games:
            return
        step = self.next_step(game_id)
        if step is None:
            return
        due, action = step
        if delay_s is None:
            # One millisecond past the due time: the reactor's float seconds must not read
            # as the millisecond before it, which the domain would refuse as too early.
            delay_s = max(0, due - self.core.now_ms() + 1) / 1000
        self._timers[game_id] = self.clock.callLater(delay_s, self._fire, game_id, action)

    def _fire(self, game_id: str, action: str, answered: bool = False) -> None:
        self._timers.pop(game_id, None)
        if action == "close_sale" and self.admission is not None:
            deadline = self.games[game_id].closes_at_ms
            assert deadline is not None
            if self.admission.received_before(deadline):
                # Purchases received before the deadline still wait to be decided on the open
                # sale: the sale closes once they are (central_server/admission.py).
                waited = self.admission.decided_before(deadline)
                waited.addCallback(lambda _: self._fire(game_id, action) if self.timers_running else None)
                return
        if action == "close_sale" and not answered:
            # The purchases decided are answered before the close is decided: the close builds the
            # winners' detector over every card sold, which the halls' last answers would wait for.
            # It decides nothing new about them (they are in the state already, R93.8).
            flushed = self.core.flushed()
            flushed.addCallback(lambda _: self._fire(game_id, action, True) if self.timers_running else None)
            return
        if action == "close_sale" and self._wait_for_gates(game_id):
            return
        done: defer.Deferred[Any] = getattr(self, action)(game_id)

        def failed(failure: Failure) -> None:
            if failure.check(NotNow):
                self.reschedule(game_id)  # its time moved (a restart, a clock step): as the state says
                return
            if failure.check(StorageUnavailable):  # the alarm is raised already: tried again, quietly
                self.reschedule(game_id, RETRY_S)
                return
            self.log.failure("The {action} of game {game} failed; trying again in {s} s", failure,
                             action=action, game=game_id, s=RETRY_S)
            self.reschedule(game_id, RETRY_S)

        done.addErrback(failed)

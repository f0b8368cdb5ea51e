"""A central server for the hall's unit tests: the real central domain behind the hall's port.

:class:`FakeCentral` decides with the central server's own rules
(:class:`central_server.domain.game.CentralGame`, answers and pushes by
:mod:`central_server.domain.wire`), keeps nothing durable and has no socket: a
connection is a :class:`FakeConnection`, the :class:`~hall_server.network.relay.CentralPort`
the hall's relay is given, and the pushes go to the relay as the AMP edge would hand
them.  The tests make it fail where a network fails: an answer decided and lost, a
push that never arrives, the link cut.
"""

from __future__ import annotations

import random
from typing import Any, Mapping

import numpy as np
from twisted.internet import defer
from twisted.python.failure import Failure

from central_server.domain.config import NetworkGameConfig, PrizeShare, library_digest
from central_server.domain.errors import CentralError
from central_server.domain.game import CentralGame
from central_server.domain.wire import answer_hello, announcements, games_at_hello, respond
from hall_server.network.relay import NetworkRelay
from protocol.patterns import BINGO, LINE
from protocol.strips import sample_strips
from server_kit.amp.commands import error_class

#: 600 cards: room for a few players' purchases.
LIBRARY = sample_strips(100, random.Random(2027).randbytes).reshape(-1, 27)
HALLS = ("hall-1", "hall-2")


def game_config(game_id: str = "net-1", **changes: Any) -> NetworkGameConfig:
    fields: dict[str, Any] = {
        "game_id": game_id, "halls": HALLS, "price_cents": 100, "max_price_cents": 200,
        "prizes": (PrizeShare(LINE, 2000, 0), PrizeShare(BINGO, 5000, 0)),
        "sale_window_ms": 60_000, "ball_interval_ms": 2_000, "series_label": "V1",
        "series_cards": len(LIBRARY), "library_digest": library_digest(LIBRARY),
    }  # fmt: skip
    fields.update(changes)
    return NetworkGameConfig(**fields)


class LostAnswer(ConnectionError):
    """The connection dropped after the central server decided and before its answer arrived."""


class FakeConnection:
    """One connection of the hall to the fake central server."""

    def __init__(self, central: "FakeCentral", relay: NetworkRelay) -> None:
        self.central = central
        self.relay = relay
        self.open = True

    def call(self, name: str, arguments: Mapping[str, Any]) -> defer.Deferred[dict[str, Any]]:
        if not self.open:
            return defer.fail(ConnectionError("the connection is closed"))
        return self.central.answer(self, name, dict(arguments))

    def close(self) -> None:
        if self.open:
            self.open = False
            self.relay.disconnected(self)


class FakeCentral:
    """The central server's rules, no journal, no socket; ``now`` is its clock in ms."""

    def __init__(self, hall_id: str = "hall-1", library: np.ndarray = LIBRARY) -> None:
        self.hall_id = hall_id
        self.library = library
        self.games: dict[str, CentralGame] = {}
        self.now = 1_780_000_000_000
        self.connection: FakeConnection | None = None
        self.calls: list[tuple[str, dict[str, Any]]] = []
        #: The next this many changing commands are decided, then the connection drops.
        self.lose_answers = 0
        #: Pushes are not sent while this is set (they are lost, as to a hall that is away).
        self.muted = False
        #: What each push came to at the hall: None (taken) or the error code it was refused with.
        self.push_results: list[tuple[str, str | None]] = []
        #: Say the central clock in ``hello``'s answer (protocol version 3), as the real one does.
        self.tells_clock = False
        #: The ``gate_closed`` the hall said, in order.
        self.gates: list[dict[str, Any]] = []

    # --- The operator and the clock ------------------------------------------------------

    def schedule(self, game_id: str = "net-1", **changes: Any) -> CentralGame:
        game, _ = CentralGame.schedule(game_config(game_id, **changes), self.library)
        self.games[game_id] = game
        return game

    def open_sale(self, game_id: str = "net-1") -> None:
        self._announce(game_id, self.games[game_id].open_sale(self.now))

    def close_sale(self, game_id: str = "net-1") -> None:
        game = self.games[game_id]
        assert game.closes_at_ms is not None
        self.now = max(self.now, game.closes_at_ms)
        self._announce(game_id, game.close_sale(self.now))

    def draw(self, ball: int, game_id: str = "net-1") -> None:
        game = self.games[game_id]
        due = game.next_ball_due_ms
        assert due is not None
        self.now = max(self.now, due)
        self._announce(game_id, game.ball_drawn(ball, self.now))

    def draw_until_closed(self, game_id: str = "net-1", seed: int = 7) -> list[int]:
        order = list(range(1, 91))
        random.Random(seed).shuffle(order)
        drawn = []
        for ball in order:
            if ball in self.games[game_id].balls:
                continue
            if self.games[game_id].phase.value in ("closed", "not_played"):
                break
            self.draw(ball, game_id)
            drawn.append(ball)
        return drawn

    def not_played(self, reason: str, game_id: str = "net-1") -> None:
        self._announce(game_id, self.games[game_id].declare_not_played(reason, "operator", self.now))

    # --- The hall's connection ------------------------------------------------------------

    def connect(self, relay: NetworkRelay) -> FakeConnection:
        """A new connection: the relay says hello on it and catches up; then, as the AMP edge does,
        the hall is told of its games under way (:func:`games_at_hello`) unless pushes are muted."""
        if self.connection is not None:
            self.connection.close()
        self.connection = FakeConnection(self, relay)
        relay.connected(self.connection)
        if not self.muted and self.connection is not None and relay.version is not None:
            for told in games_at_hello(self.games.values(), self.hall_id, relay.version, now_ms=self.now):
                self.push(told.message.name, told.arguments).addErrback(lambda failure: None)
        return self.connection

    def cut(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def answer(self, connection: FakeConnection, name: str, arguments: dict[str, Any]) -> defer.Deferred[dict[str, Any]]:
        if name == "buy_cards_batch":
            self.calls.append((name, arguments))
            answers = []
            for purchase in arguments["purchases"]:
                try:
                    answers.append(self._decide(connection, "buy_cards", dict(purchase)))
                except CentralError as error:
                    answers.append({"request_id": purchase["request_id"], "error_code": error.code, "error": str(error)})
            return defer.succeed({"answers": answers})
        self.calls.append((name, arguments))
        try:
            if name == "hello":
                return defer.succeed(answer_hello(arguments, from_hall=self.hall_id, members=HALLS, central_id="central-a",
                                                  now_ms=self.now if self.tells_clock else None))
            if name == "gate_closed":
                self.gates.append(arguments)
                return defer.succeed({})
            response = respond(self.games.get, name, arguments, from_hall=self.hall_id, now_ms=self.now)
        except CentralError as error:
            return defer.fail(Failure(error_class(error.code)(str(error))))
        game_id = arguments.get("game_id")
        if response.events and game_id in self.games:
            changed = self.lose_answers > 0
            self._announce(game_id, list(response.events))
            if changed:
                self.lose_answers -= 1
                connection.close()
                self.connection = None
                return defer.fail(LostAnswer("the answer was lost with the connection"))
        return defer.succeed(dict(response.answer))

    def _decide(self, connection: FakeConnection, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One purchase of a batch, decided as ``buy_cards`` is (raises its :class:`CentralError`)."""
        response = respond(self.games.get, name, arguments, from_hall=self.hall_id, now_ms=self.now)
        game_id = arguments.get("game_id")
        if response.events and game_id in self.games:
            self._announce(game_id, list(response.events))
        return dict(response.answer)


    def _announce(self, game_id: str, events: list[Any]) -> None:
        game = self.games[game_id]
        for announcement in announcements(game, events, now_ms=self.now):
            if announcement.hall_id != self.hall_id or self.muted or self.connection is None:
                continue
            # What the hall made of it is in push_results; a refusal is the hall's answer, not a fault here.
            self.push(announcement.message.name, announcement.arguments).addErrback(lambda failure: None)

    def push(self, name: str, arguments: dict[str, Any]) -> defer.Deferred[None]:
        """Send one push to the connected hall, as the AMP edge delivers it."""
        assert self.connection is not None
        taken = self.connection.relay.push(name, arguments)

        def noted(outcome: Any) -> Any:
            code = getattr(outcome.value, "code", "internal_error") if isinstance(outcome, Failure) else None
            self.push_results.append((name, code))
            return outcome

        taken.addBoth(noted)
        return taken

    def decisions(self, game_id: str = "net-1") -> list[Any]:
        """Every purchase decision the central server took in the game."""
        game = self.games[game_id]
        return [e for e in game.events if e.type in ("central_purchase_confirmed", "central_purchase_refused")]

"""The draw: balls from the ball source, each committed with the cards it completes (R85.5, R92.10-11).

Virtual cards win without a claim (R93.10); a ball may be voided (ball recall) or entered
by hand while a game is finished by hand (R86.2)."""

from __future__ import annotations

from typing import Mapping, Sequence

from twisted.internet.defer import Deferred, ensureDeferred, maybeDeferred

from hall_server.hall.games.common import DeferredBallSource, GameModuleError, GamesBase, _entry, _whole
from hall_server.hall.games.state import Game, _fork
from protocol.balls import BallSource
from protocol.cards import Card
from protocol.chain import Record
from protocol.claims import CardRef, check_claim
from protocol.events import BallDrawn
from protocol.game import Input, InvalidTransition, TraditionalGame, describe
from server_kit.core import Actor
from server_kit.journal.port import Entry


class DrawCommands(GamesBase):
    """Drawing, entering and voiding balls; the wins of virtual cards."""

    def _source_for(self, drawn: Sequence[int]) -> BallSource | DeferredBallSource:
        """The ball source, rebuilt from the journal's draw when it does not match it.

        A source that drew a ball whose record was never committed (a refused decision,
        a crash) no longer matches; a new one from the journal's balls knows nothing of
        that ball, so nobody ever saw it (announce after commit).
        """
        if self._source is None or tuple(self._source.drawn) != tuple(drawn):
            self._source = self.ball_sources(tuple(drawn))
        return self._source

    def _completions(self, game: Game, ball: int) -> dict[str, list[str]]:
        """The cards ``ball`` completes a row or the card of, per the detector (R85.5, R92.11)."""
        detector = game.detector
        assert detector is not None, "the detector is built when the sale closes"
        # The detector marks the ball to tell; the mark is undone so that only the
        # committed record, applied, advances it.
        completed = detector.ball_drawn(ball)
        try:
            refs = [game.refs[i] for i in completed.rows], [game.refs[i] for i in completed.cards]
        finally:
            detector.last_ball_voided()
        if game.machine.failed_terminals:
            # Cards refunded with a failed terminal left the game (R96.3).
            in_play = game.machine.in_play
            refs = [r for r in refs[0] if r in in_play], [r for r in refs[1] if r in in_play]
        return {
            "completed_line": [ref.label for ref in refs[0]],
            "completed_bingo": [ref.label for ref in refs[1]],
        }

    def _virtual_wins(self, game: Game, machine: TraditionalGame, completions: Mapping[str, list[str]]) -> list[Entry]:
        """Virtual cards completing a pattern on this ball win it without a claim (R93.10, R85.9).

        The system marks virtual cards itself, so it is their claimant: each one
        ``check_claim`` finds winning is fed to ``machine`` (a decision's fork), and
        its ``prize_won`` is recorded with the ball.  Paper cards still need their
        player's call and the table chief's verification (R85.6).
        """
        if not self.virtual_series:
            return []
        labels = dict.fromkeys([*completions["completed_line"], *completions["completed_bingo"]])
        refs = sorted(
            ref for ref in (CardRef(*(int(part) for part in label.split("-"))) for label in labels)
            if self.is_virtual(ref)
        )
        layouts = {
            ref: Card.from_cells(int(n) for n in self.virtual_series[ref.series][ref.number - 1]) for ref in refs
        }
        entries: list[Entry] = []
        for ref in refs:
            verdict = check_claim(ref, layouts, machine.drawn, machine.won)
            if verdict.wins:
                entries += [_entry(e) for e in machine.claim_checked(verdict)]
        return entries

    def draw_ball(self, actor: Actor) -> Deferred[list[Record]]:
        """Draw the next ball (R85.5, R92.10): take it from the ball source, then commit it.

        The ball comes first - the software generator's at once, the blower's once its
        reader has read it - and only then is its ``ball_drawn`` decided and committed,
        and shown after the commit.  The source is asked only after a check, in turn
        with the other commands, that the actor may draw and the game takes a ball, so
        a refused draw moves no ball.  A ball the source gave whose record was not
        committed was seen by nobody: the software generator forgets it, the blower
        gives it again to the next draw.
        """
        return self._draw_turn.run(lambda: ensureDeferred(self._draw_ball(actor)))

    async def _draw_ball(self, actor: Actor) -> list[Record]:
        before: list[tuple[int, ...]] = []

        def check(now: int) -> list[Entry]:
            before.append(tuple(self._game_taking_a_ball().machine.drawn))
            return []  # nothing to record yet: the ball is not known

        await self.core.execute(actor, "draw_ball", check)
        ball = await maybeDeferred(self._source_for(before[0]).draw)
        assert isinstance(ball, int), "a ball source gives ball numbers"

        def decide(now: int) -> list[Entry]:
            game = self._game_taking_a_ball()
            if tuple(game.machine.drawn) != before[0]:
                raise GameModuleError("the game's balls changed while the ball was drawn; draw again")
            machine = _fork(game.machine)
            (drawn,) = machine.draw_ball(ball)
            completions = self._completions(game, ball)
            entries = [_entry(drawn, **completions), *self._virtual_wins(game, machine, completions)]
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return await self.core.execute(actor, "draw_ball", decide)

    def _game_taking_a_ball(self) -> Game:
        game = self.require_game()
        if not game.machine.accepts(Input.BALL_DRAWN):
            raise InvalidTransition(f"cannot draw a ball {describe(game.machine.state)}")
        return game

    def enter_ball(self, actor: Actor, ball: int) -> Deferred[list[Record]]:
        """The room chief enters a ball while finishing the game by hand (R86.2)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            (drawn,) = machine.enter_ball(_whole(ball, "a ball"), entered_by=actor.name)
            assert isinstance(drawn, BallDrawn)
            completions = self._completions(game, drawn.ball)
            entries = [_entry(drawn, **completions), *self._virtual_wins(game, machine, completions)]
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return self.core.execute(actor, "enter_ball", decide)

    def void_ball(self, actor: Actor, ball: int, reason: str) -> Deferred[list[Record]]:
        """Void the last ball drawn, with the reason (ball recall)."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            (voided,) = _fork(game.machine).void_ball(
                _whole(ball, "a ball"), voided_by=actor.name, role=str(actor.role), reason=str(reason).strip()
            )
            return [_entry(voided)]

        return self.core.execute(actor, "void_ball", decide)

"""The draw: balls from the ball source, each committed with the cards it completes (R85.5, R92.10-11).

Virtual cards win without a claim (R93.10), and a line or bingo found stops the draw until
its prize is closed (R85.6, :mod:`.claims`); a misread ball is corrected by the room chief
and the table chief together (R85.5); a ball is entered by hand while a game is finished
by hand (R86.2)."""

from __future__ import annotations

from typing import Mapping, Sequence

from twisted.internet.defer import Deferred, ensureDeferred, maybeDeferred

from hall_server.hall.games.common import (
    DeferredBallSource,
    GameModuleError,
    GamesBase,
    _text,
    _whole,
    close_open_prizes,
    recorded,
)
from hall_server.hall.games.state import Game, _fork
from hall_server.hall.roles import Role
from protocol.balls import BallSource
from protocol.cards import Card
from protocol.chain import Record
from protocol.claims import CardRef, check_claim
from protocol.errors import N_, Template
from protocol.events import BallDrawn
from protocol.game import Input, InvalidTransition, TraditionalGame, describe
from protocol.records import JournalRecord
from protocol.records.game import BallCorrectionCancelled, BallCorrectionSigned
from server_kit.core import Actor

#: The two chiefs who correct a misread ball together (R85.5).
CORRECTING_ROLES = (Role.ROOM_CHIEF, Role.TABLE_CHIEF)


def _role_name(role: str) -> str:
    return role.replace("_", " ")


#: A correction signed by one chief, which the other signs or either cancels before the next ball: by the
#: role of the chief who signed it.
_CORRECTION_PENDING: dict[str, Template] = {
    Role.ROOM_CHIEF: N_("the room chief signed the correction of ball {count} ({misread} read as {corrected}): "
                        "the other chief signs it, or either cancels it, before the next ball"),
    Role.TABLE_CHIEF: N_("the table chief signed the correction of ball {count} ({misread} read as {corrected}): "
                         "the other chief signs it, or either cancels it, before the next ball"),
}
#: A chief signing a correction twice, by that chief's role.
_SIGNED_ALREADY: dict[str, Template] = {
    Role.ROOM_CHIEF: N_("the room chief has already signed this correction; the table chief signs it"),
    Role.TABLE_CHIEF: N_("the table chief has already signed this correction; the room chief signs it"),
}
#: A signature of another correction than the one waiting, by the role of the chief who signed that one.
_OTHER_CORRECTION: dict[str, Template] = {
    Role.ROOM_CHIEF: N_("the room chief signed ball {count} as {corrected}, not {misread}; "
                        "sign that correction, or cancel it first"),
    Role.TABLE_CHIEF: N_("the table chief signed ball {count} as {corrected}, not {misread}; "
                         "sign that correction, or cancel it first"),
}


class DrawCommands(GamesBase):
    """Drawing, correcting and entering balls; the wins of virtual cards."""

    def _source_for(self, drawn: Sequence[int]) -> BallSource | DeferredBallSource:
        """The ball source, rebuilt from the journal's draw when it does not match it.

        A source that drew a ball whose record was never committed (a refused decision,
        a crash) no longer matches; a new one from the journal's balls knows nothing of
        that ball, so nobody ever saw it (announce after commit).
        """
        if self._source is None or tuple(self._source.drawn) != tuple(drawn):
            self._source = self.ball_sources(tuple(drawn))
        return self._source

    def _completions(self, game: Game, ball: int, replacing: int | None = None) -> dict[str, list[str]]:
        """The cards ``ball`` completes a row or the card of, per the detector (R85.5, R92.11),
        but for cards that left the game (a failed terminal's, R96.3) or were refused (R82.8).

        ``replacing``: the last ball, which ``ball`` replaces (a corrected misread).
        """
        detector = game.detector
        assert detector is not None, "the detector is built when the sale closes"
        # The detector marks the ball to tell; the mark is undone so that only the
        # committed record, applied, advances it.
        if replacing is not None:
            detector.last_ball_voided()
        try:
            completed = detector.ball_drawn(ball)
            try:
                refs = [game.refs[i] for i in completed.rows], [game.refs[i] for i in completed.cards]
            finally:
                detector.last_ball_voided()
        finally:
            if replacing is not None:
                detector.ball_drawn(replacing)
        if game.machine.failed_terminals:
            # Cards refunded with a failed terminal left the game (R96.3).
            in_play = game.machine.in_play
            refs = [r for r in refs[0] if r in in_play], [r for r in refs[1] if r in in_play]
        if game.machine.refused:
            # A card the table chief refused as invalid can win nothing (R82.8): the caller
            # is not told to hold the draw for it.
            refused = game.machine.refused
            refs = [r for r in refs[0] if r not in refused], [r for r in refs[1] if r not in refused]
        return {
            "completed_line": [ref.label for ref in refs[0]],
            "completed_bingo": [ref.label for ref in refs[1]],
        }

    def _virtual_wins(self, game: Game, machine: TraditionalGame, completions: Mapping[str, list[str]]) -> list[JournalRecord]:
        """Virtual cards completing a pattern on this ball win it without a claim (R93.10, R85.9).

        The system marks virtual cards itself, so it is their claimant: each one
        ``check_claim`` finds winning is fed to ``machine`` (a decision's fork), and
        its ``prize_won`` is recorded with the ball: the prize is found and the draw
        stops (R85.6).  Paper cards still need their player's call and the table
        chief's verification.
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
        entries: list[JournalRecord] = []
        for ref in refs:
            verdict = check_claim(ref, layouts, machine.drawn, machine.won)
            if verdict.wins:
                entries += [recorded(e) for e in machine.claim_checked(verdict)]
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

        def check(now: int) -> list[JournalRecord]:
            before.append(tuple(self._game_taking_a_ball().machine.drawn))
            return []  # nothing to record yet: the ball is not known

        await self.core.execute(actor, "draw_ball", check)
        ball = await maybeDeferred(self._source_for(before[0]).draw)
        assert isinstance(ball, int), "a ball source gives ball numbers"

        def decide(now: int) -> list[JournalRecord]:
            game = self._game_taking_a_ball()
            if tuple(game.machine.drawn) != before[0]:
                raise GameModuleError(N_("the game's balls changed while the ball was drawn; draw again"))
            machine = _fork(game.machine)
            (drawn,) = machine.draw_ball(ball)
            completions = self._completions(game, ball)
            return [recorded(drawn, **completions), *self._virtual_wins(game, machine, completions)]

        return await self.core.execute(actor, "draw_ball", decide)

    def _game_taking_a_ball(self) -> Game:
        game = self.require_game()
        if not game.machine.accepts(Input.BALL_DRAWN):
            raise InvalidTransition(N_("cannot draw a ball {when}"), when=describe(game.machine.state))
        pending = game.correction
        if pending is not None:
            if pending.role in _CORRECTION_PENDING:
                raise GameModuleError(_CORRECTION_PENDING[pending.role], count=pending.ball_count,
                                      misread=pending.misread, corrected=pending.corrected)
            raise GameModuleError(
                f"the {_role_name(pending.role)} signed the correction of ball {pending.ball_count} "
                f"({pending.misread} read as {pending.corrected}): the other chief signs it, or either cancels it, "
                "before the next ball"
            )
        return game

    def enter_ball(self, actor: Actor, ball: int) -> Deferred[list[Record]]:
        """The room chief enters a ball while finishing the game by hand (R86.2).

        A prize found on the ball before closes first: entering the next ball is the
        room chief's "no other card" (R85.6).
        """

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.BALL_ENTERED):
                raise InvalidTransition(N_("cannot enter a ball by hand {when}"), when=describe(machine.state))
            closing = close_open_prizes(machine, actor)
            (drawn,) = machine.enter_ball(_whole(ball, "a ball"), entered_by=actor.name)
            assert isinstance(drawn, BallDrawn)
            completions = self._completions(game, drawn.ball)
            return [*closing, *self._auto_payments(game, machine, len(closing)), recorded(drawn, **completions),
                    *self._virtual_wins(game, machine, completions)]

        return self.core.execute(actor, "enter_ball", decide)

    # --- Correcting a misread ball (R85.5) -----------------------------------------------

    def correct_ball(self, actor: Actor, ball: int, corrected: int, reason: str) -> Deferred[list[Record]]:
        """Sign the correction of the last ball, announced as ``ball``, to ``corrected`` (R85.5).

        The room chief and the table chief each sign it at their own console; the
        second signature of the same correction makes it: the announced number is
        replaced by the ball physically drawn, which goes to the consoles, the board and
        the terminals with the cards it completes.  Only with the blower (the software
        generator's ball is what it is), only the last ball, only before any claim on it
        or card found winning on it; until the second signature nothing is drawn.
        """

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            misread, number = _whole(ball, "the ball announced"), _whole(corrected, "the ball read again")
            why = _text(reason, "why the ball is corrected")
            machine = _fork(game.machine)
            if not machine.accepts(Input.BALL_CORRECTED):
                raise InvalidTransition(N_("cannot correct a ball {when}"), when=describe(machine.state))
            if not self._source_for(machine.drawn).reads_balls:
                raise GameModuleError(
                    N_("the balls come from the software generator (R92.10): its ball is what it is, "
                       "and no ball is corrected (R85.5)")
                )
            machine.check_correction(misread, number)
            role = str(actor.role)
            signed = BallCorrectionSigned(
                game_id=game.game_id, ball_count=len(machine.drawn), misread=misread, corrected=number,
                reason=why, signer=actor.name, role=role,
            )
            pending = game.correction
            if pending is None:
                return [signed]
            if pending.role == role:
                other = next(r for r in CORRECTING_ROLES if r != role)
                if role in _SIGNED_ALREADY:
                    raise GameModuleError(_SIGNED_ALREADY[role])
                raise GameModuleError(
                    f"the {_role_name(role)} has already signed this correction; the {_role_name(other)} signs it"
                )
            if (pending.ball_count, pending.misread, pending.corrected) != (len(machine.drawn), misread, number):
                if pending.role in _OTHER_CORRECTION:
                    raise GameModuleError(_OTHER_CORRECTION[pending.role], count=pending.ball_count,
                                          corrected=pending.corrected, misread=pending.misread)
                raise GameModuleError(
                    f"the {_role_name(pending.role)} signed ball {pending.ball_count} as {pending.corrected}, not "
                    f"{pending.misread}; sign that correction, or cancel it first"
                )
            chiefs = {pending.role: pending.signer, role: actor.name}
            (event,) = machine.correct_ball(
                misread, number, reason=pending.reason,
                signed_by=(chiefs[Role.ROOM_CHIEF], chiefs[Role.TABLE_CHIEF]),
            )
            completions = self._completions(game, number, replacing=misread)
            return [signed, recorded(event, **completions), *self._virtual_wins(game, machine, completions)]

        return self.core.execute(actor, "correct_ball", decide)

    def cancel_ball_correction(self, actor: Actor) -> Deferred[list[Record]]:
        """Withdraw a correction only one chief has signed: the announced number stands (R85.5)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            pending = game.correction
            if pending is None:
                raise GameModuleError(N_("no correction of a ball is waiting for a signature"))
            return [BallCorrectionCancelled(
                game_id=game.game_id, ball_count=pending.ball_count, misread=pending.misread,
                corrected=pending.corrected, by=actor.name, role=str(actor.role),
            )]

        return self.core.execute(actor, "cancel_ball_correction", decide)


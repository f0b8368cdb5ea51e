"""Claims: the table chief's verification of a claimed card (R85.6, R85.11, R87), the refusal of
an invalid card (R82.8), and the claim pause - the caller's "close the prize", or the wait (R85.6)."""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall
from twisted.logger import Logger

from hall_server.hall.games.common import GameModuleError, GamesBase, _text, _whole, recorded
from hall_server.hall.games.state import Game, _fork, _Layouts
from hall_server.hall.roles import SYSTEM
from protocol.chain import Record
from protocol.claims import CardRef, check_claim
from protocol.errors import N_, DomainError
from protocol.events import ClaimRejected
from protocol.game import Input, InvalidTransition, State, describe
from protocol.records import JournalRecord
from server_kit.core import Actor

#: The states in which a prize found waits for other cards (R85.6); the wait runs only in them.
PAUSED = (State.LINE_FOUND, State.BINGO_FOUND)

log = Logger()


class ClaimCommands(GamesBase):
    """Verifying and refusing claimed cards; closing the prizes found."""

    prize_wait_s: int
    _wait_call: IDelayedCall | None
    _wait_mark: tuple[str, int] | None

    def verify_claim(self, actor: Actor, series: int, card_number: int) -> Deferred[list[Record]]:
        """Verify a claimed card by series and number (R85.6, R85.11, R87).

        A winning card is recorded as a ``prize_won`` per pattern, a losing one as a
        ``claim_rejected`` with the reason.  A prize closed takes no more cards.
        """

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.CLAIM_REJECTED):
                raise InvalidTransition(N_("cannot verify a claim {when}"), when=describe(machine.state))
            ref = CardRef(_whole(series, "a series"), _whole(card_number, "a card number"))
            layouts = _Layouts(game.refs, self._cells(game))
            verdict = check_claim(ref, layouts, machine.drawn, machine.won, refused=machine.refused)
            events = machine.claim_checked(verdict)
            return [
                recorded(e, ball_count=len(machine.drawn)) if isinstance(e, ClaimRejected) else recorded(e)
                for e in events
            ]

        return self.core.execute(actor, "verify_claim", decide)

    def refuse_card(self, actor: Actor, series: int, card_number: int, reason: str) -> Deferred[list[Record]]:
        """The table chief refuses a claimed paper card as invalid - tampered, damaged, not the
        card sold - with the reason (R82.8): it shares no prize of this game."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            ref = CardRef(_whole(series, "a series"), _whole(card_number, "a card number"))
            if self.is_virtual(ref):
                raise GameModuleError(
                    N_("card {card} is a virtual card: the system marks it and nobody claims it; "
                       "only a claimed paper card is refused"), card=str(ref))
            machine = _fork(game.machine)
            (refused,) = machine.refuse_card(ref, reason=_text(reason, "why the card is refused"),
                                              refused_by=actor.name)
            return [recorded(refused, ball_count=len(machine.drawn))]

        return self.core.execute(actor, "refuse_card", decide)

    # --- The claim pause (R85.6) ----------------------------------------------------------

    def close_prize(self, actor: Actor) -> Deferred[list[Record]]:
        """The caller closes the prizes found, after asking "another card?" (R85.6).

        Every card found winning on that ball so far shares them; the draw goes on, or
        the game may close.  A prize only virtual cards won is credited at once.
        """

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            if game.machine.state not in PAUSED:
                raise InvalidTransition(N_("cannot close a prize {when}; none is open"), when=describe(game.machine.state))
            return self._closing(game, actor.name)

        return self.core.execute(actor, "close_prize", decide)

    def _closing(self, game: Game, closed_by: str, wait_s: int | None = None) -> list[JournalRecord]:
        machine = _fork(game.machine)
        (closed,) = machine.close_prizes(closed_by=closed_by)
        return [recorded(closed, wait_s=wait_s), *self._auto_payments(game, machine, 1)]

    def arm_prize_wait(self) -> None:
        """Start, restart or stop the wait after which the prize found closes by itself.

        Called after every commit (and once after a restart): while a prize waits for
        other cards, the wait runs from the last claim, verified, rejected or refused,
        on the injected reactor clock; a suspended game's does not run.
        """
        game = self.state.current
        mark = None
        if game is not None and game.machine.state in PAUSED and game.pause_mark is not None:
            mark = (game.game_id, game.pause_mark)
        if mark == self._wait_mark:
            return
        if self._wait_call is not None and self._wait_call.active():
            self._wait_call.cancel()
        self._wait_call, self._wait_mark = None, mark
        if mark is not None:
            self._wait_call = self.core.clock.callLater(self.prize_wait_s, self._wait_over, mark)  # type: ignore[attr-defined]

    def _wait_over(self, mark: tuple[str, int]) -> None:
        self._wait_call = None

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            if game.machine.state not in PAUSED or (game.game_id, game.pause_mark) != mark:
                raise GameModuleError(N_("a claim came during the wait, or the prize was closed; the wait starts again"))
            return self._closing(game, SYSTEM.name, wait_s=self.prize_wait_s)

        def missed(failure: Any) -> None:
            if failure.check(DomainError):
                log.info("the prize was not closed after the wait: {why}", why=failure.getErrorMessage())
            else:
                log.failure("closing the prize after the wait", failure)

        self.core.execute(SYSTEM, "close_prize", decide).addErrback(missed)

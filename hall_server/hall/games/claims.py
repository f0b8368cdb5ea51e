"""The table chief's verification of a claimed card (R85.6, R85.11, R87)."""

from __future__ import annotations

from twisted.internet.defer import Deferred

from hall_server.hall.games.common import GamesBase, _entry, _whole
from hall_server.hall.games.state import _fork, _Layouts
from protocol.chain import Record
from protocol.claims import CardRef, ClaimVerdict, check_claim
from protocol.events import ClaimRejected
from protocol.game import Input, InvalidTransition, describe
from server_kit.core import Actor
from server_kit.journal.port import Entry


class ClaimCommands(GamesBase):
    """Verifying claimed cards."""

    def verify_claim(self, actor: Actor, series: int, card_number: int) -> Deferred[list[Record]]:
        """Verify a claimed card by series and number (R85.6, R85.11, R87).

        A winning card is recorded as a ``prize_won`` per pattern, a losing one as a
        ``claim_rejected`` with the reason.  A prize already paid takes no more cards.
        """

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.CLAIM_REJECTED):
                raise InvalidTransition(f"cannot verify a claim {describe(machine.state)}")
            ref = CardRef(_whole(series, "a series"), _whole(card_number, "a card number"))
            layouts = _Layouts(game.refs, self._cells(game))
            verdict = check_claim(ref, layouts, machine.drawn, machine.won)
            settled = [w for w in verdict.wins if w.pattern in game.paid]
            if settled:
                wins = tuple(w for w in verdict.wins if w.pattern not in game.paid)
                reason = None if wins else (
                    f"the {settled[0].pattern} was paid after ball {game.paid[settled[0].pattern].ball_count}; "
                    f"card {ref} was claimed too late to share it"
                )
                verdict = ClaimVerdict(ref, verdict.checked_at, wins, reason)
            events = machine.claim_checked(verdict)
            return [
                _entry(e, ball_count=len(machine.drawn)) if isinstance(e, ClaimRejected) else _entry(e)
                for e in events
            ]

        return self.core.execute(actor, "verify_claim", decide)

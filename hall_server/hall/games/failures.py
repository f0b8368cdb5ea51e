"""Failures (R86): a game suspended and resumed, or suspended for good - refunded when no
prize was won (the refund's postings are :mod:`protocol.settlement.refunds`), else finished by hand."""

from __future__ import annotations

from twisted.internet.defer import Deferred

from hall_server.hall.games.common import RESERVE, GameModuleError, GamesBase, _text, recorded
from hall_server.hall.games.state import _fork
from hall_server.hall.ledger import posting_records
from protocol.chain import Record
from protocol.game import Input
from protocol.ledger import Ledger, Posting, Reference
from protocol.records import JournalRecord
from protocol.settlement.refunds import contributions_returned, refund_game, stakes_account
from server_kit.core import Actor


class FailureCommands(GamesBase):
    """Suspending, resuming and giving up a game."""

    def suspend_game(self, actor: Actor, reason: str) -> Deferred[list[Record]]:
        """Suspend the game on a failure of the installation, machines or software (R86.1)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            (suspended,) = _fork(game.machine).report_failure(_text(reason, "what failed"))
            return [recorded(suspended)]

        return self.core.execute(actor, "suspend_game", decide)

    def suspension(self, reason: str) -> list[JournalRecord]:
        """The record suspending the game in progress (R86.1), for a command of the server's own that
        decides it with its other records; none when no game can be suspended now."""
        game = self.state.current
        if game is None or game.over or not game.machine.accepts(Input.FAILURE_REPORTED):
            return []
        (suspended,) = _fork(game.machine).report_failure(_text(reason, "what failed"))
        return [recorded(suspended)]

    def resume_game(self, actor: Actor) -> Deferred[list[Record]]:
        """The failure is resolved: the game goes on where it stopped."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            for check in self.resume_checks:
                if (refusal := check()) is not None:
                    raise GameModuleError(refusal)
            (resumed,) = _fork(game.machine).resolve_failure()
            return [recorded(resumed)]

        return self.core.execute(actor, "resume_game", decide)

    def suspend_game_for_good(self, actor: Actor, reason: str) -> Deferred[list[Record]]:
        """Unresolved after a reasonable time (R86.2): refund when no prize was won, else finish by hand."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            why = _text(reason, "why the game cannot go on")
            entries: list[JournalRecord] = [recorded(e) for e in machine.give_up(why)]
            if machine.won:
                entries += [recorded(e) for e in machine.finish_by_hand(authorised_by=actor.name)]
                return entries
            entries += [recorded(e) for e in machine.refund()]
            refund_seq = self.core.seq + len(entries)
            # The pots give back what the close set aside, then every stake goes home.
            settled = game.settlement
            back = contributions_returned(game.game_id, settled.contributions if settled else {}, refund_seq)
            if settled is not None and settled.boost_cents:
                # The reserve's boost (R91.7) goes back too: the game is deemed not played.
                back += (Posting.transfer(settled.boost_cents, debit=stakes_account(game.game_id), credit=RESERVE,
                                          reason="jackpot:reserve boost returned",
                                          reference=Reference(game.game_id, None, refund_seq)),)
            # The whole ledger, not the game's postings alone: a virtual card's stake came
            # from a player's account funded outside the game, which a ledger of the
            # game's postings would see overdrawn (every refund of a game with one failed).
            scratch = Ledger(self.ledger.ledger.postings)
            scratch.post_all(back)
            refunds = refund_game(scratch, machine.sales.values(), game.game_id, refund_seq)
            self.ledger.check([*back, *refunds])
            return [*entries, *posting_records([*back, *refunds])]

        return self.core.execute(actor, "suspend_game_for_good", decide)

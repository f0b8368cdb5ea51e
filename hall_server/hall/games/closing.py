"""The game's end - closed, or finished by hand - with its house share and tax (R98), the cards'
collection (R82.4), and what keeps the session from closing (R89, R91.11, R93.15)."""

from __future__ import annotations

from twisted.internet.defer import Deferred

from hall_server.hall.games.common import SUPERBINGO, GameModuleError, GamesBase, close_open_prizes, recorded
from hall_server.hall.games.state import Game, _fork
from hall_server.hall.ledger import posting_records
from protocol.chain import Record
from protocol.errors import N_, Template
from protocol.events import Event
from protocol.game import Input, InvalidTransition, State, describe
from protocol.ledger import Posting, Reference
from protocol.money import format_cents
from protocol.records import JournalRecord
from protocol.records.game import CardsCollected
from protocol.settlement import (
    JACKPOT_BANK_ACCOUNT,
    jackpot_deposit_due,
    jackpot_funds,
    tax_base_after_refunds,
    tax_cents,
)
from protocol.settlement.refunds import stakes_account
from server_kit.core import Actor


#: The refusal to collect the cards of a game whose prizes are not all paid, for each set of prizes unpaid.
_PAY_BEFORE_COLLECTING: dict[tuple[str, ...], Template] = {
    ("line",): N_("pay the line of game {game} before collecting its cards"),
    ("bingo",): N_("pay the bingo of game {game} before collecting its cards"),
    ("line", "bingo"): N_("pay the line and bingo of game {game} before collecting its cards"),
}


class ClosingCommands(GamesBase):
    """Closing and finishing a game, collecting its cards, the session's closing check."""

    def closing_refusal(self) -> str | None:
        """Why the session may not close yet, or None (R89, R91.11, R93.15).

        A game under way is finished first.  The superbingo fund goes to the bingo of the
        session's last game every session, whether the session's superbingo games were not
        won or none was played (R89): a session that played a game while the fund holds
        money closes only once a game announced as its last was played.  And the day's
        jackpot money is in the jackpot's bank account: the deposit is recorded before the
        closing is signed.
        """
        current = self.state.current
        if current is not None and not current.over:
            return (
                f"game {current.game_id} is under way ({describe(current.machine.state)}); "
                "finish it before the session closes"
            )
        session = self.session.state.current
        if session is None:
            return None
        games = [g for g in self.state.games if g.session == session.number and g.machine.state is not State.REFUNDED]
        superbingo_games = [g for g in games if g.superbingo_limit is not None]
        fund = self.ledger.balance(SUPERBINGO)
        last_played = any(g.last_game and g.over for g in games)
        if games and fund > 0 and not last_played:
            if superbingo_games and superbingo_games[-1].superbingo_won is False:
                why = f"the superbingo of game {superbingo_games[-1].game_id} was not won, and its fund of {format_cents(fund)}"
            else:
                why = f"the superbingo fund holds {format_cents(fund)}, which never outlives the session: it"
            return (
                f"{why} goes to the bingo of the session's last game (R89): announce a game as the last "
                "(R93.15) and play it before the session closes"
            )
        due = jackpot_deposit_due(self.pots(), self.ledger.balance(JACKPOT_BANK_ACCOUNT))
        if due:
            return (
                f"the jackpot's money is deposited every day into its bank account (R91.11): "
                f"{format_cents(due)} of its {format_cents(jackpot_funds(self.pots()))} is not there yet; "
                "the cashier records today's deposit from a desk (deposit_jackpot) before the session closes"
            )
        return None

    def _settle(self, game: Game, ended: Event, before: int = 0) -> list[JournalRecord]:
        """The game's end with its house share and tax (R98), both posted.

        The tax is on the amounts staked: the collection at the sale's close less the
        stakes of failed terminals' cards the house refunded after it (R96.3).  ``before``
        is how many entries of the same decision precede these.
        """
        settlement = game.settlement
        assert settlement is not None
        base = tax_base_after_refunds(settlement.sales_cents, game.refunded_after_close_cents)
        tax = tax_cents(base)
        reference = Reference(game.game_id, None, self.core.seq + before + 1)
        postings = []
        if settlement.house_cents:
            postings.append(Posting.transfer(settlement.house_cents, debit=stakes_account(game.game_id),
                                             credit="house", reason="house:share", reference=reference))
        if tax:
            postings.append(Posting.transfer(tax, debit="house", credit="tax", reason="tax:bingo",
                                             reference=reference))
        self.ledger.check(postings)
        return [
            recorded(ended, house_cents=settlement.house_cents, tax_cents=tax, tax_base_cents=base),
            *posting_records(postings),
        ]

    def close_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Close the game once the bingo and the claims are verified (R85)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            (closed,) = machine.close()
            entries = self._settle(game, closed)
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return self.core.execute(actor, "close_game", decide)

    def finish_game(self, actor: Actor) -> Deferred[list[Record]]:
        """End a game finished by hand once its bingo is verified (R86.2); the prizes found
        close with it (R85.6)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.GAME_FINISHED):
                raise InvalidTransition(N_("cannot finish the game {when}"), when=describe(machine.state))
            closing = close_open_prizes(machine, actor)
            (finished,) = machine.finish(finished_by=actor.name)
            entries = [*closing, *self._settle(game, finished, len(closing))]
            return [*entries, *self._auto_payments(game, machine, len(entries))]

        return self.core.execute(actor, "finish_game", decide)

    def collect_cards(self, actor: Actor) -> Deferred[list[Record]]:
        """The game's cards are collected: the next sale may open (R82.4)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            if not game.over:
                raise GameModuleError(N_("game {game}'s cards are collected once it has ended, not {when}"),
                                      game=game.game_id, when=describe(game.machine.state))
            if due := self.unpaid(game):
                if (template := _PAY_BEFORE_COLLECTING.get(tuple(due))) is not None:
                    raise GameModuleError(template, game=game.game_id)
                raise GameModuleError(f"pay the {' and '.join(due)} of game {game.game_id} before collecting its cards")
            return [CardsCollected(game_id=game.game_id, cards=len(game.machine.sales))]

        return self.core.execute(actor, "collect_cards", decide)

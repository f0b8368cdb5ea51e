"""The prizes paid: paper cards in cash, virtual cards to their players' accounts (R78, R85.9, R87-R91).

Every amount comes from :mod:`protocol.settlement`: the line and bingo from the sale's
close, their splits and carries (R88.5), and the pots the bingo wins
(:func:`protocol.settlement.bingo_pot_prizes`); this module only turns them into the
``prize_paid`` records and the ledger's postings."""

from __future__ import annotations

from typing import Sequence

from twisted.internet.defer import Deferred

from hall_server.hall.games.common import CARRY, JACKPOT, GameModuleError, GamesBase, _text
from hall_server.hall.games.state import Game
from hall_server.hall.ledger import posting_entries
from protocol.chain import Record
from protocol.claims import CardRef
from protocol.game import FINAL_STATES, State, TraditionalGame
from protocol.ledger import Posting, Reference
from protocol.settlement import (
    PAPER_STAKE_PCT,
    POT_ACCOUNTS,
    Pots,
    PotsInPlay,
    Split,
    bingo_pot_prizes,
    split_prize,
)
from protocol.settlement.refunds import stakes_account
from server_kit.core import Actor
from server_kit.journal.port import Entry


class PaymentCommands(GamesBase):
    """What is due, and paying it."""

    def due_prizes(self, game: Game) -> list[str]:
        """The won prizes that may be paid now (line, bingo), not yet paid."""
        return self._due(game, game.machine)

    def _due(self, game: Game, machine: TraditionalGame) -> list[str]:
        """:meth:`due_prizes` as ``machine`` (the game's, or a decision's fork) stands."""
        won = machine.won
        over = machine.state in FINAL_STATES
        due = []
        line = won.get("line")
        # The line is settled once the caller has moved on (R85: the staff ask for other
        # cards before the draw goes on) or the draw is over.
        if line and "line" not in game.paid and (
            len(machine.drawn) > line.ball_count or "bingo" in won or over
        ):
            due.append("line")
        # The bingo is settled when the game is closed: every claim has been verified (R85.11).
        if "bingo" in won and "bingo" not in game.paid and over:
            due.append("bingo")
        return due

    def _auto_payments(self, game: Game, machine: TraditionalGame, before: int) -> list[Entry]:
        """The prizes due that only virtual cards won, credited now (R85.9).

        ``before`` is how many entries of the same decision precede these.  A prize
        shared with a paper card waits for the cashier's ``pay_prizes``, which pays the
        paper cards in cash and credits the virtual ones.
        """
        due = self._due(game, machine)
        if not due or not all(
            game.machine.sales[ref].account.startswith("player:") if ref in game.machine.sales else False
            for pattern in due
            for ref in machine.won[pattern].cards
        ):
            return []
        return self._payments(game, machine, due, None, self.core.seq + before + 1)

    def pay_prizes(self, actor: Actor, desk: str) -> Deferred[list[Record]]:
        """Pay the settled prizes: paper cards in cash at the open cash desk ``desk``, virtual
        ones to their players' accounts (R78, R85.9, R87, R88.5, R89-R91).

        A seller's drawer pays nothing: its takings are handed in to a desk first.
        """

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            due = self.due_prizes(game)
            if not due:
                raise GameModuleError(self._nothing_due(game))
            if self.desks is None:
                raise GameModuleError("this hall has no cash desk; prizes on paper cards are paid at an open one")
            account = self.desks.paying_drawer(_text(desk, "which cash desk pays"), actor)
            return self._payments(game, game.machine, due, account, self.core.seq + 1)

        return self.core.execute(actor, "pay_prizes", decide)

    def _payments(
        self, game: Game, machine: TraditionalGame, due: Sequence[str], desk: str | None, first_seq: int
    ) -> list[Entry]:
        """The records and postings paying the prizes ``due`` as ``machine`` has them won.

        A card sold from a player's account (a virtual card) is credited to that account
        at its stake's fraction of its share (R85.9, R88.4-5); any other card is paid in
        cash from ``desk``.  ``first_seq`` is the sequence number the first of these
        records will get: the postings' references name their ``prize_paid`` record.
        """
        moved: dict[str, int] = {}  # what this payment has moved so far, debit minus credit
        entries: list[Entry] = []
        postings: list[Posting] = []

        def post(posting: Posting) -> None:
            postings.append(posting)
            for name, change in posting.signed().items():
                moved[name] = moved.get(name, 0) + change

        def balance(pot: str) -> int:
            # Pots are credit accounts: what they hold falls as they are debited.
            return self.ledger.balance(pot) - moved.get(pot, 0)

        def payee(ref: CardRef) -> str:
            sale = machine.sales.get(ref)
            if sale is not None and sale.account.startswith("player:"):
                return sale.account
            assert desk is not None, "prizes on paper cards are paid only through pay_prizes"
            return desk

        def pay(prize: str, split: Split, source: str, ball_count: int, winners: list[CardRef]) -> None:
            seq = first_seq + len(entries)  # the prize_paid record; postings follow all records
            moves = [
                Posting.transfer(cents, debit=source, credit=payee(ref), reason=f"prize:{prize}",
                                 reference=Reference(game.game_id, ref.label, seq))
                for ref, cents in zip(winners, split.payments)
                if cents
            ]
            entries.append(
                (
                    "prize_paid",
                    {
                        "game_id": game.game_id,
                        "prize": prize,
                        "ball_count": ball_count,
                        "amount_cents": split.amount,
                        "carry_cents": split.carry,
                        "payments": [[ref.label, cents] for ref, cents in zip(winners, split.payments)],
                        "desk": desk,
                    },
                )
            )
            for posting in moves:
                post(posting)

        def move(amount: int, debit: str, credit: str, reason: str) -> None:
            if amount:
                post(Posting.transfer(amount, debit=debit, credit=credit, reason=reason,
                                      reference=Reference(game.game_id, None, first_seq)))

        settlement = game.settlement
        assert settlement is not None, "a prize is won only after the sale closed"
        stakes = stakes_account(game.game_id)
        for pattern in due:
            won = machine.won[pattern]
            winners = sorted(won.cards)
            # Paper cards stake their whole price; a virtual card its chosen percentage.
            stake_pcts = [game.stake_pcts.get(ref, PAPER_STAKE_PCT) for ref in winners]
            carry_in = settlement.carry_line_cents if pattern == "line" else settlement.carry_bingo_cents
            split = split_prize(settlement.line_cents if pattern == "line" else settlement.bingo_cents, stake_pcts)
            # The carry joins this game's collection, and what the split leaves goes back (R88.5).
            move(carry_in, CARRY[pattern], stakes, f"carry:{pattern}:in")
            pay(pattern, split, stakes, won.ball_count, winners)
            move(split.carry, stakes, CARRY[pattern], f"carry:{pattern}:out")
            if pattern != "bingo":
                continue
            # The pots the bingo wins, in the audit replay's order (steps 8-11); unpaid cents stay.
            pots = bingo_pot_prizes(
                PotsInPlay(game.superbingo_limit, game.grand_superbingo_limit, game.jackpot_threshold,
                           game.megabingo_cents),
                won.ball_count,
                stake_pcts,
                Pots.from_accounts({account: balance(account) for account in POT_ACCOUNTS.values()}),
                last_game=game.last_game,
            )
            for won_pot in pots.prizes:
                pay(won_pot.prize, won_pot.split, POT_ACCOUNTS[won_pot.fund], won.ball_count, winners)
                if won_pot.prize == "jackpot":
                    # Then the reserve tops up the accumulated jackpot (R91).
                    move(pots.reserve_transfer_cents, POT_ACCOUNTS["jackpot_reserve"], JACKPOT,
                         "jackpot:reserve transfer")
        self.ledger.check(postings)
        return [*entries, *posting_entries(postings)]

    def stakes_in_drawer(self, account: str) -> tuple[int, str]:
        """The stakes drawer ``account`` took for the game under way, while the game could still be
        refunded: a refund (R86.2) pays each card back to the drawer it was sold from.

        Once a prize is won the game can no longer be refunded (it is finished by hand), and
        once it has ended nothing is paid back: the takings may then be handed in.
        """
        game = self.state.current
        if game is None or game.over or game.machine.won:
            return 0, ""
        cents = sum(sale.stake_cents for sale in game.machine.sales.values() if sale.account == account)
        return cents, (f"the stakes of game {game.game_id}, which a refund would pay back from this drawer"
                       if cents else "")

    def _nothing_due(self, game: Game) -> str:
        won = game.machine.won
        if game.machine.state is State.REFUNDED:
            return f"game {game.game_id} was refunded; it has no prize to pay"
        if game.over:
            return f"every prize of game {game.game_id} has been paid"
        if "bingo" in won:
            return "the bingo and its pots are paid once the game is closed"
        if "line" in won and "line" not in game.paid:
            return "the line is paid once the next ball is drawn (other cards may still share it) or the game ends"
        if "line" in game.paid:
            return "the line is paid; the bingo is paid once it is won and the game is closed"
        return f"no prize has been won in game {game.game_id} yet"

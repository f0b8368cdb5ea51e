"""The prizes paid: paper cards in cash, virtual cards to their players' accounts (R78, R85.9, R87-R91).

Every amount comes from :mod:`protocol.settlement`: the line and bingo from the sale's
close, their splits and carries (R88.5), and the pots the bingo wins
(:func:`protocol.settlement.bingo_pot_prizes`); this module only turns them into the
``prize_paid`` records and the ledger's postings.

**A paper winner of 15,000 EUR or more (R75.6).**  Before paying, the cashier's desk
sums what each paper winner takes in the game: every prize of every card, paid or due
now (line, bingo, pots).  The cards of one person are theirs together once the cashier
records the identity document they showed (``identify_paper_winner``, naming all the
person's winning cards of the game, which the system sums; a card identified before with
the same document may be named again, to add a later card to it); a card nobody was
identified for stands alone.  A payment that would bring a winner nobody identified to the
threshold is refused, naming the cards and the sum, and nothing is paid until the
identity is recorded.  An identity is refused for cards whose sum stays below the
threshold: the hall keeps no personal data the rule does not ask for (R75.3).
"""

from __future__ import annotations

from typing import Sequence

from twisted.internet.defer import Deferred

from hall_server.hall.admission import AdmissionError, control_character, normalize_document
from hall_server.hall.games.common import CARRY, JACKPOT, GameModuleError, GamesBase, _retold, _text
from hall_server.hall.games.state import Game
from hall_server.hall.ledger import posting_records
from protocol.chain import Record
from protocol.claims import CardRef
from protocol.daily import LARGE_WIN_CENTS, paper_groups
from protocol.errors import N_, Cents
from protocol.game import FINAL_STATES, State, TraditionalGame
from protocol.ledger import Posting, Reference
from protocol.money import format_cents
from protocol.records import JournalRecord
from protocol.records.prizes import PrizePaid, PrizeWinnerIdentified
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
        # The line is settled once its prize is closed: the caller asked for other cards
        # and closed it, or the wait passed (R85.6); or the game is over.
        if line and "line" not in game.paid and (line.closed or over):
            due.append("line")
        # The bingo is settled when the game is closed: every claim has been verified (R85.11).
        if "bingo" in won and "bingo" not in game.paid and over:
            due.append("bingo")
        return due

    def _auto_payments(self, game: Game, machine: TraditionalGame, before: int) -> list[JournalRecord]:
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

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            due = self.due_prizes(game)
            if not due:
                raise self._nothing_due(game)
            if self.desks is None:
                raise GameModuleError(N_("this hall has no cash desk; prizes on paper cards are paid at an open one"))
            account = self.desks.paying_drawer(_text(desk, "which cash desk pays"), actor)
            entries = self._payments(game, game.machine, due, account, self.core.seq + 1)
            self._check_paper_winners(game, entries)
            return entries

        return self.core.execute(actor, "pay_prizes", decide)

    # --- Paper winners of 15,000 EUR or more (R75.6) -------------------------------------

    def paper_wins(self, game: Game, entries: Sequence[JournalRecord] = ()) -> dict[str, list[tuple[str, int]]]:
        """Each paper card's prizes in ``game`` (prize, cents): those paid, and those of ``entries`` (a payment
        being decided); a card sold from a player's account is the account's, not a paper card."""
        paying = [entry for entry in entries if isinstance(entry, PrizePaid)]
        payments = [(paid.prize, label, cents) for paid in [*game.paid.values(), *paying]
                    for label, cents in paid.payments]
        wins: dict[str, list[tuple[str, int]]] = {}
        for prize, label, cents in payments:
            sale = game.machine.sales.get(_ref(label))
            if sale is not None and sale.account.startswith("player:"):
                continue
            wins.setdefault(label, []).append((prize, cents))
        return wins

    def payments_due(self, game: Game) -> list[JournalRecord]:
        """The records paying what is due now, for their amounts: paid from a desk that stands for any (the
        amounts do not depend on it), nothing checked against a drawer."""
        due = self.due_prizes(game)
        return self._payments(game, game.machine, due, "cash:desk", self.core.seq + 1, check=False) if due else []

    def _check_paper_winners(self, game: Game, entries: Sequence[JournalRecord]) -> None:
        """Refuse a payment that brings a paper winner nobody identified to 15,000 EUR in the game (R75.6)."""
        wins = self.paper_wins(game, entries)
        paying = {label for entry in entries if isinstance(entry, PrizePaid) for label, _ in entry.payments}
        totals = {card: sum(cents for _, cents in won) for card, won in wins.items()}
        identities = {card: seq for card, (seq, _) in game.identified.items()}
        for cards, identity, total in paper_groups(totals, identities):
            if identity is None and total >= LARGE_WIN_CENTS and paying & set(cards):
                (card,) = cards
                detail = ", ".join(f"{prize} {format_cents(cents)}" for prize, cents in wins[card])
                raise GameModuleError(
                    f"paper card {card} wins {format_cents(total)} in game {game.game_id} ({detail}): a winner of "
                    f"{format_cents(LARGE_WIN_CENTS)} or more is paid only once identified (R75.6); record the "
                    "identity document of the person holding it, with every winning card of theirs in this game "
                    "(identify_paper_winner), then pay")

    def identify_paper_winner(self, actor: Actor, cards: Sequence[str], document: str,
                              name: str) -> Deferred[list[Record]]:
        """Record the identity document of the person holding paper ``cards`` of the game under way, whose
        prizes in the game (paid, and due now) sum to 15,000 EUR or more (R75.6)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            normal, person = _identity(document, name)
            if not isinstance(cards, (list, tuple)) or not cards:
                raise GameModuleError(N_("name the person's winning paper cards of this game, SERIES-NUMBER each"))
            labels = list(dict.fromkeys(_card_label(c) for c in cards))
            wins = self.paper_wins(game, self.payments_due(game))
            for label in labels:
                if label not in wins:
                    sold = game.machine.sales.get(_ref(label))
                    if sold is not None and sold.account.startswith("player:"):
                        raise GameModuleError(N_("card {card} is a player account's card in game {game}; name the "
                                                 "paper cards that won a prize the cashier pays"),
                                              card=label, game=game.game_id)
                    raise GameModuleError(N_("card {card} won nothing to pay in game {game}; name the paper cards "
                                             "that won a prize the cashier pays"), card=label, game=game.game_id)
                seq, shown = game.identified.get(label, (None, normal))
                if shown != normal:
                    raise GameModuleError(N_("card {card}'s winner was identified with another document in record "
                                             "{seq}; a card has one winner"), card=label, seq=seq)
            total = sum(cents for label in labels for _, cents in wins[label])
            if total < LARGE_WIN_CENTS:
                raise GameModuleError(
                    N_("cards {cards} win {total} in game {game}, less than {least}: no identity is asked (R75.6) "
                       "and none is kept (R75.3)"),
                    cards=", ".join(labels), total=Cents(total), game=game.game_id, least=Cents(LARGE_WIN_CENTS))
            return [PrizeWinnerIdentified(game_id=game.game_id, cards=tuple(labels), total_cents=total,
                                          document=normal, name=person)]

        return self.core.execute(actor, "identify_paper_winner", decide)

    def _payments(
        self, game: Game, machine: TraditionalGame, due: Sequence[str], desk: str | None, first_seq: int,
        check: bool = True,
    ) -> list[JournalRecord]:
        """The records and postings paying the prizes ``due`` as ``machine`` has them won.

        A card sold from a player's account (a virtual card) is credited to that account
        at its stake's fraction of its share (R85.9, R88.4-5); any other card is paid in
        cash from ``desk``.  ``first_seq`` is the sequence number the first of these
        records will get: the postings' references name their ``prize_paid`` record.
        """
        moved: dict[str, int] = {}  # what this payment has moved so far, debit minus credit
        entries: list[JournalRecord] = []
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
                PrizePaid(
                    game_id=game.game_id,
                    prize=prize,
                    ball_count=ball_count,
                    amount_cents=split.amount,
                    carry_cents=split.carry,
                    payments=tuple((ref.label, cents) for ref, cents in zip(winners, split.payments)),
                    desk=desk,
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
        if check:
            self.ledger.check(postings)
        return [*entries, *posting_records(postings)]

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

    def _nothing_due(self, game: Game) -> GameModuleError:
        """The refusal to pay the prizes of ``game`` when none is due now."""
        won = game.machine.won
        if game.machine.state is State.REFUNDED:
            return GameModuleError(N_("game {game} was refunded; it has no prize to pay"), game=game.game_id)
        if game.over:
            return GameModuleError(N_("every prize of game {game} has been paid"), game=game.game_id)
        if "bingo" in won:
            return GameModuleError(N_("the bingo and its pots are paid once the game is closed"))
        if "line" in won and "line" not in game.paid:
            return GameModuleError(
                N_("the line is paid once its prize is closed (the caller asks for another card, then closes it)"))
        if "line" in game.paid:
            return GameModuleError(N_("the line is paid; the bingo is paid once it is won and the game is closed"))
        return GameModuleError(N_("no prize has been won in game {game} yet"), game=game.game_id)


def _identity(document: object, name: object) -> tuple[str, str]:
    """The document number in the admission desk's normal form and the name, or one clear error."""
    try:
        normal = normalize_document(document)
    except AdmissionError as error:
        raise _retold(error) from None
    person = _text(name, "the name on the identity document")
    if len(person) > 200 or control_character(person) is not None:
        raise GameModuleError(N_("the name on the document is printable text of at most 200 characters"))
    return normal, person


def _ref(label: str) -> CardRef:
    series, _, number = label.partition("-")
    return CardRef(int(series), int(number))


def _card_label(card: object) -> str:
    """A card the cashier typed (``7-41``, `` 7 - 41``) as the label records use, or one clear error."""
    series, dash, number = str(card).replace(" ", "").partition("-")
    if not (dash and series.isdigit() and number.isdigit() and series.isascii() and number.isascii()):
        raise GameModuleError(N_("a card is named SERIES-NUMBER (7-41), not {card!r}"), card=card)
    return CardRef(int(series), int(number)).label

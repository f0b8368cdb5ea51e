"""The sale of a game's paper cards, and its close (R82.4-6, R85, R88).

The close's figures - the collection, the pots' shares, the line and bingo with their
carries, the house's share and the tax - come from :func:`protocol.settlement.close_sale`."""

from __future__ import annotations

import dataclasses

from twisted.internet.defer import Deferred

from hall_server.hall.games.common import (
    RESERVE,
    GameModuleError,
    GamesBase,
    _session_date,
    _whole,
    recorded,
)
from hall_server.hall.games.state import Game
from hall_server.hall.games.state import _fork, _fork_sale
from hall_server.hall.ledger import posting_records
from protocol.chain import Record
from protocol.errors import N_, Template
from protocol.events import SaleClosed
from protocol.game import Input, InvalidTransition, State, TraditionalGame, describe
from protocol.ledger import Leg, Posting, Reference, account_kind
from protocol.records import JournalRecord
from protocol.records.sale import PaperCardsSold, SecondSeriesOpened
from protocol.sale import GameSale, SaleRefused, Series
from protocol.settlement import (
    PAPER_STAKE_PCT,
    POT_ACCOUNTS,
    LimitExceeded,
    check_reserve_boost,
    close_sale,
    reserve_boost_allowance,
    stake_cents,
)
from protocol.settlement.refunds import stakes_account
from server_kit.core import Actor


#: The refusal to open a sale while the game before has prizes unpaid, for each set of prizes unpaid.
_PAY_BEFORE_THE_SALE: dict[tuple[str, ...], Template] = {
    ("line",): N_("game {game}'s line not yet paid; pay them and collect the cards before the next sale"),
    ("bingo",): N_("game {game}'s bingo not yet paid; pay them and collect the cards before the next sale"),
    ("line", "bingo"): N_("game {game}'s line and bingo not yet paid; pay them and collect the cards before the "
                          "next sale"),
}


class SaleCommands(GamesBase):
    """Announcing a sale, selling paper cards by range, a second series, closing the sale."""

    def _other_series(self, exhausted: int) -> list[Series]:
        """The registered series other than ``exhausted`` that have cards left."""
        return [info for info in self.catalog.all_series()
                if info.number != exhausted and self.last_sold(info) < info.card_count]

    def _series_left(self, exhausted: int) -> str:
        """What the seller can open instead of a sold-out series."""
        left = [
            f"{info.number} ({info.card_count - self.last_sold(info)} cards left)"
            for info in self._other_series(exhausted)
        ]
        if not left:
            return "no registered series has cards left: register a new series (bingo cards add-series)"
        return "open the sale on another series: " + ", ".join(left)

    def announce_sale(self, actor: Actor, series: int) -> Deferred[list[Record]]:
        """Open a game's sale on ``series``: price = face value, first card = the next one (R85, R82.4-5)."""

        def decide(now: int) -> list[JournalRecord]:
            session = self.session.require_open()
            self.session.require_ball_set_usable()
            previous = self.state.current
            if previous is not None and not previous.over:
                raise GameModuleError(N_("game {game} is still under way ({when}); it must end before another sale opens"),
                                      game=previous.game_id, when=describe(previous.machine.state))
            if previous is not None and (due := self.unpaid(previous)):
                if (template := _PAY_BEFORE_THE_SALE.get(tuple(due))) is not None:
                    raise GameModuleError(template, game=previous.game_id)
                raise GameModuleError(
                    f"game {previous.game_id}'s {' and '.join(due)} not yet paid; pay them and "
                    "collect the cards before the next sale"
                )
            for check in self.sale_checks:
                refusal = check()
                if refusal is not None:
                    raise GameModuleError(refusal)
            # A last game refunded (R86.2) was not played: another game may be announced as the last.
            last = [g for g in self.state.games if g.session == session.number and g.last_game
                    and g.machine.state is not State.REFUNDED]
            if last:
                raise GameModuleError(
                    N_("game {game} was announced as the session's last game (R93.15); "
                       "no other game is played in this session"), game=last[0].game_id)
            info = self.catalog.series(_whole(series, "a series"))
            on_sale = dataclasses.replace(info, last_sold=self.last_sold(info))
            if previous is not None:
                raise GameModuleError(
                    N_("the previous game's cards have not been collected (R82.4; game {game}); "
                       "record the collection first"), game=previous.game_id)
            if on_sale.exhausted:
                if not self._other_series(on_sale.number):
                    raise GameModuleError(
                        N_("series {series} is sold out ({cards} cards); no registered series has cards left: "
                           "register a new series (bingo cards add-series)"),
                        series=on_sale.number, cards=on_sale.card_count)
                raise GameModuleError(f"series {on_sale.number} is sold out ({on_sale.card_count} cards); "
                                      + self._series_left(on_sale.number))
            try:
                sale = GameSale.open(on_sale, previous_game_collected=True)
            except SaleRefused as error:
                raise GameModuleError(str(error)) from None
            first = sale.next_card(on_sale.number)
            number = 1 + sum(1 for g in self.state.games if g.session == session.number)
            game_id = f"{_session_date(session).isoformat()}-s{session.number}-g{number}"
            (opened,) = TraditionalGame(game_id).open_sale(
                series=on_sale.number, first_card=first, price_cents=on_sale.face_value_cents
            )
            return [
                recorded(
                    opened,
                    session=session.number,
                    game_number=number,
                    card_set=on_sale.card_set,
                    card_count=on_sale.card_count,
                )
            ]

        return self.core.execute(actor, "announce_sale", decide)

    def sell_cards(self, actor: Actor, series: int, first: int, last: int) -> Deferred[list[Record]]:
        """Record paper cards ``first``..``last`` of ``series`` sold by this seller (R82.5, R82.6)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            if not machine.accepts(Input.CARD_SOLD):
                raise InvalidTransition(N_("cannot sell a card {when}"), when=describe(machine.state))
            sale = _fork_sale(game.sale)
            sold = sale.sell(
                _whole(series, "a series"), _whole(first, "a card number"), _whole(last, "a card number"),
                actor.name,
            )
            account = f"cash:{actor.name}"
            account_kind(account)
            # A paper card stakes its whole price (R82.15).
            stake = stake_cents(machine.price_cents, PAPER_STAKE_PCT)
            stakes = [stake for _ in range(sold.count)]
            for n in range(sold.first, sold.last + 1):  # every card checked; the range is one record (R83.4)
                machine.sell_card(series=sold.series, card_number=n, stake_cents=stake, account=account)
            posting = Posting.transfer(
                sum(stakes),
                debit=account,
                credit=stakes_account(game.game_id),
                reason="sale:paper",
                reference=Reference(game.game_id, None, self.core.seq + 1),
            )
            self.ledger.check([posting])
            summary = PaperCardsSold(
                game_id=game.game_id,
                series=sold.series,
                first=sold.first,
                last=sold.last,
                count=sold.count,
                seller=actor.name,
                account=account,
                amount_cents=posting.amount,
                price_cents=stake,
            )
            return [summary, *posting_records([posting])]

        return self.core.execute(actor, "sell_cards", decide)

    def open_second_series(self, actor: Actor, series: int) -> Deferred[list[Record]]:
        """Open the complementary second series once the first has run out (R82.6)."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            if not game.machine.accepts(Input.CARD_SOLD):
                raise InvalidTransition(N_("cannot open a second series {when}"), when=describe(game.machine.state))
            info = self.catalog.series(_whole(series, "a series"))
            window = _fork_sale(game.sale).add_second_series(
                dataclasses.replace(info, last_sold=self.last_sold(info))
            )
            return [
                SecondSeriesOpened(
                    game_id=game.game_id,
                    series=info.number,
                    card_set=info.card_set,
                    face_value_cents=info.face_value_cents,
                    card_count=info.card_count,
                    first=window.first,
                    last=window.last,
                )
            ]

        return self.core.execute(actor, "open_second_series", decide)

    def close_sale(self, actor: Actor) -> Deferred[list[Record]]:
        """Close the sale: cards sold, collection, line and bingo prizes; pot shares set aside."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            machine = _fork(game.machine)
            (closed,) = machine.close_sale()
            assert isinstance(closed, SaleClosed)
            if closed.cards_sold == 0:
                raise GameModuleError(
                    N_("no card has been sold; sell cards first, or suspend the game for good to cancel it")
                )
            boost_line, boost_bingo = game.boost_line_cents, game.boost_bingo_cents
            figures = close_sale(self.rules, closed.collection_cents, self.pots(), boost_line, boost_bingo)
            contributions = {POT_ACCOUNTS[pot]: cents for pot, cents in figures.contributions.items() if cents}
            reference = Reference(game.game_id, None, self.core.seq + 1)
            postings = []
            if figures.top_up_cents:
                # The prizes' fixed sums exceed their percentages: the house makes up the difference (R88.3).
                postings.append(
                    Posting.transfer(
                        figures.top_up_cents, debit="house", credit=stakes_account(game.game_id),
                        reason="prizes:fixed sum top-up", reference=reference,
                    )
                )
            if contributions:
                postings.append(
                    Posting(
                        (Leg(stakes_account(game.game_id), sum(contributions.values())),),
                        tuple(Leg(pot, cents) for pot, cents in contributions.items()),
                        "pots:contribution",
                        reference,
                    )
                )
            if boost_line + boost_bingo:
                # The announced boost leaves the reserve as the contributions enter it (R91.7).
                self._check_boost(game, boost_line + boost_bingo, figures.contributions.get("jackpot_reserve", 0))
                postings.append(
                    Posting.transfer(
                        boost_line + boost_bingo, debit=RESERVE, credit=stakes_account(game.game_id),
                        reason="jackpot:reserve boost", reference=reference,
                    )
                )
            self.ledger.check(postings)
            series_after = _fork_sale(game.sale).close()
            return [
                recorded(
                    closed,
                    line_cents=figures.line_cents,
                    bingo_cents=figures.bingo_cents,
                    carry_line_cents=figures.carry_line_cents,
                    carry_bingo_cents=figures.carry_bingo_cents,
                    contributions=contributions,
                    house_cents=figures.house_cents,
                    tax_cents=figures.tax_cents,
                    series=[(s.number, s.last_sold) for s in series_after],
                    boost_line_cents=boost_line,
                    boost_bingo_cents=boost_bingo,
                ),
                *posting_records(postings),
            ]

        return self.core.execute(actor, "close_sale", decide)

    def _check_boost(self, game: Game, boost: int, to_reserve: int) -> None:
        """Refuse a sale's close whose announced boost the reserve or the session can no longer give."""
        allowance = reserve_boost_allowance(self.state.reserve_at_session_start.get(game.session, 0))
        reserve = self.ledger.balance(RESERVE) + to_reserve
        try:
            check_reserve_boost(boost, self.boosted_in_session(game.session, besides=game), allowance, reserve)
        except LimitExceeded as error:
            raise GameModuleError(
                f"the reserve boost announced for game {game.game_id} can no longer be given ({error}); "
                "announce it again (0 and 0 withdraws it)"
            ) from None

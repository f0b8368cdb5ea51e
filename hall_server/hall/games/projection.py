"""The hall game's projection: its state rebuilt from journal records, and its snapshot."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from hall_server.hall.games.common import RESERVE, GamesBase
from hall_server.hall.games.state import Game, GamesState, Settlement, feed, let_go_of_cards
from protocol.chain import Record
from protocol.claims import CardRef
from protocol.game import TraditionalGame
from protocol.records import EventRecord, declared
from protocol.records.game import (
    BallCorrected,
    BallCorrectionCancelled,
    BallCorrectionSigned,
    BallDrawn,
    BallVoided,
    CardsCollected,
    GameClosed,
    GameFinished,
    GameRefunded,
    GameResumed,
    GameSuspended,
    GameSuspendedForGood,
    LastGameAnnounced,
    ManualFinishStarted,
)
from protocol.records.prizes import (
    CardRefused,
    ClaimRejected,
    JackpotContributionRecovered,
    MegabingoAnnounced,
    OperatorContribution,
    PotsAnnounced,
    PrizeClosed,
    PrizePaid,
    PrizeWinnerIdentified,
    PrizeWon,
    ReserveBoostAnnounced,
)
from protocol.records.sale import CardSold, PaperCardsSold, SaleClosed, SaleOpened, SecondSeriesOpened
from protocol.records.session import SessionOpened
from protocol.records.terminals import TerminalFailed, VirtualCardsBought
from protocol.sale import GameSale, Series
from protocol.wins import WinDetector

#: The records of a game's course, folded into the game they name when it is the one under way.
GameRecord = (
    PaperCardsSold | VirtualCardsBought | SecondSeriesOpened | PotsAnnounced | ReserveBoostAnnounced
    | LastGameAnnounced | PrizePaid | PrizeWinnerIdentified | CardsCollected | BallCorrectionSigned
    | BallCorrectionCancelled | CardSold | SaleClosed | TerminalFailed | BallDrawn | BallVoided | BallCorrected
    | PrizeClosed | CardRefused | ClaimRejected | PrizeWon | GameSuspended | GameResumed | GameSuspendedForGood
    | GameRefunded | ManualFinishStarted | GameClosed | GameFinished
)
#: Every record the hall game folds: a game's opening, the session's and the pots', and a game's course.
_FOLDED = frozenset((SaleOpened, SessionOpened, MegabingoAnnounced, OperatorContribution,
                     JackpotContributionRecovered, *typing.get_args(GameRecord)))


def _sell_range(machine: TraditionalGame, sold: PaperCardsSold, price_cents: int) -> None:
    """Fold the paper cards ``first``..``last`` of a ``paper_cards_sold`` record into the game."""
    for n in range(sold.first, sold.last + 1):
        machine.sell_card(series=sold.series, card_number=n, stake_cents=price_cents, account=sold.account)


def _sell_virtual_range(game: Game, bought: VirtualCardsBought) -> None:
    """Fold the virtual cards of a ``virtual_cards_bought`` record into the game, with their stake."""
    for n in range(bought.first, bought.last + 1):
        game.machine.sell_card(series=bought.series, card_number=n, stake_cents=bought.stake_cents,
                               account=bought.account, terminal_id=bought.terminal)
        game.stake_pcts[CardRef(bought.series, n)] = bought.stake_pct


class Projection(GamesBase):
    """Records in, state out."""

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain data: for consoles, audits and recovery checks."""
        games = []
        for game in self.state.games:
            machine = game.machine
            detector = game.detector
            games.append(
                {
                    "game_id": game.game_id,
                    "session": game.session,
                    "number": game.number,
                    "card_set": game.card_set,
                    "state": str(machine.state),
                    "steps": [(str(s.before), str(s.input), str(s.after)) for s in machine.steps],
                    "price_cents": machine.price_cents,
                    "sales": sorted((ref.label, sale.to_dict()) for ref, sale in machine.sales.items()),
                    "won": {p: (w.ball_count, sorted(r.label for r in w.cards)) for p, w in machine.won.items()},
                    "drawn": machine.drawn,
                    "suspended_from": machine.suspended_from,
                    "sale": dataclasses.asdict(game.sale),
                    "pots": (game.superbingo_limit, game.grand_superbingo_limit, game.jackpot_threshold,
                             game.megabingo_cents),
                    "reserve_boost": (game.boost_line_cents, game.boost_bingo_cents),
                    "last_game": game.last_game,
                    "settlement": dataclasses.asdict(game.settlement) if game.settlement else None,
                    "refs": [r.label for r in game.refs],
                    "detector": None if detector is None else (
                        detector.drawn, [detector.rows_missing(i) for i in range(detector.card_count)]
                    ),
                    "paid": {k: dataclasses.asdict(v) for k, v in game.paid.items()},
                    "collected": game.collected,
                    "stake_pcts": sorted((ref.label, pct) for ref, pct in game.stake_pcts.items()),
                    "won_closed": {p: w.closed for p, w in machine.won.items()},
                    "refused": sorted((ref.label, why) for ref, why in machine.refused.items()),
                    "claimed_at": machine.claimed_at,
                    "pause_mark": game.pause_mark,
                    "correction": dataclasses.asdict(game.correction) if game.correction else None,
                    "refunded_after_close_cents": game.refunded_after_close_cents,
                    "identified": sorted((card, seq, document) for card, (seq, document) in game.identified.items()),
                }
            )
        return {
            "games": games,
            "last_sold": dict(self.state.last_sold),
            "megabingo": dataclasses.asdict(self.state.megabingo) if self.state.megabingo else None,
            "operator_superbingo": dict(self.state.operator_superbingo),
            "operator_jackpot": dict(self.state.operator_jackpot),
            "reserve_at_session_start": dict(self.state.reserve_at_session_start),
            "jackpot_contributions": [dataclasses.astuple(c) for c in self.state.jackpot_contributions.contributions],
        }

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state, self._source = GamesState(), None

    def apply(self, record: Record) -> None:
        event = declared(record)
        if type(event) not in _FOLDED:
            return  # another module's record
        state = self.state
        match event:
            case SaleOpened():
                self._sale_opened(event)
                return
            case SessionOpened():
                # Nothing moves money on the opening: the ledger holds the reserve as it opened.
                state.reserve_at_session_start[event.session] = self.ledger.balance(RESERVE)
                return
            case MegabingoAnnounced():
                state.megabingo = event
                return
            case OperatorContribution(pot="jackpot"):
                state.operator_jackpot[event.month] = state.operator_jackpot.get(event.month, 0) + event.amount_cents
                state.jackpot_contributions = state.jackpot_contributions.contributed(event.date, event.amount_cents)
                return
            case OperatorContribution():
                state.operator_superbingo[event.date] = state.operator_superbingo.get(event.date, 0) + event.amount_cents
                return
            case JackpotContributionRecovered():
                state.jackpot_contributions, _ = state.jackpot_contributions.recovered(event.date, event.amount_cents)
                return
            case PrizePaid(prize="jackpot"):
                # Players won this much of the jackpot: the operator's oldest contributions first (R91.9).
                state.jackpot_contributions = state.jackpot_contributions.won(sum(cents for _, cents in event.payments))
        game = state.current
        if game is not None and isinstance(event, GameRecord) and event.game_id == game.game_id:
            self._fold_course(game, event, record.seq)  # another game's record is another module's

    def _sale_opened(self, opened: SaleOpened) -> None:
        """A game of this hall opens its sale: the session's next game."""
        state = self.state
        machine = TraditionalGame(opened.game_id)
        feed(machine, opened)
        series = Series(opened.series, opened.card_set, opened.price_cents, opened.card_count, opened.first_card - 1)
        # Only this session's games matter from now on (numbering, the last superbingo
        # game, the last game): earlier sessions' games, all collected, are let go.
        state.games = [g for g in state.games if g.session == opened.session]
        state.games.append(
            Game(
                game_id=opened.game_id,
                session=opened.session,
                number=opened.game_number,
                machine=machine,
                sale=GameSale.open(series, previous_game_collected=True),
                card_set=opened.card_set,
            )
        )

    def _fold_course(self, game: Game, event: GameRecord, seq: int) -> None:
        """A record of the game under way (``seq``: its number in the journal)."""
        state = self.state
        match event:
            case PaperCardsSold():
                game.sale.sell(event.series, event.first, event.last, event.seller)
                # The range is the cards; older journals follow it with a card_sold each.
                if event.price_cents is not None:
                    _sell_range(game.machine, event, event.price_cents)
                state.last_sold[event.series] = max(state.last_sold.get(event.series, 0), event.last)
            case VirtualCardsBought():
                if event.price_cents is not None:  # as for paper cards
                    _sell_virtual_range(game, event)
            case SecondSeriesOpened():
                game.sale.add_second_series(Series(event.series, event.card_set, event.face_value_cents, event.card_count))
            case PotsAnnounced():
                game.superbingo_limit = event.superbingo_limit
                game.grand_superbingo_limit = event.grand_superbingo_limit
                game.jackpot_threshold = event.jackpot_threshold
                game.megabingo_cents = event.megabingo_cents
            case ReserveBoostAnnounced():
                game.boost_line_cents, game.boost_bingo_cents = event.line_cents, event.bingo_cents
            case LastGameAnnounced():
                game.last_game = True
            case PrizePaid():
                game.paid[event.prize] = event
                if event.prize == "megabingo":
                    state.megabingo = None  # played
            case PrizeWinnerIdentified():
                game.identified.update({card: (seq, event.document) for card in event.cards})
            case CardsCollected():
                game.collected = True
                let_go_of_cards(game)
            case BallCorrectionSigned():
                game.correction = event
            case BallCorrectionCancelled():
                game.correction = None
            case EventRecord():
                feed(game.machine, event)
                self._followed(game, event, seq)

    def _followed(self, game: Game, event: EventRecord, seq: int) -> None:
        """What the game keeps of a domain event's record besides its machine: a virtual card's stake,
        the settlement, the draw's detector, the claim pause."""
        match event:
            case CardSold() if event.stake_pct is not None:
                game.stake_pcts[CardRef(event.series, event.card_number)] = event.stake_pct
            case SaleClosed():
                self._sale_closed(game, event)
            case TerminalFailed() if game.settlement is not None:
                refunded = set(event.refunded or ())
                game.refunded_after_close_cents += sum(
                    sale.stake_cents for ref, sale in game.machine.sales.items() if ref.label in refunded
                )
            case BallDrawn():
                assert game.detector is not None
                game.detector.ball_drawn(event.ball)
            case BallVoided():  # journals written before the ruling of R85.5
                assert game.detector is not None
                game.detector.last_ball_voided()
                self._source = None  # the next source is built from the journal's balls
            case BallCorrected():
                assert game.detector is not None
                game.detector.last_ball_voided()
                game.detector.ball_drawn(event.ball)
                game.correction = None
                source = self._source
                if source is not None and source.drawn and source.drawn[-1] == event.misread:
                    source.correct(event.misread, event.ball)  # the ball on the rack is the one read again
            case PrizeWon() | ClaimRejected() | CardRefused():
                game.pause_mark = seq
                game.correction = None  # a card claimed on the ball: the announced number stands (R85.5)

    def _sale_closed(self, game: Game, closed: SaleClosed) -> None:
        game.sale.close()
        boost = closed.boost_line_cents + closed.boost_bingo_cents
        if boost:
            # The reserve's boost goes to the players' prizes: the operator's oldest contributions first (R91.9).
            self.state.jackpot_contributions = self.state.jackpot_contributions.won(boost)
        game.settlement = Settlement(
            sales_cents=closed.collection_cents,
            line_cents=closed.line_cents,
            bingo_cents=closed.bingo_cents,
            carry_line_cents=closed.carry_line_cents,
            carry_bingo_cents=closed.carry_bingo_cents,
            contributions=dict(closed.contributions),
            house_cents=closed.house_cents,
            tax_cents=closed.tax_cents,
            boost_cents=boost,
        )
        game.refs = tuple(sorted(game.machine.in_play))
        game.detector = WinDetector(self._cells(game))
        self._source = None  # a new draw: the next ball comes from a fresh source

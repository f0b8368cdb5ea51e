"""The hall game's projection: its state rebuilt from journal records, and its snapshot."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


from hall_server.hall.games.common import RESERVE, GamesBase, _event_of
from hall_server.hall.games.state import Game, GamesState, PrizePaid, Settlement, feed, let_go_of_cards
from protocol.chain import Record
from protocol.claims import CardRef
from protocol.events import EVENT_TYPES, BallDrawn, BallVoided, CardSold, SaleClosed, SaleOpened, TerminalFailed
from protocol.game import TraditionalGame
from protocol.sale import GameSale, Series
from protocol.settlement import tax_cents
from protocol.wins import WinDetector



def _sell_range(machine: TraditionalGame, p: Mapping[str, Any]) -> None:
    """Fold the paper cards ``first``..``last`` of a ``paper_cards_sold`` record into the game."""
    for n in range(p["first"], p["last"] + 1):
        machine.sell_card(series=p["series"], card_number=n, stake_cents=p["price_cents"], account=p["account"])


def _sell_virtual_range(game: Game, p: Mapping[str, Any]) -> None:
    """Fold the virtual cards of a ``virtual_cards_bought`` record into the game, with their stake."""
    for n in range(p["first"], p["last"] + 1):
        game.machine.sell_card(series=p["series"], card_number=n, stake_cents=p["stake_cents"],
                               account=p["account"], terminal_id=p["terminal"])
        game.stake_pcts[CardRef(p["series"], n)] = p["stake_pct"]

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
                    "refunded_after_close_cents": game.refunded_after_close_cents,
                }
            )
        return {
            "games": games,
            "last_sold": dict(self.state.last_sold),
            "megabingo": self.state.megabingo,
            "operator_superbingo": dict(self.state.operator_superbingo),
            "operator_jackpot": dict(self.state.operator_jackpot),
            "reserve_at_session_start": dict(self.state.reserve_at_session_start),
            "jackpot_contributions": [dataclasses.astuple(c) for c in self.state.jackpot_contributions.contributions],
        }

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state, self._source = GamesState(), None

    def apply(self, record: Record) -> None:
        p = record.payload
        state = self.state
        kind = record.type
        if kind == "sale_opened" and "card_set" in p:  # a paper game of this hall, not a relayed one
            opened = _event_of(record)
            assert isinstance(opened, SaleOpened)
            machine = TraditionalGame(opened.game_id)
            feed(machine, opened)
            series = Series(opened.series, p["card_set"], opened.price_cents, p["card_count"], opened.first_card - 1)
            # Only this session's games matter from now on (numbering, the last superbingo
            # game, the last game): earlier sessions' games, all collected, are let go.
            state.games = [g for g in state.games if g.session == p["session"]]
            state.games.append(
                Game(
                    game_id=opened.game_id,
                    session=p["session"],
                    number=p["game_number"],
                    machine=machine,
                    sale=GameSale.open(series, previous_game_collected=True),
                    card_set=p["card_set"],
                )
            )
            return
        if kind == "session_opened":
            # Nothing moves money on the opening: the ledger holds the reserve as it opened.
            state.reserve_at_session_start[p["session"]] = self.ledger.balance(RESERVE)
            return
        if kind == "megabingo_announced":
            state.megabingo = {k: p[k] for k in ("date", "time", "amount_cents", "announced_on")}
            return
        if kind == "operator_contribution":
            if p["pot"] == "jackpot":
                state.operator_jackpot[p["month"]] = state.operator_jackpot.get(p["month"], 0) + p["amount_cents"]
                state.jackpot_contributions = state.jackpot_contributions.contributed(p["date"], p["amount_cents"])
            else:
                state.operator_superbingo[p["date"]] = state.operator_superbingo.get(p["date"], 0) + p["amount_cents"]
            return
        if kind == "jackpot_contribution_recovered":
            state.jackpot_contributions, _ = state.jackpot_contributions.recovered(p["date"], p["amount_cents"])
            return
        if kind == "prize_paid" and p["prize"] == "jackpot":
            # Players won this much of the jackpot: the operator's oldest contributions first (R91.9).
            state.jackpot_contributions = state.jackpot_contributions.won(sum(cents for _, cents in p["payments"]))
        game = state.current
        if game is None or p.get("game_id") != game.game_id:
            return  # not a record of the game under way: another module's
        if kind == "paper_cards_sold":
            game.sale.sell(p["series"], p["first"], p["last"], p["seller"])
            if "price_cents" in p:  # the range is the cards; older journals follow it with a card_sold each
                _sell_range(game.machine, p)
            state.last_sold[p["series"]] = max(state.last_sold.get(p["series"], 0), p["last"])
        elif kind == "virtual_cards_bought":
            if p.get("price_cents") is not None:  # the range is the cards; older journals follow it with a card_sold each
                _sell_virtual_range(game, p)
        elif kind == "second_series_opened":
            game.sale.add_second_series(Series(p["series"], p["card_set"], p["face_value_cents"], p["card_count"]))
        elif kind == "pots_announced":
            game.superbingo_limit = p["superbingo_limit"]
            game.grand_superbingo_limit = p["grand_superbingo_limit"]
            game.jackpot_threshold = p["jackpot_threshold"]
            game.megabingo_cents = p["megabingo_cents"]
        elif kind == "reserve_boost_announced":
            game.boost_line_cents, game.boost_bingo_cents = p["line_cents"], p["bingo_cents"]
        elif kind == "last_game_announced":
            game.last_game = True
        elif kind == "prize_paid":
            game.paid[p["prize"]] = PrizePaid(
                p["prize"], p["ball_count"], p["amount_cents"], p["carry_cents"],
                tuple((label, cents) for label, cents in p["payments"]), p["desk"],
            )
            if p["prize"] == "megabingo":
                state.megabingo = None  # played
        elif kind == "cards_collected":
            game.collected = True
            let_go_of_cards(game)
        elif kind in EVENT_TYPES:
            event = _event_of(record)
            feed(game.machine, event)
            if isinstance(event, CardSold) and "stake_pct" in p:
                game.stake_pcts[CardRef(event.series, event.card_number)] = p["stake_pct"]
            elif isinstance(event, SaleClosed):
                self._sale_closed(game, p)
            elif isinstance(event, TerminalFailed) and game.settlement is not None:
                refunded = set(p.get("refunded", ()))
                game.refunded_after_close_cents += sum(
                    sale.stake_cents for ref, sale in game.machine.sales.items() if ref.label in refunded
                )
            elif isinstance(event, BallDrawn):
                assert game.detector is not None
                game.detector.ball_drawn(event.ball)
            elif isinstance(event, BallVoided):
                assert game.detector is not None
                game.detector.last_ball_voided()
                source = self._source
                if source is not None and source.drawn and source.drawn[-1] == event.ball:
                    source.put_back(event.ball)  # the ball goes back into the chamber

    def _sale_closed(self, game: Game, p: Mapping[str, Any]) -> None:
        game.sale.close()
        boost = p.get("boost_line_cents", 0) + p.get("boost_bingo_cents", 0)
        if boost:
            # The reserve's boost goes to the players' prizes: the operator's oldest contributions first (R91.9).
            self.state.jackpot_contributions = self.state.jackpot_contributions.won(boost)
        game.settlement = Settlement(
            sales_cents=p["collection_cents"],
            line_cents=p["line_cents"],
            bingo_cents=p["bingo_cents"],
            carry_line_cents=p["carry_line_cents"],
            carry_bingo_cents=p["carry_bingo_cents"],
            contributions=dict(p["contributions"]),
            house_cents=p["house_cents"],
            tax_cents=p["tax_cents"],
            boost_cents=p.get("boost_line_cents", 0) + p.get("boost_bingo_cents", 0),
        )
        game.refs = tuple(sorted(game.machine.in_play))
        game.detector = WinDetector(self._cells(game))
        self._source = None  # a new draw: the next ball comes from a fresh source

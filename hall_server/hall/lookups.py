"""What the desks look up without changing anything: a claimed card, a player's account.

Two commands of the core, given and permission-checked like every other, that journal
nothing (as printing a ticket journals nothing) and answer with a picture:

* ``show_card`` (table chief, room chief): a card of the game in play as the claim
  check shows it - its 27 cells, the balls drawn so far, and for the line and the
  bingo the ball on which the card completed it (R85.6, R85.11, R87);
* ``find_player_account`` (cashier, administrator): an account found by the number on
  its ticket or card (typed or scanned) - its medium, visitor, balance and latest
  movements (R92.5d, R93.7);
* ``recall_games`` (every staff role): the hall's last finished games, newest first, with
  their cards sold, collection, balls and prizes, as the minutes book folds them from the
  journal (:mod:`hall_server.reports.recall`, R83.4, R92.3).

The series the hall may sell (:func:`series_on_sale`) are read here too, for the sale
desk's choices.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.internet.defer import Deferred

from hall_server.hall.cashier import CashierModule, player_account
from hall_server.hall.games.common import GameModuleError, _whole
from hall_server.hall.games.module import GamesModule
from hall_server.hall.roles import Role
from hall_server.reports.printed import said
from hall_server.reports.recall import GameRecall
from protocol.claims import CardRef
from protocol.errors import N_
from protocol.patterns import TRADITIONAL_PATTERNS, completion_ball
from server_kit.core import Actor, CommandCore, CommandSpec, RunBlocking, run_inline

PERMISSIONS: dict[str, set[Role]] = {
    "show_card": {Role.TABLE_CHIEF, Role.ROOM_CHIEF},
    # The table chief's only while standing in for the cashier (R80.4, CashierModule.standing_in).
    "find_player_account": {Role.CASHIER, Role.TABLE_CHIEF, Role.ADMINISTRATOR},
    "recall_games": {role for role in Role if role is not Role.SYSTEM},  # every staff role
}
#: How many of an account's latest movements the desk shows (the statement has them all).
LATEST_MOVEMENTS = 8


def series_on_sale(games: GamesModule) -> list[dict[str, Any]]:
    """Every registered series with its price, by number; ``last_sold`` is the catalog's (cards sold before
    the hall server kept the series): the console's picture adds what the committed records sold."""
    return [
        {"series": info.number, "card_set": info.card_set, "price_cents": info.face_value_cents,
         "card_count": info.card_count, "last_sold": info.last_sold}
        for info in games.catalog.all_series()
    ]


class LookupModule:
    """The read-only commands of the desks; holds nothing of the hall's state but the recall's last answer."""

    def __init__(self, core: CommandCore, games: GamesModule, cashier: CashierModule,
                 run: RunBlocking = run_inline) -> None:
        self.core = core
        self.games = games
        self.cashier = cashier
        # The recall folds the whole journal: on a thread of its own in the server (``run``).
        self.recall = GameRecall(core.journal.records, run)
        core.observers.append(self.recall.committed)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("show_card", self.show_card, {"series": int, "card_number": int},
             N_("show a card of the game with the balls drawn marked and the ball that completed it")),
            ("find_player_account", self.find_account, {"account": str},
             N_("find a player's account by the number on its ticket or card: its balance and movements")),
            ("recall_games", self.recall_games, {"count": int},
             N_("the last finished games, newest first: cards sold, balls, prizes and winners")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    def _checked(self, actor: Actor, command: str) -> None:
        self.core.check_permission(actor, command)

    def show_card(self, actor: Actor, series: int, card_number: int) -> Deferred[dict[str, Any]]:
        def look() -> dict[str, Any]:
            self._checked(actor, "show_card")
            game = self.games.require_game()
            ref = CardRef(_whole(series, "a series"), _whole(card_number, "a card number"))
            card = self.games.card_in_play(game, ref)
            if card is None:
                raise GameModuleError(f"card {ref} was not sold in game {game.game_id}")
            drawn = list(game.machine.drawn)
            completed: dict[str, Any] = {}
            for pattern in TRADITIONAL_PATTERNS.patterns:
                count = completion_ball(pattern, card, drawn)
                won = game.machine.won.get(pattern.name)
                completed[pattern.name] = None if count is None else {
                    "ball_count": count, "ball": drawn[count - 1],
                    "won": won is not None and ref in won.cards,
                }
            return {"game_id": game.game_id, "series": ref.series, "card_number": ref.number,
                    "cells": list(card.cells), "drawn": drawn, "completed": completed}

        return defer.maybeDeferred(look)

    def find_account(self, actor: Actor, account: str) -> Deferred[dict[str, Any]]:
        def look() -> dict[str, Any]:
            self._checked(actor, "find_player_account")
            self.cashier.standing_in(actor)
            found = self.cashier.account(account)
            movements = self.cashier.state.movements.get(found.number, [])
            return {
                "account": found.number, "medium": found.medium, "visitor": found.visitor,
                "closed": found.closed, "opened_ms": found.opened_ms,
                "balance_cents": self.cashier.ledger.balance(player_account(found.number)),
                "movements": [
                    {"seq": m.seq, "time_ms": m.time_ms, "reason": m.reason, "amount_cents": m.amount,
                     "balance_cents": m.balance, "said": said(m.reason)}
                    for m in movements[-LATEST_MOVEMENTS:]
                ],
            }

        return defer.maybeDeferred(look)

    def recall_games(self, actor: Actor, count: int) -> Deferred[dict[str, Any]]:
        def checked() -> Deferred[list[dict[str, Any]]]:
            self._checked(actor, "recall_games")
            return self.recall.games(count)

        return defer.maybeDeferred(checked).addCallback(lambda games: {"games": games})

"""A day of network games as audit replay facts and results (FORMATS.md sections 2 and 3).

:func:`scenario` writes the raw facts (``bingo-replay/2``, whose ``rules.sharing`` is
``by_stake``: each prize shared whole by stake, R93.13; left out, the hall's way with carries,
for a day of games from a journal written before that rule): the rules, the carries
before the day's first game, and per game every card in play with its stake and the
draw.  Card ids say where each card was bought: ``HALL/V1-13``.  :func:`result` writes
what the games' own events recorded (``bingo-replay-result/2``), built from the
``central_prize_won`` and ``central_card_won`` events and the carries of each game's
close, never by running the replay, so ``bingo replay`` agreeing with it is a real check.

A failed terminal's refund after the close (R96.3: the house pays, the prizes announced
stand on the whole collection) is a fact of the scenario: the cards it took out are the
game's ``refunded_after_close``, counted in its sales and out of its draw, and the result
says what the house paid back (``refunded_after_close_cents``); a game whose every card
was refunded that way is exported too, its prizes carrying whole.

A game the replay format cannot express is refused with :class:`ExportRefused`,
naming the game and the reason: a pattern other than the line and the bingo, a game
not played (R96.2), rules or carries that change between games.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from central_server.domain.config import export_card_id
from central_server.domain.errors import CentralError
from central_server.domain.game import CentralGame, Phase
from protocol.cards import COLUMNS, ROWS
from protocol.records.central import CentralStakeReturned
from protocol.settlement import tax_cents
from protocol.replay import INPUT_FORMAT, OUTPUT_FORMAT, day_sharing
from protocol.settlement import BY_STAKE


class ExportRefused(CentralError):
    """A day the audit replay format cannot express; the message names the game and why."""

    code = "not_now"


def _rows(cells: np.ndarray) -> list[list[int]]:
    grid = cells.reshape(ROWS, COLUMNS)
    return [[int(n) for n in row if n] for row in grid]


def _check(game: CentralGame) -> None:
    why = None
    if game.phase is Phase.NOT_PLAYED:
        why = "it was declared not played (R96.2) and has no draw to a bingo"
    elif game.phase is not Phase.CLOSED or ("bingo" not in game.prizes and game.cards_in_play):
        why = "it has not been played to its bingo"
    elif set(game.config.patterns.names) != {"line", "bingo"}:
        extra = sorted(set(game.config.patterns.names) - {"line", "bingo"})
        why = f"it plays the pattern(s) {', '.join(extra)}, which the replay format cannot express"
    if why is not None:
        raise ExportRefused(f"network game {game.game_id} cannot be exported: {why}")


def sharing_of(shared_by_stake: Sequence[bool], game_ids: Sequence[str]) -> str:
    """How a day's games shared their prizes, as ``shared_by_stake`` says game by game.

    Games that share the whole prize by stake (R93.13) are written with ``rules.sharing``
    ``by_stake``; a day of games from a journal written before that rule shares the hall's
    way, the key left out. One day's file has one rule: a day holding both is refused,
    naming the first of each.
    """
    sharing = day_sharing(shared_by_stake)
    if sharing is not None:
        return sharing
    new = game_ids[list(shared_by_stake).index(True)]
    old = game_ids[list(shared_by_stake).index(False)]
    raise ExportRefused(
        f"network game {new} shares its prizes by stake (R93.13) and network game {old}, of the same day, by the "
        "earlier rule with carries; the replay format plays one rule a day"
    )


def _rules_and_opening(games: Sequence[CentralGame]) -> tuple[dict[str, Any], dict[str, int]]:
    if not games:
        raise ExportRefused("there is no network game to export that day")
    first = games[0].config
    rules: dict[str, Any] = {"line_bp": first.share("line").basis_points, "bingo_bp": first.share("bingo").basis_points}
    carries = {"carry_line": first.share("line").carry_in_cents, "carry_bingo": first.share("bingo").carry_in_cents}
    opening = dict(carries)
    for game in games:
        _check(game)
    if _sharing(games) == BY_STAKE:
        rules["sharing"] = BY_STAKE
    for game in games:
        config = game.config
        if {"line_bp": config.share("line").basis_points, "bingo_bp": config.share("bingo").basis_points} != {
            "line_bp": rules["line_bp"], "bingo_bp": rules["bingo_bp"]
        }:
            raise ExportRefused(f"network game {game.game_id} cannot be exported: its shares differ from the day's first game")
        given = {"carry_line": config.share("line").carry_in_cents, "carry_bingo": config.share("bingo").carry_in_cents}
        if given != carries:
            raise ExportRefused(
                f"network game {game.game_id} cannot be exported: it started with the carries {given}, "
                f"but the game before it left {carries}"
            )
        assert game.carries is not None
        carries = {"carry_line": game.carries["line"], "carry_bingo": game.carries["bingo"]}
    return rules, opening


def _cards(game: CentralGame, layouts: np.ndarray) -> list[dict[str, Any]]:
    label = game.config.series_label
    refunded = game.refunded_cards
    out = []
    for p in game.purchases:
        stake_pct = p.stake_pct
        for number in range(p.first_card, p.first_card + p.card_count):
            if number in refunded:
                continue
            out.append({
                "id": export_card_id(p.hall_id, label, number),
                "stake_pct": stake_pct,
                "rows": _rows(layouts[number - 1]),
            })  # fmt: skip
    return out


def house_returns(game: CentralGame) -> list[CentralStakeReturned]:
    """The stakes a failed terminal's refund returned after the close, paid by the house (R96.3), in order."""
    return [e for e in game.events if isinstance(e, CentralStakeReturned) and e.paid_by == "house"]


def house_refunds(game: CentralGame) -> list[tuple[str, int, int]]:
    """The cards those refunds took out of the game: ``(hall, card number, stake percent)`` in the order refunded."""
    pcts = {(p.hall_id, p.request_id): p.stake_pct for p in game.purchases}
    return [(e.hall_id, number, pcts[(e.hall_id, e.purchase_request_id)])
            for e in house_returns(game) for number in e.card_numbers]


def _game_facts(number: int, game: CentralGame, layouts: np.ndarray) -> dict[str, Any]:
    facts: dict[str, Any] = {"game": number, "price_cents": game.config.price_cents,
                             "cards": _cards(game, layouts), "draw": list(game.balls)}
    refunded = house_refunds(game)
    if refunded:
        label = game.config.series_label
        facts["refunded_after_close"] = [{"id": export_card_id(hall, label, card), "stake_pct": pct}
                                         for hall, card, pct in refunded]
    return facts


def _sharing(games: Sequence[CentralGame]) -> str:
    return sharing_of([g.sale is not None and g.sale.sharing == BY_STAKE for g in games], [g.game_id for g in games])


def scenario(date: str, games: Sequence[CentralGame], layouts: np.ndarray) -> dict[str, Any]:
    """The day's network games as replay raw facts (``bingo-replay/2``, with ``rules.sharing`` ``by_stake``
    when they share by stake, R93.13), in the order given."""
    rules, opening = _rules_and_opening(games)
    return {
        "format": INPUT_FORMAT,
        "rules": rules,
        "opening": opening,
        "sessions": [
            {"date": date, "games": [_game_facts(number, game, layouts) for number, game in enumerate(games, start=1)]}
        ],
    }


def result(date: str, games: Sequence[CentralGame]) -> dict[str, Any]:
    """What the games' events recorded, as the replay's result of the scenario's version."""
    _rules_and_opening(games)
    out = []
    total_sales = total_paid = total_tax = 0
    for number, game in enumerate(games, start=1):
        assert game.sale is not None and game.carries is not None
        label = game.config.series_label
        sales = game.sale.sales_cents
        prizes = {}
        for name in ("line", "bingo"):
            won = game.prizes.get(name)
            if won is None:  # no card left in play (every one refunded): the prize carries whole
                amount = game.sale.prize_amounts[name]
                prizes[name] = {"ball": 0, "amount_cents": amount, "carry_cents": amount, "paid": []}
                continue
            paid = sorted(
                (export_card_id(w.hall_id, label, w.card_number), w.payment_cents)
                for w in game.winners
                if w.pattern == name
            )
            prizes[name] = {
                "ball": won.ball_count,
                "amount_cents": won.amount_cents,
                "carry_cents": won.carry_cents,
                "paid": [{"card": card, "cents": cents} for card, cents in paid],
            }
            total_paid += won.paid_cents
        tax = tax_cents(sales)
        total_sales += sales
        total_tax += tax
        bingo = game.prizes.get("bingo")
        recorded: dict[str, Any] = {
            "date": date, "game": number, "sales_cents": sales, "tax_cents": tax,
            "balls_drawn": bingo.ball_count if bingo is not None else len(game.balls),
            "prizes": prizes,
        }
        returned = house_returns(game)
        if returned:
            recorded["refunded_after_close_cents"] = sum(e.amount_cents for e in returned)
        out.append({
            **recorded,
            "pots": {
                "carry_line": game.carries["line"], "carry_bingo": game.carries["bingo"],
                "superbingo": 0, "grand_superbingo": 0, "megabingo": 0,
                "jackpot_accumulated": 0, "jackpot_reserve": 0,
            },
        })  # fmt: skip
    return {
        "format": OUTPUT_FORMAT,
        "games": out,
        "totals": {"sales_cents": total_sales, "paid_cents": total_paid, "tax_cents": total_tax},
    }


__all__ = ["ExportRefused", "house_refunds", "house_returns", "result", "scenario", "sharing_of"]

"""A day of network games as audit replay facts and results (FORMATS.md sections 2 and 3).

:func:`scenario` writes the raw facts (``bingo-replay/2``, whose ``rules.sharing`` is
``by_stake``: each prize shared whole by stake, R93.13; left out, the hall's way with carries,
for a day of games from a journal written before that rule): the rules, the carries
before the day's first game, and per game every card in play with its stake and the
draw.  A day whose games play other patterns than the line and the bingo is written in
``bingo-replay/4`` (``rules.patterns``, each with its share and carry), and a day with
cards refunded after a sale's close in ``bingo-replay/3`` (its tax net of those refunds,
as the daily and yearly reports take it, R98); both number the day's one session 1.  Card ids say where each card was bought: ``HALL/V1-13``.  :func:`result` writes
what the games' own events recorded (``bingo-replay-result/2``), built from the
``central_prize_won`` and ``central_card_won`` events and the carries of each game's
close, never by running the replay, so ``bingo replay`` agreeing with it is a real check.

A failed terminal's refund after the close (R96.3: the house pays, the prizes announced
stand on the whole collection) is a fact of the scenario: the cards it took out are the
game's ``refunded_after_close``, counted in its sales and out of its draw, and the result
says what the house paid back (``refunded_after_close_cents``); a game whose every card
was refunded that way is exported too, its prizes carrying whole.

A game the replay format cannot express is refused with :class:`ExportRefused`,
naming the game and the reason: a game not played (R96.2), rules or carries that change
between games.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from central_server.domain.config import export_card_id
from central_server.domain.errors import CentralError
from central_server.domain.game import CentralGame, Phase
from protocol.cards import COLUMNS, ROWS
from protocol.records.central import CentralStakeReturned
from protocol.settlement import tax_cents
from protocol.replay import (
    INPUT_FORMAT,
    PATTERN_NAMES,
    VERSIONS,
    day_sharing,
    day_stamp,
    network_day_format,
    pattern_rule,
)
from protocol.settlement import BY_STAKE
from protocol.settlement.tax import tax_base_after_refunds


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


def extra_names(game: CentralGame) -> list[str]:
    """The game's patterns other than the line and the bingo, in their order of announcement."""
    return [name for name in game.config.patterns.names if name not in PATTERN_NAMES]


def _shares(game: CentralGame) -> dict[str, Any]:
    config = game.config
    shares: dict[str, Any] = {"line_bp": config.share("line").basis_points, "bingo_bp": config.share("bingo").basis_points}
    extras = [pattern_rule(config.share(name).pattern, config.share(name).basis_points) for name in extra_names(game)]
    if extras:
        shares["patterns"] = extras
    return shares


def _carried_in(game: CentralGame) -> dict[str, int]:
    return {f"carry_{name}": game.config.share(name).carry_in_cents for name in (*PATTERN_NAMES, *extra_names(game))}


def _rules_and_opening(games: Sequence[CentralGame]) -> tuple[dict[str, Any], dict[str, int]]:
    if not games:
        raise ExportRefused("there is no network game to export that day")
    rules = _shares(games[0])
    carries = opening = _carried_in(games[0])
    for game in games:
        _check(game)
    if _sharing(games) == BY_STAKE:
        rules["sharing"] = BY_STAKE
    elif "patterns" in rules:
        raise ExportRefused(f"network game {games[0].game_id} cannot be exported: it plays other patterns than the "
                            "line and the bingo under the earlier rule with carries, which the replay format cannot express")
    for game in games:
        if {k: v for k, v in rules.items() if k != "sharing"} != _shares(game):
            raise ExportRefused(f"network game {game.game_id} cannot be exported: its shares differ from the day's first game")
        given = _carried_in(game)
        if given != carries:
            raise ExportRefused(
                f"network game {game.game_id} cannot be exported: it started with the carries {given}, "
                f"but the game before it left {carries}"
            )
        assert game.carries is not None
        carries = {f"carry_{name}": game.carries[name] for name in (*PATTERN_NAMES, *extra_names(game))}
    return rules, opening


def format_of(games: Sequence[CentralGame]) -> str:
    """The replay format a day of ``games`` is written in (:func:`protocol.replay.network_day_format`)."""
    return network_day_format(other_patterns=bool(extra_names(games[0])),
                              refunds_after_close=any(house_returns(game) for game in games))


def _series_layouts(game: CentralGame, layouts: np.ndarray | Mapping[str, np.ndarray]) -> np.ndarray:
    """The numbers of the cards of the series ``game`` sells: ``layouts`` itself, or its entry for the series."""
    if isinstance(layouts, np.ndarray):
        return layouts
    label = game.config.series_label
    if label not in layouts:
        raise ExportRefused(f"network game {game.game_id} cannot be exported: the library holds no series {label}")
    return layouts[label]


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


def _game_facts(number: int, game: CentralGame, layouts: np.ndarray | Mapping[str, np.ndarray]) -> dict[str, Any]:
    facts: dict[str, Any] = {"game": number, "price_cents": game.config.price_cents,
                             "cards": _cards(game, _series_layouts(game, layouts)), "draw": list(game.balls)}
    refunded = house_refunds(game)
    if refunded:
        label = game.config.series_label
        facts["refunded_after_close"] = [{"id": export_card_id(hall, label, card), "stake_pct": pct}
                                         for hall, card, pct in refunded]
    return facts


def _sharing(games: Sequence[CentralGame]) -> str:
    return sharing_of([g.sale is not None and g.sale.sharing == BY_STAKE for g in games], [g.game_id for g in games])


def scenario(date: str, games: Sequence[CentralGame], layouts: np.ndarray | Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The day's network games as replay raw facts (``bingo-replay/2``, with ``rules.sharing`` ``by_stake``
    when they share by stake, R93.13; versions 3 and 4 as :func:`format_of` says), in the order given.

    ``layouts``: the numbers of the series' cards, or the library's series by label when the day's games
    sell several (each card's id names its series: ``HALL/V1-13``, ``HALL/V2-13``)."""
    rules, opening = _rules_and_opening(games)
    version = format_of(games)
    return {
        "format": version,
        "rules": rules,
        "opening": opening,
        "sessions": [
            {**day_stamp(date, version),
             "games": [_game_facts(number, game, layouts) for number, game in enumerate(games, start=1)]}
        ],
    }


def result(date: str, games: Sequence[CentralGame]) -> dict[str, Any]:
    """What the games' events recorded, as the replay's result of the scenario's version."""
    _rules_and_opening(games)
    version = format_of(games)
    out = []
    total_sales = total_paid = total_tax = 0
    for number, game in enumerate(games, start=1):
        assert game.sale is not None and game.carries is not None
        label = game.config.series_label
        sales = game.sale.sales_cents
        prizes = {}
        for name in (*PATTERN_NAMES, *extra_names(game)):
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
        returns = house_returns(game)
        returned = sum(e.amount_cents for e in returns)
        # Version 2 taxes the whole collection; versions 3 and 4 the amounts staked, net of the refunds (R98).
        tax = tax_cents(sales if version == INPUT_FORMAT else tax_base_after_refunds(sales, returned))
        total_sales += sales
        total_tax += tax
        bingo = game.prizes.get("bingo")
        recorded: dict[str, Any] = {
            **day_stamp(date, version), "game": number, "sales_cents": sales, "tax_cents": tax,
            "balls_drawn": bingo.ball_count if bingo is not None else len(game.balls),
            "prizes": prizes,
        }
        if returns:
            recorded["refunded_after_close_cents"] = returned
        out.append({
            **recorded,
            "pots": {
                "carry_line": game.carries["line"], "carry_bingo": game.carries["bingo"],
                "superbingo": 0, "grand_superbingo": 0, "megabingo": 0,
                "jackpot_accumulated": 0, "jackpot_reserve": 0,
                **{f"carry_{name}": game.carries[name] for name in extra_names(game)},
            },
        })  # fmt: skip
    return {
        "format": VERSIONS[version][0],
        "games": out,
        "totals": {"sales_cents": total_sales, "paid_cents": total_paid, "tax_cents": total_tax},
    }


__all__ = ["ExportRefused", "extra_names", "format_of", "house_refunds", "house_returns", "result", "scenario",
           "sharing_of"]

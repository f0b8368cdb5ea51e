"""Cards as a terminal shows them, for each kind of game the hall sells: the hall's own virtual
cards, a network game's cards and the hall-annex game's virtual cards.  The state pictures and
the purchases' answers (:mod:`hall_server.terminal_gateway.sales`) share them."""

from __future__ import annotations

from typing import Any

from hall_server.annex.terminals import JointCard
from hall_server.hall.virtual import VirtualCard
from hall_server.network.module import Hold, NetworkGame


def card_json(card: VirtualCard) -> dict[str, Any]:
    """A virtual card as a terminal shows it: number, series, value, stake, code (R82.9-12, R92.9)."""
    return {
        "card": card.label, "ref": card.ref.label, "cells": list(card.cells), "code": card.code,
        "price_cents": card.price_cents, "stake_cents": card.stake_cents, "stake_pct": card.stake_pct,
    }


def network_cards_json(game: NetworkGame, hold: Hold) -> list[dict[str, Any]]:
    """A network purchase's cards as a terminal shows them: series and number, the 27 cells
    the central server gave with its confirmation (row by row, 0 a blank; empty if it gave
    none), value, stake (R92.9, R93.10).  The central server finds the winners; the
    terminal marks the balls on the cells and counts what is to go."""
    return [
        {"card": label, "series": hold.series, "number": (hold.first_card or 0) + index,
         "cells": hold.card_cells(index),
         "price_cents": game.price_cents, "stake_cents": hold.stake_cents, "stake_pct": hold.stake_pct}
        for index, label in enumerate(hold.labels)
    ]


def joint_card_json(card: JointCard) -> dict[str, Any]:
    """A virtual card of the hall-annex game as a terminal shows it (R82.9-12)."""
    return {"card": card.label, "ref": card.ref.label, "cells": list(card.cells), "code": card.code,
            "price_cents": card.price_cents, "stake_cents": card.stake_cents, "stake_pct": card.stake_pct}

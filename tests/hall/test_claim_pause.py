"""The claim pause (R85.6), the correction of a misread ball (R85.5) and the refusal of an
invalid card (R82.8), through the real hall modules and each role's command channel.

The hall game runs on a real SQLite journal with paper cards of series 7 and virtual
cards of the library V1 (series 900 in the game), on a ``task.Clock``; staff act
through :class:`server_kit.web.channel.CommandChannel`, the console's channel, with
their own role: a refusal reaches them as the channel's answer, and nothing is written.
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np
import pytest

from protocol.chain import Record
from server_kit.core import Actor
from server_kit.web.channel import CommandChannel, CommandRequest, SeenRequests
from tests.hall.conftest import result
from tests.hall.test_games import CLASSIC, ScriptedBalls
from tests.terminals.conftest import (
    CASHIER,
    CHIEF,
    LIBRARY_CELLS,
    SELLER,
    TABLE,
    VIRTUAL_NUMBER,
    VirtualHall,
    build_hall,
    prepare,
)

PAPER = range(1, 7)  # paper cards 7-1..7-6: one strip
VIRTUAL = range(1, 7)  # virtual cards V1-1..V1-6: one strip


class Desk:
    """A staff member's console: commands through the command channel, as ``actor``."""

    def __init__(self, hall: VirtualHall, actor: Actor) -> None:
        self.hall = hall
        self.actor = actor
        self.channel = CommandChannel(hall.core)
        self.seen = SeenRequests()
        self.ids = itertools.count(1)

    def answer(self, command: str, **args: Any) -> dict[str, Any]:
        request = CommandRequest(f"{self.actor.name}-{next(self.ids)}", command, args)
        return result(self.channel.submit(self.actor, request, self.seen))

    def __call__(self, command: str, **args: Any) -> list[Record]:
        """Carry out ``command``; the records it committed."""
        answer = self.answer(command, **args)
        assert answer["ok"], f"{self.actor.name}'s {command} was refused: {answer['error']}"
        seqs = {r["seq"] for r in answer["records"]}
        return [r for r in self.hall.journal.records() if r.seq in seqs]

    def refused(self, command: str, match: str, **args: Any) -> str:
        """``command`` is refused with a message containing ``match``, and nothing is written."""
        before = self.hall.core.seq
        answer = self.answer(command, **args)
        assert not answer["ok"], f"{self.actor.name}'s {command} was carried out"
        message = answer["error"]["message"]
        assert match in message, message
        assert self.hall.core.seq == before, "a refused command wrote nothing"
        return message


def rows_of(cells: np.ndarray) -> list[set[int]]:
    return [{int(n) for n in row if n} for row in cells.reshape(3, 9)]


def paper_rows() -> list[tuple[str, set[int]]]:
    return [(f"7-{n}", row) for n in PAPER for row in rows_of(CLASSIC[n - 1])]


def virtual_rows() -> list[tuple[str, set[int]]]:
    return [(f"{VIRTUAL_NUMBER}-{n}", row) for n in VIRTUAL for row in rows_of(LIBRARY_CELLS[n - 1])]


def shared_line(exclude: Sequence[str] = ()) -> tuple[list[int], str, str]:
    """Balls on which a paper card's row and a virtual card's row complete on the same
    (last) ball, the only rows complete then: (balls, paper card, virtual card)."""
    every = paper_rows() + virtual_rows()
    for paper, p_row in paper_rows():
        for virtual, v_row in virtual_rows():
            if paper in exclude or virtual in exclude or len(p_row & v_row) != 1:
                continue
            (last,) = p_row & v_row
            union = p_row | v_row
            complete = [(card, row) for card, row in every if row <= union]
            if sorted(card for card, _ in complete) == sorted([paper, virtual]):
                return sorted(union - {last}) + [last], paper, virtual
    raise AssertionError("no paper row and virtual row share exactly one number")


def game_on(balls: Sequence[int], journal: Any, clock: Any) -> tuple[VirtualHall, dict[str, Desk], str]:
    """An open session and a game whose draw starts with ``balls``: paper cards 7-1..7-6 sold,
    virtual cards V1-1..V1-6 bought by one player; the sale closed.  The desks and the player."""
    scripted = ScriptedBalls()
    scripted.put_first(balls)
    hall = build_hall(journal, clock, scripted)
    prepare(hall)
    desks = {"caller": Desk(hall, SELLER), "table": Desk(hall, TABLE), "chief": Desk(hall, CHIEF),
             "cashier": Desk(hall, CASHIER)}
    anna = hall.player("11111111A", 10_000)
    hall.terminal("T1")
    desks["caller"]("announce_sale", series=7)
    result(hall.virtual.open_sale(SELLER, 60))
    from hall_server.hall.virtual import PurchaseRequest

    result(hall.virtual.request_purchase(PurchaseRequest("T1", anna, anna, len(VIRTUAL), 100, "buy-1")))
    desks["caller"]("sell_cards", series=7, first=PAPER[0], last=PAPER[-1])
    desks["chief"]("close_sale")
    return hall, desks, anna


def draw(desk: Desk, count: int) -> list[Record]:
    """``count`` balls drawn by the caller; the records of the last draw."""
    records: list[Record] = []
    for _ in range(count):
        records = desk("draw_ball")
    return records


def paid(hall: VirtualHall, prize: str) -> dict[str, Any]:
    (record,) = [r for r in hall.journal.records() if r.type == "prize_paid" and r.payload["prize"] == prize]
    return record.payload


# --- R85.6: the claim pause ---------------------------------------------------------------------


@pytest.mark.req("R85.6", "R87", "R88.2")
def test_R85_6_a_line_won_on_one_ball_by_a_virtual_and_a_paper_card_stops_the_draw_and_both_share_it(
    journal: Any, clock: Any
) -> None:
    balls, paper, virtual = shared_line()
    hall, desks, anna = game_on(balls, journal, clock)
    caller, table, cashier = desks["caller"], desks["table"], desks["cashier"]
    line_cents = hall.games.current.settlement.line_cents
    found = draw(caller, len(balls))
    assert [r.payload["card_number"] for r in found if r.type == "prize_won"] == [int(virtual.split("-")[1])]
    assert paper in found[0].payload["completed_line"]
    # The line is found: the draw stops while the caller asks for another card.
    caller.refused("draw_ball", "Another card?")
    (won,) = table("verify_claim", series=7, card_number=int(paper.split("-")[1]))
    assert (won.type, won.payload["ball_count"]) == ("prize_won", len(balls))
    before = hall.balance(anna)
    closed = caller("close_prize")
    assert closed[0].type == "prize_closed" and closed[0].payload["patterns"] == ["line"]
    assert not [r for r in closed if r.type == "prize_paid"], "a prize shared with a paper card is paid at a desk"
    desk = hall.ledger.balance("cash:desk1")
    cashier("pay_prizes", desk="desk1")
    line = paid(hall, "line")
    share = line_cents // 2
    assert line["ball_count"] == len(balls)
    assert sorted(line["payments"]) == sorted([[paper, share], [virtual, share]])
    assert hall.balance(anna) == before + share, "the virtual card's share is credited to its player (R85.9)"
    assert hall.ledger.balance("cash:desk1") == desk - share, "the paper card's share is paid in cash (R78)"
    assert hall.ledger.balance("carry:line") == line_cents - 2 * share
    # The line is closed: the draw goes on.
    assert caller("draw_ball")[0].type == "ball_drawn"

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


@pytest.mark.req("R85.6", "R87.a", "R88.2")
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


@pytest.mark.req("R85.6")
def test_R85_6_with_no_new_claim_for_the_configured_wait_the_prize_closes_by_itself_and_then_takes_no_card(
    journal: Any, clock: Any
) -> None:
    balls, paper, virtual = shared_line()
    hall, desks, anna = game_on(balls, journal, clock)
    caller, table = desks["caller"], desks["table"]
    assert hall.games.prize_wait_s == 10
    line_cents = hall.games.current.settlement.line_cents
    before = hall.balance(anna)
    draw(caller, len(balls))  # the virtual card finds the line
    clock.advance(9)
    table("verify_claim", series=7, card_number=1 if paper != "7-1" else 2)  # a card that has no line: rejected
    clock.advance(9)  # 18 s after the line was found, 9 s after the last claim: still open
    assert hall.games.current.machine.state == "line_found"
    clock.advance(1)
    (closed,) = [r for r in hall.journal.records() if r.type == "prize_closed"]
    (paid,) = [r for r in hall.journal.records() if r.type == "prize_paid"]
    assert closed.type == "prize_closed" and closed.payload["closed_by"] == "hall-server"
    assert closed.payload["wait_s"] == 10 and closed.payload["actor"]["role"] == "system"
    assert paid.payload["payments"] == [[virtual, line_cents]], "only the virtual card was found: credited at once"
    assert hall.balance(anna) == before + line_cents
    # The paper card completed the line on that ball, but its player called after the close.
    (late,) = table("verify_claim", series=7, card_number=int(paper.split("-")[1]))
    assert late.type == "claim_rejected"
    assert late.payload["reason"] == f"the line of ball {len(balls)} is closed; card {paper} was not claimed before it closed"
    assert caller("draw_ball")[0].type == "ball_drawn"


def paper_bingo_balls() -> list[int]:
    """Card 7-1's fifteen numbers first: its rows complete on the way, its bingo on ball 15."""
    return [int(n) for n in CLASSIC[0] if n]


@pytest.mark.req("R85.6", "R85.11")
def test_R85_6_a_bingo_found_stops_the_game_until_the_caller_closes_it_and_a_card_of_an_earlier_ball_does_not_share(
    journal: Any, clock: Any
) -> None:
    hall, desks, _ = game_on(paper_bingo_balls(), journal, clock)
    caller, table, chief = desks["caller"], desks["table"], desks["chief"]
    records = draw(caller, 15)
    assert "7-1" in records[0].payload["completed_bingo"], "nobody called the line: the draw went on"
    won = table("verify_claim", series=7, card_number=1)
    assert [(r.payload["pattern"], r.payload["ball_count"]) for r in won][-1] == ("bingo", 15)
    line_ball = won[0].payload["ball_count"]
    assert [r.payload["pattern"] for r in won] == ["line", "bingo"] and line_ball < 15
    assert hall.games.current.machine.state == "bingo_found"
    caller.refused("draw_ball", "Bingo! Another card?")
    chief.refused("close_game", "the caller closes the prize first")
    (closed,) = caller("close_prize")
    assert closed.payload["patterns"] == ["line", "bingo"] and closed.payload["ball_count"] == 15
    (late,) = table("verify_claim", series=7, card_number=2)
    assert late.type == "claim_rejected", "once closed, the bingo takes no other card"
    chief("close_game")
    desks["cashier"]("pay_prizes", desk="desk1")
    paid = {r.payload["prize"]: r.payload for r in hall.journal.records() if r.type == "prize_paid"}
    assert paid["line"]["payments"] == [["7-1", hall.games.current.settlement.line_cents]]
    assert paid["bingo"]["payments"] == [["7-1", hall.games.current.settlement.bingo_cents]]


# --- R85.5: a misread ball is corrected, never returned to the draw ----------------------------


@pytest.mark.req("R85.5", "R92.10")
def test_R85_5_a_ball_from_the_software_generator_is_never_voided_nor_corrected_and_never_drawn_again(
    journal: Any, clock: Any
) -> None:
    """Finding: the room chief could void a ball that completed an unclaimed paper bingo, and the
    software generator then drew another number: a re-roll."""
    hall, desks, _ = game_on(paper_bingo_balls(), journal, clock)
    caller, table, chief = desks["caller"], desks["table"], desks["chief"]
    records = draw(caller, 15)
    ball = records[0].payload["ball"]
    assert "7-1" in records[0].payload["completed_bingo"]
    assert "there is no command 'void_ball'" in chief.answer("void_ball", ball=ball, reason="misread")["error"]["message"]
    other = next(b for b in range(1, 91) if b not in hall.games.current.machine.drawn)
    for desk in (chief, table):
        desk.refused("correct_ball", "the software generator", ball=ball, corrected=other, reason="misread")
    assert hall.games.current.machine.drawn[-1] == ball
    (line, bingo) = table("verify_claim", series=7, card_number=1)
    assert bingo.payload["ball_count"] == 15, "the ball stands, and the bingo it completed with it"


def blower_game(journal: Any, clock: Any) -> tuple[VirtualHall, dict[str, Desk], str]:
    """A game whose balls are read and announced (the blower's): corrections are possible."""
    hall, desks, anna = game_on(paper_bingo_balls(), journal, clock)
    hall.balls.reads_balls = True
    hall.games._source = None  # the next source is built from the factory, as after a restart
    return hall, desks, anna


@pytest.mark.req("R85.5")
def test_R85_5_both_chiefs_correct_a_misread_ball_and_the_misread_number_stays_in_the_chamber(
    journal: Any, clock: Any
) -> None:
    hall, desks, _ = blower_game(journal, clock)
    caller, table, chief = desks["caller"], desks["table"], desks["chief"]
    first = draw(caller, 1)[0].payload["ball"]
    misread = draw(caller, 1)[0].payload["ball"]
    read_again = 90 if 90 not in (first, misread) else 89
    caller.refused("correct_ball", "may not correct ball", ball=misread, corrected=read_again, reason="x")
    chief.refused("correct_ball", "only the last ball", ball=first, corrected=read_again, reason="x")
    chief.refused("correct_ball", f"{first} has already been drawn", ball=misread, corrected=first, reason="x")
    chief.refused("correct_ball", "say why", ball=misread, corrected=read_again, reason=" ")
    (signed,) = chief("correct_ball", ball=misread, corrected=read_again, reason=f"the reader read {read_again} as {misread}")
    assert signed.type == "ball_correction_signed" and signed.payload["role"] == "room_chief"
    caller.refused("draw_ball", "the other chief signs it")
    chief.refused("correct_ball", "the table chief signs it", ball=misread, corrected=read_again, reason="again")
    table.refused("correct_ball", f"signed ball 2 as {read_again}", ball=misread, corrected=read_again - 1, reason="x")
    (second, corrected) = table("correct_ball", ball=misread, corrected=read_again, reason="the ball on the rack")
    assert second.type == "ball_correction_signed" and corrected.type == "ball_corrected"
    p = corrected.payload
    assert (p["misread"], p["ball"], p["ball_count"], p["signed_by"]) == (misread, read_again, 2, ["rui", "teo"])
    assert p["reason"] == f"the reader read {read_again} as {misread}"
    assert hall.games.current.machine.drawn == (first, read_again)
    assert hall.games.current.detector.drawn == (first, read_again)
    # The misread number was never drawn: it is still in the chamber, and the draw goes on.
    third = draw(caller, 1)[0]
    assert third.payload["ball_count"] == 3 and third.payload["ball"] not in (first, read_again)
    assert misread in [b for b in hall.balls.script if b not in hall.games.current.machine.drawn]


@pytest.mark.req("R85.5")
def test_R85_5_no_correction_after_a_claim_on_the_ball_and_a_claim_lapses_a_signed_correction(
    journal: Any, clock: Any
) -> None:
    hall, desks, _ = blower_game(journal, clock)
    caller, table, chief = desks["caller"], desks["table"], desks["chief"]
    ball = draw(caller, 1)[0].payload["ball"]
    other = next(b for b in range(1, 91) if b not in hall.balls.script[:20])
    chief("correct_ball", ball=ball, corrected=other, reason="misread")
    (rejected,) = table("verify_claim", series=7, card_number=3)  # a player calls on that ball
    assert rejected.type == "claim_rejected"
    table.refused("correct_ball", "the announced number stands", ball=ball, corrected=other, reason="misread")
    assert hall.games.current.correction is None, "the claim lapsed the signed correction"
    assert caller("draw_ball")[0].type == "ball_drawn"


@pytest.mark.req("R85.5", "R85.6")
def test_R85_5_a_ball_a_virtual_card_won_on_is_not_corrected(journal: Any, clock: Any) -> None:
    balls, paper, virtual = shared_line()
    hall, desks, _ = game_on(balls, journal, clock)
    hall.balls.reads_balls = True
    hall.games._source = None
    caller, chief = desks["caller"], desks["chief"]
    found = draw(caller, len(balls))
    assert any(r.type == "prize_won" for r in found)
    other = next(b for b in range(1, 91) if b not in hall.games.current.machine.drawn)
    chief.refused("correct_ball", "cannot correct a ball while the line is open", ball=balls[-1], corrected=other,
                  reason="misread")
    caller("close_prize")
    chief.refused("correct_ball", "the announced number stands", ball=balls[-1], corrected=other, reason="misread")


# --- R82.8: an invalid card is refused -----------------------------------------------------------


@pytest.mark.req("R82.8", "R87.a", "R88.2")
def test_R82_8_the_table_chief_refuses_a_tampered_card_with_the_reason_and_it_shares_nothing(
    journal: Any, clock: Any
) -> None:
    balls, paper, virtual = shared_line()
    hall, desks, anna = game_on(balls, journal, clock)
    caller, table, chief, cashier = desks["caller"], desks["table"], desks["chief"], desks["cashier"]
    line_cents = hall.games.current.settlement.line_cents
    draw(caller, len(balls))
    number = int(paper.split("-")[1])
    chief.refused("refuse_card", "may not refuse card", series=7, card_number=number, reason="x")
    table.refused("refuse_card", "say why the card is refused", series=7, card_number=number, reason="  ")
    table.refused("refuse_card", "virtual card", series=VIRTUAL_NUMBER, card_number=int(virtual.split("-")[1]),
                  reason="x")
    table.refused("refuse_card", "was not sold", series=7, card_number=40, reason="not ours")
    (refused,) = table("refuse_card", series=7, card_number=number, reason="the numbers were scratched and rewritten")
    p = refused.payload
    assert (p["series"], p["card_number"], p["refused_by"], p["ball_count"]) == (7, number, "teo", len(balls))
    assert p["reason"] == "the numbers were scratched and rewritten"
    (rejected,) = table("verify_claim", series=7, card_number=number)
    assert rejected.payload["reason"] == f"card {paper} was refused as invalid: the numbers were scratched and rewritten"
    before = hall.balance(anna)
    closing = caller("close_prize")
    (paid,) = [r.payload for r in closing if r.type == "prize_paid"]
    assert paid["payments"] == [[virtual, line_cents]], "the refused card shares nothing"
    assert hall.balance(anna) == before + line_cents
    assert [r.type for r in closing] == ["prize_closed", "prize_paid", "posting"]


@pytest.mark.req("R82.8", "R85.6")
def test_R82_8_a_card_refused_as_invalid_is_not_named_to_the_caller_when_a_ball_completes_it(
    journal: Any, clock: Any
) -> None:
    balls, paper, virtual = shared_line()
    number = int(paper.split("-")[1])
    rest = [int(n) for n in CLASSIC[number - 1].ravel() if n and int(n) not in balls]
    hall, desks, _ = game_on(balls + rest, journal, clock)
    caller, table = desks["caller"], desks["table"]
    (first,) = [r for r in draw(caller, len(balls)) if r.type == "ball_drawn"]
    assert paper in first.payload["completed_line"], "before its refusal the card is named"
    table("refuse_card", series=7, card_number=number, reason="the numbers were scratched and rewritten")
    caller("close_prize")
    named = []
    for _ in rest:
        (drawn,) = [r for r in caller("draw_ball") if r.type == "ball_drawn"]
        named += [*drawn.payload["completed_line"], *drawn.payload["completed_bingo"]]
    assert set(hall.games.current.machine.drawn) >= {int(n) for n in CLASSIC[number - 1].ravel() if n}
    assert paper not in named, "the caller would hold the draw for a card that can win nothing"
    (rejected,) = table("verify_claim", series=7, card_number=number)
    assert "was refused as invalid" in rejected.payload["reason"]


@pytest.mark.req("R85.5", "R85.6", "R93.10")
def test_R85_5_a_corrected_ball_completes_the_cards_it_completes_and_a_virtual_card_found_stops_the_draw(
    journal: Any, clock: Any
) -> None:
    balls, paper, virtual = shared_line()
    before, last = balls[:-1], balls[-1]
    every = paper_rows() + virtual_rows()
    misread = next(n for n in range(90, 0, -1) if n not in balls
                   and not any(row <= {*before, n} for _, row in every))
    hall, desks, _ = game_on([*before, misread], journal, clock)
    hall.balls.reads_balls = True
    hall.games._source = None
    caller, table, chief = desks["caller"], desks["table"], desks["chief"]
    drawn = draw(caller, len(balls))
    assert drawn[0].payload["ball"] == misread and not [r for r in drawn if r.type == "prize_won"]
    chief("correct_ball", ball=misread, corrected=last, reason=f"the reader read {last} as {misread}")
    (signed, corrected, won) = table("correct_ball", ball=misread, corrected=last, reason="the ball on the rack")
    assert corrected.type == "ball_corrected" and set(corrected.payload["completed_line"]) == {paper, virtual}
    assert won.type == "prize_won" and f"{won.payload['series']}-{won.payload['card_number']}" == virtual
    assert hall.games.current.machine.state == "line_found"
    caller.refused("draw_ball", "Another card?")
    (claimed,) = table("verify_claim", series=7, card_number=int(paper.split("-")[1]))
    assert claimed.type == "prize_won" and claimed.payload["ball_count"] == len(balls)

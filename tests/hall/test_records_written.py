"""Every record the hall writes is one its declarations (protocol/records) read back unchanged,
and the command loop refuses a decision whose facts are not declared, committing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server_kit.core import CommandCore
from server_kit.journal.sql import Journal
from protocol.records import REGISTRY, RecordError, build, parse
from protocol.records.game import BallDrawn
from protocol.records.session import SessionOpened
from tests.audit.conftest import new_hall
from tests.audit.halls import (
    ADMIN, CASHIER, CHIEF, DOOR, SAFE, SELLERS, TABLE, Contribution, GamePlan, Purchase, play_game,
)
from tests.hall.conftest import result


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """Two hall days through the real modules: paper and virtual cards, pots, a failed terminal,
    a refunded game, a voided ball, admission and cashier business, and their journal."""
    hall = new_hall(tmp_path_factory.mktemp("walk"))
    hall.open_day("2026-12-01")
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 40_000))
    play_game(hall, GamePlan(paper=8, purchases=[Purchase(0, 0, 3, 50), Purchase(1, 1, 2, 100)],
                             superbingo_limit=42, seed=11, fail_terminal=True))
    play_game(hall, GamePlan(paper=5, contributions=[Contribution("superbingo", 500, "selling")], refund=True))
    play_game(hall, GamePlan(paper=6, purchases=[Purchase(2, 0, 1, 7)], jackpot_threshold=42, quick=True,
                             seed=3, last=True, refuse_first_call=True, close_by_wait=True))
    result(hall.games.announce_megabingo(CHIEF, "2026-12-20", "21:00"))
    result(hall.admission.record_complaint(DOOR, "Marta Soler", "The board showed a ball late"))
    result(hall.admission.record_incident(DOOR, "A visitor refused to show a document", [1]))
    result(hall.session.request_extra_check(CHIEF, [f"Player {n}" for n in range(10)], "ball 17 looked worn"))
    result(hall.virtual.revoke_terminal(CHIEF, "T2", "screen cracked"))
    result(hall.cashier.cash_out(CASHIER, hall.accounts[2], 1_000, "desk1", "cash", ""))
    hall.close_day()
    result(hall.session.replace_ball_set(CHIEF, "set-2", "a ball chipped"))
    hall.open_day("2026-12-02")
    result(hall.games.announce_sale(SELLERS[0], 1001))
    first = hall.games.current.sale.windows[0].first
    result(hall.games.sell_cards(SELLERS[0], 1001, first, first + 3))
    result(hall.games.close_sale(CHIEF))
    hall.balls.reads_balls = True  # the blower's balls: read, and corrected when misread (R85.5)
    (drawn, *_) = result(hall.games.draw_ball(SELLERS[0]))
    misread = drawn.payload["ball"]
    read_again = next(b for b in range(1, 91) if b not in hall.games.current.machine.drawn)
    result(hall.games.correct_ball(CHIEF, misread, read_again, "misread"))
    result(hall.games.cancel_ball_correction(TABLE))
    result(hall.games.correct_ball(TABLE, misread, read_again, "the reader read it upside down"))
    result(hall.games.correct_ball(CHIEF, misread, read_again, "the ball on the rack"))
    result(hall.cashier.reconcile_desk(CASHIER, "desk1", hall.ledger.balance("cash:desk1")))
    return hall.records()


@pytest.mark.req("R92.3", "R96.4")
def test_every_record_a_hall_day_writes_parses_and_reads_back_unchanged(walked: list[Any]) -> None:
    for stored in walked:
        declared = parse(stored)
        assert declared.to_payload() == stored.payload, f"record {stored.seq} ({stored.type})"


def test_the_walk_writes_most_of_the_declared_types(walked: list[Any]) -> None:
    written = {r.type for r in walked}
    assert written <= set(REGISTRY)
    # Written elsewhere in the suite, through the same journal: the opening record, the
    # blower's, the PIN guard's, hand-finished games and the terminals' refusals.
    assert len(written) >= 40, sorted(set(REGISTRY) - written)


@pytest.mark.req("R92.3")
def test_a_decision_with_an_undeclared_fact_commits_nothing(core: CommandCore, journal: Journal) -> None:
    applied: list[int] = []
    core.add_module(type("Probe", (), {"apply": lambda self, record: applied.append(record.seq)})())
    core.allow({"probe": {ADMIN.role}})
    result(core.execute(ADMIN, "probe", lambda now: [SessionOpened(session=1, date="2026-12-01")]))
    with pytest.raises(RecordError, match="a 'session_opened' record: dtae: is not a field"):
        result(core.execute(ADMIN, "probe", lambda now: [
            BallDrawn("g1", 1, 1), build("session_opened", {"session": 2, "date": "2026-12-02", "dtae": "x"}),
        ]))
    # A (type, payload) pair is not a record, even one its declaration would take.
    with pytest.raises(TypeError, match="probe decided a tuple .* not a declared record"):
        result(core.execute(ADMIN, "probe", lambda now: [
            BallDrawn("g1", 1, 1), ("session_opened", {"session": 2, "date": "2026-12-02"}),
        ]))
    assert [r.seq for r in journal.records()] == [1] and applied == [1] and core.seq == 1


def test_a_declared_record_from_a_decision_is_stamped_with_its_actor(core: CommandCore) -> None:
    core.allow({"probe": {ADMIN.role}})
    (record,) = result(core.execute(ADMIN, "probe", lambda now: [SessionOpened(session=1, date="2026-12-01")]))
    assert record.payload == {"session": 1, "date": "2026-12-01", "actor": {"name": "ines", "role": "administrator"}}

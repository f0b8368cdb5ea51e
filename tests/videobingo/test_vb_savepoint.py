"""The video bingo module's restore point (server_kit/core.py): a copy of its tables, taken at once, that
gives back exactly the machines a checkpoint would, however often the core comes back to it (N1)."""

from __future__ import annotations

import pytest

from tests.hall.conftest import result
from tests.videobingo.halls import Hall, insert_cash


def _play_a_while(hall: Hall, tag: str) -> None:
    for station in (1, 2):
        insert_cash(hall, "vb-1", station, 2_000, f"{tag}-cash-{station}")
        for n in range(3):
            result(hall.vb.play("vb-1", station, 4, n > 0, f"{tag}-play-{station}-{n}"))


@pytest.mark.req("R3.5.d")
def test_the_machines_come_back_as_the_savepoint_kept_them_each_time(hall: Hall) -> None:
    _play_a_while(hall, "before")
    before = hall.vb.checkpoint()
    point = hall.vb.savepoint()
    for tag in ("after", "again"):
        _play_a_while(hall, tag)
        assert hall.vb.checkpoint() != before
        hall.vb.rollback(point)
        assert hall.vb.checkpoint() == before


@pytest.mark.req("R3.5.d")
def test_a_play_whose_commit_fails_leaves_the_machines_and_the_ledger_as_they_were(hall: Hall) -> None:
    _play_a_while(hall, "before")
    hall.core._set_restore_point()  # the machines' savepoint, as the core takes it every so many records
    _play_a_while(hall, "since")  # committed after the restore point: folded again from memory
    machines, balances = hall.vb.checkpoint(), hall.ledger.ledger.balances()
    commit = hall.journal.commit

    def failing(*args: object, **kwargs: object) -> object:
        raise RuntimeError("the commit failed")

    hall.journal.commit = failing  # type: ignore[method-assign]
    refused: list = []
    hall.vb.play("vb-1", 1, 4, False, "lost").addBoth(refused.append)
    hall.journal.commit = commit  # type: ignore[method-assign]
    assert refused and isinstance(refused[0].value, RuntimeError)
    assert hall.vb.checkpoint() == machines and hall.ledger.ledger.balances() == balances

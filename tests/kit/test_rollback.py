"""The guard against a journal behind what its server reported (pentest finding N7), on an in-memory journal."""

from __future__ import annotations

import pytest

from protocol.records.game import BallDrawn
from server_kit.journal.fake import FakeJournal
from server_kit.journal.rollback import RollbackGuard, RolledBack


def journal(records: int) -> FakeJournal:
    kept = FakeJournal()
    for n in range(1, records + 1):
        kept.append(1_790_000_000_000 + n, [BallDrawn("g1", n, n)])
    return kept


def test_N7_a_peer_holding_no_more_than_the_journal_confirms_it() -> None:
    kept = journal(5)
    stops: list[str] = []
    guard = RollbackGuard(kept, stops.append, server="the hall server")
    guard.held("the receiver", 5, kept.kept[4].hash)
    guard.held("the central server", 3, None)  # a peer that does not say the hash: the length alone
    guard.held("the receiver", 0, None)
    assert stops == [] and guard.confirmed == {"the receiver": 0, "the central server": 3}


@pytest.mark.parametrize("held, said", [
    (7, "the receiver holds 7 records of this journal, reported to it before, but the journal here ends at record 5: "
        "the folder was rolled back (an earlier copy of it, or records cut from its end)"),
    (4, "the receiver holds record 4 of this journal with another hash than the record here: the journal was "
        "rewritten from there (a folder rolled back and served on)"),
])
def test_N7_a_peer_holding_more_or_another_record_stops_the_server_once(held: int, said: str) -> None:
    kept = journal(5)
    stops: list[str] = []
    guard = RollbackGuard(kept, stops.append, server="the hall server")
    sentence = f"{said}; the hall server does not serve on it (docs/security.md)"
    for _ in range(2):
        with pytest.raises(RolledBack) as refused:
            guard.held("the receiver", held, "f" * 64)
        assert str(refused.value) == sentence
    with pytest.raises(RolledBack):  # once a peer disagreed, no other confirms the journal
        guard.held("the central server", 1, None)
    assert stops == [sentence]

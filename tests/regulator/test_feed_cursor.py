"""The sender's cursor against the reference receiver, through outages of both (R92.7, R95.3).

The link is in-process here (the TLS link is the layer above); the journal seals real
Ed25519-signed records and the receiver's store is a real SQLite database.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from protocol.regulator_feed import decode, encode
from regulator import store as regulator_store
from regulator.receiver import Receiver
from server_kit.feed.cursor import FeedCursor, FeedProtocolError
from server_kit.journal.fake import FakeJournal
from tests.regulator.registration import register

HALL = "hall:h1"


def cursor_of(journal: FakeJournal, batch: int = 3) -> FeedCursor:
    pem = journal.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return FeedCursor(journal, HALL, pem, batch=batch)


def receiver_at(url: str) -> Receiver:
    return Receiver(regulator_store.Store(regulator_store.open_database(url)), clock=lambda: 0)


def connect(cursor: FeedCursor, receiver: Receiver) -> None:
    hello = decode(encode(cursor.connect()))  # through the wire format, as the link sends it
    register(receiver, HALL, cursor.journal.key)  # type: ignore[attr-defined]
    cursor.position(receiver.hello(hello, HALL))  # type: ignore[arg-type]


def pump(cursor: FeedCursor, receiver: Receiver, batches: int | None = None, lose_acks: bool = False) -> None:
    done = 0
    while (batches is None or done < batches) and (batch := cursor.next_batch()) is not None:
        ack = receiver.batch(decode(encode(batch)), HALL)  # type: ignore[arg-type]
        if not lose_acks:
            cursor.ack(ack)
        done += 1


def commit(journal: FakeJournal, count: int) -> None:
    for _ in range(count):
        journal.append(1_000 + (journal.last.seq if journal.last else 0), [("journal_opened", {"hall": "h1"})])


@pytest.mark.req("R92.7")
def test_after_outages_of_both_sides_the_receiver_holds_every_record_once_in_order(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'regulator.sqlite'}"
    journal = FakeJournal()
    commit(journal, 10)
    cursor, receiver = cursor_of(journal), receiver_at(url)
    connect(cursor, receiver)
    pump(cursor, receiver, batches=2)
    assert cursor.status().to_dict() == {"connected": True, "committed": 10, "acked": 6, "lag": 4}
    # The receiver is restarted after storing a batch whose ack never reached the hall.
    pump(cursor, receiver, batches=1, lose_acks=True)
    cursor.disconnect()
    receiver = receiver_at(url)
    commit(journal, 5)
    connect(cursor, receiver)
    assert cursor.acked == 9
    pump(cursor, receiver, batches=1)
    # The hall is restarted: a new cursor over the same journal knows nothing but what the receiver says.
    cursor = cursor_of(journal, batch=4)
    assert cursor.status().line() == "feed: not connected, 15 records, none acknowledged yet"
    connect(cursor, receiver)
    assert cursor.acked == 12
    pump(cursor, receiver)
    assert [r for r in receiver.store.records(HALL)] == list(journal.records())
    assert cursor.lag == 0 and receiver.store.alerts() == []
    assert cursor.status().line() == "feed: connected, acknowledged 15 of 15 (lag 0)"


@pytest.mark.req("R92.7")
def test_a_receiver_that_says_it_holds_more_than_the_journal_is_not_believed(tmp_path: Path) -> None:
    journal = FakeJournal()
    commit(journal, 3)
    receiver = receiver_at(f"sqlite:///{tmp_path / 'regulator.sqlite'}")
    cursor = cursor_of(journal)
    connect(cursor, receiver)
    pump(cursor, receiver)
    shorter = FakeJournal(journal.key)
    commit(shorter, 2)
    with pytest.raises(FeedProtocolError, match="holds 3 records of hall:h1 but the journal has 2"):
        connect(cursor_of(shorter), receiver)


@pytest.mark.req("R92.7")
def test_records_read_off_the_reactor_for_a_connection_that_moved_on_are_not_sent(tmp_path: Path) -> None:
    """The link reads the journal on a thread: records read for a connection lost (or a position changed)
    meanwhile are dropped, never counted as sent, so the new connection skips none."""
    journal = FakeJournal()
    commit(journal, 8)
    cursor, receiver = cursor_of(journal), receiver_at(f"sqlite:///{tmp_path / 'regulator.sqlite'}")
    connect(cursor, receiver)
    pump(cursor, receiver, batches=1)
    after = cursor.sending_from()
    assert after == 3
    read = cursor.read_after(after)  # on the thread: changes nothing
    assert [r.seq for r in read] == [4, 5, 6] and cursor.sent == 3
    cursor.disconnect()
    connect(cursor, receiver)  # a new connection, from the receiver's position (3)
    pump(cursor, receiver, batches=1)  # it sent 4 to 6 itself
    assert cursor.sending(after, read) is None and cursor.sent == 6  # the stale read is not sent again
    pump(cursor, receiver)
    assert [r for r in receiver.store.records(HALL)] == list(journal.records()) and receiver.store.alerts() == []

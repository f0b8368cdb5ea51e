"""The receiver refuses a central record of a fenced leadership epoch (R92.7, R92.6).

The central server stamps its leadership epoch on every record (docs/replica.md); a
record whose epoch is below one the receiver already stored for that sender was written
by a central server process another had overtaken.  The records are sealed by the
journal code every server uses (Ed25519, hash chain); the receiver's store and its own
signed journal are real SQLite databases migrated by its own migrations.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.chain import Record
from protocol.records.central import CentralCommandRefused
from protocol.records.leadership import CentralLeadershipTaken
from protocol.regulator_feed import CENTRAL, Batch, Hello
from regulator import store as regulator_store
from regulator.receiver import FENCED_EPOCH, Receiver
from server_kit.journal.fake import FakeJournal
from server_kit.journal.sql import Journal
from tests.regulator.registration import register


def pem(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def central_journal(epochs: list[int | None]) -> tuple[FakeJournal, list[Record]]:
    """A central journal: its opening, then one record per entry of ``epochs`` (a take where the epoch rises)."""
    source = FakeJournal()
    source.append(1_000, [("journal_opened", {"central": "central-a"})])
    held = 0
    for epoch in epochs:
        time_ms = source.last.time_ms + 10 if source.last else 1_000
        if epoch is not None and epoch > held:
            entry = CentralLeadershipTaken(holder=f"central-a on host-{epoch} pid 1", previous_epoch=held,
                                           cause="start", epoch=epoch)
            held = epoch
        else:
            entry = CentralCommandRefused(peer="hall-1", command="buy_cards", code="sale_closed",
                                          message="the sale is closed", epoch=epoch)
        source.append(time_ms, [entry])
    return source, list(source.records())


def receiver_at(folder: Path) -> Receiver:
    """The receiver on its store in ``folder``, with its own signed journal (each alert journaled once)."""
    engine = regulator_store.open_database(f"sqlite:///{folder / 'regulator.sqlite3'}")
    key_file = folder / "receiver.key"
    if key_file.exists():
        key = Ed25519PrivateKey.from_private_bytes(key_file.read_bytes())
    else:
        key = Ed25519PrivateKey.generate()
        key_file.write_bytes(key.private_bytes_raw())
    own = Journal(engine, key, head=folder / "receiver-journal.head")
    if own.is_new:
        own.initialise(1_000, {"receiver": "regulator"})
    return Receiver(regulator_store.Store(engine), clock=lambda: 5_000, journal=own)


def alerts(receiver: Receiver) -> list[tuple[str, int]]:
    return [(a.kind, a.seq) for a in receiver.store.alerts()]


def journaled_alerts(receiver: Receiver) -> list[dict[str, object]]:
    assert receiver.journal is not None
    return [r.payload for r in receiver.journal.records() if r.type == "feed_alert_raised"]


@pytest.mark.req("R92.7", "R92.6")
def test_r92_7_a_record_of_an_older_epoch_after_a_newer_one_raises_fenced_epoch_and_stops_the_batch(
    tmp_path: Path,
) -> None:
    # 1 opening, 2 take of epoch 1, 3 epoch 1, 4 take of epoch 2, 5 epoch 2, 6 epoch 1 (fenced), 7 epoch 2
    source, records = central_journal([1, 1, 2, 2, 1, 2])
    receiver = receiver_at(tmp_path)
    register(receiver, CENTRAL, source.key)
    receiver.hello(Hello(CENTRAL, pem(source.key)), CENTRAL)
    assert receiver.batch(Batch(CENTRAL, tuple(records)), CENTRAL).seq == 5
    assert [r.seq for r in receiver.store.records(CENTRAL)] == [1, 2, 3, 4, 5]
    assert alerts(receiver) == [(FENCED_EPOCH, 6)]
    (alert,) = receiver.store.alerts()
    assert "record 6" in alert.detail and "epoch 1" in alert.detail and "epoch 2" in alert.detail
    # Sent again (the sender does not know why it was not acknowledged): not raised twice.
    assert receiver.batch(Batch(CENTRAL, tuple(records[4:])), CENTRAL).seq == 5
    assert alerts(receiver) == [(FENCED_EPOCH, 6)]
    assert [(p["kind"], p["seq"], p["sender"]) for p in journaled_alerts(receiver)] == [(FENCED_EPOCH, 6, CENTRAL)]


@pytest.mark.req("R92.7", "R92.6")
def test_r92_7_the_highest_epoch_is_taken_again_from_the_store_at_the_hello_after_a_restart(tmp_path: Path) -> None:
    source, records = central_journal([1, 2, 2, 1])
    first = receiver_at(tmp_path)
    register(first, CENTRAL, source.key)
    first.hello(Hello(CENTRAL, pem(source.key)), CENTRAL)
    assert first.batch(Batch(CENTRAL, tuple(records[:4])), CENTRAL).seq == 4
    again = receiver_at(tmp_path)  # a restarted receiver on the same store knows only what is stored
    register(again, CENTRAL, source.key)
    assert again.hello(Hello(CENTRAL, pem(source.key)), CENTRAL).acked == 4
    assert again.batch(Batch(CENTRAL, (records[4],)), CENTRAL).seq == 4
    assert alerts(again) == [(FENCED_EPOCH, 5)]
    again.batch(Batch(CENTRAL, (records[4],)), CENTRAL)
    assert alerts(again) == [(FENCED_EPOCH, 5)] and len(journaled_alerts(again)) == 1


@pytest.mark.req("R92.7", "R92.6")
def test_r92_7_the_same_or_a_later_epoch_and_records_without_one_are_never_fenced(tmp_path: Path) -> None:
    # Records before the epoch existed (none), a take, the same epoch, a later take, and an unstamped one.
    source, records = central_journal([None, 1, 1, 3, 3, None, 3])
    receiver = receiver_at(tmp_path)
    register(receiver, CENTRAL, source.key)
    receiver.hello(Hello(CENTRAL, pem(source.key)), CENTRAL)
    assert receiver.batch(Batch(CENTRAL, tuple(records)), CENTRAL).seq == len(records)
    assert alerts(receiver) == []


@pytest.mark.req("R92.7", "R92.6")
def test_r92_7_a_halls_records_carry_no_epoch_and_are_never_fenced(tmp_path: Path) -> None:
    hall = "hall:h1"
    source = FakeJournal()
    for i in range(4):
        source.append(1_000 + i, [("journal_opened", {"hall": "h1"})])
    assert all("epoch" not in r.payload for r in source.records())
    receiver = receiver_at(tmp_path)
    register(receiver, hall, source.key)
    receiver.hello(Hello(hall, pem(source.key)), hall)
    assert receiver.batch(Batch(hall, tuple(source.records())), hall).seq == 4
    assert alerts(receiver) == []

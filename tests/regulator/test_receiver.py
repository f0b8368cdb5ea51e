"""The reference receiver's checks of a feed, on real signed journals (R92.7, R95.3).

The records are sealed by the journal code every server uses (Ed25519, hash chain), the
receiver's store is a real SQLite database migrated by its own migrations.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.chain import Record, seal, signed
from protocol.records.clock import ClockStepped
from protocol.regulator_feed import Batch, Hello
from regulator import store as regulator_store
from regulator.receiver import (
    BAD_SIGNATURE,
    BROKEN_CHAIN,
    CLOCK_BACKWARDS,
    CLOCK_STEPPED,
    GAP,
    KEY_CHANGED,
    NOT_REGISTERED,
    SECRET_HELD,
    FeedRefused,
    Receiver,
)
from server_kit.journal.fake import FakeJournal
from server_kit.journal.sql import Journal
from tests.regulator.registration import register

HALL = "hall:h1"


def pem(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def journal(count: int, start_ms: int = 1_000, step_ms: int = 10) -> tuple[FakeJournal, list[Record]]:
    kept = FakeJournal()
    for i in range(count):
        kept.append(start_ms + i * step_ms, [("journal_opened", {"hall": "h1"})])
    return kept, list(kept.records())


@pytest.fixture
def receiver(database_url: str, tmp_path: Path) -> Receiver:
    """The receiver on each database the system supports (SQLite, PostgreSQL), with its own signed journal."""
    engine = regulator_store.open_database(database_url)
    own = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "receiver-journal.head")
    own.initialise(1_000, {"receiver": "regulator"})
    return Receiver(regulator_store.Store(engine), clock=lambda: 5_000, journal=own)


def say_hello(receiver: Receiver, source: FakeJournal) -> int:
    """``source``'s hall registered with the receiver, and its hello: how many of its records are held."""
    register(receiver, HALL, source.key)
    return receiver.hello(Hello(HALL, pem(source.key)), HALL).acked


def kinds(receiver: Receiver) -> list[tuple[str, int]]:
    return [(a.kind, a.seq) for a in receiver.store.alerts()]


@pytest.mark.req("R92.7")
def test_a_feed_in_batches_is_stored_once_in_order_and_acknowledged(receiver: Receiver) -> None:
    source, records = journal(7)
    assert say_hello(receiver, source) == 0
    assert receiver.batch(Batch(HALL, tuple(records[:3])), HALL).seq == 3
    # The ack of 3 was lost: the sender starts again from 2; what is stored is skipped.
    assert receiver.batch(Batch(HALL, tuple(records[1:7])), HALL).seq == 7
    assert list(receiver.store.records(HALL)) == records
    assert kinds(receiver) == []


@pytest.mark.req("R92.7")
def test_a_restarted_receiver_says_where_the_feed_stands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'regulator.sqlite'}"
    source, records = journal(5)
    first = Receiver(regulator_store.Store(regulator_store.open_database(url)), clock=lambda: 0)
    say_hello(first, source)
    first.batch(Batch(HALL, tuple(records[:4])), HALL)
    again = Receiver(regulator_store.Store(regulator_store.open_database(url)), clock=lambda: 0)
    assert say_hello(again, source) == 4
    assert again.batch(Batch(HALL, (records[4],)), HALL).seq == 5
    assert [r.seq for r in again.store.records(HALL)] == [1, 2, 3, 4, 5]


@pytest.mark.req("R92.7")
def test_a_dropped_record_raises_a_gap_and_nothing_after_it_is_stored(receiver: Receiver) -> None:
    source, records = journal(5)
    say_hello(receiver, source)
    assert receiver.batch(Batch(HALL, (records[0], records[1], records[3], records[4])), HALL).seq == 2
    assert kinds(receiver) == [(GAP, 3)]
    # Sent again, the same gap is not alerted twice; the missing record then mends the feed.
    receiver.batch(Batch(HALL, (records[3],)), HALL)
    assert receiver.batch(Batch(HALL, tuple(records[2:])), HALL).seq == 5
    assert kinds(receiver) == [(GAP, 3)]


@pytest.mark.req("R92.7")
def test_a_tampered_signature_raises_bad_signature(receiver: Receiver) -> None:
    source, records = journal(3)
    say_hello(receiver, source)
    forged = dataclasses.replace(records[1], signature="00" * 64)
    assert receiver.batch(Batch(HALL, (records[0], forged, records[2])), HALL).seq == 1
    assert kinds(receiver) == [(BAD_SIGNATURE, 2)]


@pytest.mark.req("R92.7")
def test_an_altered_payload_raises_bad_signature(receiver: Receiver) -> None:
    source, records = journal(2)
    say_hello(receiver, source)
    altered = dataclasses.replace(records[0], payload={"hall": "h2"})
    assert receiver.batch(Batch(HALL, (altered,)), HALL).seq == 0
    assert kinds(receiver) == [(BAD_SIGNATURE, 1)]


@pytest.mark.req("R92.7")
def test_records_signed_by_a_foreign_key_raise_bad_signature(receiver: Receiver) -> None:
    source, _ = journal(1)
    _, foreign = journal(2)
    say_hello(receiver, source)
    assert receiver.batch(Batch(HALL, tuple(foreign)), HALL).seq == 0
    assert kinds(receiver) == [(BAD_SIGNATURE, 1)]


@pytest.mark.req("R92.7")
def test_a_record_that_does_not_link_raises_broken_chain(receiver: Receiver) -> None:
    source, records = journal(3)
    say_hello(receiver, source)
    receiver.batch(Batch(HALL, (records[0],)), HALL)
    # A correctly signed record 2 that follows another record 1 (the key holder rewrote history).
    (other,) = signed(source.key.sign, source.seal(2_000, [("journal_opened", {"hall": "h1"})], None))
    (relinked,) = signed(source.key.sign, source.seal(2_010, [("journal_opened", {"hall": "h1"})], other))
    assert receiver.batch(Batch(HALL, (relinked,)), HALL).seq == 1
    assert kinds(receiver) == [(BROKEN_CHAIN, 2)]
    # And a stored record coming again with other content: within a minute of the first, counted on it.
    assert receiver.batch(Batch(HALL, (other,)), HALL).seq == 1
    assert kinds(receiver) == [(BROKEN_CHAIN, 2)]
    (alert,) = receiver.store.alerts()
    assert (alert.repeats, alert.last_seq) == (1, 1)


@pytest.mark.req("R92.7")
def test_time_going_backwards_is_stored_and_raises_clock_backwards(receiver: Receiver) -> None:
    # This software's journals never seal a time before the last one: a sender that does
    # (another software, or its key in other hands) seals them by hand.
    key, records, previous = Ed25519PrivateKey.generate(), [], None
    for time_ms in (1_000, 2_000, 1_500, 2_500):
        previous = seal(key, previous, time_ms, "journal_opened", {"hall": "h1"})
        records.append(previous)
    register(receiver, HALL, key)
    receiver.hello(Hello(HALL, pem(key)), HALL)
    assert receiver.batch(Batch(HALL, tuple(records)), HALL).seq == 4
    assert kinds(receiver) == [(CLOCK_BACKWARDS, 3)]


@pytest.mark.req("R92.7")
def test_a_sender_s_clock_step_raises_clock_stepped_naming_the_step(receiver: Receiver) -> None:
    source = FakeJournal()
    source.append(1_000, [("journal_opened", {"hall": "h1"})])
    source.append(2_000, [ClockStepped(step_ms=-180_000, wall_ms=-178_000, ahead_ms=180_000)])
    source.append(1_500, [("journal_opened", {"hall": "h1"})])  # sealed at 2_000: times never go back
    say_hello(receiver, source)
    assert receiver.batch(Batch(HALL, tuple(source.records())), HALL).seq == 3
    assert [r.time_ms for r in source.records()] == [1_000, 2_000, 2_000]
    assert kinds(receiver) == [(CLOCK_STEPPED, 2)]
    (alert,) = receiver.store.alerts()
    assert "stepped back by 180.0 s" in alert.detail and "180.0 s ahead" in alert.detail


@pytest.mark.req("R92.7")
def test_another_key_after_records_raises_key_changed_and_is_refused(receiver: Receiver) -> None:
    source, records = journal(2)
    say_hello(receiver, source)
    receiver.batch(Batch(HALL, tuple(records)), HALL)
    with pytest.raises(FeedRefused, match="another journal key than the one the regulator registered"):
        receiver.hello(Hello(HALL, pem(Ed25519PrivateKey.generate())), HALL)
    assert kinds(receiver) == [(KEY_CHANGED, 3)]
    with pytest.raises(FeedRefused, match="before its hello"):
        receiver.batch(Batch(HALL, tuple(records)), HALL)


@pytest.mark.req("R92.7")
def test_a_sender_may_feed_only_its_own_identity(receiver: Receiver) -> None:
    source, records = journal(1)
    with pytest.raises(FeedRefused, match="may not feed hall:h1"):
        receiver.hello(Hello(HALL, pem(source.key)), "hall:h2")
    say_hello(receiver, source)
    with pytest.raises(FeedRefused, match="may not feed hall:h1"):
        receiver.batch(Batch(HALL, tuple(records)), "central")
    assert list(receiver.store.records(HALL)) == []


@pytest.mark.req("R92.7")
def test_each_alert_is_journaled_once_in_the_receivers_own_signed_journal(receiver: Receiver) -> None:
    source, records = journal(5)
    say_hello(receiver, source)
    receiver.batch(Batch(HALL, (records[0], records[2])), HALL)
    receiver.batch(Batch(HALL, (records[0], records[2])), HALL)  # the same fault again: not news
    forged = dataclasses.replace(records[1], signature="00" * 64)
    receiver.batch(Batch(HALL, (forged,)), HALL)
    own = receiver.journal
    assert own is not None
    kept = [(r.type, r.payload.get("kind"), r.payload.get("seq")) for r in own.records()]
    assert kept == [("journal_opened", None, None), ("feed_sender_registered", None, None),
                    ("feed_alert_raised", GAP, 2), ("feed_alert_raised", BAD_SIGNATURE, 2)]
    assert own.verify() == 4  # every hash, link and signature, and the signed head
    assert kinds(receiver) == [(GAP, 2), (BAD_SIGNATURE, 2)]


@pytest.mark.req("R92.7")
def test_a_sender_the_regulator_has_not_registered_is_refused_at_its_hello(receiver: Receiver) -> None:
    source, records = journal(2)
    with pytest.raises(FeedRefused, match="hall:h1 is not registered with this receiver"):
        receiver.hello(Hello(HALL, pem(source.key)), HALL)
    with pytest.raises(FeedRefused, match="before its hello"):
        receiver.batch(Batch(HALL, tuple(records)), HALL)
    assert kinds(receiver) == [(NOT_REGISTERED, 0)] and receiver.store.position(HALL) is None


@pytest.mark.req("R92.7")
def test_a_record_not_signed_by_the_registered_key_is_compared_with_nothing(receiver: Receiver) -> None:
    """With a hall's certificate alone, records of its seq numbers signed by another key: each is a
    bad signature (counted on the first), never a stored record "rewritten"."""
    source, records = journal(5)
    say_hello(receiver, source)
    receiver.batch(Batch(HALL, tuple(records)), HALL)
    _, forged = journal(5, start_ms=7_000)
    for record in forged:
        assert receiver.batch(Batch(HALL, (record,)), HALL).seq == 5
    (alert,) = receiver.store.alerts()
    assert (alert.kind, alert.seq, alert.repeats, alert.last_seq) == (BAD_SIGNATURE, 1, 4, 5)
    assert list(receiver.store.records(HALL)) == records


@pytest.mark.req("R92.7")
def test_a_record_that_holds_a_secret_is_refused_and_its_sealed_form_is_stored(receiver: Receiver) -> None:
    from protocol.chain import sealed_form

    source = FakeJournal()
    source.append(1_000, [("journal_opened", {"hall": "h1"})])
    source.append(1_010, [("terminal_enrolled", {"terminal": "t-1", "token_hash": "ab" * 32, "place": "bar"})])
    first, enrolled = source.records()
    say_hello(receiver, source)
    assert receiver.batch(Batch(HALL, (first, enrolled)), HALL).seq == 1
    assert kinds(receiver) == [(SECRET_HELD, 2)]
    assert "holds a secret (token_hash, sealed)" in receiver.store.alerts()[0].detail
    assert receiver.batch(Batch(HALL, (sealed_form(enrolled),)), HALL).seq == 2
    (held,) = receiver.store.records(HALL, 1)
    assert held.hash == enrolled.hash and set(held.payload["token_hash"]) == {"commitment"}
    assert "sealed" not in held.payload

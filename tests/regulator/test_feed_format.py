"""The feed's wire format and the golden examples of docs/regulator-feed.md (R92.7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from protocol.chain import sign_head, verify_chain
from protocol.regulator_feed import MAX_BATCH, Batch, FeedFormatError, Hello, decode, encode
from regulator import examples
from regulator import store as regulator_store
from regulator.receiver import Receiver, load_key
from tests.regulator.registration import register

DOC = Path(__file__).resolve().parents[2] / "docs" / "regulator-feed.md"


def documented() -> list[bytes]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(examples.BEGIN):text.index(examples.END)]
    return [block.encode() for block in re.findall(r"```json\n(.*?)\n```", section, re.S)]


def test_the_documents_examples_are_the_bytes_of_today() -> None:
    assert DOC.read_text(encoding="utf-8") == examples.rewrite(DOC.read_text(encoding="utf-8")), (
        "docs/regulator-feed.md has fallen behind: run python scripts/regulator_feed_examples.py"
    )
    assert documented() == [encode(message) for _, message in examples.messages()]


@pytest.mark.req("R92.7")
def test_the_documents_examples_decode_and_their_records_verify(tmp_path: Path) -> None:
    hello, position, batch, ack = (decode(raw) for raw in documented())
    assert isinstance(hello, Hello) and isinstance(batch, Batch)
    assert [encode(m) for m in (hello, position, batch, ack)] == documented()
    key = load_key(hello.public_key, hello.sender)
    assert verify_chain(batch.records, key, head=sign_head(examples.KEY, batch.records[-1])) == 1
    receiver = Receiver(regulator_store.Store(regulator_store.open_database(f"sqlite:///{tmp_path / 'r.sqlite'}")),
                        clock=lambda: 0)
    register(receiver, "hall:h1", key)
    assert receiver.hello(hello, "hall:h1") == position
    assert receiver.batch(batch, "hall:h1") == ack
    assert receiver.store.alerts() == []


def message(**fields: object) -> bytes:
    data = json.loads(documented()[2])
    data.update(fields)
    return json.dumps(data).encode()


@pytest.mark.req("R92.7")
@pytest.mark.parametrize(
    ("raw", "named"),
    [
        (b"not json", "UTF-8 JSON"),
        (message(format="other/1"), "'format'"),
        (message(kind="shout"), "'kind'"),
        (message(sender="hall h1"), "'sender'"),
        (message(records=[]), "'records'"),
        (message(records=[json.loads(documented()[2])["records"][0]] * (MAX_BATCH + 1)), "'records'"),
        (message(records=[{**json.loads(documented()[2])["records"][0], "seq": 0}]), "'seq'"),
        (message(records=[{**json.loads(documented()[2])["records"][0], "seq": True}]), "'seq'"),
        (message(records=[{**json.loads(documented()[2])["records"][0], "signature": "zz"}]), "'signature'"),
        (message(records=[{**json.loads(documented()[2])["records"][0], "extra": 1}]), "'extra'"),
    ],
)
def test_a_message_that_is_not_one_is_refused_naming_the_field(raw: bytes, named: str) -> None:
    with pytest.raises(FeedFormatError, match=re.escape(named)):
        decode(raw)


@pytest.mark.req("R92.7")
def test_N7_a_position_says_the_hash_of_the_last_record_held_and_a_bad_one_is_refused() -> None:
    """The hash of record ``acked`` lets the sender see a journal rewritten from there (docs/security.md)."""
    from protocol.regulator_feed import Position

    said = Position("hall:h1", 7, "ab" * 32)
    assert decode(encode(said)) == said
    assert decode(encode(Position("hall:h1", 0))) == Position("hall:h1", 0)  # nothing held: no hash
    raw = json.loads(encode(said))
    with pytest.raises(FeedFormatError, match="'hash'"):
        decode(json.dumps({**raw, "hash": "AB" * 32}).encode())

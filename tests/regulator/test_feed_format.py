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


@pytest.mark.req("R92.7")
def test_a_report_larger_than_a_message_goes_in_parts_that_frame_its_files_and_a_bad_part_is_refused() -> None:
    """A day's audit export of any size reaches the regulator: the parts of ``report_part`` put together are
    the report's files framed as its digest frames them."""
    import base64
    import hashlib

    from protocol.regulator_feed import (
        MAX_PARTS,
        PART_BYTES,
        Report,
        ReportPart,
        ReportPartAck,
        files_of_blob,
        report_blob,
        report_digest,
        report_parts,
    )

    files = {"scenario.json": bytes(range(256)) * (PART_BYTES // 256) + b"{}", "segment.json": b"{}",
             "scenario.json.p7s": b"\x30\x82", "result.json": b"[]\n"}
    report = Report("hall:h1", "audit-2026-12-04", files)
    parts = report_parts(report)
    blob = report_blob(files)
    assert hashlib.sha256(blob).hexdigest() == report_digest(files) == parts[0].digest
    assert [p.count for p in parts] == [2, 2] and parts[0].size == len(blob) > PART_BYTES
    assert len(parts[0].data) == PART_BYTES and b"".join(p.data for p in parts) == blob
    assert files_of_blob(blob) == files
    for part in parts:
        assert decode(encode(part)) == part
    ack = ReportPartAck("hall:h1", "audit-2026-12-04", parts[0].digest, 1)
    assert decode(encode(ack)) == ack

    def sent(part: ReportPart, **changed: object) -> bytes:
        data = json.loads(encode(part))
        data.update(changed)
        return json.dumps(data).encode()

    for raw, named in (
        (sent(parts[0], index=2), "'index' must be below 2"),
        (sent(parts[0], count=3), "go in 2 parts, not 3"),
        (sent(parts[1], data=base64.b64encode(parts[1].data[:-1]).decode()), f"part 1 of 2 holds {len(parts[1].data)} bytes"),
        (sent(parts[0], size=PART_BYTES), "'size' must be at least"),
        (sent(parts[0], size=MAX_PARTS * PART_BYTES + 1), "at most"),
        (sent(parts[0], data="!!"), "not base64"),
        (sent(parts[0], digest="ab"), "'digest'"),
    ):
        with pytest.raises(FeedFormatError, match=re.escape(named)):
            decode(raw)
    for blob_bad, named in ((b"report.json\x005\x00abc", "length of report.json"),
                            (b"journal.txt\x001\x00a", "not a file of a report"),
                            (b"report.json", "does not start a file"),
                            (report_blob({"report.json": b"a"}) * 2, "comes twice")):
        with pytest.raises(FeedFormatError, match=re.escape(named)):
            files_of_blob(blob_bad)

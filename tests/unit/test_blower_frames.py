"""The blower frame codec under CPython: golden bytes, any chunk split, every damaged
frame detected, bounded buffers (the same golden bytes are checked under MicroPython in
tests/firmware)."""

import hashlib
import hmac
import json
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import blower_frames as bf
from protocol import blower_messages as bm

GOLDEN = json.loads((Path(__file__).parents[1] / "firmware" / "golden_frames.json").read_text())


def golden_frame(case: dict) -> bf.Frame:
    return bf.Frame(case["kind"], case["link"], case["seq"], bytes.fromhex(case["payload"]))


@pytest.mark.parametrize("case", GOLDEN, ids=[c["what"] for c in GOLDEN])
def test_golden_frames_encode_to_the_documented_bytes(case: dict) -> None:
    """Each documented frame encodes to exactly its golden bytes and decodes back."""
    key = case["key"].encode()
    wire = bytes.fromhex(case["wire"])
    assert bf.encode_frame(golden_frame(case), key) == wire
    assert bf.FrameDecoder(key).feed(wire) == [golden_frame(case)]


def test_golden_bytes_are_in_the_protocol_document() -> None:
    """docs/blower-protocol.md shows the same golden bytes the tests check."""
    doc = (Path(__file__).parents[2] / "docs" / "blower-protocol.md").read_text()
    for case in GOLDEN:
        spaced = " ".join(case["wire"][i:i + 2] for i in range(0, len(case["wire"]), 2))
        assert spaced in doc, case["what"]


@given(st.binary(max_size=300))
def test_crc32_is_zlibs(data: bytes) -> None:
    assert bf.crc32(data) == zlib.crc32(data)


@given(st.binary(max_size=100), st.binary(max_size=200))
def test_hmac_is_rfc2104(key: bytes, data: bytes) -> None:
    assert bf.hmac_sha256(key, data) == hmac.new(key, data, hashlib.sha256).digest()


@given(st.binary(max_size=600))
def test_cobs_round_trips_and_has_no_zero(data: bytes) -> None:
    encoded = bf.cobs_encode(data)
    assert 0 not in encoded
    assert bf.cobs_decode(encoded) == data


frames = st.builds(bf.Frame, st.integers(0, 255), st.integers(0, 2**32 - 1),
                   st.integers(0, 65535), st.binary(max_size=bf.MAX_PAYLOAD))


@given(st.lists(frames, min_size=1, max_size=5), st.lists(st.integers(1, 40), max_size=20),
       st.booleans())
def test_any_chunk_split_gives_the_same_frames(items: list, cuts: list, keyed: bool) -> None:
    """Frames come out whole and in order however the bytes are chunked."""
    key = b"k" if keyed else b""
    wire = b"".join(bf.encode_frame(f, key) for f in items)
    decoder = bf.FrameDecoder(key)
    got = []
    at = 0
    for cut in cuts + [len(wire)]:
        got += decoder.feed(wire[at:at + cut])
        at += cut
    got += decoder.feed(wire[at:])
    assert got == items
    assert decoder.buffered == 0


damage = st.sampled_from(["flip", "drop", "duplicate", "insert"])


@settings(max_examples=400)
@given(frames, damage, st.integers(0, 10_000), st.integers(0, 255), st.booleans())
def test_every_damaged_frame_is_detected(frame: bf.Frame, kind: str, where: int,
                                         value: int, keyed: bool) -> None:
    """A flipped bit, a dropped, duplicated or inserted byte never yields a frame."""
    key = b"secret" if keyed else b""
    wire = bytearray(bf.encode_frame(frame, key)[:-1])
    i = where % len(wire)
    if kind == "flip":
        wire[i] ^= 1 << (value % 8)
    elif kind == "drop":
        del wire[i]
    elif kind == "duplicate":
        wire.insert(i, wire[i])
    else:
        if value == wire[i] or (value == 0 and i == 0):
            # The same byte again is a duplicate, and a zero before the frame is line
            # idle, not damage.
            value ^= 0x40
        wire.insert(i, value)
    results = bf.FrameDecoder(key).feed(bytes(wire) + b"\x00")
    assert results and all(isinstance(r, bf.FrameError) for r in results), results


def test_garbage_is_rejected_with_typed_errors() -> None:
    decoder = bf.FrameDecoder()
    results = decoder.feed(b"\x05abc\x00\xff\xfe\x00hello world\x00\x00\x00")
    assert [type(r) for r in results] == [bf.BadEncoding, bf.BadEncoding, bf.BadEncoding]
    assert all(r.message for r in results)
    short = bf.cobs_encode(b"\x01\x03\x00\x00") + b"\x00"
    assert isinstance(decoder.feed(short)[0], bf.BadLength)


def test_a_run_without_delimiter_is_capped_and_reported_once() -> None:
    """The buffer never grows past MAX_ENCODED; the next frame still decodes."""
    decoder = bf.FrameDecoder()
    results = []
    for _ in range(50):
        results += decoder.feed(b"\x01" * 100)
        assert decoder.buffered <= bf.MAX_ENCODED
    frame = bf.Frame(bf.DRAW, 1, 1, bm.pack_draw(1, 1))
    results += decoder.feed(b"\x00" + bf.encode_frame(frame))
    assert [type(r) for r in results] == [bf.FrameTooLong, bf.Frame]


def test_keyed_link_rejects_wrong_key_and_unkeyed_frames() -> None:
    """A swapped board with another key, or none, is detected (BadTag, KeyMismatch)."""
    frame = bf.Frame(bf.BALL, 9, 1, bm.pack_ball(1, 1, 7))
    assert isinstance(bf.FrameDecoder(b"right").feed(bf.encode_frame(frame, b"wrong"))[0],
                      bf.BadTag)
    assert isinstance(bf.FrameDecoder(b"right").feed(bf.encode_frame(frame))[0],
                      bf.KeyMismatch)
    assert isinstance(bf.FrameDecoder().feed(bf.encode_frame(frame, b"right"))[0],
                      bf.KeyMismatch)


def test_other_protocol_version_is_rejected() -> None:
    body = bytearray([2, bf.DRAW, 0, 0, 0, 1, 0, 1])
    body += bf.crc32(bytes(body)).to_bytes(4, "little")
    assert isinstance(bf.FrameDecoder().feed(bf.cobs_encode(bytes(body)) + b"\x00")[0],
                      bf.BadVersion)


def test_payload_shapes_are_checked() -> None:
    with pytest.raises(bm.BadPayload):
        bm.unpack_draw(b"\x00\x00\x00\x01")
    with pytest.raises(bm.BadPayload):
        bm.unpack_ball(bm.pack_draw(1, 1) + b"\x5b")  # ball 91
    with pytest.raises(bm.BadPayload):
        bm.unpack_sync(bm.pack_sync(1, [1, 2], 2)[:4] + b"\x03\x02" + bf.pack_bitmap([1, 2]))
    assert bm.unpack_sync(bm.pack_sync(3, [4, 90], 90)) == (3, 2, 90, [4, 90])
    with pytest.raises(bf.BadLength):
        bf.encode_frame(bf.Frame(bf.DRAW, 1, 1, bytes(bf.MAX_PAYLOAD + 1)))

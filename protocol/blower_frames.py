"""Frame codec of the blower serial link, shared by the firmware and the hall server.

This one file runs unchanged under CPython (hall server, tests) and MicroPython (the
blower board and the unix port): it uses only ``hashlib.sha256``, ``bytes``/``bytearray``
and integers, no ``typing``, no ``dataclasses``, no ``struct``.  On the board it is
copied to ``/lib/protocol/blower_frames.py`` (see ``docs/blower.md``) so that both
sides import it as ``protocol.blower_frames``.

A frame on the wire is COBS-encoded and ends with one ``0x00`` byte, so a receiver
resynchronises at the next zero whatever the noise did.  Decoded, a frame is::

    version|flags (1)  kind (1)  link id (4)  seq (2)  payload (0..MAX_PAYLOAD)
    [tag (8): HMAC-SHA256 of everything before it, truncated, when keyed]
    crc32 (4): CRC-32 (IEEE, as zlib) of everything before it, little-endian

All multi-byte integers are big-endian except the CRC.  ``docs/blower-protocol.md``
is the specification, with golden bytes that the tests check on both interpreters.
"""

import hashlib

PROTOCOL_VERSION = 1
FLAG_KEYED = 0x80  # high bit of the first byte: the frame carries an HMAC tag
HEADER_LEN = 8
TAG_LEN = 8
CRC_LEN = 4
MAX_PAYLOAD = 64
MAX_FRAME = HEADER_LEN + MAX_PAYLOAD + TAG_LEN + CRC_LEN
# COBS adds one byte per 254 plus one; the delimiter is not buffered.
MAX_ENCODED = MAX_FRAME + MAX_FRAME // 254 + 2

# Message kinds.  Host -> blower are below 0x40, blower -> host from 0x40, 0x7F both.
HELLO_REQ = 0x01
SYNC = 0x02
DRAW = 0x03
CONFIRM = 0x04
NEW_GAME = 0x05
COUNT_SET = 0x06
SELF_TEST = 0x07
CLEAR_FAULT = 0x08
HELLO = 0x41
BALL = 0x42
STATUS = 0x43
FAULT = 0x44
COUNT_RESULT = 0x45
SELF_TEST_RESULT = 0x46
REFUSED = 0x47
NOTICE = 0x48
ACK = 0x7F

HOST_KINDS = (HELLO_REQ, SYNC, DRAW, CONFIRM, NEW_GAME, COUNT_SET, SELF_TEST, CLEAR_FAULT)
BLOWER_KINDS = (HELLO, BALL, STATUS, FAULT, COUNT_RESULT, SELF_TEST_RESULT, REFUSED, NOTICE)
# Frames that are neither numbered nor acknowledged: their loss is repaired by the
# request/answer above them (HELLO_REQ is repeated until a HELLO comes back).
UNSEQUENCED = (HELLO_REQ, HELLO, NOTICE, ACK)


class FrameError(Exception):
    """A received byte string is not a valid frame.  ``message`` is for people."""

    message = "the serial line delivered an invalid frame"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.message)
        self.detail = detail


class FrameTooLong(FrameError):
    message = "a frame was longer than the protocol allows; the line is noisy or flooded"


class BadEncoding(FrameError):
    message = "a frame was not correctly COBS-encoded"


class BadLength(FrameError):
    message = "a frame was too short or too long for its fields"


class BadChecksum(FrameError):
    message = "a frame failed its CRC check: bytes were changed on the line"


class BadVersion(FrameError):
    message = "a frame carried an unknown protocol version"


class BadTag(FrameError):
    message = "a frame failed its HMAC check: wrong key, tampered line or swapped board"


class KeyMismatch(FrameError):
    message = "a frame was keyed when the link is not, or the other way round"


def _make_crc_table() -> list:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _make_crc_table()


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC, the value ``zlib.crc32`` gives (written out: not every board
    build has ``binascii.crc32``)."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def hmac_sha256(key: bytes, data: bytes) -> bytes:
    """RFC 2104 HMAC-SHA256; MicroPython has no ``hmac`` module."""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = key + bytes(64 - len(key))
    inner = hashlib.sha256(bytes([b ^ 0x36 for b in key]))
    inner.update(data)
    outer = hashlib.sha256(bytes([b ^ 0x5C for b in key]))
    outer.update(inner.digest())
    return outer.digest()


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: the result contains no zero byte."""
    out = bytearray()
    block = bytearray()
    for b in data:
        if b == 0:
            out.append(len(block) + 1)
            out.extend(block)
            block = bytearray()
        else:
            block.append(b)
            if len(block) == 254:
                out.append(255)
                out.extend(block)
                block = bytearray()
    out.append(len(block) + 1)
    out.extend(block)
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Inverse of ``cobs_encode``; raises ``BadEncoding`` on a malformed block."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise BadEncoding("zero byte inside a frame")
        end = i + code
        if end > n:
            raise BadEncoding("block runs past the end of the frame")
        out.extend(data[i + 1:end])
        i = end
        if code < 255 and i < n:
            out.append(0)
    return bytes(out)


class Frame:
    """One decoded frame: ``kind``, ``link`` id, ``seq`` and ``payload`` bytes."""

    def __init__(self, kind: int, link: int, seq: int, payload: bytes = b"") -> None:
        self.kind = kind
        self.link = link
        self.seq = seq
        self.payload = bytes(payload)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Frame)
            and self.kind == other.kind
            and self.link == other.link
            and self.seq == other.seq
            and self.payload == other.payload
        )

    def __repr__(self) -> str:
        return "Frame(kind=0x%02x, link=0x%08x, seq=%d, payload=%r)" % (
            self.kind, self.link, self.seq, self.payload)


def encode_frame(frame: Frame, key: bytes = b"") -> bytes:
    """Bytes to write on the line for ``frame``, delimiter included."""
    if len(frame.payload) > MAX_PAYLOAD:
        raise BadLength("payload of %d bytes" % len(frame.payload))
    first = PROTOCOL_VERSION | (FLAG_KEYED if key else 0)
    body = bytearray([first, frame.kind & 0xFF])
    body.extend((frame.link & 0xFFFFFFFF).to_bytes(4, "big"))
    body.extend((frame.seq & 0xFFFF).to_bytes(2, "big"))
    body.extend(frame.payload)
    if key:
        body.extend(hmac_sha256(key, bytes(body))[:TAG_LEN])
    body.extend(crc32(bytes(body)).to_bytes(4, "little"))
    return cobs_encode(bytes(body)) + b"\x00"


def decode_frame(encoded: bytes, key: bytes = b"") -> Frame:
    """The frame in ``encoded`` (COBS bytes without the delimiter); raises a
    ``FrameError`` subclass naming what is wrong."""
    if len(encoded) > MAX_ENCODED:
        raise FrameTooLong("%d encoded bytes" % len(encoded))
    body = cobs_decode(encoded)
    if len(body) < HEADER_LEN + CRC_LEN or len(body) > MAX_FRAME:
        raise BadLength("%d bytes" % len(body))
    crc = int.from_bytes(body[-CRC_LEN:], "little")
    if crc32(body[:-CRC_LEN]) != crc:
        raise BadChecksum()
    first = body[0]
    if first & 0x7F != PROTOCOL_VERSION:
        raise BadVersion("version %d" % (first & 0x7F))
    if bool(first & FLAG_KEYED) != bool(key):
        raise KeyMismatch()
    if key and len(body) < HEADER_LEN + TAG_LEN + CRC_LEN:
        raise BadLength("%d bytes for a keyed frame" % len(body))
    end = len(body) - CRC_LEN
    if key:
        signed = body[:end - TAG_LEN]
        if hmac_sha256(key, signed)[:TAG_LEN] != body[end - TAG_LEN:end]:
            raise BadTag()
        end -= TAG_LEN
    return Frame(
        body[1],
        int.from_bytes(body[2:6], "big"),
        int.from_bytes(body[6:8], "big"),
        body[HEADER_LEN:end],
    )


class FrameDecoder:
    """Sans-I/O receiver: feed any chunks, get frames and errors in arrival order.

    The buffer never holds more than ``MAX_ENCODED`` bytes: a longer run without a
    delimiter is reported once as ``FrameTooLong`` and skipped up to the next zero.
    """

    def __init__(self, key: bytes = b"") -> None:
        self.key = key
        self._buffer = bytearray()
        self._overflow = False

    def feed(self, data: bytes) -> list:
        """Frames (``Frame``) and errors (``FrameError``) found in ``data``."""
        data = bytes(data)
        results = []  # type: list[Frame | FrameError]
        start = 0
        n = len(data)
        while start < n:
            zero = data.find(b"\x00", start)
            end = n if zero < 0 else zero
            if not self._overflow:
                room = MAX_ENCODED - len(self._buffer)
                chunk = data[start:end]
                if len(chunk) > room:
                    self._overflow = True
                    self._buffer = bytearray()
                    results.append(FrameTooLong("no delimiter within %d bytes" % MAX_ENCODED))
                else:
                    self._buffer.extend(chunk)
            if zero < 0:
                break
            if self._overflow:
                self._overflow = False
            elif self._buffer:
                try:
                    results.append(decode_frame(bytes(self._buffer), self.key))
                except FrameError as error:
                    results.append(error)
                self._buffer = bytearray()
            # An empty run between two zeros is line idle noise, not a frame.
            start = zero + 1
        return results

    @property
    def buffered(self) -> int:
        return len(self._buffer)


def pack_bitmap(numbers: list) -> bytes:
    """90 ball numbers as a 12-byte bitmap: bit (n-1) set for ball n."""
    bits = bytearray(12)
    for n in numbers:
        bits[(n - 1) >> 3] |= 1 << ((n - 1) & 7)
    return bytes(bits)


def unpack_bitmap(bits: bytes) -> list:
    """Ball numbers 1..90 whose bit is set, ascending."""
    return [n for n in range(1, 91) if bits[(n - 1) >> 3] & (1 << ((n - 1) & 7))]

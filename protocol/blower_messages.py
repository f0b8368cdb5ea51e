"""Payloads of the blower link messages, shared by the firmware and the hall server.

Like ``blower_frames`` this file is written in the subset CPython and MicroPython both
run; on the board it sits in ``/lib/protocol/``.  Each ``pack_*`` returns payload bytes;
each ``unpack_*`` returns a tuple and raises ``BadPayload`` on a wrong length or value,
so an odd payload is refused at the edge.  Field layouts are in ``docs/blower-protocol.md``.
"""

from protocol.blower_frames import PROTOCOL_VERSION, FrameError, pack_bitmap, unpack_bitmap

# Blower states, as reported in HELLO.
IDLE = 0
MIXING = 1
DRAWING = 2
PRESENTED = 3
CONFIRMED = 4
RETURNED = 5
FAULTED = 6
SELF_TESTING = 7
STATE_NAMES = ("idle", "mixing", "drawing", "ball presented", "ball confirmed",
               "ball returned", "fault", "self-test")

# Fault codes (FAULT).
JAM = 1
NO_BALL = 2
UNREADABLE = 3
REPEATED_NUMBER = 4
PUMP_FAILURE = 5
FAULT_NAMES = {
    JAM: "ball jammed in the tube or gate",
    NO_BALL: "no ball reached the tube in time",
    UNREADABLE: "the reader could not read the ball",
    REPEATED_NUMBER: "a number already drawn in this game was read again",
    PUMP_FAILURE: "the air pump is not running",
}

# Refusal reasons (REFUSED): the blower did not do what the host asked, and why.
BALL_CHOICE = 1
UNKNOWN_COMMAND = 2
BAD_PAYLOAD = 3
BUSY = 4
OUT_OF_STEP = 5
WRONG_GAME = 6
IN_FAULT = 7
SET_EXHAUSTED = 8
REFUSAL_NAMES = {
    BALL_CHOICE: "the blower never draws a ball chosen by the host",
    UNKNOWN_COMMAND: "unknown command",
    BAD_PAYLOAD: "malformed command",
    BUSY: "the blower is busy with another operation",
    OUT_OF_STEP: "draw number out of step with the blower",
    WRONG_GAME: "the command names another game",
    IN_FAULT: "the blower is in fault; clear the fault first",
    SET_EXHAUSTED: "all 90 balls are drawn",
}

# Notice reasons (NOTICE): frames the blower ignored, counted.
BAD_FRAME = 1
STALE_LINK = 2
REPLAYED = 3
FLOODED = 4
WRONG_DIRECTION = 5
NOTICE_NAMES = {
    BAD_FRAME: "bad frames (CRC, encoding, length or key)",
    STALE_LINK: "frames of an earlier link ignored",
    REPLAYED: "replayed or out-of-order frames ignored",
    FLOODED: "frames dropped: the line was flooded",
    WRONG_DIRECTION: "frames of the blower's own kinds ignored",
}

# Self-test failure bits (SELF_TEST_RESULT).
TEST_PUMP = 1
TEST_TUBE_SENSOR = 2
TEST_READER = 4


class BadPayload(FrameError):
    message = "a message carried a payload of the wrong shape"


def _u32(value: int) -> bytes:
    return (value & 0xFFFFFFFF).to_bytes(4, "big")


def _get_u32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 4], "big")


def _need(payload: bytes, length: int) -> None:
    if len(payload) != length:
        raise BadPayload("expected %d bytes, got %d" % (length, len(payload)))


def _ball(number: int) -> int:
    if not 1 <= number <= 90:
        raise BadPayload("ball number %d" % number)
    return number


def pack_hello_req(nonce: int) -> bytes:
    return bytes([PROTOCOL_VERSION]) + _u32(nonce)


def unpack_hello_req(payload: bytes) -> tuple:
    """(protocol version, host nonce)"""
    _need(payload, 5)
    return payload[0], _get_u32(payload, 1)


def pack_hello(version: tuple, image_hash: bytes, nonce: int, state: int, game: int,
               draws: int, last_ball: int, presented: int, fault: int) -> bytes:
    if len(image_hash) != 32:
        raise BadPayload("image hash must be 32 bytes")
    return (bytes([PROTOCOL_VERSION, version[0], version[1], version[2]]) + image_hash
            + _u32(nonce) + bytes([state]) + _u32(game)
            + bytes([draws, last_ball, presented, fault]))


def unpack_hello(payload: bytes) -> tuple:
    """(protocol, (major, minor, patch), image hash, nonce, state, game, draws,
    last ball, presented ball, fault)"""
    _need(payload, 49)
    return (payload[0], (payload[1], payload[2], payload[3]), bytes(payload[4:36]),
            _get_u32(payload, 36), payload[40], _get_u32(payload, 41), payload[45],
            payload[46], payload[47], payload[48])


def pack_sync(game: int, drawn: list, last_ball: int) -> bytes:
    if len(drawn) > 90 or (drawn and last_ball not in drawn):
        raise BadPayload("last ball must be one of the drawn balls")
    return _u32(game) + bytes([len(drawn), last_ball]) + pack_bitmap(drawn)


def unpack_sync(payload: bytes) -> tuple:
    """(game, draws, last ball, drawn numbers)"""
    _need(payload, 18)
    drawn = unpack_bitmap(payload[6:18])
    draws = payload[4]
    last = payload[5]
    if draws != len(drawn) or (draws and last not in drawn) or (not draws and last):
        raise BadPayload("draw count, last ball and drawn set disagree")
    return _get_u32(payload, 0), draws, last, drawn


def pack_draw(game: int, draw_no: int) -> bytes:
    return _u32(game) + bytes([draw_no])


def unpack_draw(payload: bytes) -> tuple:
    """(game, draw number).  Any extra byte is a ball choice and is refused by the
    caller, so this only checks the exact length."""
    _need(payload, 5)
    return _get_u32(payload, 0), payload[4]


def pack_ball(game: int, draw_no: int, number: int) -> bytes:
    return _u32(game) + bytes([draw_no, _ball(number)])


def unpack_ball(payload: bytes) -> tuple:
    """(game, draw number, ball number); also the CONFIRM payload."""
    _need(payload, 6)
    return _get_u32(payload, 0), payload[4], _ball(payload[5])


pack_confirm = pack_ball
unpack_confirm = unpack_ball


def pack_new_game(game: int) -> bytes:
    return _u32(game)


def unpack_new_game(payload: bytes) -> int:
    _need(payload, 4)
    game = _get_u32(payload, 0)
    if game == 0:
        raise BadPayload("game 0 means no game")
    return game


def pack_status(state: int, game: int, draws: int, last_ball: int, fault: int) -> bytes:
    return bytes([state]) + _u32(game) + bytes([draws, last_ball, fault])


def unpack_status(payload: bytes) -> tuple:
    """(state, game, draws, last ball, fault code or 0); the answer to SYNC,
    NEW_GAME and CLEAR_FAULT"""
    _need(payload, 8)
    return payload[0], _get_u32(payload, 1), payload[5], payload[6], payload[7]


def pack_fault(code: int, game: int, draw_no: int, detail: int) -> bytes:
    return bytes([code]) + _u32(game) + bytes([draw_no, detail])


def unpack_fault(payload: bytes) -> tuple:
    """(fault code, game, draw number, detail: the repeated ball for REPEATED_NUMBER)"""
    _need(payload, 7)
    return payload[0], _get_u32(payload, 1), payload[5], payload[6]


def pack_count_result(count: int, unreadable: int, missing: list, repeated: list) -> bytes:
    return bytes([count, unreadable]) + pack_bitmap(missing) + pack_bitmap(repeated)


def unpack_count_result(payload: bytes) -> tuple:
    """(balls counted, unreadable balls, missing numbers, repeated numbers)"""
    _need(payload, 26)
    return payload[0], payload[1], unpack_bitmap(payload[2:14]), unpack_bitmap(payload[14:26])


def pack_refused(kind: int, reason: int, draws: int, last_ball: int) -> bytes:
    return bytes([kind, reason, draws, last_ball])


def unpack_refused(payload: bytes) -> tuple:
    """(refused kind, reason, the blower's draw count, its last ball)"""
    _need(payload, 4)
    return payload[0], payload[1], payload[2], payload[3]


def pack_notice(reason: int, count: int) -> bytes:
    return bytes([reason]) + (min(count, 0xFFFF)).to_bytes(2, "big")


def unpack_notice(payload: bytes) -> tuple:
    """(reason, how many frames since the last notice of that reason)"""
    _need(payload, 3)
    return payload[0], int.from_bytes(payload[1:3], "big")

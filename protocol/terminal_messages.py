"""The player terminals' protocol: JSON messages over a WebSocket, versioned and validated.

Every message is one JSON object in one text frame::

    {"v": 1, "seq": 7, "type": "buy", "game": "network", "game_id": "net-1", "account": "1234 5678 9012",
     "quantity": 6, "stake_pct": 100, "request": "K1-5f0c2a9b"}

* ``v`` is the protocol version (:data:`VERSION`); another version is refused.
* ``seq`` numbers the messages of one side on one connection: 1, 2, 3...  The server
  refuses a number it has seen (``replayed``) or one that skips (``gap``), and answers
  nothing else to it; the terminal checks the server's numbers the same way.  A new
  connection starts again at 1 and begins with ``hello``: the server answers with the
  whole picture (``state``), so a terminal that reconnects loses nothing.
* ``type`` names the message; its fields are exactly those of :data:`TERMINAL_MESSAGES`
  (sent by terminals) or :data:`SERVER_MESSAGES` (sent by the server): a missing field,
  an unknown one, a wrong type, a ``true`` where a number belongs, a number out of range
  or a string too long is refused with :class:`MessageError`, whose ``code`` the
  ``error`` message carries.
* one ``buy`` serves every kind of game the hall sells (:data:`GAMES`): ``game`` names the
  kind, ``game_id`` the game (``""`` for the hall's own, which is the game on sale).
* a ``buy`` carries the terminal's ``request`` id, which it keeps for the request: the
  same request sent again (after a reconnect, after a restart of the server) gets the
  first answer and is never charged twice.

Money is integer cents everywhere.  The schema is written here, in plain Python, so the
server, the headless client and the tests share one definition; ``docs/terminal-protocol.md``
describes it with examples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from protocol import strict_json
from protocol.compact_json import compact
from protocol.errors import DomainError

VERSION = 1
MAX_MESSAGE_BYTES = 4096  # what a terminal may send; a request is far smaller


class MessageError(DomainError):
    """A message that breaks the protocol; ``code`` is one of :data:`ERROR_CODES`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


#: What an ``error`` message's ``code`` may say.
ERROR_CODES = (
    "malformed",  # not a JSON object, or too long
    "version",  # another protocol version
    "schema",  # unknown type, missing or unknown field, wrong type or range
    "replayed",  # a sequence number already used on this connection
    "gap",  # a sequence number that skips
    "not_enrolled",  # hello from a terminal that is unknown, revoked or out of service
    "hello_first",  # anything before hello, or hello twice
    "sign_in_refused",  # unknown account, wrong PIN or locked account: one answer for all
    "signed_out",  # a player request without a signed-in player
    "refused",  # the hall refused the request: the message says why
    "self_excluded",  # the player excluded themselves from play (R97.2): no sign-in, no purchase
    "signed_in_elsewhere",  # the account was signed in on another terminal; signed out here
    "unavailable",  # the hall cannot record anything now (its storage failed); nothing was done: try again
    "internal",  # the server failed; the fault is logged
)


# --- Field types ------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    max_length: int
    min_length: int = 1
    #: The characters it may hold, if not any (``alphabet`` names them in the refusal).
    allowed: frozenset[str] | None = None
    alphabet: str = ""

    def check(self, name: str, value: object) -> None:
        if not isinstance(value, str):
            raise MessageError("schema", f"{name} is text, not {type(value).__name__}")
        if not self.min_length <= len(value) <= self.max_length:
            raise MessageError("schema", f"{name} is {self.min_length} to {self.max_length} characters long")
        if self.allowed is not None and not set(value) <= self.allowed:
            raise MessageError("schema", f"{name} holds only {self.alphabet}")


#: A request id: the terminal's name for one request, kept with its outcome for the game.
REQUEST_ID = Text(64, allowed=frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-"),
                  alphabet="letters, digits and _.:-")


@dataclass(frozen=True)
class OneOf:
    """A word of a closed set, such as the kind of game a purchase is for."""

    words: tuple[str, ...]

    def check(self, name: str, value: object) -> None:
        if not isinstance(value, str) or value not in self.words:
            raise MessageError("schema", f"{name} is one of {', '.join(self.words)}, not {json.dumps(value)}")


@dataclass(frozen=True)
class Whole:
    low: int
    high: int

    def check(self, name: str, value: object) -> None:
        # JSON's true/false must not pass for 1/0, nor 2.0 for 2: money and counts are whole.
        if isinstance(value, bool) or not isinstance(value, int):
            raise MessageError("schema", f"{name} is a whole number, not {json.dumps(value)}")
        if not self.low <= value <= self.high:
            raise MessageError("schema", f"{name} is {self.low} to {self.high}, not {value}")


@dataclass(frozen=True)
class Anything:
    """A server field whose inner shape :data:`SERVER_MESSAGES` documents but does not police."""

    kind: type

    def check(self, name: str, value: object) -> None:
        if not isinstance(value, self.kind) and not (value is None and self.kind is dict):
            raise MessageError("schema", f"{name} is {self.kind.__name__}")


Field = Text | OneOf | Whole | Anything
CENTS = Whole(0, 2**53)  # JSON numbers are exact up to 2**53
TIME_MS = Whole(0, 2**53)

#: The kinds of game a terminal buys cards of: the hall's own game (the one on sale), a network game
#: of the central server (R92-R93), the hall-annex game played with the partner hall (R3.5.b).
HALL, NETWORK, JOINT = "hall", "network", "joint"
GAMES = (HALL, NETWORK, JOINT)

#: Messages a terminal sends, with their fields.
TERMINAL_MESSAGES: Mapping[str, Mapping[str, Field]] = {
    "hello": {"terminal": Text(40), "token": Text(200)},
    "sign_in": {"account": Text(40), "pin": Text(12)},
    "sign_out": {},
    # A purchase of cards in any game: ``game`` says which kind, ``game_id`` which one ("" for the hall's own).
    "buy": {"game": OneOf(GAMES), "game_id": Text(64, 0), "account": Text(40), "quantity": Whole(1, 96),
            "stake_pct": Whole(1, 100), "request": REQUEST_ID},
    "sync": {},
    # Responsible play (R97.2): the signed-in player's own daily limit (0: none) and exclusion.
    "set_limit": {"limit_cents": Whole(0, 100_000_00)},
    "exclude": {"days": Whole(1, 3650)},
    # The hall's last finished games: their balls and winners, for any terminal (signed in or not).
    "recall": {},
}


def _check_buy(message: Mapping[str, Any]) -> None:
    if message["game"] == HALL and message["game_id"]:
        raise MessageError("schema", "a purchase in the hall's own game names no game_id: "
                           "its cards are of the game on sale")
    if message["game"] != HALL and not message["game_id"]:
        raise MessageError("schema", f"a purchase in a {message['game']} game names its game_id")


#: What a terminal's message must hold beyond its fields' own ranges.
TERMINAL_RULES: Mapping[str, Callable[[Mapping[str, Any]], None]] = {"buy": _check_buy}

#: Messages the server sends, with their fields.
SERVER_MESSAGES: Mapping[str, Mapping[str, Field]] = {
    "welcome": {"terminal": Text(40), "hall": Text(200), "time_ms": TIME_MS},
    "state": {"time_ms": TIME_MS, "game": Anything(dict), "player": Anything(dict), "cards": Anything(list)},
    "signed_in": {"account": Text(40), "credit_cents": CENTS},
    "signed_out": {},
    "bought": {"in_reply_to": Whole(1, 2**53), "request": REQUEST_ID, "cards": Anything(list), "credit_cents": CENTS},
    "credit": {"credit_cents": CENTS, "reason": Text(200, 0)},
    "ball": {"game_id": Text(80), "ball": Whole(1, 90), "ball_count": Whole(1, 90), "time_ms": TIME_MS},
    "ball_voided": {"game_id": Text(80), "ball": Whole(1, 90)},
    "game": {"game": Anything(dict)},
    "won": {"game_id": Text(80), "card": Text(40), "prize": Text(40), "cents": CENTS},
    # A refusal: ``message`` in English (as journaled); for one a player reads, ``reason`` (a stable
    # code, else "") and its ``params`` (figures, amounts as ..._cents) for the screen to say in the
    # player's language (docs/languages.md).
    "error": {"code": Text(40), "message": Text(500), "in_reply_to": Anything(int), "reason": Text(40, 0),
              "params": Anything(dict)},
    "notices": {"warnings": Anything(list), "help": Text(4000, 0)},
    # The megabingo announced and not yet played (R90.2): date, time, the least it pays and its fund now;
    # null when none is.
    "megabingo": {"announcement": Anything(dict)},
    # The network game, beside the hall's own: its picture and the link's state, its balls,
    # the player's cards in it, a purchase's answer, a prize credited.
    "net_game": {"game": Anything(dict), "link_up": Anything(bool)},
    "net_ball": {"game_id": Text(64), "ball": Whole(1, 90), "ball_count": Whole(1, 90), "time_ms": TIME_MS},
    "net_cards": {"game_id": Text(64), "cards": Anything(list)},
    "net_bought": {"in_reply_to": Whole(1, 2**53), "request": REQUEST_ID, "game_id": Text(64), "cards": Anything(list),
                   "credit_cents": CENTS},
    "net_won": {"game_id": Text(64), "card": Text(40), "prize": Text(40), "cents": CENTS},
    # The answer to ``recall``: the last finished games, newest first, with balls and winning cards.
    "last_games": {"in_reply_to": Whole(1, 2**53), "games": Anything(list)},
    # The hall-annex game, beside the hall's own: its picture and the link to the partner hall, the
    # main hall's balls, the player's cards in it, a purchase's answer, a prize credited.
    "joint_game": {"game": Anything(dict), "link_up": Anything(bool)},
    "joint_ball": {"game_id": Text(64), "ball": Whole(1, 90), "ball_count": Whole(1, 90), "time_ms": TIME_MS},
    "joint_cards": {"game_id": Text(64), "cards": Anything(list)},
    "joint_bought": {"in_reply_to": Whole(1, 2**53), "request": REQUEST_ID, "game_id": Text(64),
                     "cards": Anything(list), "credit_cents": CENTS},
    "joint_won": {"game_id": Text(64), "card": Text(40), "prize": Text(40), "cents": CENTS},
}


def _check(kind: str, message: Mapping[str, Any], table: Mapping[str, Mapping[str, Field]]) -> None:
    fields = table.get(kind)
    if fields is None:
        raise MessageError("schema", f"there is no message type {kind!r}")
    present = set(message) - {"v", "seq", "type"}
    if missing := sorted(set(fields) - present):
        raise MessageError("schema", f"{kind} needs {', '.join(missing)}")
    if unknown := sorted(present - set(fields)):
        raise MessageError("schema", f"{kind} has no field {', '.join(unknown)}")
    for name, field in fields.items():
        if isinstance(field, Anything) and field.kind is int and message[name] is None:
            continue  # an error that answers no particular message
        field.check(name, message[name])
    if table is TERMINAL_MESSAGES and (rule := TERMINAL_RULES.get(kind)) is not None:
        rule(message)


def decode(text: str | bytes, table: Mapping[str, Mapping[str, Field]] = TERMINAL_MESSAGES) -> dict[str, Any]:
    """One message read and validated against ``table``; :class:`MessageError` says what is wrong."""
    if len(text) > MAX_MESSAGE_BYTES and table is TERMINAL_MESSAGES:
        raise MessageError("malformed", f"a message is at most {MAX_MESSAGE_BYTES} bytes")
    try:
        message = strict_json.loads(text)
    except strict_json.NamedTwice as twice:
        raise MessageError("malformed", str(twice)) from None
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested too deep
        raise MessageError("malformed", "a message is one JSON object") from None
    if not isinstance(message, dict):
        raise MessageError("malformed", "a message is one JSON object")
    if not strict_json.surrogate_free_at_sight(text):
        try:
            strict_json.check_texts(message)
        except strict_json.LoneSurrogate:  # \ud800: no text a journal or a hash can take
            raise MessageError("malformed", "a message is Unicode text; it holds a lone surrogate") from None
    if message.get("v") != VERSION or isinstance(message.get("v"), bool):
        raise MessageError("version", f"this hall speaks version {VERSION} of the terminal protocol")
    Whole(1, 2**53).check("seq", message.get("seq"))
    kind = message.get("type")
    if not isinstance(kind, str):
        raise MessageError("schema", "a message names its type")
    _check(kind, message, table)
    return message


def encode(seq: int, kind: str, table: Mapping[str, Mapping[str, Field]] = SERVER_MESSAGES, **fields: Any) -> str:
    """Message ``kind`` numbered ``seq``, checked against ``table`` before it leaves."""
    message = {"v": VERSION, "seq": seq, "type": kind, **fields}
    _check(kind, message, table)
    return compact(message)


def numbered(seq: int, body: str) -> str:
    """A message encoded once for many connections (a ball), given each one's ``seq``.

    ``body`` is the JSON object without ``v`` and ``seq`` (``{"type":"ball",...}``);
    this is the fan-out's fast path, so it does not validate again.
    """
    return f'{{"v":{VERSION},"seq":{seq},{body[1:]}'


class SequenceCheck:
    """The numbers one side expects of the other on one connection: 1, 2, 3..."""

    def __init__(self) -> None:
        self.last = 0

    def accept(self, seq: int) -> None:
        """Take ``seq`` or refuse it (``replayed``, ``gap``) leaving the count as it was."""
        if seq <= self.last:
            raise MessageError("replayed", f"message {seq} was already received (last was {self.last}); it is ignored")
        if seq != self.last + 1:
            raise MessageError("gap", f"message {self.last + 1} is expected, not {seq}; messages were lost")
        self.last = seq


__all__ = [
    "ERROR_CODES",
    "GAMES",
    "HALL",
    "JOINT",
    "NETWORK",
    "MAX_MESSAGE_BYTES",
    "REQUEST_ID",
    "SERVER_MESSAGES",
    "TERMINAL_MESSAGES",
    "VERSION",
    "MessageError",
    "OneOf",
    "SequenceCheck",
    "decode",
    "encode",
    "numbered",
]

"""The hall <-> central server protocol (R92.5c): AMP commands, declared as plain data.

Every hall server keeps one AMP connection over mutual TLS to the central server.  This
module says what may cross it, and nothing else: each :class:`Message` names an AMP
command, who sends it, its arguments and answer fields with their types and bounds,
and the error codes it may fail with; :data:`ERRORS` maps every code to the message a
person reads, :data:`REFUSALS` every reason a purchase can be refused for.  It imports
no framework, so the central server's domain, the hall and the tests share one schema;
``docs/central-protocol.md`` describes every message with an example.

Turning a declaration into a ``twisted.protocols.amp`` command (the server kit does
this once, for every message of :data:`MESSAGES`):

* a field's type becomes an AMP argument: :class:`Text` and :class:`Choice` ->
  ``amp.Unicode()``, :class:`Whole` -> ``amp.Integer()``, :class:`Flag` ->
  ``amp.Boolean()``, :class:`WholeList` -> ``amp.ListOf(amp.Integer())``,
  :class:`Items` -> ``amp.AmpList([(name, type), ...])`` of its fields; a field with
  ``optional=True`` gets ``optional=True``;
* a :class:`Message` becomes ``type(name, (amp.Command,), {"commandName":
  name.encode(), "arguments": [(arg.name.encode(), type), ...], "response": [...],
  "errors": {error_class(code): code.encode() for code in errors}})`` where
  ``error_class`` is one exception class per :data:`ERRORS` code, whose description
  is the user-facing message;
* a responder validates what it received with :func:`check_arguments` (AMP checks
  only the wire types) and its answer with :func:`check_answer` before it is sent.

Bounds and chunking.  AMP caps every value at :data:`MAX_VALUE_BYTES` (65,535 bytes)
and every key at 255.  Every field here has a worst-case encoded size
(:func:`worst_case_bytes`), and every list is declared with its most items, so no
legal value can exceed the cap: a list that can grow without limit (winners, credits
to a hall's players) is never sent whole but in *pages* of at most :data:`PAGE_ITEMS`
items (:class:`Paging`): the asker gives the last sequence number it holds
(``after``), the answer carries the next items and ``more``; a push carries the first
page and the receiver asks for the rest.  A card assignment is one range (first card
and count, R93.6), so a purchase answer is always small.

Versions.  A connection starts with ``hello``: the hall lists the versions it speaks,
the central server answers with the highest one both speak (:func:`negotiate`), or
fails with ``version_unsupported`` and closes the connection.  Any other command before
``hello`` fails with ``not_negotiated``.  Version 2 sends a list of numbers that fit in a
byte (a card's cells, the balls) as one byte a number, where version 1 sent each as a
number of its own, and adds ``game_under_way`` (:attr:`Message.since`); a hall that speaks
only version 1 is refused.  Version 3 is :data:`PROTOCOL_VERSION`: the sale's deadline is
kept at the halls' gates (docs/network-game.md).  ``hello`` carries the hall's clock and
its answer the central server's, so the hall measures the central clock (a hall whose
clock is more than :data:`CLOCK_BOUND_MS` ahead is refused with ``clock_off``); the hall
closes its gate at the deadline on that clock and then says ``gate_closed`` after the
last purchase it took; the central server decides what a hall sent before its
``gate_closed`` on the open sale, and closes the sale once every hall linked in version 3
said it, or :data:`GATE_BOUND_MS` after the deadline.  A hall of version 2 is answered in
2, its purchases decided as of when they are received.

Request ids.  Every command a hall sends that changes anything carries a
``request_id`` (:attr:`Message.request_id`): the central server keeps it durably with
the first outcome, so a command resent after any failure has its effect once and gets
the first answer again; the same id with other arguments fails with
``request_id_reused`` and changes nothing.  Ids are chosen by the hall and unique
within that hall for ever (a UUID is a good choice).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping as AnyMapping
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence, Union

from protocol.errors import DomainError
from protocol.sale import MAX_CARDS_PER_PLAYER  # R83.7: so also per request

#: The protocol version this code speaks, and every version it accepts in ``hello``.
PROTOCOL_VERSION = 3
SUPPORTED_VERSIONS: tuple[int, ...] = (2, 3)
#: Version 3: how far ahead of the central server's a hall's clock may be when its ``hello`` arrives:
#: past it the hall is refused (``clock_off``).  A hall corrects its gate by the offset it measures.
CLOCK_BOUND_MS = 2_000
#: Version 3: the longest the central server keeps a sale open after its deadline for the halls'
#: ``gate_closed``: a hall that has not said it by then has its later purchases refused.
GATE_BOUND_MS = 3_000

#: AMP's limits on one value and one key (``twisted.protocols.amp.MAX_VALUE_LENGTH``).
MAX_VALUE_BYTES = 0xFFFF
MAX_KEY_BYTES = 0xFF
#: Items in one page of a paged list (winners, credits).
PAGE_ITEMS = 100

#: The largest card number a series may have (8 digits).
MAX_CARD_NUMBER = 99_999_999
#: Cells of a card: 3 rows of 9, row by row, 0 for a blank (protocol/cards.py).
CARD_CELLS = 27
#: Amounts and times: JSON (the journal) holds integers exactly up to 2**53.
MAX_EXACT = 2**53

#: A control character: no text field may hold one.
_CONTROL = re.compile("[\x00-\x1f\x7f]")

_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
#: Characters of identifiers that travel in card ids (``HALL/V1-13``): no ``/``, no ``:``.
ID_CHARS = frozenset(_LOWER + _UPPER + _DIGITS + "-_")
#: Characters of request ids and game ids: identifiers plus ``.``.
KEY_CHARS = frozenset(ID_CHARS | {"."})
#: Printable ASCII, for names of people and software.
PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))
#: Series labels (``V1``) and pattern names (``two_lines``).
SERIES_CHARS = frozenset(_UPPER + _DIGITS)
PATTERN_CHARS = frozenset(_LOWER + _DIGITS + "_")
#: A SHA-256 in lowercase hex (a journal record's hash).
HEX_CHARS = frozenset(_DIGITS + "abcdef")
_CHARSET_NAMES = {
    HEX_CHARS: "[0-9a-f]",
    ID_CHARS: "[A-Za-z0-9-_]",
    KEY_CHARS: "[A-Za-z0-9-_.]",
    PRINTABLE: "printable ASCII",
    SERIES_CHARS: "[A-Z0-9]",
    PATTERN_CHARS: "[a-z0-9_]",
}


class CentralMessageError(DomainError):
    """A message that breaks this schema; ``code`` is one of :data:`ERRORS`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# --- Field types -------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A string (``amp.Unicode``) of ``min_length``-``max_length`` characters.

    ``charset`` limits the characters; ``None`` allows any character but control
    characters.  Worst case: 1 byte a character for an ASCII charset, 4 otherwise.
    """

    max_length: int
    min_length: int = 1
    charset: frozenset[str] | None = None

    def check(self, name: str, value: object) -> str:
        if not isinstance(value, str):
            raise CentralMessageError("bad_argument", f"{name} is text, not {_show(value)}")
        if not self.min_length <= len(value) <= self.max_length:
            raise CentralMessageError(
                "bad_argument",
                f"{name} is {self.min_length} to {self.max_length} characters long, not {len(value)}",
            )
        if self.charset is not None:
            if not self.charset.issuperset(value):
                bad = sorted(set(value) - self.charset)
                raise CentralMessageError("bad_argument", f"{name} may not hold {bad[0]!r}")
        elif _CONTROL.search(value):
            raise CentralMessageError("bad_argument", f"{name} may not hold control characters")
        return value

    def worst_case_bytes(self) -> int:
        ascii_only = self.charset is not None and all(ord(c) < 0x80 for c in self.charset)
        return self.max_length * (1 if ascii_only else 4)


@dataclass(frozen=True)
class Choice:
    """One of a few words (``amp.Unicode``)."""

    values: tuple[str, ...]

    def check(self, name: str, value: object) -> str:
        if not isinstance(value, str) or value not in self.values:
            raise CentralMessageError(
                "bad_argument", f"{name} is one of {', '.join(self.values)}, not {_show(value)}"
            )
        return value

    def worst_case_bytes(self) -> int:
        return max(len(v.encode()) for v in self.values)


@dataclass(frozen=True)
class Whole:
    """A whole number ``low``-``high`` (``amp.Integer``); ``True`` is not a number here."""

    low: int
    high: int

    def check(self, name: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise CentralMessageError("bad_argument", f"{name} is a whole number, not {_show(value)}")
        if not self.low <= value <= self.high:
            raise CentralMessageError(
                "bad_argument", f"{name} is {self.low} to {self.high}, not {value}"
            )
        return value

    def worst_case_bytes(self) -> int:
        return max(len(str(self.low)), len(str(self.high)))


@dataclass(frozen=True)
class Flag:
    """Yes or no (``amp.Boolean``: ``True`` / ``False`` on the wire)."""

    def check(self, name: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise CentralMessageError("bad_argument", f"{name} is true or false, not {_show(value)}")
        return value

    def worst_case_bytes(self) -> int:
        return len(b"False")


@functools.lru_cache(maxsize=None)
def _byte_range(low: int, high: int) -> bytes:
    """Every byte from ``low`` to ``high`` (those a list of one byte a number may hold)."""
    return bytes(range(max(low, 0), min(high, 255) + 1))


@dataclass(frozen=True)
class WholeList:
    """At most ``max_items`` whole numbers.

    On the wire (:mod:`server_kit.amp.commands`) a list whose numbers all fit in a byte
    (``item`` within 0-255: a card's cells, the balls) is one byte a number (``bytes``),
    which both ends read and write at C speed; any other list is ``amp.ListOf(amp.Integer())``.
    """

    item: Whole
    max_items: int

    @property
    def one_byte_each(self) -> bool:
        """Whether every number the list may hold fits in one byte (and so travels as one)."""
        return 0 <= self.item.low and self.item.high <= 255

    def check(self, name: str, value: object) -> Sequence[int]:
        """``value`` checked: a list or tuple of whole numbers, or bytes (one number a byte)."""
        if not isinstance(value, (list, tuple, bytes, bytearray)):
            raise CentralMessageError("bad_argument", f"{name} is a list, not {_show(value)}")
        if len(value) > self.max_items:
            raise CentralMessageError(
                "bad_argument", f"{name} holds at most {self.max_items} items, not {len(value)}"
            )
        low, high = self.item.low, self.item.high
        if isinstance(value, (bytes, bytearray)):  # one byte a number, as the wire carries it
            if value.translate(None, _byte_range(low, high)):  # what is left once every allowed byte is taken out
                bad = next(i for i, v in enumerate(value) if not low <= v <= high)
                self.item.check(f"{name}[{bad}]", value[bad])
            return value
        if all(type(v) is int and low <= v <= high for v in value):
            return list(value)  # the usual case, without a message made per item
        return [self.item.check(f"{name}[{i}]", v) for i, v in enumerate(value)]

    def worst_case_bytes(self) -> int:
        if self.one_byte_each:
            return self.max_items
        # ListOf: each element is a 2-byte length and the element's bytes.
        return self.max_items * (2 + self.item.worst_case_bytes())


@dataclass(frozen=True)
class Items:
    """At most ``max_items`` records of ``fields`` (``amp.AmpList``)."""

    fields: tuple["Field", ...]
    max_items: int

    def check(self, name: str, value: object) -> list[dict[str, Any]]:
        if not isinstance(value, (list, tuple)):
            raise CentralMessageError("bad_argument", f"{name} is a list, not {_show(value)}")
        if len(value) > self.max_items:
            raise CentralMessageError(
                "bad_argument", f"{name} holds at most {self.max_items} items, not {len(value)}"
            )
        return [_check_fields(f"{name}[{i}]", self.fields, item) for i, item in enumerate(value)]

    def worst_case_bytes(self) -> int:
        # AmpList: each item is an AMP box (2-byte key length, key, 2-byte value length,
        # value, per field; then a 2-byte zero), the boxes back to back.
        return self.max_items * (box_bytes(self.fields) + 2)


FieldType = Union[Text, Choice, Whole, Flag, WholeList, Items]


@dataclass(frozen=True)
class Field:
    """One argument or answer field: its name, its type, whether it may be left out."""

    name: str
    type: FieldType
    optional: bool = False
    doc: str = ""


def box_bytes(fields: Sequence[Field]) -> int:
    """The worst-case bytes of the key/value pairs of ``fields`` in one AMP box."""
    return sum(2 + len(f.name.encode()) + 2 + f.type.worst_case_bytes() for f in fields)


def worst_case_bytes(field: Field) -> int:
    """The most bytes ``field``'s value can take on the wire."""
    return field.type.worst_case_bytes()


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


#: The names of each declared tuple of fields, by the tuple's id (the tuple is kept with them,
#: so an id is never taken by another tuple while it is here): checked once a message, not
#: made again for each.
_NAMES: dict[int, tuple[Sequence[Field], frozenset[str]]] = {}


def _names(fields: Sequence[Field]) -> frozenset[str]:
    known = _NAMES.get(id(fields))
    if known is not None and known[0] is fields:
        return known[1]
    names = frozenset(f.name for f in fields)
    if isinstance(fields, tuple):  # the declarations' own tuples, never a passing list
        _NAMES[id(fields)] = (fields, names)
    return names


class _Checked(dict):  # type: ignore[type-arg]
    """Values :func:`_check_fields` made: checked against ``fields`` once, not again.

    A batch's purchases are checked with the batch, then handed on one by one as
    ``buy_cards``: each is checked against the same declaration, and is taken as it is.
    """

    __slots__ = ("fields",)
    fields: Sequence[Field]


def _check_fields(where: str, fields: Sequence[Field], values: object) -> dict[str, Any]:
    if isinstance(values, _Checked) and values.fields is fields:
        return values
    what = where or "the message"
    if not isinstance(values, (dict, AnyMapping)):
        raise CentralMessageError("bad_argument", f"{what} is a record of fields, not {_show(values)}")
    known = _names(fields)
    if not known.issuperset(values):
        unknown = sorted(set(values) - known)
        raise CentralMessageError("bad_argument", f"{what} has no field {unknown[0]!r}")
    checked = _Checked()
    checked.fields = fields
    for f in fields:
        if f.name not in values or values[f.name] is None:
            if not f.optional:
                raise CentralMessageError("bad_argument", f"{what} needs {f.name}")
            continue
        checked[f.name] = f.type.check(f"{where}.{f.name}" if where else f.name, values[f.name])
    return checked


# --- The fields that recur ---------------------------------------------------------

GAME_ID = Text(64, charset=KEY_CHARS)
HALL_ID = Text(32, charset=ID_CHARS)
TERMINAL_ID = Text(40, charset=ID_CHARS)
PLAYER_REF = Text(64, charset=KEY_CHARS)
REQUEST_ID = Text(64, charset=KEY_CHARS)
SERIES_LABEL = Text(8, charset=SERIES_CHARS)
PATTERN_NAME = Text(32, charset=PATTERN_CHARS)
PERSON = Text(64, charset=PRINTABLE)
REASON = Text(200)
CENTS = Whole(0, MAX_EXACT)
TIME_MS = Whole(0, MAX_EXACT)
CARD_NUMBER = Whole(1, MAX_CARD_NUMBER)
CARD_COUNT = Whole(0, MAX_CARD_NUMBER)
CARDS_PER_REQUEST = Whole(1, MAX_CARDS_PER_PLAYER)
STAKE_PCT = Whole(1, 100)
BASIS_POINTS = Whole(0, 10_000)
BALL = Whole(1, 90)
BALL_COUNT = Whole(0, 90)
SEQ = Whole(0, MAX_EXACT)
#: A record of a journal (a hall's): its sequence number and hash.
JOURNAL_SEQ = Whole(1, MAX_EXACT)
RECORD_HASH = Text(64, min_length=64, charset=HEX_CHARS)
VERSION = Whole(1, 999)
PHASES = (
    "scheduled", "selling", "sale_closed", "drawing", "last_prize_won", "closed", "not_played",
)  # fmt: skip


def _game(doc: str = "the network game") -> Field:
    return Field("game_id", GAME_ID, doc=doc)


def _hall(doc: str = "the hall speaking; it must be the hall of the TLS certificate") -> Field:
    return Field("hall_id", HALL_ID, doc=doc)


def _request(doc: str = "the hall's id for this command, kept durably by the central server") -> Field:
    return Field("request_id", REQUEST_ID, doc=doc)


# --- Error codes and refusal reasons -----------------------------------------------


@dataclass(frozen=True)
class ErrorCode:
    """A code an AMP command may fail with, and what a person is told.

    ``fatal``: the central server closes the connection after answering it.
    """

    code: str
    message: str
    fatal: bool = False


#: Every error code of the protocol.  An error changes nothing on the receiver.
ERRORS: Mapping[str, ErrorCode] = {
    e.code: e
    for e in (
        ErrorCode("version_unsupported", "The two servers share no protocol version; update the older one.", True),
        ErrorCode("not_negotiated", "Say hello first: no command is taken before the version is agreed.", True),
        ErrorCode("unknown_hall", "This hall is not a member of the network; ask the central operator to add it.", True),
        ErrorCode("hall_mismatch", "A hall may only speak for itself and its own terminals.", True),
        ErrorCode("bad_argument", "A value is missing, of the wrong type or out of range; the message names it."),
        ErrorCode("unknown_game", "There is no such network game."),
        ErrorCode("request_id_reused", "This request id was already used for another request; the first one stands."),
        ErrorCode("terminal_already_failed", "This terminal has already been declared failed in this game; its refund was made once."),
        ErrorCode("not_now", "The game is not at a stage where this can be done; the message says why."),
        ErrorCode("bad_config", "The network game's configuration breaks a rule; the message names the field."),
        ErrorCode("internal_error", "The central server failed to answer; the fault is logged. Send the same request again."),
        ErrorCode("not_annex_pair", "This hall is not configured on the central server as one of a hall-annex pair; ask the central operator to add the pair."),
        ErrorCode("standby", "This central server process is the standby of a replicated central server: connect to the other endpoint.", True),
        ErrorCode("clock_off", "This hall's clock is more than 2 s ahead of the central server's; set the hall's clock right (NTP) and it links again.", True),
        ErrorCode("storage_unavailable", "The receiver's storage cannot take a commit now (a full disk, a read-only file, its database unreachable); nothing was done. Send the same request again later."),
    )
}

#: Every reason a purchase request can be refused for.  A refusal is a decision: it is
#: journaled, answered, and answered the same again for the same request id.
REFUSALS: Mapping[str, str] = {
    "sale_not_open": "The sale of this game has not opened yet.",
    "sale_over": "The sale time is over; no card can be bought any more.",
    "not_played": "This game was declared not played; no card can be bought.",
    "series_exhausted": "Not enough cards are left in the series for this request.",
    "terminal_failed": "This terminal was declared failed in this game; it stays out of play until repaired.",
    "card_limit": "A player may hold at most 96 cards per terminal in one game (R83.7).",
    "stake_too_small": "At this stake percentage a card would cost less than one cent.",
}

#: Who pays a refund: the game's collection before the sale closed, the house after it.
PAID_BY = ("stakes", "house", "nobody")


# --- Messages ----------------------------------------------------------------------


@dataclass(frozen=True)
class Paging:
    """A paged list: ``items`` holds at most :data:`PAGE_ITEMS` records after ``cursor``."""

    cursor: str  # the argument naming the last sequence number the asker holds
    items: str  # the answer field holding the page
    more: str = "more"  # the answer field saying that later items exist


@dataclass(frozen=True)
class Message:
    """One AMP command: who sends it, its arguments, its answer, its errors."""

    name: str
    sender: str  # "hall" or "central"
    doc: str
    arguments: tuple[Field, ...]
    answer: tuple[Field, ...] = ()
    errors: tuple[str, ...] = ()
    request_id: bool = False  # kept durably: a resend has its effect once
    paging: Paging | None = None
    since: int = 1  # the first protocol version that has it: never sent on a connection of an older one

    def field(self, name: str, *, answer: bool = False) -> Field:
        for f in self.answer if answer else self.arguments:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no {'answer' if answer else 'argument'} {name!r}")


_COMMON = ("not_negotiated", "bad_argument", "internal_error", "standby", "storage_unavailable")
_HALL_COMMON = (*_COMMON, "unknown_hall", "hall_mismatch", "unknown_game")

#: The prize of a pattern as announced at the opening of the sale.
PRIZE_SHARE = Items(
    (
        Field("pattern", PATTERN_NAME, doc="the pattern, in the order of announcement"),
        Field("basis_points", BASIS_POINTS, doc="share of the game's sales, 1/100 of a percent"),
        Field("carry_in_cents", CENTS, doc="what the previous game carried to this prize (R88.5)"),
    ),
    max_items=16,
)
#: The amount of each prize once the sale has closed.
PRIZE_AMOUNT = Items(
    (Field("pattern", PATTERN_NAME, doc="the pattern"), Field("amount_cents", CENTS, doc="the prize to be shared")),
    max_items=16,
)
#: A winning card, as boards and terminals show it (R92.11).
WINNER = Items(
    (
        Field("seq", SEQ, doc="the winner's number in the game, 1, 2, 3..."),
        Field("pattern", PATTERN_NAME, doc="the pattern won"),
        Field("ball_count", BALL, doc="the ball it was won on"),
        Field("series", SERIES_LABEL, doc="the card's series"),
        Field("card_number", CARD_NUMBER, doc="the card's number: the card shows V1-13"),
        Field("hall_id", HALL_ID, doc="the hall where the card was bought"),
        Field("terminal_id", TERMINAL_ID, doc="the terminal where the card was bought"),
        Field("payment_cents", CENTS, doc="the card's share of the prize (R93.13)"),
    ),
    max_items=PAGE_ITEMS,
)
#: Money for one of the hall's players: a prize to credit (R85.9) or a stake returned.
CREDIT = Items(
    (
        Field("seq", SEQ, doc="the credit's number among this hall's credits in the game"),
        Field("kind", Choice(("prize", "refund")), doc="a prize won or stakes returned"),
        Field("player_ref", PLAYER_REF, doc="the player to credit"),
        Field("terminal_id", TERMINAL_ID, doc="where the cards were bought"),
        Field("amount_cents", CENTS, doc="what to credit to the player's account"),
        Field("pattern", PATTERN_NAME, optional=True, doc="prize: the pattern won"),
        Field("card_number", CARD_NUMBER, optional=True, doc="prize: the winning card"),
        Field("card_count", CARD_COUNT, optional=True, doc="refund: the cards refunded"),
        Field("purchase_request_id", REQUEST_ID, optional=True, doc="refund: the purchase refunded"),
        Field("paid_by", Choice(PAID_BY), optional=True, doc="refund: whose money"),
    ),
    max_items=PAGE_ITEMS,
)
#: What a pattern carries to the next game when this one closes (R88.5).
CARRY = Items(
    (Field("pattern", PATTERN_NAME, doc="the pattern"), Field("carry_cents", CENTS, doc="what it carries")),
    max_items=16,
)

HELLO = Message(
    "hello",
    "hall",
    "Open the conversation: agree on the protocol version; the hall names itself.",
    arguments=(
        _hall(),
        Field("versions", WholeList(VERSION, 16), doc="every version the hall speaks"),
        Field("software", PERSON, doc="the hall server's name and release, for the log"),
        Field("journal_seq", JOURNAL_SEQ, optional=True, doc="the last record of the hall's journal now"),
        Field("journal_hash", RECORD_HASH, optional=True, doc="that record's hash"),
        Field("clock_ms", TIME_MS, optional=True, doc="version 3: the hall's clock as it sent this"),
    ),
    answer=(
        Field("version", VERSION, doc="the version both speak, used from now on"),
        Field("central_ms", TIME_MS, optional=True,
              doc="version 3: the central server's clock as it answered (the hall measures the central clock by it)"),
        Field("central_id", HALL_ID, doc="the central server's name"),
        Field("node", HALL_ID, optional=True,
              doc="a replicated central server: the database node beside the process that answers"),
        Field("epoch", Whole(1, MAX_EXACT), optional=True, doc="a replicated central server: its leadership epoch"),
        Field("hall_journal_seq", JOURNAL_SEQ, optional=True,
              doc="the furthest record of its journal the hall said before, as the central server holds it"),
        Field("hall_journal_hash", RECORD_HASH, optional=True, doc="that record's hash, as the hall said it"),
    ),
    errors=("version_unsupported", "bad_argument", "internal_error", "unknown_hall", "hall_mismatch", "standby",
            "clock_off"),
)

BUY_CARDS = Message(
    "buy_cards",
    "hall",
    "A terminal's purchase (R93.6): decided in the order received; cards assigned in that "
    "order within the series, or the request refused with a reason.  The hall holds the "
    "player's credit before it sends this, and captures or releases the hold on the answer.",
    arguments=(
        _request(),
        _game(),
        _hall(),
        Field("terminal_id", TERMINAL_ID, doc="the terminal where the player buys"),
        Field("player_ref", PLAYER_REF, doc="the hall's reference of the player's account"),
        Field("card_count", CARDS_PER_REQUEST, doc="cards asked for (R83.7: at most 96 per player per terminal)"),
        Field("stake_pct", STAKE_PCT, doc="percentage of the card's price staked (R82.15)"),
    ),
    answer=(
        _request(),
        Field("status", Choice(("confirmed", "refused")), doc="the decision"),
        Field("decision", SEQ, doc="the decision's number in the game: the order of requests"),
        Field("series", SERIES_LABEL, optional=True, doc="confirmed: the series of the cards"),
        Field("first_card", CARD_NUMBER, optional=True, doc="confirmed: the first card assigned"),
        Field("card_count", CARDS_PER_REQUEST, optional=True, doc="confirmed: the cards assigned"),
        Field("stake_cents", CENTS, optional=True, doc="confirmed: the stake of each card"),
        Field("amount_cents", CENTS, optional=True, doc="confirmed: what the hall captures"),
        Field("cells", WholeList(Whole(0, 90), MAX_CARDS_PER_PLAYER * CARD_CELLS), optional=True,
              doc="confirmed: the cards' numbers, 27 cells a card row by row (0: a blank), card after card, "
                  "so terminals mark them and count what is to go (R93.10)"),
        Field("refusal_code", Choice(tuple(REFUSALS)), optional=True, doc="refused: why"),
        Field("refusal", Text(300), optional=True, doc="refused: what the player is told"),
    ),
    errors=(*_HALL_COMMON, "request_id_reused"),
    request_id=True,
)

#: The most purchases one ``buy_cards_batch`` carries: their answers, 96 cards' cells each at
#: worst, fit in one AMP value.
BATCH_PURCHASES = 12
#: The answer to one purchase of a batch: ``buy_cards``' answer, or the error it failed with.
BATCH_ANSWER = Items(
    (
        *(f if f.name == "request_id" else replace(f, optional=True) for f in BUY_CARDS.answer),
        Field("error_code", Choice(BUY_CARDS.errors), optional=True,
              doc="this purchase failed (it is not decided): the code buy_cards would have failed with"),
        Field("error", Text(300), optional=True, doc="this purchase failed: what the code means here"),
    ),
    max_items=BATCH_PURCHASES,
)

BUY_CARDS_BATCH = Message(
    "buy_cards_batch",
    "hall",
    "Several terminals' purchases in one message, as a hall relays a burst (R93.6): each is "
    "the buy_cards it carries, with its own request id, decided on its own in the order "
    "received (the batch's order); each answer is that buy_cards' answer, in the same order, "
    "or the error code and message it failed with.  A batch that breaks the schema is "
    "refused whole with bad_argument.",
    arguments=(
        Field("purchases", Items(BUY_CARDS.arguments, BATCH_PURCHASES),
              doc=f"1 to {BATCH_PURCHASES} purchases, each with buy_cards' arguments"),
    ),
    answer=(Field("answers", BATCH_ANSWER, doc="one answer a purchase, in the order of the purchases"),),
    errors=_HALL_COMMON,
    since=2,
)

TERMINAL_FAILED = Message(
    "terminal_failed",
    "hall",
    "The hall's staff declared one of its terminals failed (R96.3): that game's cards "
    "bought on it that have won nothing are refunded, once, and leave the game.  The "
    "refunds reach the hall as credits (get_credits).",
    arguments=(
        _request(),
        _game(),
        _hall(),
        Field("terminal_id", TERMINAL_ID, doc="the hall's terminal declared failed"),
        Field("reason", REASON, doc="what staff saw, for the record"),
        Field("declared_by", PERSON, doc="the member of staff who declared it"),
    ),
    answer=(
        _request(),
        Field("refunded_cards", CARD_COUNT, doc="the terminal's cards of this game that had won nothing"),
        Field("refunded_cents", CENTS, doc="their stakes, returned to the players"),
        Field("paid_by", Choice(PAID_BY), doc="stakes before the close, house after it, nobody if nothing to refund"),
        Field("last_credit_seq", SEQ, doc="fetch this hall's credits up to here"),
    ),
    errors=(*_HALL_COMMON, "request_id_reused", "terminal_already_failed", "not_now"),
    request_id=True,
)

GATE_CLOSED = Message(
    "gate_closed",
    "hall",
    "Version 3: the hall's gate for the game closed at the sale's deadline (on the central "
    "clock as the hall measures it), and every purchase it took before was sent before this.  "
    "The central server decides what the hall sent before it on the open sale, and closes the "
    "sale once every hall linked in version 3 said it, or 3 s after the deadline (GATE_BOUND_MS).  "
    "Sent again after a reconnection until answered; once is enough.",
    arguments=(
        _game(),
        _hall(),
        Field("purchases", SEQ, doc="the purchases of the game the hall took before its gate closed"),
        Field("closed_ms", TIME_MS, doc="when its gate closed, on the central clock as the hall measures it"),
    ),
    errors=_HALL_COMMON,
    since=3,
)

GET_GAME = Message(
    "get_game",
    "hall",
    "Where a network game stands: after a reconnect the hall catches up from here.",
    arguments=(_game(), _hall()),
    answer=(
        Field("phase", Choice(PHASES), doc="where the game stands"),
        Field("series", SERIES_LABEL, doc="the series its cards come from"),
        Field("price_cents", CENTS, doc="the card's price"),
        Field("closes_at_ms", TIME_MS, optional=True, doc="the end of the sale, central clock"),
        Field("remaining_ms", TIME_MS, optional=True, doc="time left in the sale when answered"),
        Field("ball_count", BALL_COUNT, doc="balls drawn so far"),
        Field("cards_sold", CARD_COUNT, doc="network-wide, once the sale has closed"),
        Field("sales_cents", CENTS, doc="network-wide, once the sale has closed"),
        Field("winner_count", SEQ, doc="winning cards so far"),
        Field("last_credit_seq", SEQ, doc="this hall's credits so far"),
    ),
    errors=_HALL_COMMON,
)

GET_BALLS = Message(
    "get_balls",
    "hall",
    "The balls drawn after ball number after_count, in order: a hall that missed some asks.",
    arguments=(_game(), _hall(), Field("after_count", BALL_COUNT, doc="balls the hall already holds")),
    answer=(
        Field("balls", WholeList(BALL, 90), doc="balls after_count+1, after_count+2, ..."),
        Field("ball_count", BALL_COUNT, doc="how many balls are drawn in all"),
    ),
    errors=_HALL_COMMON,
)

GET_CREDITS = Message(
    "get_credits",
    "hall",
    "The hall's credits after seq after: prizes to credit to its players (R85.9) and "
    "stakes returned.  The hall credits each seq once.",
    arguments=(_game(), _hall(), Field("after", SEQ, doc="the last credit seq the hall holds")),
    answer=(
        Field("credits", CREDIT, doc="the next credits, in order"),
        Field("more", Flag(), doc="later credits exist: ask again after the last seq"),
        Field("last_seq", SEQ, doc="the hall's credits in all"),
    ),
    errors=_HALL_COMMON,
    paging=Paging("after", "credits"),
)

GET_WINNERS = Message(
    "get_winners",
    "hall",
    "Every winning card of the game after winner seq after, in order, with the hall and "
    "terminal where it was bought (R92.11): what boards show.",
    arguments=(_game(), _hall(), Field("after", SEQ, doc="the last winner seq the hall holds")),
    answer=(
        Field("winners", WINNER, doc="the next winners, in order"),
        Field("more", Flag(), doc="later winners exist: ask again after the last seq"),
        Field("winner_count", SEQ, doc="the game's winning cards in all"),
    ),
    errors=_HALL_COMMON,
    paging=Paging("after", "winners"),
)

_PUSH_ERRORS = ("not_negotiated", "bad_argument", "unknown_game", "internal_error", "storage_unavailable")

SALE_OPENED = Message(
    "sale_opened",
    "central",
    "The sale is open until closes_at_ms (R93.1): terminals count down remaining_ms.",
    arguments=(
        _game(),
        Field("series", SERIES_LABEL, doc="the series on sale"),
        Field("first_card", CARD_NUMBER, doc="the first card on sale"),
        Field("price_cents", CENTS, doc="the card's price, at most the approved maximum (R93.5)"),
        Field("closes_at_ms", TIME_MS, doc="the deadline, central clock"),
        Field("remaining_ms", TIME_MS, doc="time left when sent; the hall counts down from it"),
        Field("ball_interval_ms", TIME_MS, doc="the time between balls"),
        Field("prizes", PRIZE_SHARE, doc="the winning patterns, in order, with their shares"),
    ),
    errors=_PUSH_ERRORS,
)

SALE_CLOSED = Message(
    "sale_closed",
    "central",
    "The sale is closed: cards sold and prizes network-wide (R93.9), and the hall's own "
    "share so it can reconcile its captured holds.",
    arguments=(
        _game(),
        Field("cards_sold", CARD_COUNT, doc="cards in play, network-wide"),
        Field("sales_cents", CENTS, doc="their stakes, network-wide"),
        Field("prizes", PRIZE_AMOUNT, doc="each prize's amount: its share of the sales plus its carry"),
        Field("hall_cards_sold", CARD_COUNT, doc="this hall's cards in play"),
        Field("hall_sales_cents", CENTS, doc="their stakes: what the hall has captured, net of refunds"),
    ),
    errors=_PUSH_ERRORS,
)

BALL_DRAWN = Message(
    "ball_drawn",
    "central",
    "Ball number ball_count is ball (R92.10); it is committed before it is sent.",
    arguments=(_game(), Field("ball", BALL, doc="the number drawn"), Field("ball_count", BALL, doc="its place in the draw")),
    errors=_PUSH_ERRORS,
)

PRIZE_WON = Message(
    "prize_won",
    "central",
    "A pattern was won on ball ball_count (R93.12): the prize and its first page of "
    "winners; the rest with get_winners.  final: the game ends with this prize.",
    arguments=(
        _game(),
        Field("pattern", PATTERN_NAME, doc="the pattern won"),
        Field("ball_count", BALL, doc="the ball it was won on"),
        Field("amount_cents", CENTS, doc="the prize shared"),
        Field("winner_count", CARD_COUNT, doc="the cards sharing it"),
        Field("final", Flag(), doc="the game ends with this prize"),
        Field("winners", WINNER, doc="the first winners of this prize"),
        Field("more", Flag(), doc="more winners of this prize than this page holds"),
    ),
    errors=_PUSH_ERRORS,
)

CREDITS_AVAILABLE = Message(
    "credits_available",
    "central",
    "The hall has credits up to last_seq to fetch with get_credits and pay into accounts.",
    arguments=(_game(), Field("last_seq", SEQ, doc="the hall's credits in all")),
    errors=_PUSH_ERRORS,
)

GAME_CLOSED = Message(
    "game_closed",
    "central",
    "The game is over; what each prize carries to the next game: a prize no card won, whole (a prize won is paid whole, R93.13).",
    arguments=(
        _game(),
        Field("ball_count", BALL_COUNT, doc="balls drawn"),
        Field("carries", CARRY, doc="per pattern, what goes to the next game"),
    ),
    errors=_PUSH_ERRORS,
)

GAME_UNDER_WAY = Message(
    "game_under_way",
    "central",
    "Version 2: a game of this hall whose sale closed before the hall said hello (it was "
    "away, or new): the sale as sale_opened and sale_closed said it, so the hall shows the "
    "game and catches up its balls, winners and credits with get_game, get_balls, "
    "get_winners and get_credits.  Sent after hello, once per game under way.",
    arguments=(
        _game(),
        Field("phase", Choice(("sale_closed", "drawing", "last_prize_won")), doc="where the game stands"),
        Field("series", SERIES_LABEL, doc="the series it sold"),
        Field("first_card", CARD_NUMBER, doc="the first card it sold"),
        Field("price_cents", CENTS, doc="the card's price"),
        Field("closes_at_ms", TIME_MS, doc="the deadline its sale had, central clock"),
        Field("ball_interval_ms", TIME_MS, doc="the time between balls"),
        Field("prizes", PRIZE_SHARE, doc="the winning patterns, in order, with their shares"),
        Field("cards_sold", CARD_COUNT, doc="cards in play at the close, network-wide"),
        Field("sales_cents", CENTS, doc="their stakes, network-wide"),
        Field("prize_amounts", PRIZE_AMOUNT, doc="each prize's amount: its share of the sales plus its carry"),
        Field("ball_count", BALL_COUNT, doc="balls drawn so far"),
    ),
    errors=_PUSH_ERRORS,
    since=2,
)

GAME_NOT_PLAYED = Message(
    "game_not_played",
    "central",
    "Force majeure (R96.2): the game is deemed not played; every stake comes back as "
    "refund credits up to last_credit_seq.",
    arguments=(
        _game(),
        Field("reason", REASON, doc="why the game could not run"),
        Field("last_credit_seq", SEQ, doc="the hall's credits, refunds included, in all"),
    ),
    errors=_PUSH_ERRORS,
)

#: What one hall of a hall-annex pair tells its partner (R3.5.b), relayed by the central server.
ANNEX_KINDS = ("opened", "ball", "sales", "claim", "closed", "cards", "not_played")
#: Items of the hall-annex stream in one page of ``annex_fetch``: few, since a part of a hall's
#: card declaration (``prints``) is a few kilobytes.
ANNEX_PAGE_ITEMS = 8
#: The characters of a part's fingerprints: 16 base64 characters a card (``protocol.annex``), 375 cards a part.
ANNEX_PRINTS_CHARS = 6000
_BASE64 = frozenset(_LOWER + _UPPER + _DIGITS + "+/=")
#: The fields of an item of the hall-annex stream, besides its number and its sender.
ANNEX_FIELDS: tuple[Field, ...] = (
    _game("the joint game: the main hall's id for it"),
    Field("kind", Choice(ANNEX_KINDS), doc="opened, ball, sales, claim, closed, cards or not_played"),
    Field("ball", BALL, optional=True, doc="ball: the number the main hall's draw committed"),
    Field("ball_count", BALL, optional=True, doc="ball: its place in the draw; claim: the ball the card completed on"),
    Field("cards", CARD_COUNT, optional=True,
          doc="sales: the cards the hall sold in the game; closed: the annex's claims the main hall counted; "
              "cards: the cards in this part"),
    Field("cents", CENTS, optional=True, doc="sales: what they took; opened: the card's price"),
    Field("line_bp", BASIS_POINTS, optional=True, doc="opened: the line's share of the sales, 1/100 of a percent"),
    Field("bingo_bp", BASIS_POINTS, optional=True, doc="opened: the bingo's share of the sales"),
    Field("pattern", Choice(("line", "bingo")), optional=True, doc="claim: the prize the card won"),
    Field("card", Text(32, charset=ID_CHARS), optional=True, doc="claim: the card, series-number (1001-17)"),
    Field("stake_pct", STAKE_PCT, optional=True, doc="claim: a virtual card's stake, percent of its price (R88.4)"),
    Field("terminal", TERMINAL_ID, optional=True, doc="claim: the terminal a virtual card was bought on"),
    Field("label", Text(64), optional=True,
          doc="claim: a virtual card as its player's screen shows it (V1-17); cards: where the part's cards come "
              "from (set hall, library V1)"),
    Field("cells", Text(80, charset=frozenset(_DIGITS + ",")), optional=True,
          doc="claim: the card's 27 cells, row by row, comma-separated, 0 a blank"),
    Field("digest", Text(64, charset=HEX_CHARS), optional=True,
          doc="cards: the SHA-256 of the hall's whole declaration, the same in each of its parts"),
    Field("part", Whole(1, 99_999), optional=True, doc="cards: this part's number, 1, 2, 3..."),
    Field("parts", Whole(1, 99_999), optional=True, doc="cards: how many parts the declaration has"),
    Field("first", CARD_NUMBER, optional=True, doc="cards: the number of the part's first card"),
    Field("prints", Text(ANNEX_PRINTS_CHARS, min_length=0, charset=_BASE64), optional=True,
          doc="cards: the cards' fingerprints (their 90-bit number sets), 12 bytes a card, base64 (R82.6)"),
    Field("reason", REASON, optional=True, doc="not_played: why the game cannot run (R96.2), as the main hall said"),
)


@dataclass(frozen=True)
class AnnexKind:
    """One kind of hall-annex item: which hall of the pair says it (``main``, ``annex`` or ``either``)
    and the fields it carries besides ``game_id`` and ``kind``; the central server relays no other."""

    sender: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()


#: Every kind of hall-annex item (R3.5.b), as the halls say them: the main hall opens the game,
#: draws its balls and closes it, or declares it not played (R96.2); either hall reports its sales, its verified claims and the
#: cards it may sell.
ANNEX_KIND_RULES: Mapping[str, AnnexKind] = {
    "opened": AnnexKind("main", ("cents", "line_bp", "bingo_bp")),
    "ball": AnnexKind("main", ("ball", "ball_count")),
    "sales": AnnexKind("either", ("cards", "cents")),
    "claim": AnnexKind("either", ("pattern", "card", "ball_count"), ("stake_pct", "terminal", "label", "cells")),
    "closed": AnnexKind("main", ("cards",)),
    "cards": AnnexKind("either", ("digest", "part", "parts", "label", "first", "cards", "prints")),
    "not_played": AnnexKind("main", ("reason",)),
}
#: One item of the hall-annex stream, as a hall fetches it.
ANNEX_ITEM = Items(
    (
        Field("seq", SEQ, doc="the item's number among those sent to this hall, 1, 2, 3..."),
        Field("from_hall", HALL_ID, doc="the partner that sent it"),
        *ANNEX_FIELDS,
    ),
    max_items=ANNEX_PAGE_ITEMS,
)
_ANNEX_ERRORS = (*_COMMON, "unknown_hall", "hall_mismatch", "not_annex_pair")

ANNEX_POST = Message(
    "annex_post",
    "hall",
    "A hall of a hall-annex pair (R3.5.b) tells its partner something of their joint game: "
    "the opening, a ball of the main hall's draw, its sales, a claim verified in its room, the "
    "close, or a part of its declaration of the cards it may sell (R82.6).  The central server "
    "keeps it for the partner and pushes it (annex_delivered).",
    arguments=(_request(), _hall(), *ANNEX_FIELDS),
    answer=(_request(), Field("seq", SEQ, doc="the item's number in the partner's stream")),
    errors=(*_ANNEX_ERRORS, "request_id_reused"),
    request_id=True,
)

ANNEX_FETCH = Message(
    "annex_fetch",
    "hall",
    "The items of the hall-annex stream sent to this hall after seq after: a hall that was "
    "away asks.",
    arguments=(_hall(), Field("after", SEQ, doc="the last item seq the hall holds")),
    answer=(
        Field("items", ANNEX_ITEM, doc="the next items, in order"),
        Field("more", Flag(), doc="later items exist: ask again after the last seq"),
        Field("last_seq", SEQ, doc="the items sent to this hall in all"),
    ),
    errors=_ANNEX_ERRORS,
    paging=Paging("after", "items"),
)

ANNEX_DELIVERED = Message(
    "annex_delivered",
    "central",
    "The partner hall said something of the joint game (annex_post); committed before it is sent.",
    arguments=(
        Field("seq", SEQ, doc="the item's number among those sent to this hall"),
        Field("from_hall", HALL_ID, doc="the partner that sent it"),
        *ANNEX_FIELDS,
    ),
    errors=("not_negotiated", "bad_argument", "internal_error", "storage_unavailable"),
)

#: Every message, by name.
MESSAGES: Mapping[str, Message] = {
    m.name: m
    for m in (
        HELLO, BUY_CARDS, BUY_CARDS_BATCH, GATE_CLOSED, TERMINAL_FAILED, GET_GAME, GET_BALLS, GET_CREDITS, GET_WINNERS,
        SALE_OPENED, SALE_CLOSED, BALL_DRAWN, PRIZE_WON, CREDITS_AVAILABLE, GAME_CLOSED,
        GAME_NOT_PLAYED, GAME_UNDER_WAY, ANNEX_POST, ANNEX_FETCH, ANNEX_DELIVERED,
    )  # fmt: skip
}


def check_arguments(message: Message, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` checked against ``message``'s arguments; :class:`CentralMessageError` if not."""
    return _check_fields("", message.arguments, values)


def check_answer(message: Message, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` checked against ``message``'s answer fields."""
    return _check_fields("", message.answer, values)


def negotiate(offered: Sequence[int], supported: Sequence[int] = SUPPORTED_VERSIONS) -> int:
    """The highest version both sides speak, or ``version_unsupported``."""
    common = set(offered) & set(supported)
    if not common:
        raise CentralMessageError(
            "version_unsupported",
            f"the hall speaks version(s) {', '.join(map(str, sorted(set(offered)))) or 'none'}; "
            f"the central server speaks {', '.join(map(str, supported))}",
        )
    return max(common)


def describe_type(kind: FieldType) -> str:
    """How ``docs/central-protocol.md`` names a field type."""
    if isinstance(kind, Text):
        chars = "" if kind.charset is None else " " + _CHARSET_NAMES.get(kind.charset, "limited characters")
        return f"text {kind.min_length}-{kind.max_length}{chars}"
    if isinstance(kind, Choice):
        return " / ".join(kind.values)
    if isinstance(kind, Whole):
        return f"integer {kind.low}-{'2^53' if kind.high == MAX_EXACT else kind.high}"
    if isinstance(kind, Flag):
        return "boolean"
    if isinstance(kind, WholeList):
        bytes_note = ", one byte each on the wire" if kind.one_byte_each else ""
        return f"list of <= {kind.max_items} x ({describe_type(kind.item)}{bytes_note})"
    return f"list of <= {kind.max_items} records: " + ", ".join(
        f.name + ("?" if f.optional else "") for f in kind.fields
    )


def render_fields(fields: Sequence[Field]) -> str:
    """A Markdown table of ``fields`` (``?``: may be left out)."""
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for f in fields:
        lines.append(f"| `{f.name}`{'?' if f.optional else ''} | {describe_type(f.type)} | {f.doc} |")
    return "\n".join(lines)


def error_message(code: str) -> str:
    """What a person is told for error ``code``."""
    return ERRORS[code].message


__all__ = [
    "CARD_CELLS",
    "CENTS",
    "ERRORS",
    "MAX_CARDS_PER_PLAYER",
    "MAX_VALUE_BYTES",
    "MESSAGES",
    "PAGE_ITEMS",
    "ANNEX_PAGE_ITEMS",
    "PROTOCOL_VERSION",
    "CLOCK_BOUND_MS",
    "GATE_BOUND_MS",
    "REFUSALS",
    "SUPPORTED_VERSIONS",
    "CentralMessageError",
    "Choice",
    "ErrorCode",
    "Field",
    "Flag",
    "Items",
    "Message",
    "Paging",
    "Text",
    "Whole",
    "WholeList",
    "box_bytes",
    "check_answer",
    "check_arguments",
    "describe_type",
    "error_message",
    "negotiate",
    "render_fields",
    "worst_case_bytes",
]

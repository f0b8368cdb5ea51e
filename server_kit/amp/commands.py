"""AMP commands built from the plain-data declarations of :mod:`protocol.central_messages`.

The protocol module declares each message (its arguments, answer, errors) without a
framework; :func:`amp_command` makes the ``twisted.protocols.amp`` command of one
declaration once, for both ends, so the two cannot disagree:

* :class:`~protocol.central_messages.Text` and ``Choice`` -> ``amp.Unicode``,
  ``Whole`` -> ``amp.Integer``, ``Flag`` -> ``amp.Boolean``, ``WholeList`` ->
  :class:`ByteWholes` when its numbers fit in a byte, ``amp.ListOf(amp.Integer())``
  otherwise, ``Items`` -> :class:`BoxList` (``amp.AmpList``'s wire form, read and
  written in one pass) of its fields; an optional field is optional on the wire;
* every error code the message may fail with is an exception class
  (:func:`error_class`, one per code, shared by all commands) that AMP sends as that
  code and raises again at the caller, with the message a person reads.

AMP checks only the wire types; a responder still checks values and bounds with
:func:`protocol.central_messages.check_arguments`.
"""

from __future__ import annotations

import struct
from typing import Any, Mapping, Sequence

from twisted.protocols import amp

from protocol.central_messages import (
    ERRORS,
    Choice,
    ErrorCode,
    Field,
    FieldType,
    Flag,
    Items,
    Message,
    Text,
    Whole,
    WholeList,
)
from protocol.errors import DomainError


class CommandFailed(DomainError):
    """A command answered with one of the protocol's error codes; ``code`` says which."""

    code = "internal_error"
    fatal = False

    def __init__(self, message: str = "") -> None:
        declared = ERRORS.get(self.code)
        super().__init__(message or (declared.message if declared is not None else self.code))


_ERROR_CLASSES: dict[str, type[CommandFailed]] = {}


def error_class(code: str, errors: Mapping[str, ErrorCode] = ERRORS) -> type[CommandFailed]:
    """The one exception class that travels as ``code`` (made on first use)."""
    known = _ERROR_CLASSES.get(code)
    if known is not None:
        return known
    if code not in errors:
        raise KeyError(f"{code!r} is not an error code of the protocol")
    declared = errors[code]
    name = "".join(part.capitalize() for part in code.split("_")) + "Failed"
    made = type(name, (CommandFailed,), {"code": code, "fatal": declared.fatal, "__doc__": declared.message})
    _ERROR_CLASSES[code] = made
    return made


class ByteWholes(amp.Argument):
    """A list of whole numbers 0-255 as one value of one byte a number.

    ``amp.ListOf(amp.Integer())`` frames every number as a value of its own, in Python, a
    number at a time; a purchase's 756 cells cost about a millisecond each way.  Here both
    directions are one call into C.  Bounds are the declaration's, checked by the receiver
    (:func:`protocol.central_messages.check_arguments`).
    """

    def toString(self, inObject: Any) -> bytes:
        return bytes(inObject)  # a number outside 0-255 raises ValueError: nothing is sent

    def fromString(self, inString: bytes) -> list[int]:
        return list(inString)


_LENGTH = struct.Struct("!H")


class BoxList(amp.Argument):
    """Records as ``amp.AmpList`` puts them on the wire, read and written in one pass.

    The bytes are AmpList's, to the byte: each record an AMP box (a key's length in two
    bytes, the key, the value's length, the value; the keys in sorted order; two zero
    bytes to end it), the boxes back to back, so either end may use either class.
    AmpList parses a value through a parser protocol made for it and each field through
    AMP's name conversions; a burst's ``buy_cards_batch`` spent about a fifth of the
    central server's time there.  Here each field is converted by its own argument
    type directly.  A record without one of its required fields, or bytes cut short,
    raise (the responder refuses the command: it cannot be read).
    """

    def __init__(self, fields: Sequence[tuple[bytes, amp.Argument]], optional: bool = False) -> None:
        super().__init__(optional=optional)
        self.fields = tuple((key, key.decode("ascii"), argument) for key, argument in sorted(fields, key=lambda f: f[0]))

    def fromStringProto(self, inString: bytes, proto: Any) -> list[dict[str, Any]]:  # noqa: N802 (AMP's name)
        records: list[dict[str, Any]] = []
        box: dict[bytes, bytes] = {}
        at, end, unpack = 0, len(inString), _LENGTH.unpack_from
        while at < end:
            if at + 2 > end:
                raise ValueError("the list's bytes end inside a length")
            (size,) = unpack(inString, at)
            at += 2
            if size == 0:
                records.append(self._record(box, proto))
                box = {}
                continue
            if at + size + 2 > end:
                raise ValueError("the list's bytes end inside a key")
            key = inString[at : at + size]
            (size,) = unpack(inString, at + size)
            at += len(key) + 2
            if at + size > end:
                raise ValueError(f"the list's bytes end inside the value of {key!r}")
            box[key] = inString[at : at + size]
            at += size
        if box:
            raise ValueError("the list's last record has no end")
        return records

    def _record(self, box: Mapping[bytes, bytes], proto: Any) -> dict[str, Any]:
        record: dict[str, Any] = {}
        for key, name, argument in self.fields:
            value = box.get(key)
            if value is None:
                if not argument.optional:
                    raise KeyError(f"a record of the list has no {name}")
                record[name] = None
            else:
                record[name] = argument.fromStringProto(value, proto)
        return record

    def toStringProto(self, inObject: Sequence[Mapping[str, Any]], proto: Any) -> bytes:  # noqa: N802 (AMP's name)
        parts: list[bytes] = []
        add, pack = parts.append, _LENGTH.pack
        for record in inObject:
            for key, name, argument in self.fields:
                value = record.get(name)
                if value is None:
                    if not argument.optional:
                        raise KeyError(f"a record of the list has no {name}")
                    continue
                encoded = argument.toStringProto(value, proto)
                if len(encoded) > amp.MAX_VALUE_LENGTH:
                    raise amp.TooLong(False, True, encoded, key)
                add(pack(len(key)))
                add(key)
                add(pack(len(encoded)))
                add(encoded)
            add(b"\0\0")
        return b"".join(parts)


def amp_argument(kind: FieldType, optional: bool = False) -> amp.Argument:
    """The AMP argument type of a declared field type."""
    if isinstance(kind, (Text, Choice)):
        return amp.Unicode(optional=optional)
    if isinstance(kind, Whole):
        return amp.Integer(optional=optional)
    if isinstance(kind, Flag):
        return amp.Boolean(optional=optional)
    if isinstance(kind, WholeList):
        if kind.one_byte_each:
            return ByteWholes(optional=optional)
        return amp.ListOf(amp.Integer(), optional=optional)
    if isinstance(kind, Items):
        return BoxList([_pair(f) for f in kind.fields], optional=optional)
    raise TypeError(f"no AMP type for {kind!r}")


def _pair(field: Field) -> tuple[bytes, amp.Argument]:
    return field.name.encode(), amp_argument(field.type, field.optional)


def amp_command(message: Message, errors: Mapping[str, ErrorCode] = ERRORS) -> type[amp.Command]:
    """The AMP command of ``message``; its errors are the classes of :func:`error_class`."""
    body: dict[str, Any] = {
        "commandName": message.name.encode(),
        "arguments": [_pair(f) for f in message.arguments],
        "response": [_pair(f) for f in message.answer],
        "errors": {error_class(code, errors): code.encode() for code in message.errors if not errors[code].fatal},
        "fatalErrors": {error_class(code, errors): code.encode() for code in message.errors if errors[code].fatal},
        "__doc__": message.doc,
    }
    name = "".join(part.capitalize() for part in message.name.split("_"))
    return type(name, (amp.Command,), body)


def amp_commands(messages: Mapping[str, Message], errors: Mapping[str, ErrorCode] = ERRORS) -> dict[str, type[amp.Command]]:
    """Every message's AMP command, by message name."""
    return {name: amp_command(message, errors) for name, message in messages.items()}

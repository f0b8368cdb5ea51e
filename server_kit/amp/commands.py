"""AMP commands built from the plain-data declarations of :mod:`protocol.central_messages`.

The protocol module declares each message (its arguments, answer, errors) without a
framework; :func:`amp_command` makes the ``twisted.protocols.amp`` command of one
declaration once, for both ends, so the two cannot disagree:

* :class:`~protocol.central_messages.Text` and ``Choice`` -> ``amp.Unicode``,
  ``Whole`` -> ``amp.Integer``, ``Flag`` -> ``amp.Boolean``, ``WholeList`` ->
  :class:`ByteWholes` when its numbers fit in a byte, ``amp.ListOf(amp.Integer())``
  otherwise, ``Items`` -> ``amp.AmpList`` of its fields; an optional field is optional
  on the wire;
* every error code the message may fail with is an exception class
  (:func:`error_class`, one per code, shared by all commands) that AMP sends as that
  code and raises again at the caller, with the message a person reads.

AMP checks only the wire types; a responder still checks values and bounds with
:func:`protocol.central_messages.check_arguments`.
"""

from __future__ import annotations

from typing import Any, Mapping

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
        return amp.AmpList([_pair(f) for f in kind.fields], optional=optional)
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

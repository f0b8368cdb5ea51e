"""How a journal record type is declared, built, parsed and written.

A record type is a frozen dataclass deriving from :class:`JournalRecord`, with a
``type`` name and a ``version`` (class attributes) and one annotated field per key of
its payload, registered with :func:`record`.  The annotations say what each key holds,
as JSON:

==========================  ================================================
annotation                  JSON value
==========================  ================================================
``int``                     an integer (``true`` is not one; cents are ints)
``str`` / ``bool``          a string / ``true`` or ``false``
``X | None``                ``null`` or an ``X``
``tuple[X, ...]``           an array of ``X`` (kept as a tuple: records are frozen)
``tuple[X, Y]``             an array of exactly an ``X`` and a ``Y``
``Mapping[str, X]``         an object with any keys, each value an ``X``
a :class:`Shape` subclass   an object with exactly that shape's keys
``Json``                    any JSON value (free-form detail, kept as given)
==========================  ================================================

A field with a default may be missing from a payload; a field declared with
:func:`optional` is in addition left out of the payload while it holds its default,
which is how journals written before the field existed stay readable and how the
records of today keep the form they always had.

**Versions.**  A payload of version 1 carries no version key; a type whose payload
changes in a way older readers cannot take gets ``version = 2`` (and so on), its
payloads carry ``"v": 2``, and the class reads the older forms with
:meth:`JournalRecord.upgrade`.  A ``"v"`` key on a version-1 payload, or a version
this software does not know, is refused.

**The actor.**  Every record the command loop commits says who caused it: the
``actor`` stamp (:class:`ActorStamp`), declared here once for every type.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import NoneType, UnionType
from typing import Any, ClassVar, TypeVar

from protocol.errors import DomainError
from protocol.json_values import describe

#: The payload key that carries a record's version when it is above 1.
VERSION_KEY = "v"
#: The payload key of the actor stamp.
ACTOR_KEY = "actor"
_OMIT = "records.omit_default"
_KEY = "records.key"


class RecordError(DomainError):
    """A journal record that does not match its declaration; the message names the field."""

    def __init__(self, type: str, reason: str, field: str | None = None, seq: int | None = None) -> None:
        self.type = type
        self.field = field
        self.reason = reason
        self.seq = seq
        where = f"record {seq} ({type})" if seq is not None else f"a {type!r} record"
        detail = f"{field}: {reason}" if field is not None else reason
        super().__init__(f"{where}: {detail}")

    def at(self, seq: int) -> "RecordError":
        """The same fault, naming the stored record it was found in."""
        return RecordError(self.type, self.reason, self.field, seq)


class Json:
    """Annotation for a free-form JSON value (a detail kept as given, not read by rules)."""


def optional(default: Any = None, *, key: str | None = None) -> Any:
    """A field that may be missing and is left out of the payload while it holds ``default``."""
    return dataclasses.field(default=default, metadata={_OMIT: True, _KEY: key})


def keyed(key: str, default: Any = dataclasses.MISSING) -> Any:
    """A field stored under ``key``, a name Python cannot use for an attribute (``from``)."""
    return dataclasses.field(default=default, metadata={_KEY: key})


def payload_key(f: dataclasses.Field[Any]) -> str:
    """The payload key of a declared field: its name, or the key it is stored under."""
    return f.metadata.get(_KEY) or f.name


def payload_keys(cls: type) -> list[str]:
    """The payload keys a record type or shape declares, in declaration order."""
    return [payload_key(f) for f in fields(cls)]


@dataclass(frozen=True)
class Shape:
    """A JSON object nested in a payload, with exactly the keys its fields declare."""

    def __post_init__(self) -> None:
        _check_fields(self, type(self).__name__)

    def to_json(self) -> dict[str, Any]:
        return _object_json(self)


@dataclass(frozen=True)
class ActorStamp(Shape):
    """Who caused a record: a staff member (or the server itself) and their role.

    ``request`` is the id of the request the command came with (the console's command
    channel): the core answers a repeated request from the records that carry it.
    """

    name: str
    role: str
    request: str | None = optional()


@dataclass(frozen=True, kw_only=True)
class JournalRecord:
    """Base of every record type: the actor stamp, the version, and the payload form."""

    type: ClassVar[str]
    version: ClassVar[int] = 1
    #: The payload repeats the record's type under ``"type"`` (records that hold a
    #: domain event of :mod:`protocol.events` store the event's own dict form).
    carries_type: ClassVar[bool] = False

    actor: ActorStamp | None = optional()

    def __post_init__(self) -> None:
        _check_fields(self, self.type)
        self.check()

    def check(self) -> None:
        """Rules across fields a type adds; raise :class:`RecordError` (via :meth:`refusal`)."""

    def refusal(self, reason: str, field: str | None = None) -> RecordError:
        """The error refusing this record for ``reason``."""
        return RecordError(self.type, reason, field)

    def to_payload(self) -> dict[str, Any]:
        """The payload the journal stores for this record (its canonical JSON is signed)."""
        payload: dict[str, Any] = {}
        if self.carries_type:
            payload["type"] = self.type
        payload.update(_object_json(self))
        if self.version > 1:
            payload[VERSION_KEY] = self.version
        return payload

    @classmethod
    def upgrade(cls, payload: dict[str, Any], version: int) -> dict[str, Any]:
        """The payload of an older ``version`` in today's form; a type that changed overrides this."""
        raise RecordError(cls.type, f"version {version} is not known (this software reads version {cls.version})")


R = TypeVar("R", bound=type[JournalRecord])

#: Every record type by its name.
REGISTRY: dict[str, type[JournalRecord]] = {}


def record(cls: R) -> R:
    """Register a record class under its ``type`` name (a name is declared once)."""
    name = getattr(cls, "type", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} declares no record type name")
    if name in REGISTRY:
        raise TypeError(f"two record classes are named {name!r}: {REGISTRY[name].__name__} and {cls.__name__}")
    if {VERSION_KEY, "type"} & set(payload_keys(cls)):
        raise TypeError(f"{cls.__name__}: 'v' and 'type' are reserved payload keys")
    for f in fields(cls):
        if callable(f.default):  # a field named like a method of the base took it as its default
            raise TypeError(f"{cls.__name__}.{f.name}: the name is taken by a method; use keyed({f.name!r})")
    _hints(cls)  # an annotation the checker cannot read fails here, at import
    REGISTRY[name] = cls
    return cls


def build(type: str, payload: Mapping[str, Any]) -> JournalRecord:
    """The record of ``type`` that ``payload`` describes, or :class:`RecordError` saying why not.

    Refused: an undeclared type, a missing field, a key the type does not declare, a
    value of the wrong JSON type (``true`` for an integer, ``1.0`` for cents), a
    version this software does not know.
    """
    cls = REGISTRY.get(type)
    if cls is None:
        raise RecordError(type, "no such record type is declared (protocol/records)")
    if not isinstance(payload, Mapping):
        raise RecordError(type, f"a payload is a JSON object, not {describe(payload)}")
    data = dict(payload)
    version = data.pop(VERSION_KEY, 1)
    if VERSION_KEY in payload and (version == 1 or isinstance(version, bool) or not isinstance(version, int)):
        raise RecordError(type, f"is a version above 1, not {describe(version)} (version 1 has no 'v')", VERSION_KEY)
    if version > cls.version or version < 1:
        raise RecordError(type, f"version {version} is not known (this software reads up to {cls.version})")
    if version < cls.version:
        data = cls.upgrade(data, version)
    if cls.carries_type:
        echoed = data.pop("type", None)
        if echoed != type:
            raise RecordError(type, f"must repeat the record type, not {describe(echoed)}", "type")
    return _construct(cls, type, data)


def parse(stored: Any) -> JournalRecord:
    """The declared record a stored journal record holds (anything with ``seq``, ``type``, ``payload``).

    The :class:`RecordError` names the record's ``seq``.
    """
    try:
        return build(stored.type, stored.payload)
    except RecordError as error:
        raise error.at(stored.seq) from None


def entry_record(entry: "JournalRecord | tuple[str, Mapping[str, Any]]") -> JournalRecord:
    """A journal entry as its declared record: a record as is, a ``(type, payload)`` pair built."""
    if isinstance(entry, JournalRecord):
        return entry
    type, payload = entry
    return build(type, payload)


# --- checking ---------------------------------------------------------------------------------


def _construct(cls: type[Any], rtype: str, data: Mapping[str, Any]) -> Any:
    declared = {payload_key(f): f for f in fields(cls)}
    if extra := sorted(set(data) - set(declared)):
        raise RecordError(rtype, f"is not a field of this record type (declared: {', '.join(declared) or 'none'})",
                          ", ".join(map(str, extra)))
    missing = [
        key for key, f in declared.items()
        if key not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise RecordError(rtype, "is missing", ", ".join(missing))
    try:
        return cls(**{declared[key].name: value for key, value in data.items()})
    except RecordError:
        raise
    except DomainError as error:  # a domain rule the type checks (protocol.events, say)
        raise RecordError(rtype, str(error)) from None


def _check_fields(instance: Any, rtype: str) -> None:
    hints = _hints(type(instance))
    for f in fields(instance):
        value = getattr(instance, f.name)
        checked = _check(rtype, payload_key(f), hints[f.name], value)
        if checked is not value:
            # JSON arrays become tuples and objects frozen, so a record cannot change.
            object.__setattr__(instance, f.name, checked)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        hints = typing.get_type_hints(cls)
        for f in fields(cls):
            _readable(cls, f.name, hints[f.name])
        _HINTS[cls] = hints
    return _HINTS[cls]


def _readable(cls: type, name: str, hint: Any) -> None:
    """Fail at import on an annotation :func:`_check` has no JSON form for (a programming error)."""
    if hint in (int, str, bool, Json) or (isinstance(hint, type) and issubclass(hint, Shape)):
        return
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, UnionType) or origin is typing.Union:
        for arg in args:
            if arg is not NoneType:
                _readable(cls, name, arg)
        return
    if origin is tuple or origin is Mapping or origin is dict:
        for arg in args:
            if arg is not Ellipsis and not (origin is not tuple and arg is str and arg is args[0]):
                _readable(cls, name, arg)
        return
    raise TypeError(f"{cls.__name__}.{name}: no JSON form for {hint!r}")


def _check(rtype: str, name: str, hint: Any, value: Any) -> Any:
    """``value`` checked against the annotation ``hint``; JSON arrays become tuples, objects shapes."""
    if hint is Json:
        return value
    if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union:
        options = typing.get_args(hint)
        if value is None and NoneType in options:
            return value
        kinds = [a for a in options if a is not NoneType]
        if len(kinds) == 1:
            return _check(rtype, name, kinds[0], value)
        for kind in kinds:
            try:
                return _check(rtype, name, kind, value)
            except RecordError:
                continue
        raise RecordError(rtype, f"is not any of {hint}, it is {describe(value)}", name)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordError(rtype, f"is a whole number, not {describe(value)}", name)
        return value
    if hint is str:
        if not isinstance(value, str):
            raise RecordError(rtype, f"is text, not {describe(value)}", name)
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise RecordError(rtype, f"is true or false, not {describe(value)}", name)
        return value
    if isinstance(hint, type) and issubclass(hint, Shape):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise RecordError(rtype, f"is an object, not {describe(value)}", name)
        try:
            return _construct(hint, rtype, {str(k): v for k, v in value.items()})
        except RecordError as error:
            raise RecordError(rtype, error.reason, f"{name}.{error.field}" if error.field else name) from None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise RecordError(rtype, f"is an array, not {describe(value)}", name)
        if len(args) == 2 and args[1] is Ellipsis:
            items = [_check(rtype, f"{name}[{i}]", args[0], v) for i, v in enumerate(value)]
        else:
            if len(value) != len(args):
                raise RecordError(rtype, f"is an array of {len(args)} values, not {len(value)}", name)
            items = [_check(rtype, f"{name}[{i}]", a, v) for i, (a, v) in enumerate(zip(args, value))]
        same = isinstance(value, tuple) and all(a is b for a, b in zip(items, value))
        return value if same else tuple(items)
    if origin is Mapping or origin is dict:
        if not isinstance(value, Mapping):
            raise RecordError(rtype, f"is an object, not {describe(value)}", name)
        checked = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecordError(rtype, f"has a key that is not text: {key!r}", name)
            checked[key] = _check(rtype, f"{name}.{key}", args[1], item)
        return _FrozenMapping(checked)
    raise TypeError(f"{rtype}.{name}: no JSON form for {hint!r}")  # caught at import by _readable



class _FrozenMapping(dict):  # type: ignore[type-arg]
    """A JSON object held by a frozen record: a dict (so it serialises) that refuses changes."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a record's values cannot be changed")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))


def _json(value: Any) -> Any:
    if isinstance(value, Shape):
        return value.to_json()
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    return value


def _object_json(instance: Any) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for f in fields(instance):
        value = getattr(instance, f.name)
        if f.metadata.get(_OMIT) and value == f.default:
            continue
        data[payload_key(f)] = _json(value)
    return data

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

**The epoch.**  Every record the central server commits says under which leadership
epoch it was written (``epoch``, a whole number; :mod:`central_server.leadership`),
declared here once for every type and left out while ``None``, so a hall's records
and every record stored before the epoch existed keep their form byte for byte.  The
regulator's receiver refuses a record of an epoch older than one it has seen.

**Secrets and personal data.**  A field declared with :func:`secret` holds what the
server needs to check a secret later (a PIN's hash, a terminal token's hash): the
record is sealed with a nonce for it (``sealed``, :mod:`protocol.records.sealing`), so
its signature covers the secret's commitment and the record leaves the server only in
its sealed form (:func:`protocol.chain.sealed_form`).  A field declared with
:func:`personal` names a person or their identity document: the regulator holds it,
and shows it only to the regulator's own role (docs/regulator-feed.md).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, TypeVar

from protocol.chain import SEALED_KEY as _SEALED_KEY
from protocol.errors import DomainError
from protocol.json_values import describe

#: The payload key that carries a record's version when it is above 1.
VERSION_KEY = "v"
#: The payload key of the actor stamp.
ACTOR_KEY = "actor"
#: The payload key of the leadership epoch stamp (central server records only).
EPOCH_KEY = "epoch"
#: The payload key of a record's sealed secrets (:data:`protocol.chain.SEALED_KEY`).
SEALED_KEY = _SEALED_KEY
_OMIT = "records.omit_default"
_KEY = "records.key"
_SECRET = "records.secret"
_PERSONAL = "records.personal"


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


if TYPE_CHECKING:
    Json = Any  # to the type checker, what a JSON value holds is known only where it is read
else:

    class Json:
        """Annotation for a free-form JSON value (kept as given; whoever reads it checks its shape)."""


def optional(default: Any = None, *, key: str | None = None) -> Any:
    """A field that may be missing and is left out of the payload while it holds ``default``."""
    return dataclasses.field(default=default, metadata={_OMIT: True, _KEY: key})


def secret() -> Any:
    """A field that holds a secret's check value (a PIN's hash, a token's hash): sealed in every
    record (:mod:`protocol.records.sealing`), never sent or shown (docs/security.md)."""
    return dataclasses.field(metadata={_SECRET: True})


def personal(default: Any = dataclasses.MISSING) -> Any:
    """A field that names a person or their identity document (a visitor's name, a document number);
    given a ``default``, it may be missing too (left out of the payload while it holds it, as :func:`optional`)."""
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={_PERSONAL: True})
    return dataclasses.field(default=default, metadata={_PERSONAL: True, _OMIT: True, _KEY: None})


#: Each type's keys of a mark (secret, personal), found once a type (each record sealed asks).
_MARKED: dict[tuple[type, str], tuple[str, ...]] = {}


def _marked_keys(cls: type, mark: str) -> tuple[str, ...]:
    known = _MARKED.get((cls, mark))
    if known is None:
        known = _MARKED[(cls, mark)] = tuple(payload_key(f) for f in fields(cls) if f.metadata.get(mark))
    return known


def secret_keys(cls: type) -> tuple[str, ...]:
    """The payload keys a record type declares :func:`secret`."""
    return _marked_keys(cls, _SECRET)


def personal_keys(cls: type) -> tuple[str, ...]:
    """The payload keys a record type declares :func:`personal`."""
    return _marked_keys(cls, _PERSONAL)


def keyed(key: str, default: Any = dataclasses.MISSING) -> Any:
    """A field stored under ``key``, a name Python cannot use for an attribute (``from``)."""
    return dataclasses.field(default=default, metadata={_KEY: key})


def payload_key(f: dataclasses.Field[Any]) -> str:
    """The payload key of a declared field: its name, or the key it is stored under."""
    return f.metadata.get(_KEY) or f.name


def left_out_at_default(f: dataclasses.Field[Any]) -> bool:
    """Whether a declared field is left out of the payload while it holds its default."""
    return bool(f.metadata.get(_OMIT))


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
    """Base of every record type: the actor and epoch stamps, the version, and the payload form."""

    type: ClassVar[str]
    version: ClassVar[int] = 1
    #: The payload repeats the record's type under ``"type"`` (records that hold a
    #: domain event of :mod:`protocol.events` store the event's own dict form).
    carries_type: ClassVar[bool] = False

    actor: ActorStamp | None = optional()
    #: The leadership epoch the central server wrote the record under (None: a hall's record).
    epoch: int | None = optional()
    #: Each secret field's commitment nonce (None: the record seals nothing; :mod:`protocol.chain`).
    sealed: Mapping[str, str] | None = optional(key=_SEALED_KEY)

    def __post_init__(self) -> None:
        _check_fields(self, self.type)
        if self.epoch is not None and self.epoch < 1:
            raise self.refusal(f"a leadership epoch is 1 or more, not {self.epoch}", EPOCH_KEY)
        if self.sealed is not None and not set(self.sealed) <= set(secret_keys(type(self))):
            raise self.refusal(f"seals {', '.join(sorted(self.sealed))}, but only the secret fields "
                               f"({', '.join(secret_keys(type(self))) or 'none'}) are sealed", _SEALED_KEY)
        self.check()

    def check(self) -> None:
        """Rules across fields a type adds; raise :class:`RecordError` (via :meth:`refusal`)."""

    def stamped(self, actor: ActorStamp, epoch: int | None = None) -> "JournalRecord":
        """This record with its actor and epoch stamps.

        The fields were checked when the record was made; only the stamps are checked
        here, so a burst of purchases does not build and check every record twice.
        """
        if not isinstance(actor, ActorStamp):
            raise self.refusal(f"the actor stamp is an ActorStamp, not {type(actor).__name__}", ACTOR_KEY)
        if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1):
            raise self.refusal(f"a leadership epoch is 1 or more, not {epoch!r}", EPOCH_KEY)
        cls = type(self)
        made = object.__new__(cls)
        for name in _slotted(cls):  # a record holding a domain event keeps the event's fields in slots
            object.__setattr__(made, name, getattr(self, name))
        made.__dict__.update(self.__dict__)
        made.__dict__["actor"], made.__dict__["epoch"] = actor, epoch
        return made

    @property
    def who(self) -> ActorStamp:
        """Who caused this record: its actor stamp (every record a core seals has one)."""
        if self.actor is None:
            raise self.refusal("says nobody caused it (no actor stamp)", ACTOR_KEY)
        return self.actor

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
    _plan(cls)  # an annotation with no JSON form fails here, at import
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


_SLOTTED: dict[type, tuple[str, ...]] = {}


def _slotted(cls: type) -> tuple[str, ...]:
    """The slots of ``cls`` and its bases (a domain event's fields), found once a class."""
    names = _SLOTTED.get(cls)
    if names is None:
        found: list[str] = []
        for base in cls.__mro__:
            slots = base.__dict__.get("__slots__", ())
            found += [slots] if isinstance(slots, str) else [s for s in slots if s not in ("__dict__", "__weakref__")]
        names = _SLOTTED[cls] = tuple(found)
    return names


#: Where a journal record keeps its declared record once built (beside its fields, not among them).
_DECLARED = "_declared"


def declared(stored: Any) -> JournalRecord:
    """The declared record a journal record holds, built once and kept with it.

    What a module folds: :func:`~protocol.records.seal_entries` leaves each record it
    seals with the record it was made from, recovery with the one it parsed, and a
    record read from storage is parsed the first time it is asked (:func:`parse`,
    whose :class:`RecordError` names its ``seq``).
    """
    kept = stored.__dict__.get(_DECLARED)
    if kept is None:
        kept = stored.__dict__[_DECLARED] = parse(stored)
    return kept


def keep_declared(stored: Any, record: JournalRecord) -> None:
    """``stored`` (sealed from ``record``'s payload) keeps ``record`` as its declared record."""
    stored.__dict__[_DECLARED] = record


def forget_declared(stored: Any) -> None:
    """``stored`` lets its declared record go (a record kept long after it was folded need not hold it twice)."""
    stored.__dict__.pop(_DECLARED, None)


def entry_record(entry: "JournalRecord | tuple[str, Mapping[str, Any]]") -> JournalRecord:
    """A journal entry as its declared record: a record as is, a ``(type, payload)`` pair built."""
    if isinstance(entry, JournalRecord):
        return entry
    type, payload = entry
    return build(type, payload)


# --- checking ---------------------------------------------------------------------------------
#
# Each annotation is turned once into a checker, ``check(rtype, name, value) -> value``
# (recovery reads every record of the journal through these, so they are kept cheap).

Checker = Callable[[str, str, Any], Any]


@dataclass(frozen=True)
class _Plan:
    """How a record type or shape is read: its fields by payload key, and their checkers."""

    by_key: dict[str, dataclasses.Field[Any]]
    required: tuple[str, ...]
    # (attribute, payload key, checker, the class of a value the checker passes as it is, if one).
    checks: tuple[tuple[str, str, Checker, type | None], ...]


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        declared = fields(cls)
        plan = _Plan(
            by_key={payload_key(f): f for f in declared},
            required=tuple(
                payload_key(f) for f in declared
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            ),
            checks=tuple((f.name, payload_key(f), _checker(cls, f.name, hints[f.name]), _passed(hints[f.name]))
                         for f in declared),
        )
        _PLANS[cls] = plan
    return plan


_NO_FLOAT: dict[type, bool] = {}


def holds_no_float(cls: type) -> bool:
    """Whether no record (or shape) of class ``cls`` can hold a float: each of its fields is a whole
    number, text, a truth or null, or an array, object (keyed by text) or shape of those, which
    its checkers hold it to.  Its body's canonical JSON may then be made by
    :func:`protocol.chain.canonical_json_without_floats` (:func:`~protocol.records.seal_entries`)."""
    known = _NO_FLOAT.get(cls)
    if known is None:
        _NO_FLOAT[cls] = True  # a shape that holds itself is answered by its other fields
        hints = typing.get_type_hints(cls)
        known = _NO_FLOAT[cls] = all(_no_float(hints[f.name]) for f in fields(cls))
    return known


def _no_float(hint: Any) -> bool:
    if hint in (int, str, bool, NoneType):
        return True
    if isinstance(hint, type) and issubclass(hint, Shape):
        return holds_no_float(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, UnionType) or origin is typing.Union or origin is tuple:
        return all(_no_float(a) for a in args if a is not Ellipsis)
    if (origin is Mapping or origin is dict) and args and args[0] is str:
        return _no_float(args[1])
    return False  # a float, a free JSON value (Json), anything else


def annotations_of(cls: type) -> dict[str, Any]:
    """The annotations of a record type or shape; fails at import on one with no JSON form."""
    _plan(cls)
    return typing.get_type_hints(cls)


def _construct(cls: type[Any], rtype: str, data: Mapping[str, Any]) -> Any:
    plan = _plan(cls)
    by_key = plan.by_key
    if extra := sorted(str(key) for key in data if key not in by_key):
        raise RecordError(rtype, f"is not a field of this record type (declared: {', '.join(by_key) or 'none'})",
                          ", ".join(extra))
    if missing := [key for key in plan.required if key not in data]:
        raise RecordError(rtype, "is missing", ", ".join(missing))
    try:
        return cls(**{by_key[key].name: value for key, value in data.items()})
    except RecordError:
        raise
    except DomainError as error:  # a domain rule the type checks (protocol.events, say)
        raise RecordError(rtype, str(error)) from None


def _passed(hint: Any) -> type | None:
    """The class whose instances the checker of ``hint`` returns unchanged without a look:
    a whole number (not a ``bool``), a text, a truth, or a shape (checked when it was made)."""
    if hint in (int, str, bool) or (isinstance(hint, type) and issubclass(hint, Shape)):
        return hint  # type: ignore[no-any-return]
    return None


def _check_fields(instance: Any, rtype: str) -> None:
    for attribute, key, check, passed in _plan(type(instance)).checks:
        value = getattr(instance, attribute)
        if value.__class__ is passed:
            continue
        checked = check(rtype, key, value)
        if checked is not value:
            # JSON arrays become tuples and objects frozen, so a record cannot change.
            object.__setattr__(instance, attribute, checked)


def _checker(cls: type, name: str, hint: Any) -> Checker:
    """The checker of annotation ``hint``; ``TypeError`` (at import) for one with no JSON form."""
    if hint is Json:
        return lambda rtype, key, value: value
    if hint is int:
        def whole(rtype: str, key: str, value: Any) -> Any:
            if value.__class__ is not int and (isinstance(value, bool) or not isinstance(value, int)):
                raise RecordError(rtype, f"is a whole number, not {describe(value)}", key)
            return value
        return whole
    if hint is str:
        def text(rtype: str, key: str, value: Any) -> Any:
            if not isinstance(value, str):
                raise RecordError(rtype, f"is text, not {describe(value)}", key)
            return value
        return text
    if hint is bool:
        def truth(rtype: str, key: str, value: Any) -> Any:
            if not isinstance(value, bool):
                raise RecordError(rtype, f"is true or false, not {describe(value)}", key)
            return value
        return truth
    if isinstance(hint, type) and issubclass(hint, Shape):
        _plan(hint)
        return _shape_checker(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, UnionType) or origin is typing.Union:
        kinds = [_checker(cls, name, a) for a in args if a is not NoneType]
        nullable = NoneType in args

        def either(rtype: str, key: str, value: Any) -> Any:
            if value is None and nullable:
                return value
            if len(kinds) == 1:
                return kinds[0](rtype, key, value)
            for kind in kinds:
                try:
                    return kind(rtype, key, value)
                except RecordError:
                    continue
            raise RecordError(rtype, f"is not any of {hint}, it is {describe(value)}", key)
        return either
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _checker(cls, name, args[0])
        plain = frozenset({args[0]}) if args[0] in (int, str) else None

        def array(rtype: str, key: str, value: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise RecordError(rtype, f"is an array, not {describe(value)}", key)
            if plain is not None and set(map(type, value)) <= plain:
                return value if value.__class__ is tuple else tuple(value)  # whole numbers or texts as they are
            try:
                items = tuple([item(rtype, key, v) for v in value])
            except RecordError:  # checked again, naming the item at fault
                items = tuple([item(rtype, f"{key}[{i}]", v) for i, v in enumerate(value)])
                raise AssertionError("a checker gave two answers for one value") from None
            return value if isinstance(value, tuple) and all(a is b for a, b in zip(items, value)) else items
        return array
    if origin is tuple:
        parts = [_checker(cls, name, a) for a in args]

        def fixed(rtype: str, key: str, value: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise RecordError(rtype, f"is an array, not {describe(value)}", key)
            if len(value) != len(parts):
                raise RecordError(rtype, f"is an array of {len(parts)} values, not {len(value)}", key)
            try:
                items = tuple([part(rtype, key, v) for part, v in zip(parts, value)])
            except RecordError:  # checked again, naming the item at fault
                items = tuple([part(rtype, f"{key}[{i}]", v) for i, (part, v) in enumerate(zip(parts, value))])
                raise AssertionError("a checker gave two answers for one value") from None
            return value if isinstance(value, tuple) and all(a is b for a, b in zip(items, value)) else items
        return fixed
    if (origin is Mapping or origin is dict) and args and args[0] is str:
        entry = _checker(cls, name, args[1])

        def mapping(rtype: str, key: str, value: Any) -> Any:
            if not isinstance(value, Mapping):
                raise RecordError(rtype, f"is an object, not {describe(value)}", key)
            checked = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise RecordError(rtype, f"has a key that is not text: {k!r}", key)
                checked[k] = entry(rtype, f"{key}.{k}", v)
            return _FrozenMapping(checked)
        return mapping
    raise TypeError(f"{cls.__name__}.{name}: no JSON form for {hint!r}")


def _shape_checker(shape: type[Shape]) -> Checker:
    def nested(rtype: str, key: str, value: Any) -> Any:
        if isinstance(value, shape):
            return value  # checked when it was made
        if not isinstance(value, Mapping):
            raise RecordError(rtype, f"is an object, not {describe(value)}", key)
        try:
            return _construct(shape, rtype, value)
        except RecordError as error:
            raise RecordError(rtype, error.reason, f"{key}.{error.field}" if error.field else key) from None
    return nested


class _FrozenMapping(dict):  # type: ignore[type-arg]
    """A JSON object held by a frozen record: a dict (so it serialises) that refuses changes."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a record's values cannot be changed")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles are built whole, not item by item
        return (_FrozenMapping, (dict(self),))


_PLAIN = (int, str, bool, float, type(None))
_ALL_PLAIN = frozenset(_PLAIN)


def _json(value: Any) -> Any:
    if value.__class__ in _PLAIN:
        return value
    if value.__class__ is tuple and set(map(type, value)) <= _ALL_PLAIN:
        return list(value)  # an array of plain values, in one pass
    if isinstance(value, Shape):
        return value.to_json()
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    return value


#: Per record type or shape: (attribute, payload key, left out at its default, the default).
_WRITES: dict[type, tuple[tuple[str, str, bool, Any], ...]] = {}


def _object_json(instance: Any) -> dict[str, Any]:
    writes = _WRITES.get(instance.__class__)
    if writes is None:
        writes = _WRITES[instance.__class__] = tuple(
            (f.name, payload_key(f), left_out_at_default(f), f.default) for f in fields(instance)
        )
    data: dict[str, Any] = {}
    for attribute, key, omit, default in writes:
        value = getattr(instance, attribute)
        if omit and value == default:
            continue
        data[key] = value if value.__class__ in _PLAIN else _json(value)
    return data

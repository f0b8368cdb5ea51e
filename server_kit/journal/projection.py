"""A module's projection as a JSON value, and back: what a checkpoint holds of each module.

A module folds journal records into plain Python state: dataclasses, the game
machines, enums, dates, dicts keyed by tuples or dataclasses, sets, deques and numpy arrays.
:func:`encode` turns such a value into JSON-able data (dicts, lists, strings, numbers)
and :func:`decode` rebuilds an equal value, so a module restored from a checkpoint
holds what the same records replayed would have given it.

The form is tagged: every non-JSON value is a one-key dict (``{"t": [...]}`` a tuple,
``{"o": [class, fields]}`` an object, ``{"m": [class, items]}`` a dict of one of the
system's classes - a record's frozen object -, ...).  An object or container met twice is
written once and referred to after (``{"r": n}``), so a value shared inside a module's
state is still shared once restored.  A dataclass is written by its fields (see
:func:`_fields`: the copy leaves the state's objects as small as it found them), another
object by its slots and ``__dict__``.  Objects are rebuilt without calling their
``__init__`` (fields are set as they were), and only classes of the system's own
packages are rebuilt (:data:`PACKAGES`): a checkpoint names classes, and a name from
anywhere else is refused with :class:`ProjectionError`.

:class:`ProjectedState` gives a module whose whole projection is ``self.state`` its
``checkpoint()`` and ``restore(data)``.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime
import enum
import gc
import importlib
from collections import deque
from typing import Any, Iterable, Iterator

import numpy as np

from protocol.errors import DomainError

#: The packages whose classes a checkpoint may name.
PACKAGES = ("protocol", "server_kit", "hall_server", "central_server", "terminals")


class ProjectionError(DomainError):
    """A checkpoint's state that cannot be written or read back; the message says what."""


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _kept_class(cls: type) -> str:
    name = _KEPT_CLASSES.get(cls)
    if name is None:
        if cls.__module__.split(".")[0] not in PACKAGES:
            raise ProjectionError(f"a {_class_name(cls)} cannot be kept in a checkpoint")
        name = _KEPT_CLASSES[cls] = _class_name(cls)
    return name


#: Each class's name in a checkpoint, made once (one string for all its objects).
_KEPT_CLASSES: dict[type, str] = {}


def _fields(value: Any) -> list[tuple[str, Any]]:
    """An object's attributes in a stable order: a dataclass's fields, else its slots and ``__dict__``.

    A dataclass is read field by field, never through ``__dict__``: CPython keeps a plain
    object's attributes inline until its ``__dict__`` is asked for, and then makes the
    dict for good (64 bytes more an object, and one more object for the collector), so a
    checkpoint that asked would leave every record's objects larger than it found them.
    """
    cls = type(value)
    names = _FIELDS.get(cls)
    if names is None:
        if "__dataclass_fields__" in cls.__dict__:  # the class itself is a dataclass, not a subclass of one
            names = _FIELDS[cls] = tuple(field.name for field in dataclasses.fields(cls))
        else:
            slotted: list[str] = []
            for base in reversed(cls.__mro__):
                slots = base.__dict__.get("__slots__", ())
                slotted += [slots] if isinstance(slots, str) else [s for s in slots if s not in ("__dict__", "__weakref__")]
            pairs = [(name, getattr(value, name)) for name in slotted if hasattr(value, name)]
            return pairs + list(getattr(value, "__dict__", {}).items())
    return [(name, getattr(value, name)) for name in names if hasattr(value, name)]


#: Each dataclass's field names, looked up once.
_FIELDS: dict[type, tuple[str, ...]] = {}


class _Encoder:
    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.kept: list[Any] = []  # keeps every value seen alive, so no id() is reused meanwhile
        # An enum member's form, made once and written wherever the member stands: a state
        # holds the same few members thousands of times (each step of every game machine).
        # By identity: members of two StrEnums with one value are equal, and are not the same.
        self.members: dict[int, Any] = {}

    def shared(self, value: Any) -> dict[str, int] | None:
        index = self.seen.get(id(value))
        if index is not None:
            return {"r": index}
        self.seen[id(value)] = len(self.kept)
        self.kept.append(value)
        return None

    def __call__(self, value: Any) -> Any:
        kind = type(value)
        if value is None or kind is bool or kind is str or kind is int:
            return value
        if isinstance(value, enum.Enum):  # before str and int: a StrEnum stays a member
            form = self.members.get(id(value))
            if form is None:
                form = self.members[id(value)] = {"e": [_kept_class(kind), self(value.value)]}
            return form
        if type(value) is float:
            return {"f": repr(value)}  # NaN and the infinities are not JSON
        if isinstance(value, np.generic):
            return {"n": [value.dtype.str, value.item()]}
        if type(value) is tuple:
            return {"t": [self(item) for item in value]}
        if type(value) is frozenset:
            return {"z": [self(item) for item in sorted(value, key=repr)]}
        if type(value) is bytes:
            return {"b": base64.b64encode(value).decode()}
        if type(value) is datetime.date:
            return {"day": value.isoformat()}
        if type(value) is datetime.datetime:
            return {"dt": value.isoformat()}
        reference = self.shared(value)
        if reference is not None:
            return reference
        if type(value) is list:
            return [self(item) for item in value]
        if type(value) is dict:
            return {"d": [[self(k), self(v)] for k, v in value.items()]}
        if type(value) is set:  # in a stable order, so equal states give equal checkpoints
            return {"s": [self(item) for item in sorted(value, key=repr)]}
        if type(value) is deque:
            return {"q": [value.maxlen, [self(item) for item in value]]}
        if isinstance(value, np.ndarray):
            array = np.ascontiguousarray(value)
            return {"a": [array.dtype.str, list(array.shape), base64.b64encode(array.tobytes()).decode()]}
        if isinstance(value, dict):  # a dict of the system's own class (a record's frozen object): its items
            return {"m": [_kept_class(kind), [[self(k), self(v)] for k, v in value.items()]]}
        return {"o": [_kept_class(kind), [[name, self(item)] for name, item in _fields(value)]]}


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a state of a million small objects is built.

    Each few hundred new containers would start a collection that walks every object
    made so far: with it on, reading a year's checkpoint takes ten times as long.
    Nothing made here is garbage, so there is nothing for it to find meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def encode(value: Any) -> Any:
    """``value`` as JSON-able data (see the module docstring); :class:`ProjectionError` if it cannot be."""
    with gc_paused():
        return _Encoder()(value)


def _load_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    if module.split(".")[0] not in PACKAGES:
        raise ProjectionError(f"a checkpoint names the class {name}, which is not the system's")
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        raise ProjectionError(f"a checkpoint names the class {name}, which this release does not have") from None
    if not isinstance(found, type):
        raise ProjectionError(f"a checkpoint names {name}, which is not a class")
    return found


class _Decoder:
    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.classes: dict[str, type] = {}

    def cls(self, name: str) -> type:
        if name not in self.classes:
            self.classes[name] = _load_class(name)
        return self.classes[name]

    def keep(self, value: Any) -> Any:
        self.kept.append(value)
        return value

    def items(self, data: Iterable[Any]) -> list[Any]:
        return [self(item) for item in data]

    def __call__(self, data: Any) -> Any:
        if data is None or isinstance(data, (bool, int, str)):
            return data
        if isinstance(data, list):
            shell: list[Any] = self.keep([])
            shell.extend(self.items(data))
            return shell
        if not isinstance(data, dict) or len(data) != 1:
            raise ProjectionError(f"a checkpoint holds a value this release cannot read: {str(data)[:80]}")
        ((tag, body),) = data.items()
        try:
            return self.tagged(tag, body)
        except ProjectionError:
            raise
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise ProjectionError(f"a checkpoint holds a malformed {tag!r} value ({error})") from None

    def tagged(self, tag: str, body: Any) -> Any:
        if tag == "r":
            return self.kept[body]
        if tag == "t":
            return tuple(self.items(body))
        if tag == "z":
            return frozenset(self.items(body))
        if tag == "f":
            return float(body)
        if tag == "b":
            return base64.b64decode(body)
        if tag == "day":
            return datetime.date.fromisoformat(body)
        if tag == "dt":
            return datetime.datetime.fromisoformat(body)
        if tag == "e":
            name, value = body
            return self.cls(name)(self(value))
        if tag == "n":
            dtype, value = body
            return np.dtype(dtype).type(value)
        if tag == "d":
            mapping: dict[Any, Any] = self.keep({})
            for key, value in body:
                key = self(key)
                mapping[key] = self(value)
            return mapping
        if tag == "s":
            members: set[Any] = self.keep(set())
            members.update(self.items(body))
            return members
        if tag == "q":
            maxlen, values = body
            queue: deque[Any] = self.keep(deque(maxlen=maxlen))
            queue.extend(self.items(values))
            return queue
        if tag == "a":
            dtype, shape, data = body
            array = np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype)).reshape(shape).copy()
            return self.keep(array)
        if tag == "m":
            name, pairs = body
            kind = self.cls(name)
            if not issubclass(kind, dict):
                raise ProjectionError(f"a checkpoint names {name} as a mapping, which it is not")
            kept = self.keep(kind.__new__(kind))
            dict.update(kept, ((self(key), self(item)) for key, item in pairs))  # a frozen one refuses update()
            return kept
        if tag == "o":
            name, fields = body
            cls: Any = self.cls(name)
            value = self.keep(cls.__new__(cls))
            for field, item in fields:
                object.__setattr__(value, field, self(item))
            return value
        raise ProjectionError(f"a checkpoint holds a value tagged {tag!r}, which this release cannot read")


def decode(data: Any) -> Any:
    """The value :func:`encode` gave ``data`` for; :class:`ProjectionError` if it cannot be read."""
    with gc_paused():
        return _Decoder()(data)


class ProjectedState:
    """For a module whose whole projection is ``self.state``: its checkpoint and restore."""

    state: Any

    def checkpoint(self) -> Any:
        """The module's projection as JSON-able data."""
        return encode(self.state)

    def restore(self, data: Any) -> None:
        """Take the projection :meth:`checkpoint` gave (raises before changing anything)."""
        self.state = decode(data)

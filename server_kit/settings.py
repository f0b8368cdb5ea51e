"""The keys a configuration file may hold: a misspelt key stops the start, naming its near miss.

A server reads its settings once, at start, and takes a default for every key the file
leaves out.  A misspelt key is therefore worse than a missing one: ``[tls]
require_client_certficate = true`` would leave client certificates optional, ``[databse]``
would quietly run the hall on SQLite.  So each server declares the shape of its file (a
:data:`Schema`: every table and every key it reads) and checks the parsed TOML against it
before it reads a single value, with :func:`check_known`.  The first key it does not know,
at any depth, is refused with its path and, when one is close, the key that was meant::

    tls.require_client_certficate: is not a setting here; did you mean require_client_certificate?

A schema is a mapping from each key to its shape:

* :data:`VALUE` (``None``): a value; its type and range are the reader's to check;
* a mapping: a table (``[tls]``), whose keys are checked in turn;
* a list of one mapping: an array of tables (``[[series]]``), each entry checked;
* a mapping whose only key is :data:`ANY_NAME`: a table of tables under any name
  (``[senders."hall:hall-1"]``), each checked against the one shape.

:func:`fields_of` takes a table's keys from the dataclass the table is read into, so a
setting added to the dataclass is a known key without a second list to keep in step.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Union

from protocol.errors import DomainError

#: The shape of a plain value.
VALUE = None
#: The key of a table whose sub-tables may carry any name.
ANY_NAME = "*"

Shape = Union[None, Mapping[str, "Shape"], list[Mapping[str, "Shape"]]]
Schema = Mapping[str, Shape]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class UnknownSetting(DomainError):
    """A key the file's schema does not hold: ``key`` is its path, ``reason`` says what was meant."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


#: The entry point group through which each server declares its configuration file (``bingo config check``).
CONFIG_ENTRY_POINTS = "bingo.config"


@dataclass(frozen=True)
class ConfigFile:
    """A server's configuration file as ``bingo config check`` reads it: ``server`` (``hall``,
    ``central``, ``regulator``), the file's usual ``name`` (``hall.toml``), and ``check``, which
    reads a file at a path with the server's own reader (its :class:`DomainError` is the line the
    start stops with) and says in one line what it describes."""

    server: str
    name: str
    check: Callable[[Path], str]


def load_toml(path: Path) -> dict[str, Any]:
    """The TOML document in the file at ``path``; :class:`ValueError` with the reason when it is not
    one: not TOML (:class:`tomllib.TOMLDecodeError`), not UTF-8 text, or nested deeper than the
    parser goes (a file of garbage must stop a start with one line, not a traceback).  A file that
    cannot be read raises its :class:`OSError`."""
    with open(path, "rb") as stream:
        try:
            return tomllib.load(stream)
        except UnicodeDecodeError as error:
            raise ValueError(f"not UTF-8 text (byte {error.start}: {error.reason})") from None
        except RecursionError:
            raise ValueError("its arrays or tables are nested too deeply") from None


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string, whatever it holds: JSON's escapes of ``"``, ``\\`` and the
    control characters are TOML's, and DEL, which JSON leaves as it is, is escaped too; any other
    character is written as it is (a ``\\u`` escape of half a surrogate pair is not TOML)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def table(*keys: str) -> dict[str, Shape]:
    """A table of plain values named ``keys``."""
    return dict.fromkeys(keys, VALUE)


def fields_of(cls: type, *, but: tuple[str, ...] = (), **shapes: Shape) -> dict[str, Shape]:
    """The table read into the dataclass ``cls``: one plain value per field, but the fields in
    ``but``; ``shapes`` give a field another shape (a nested table) or add a key."""
    assert is_dataclass(cls), cls
    names = [f.name for f in fields(cls) if f.name not in but]
    return {**table(*names), **shapes}


def check_known(data: Mapping[str, Any], schema: Schema, where: str = "") -> None:
    """Raise :class:`UnknownSetting` for the first key of ``data`` (in the file's order, at any
    depth) that ``schema`` does not hold.  A value of another type than its shape (a number
    where a table belongs) is left to the reader, which says what it should be."""
    for key, value in data.items():
        path = f"{where}.{_quoted(key)}" if where else _quoted(key)
        if key in schema:
            shape = schema[key]
        elif ANY_NAME in schema:
            shape = schema[ANY_NAME]
        else:
            raise UnknownSetting(path, _reason(key, schema, isinstance(value, dict)))
        if isinstance(shape, Mapping) and isinstance(value, dict):
            check_known(value, shape, path)
        elif isinstance(shape, list) and isinstance(value, list):
            for index, entry in enumerate(value):
                if isinstance(entry, dict):
                    check_known(entry, shape[0], f"{path}[{index}]")


def _reason(key: str, schema: Schema, is_table: bool) -> str:
    what = "a table" if is_table else "a setting"
    known = sorted(schema)
    near = difflib.get_close_matches(key, known, n=1) or difflib.get_close_matches(
        key.lower(), known, n=1)
    if near:
        return f"is not {what} here; did you mean {near[0]}?"
    return f"is not {what} here (known: {', '.join(known)})"


def _quoted(key: str) -> str:
    """``key`` as TOML writes it in a dotted path: bare when it may be, quoted otherwise."""
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


__all__ = ["ANY_NAME", "VALUE", "Schema", "Shape", "UnknownSetting", "check_known", "fields_of", "table"]

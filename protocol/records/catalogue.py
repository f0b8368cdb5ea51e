"""The record types as a person reads them: the catalogue section of ``docs/journal.md``.

:func:`catalogue_markdown` renders every registered type - grouped as the modules
are, with its version, its fields and their JSON types, and its docstring as the
meaning - so the documentation is written from the declarations and a test can
check it has not fallen behind (``scripts/journal_record_types.py`` rewrites the
section between the markers).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Mapping
from types import ModuleType, NoneType, UnionType
from typing import Any

from protocol.records import GROUPS, REGISTRY
from protocol.records.base import (
    Json,
    JournalRecord,
    Shape,
    annotations_of,
    left_out_at_default,
    payload_key,
    personal_keys,
    secret_keys,
)

#: The stamps every type has (the conventions of docs/journal.md say what they hold): not listed per type.
STAMPS = ("actor", "epoch", "sealed")
BEGIN = "<!-- record types: generated from protocol/records by scripts/journal_record_types.py -->"
END = "<!-- end of record types -->"


def json_type(hint: Any) -> str:
    """An annotation in words: ``tuple[str, ...]`` is "array of text"."""
    if hint is int:
        return "integer"
    if hint is str:
        return "text"
    if hint is bool:
        return "true/false"
    if hint is Json:
        return "any JSON"
    if isinstance(hint, type) and issubclass(hint, Shape):
        hints = annotations_of(hint)
        inner = ", ".join(f"`{payload_key(f)}`: {json_type(hints[f.name])}" for f in dataclasses.fields(hint))
        return f"object {{{inner}}}"
    if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [json_type(a) for a in typing.get_args(hint) if a is not NoneType]
        return " or ".join(kinds) + (" or null" if NoneType in typing.get_args(hint) else "")
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return f"array of {json_type(args[0])}"
    if origin is tuple:
        return "[" + ", ".join(json_type(a) for a in args) + "]"
    if origin in (Mapping, dict):
        return f"object of {json_type(args[1])}"
    raise TypeError(f"no words for {hint!r}")  # a programming error: base._checker lets nothing else in


def _presence(f: dataclasses.Field[Any]) -> str:
    if f.default is dataclasses.MISSING:
        return "always"
    default = "null" if f.default is None else "[]" if f.default == () else repr(f.default)
    return f"left out when {default}" if left_out_at_default(f) else f"may be absent ({default})"


def _text(doc: str | None) -> str:
    """A docstring as one paragraph of Markdown (Sphinx roles become plain code)."""
    text = " ".join(inspect.cleandoc(doc or "").split())
    return re.sub(r":(?:class|func|meth|mod|data):`~?([^`]+)`", r"`\1`", text)


def type_section(cls: type[JournalRecord]) -> str:
    hints = annotations_of(cls)
    lines = [f"#### `{cls.type}` (version {cls.version})", "", _text(cls.__doc__), "",
             "| key | JSON type | present |", "|---|---|---|"]
    if cls.carries_type:
        lines.append(f'| `type` | text: `"{cls.type}"` | always |')
    secret, personal = secret_keys(cls), personal_keys(cls)
    for f in dataclasses.fields(cls):
        if f.name not in STAMPS:
            key = payload_key(f)
            kind = json_type(hints[f.name])
            kind += " (secret: sealed)" if key in secret else " (personal)" if key in personal else ""
            lines.append(f"| `{key}` | {kind} | {_presence(f)} |")
    return "\n".join(lines)


def group_types(group: ModuleType) -> list[type[JournalRecord]]:
    """The record types a group module declares, in their order in the module."""
    declared = {id(cls) for cls in REGISTRY.values()}
    return [cls for cls in vars(group).values() if id(cls) in declared and cls.__module__ == group.__name__]


def catalogue_markdown() -> str:
    """The catalogue of every record type, between :data:`BEGIN` and :data:`END`."""
    parts = [BEGIN]
    for group in GROUPS:
        title = group.__name__.rsplit(".", 1)[1].capitalize()
        parts += [f"### {title}", _text(group.__doc__)]
        parts += [type_section(cls) for cls in group_types(group)]
    parts.append(END)
    return "\n\n".join(parts) + "\n"


def rewrite(text: str) -> str:
    """``text`` (docs/journal.md) with its catalogue section replaced by today's."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"the document has no section between {BEGIN!r} and {END!r}")
    return head + catalogue_markdown().rstrip("\n") + tail


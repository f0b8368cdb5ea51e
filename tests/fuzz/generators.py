"""Fast, structure-aware input generators for the fuzz campaigns, driven by one ``random.Random``.

Random bytes alone rarely get past a parser's first check.  These generators start from
*valid* inputs (a request the channel accepts, a frame with a correct CRC, a card file
that loads, a replay scenario) and change a little of them: one field's value swapped
for an awkward one (huge and negative integers, floats, ``NaN``, lone surrogates, NUL,
very long text, deep nesting, the wrong JSON type), a field dropped or added, a key
repeated, the text cut or a byte flipped.  The hypothesis tests seed them (and splice
in a value hypothesis drew); ``bench/fuzz.py`` runs them in a loop for speed.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Profile:
    """Which awkward inputs a run makes.  :data:`FULL` makes all of them; :data:`CLEAN` leaves
    out the classes that once crashed code under test (``test_fuzz_findings.py`` runs FULL)."""

    deep: int  # the deepest nesting made
    surrogates: bool  # lone surrogates in text, and bytes that are not UTF-8
    long_values: bool  # values whose JSON is longer than 300 characters, numbers past 4300 digits
    head: bool  # HTTP HEAD requests


FULL = Profile(deep=5000, surrogates=True, long_values=True, head=True)
CLEAN = Profile(deep=100, surrogates=False, long_values=False, head=False)

#: Integers where parsers and range checks break: edges of int32/int64/JSON doubles,
#: and integers too long for Python's int-from-text limit (4300 digits).
HUGE_INTEGERS = (0, -1, 1, 2, 89, 90, 91, 96, 97, 100, 101, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32,
                 2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63), 10**30, -(10**30), 10**400)
AWKWARD_TEXT = ("", " ", "\x00", "\ud800", "\udfff", "a\ud83dz", "\U0001F600", "\u202e", "\ufeff", "\n", "\r\n",
                "'", '"', "\\", "<script>", "../../etc/passwd", "%s%n", "null", "true", "0", "-1", "1e999",
                "é" * 3, "x" * 41, "x" * 201, "x" * 5000, "١٢٣", "²", "9" * 5000)
AWKWARD_FLOATS = (0.0, -0.0, 0.5, 1.0, 2.0, 1e308, -1e308, 1e-308, float("nan"), float("inf"), float("-inf"))


_CLEAN_TEXT = tuple(t for t in AWKWARD_TEXT if not any(0xD800 <= ord(c) <= 0xDFFF for c in t) and len(t) < 300)
_CLEAN_INTEGERS = tuple(n for n in HUGE_INTEGERS if len(str(n)) < 300)


def awkward_text(rng: random.Random, profile: Profile = FULL) -> str:
    return rng.choice(AWKWARD_TEXT if profile.surrogates and profile.long_values else _CLEAN_TEXT)


def awkward_integer(rng: random.Random, profile: Profile = FULL) -> int:
    return rng.choice(HUGE_INTEGERS if profile.long_values else _CLEAN_INTEGERS)


def awkward_scalar(rng: random.Random, profile: Profile = FULL) -> Any:
    pick = rng.random()
    if pick < 0.3:
        return awkward_integer(rng, profile)
    if pick < 0.55:
        return awkward_text(rng, profile)
    if pick < 0.7:
        return rng.choice(AWKWARD_FLOATS)
    if pick < 0.8:
        return rng.choice((None, True, False))
    if pick < 0.9:
        return rng.randint(-(2**70), 2**70)
    text = "".join(chr(rng.choice((rng.randint(0x20, 0x7E), rng.randint(0, 0x10FFFF)))) for _ in range(rng.randint(0, 12)))
    return text if profile.surrogates else text.encode("utf-8", "replace").decode("utf-8")


def json_value(rng: random.Random, depth: int = 3, profile: Profile = FULL) -> Any:
    """Any JSON-like value, up to ``depth`` levels of arrays and objects."""
    if depth <= 0 or rng.random() < 0.5:
        return awkward_scalar(rng, profile)
    if rng.random() < 0.5:
        return [json_value(rng, depth - 1, profile) for _ in range(rng.randint(0, 4))]
    return {str(awkward_scalar(rng, profile))[:20]: json_value(rng, depth - 1, profile)
            for _ in range(rng.randint(0, 4))}


def nested(rng: random.Random, depth: int, profile: Profile = FULL) -> Any:
    """A value nested ``depth`` levels deep (arrays and objects mixed)."""
    value: Any = awkward_scalar(rng, profile)
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def deep_text(rng: random.Random, depth: int) -> str:
    """Text nested ``depth`` levels deep, written without recursion (json.dumps would recurse)."""
    opening, closing = ("[", "]") if rng.random() < 0.5 else ('{"a":', "}")
    return opening * depth + "1" + closing * depth


def replacement(rng: random.Random, profile: Profile = FULL) -> Any:
    """A value to put where a field's value was."""
    pick = rng.random()
    if pick < 0.7:
        value = awkward_scalar(rng, profile)
    elif pick < 0.9:
        value = json_value(rng, 2, profile)
    else:
        value = nested(rng, rng.randint(2, min(40, profile.deep)), profile)
    if not profile.long_values and len(json.dumps(value)) > 300:
        return rng.choice(_CLEAN_INTEGERS)
    return value


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in ``value``: keys and indices from the top."""
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, prefix + (key,))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:8]):
            found += _paths(inner, prefix + (index,))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        copy[head] = _replace(value[head], rest, new)
        return copy
    copy_list = list(value)
    copy_list[head] = _replace(value[head], rest, new)
    return copy_list


def _delete(value: Any, path: tuple) -> Any:
    if len(path) == 1:
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k != path[0]}
        return [v for i, v in enumerate(value) if i != path[0]]
    head = path[0]
    inner = _delete(value[head], path[1:])
    if isinstance(value, dict):
        return {**value, head: inner}
    return [inner if i == head else v for i, v in enumerate(value)]


def mutate_document(rng: random.Random, document: Any, *, profile: Profile = FULL, splice: Any = None) -> Any:
    """``document`` with one to three changes: a value replaced, a field dropped or added."""
    result = document
    for _ in range(rng.randint(1, 3)):
        paths = _paths(result)
        path = rng.choice(paths)
        action = rng.random()
        if action < 0.65:
            result = _replace(result, path, splice if splice is not None and rng.random() < 0.5
                              else replacement(rng, profile))
        elif action < 0.8 and path:
            result = _delete(result, path)
        else:
            target = path
            node = result
            for step in target:
                node = node[step]
            if isinstance(node, dict):
                result = _replace(result, target, {**node, str(awkward_scalar(rng, profile))[:30]:
                                                   replacement(rng, profile)})
            elif isinstance(node, list):
                result = _replace(result, target, [*node, replacement(rng, profile)])
    if not profile.long_values and isinstance(result, dict) and isinstance(document, dict):
        # Changes add up: keep every field that was not a container short as a whole.
        for key, value in list(result.items()):
            if not isinstance(document.get(key), (dict, list)) and len(json.dumps(value)) > 300:
                result[key] = rng.choice(_CLEAN_INTEGERS)
    return result


def dumps(rng: random.Random, value: Any) -> str:
    """JSON text of ``value`` in one of several spellings (ASCII-escaped or raw, spaced or not)."""
    return json.dumps(value, ensure_ascii=rng.random() < 0.5, separators=rng.choice(((",", ":"), (", ", ": "))),
                      allow_nan=True)


_LONE_SURROGATE_ESCAPE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def mutate_bytes(rng: random.Random, data: bytes, profile: Profile = FULL) -> bytes:
    """``data`` cut, with a byte flipped, inserted or removed, or a slice repeated (and, unless the
    profile makes surrogates, made valid UTF-8 again)."""
    mutated = _mutate_bytes(rng, data, profile)
    if profile.surrogates:
        return mutated
    # Cutting or repeating JSON text can split an escaped surrogate pair into a lone one.
    return data if _LONE_SURROGATE_ESCAPE.search(mutated) else mutated.decode("utf-8", "replace").encode("utf-8")


_INSERTS = (b"\x00", b"\xff", b"\xc3", b'"', b"{", b"]", b"\\", b",")
_SURROGATE_INSERTS = (b"\xed\xa0\x80", b"\\ud800", b"\\udfff")


def _mutate_bytes(rng: random.Random, data: bytes, profile: Profile) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 8)))
    pick = rng.random()
    at = rng.randrange(len(data))
    if pick < 0.2:
        return data[:at]
    if pick < 0.45:
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]
    if pick < 0.6:
        return data[:at] + bytes([rng.randrange(256)]) + data[at:]
    if pick < 0.75:
        return data[:at] + data[at + 1:]
    if pick < 0.85:
        end = min(len(data), at + rng.randint(1, 16))
        return data[:end] + data[at:end] * rng.randint(1, 4) + data[end:]
    inserts = _INSERTS + _SURROGATE_INSERTS if profile.surrogates else _INSERTS
    return data[:at] + rng.choice(inserts) + data[at:]


def json_text(rng: random.Random, valid: Callable[[random.Random], Any], *, profile: Profile = FULL,
              splice: Any = None, deep: int = 0) -> bytes:
    """A JSON document near ``valid(rng)``: mostly a mutated document, sometimes mutated text.

    ``deep`` > 0 also makes, now and then, a document nested up to that many levels (at
    most the profile's depth).
    """
    pick = rng.random()
    deepest = min(deep, profile.deep)
    if deepest and pick < 0.02:
        return deep_text(rng, rng.randint(deepest // 2, deepest)).encode()
    document = valid(rng)
    if pick < 0.1:
        return dumps(rng, document).encode("utf-8", "surrogatepass")  # the valid input itself
    mutated = mutate_document(rng, document, profile=profile, splice=splice)
    text = dumps(rng, mutated)
    if isinstance(mutated, dict) and mutated and rng.random() < 0.05:
        key = rng.choice(list(mutated))  # the same key twice in one object: the text says it, a dict cannot
        text = "{" + json.dumps(key) + ":" + dumps(rng, replacement(rng, profile)) + "," + text[1:]
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:
        data = mutate_bytes(rng, data, profile)
    if profile.long_values and rng.random() < 0.03:
        data = data.replace(b"1", b"1" + b"0" * rng.choice((400, 4400)), 1)  # past int-from-text limits
    return data

"""Messages written as compact JSON (``protocol.compact_json``): orjson's text, read back as ``json`` wrote it."""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import strict_json
from protocol.compact_json import compact as dumps

VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(codec="utf-8"), max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=6), VALUE, max_size=5))
def test_a_message_reads_back_as_the_one_json_wrote(message: dict[str, Any]) -> None:
    text = dumps(message)
    assert json.loads(text) == json.loads(json.dumps(message, separators=(",", ":")))
    assert list(json.loads(text)) == list(message)  # its keys in their order
    assert strict_json.loads(text) == json.loads(text)  # what the terminals and machines read


def test_a_message_is_compact_utf8_and_takes_what_json_takes() -> None:
    assert dumps({"type": "play", "shown": "Línia", "at": [1, 2]}) == '{"type":"play","shown":"Línia","at":[1,2]}'
    assert dumps({"n": 2**70, 1: "one"}) == json.dumps({"n": 2**70, 1: "one"}, separators=(",", ":"))
    assert dumps({1: "one", None: 2}) == '{"1":"one","null":2}'


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize("message", [{"point": Point(1)}, {"when": datetime.date(2026, 12, 7)}, {"set": {1}}])
def test_what_json_refuses_is_refused(message: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        dumps(message)

"""A request's JSON is refused when it nests too deep or holds a lone surrogate, whichever way it
comes; most requests are seen to hold neither without a walk of their values."""

from __future__ import annotations

import json

import pytest

from server_kit.web.channel import MAX_DEPTH, ChannelError, _plain_at_sight, load_json

TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
HOSTILE = [
    TOO_DEEP,
    TOO_DEEP.encode(),
    '{"a": "\\ud800"}',
    b'{"a": "\\ud800"}',
    '{"a": "\ud800"}',  # a lone surrogate as a character of the text itself
    '{"a": "\ud800"}'.encode("utf-8", "surrogatepass"),  # and as bytes json.loads decodes with surrogatepass
    '{"a": "\ud800"}'.encode("utf-16-le", "surrogatepass"),
    # The escape in UTF-16 or UTF-32, which json.loads reads too: ASCII bytes, the escape's apart.
    '{"a": "\\ud800"}'.encode("utf-16-le"),
    '{"a": "\\ud800"}'.encode("utf-16-be"),
    '{"a": "\\udfff"}'.encode("utf-32-le"),
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_too_deep_or_a_lone_surrogate_is_malformed_in_text_or_bytes(text: str | bytes) -> None:
    with pytest.raises(ChannelError) as refused:
        load_json(text)
    assert refused.value.code == "malformed"


PLAIN = [
    '{"id": "r1", "command": "record_complaint", "args": {"text": "noise"}}',
    b'{"id": "r1", "command": "play", "cards": 4, "keep": false}',
    "[" * MAX_DEPTH + "]" * MAX_DEPTH,
    '{"text": "Queixa: so\\u00f1"}',  # an escape: looked at in full, and plain
    '{"text": "Reclamaci\u00f3 \U0001f600"}',  # beyond ASCII: looked at in full, and plain
    '{"a": "\\ud83d\\ude00"}',  # a whole pair
]


@pytest.mark.parametrize("text", PLAIN, ids=range(len(PLAIN)))
def test_plain_requests_are_read_as_json_reads_them(text: str | bytes) -> None:
    assert load_json(text) == json.loads(text)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_no_hostile_request_passes_at_sight(text: str | bytes) -> None:
    assert not _plain_at_sight(text)

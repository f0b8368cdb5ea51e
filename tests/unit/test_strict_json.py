"""An object that names a key twice is refused by every reader of outside input: Python keeps the
last member where another parser keeps the first, so what a check saw could differ from what is
carried out (the command channel, the terminals' and machines' messages, the regulator's feed)."""

from __future__ import annotations

import pytest

from protocol import strict_json
from protocol.regulator_feed import FeedFormatError, decode as decode_feed
from protocol.terminal_messages import MessageError, decode as decode_terminal
from server_kit.web.channel import ChannelError, parse_request


def test_strict_json_reads_plain_json_and_refuses_a_key_named_twice_at_any_depth() -> None:
    assert strict_json.loads('{"a": 1, "b": [{"c": 2}]}') == {"a": 1, "b": [{"c": 2}]}
    with pytest.raises(strict_json.NamedTwice, match="'c' is named twice"):
        strict_json.loads('{"a": 1, "b": [{"c": 2, "c": 3}]}')


def test_strict_json_reads_text_as_json_loads_does_bytes_in_their_encoding_a_byte_order_mark_refused() -> None:
    import json

    for text in ('{"a": "\u00e9t\u00e9", "b": [1, 2.5, null, true]}', "[]", '"x"'):
        for given in (text, text.encode(), text.encode("utf-16"), bytearray(text.encode("utf-32"))):
            assert strict_json.loads(given) == json.loads(given)
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        strict_json.loads("\ufeff{}")
    with pytest.raises(json.JSONDecodeError):
        strict_json.loads("{")
    with pytest.raises(TypeError, match="not int"):
        strict_json.loads(5)  # type: ignore[arg-type]


def test_the_command_channel_refuses_a_request_naming_a_key_twice() -> None:
    with pytest.raises(ChannelError, match="names 'amount_cents' twice") as refused:
        parse_request('{"id": "r1", "command": "load_credit", '
                      '"args": {"account": "1", "amount_cents": 100, "amount_cents": 100000}}')
    assert refused.value.code == "malformed"


def test_a_terminal_message_naming_a_key_twice_is_malformed() -> None:
    with pytest.raises(MessageError, match="'quantity' is named twice") as refused:
        decode_terminal('{"v": 1, "seq": 1, "type": "buy", "quantity": 1, "quantity": 60, "stake_pct": 100}')
    assert refused.value.code == "malformed"


@pytest.mark.parametrize("text", [
    '{"v": 1, "seq": 1, "type": "hello", "terminal": "\\ud800"}',
    '{"v": 1, "seq": 1, "type": "hello", "terminal": "\\ud800"}'.encode(),
    '{"v": 1, "seq": 1, "type": "hello", "terminal": "\\ud800"}'.encode("utf-16-le"),  # the escape's bytes apart
    '{"v": 1, "seq": 1, "type": "hello", "terminal": "\ud800"}',
])
def test_a_terminal_message_holding_a_lone_surrogate_is_malformed_however_it_is_encoded(text: str | bytes) -> None:
    with pytest.raises(MessageError) as refused:
        decode_terminal(text)
    assert refused.value.code == "malformed" and "surrogate" in str(refused.value)


def test_check_texts_finds_a_lone_surrogate_in_any_key_or_text_at_any_depth_and_a_depth_past_the_limit() -> None:
    strict_json.check_texts({"a": ["\u00e9t\u00e9", {"b": [1, None, True]}]})
    for value in ({"\ud800": 1}, ["ok", {"a": [["\udfff"]]}], "x\udc00"):
        with pytest.raises(strict_json.LoneSurrogate, match="lone surrogate"):
            strict_json.check_texts(value)
    deep: list[object] = []
    for _ in range(20_000):  # iterative: a value far deeper than the stack is walked
        deep = [deep]
    strict_json.check_texts(deep)
    with pytest.raises(strict_json.TooDeep, match="deeper than 64 levels"):
        strict_json.check_texts(deep, max_depth=64)
    strict_json.check_texts([[[]]], max_depth=3)
    with pytest.raises(strict_json.TooDeep):
        strict_json.check_texts([[[[]]]], max_depth=3)


def test_a_feed_message_naming_a_key_twice_is_refused() -> None:
    with pytest.raises(FeedFormatError, match="'kind' is named twice"):
        decode_feed(b'{"kind": "ack", "kind": "hello"}')

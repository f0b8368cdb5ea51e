"""The kit's one-pass list of records (``BoxList``) against Twisted's ``amp.AmpList``, byte for byte (R92.5c).

Either end of a link may use either class: a hall of an older release relays batches
with ``AmpList`` to a central server reading them with ``BoxList``, and back.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.protocols import amp

from protocol import central_messages as m
from server_kit.amp.commands import BoxList, ByteWholes, amp_argument

FIELDS = [
    (b"request_id", amp.Unicode()),
    (b"card_count", amp.Integer()),
    (b"cells", ByteWholes(optional=True)),
    (b"note", amp.Unicode(optional=True)),
    (b"late", amp.Boolean(optional=True)),
]

RECORDS = st.lists(
    st.fixed_dictionaries(
        {"request_id": st.text(max_size=20), "card_count": st.integers(-(10**15), 10**15)},
        optional={
            "cells": st.binary(max_size=60).map(list),
            "note": st.text(max_size=30),
            "late": st.booleans(),
        },
    ),
    max_size=12,
)


def _filled(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` as a parse gives them back: every optional field present, ``None`` when left out."""
    return [{"cells": None, "note": None, "late": None, **r} for r in records]


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_a_box_list_writes_and_reads_the_bytes_of_an_amp_list(records: list[dict[str, Any]]) -> None:
    theirs, ours = amp.AmpList(FIELDS), BoxList(FIELDS)
    written = ours.toStringProto(records, None)
    assert written == theirs.toStringProto([dict(r) for r in records], None)
    assert ours.fromStringProto(written, None) == _filled(records)
    assert theirs.fromStringProto(written, None) == _filled(records)


def test_nested_lists_and_the_declared_batch_cross_both_ways() -> None:
    batch = amp_argument(m.BUY_CARDS_BATCH.answer[0].type)
    assert isinstance(batch, BoxList)
    answers = [
        {"request_id": "r-1", "status": "confirmed", "decision": 1, "series": "A", "first_card": 1, "card_count": 1,
         "stake_cents": 100, "amount_cents": 100, "cells": bytes(range(27))},
        {"request_id": "r-2", "error_code": "bad_argument", "error": "no such game"},
    ]  # fmt: skip
    written = batch.toStringProto(answers, None)
    read = batch.fromStringProto(written, None)
    assert read[0]["cells"] == list(range(27)) and read[0]["decision"] == 1 and read[0]["refusal"] is None
    assert read[1]["error_code"] == "bad_argument" and read[1]["status"] is None
    outer = BoxList([(b"inner", BoxList(FIELDS)), (b"name", amp.Unicode())])
    value = [{"name": "a", "inner": [{"request_id": "x", "card_count": 2}]}, {"name": "b", "inner": []}]
    assert outer.toStringProto(value, None) == amp.AmpList([(b"inner", amp.AmpList(FIELDS)), (b"name", amp.Unicode())]
                                                           ).toStringProto([dict(v) for v in value], None)
    assert outer.fromStringProto(outer.toStringProto(value, None), None)[0]["inner"][0]["card_count"] == 2


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"\x00", "inside a length"),
        (b"\x00\x0arequest_id", "inside a key"),
        (b"\x00\x0arequest_id\x00\x05ab", "inside the value"),
        (b"\x00\x0arequest_id\x00\x01a\x00\x0acard_count\x00\x011", "has no end"),
    ],
)
def test_bytes_cut_short_are_refused_with_where_they_end(data: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        BoxList(FIELDS).fromStringProto(data, None)


def test_a_record_without_a_required_field_is_refused_both_ways() -> None:
    missing = amp.AmpList([(b"request_id", amp.Unicode())]).toStringProto([{"request_id": "r"}], None)
    with pytest.raises(KeyError, match="card_count"):
        BoxList(FIELDS).fromStringProto(missing, None)
    with pytest.raises(KeyError, match="request_id"):
        BoxList(FIELDS).toStringProto([{"card_count": 1}], None)
    with pytest.raises(ValueError):  # not a number: AMP's own Integer refuses it
        BoxList(FIELDS).fromStringProto(b"\x00\x0acard_count\x00\x01x\x00\x0arequest_id\x00\x01r\x00\x00", None)


def test_a_value_over_amp_s_bound_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(amp.TooLong):
        BoxList(FIELDS).toStringProto([{"request_id": "r" * 70_000, "card_count": 1}], None)

"""The canonical JSON of a value without floats, made by orjson, is ``json``'s byte for byte (R92.3):
a record sealed with it has the hash and signature its journal's verification makes again."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.chain import canonical_json, canonical_json_without_floats
from protocol.records import REGISTRY, Shape
from protocol.records.base import _FrozenMapping, holds_no_float

#: Text as a journal may hold it: any character, the control ones, the separators JavaScript
#: minds (U+2028, U+2029), the byte order mark, the last of each plane, and no lone surrogate.
TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["\x00\x01\x1f\x7f", "\b\f\n\r\t", '"\\/', "\u2028\u2029", "\ufeff\uffff", "\U0001f600\U0010ffff", "e\u0301"])
WHOLE = st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.integers()  # beyond 64 bits too
PLAIN = st.none() | st.booleans() | WHOLE | TEXT
VALUE = st.recursive(
    PLAIN,
    lambda inner: (st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
                   | st.dictionaries(TEXT, inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=3).map(_FrozenMapping)),
    max_leaves=20,
)


@pytest.mark.req("R92.3")
@settings(max_examples=1500, deadline=None)
@given(VALUE)
def test_a_value_without_floats_is_written_as_json_writes_it(value: Any) -> None:
    assert canonical_json_without_floats(value) == canonical_json(value)


class Colour(enum.StrEnum):
    RED = "red"


class Rank(enum.IntEnum):
    FIRST = 1


@pytest.mark.req("R92.3")
@pytest.mark.parametrize("value", [
    {"b": 1, "a": {"d": [], "c": ""}, "é": 1, "\U0001f600": 2, "\uffff": 3},  # keys by code point, not by UTF-16
    {"n": 2**64, "m": -(2**63) - 1},  # beyond 64 bits: json's
    {1: "a"}, {None: 1},  # keys that are not text: json's
    [Colour.RED, Rank.FIRST, True, False, None],
    _FrozenMapping({"z": (1, (2, 3)), "a": _FrozenMapping({})}),
])
def test_what_orjson_writes_otherwise_or_does_not_take_is_json(value: Any) -> None:
    assert canonical_json_without_floats(value) == canonical_json(value)


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize("value", [{"when": datetime.date(2026, 12, 7)}, {"point": Point(1)}, {"at": {1, 2}},
                                   {"text": "\ud800"}])
def test_what_json_refuses_is_refused(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as made_by_json:
        canonical_json(value)
    with pytest.raises(type(made_by_json.value)):
        canonical_json_without_floats(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Measured(Shape):
    ratio: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class Counted(Shape):
    counts: tuple[tuple[int, str | None], ...]
    by_name: dict[str, int]
    inner: "Counted | None" = None


def test_a_type_holds_no_float_only_when_no_field_of_it_can() -> None:
    assert holds_no_float(REGISTRY["vb_play"]) and holds_no_float(REGISTRY["posting"])
    assert holds_no_float(REGISTRY["virtual_cards_bought"]) and holds_no_float(REGISTRY["player_account_opened"])
    assert not holds_no_float(REGISTRY["system_verified"])  # a free JSON value
    assert not holds_no_float(Measured) and holds_no_float(Counted)
    assert 0.0 != 1e-05 and canonical_json(1e-05) == b"1e-05"  # why floats stay json's: orjson writes 0.00001


@pytest.mark.req("R92.3")
def test_records_sealed_so_have_the_body_and_hash_their_verification_makes_again() -> None:
    import hashlib

    from protocol.records import seal_entries
    from protocol.records.cashier import Posting, PostingReference
    from protocol.records.videobingo import CardPaid, JackpotWin, Meters, VbPlay

    meters = Meters(**{f.name: 7 for f in dataclasses.fields(Meters)})
    play = VbPlay(machine="m1", station=1, number=7, request="r\u2028é\x7f", credit_cents=20, kept=False,
                  cards=((1, 2, 3),), balls=(9, 8), results=(CardPaid("line", 3), CardPaid(None, 0)),
                  stake_cents=20, won_cents=60, contributions=(1, 0), jackpots=(JackpotWin("machine", 1, 2**40),),
                  meters=meters)
    posting = Posting(debits=(("vb:credit:m1:1", 20),), credits=(("vb:takings:m1", 20),), reason="vb:stake",
                      reference=PostingReference(game_id=None, card=None, event_seq=2**63))
    records = seal_entries(None, None, 1_765_000_000_000, [play, posting])
    for record in records:
        assert record.__dict__["_sealed_body"] == record.body  # made again as verification makes it (json)
        assert record.hash == hashlib.sha256(record.body).hexdigest()

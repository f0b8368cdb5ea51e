"""The hall-central schemas (R92.5): declarative, bounded under AMP's 64 KB, versioned."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.protocols import amp

from protocol import central_messages as m
from server_kit.amp.commands import amp_command
from protocol.central_messages import (
    ERRORS,
    MAX_VALUE_BYTES,
    MESSAGES,
    CentralMessageError,
    Choice,
    Field,
    Flag,
    Items,
    Text,
    Whole,
    WholeList,
)


# --- The conversion the server kit makes (server_kit.amp.commands) -------------------


def widest(field: Field) -> Any:
    """The legal value of ``field`` that takes the most bytes on the wire."""
    t = field.type
    if isinstance(t, Text):
        if t.charset is None:
            return "\U0001d11e" * t.max_length  # 4 bytes in UTF-8
        return max(t.charset, key=lambda c: len(c.encode())) * t.max_length
    if isinstance(t, Choice):
        return max(t.values, key=len)
    if isinstance(t, Whole):
        return max((t.low, t.high), key=lambda n: len(str(n)))
    if isinstance(t, Flag):
        return False
    if isinstance(t, WholeList):
        return [widest(Field("item", t.item))] * t.max_items
    assert isinstance(t, Items)
    return [{f.name: widest(f) for f in t.fields}] * t.max_items


ALL_FIELDS = [(msg, f) for msg in MESSAGES.values() for f in (*msg.arguments, *msg.answer)]


@pytest.mark.parametrize("message", MESSAGES.values(), ids=lambda msg: msg.name)
def test_every_message_becomes_an_amp_command_whose_widest_values_fit_and_round_trip(message: m.Message) -> None:
    """The widest legal value of every field serialises under AMP's cap and reads back."""
    command = amp_command(message)
    for fields, make, parse in (
        (message.arguments, command.makeArguments, command.parseArguments),
        (message.answer, command.makeResponse, command.parseResponse),
    ):
        values = {f.name: widest(f) for f in fields}
        box = make(values, None)
        for key, value in box.items():
            assert len(value) <= MAX_VALUE_BYTES, (message.name, key)
            declared = next(f for f in fields if f.name.encode() == key)
            assert len(value) <= m.worst_case_bytes(declared), (message.name, key, len(value))
        box.serialize()  # raises TooLong past the cap
        assert parse(amp.AmpBox(box), None) == values


@pytest.mark.parametrize("message, field", ALL_FIELDS, ids=lambda x: getattr(x, "name", ""))
def test_no_field_can_exceed_amps_value_cap(message: m.Message, field: Field) -> None:
    assert m.worst_case_bytes(field) <= MAX_VALUE_BYTES
    assert not field.name.startswith("_") and len(field.name.encode()) <= m.MAX_KEY_BYTES


def test_names_codes_and_request_ids_are_declared_once_and_consistently() -> None:
    assert len({msg.name for msg in MESSAGES.values()}) == len(MESSAGES)
    for message in MESSAGES.values():
        assert message.sender in ("hall", "central")
        assert set(message.errors) <= set(ERRORS), message.name
        names = [f.name for f in message.arguments]
        assert len(set(names)) == len(names), message.name
        assert message.request_id == ("request_id" in names), message.name
        if message.paging:
            items = message.field(message.paging.items, answer=True).type
            assert isinstance(items, Items) and 1 <= items.max_items <= m.PAGE_ITEMS  # a page holds at most 100
            message.field(message.paging.cursor)
            message.field(message.paging.more, answer=True)
    # The commands that change anything carry a request id kept durably.
    assert {msg.name for msg in MESSAGES.values() if msg.request_id} == {"buy_cards", "terminal_failed", "annex_post"}


def test_the_versions_negotiated_are_the_highest_both_speak() -> None:
    assert m.negotiate([2]) == 2  # a hall of version 2 is answered in 2
    assert m.negotiate([2, 3]) == 3 == m.PROTOCOL_VERSION
    assert m.negotiate([3, 1, 2], supported=(1, 2)) == 2
    with pytest.raises(CentralMessageError) as refused:
        m.negotiate([1, 4])
    assert refused.value.code == "version_unsupported" and "speaks 2, 3" in str(refused.value)
    # What a version added is never sent on a connection of an older one.
    added = {m.GAME_UNDER_WAY: 2, m.BUY_CARDS_BATCH: 2, m.GATE_CLOSED: 3}
    assert all(msg.since == added.get(msg, 1) for msg in m.MESSAGES.values())
    assert ERRORS["version_unsupported"].fatal and ERRORS["clock_off"].fatal


GOOD_BUY = {
    "request_id": "b1c9e0d2-7f", "game_id": "net-1", "hall_id": "hall-1", "terminal_id": "T07",
    "player_ref": "p.1234", "card_count": 6, "stake_pct": 50,
}  # fmt: skip


def test_arguments_are_checked_field_by_field() -> None:
    assert m.check_arguments(m.BUY_CARDS, GOOD_BUY) == GOOD_BUY
    cases = {
        "card_count": (0, "card_count is 1 to 96, not 0"),
        "stake_pct": (True, "stake_pct is a whole number, not True"),
        "terminal_id": ("T/7", "terminal_id may not hold '/'"),
        "hall_id": ("h" * 33, "hall_id is 1 to 32 characters long, not 33"),
        "player_ref": (7, "player_ref is text, not 7"),
    }
    for name, (value, message) in cases.items():
        with pytest.raises(CentralMessageError, match=message) as refused:
            m.check_arguments(m.BUY_CARDS, {**GOOD_BUY, name: value})
        assert refused.value.code == "bad_argument"
    with pytest.raises(CentralMessageError, match="needs stake_pct"):
        m.check_arguments(m.BUY_CARDS, {k: v for k, v in GOOD_BUY.items() if k != "stake_pct"})
    with pytest.raises(CentralMessageError, match="no field 'price_cents'"):
        m.check_arguments(m.BUY_CARDS, {**GOOD_BUY, "price_cents": 1})
    with pytest.raises(CentralMessageError, match="control characters"):
        failed = {k: GOOD_BUY[k] for k in ("request_id", "game_id", "hall_id", "terminal_id")}
        m.check_arguments(m.TERMINAL_FAILED, {**failed, "reason": "a\x00b", "declared_by": "chief"})


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(GOOD_BUY) + ["x"]), st.one_of(st.integers(), st.text(max_size=80), st.booleans(), st.none())))
def test_any_arguments_are_either_valid_or_refused_with_bad_argument(values: dict) -> None:
    try:
        checked = m.check_arguments(m.BUY_CARDS, values)
    except CentralMessageError as error:
        assert error.code == "bad_argument" and str(error)
    else:
        assert checked == values


def test_every_error_and_refusal_has_a_message_a_person_can_act_on() -> None:
    for code, error in ERRORS.items():
        assert error.code == code and error.message.endswith(".") and len(error.message) > 20
    for code, text in m.REFUSALS.items():
        assert text.endswith(".") and len(text) > 20, code

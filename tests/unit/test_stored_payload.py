"""A record's payload as the journal stores it: cut from the body it was sealed with, or made again (R92.3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.chain import SEALED_KEY, canonical_json, seal, signed, stored_payload

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
#: Keys and strings that look like the body's own: the cut must not be fooled by them.
TRICKY = st.sampled_from(["prev", ',"prev":"', "payload", '{"payload":', "seq", "sealed", '"', "\\", "é"])


@pytest.mark.req("R92.3")
@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.one_of(st.text(max_size=10), TRICKY), st.one_of(JSON, TRICKY), max_size=6))
def test_the_payload_cut_from_the_body_is_its_canonical_json(payload: dict[str, Any]) -> None:
    record = seal(None, None, 5, "a_type", payload)
    assert stored_payload(record) == canonical_json(payload).decode()
    (made,) = signed(lambda body: b"\0" * 64, [record])
    assert stored_payload(made) == canonical_json(payload).decode()
    assert set(made.__dict__) == {"seq", "time_ms", "type", "payload", "prev", "hash", "signature"}


def test_a_record_that_seals_a_secret_is_stored_with_its_nonce_not_its_commitment() -> None:
    payload = {"pin_hash": "scrypt$x", SEALED_KEY: {"pin_hash": "ab" * 16}}
    record = seal(None, None, 5, "player_account_opened", payload)
    assert stored_payload(record) == canonical_json(payload).decode()
    assert b"commitment" in record.__dict__["_sealed_body"] and "commitment" not in stored_payload(record)

"""The audit check's comparison of a document with what the records say (docs/audit.md): equal JSON is
equal however it is held, and the first difference is named, a ``true`` where a ``1`` stands included."""

from __future__ import annotations

import pytest

from protocol.audit.check import ExportFault, compare


def test_equal_documents_pass_whatever_their_key_order_and_a_type_change_is_named() -> None:
    said = {"games": [{"game": 1, "prizes": {"line": {"ball": 5, "paid": [{"card": "V1-3", "cents": 120}]}}}]}
    compare("result.json", {"games": [{"prizes": {"line": {"paid": [{"cents": 120, "card": "V1-3"}], "ball": 5}},
                                        "game": 1}]}, said, "the records", "the records say")
    with pytest.raises(ExportFault, match=r"^result.json: game 1: prizes.line.ball is true; the records say 5$"):
        changed = {"games": [{"game": 1, "prizes": {"line": {"ball": True, "paid": [{"card": "V1-3", "cents": 120}]}}}]}
        compare("result.json", changed, said, "the records", "the records say")
    with pytest.raises(ExportFault, match=r"^result.json: game 1: prizes.line.ball is true; the records say 1$"):
        one = {"games": [{"game": 1, "prizes": {"line": {"ball": 1}}}]}
        compare("result.json", {"games": [{"game": 1, "prizes": {"line": {"ball": True}}}]}, one, "the records",
                "the records say")
